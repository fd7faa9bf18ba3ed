"""`gradcli kernel install`: register gradcli's Jupyter kernel (gradcli.kernel) where Jupyter finds kernels."""

from __future__ import annotations

import sys

from gradcli.errors import EXIT_OK, EXIT_USAGE

# The shared options a kernel honours, per cell; they are written into the kernelspec's command.
KERNEL_OPTIONS = ("seed", "display", "timeout", "max-memory", "stable-ids")
NEEDS_EXTRA = "the Jupyter kernel needs the jupyter extra: pip install 'gradcli[jupyter]'"


def add_parser(sub, script_options) -> None:
    p = sub.add_parser("kernel", help="install the Jupyter kernel (needs gradcli[jupyter]; docs/notebooks.md)",
                       description="Register the gradcli Jupyter kernel, so that JupyterLab, Notebook, VS Code "
                                   "and nbclient can run gradcli notebooks. The options --seed, --display, "
                                   "--timeout and --max-memory apply to every cell of every notebook run on it.")
    p.add_argument("action", choices=("install",), help="install: write the kernelspec")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--user", action="store_true", help="for the current user (~/.local/share/jupyter)")
    where.add_argument("--sys-prefix", action="store_true", help=f"in this Python's prefix ({sys.prefix})")
    where.add_argument("--prefix", metavar="DIR", help="under DIR/share/jupyter")
    p.add_argument("--name", default="gradcli", help="the kernelspec's name (default: gradcli)")
    p.add_argument("--display-name", default="gradcli", help="the name Jupyter shows (default: gradcli)")
    script_options(p, KERNEL_OPTIONS)


def spec_options(args) -> list:
    """The kernel's command-line options from the shared options given."""
    out = []
    if args.seed is not None:
        out += ["--seed", str(args.seed)]
    if args.display:
        out += ["--display", args.display]
    if args.timeout:
        out += ["--timeout", f"{args.timeout:g}"]
    if args.max_memory is not None:
        out += ["--max-memory", str(args.max_memory)]
    if args.stable_ids:
        out.append("--stable-ids")
    return out


def run(args) -> int:
    try:
        from gradcli.kernel import spec
        import jupyter_client  # noqa: F401  -- only to say early that the extra is missing
    except ImportError:
        sys.stderr.write(f"gradcli kernel: {NEEDS_EXTRA}\n")
        return EXIT_USAGE
    prefix = sys.prefix if args.sys_prefix else args.prefix
    try:
        where = spec.install(spec_options(args), user=args.user, prefix=prefix, name=args.name,
                             display_name=args.display_name)
    except OSError as e:
        sys.stderr.write(f"gradcli kernel install: cannot write the kernelspec: {e.strerror or e} "
                         "(--user installs it in your home folder)\n")
        return EXIT_USAGE
    sys.stdout.write(f"Installed kernelspec {args.name} in {where}\n")
    return EXIT_OK
