"""`python -m gradcli.kernel -f CONNECTION_FILE [OPTIONS]`: start the kernel (the command its kernelspec runs).

Started by Jupyter, not by a person: it parses its few options itself and hands the rest (the
connection file) to ipykernel's application, without building gradcli's whole command line."""

from __future__ import annotations

import argparse
import sys


def parse_options(argv: list):
    """(KernelOptions, the arguments left for ipykernel)."""
    from gradcli import deadline
    from gradcli.display import DISPLAY_MODES
    from gradcli.engine import budget
    from gradcli.kernel.kernel import KernelOptions
    p = argparse.ArgumentParser(prog="python -m gradcli.kernel", add_help=False)
    p.add_argument("--seed", type=int)
    p.add_argument("--display", choices=DISPLAY_MODES)
    p.add_argument("--timeout")
    p.add_argument("--max-memory")
    p.add_argument("--stable-ids", action="store_true")
    given, rest = p.parse_known_args(argv)
    try:        # gradcli's own parsers, with their own messages for a bad value
        timeout = deadline.parse_seconds(given.timeout) if given.timeout else None
        max_memory = budget.parse_size(given.max_memory) if given.max_memory else None
    except ValueError as e:
        p.error(str(e))
    return KernelOptions(seed=given.seed, display=given.display, timeout=timeout, max_memory=max_memory,
                         stable_ids=given.stable_ids), rest


def main(argv=None) -> None:
    options, rest = parse_options(sys.argv[1:] if argv is None else argv)
    from ipykernel.kernelapp import IPKernelApp
    from gradcli.kernel.kernel import GradcliKernel
    GradcliKernel.options = options
    IPKernelApp.launch_instance(argv=rest, kernel_class=GradcliKernel)


if __name__ == "__main__":
    main()
