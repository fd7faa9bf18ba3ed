"""Memory of a live graph, in-process: chain.grad's graph built in a gradcli Session, then measured
after backward and after the output is dropped. Prints one JSON object (bytes per node).

    python benchmarks/deep_memory.py N [--traced]

By default the
figures are resident-set growth (/proc/self/status VmRSS, what the OS sees); with --traced they are
tracemalloc's count of live Python and numpy allocations, which shows what was really freed even
when the allocator keeps the pages."""

from __future__ import annotations

import gc
import io
import json
import sys
import tracemalloc
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from gradcli.session import Session  # noqa: E402
from params import with_params  # noqa: E402


def rss_bytes() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def main() -> None:
    n, traced = int(sys.argv[1]), "--traced" in sys.argv[2:]
    chain = (HERE / "chain.grad").read_text()
    session = Session(out=io.StringIO())
    # Everything but the graph first: imports, the grammar, `x`; then measure from there.
    session.run_source(with_params(chain, N=0, BACKWARD=False), "chain.grad")
    if traced:
        tracemalloc.start()

    def used() -> int:
        gc.collect()
        return tracemalloc.get_traced_memory()[0] if traced else rss_bytes()

    base = used()
    session.run_source(with_params(chain, N=n, BACKWARD=False), "chain.grad")
    built = used()
    session.run_source("y.sum().backward()")
    after_backward = used()
    session.run_source("del y")
    after_del = used()
    print(json.dumps({"n": n, "measure": "tracemalloc" if traced else "rss",
                      "built": (built - base) / n, "after_backward": (after_backward - base) / n,
                      "after_del": (after_del - base) / n}))


if __name__ == "__main__":
    main()
