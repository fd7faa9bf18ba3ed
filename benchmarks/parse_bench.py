"""Parse-time benchmark: seconds to parse generated scripts of 1k, 10k and 100k lines, and start-up cost.

    python benchmarks/parse_bench.py                          human-readable figures
    python benchmarks/parse_bench.py --json --runs 5 1000 10000   median seconds per size, as JSON (run.py)
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from gradcli.language.parser import parse  # noqa: E402

# Twenty lines in the style of the conformance programs, repeated to the wanted length.
BLOCK = '''\
import torch
import torch.nn.functional as F
def model(x, w, b=None):
    y = x @ w.T
    if b is not None:
        y = y + b
    return torch.tanh(y)
x = torch.tensor([[1.0, -2.0, 0.5], [0.25, 3.0, -1.5]])
w = torch.randn(4, 3, requires_grad=True)
target = torch.zeros(2, 4)
for step in range(3):
    loss = F.mse_loss(model(x, w), target) + 0.01 * (w ** 2).sum()
    loss.backward()
    with torch.no_grad():
        w -= 0.1 * w.grad
        w.grad.zero_()
    print(f"step {step}: loss={loss.item():.4f} norm={w.norm().item():>8.3f}")
mask = x[:, 1:] > 0
print(x[mask], x[0, ::2], -x.sum(dim=1, keepdim=True) ** 2)
assert loss.item() >= 0, "loss must be non-negative"
'''


def script(lines: int) -> str:
    block = BLOCK.splitlines(keepends=True)
    return "".join(block[i % len(block)] for i in range(lines))


def parse_seconds(source: str) -> float:
    start = time.perf_counter()
    parse(source)
    return time.perf_counter() - start


def medians(runs: int, sizes: list[int]) -> dict[int, float]:
    """Median parse time per script length; the lengths take turns, so a slow spell of the machine
    falls on all of them and not on one (which would bend the linearity figure)."""
    sources = {n: script(n) for n in sizes}
    times: dict[int, list[float]] = {n: [] for n in sizes}
    for _ in range(runs):
        for n in sizes:
            times[n].append(parse_seconds(sources[n]))
    return {n: statistics.median(t) for n, t in times.items()}


def first_parse_in_fresh_process(cache_home: str) -> float:
    code = ("import time; t = time.perf_counter(); import gradcli.language.parser as p; p.parse('x = 1');"
            "print(time.perf_counter() - t)")
    env = {**os.environ, "XDG_CACHE_HOME": cache_home, "PYTHONPATH": str(REPO)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return float(out.stdout)


def main(argv: list[str]) -> None:
    parse("x = 1")                      # grammar tables loaded before any timing
    if argv[:1] == ["--json"]:
        runs = int(argv[2]) if argv[1:2] == ["--runs"] else 5
        sizes = [int(a) for a in argv[3 if argv[1:2] == ["--runs"] else 1:]]
        print(json.dumps({str(n): t for n, t in medians(runs, sizes).items()}))
        return
    with tempfile.TemporaryDirectory() as cache_home:
        cold = first_parse_in_fresh_process(cache_home)
        warm = first_parse_in_fresh_process(cache_home)
    print(f"first parse in a new process: {cold:.3f} s building the tables, {warm:.3f} s loading them cached")
    for lines, seconds in medians(3, [1_000, 10_000, 100_000]).items():
        print(f"{lines:>7,} lines: {seconds:.3f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
