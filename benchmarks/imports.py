"""What `gradcli run` imports, by Python's own account (`python -X importtime`): modules and their self time.

    python benchmarks/imports.py                          the tutorial; median of 5 runs
    python benchmarks/imports.py --runs 9 --top 30 SCRIPT

Prints the number of modules imported (gradcli's, and the rest beyond `import numpy`), the summed self
time of gradcli's modules and of the others, and the costliest modules. -X importtime adds its own
overhead to every import, so the times are above a plain run's; they are for comparing modules and runs.
Each run has the grammar tables cached (a first run builds them) and the bytecode cache on.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def importtime(command: list) -> dict:
    """{module: self microseconds} for one run of `command` under -X importtime."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    err = subprocess.run([sys.executable, "-X", "importtime", *command], capture_output=True, text=True, env=env,
                         cwd=REPO).stderr
    found = {}
    for line in err.splitlines():
        if line.startswith("import time:") and "self [us]" not in line:
            own, _, name = line[len("import time:"):].split("|")
            found[name.strip()] = int(own)
    return found


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("script", nargs="?", default=str(REPO / "examples" / "tutorial.grad"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--top", type=int, default=15)
    args = ap.parse_args()
    command = ["-m", "gradcli", "run", args.script]
    subprocess.run([sys.executable, *command], capture_output=True, cwd=REPO)        # tables and bytecode cached
    floor = set(importtime(["-c", "import numpy"]))
    times = defaultdict(list)
    for _ in range(args.runs):
        for name, own in importtime(command).items():
            times[name].append(own)
    median = {name: statistics.median(v) for name, v in times.items() if name not in floor}
    ours = {n: t for n, t in median.items() if n.split(".")[0] == "gradcli"}
    rest = {n: t for n, t in median.items() if n not in ours}
    print(f"`gradcli run {Path(args.script).name}`, -X importtime, median of {args.runs} runs, beyond `import numpy`:")
    print(f"  gradcli's modules: {len(ours)}, {sum(ours.values()) / 1000:.1f} ms self time")
    print(f"  other modules:     {len(rest)}, {sum(rest.values()) / 1000:.1f} ms self time ({', '.join(sorted(rest))})")
    print("  costliest:")
    for name, t in sorted(median.items(), key=lambda kv: -kv[1])[:args.top]:
        print(f"    {t / 1000:6.2f} ms  {name}")


if __name__ == "__main__":
    main()
