"""Instructions gradcli executes on the per-op and training-loop workloads, counted by valgrind's callgrind.

    .venv/bin/python benchmarks/instructions.py             # both
    .venv/bin/python benchmarks/instructions.py perop       # forward per op, backward per node
    .venv/bin/python benchmarks/instructions.py train       # one training step

A count does not move when the machine is busy, so it can tell two versions of a hot path apart where
wall-clock runs on this shared 2-core machine cannot. Each variant of a workload runs in a process of its
own under callgrind: gradcli is imported and the script run once (warm-up), then the script runs again
through `gradcli run`'s entry point with callgrind collecting only inside that call (it collects while
itertools.starmap's `next` is on the C stack, and the second run is made through starmap). A figure is
the difference of two sizes divided by the op, node or step count, so parsing and set-up drop out.
Instructions are not time: on this machine about 8.5-9 instructions take a nanosecond on these loops.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import params  # noqa: E402  (benchmarks/params.py, beside this file)

VALGRIND = "valgrind"


def _inner(script: str) -> None:
    """In the measured process: warm up, then run the script once more under collection."""
    from gradcli import cli
    from gradcli.language import parser
    parser.parse("x = 1\n")
    with open(os.devnull, "w") as sink:
        stdout, sys.stdout = sys.stdout, sink
        try:
            cli.main(["run", script])
            list(itertools.starmap(cli.main, [(["run", script],)]))
        finally:
            sys.stdout = stdout


def count(workload: str, **sizes) -> int:
    """Instructions of one `gradcli run` of benchmarks/WORKLOAD with `sizes` written in."""
    with tempfile.TemporaryDirectory() as tmp:
        script = params.instantiate(HERE / workload, Path(tmp), **sizes)
        out = Path(tmp) / "callgrind.out"
        subprocess.run([VALGRIND, "--tool=callgrind", "--collect-atstart=no", "--toggle-collect=starmap_next",
                        f"--callgrind-out-file={out}", sys.executable, __file__, "--inner", str(script)],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for line in out.read_text().splitlines():
            if line.startswith(("totals:", "summary:")):
                return int(line.split()[1])
    raise RuntimeError("callgrind wrote no total")


def perop() -> None:
    n = 1000                                    # two ops per iteration
    start = count("perop.grad", N=0, BACKWARD=False)
    loop = count("perop.grad", N=n, BACKWARD=False)
    both = count("perop.grad", N=n, BACKWARD=True)
    print(f"per-op: forward {(loop - start) / (2 * n) / 1000:.2f}k instructions per op, "
          f"backward {(both - loop) / (2 * n) / 1000:.2f}k per node")


def train() -> None:
    few, many = 50, 150
    step = (count("train.grad", STEPS=many) - count("train.grad", STEPS=few)) / (many - few)
    print(f"training loop: {step / 1e6:.3f}M instructions per step")


def main(argv: list[str]) -> int:
    if argv[:1] == ["--inner"]:
        _inner(argv[1])
        return 0
    workloads = {"perop": perop, "train": train}
    unknown = [name for name in argv if name not in workloads]
    if unknown:
        print("\n\n".join(__doc__.strip().split("\n\n")[:2]), file=sys.stderr)
        print(f"unknown workload {unknown[0]!r}: choose from {', '.join(workloads)}", file=sys.stderr)
        return 2
    for name in argv or list(workloads):
        workloads[name]()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
