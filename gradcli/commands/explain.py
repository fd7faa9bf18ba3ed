"""`gradcli explain SCRIPT NAME`: replay a script and print how backward computed NAME's gradient, node by
node (gradcli.diagnostics.explain does the watching and the layout)."""

from __future__ import annotations

import sys

from gradcli.commands.common import read_script, report
from gradcli.errors import EXIT_OK, EXIT_USAGE

def add_parser(sub, script_options) -> None:
    explain = sub.add_parser(
        "explain", help="run a script and show how backward computed NAME's gradient, node by node",
        description="Run SCRIPT (its own output is not shown) and print the chain rule as a backward() or "
                    "autograd.grad() call applied it: for each node on the paths from the output to NAME, "
                    "the node, the script line that made it, the gradient it received and what it passed on "
                    "toward NAME. See docs/diagnostics.md.")
    explain.add_argument("script", metavar="SCRIPT", help="the .grad script ('-' reads standard input)")
    explain.add_argument("name", metavar="NAME", help="the tensor whose gradient to explain (x or x.grad)")
    explain.add_argument("--line", type=int, metavar="N", dest="call_line",
                         help="explain the last call made on line N that reached NAME (default: the last call "
                              "that reached NAME, on any line)")
    explain.add_argument("--call", type=int, metavar="K", dest="call_number",
                         help="explain the K-th of the calls that reached NAME (on line N, with --line), "
                              "counting from 1; negative K counts from the last")
    script_options(explain, ("seed", "color", "timing", "timeout", "max-memory"))


def run(args) -> int:
    """`gradcli explain`: replay the script with the chain recorder, then print the call's steps."""
    from gradcli.diagnostics.explain import explain_units, target_name
    from gradcli.diagnostics.why import Unit
    try:
        source, filename = read_script(args.script)
    except OSError as e:
        sys.stderr.write(f"{e}\n")
        return EXIT_USAGE
    name = target_name(args.name)
    if name is None:
        sys.stderr.write(f"gradcli explain: NAME must be a name the script binds (x or x.grad), not '{args.name}'\n")
        return EXIT_USAGE
    from gradcli.commands.progress import Progress
    try:
        with Progress(f"gradcli explain: replaying {filename}"):
            text, problem, error = explain_units([Unit(source, filename)], args.seed, name, args.call_line,
                                                 args.call_number)
    except (ValueError, RuntimeError) as e:         # a --seed that manual_seed refuses
        sys.stderr.write(f"gradcli explain: --seed {args.seed}: {e}\n")
        return EXIT_USAGE
    if error is not None:
        report(error)
        return error.exit_status
    if problem:
        sys.stderr.write(f"gradcli explain: {problem}\n")
        return EXIT_USAGE
    sys.stdout.write(text)
    sys.stdout.flush()
    return EXIT_OK
