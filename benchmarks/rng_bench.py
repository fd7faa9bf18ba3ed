"""Timings of the random streams (microseconds per call); prints figures only."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gradcli.engine.rng import Generator  # noqa: E402


def per_call_us(fn, budget_s: float = 0.5) -> float:
    """Best-of-3 mean time per call, with the repeat count sized to the time budget."""
    fn()                                    # warm up
    t0 = time.perf_counter()
    fn()
    once = max(time.perf_counter() - t0, 1e-7)
    reps = max(1, min(20000, int(budget_s / 3 / once)))
    best = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        best = min(best, (time.perf_counter() - t0) / reps)
    return best * 1e6


def main() -> None:
    g = Generator(0)
    print(f"{'call':<34}{'float32 us':>14}{'float64 us':>14}")
    for size in (3, 100, 1_000_000):
        for name in ("rand", "randn"):
            method = getattr(g, name)
            row = [per_call_us(lambda m=method, dt=dt: m((size,), dt)) for dt in (np.float32, np.float64)]
            print(f"{name + f'({size})':<34}{row[0]:>14.1f}{row[1]:>14.1f}")
    row = [per_call_us(lambda dt=dt: g.normal((size,), dt, 0.5, 2.0)) for dt in (np.float32, np.float64)
           for size in (100,)]
    print(f"{'normal(100, mean=0.5, std=2)':<34}{row[0]:>14.1f}{row[1]:>14.1f}")
    print(f"{'manual_seed + randn(3)':<34}"
          f"{per_call_us(lambda: (g.manual_seed(1), g.randn((3,), np.float32))):>14.1f}"
          f"{per_call_us(lambda: (g.manual_seed(1), g.randn((3,), np.float64))):>14.1f}")
    print(f"{'manual_seed':<34}{per_call_us(lambda: g.manual_seed(1)):>14.1f}")
    print(f"{'Generator()':<34}{per_call_us(Generator):>14.1f}")
    print(f"{'randint(0, 10, (100,))':<34}{per_call_us(lambda: g.randint(0, 10, (100,), np.int64)):>14.1f}")
    print(f"{'randperm(1000)':<34}{per_call_us(lambda: g.randperm(1000, np.int64)):>14.1f}")


if __name__ == "__main__":
    main()
