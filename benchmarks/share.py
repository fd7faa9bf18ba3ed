"""Where a gradcli run's time goes: the interpreter's share against the engine's, by cProfile.

    python benchmarks/share.py SCRIPT.grad OUTFILE     the shares of the run (after the imports), as JSON

Every profiled function is charged to a part by its file: gradcli/language/ is the interpreter,
gradcli/engine/ and numpy's Python are the engine, the rest of gradcli and the standard library are
"other". A function without a file (a built-in or C method: dict.get, isinstance, a numpy ufunc) is
charged to its callers, in proportion to the time it spent for each, so a numpy reduction called by
the engine counts as the engine's and a dict lookup made by the evaluator as the interpreter's.
cProfile's cost per call falls mostly on the many small calls of the interpreter, so its share is,
if anything, overstated.
"""

import cProfile
import json
import pstats
import sys
from pathlib import Path


def part_of(filename: str) -> str:
    parts = Path(filename).parts
    if "gradcli" in parts:
        below = parts[len(parts) - 1 - parts[::-1].index("gradcli") + 1:]
        if len(below) > 1 and below[0] == "language":
            return "interpreter"
        if len(below) > 1 and below[0] == "engine":
            return "engine"
        return "other"
    return "engine" if "numpy" in parts else "other"


def shares(stats: pstats.Stats) -> dict[str, float]:
    """Own seconds per part."""
    raw = stats.stats
    totals = {"interpreter": 0.0, "engine": 0.0, "other": 0.0}

    def charge(func, seconds: float, seen: frozenset) -> None:
        filename = func[0]
        if filename != "~" and not filename.startswith("<"):
            totals[part_of(filename)] += seconds
            return
        # No file (a built-in), or code made by exec (syntax.Node.at): charged to its callers,
        # each for the time spent in it on its behalf ((calls, primitive calls, own time, total time)).
        callers = raw[func][4] if func in raw else {}
        spent = sum(c[2] for c in callers.values())
        if spent <= 0 or func in seen:
            totals["other"] += seconds
            return
        for caller, c in callers.items():
            charge(caller, seconds * c[2] / spent, seen | {func})

    for func, (_, _, own, _, _) in raw.items():
        charge(func, own, frozenset())
    return totals


def main(script: str, outfile: str) -> None:
    from gradcli import cli, session  # noqa: F401  (what `gradcli run` imports, before profiling)
    from gradcli.language import parser
    parser.parse("x = 1\n")
    profiler = cProfile.Profile()
    sys.argv = [script]
    status = profiler.runcall(cli.main, ["run", script])
    sys.stdout.flush()
    totals = shares(pstats.Stats(profiler))
    whole = sum(totals.values())
    with open(outfile, "w") as f:
        json.dump({part: seconds / whole for part, seconds in totals.items()}, f)
    sys.exit(status)


if __name__ == "__main__":
    main(*sys.argv[1:3])
