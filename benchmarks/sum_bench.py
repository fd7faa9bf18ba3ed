"""Sums in PyTorch's order (gradcli.engine.cascade) against numpy's own sum, microseconds per call at tutorial
and larger sizes; prints figures only. The order costs numpy calls: a small sum takes 2-4x numpy's time."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from gradcli.engine.cascade import sum_array  # noqa: E402
from rng_bench import per_call_us  # noqa: E402

CASES = [((10,), None), ((64,), None), ((1000,), None), ((32, 5), (0,)), ((32, 64), (0,)), ((64, 10), (1,)),
         ((128, 100), (0,)), ((128, 100), (1,)), ((64, 3, 8, 8), (0, 2, 3)), ((100, 1000), (1,)),
         ((1000, 1000), None), ((1000, 1000), (0,)), ((1000, 1000), (1,))]


def main() -> None:
    rng = np.random.default_rng(0)
    print(f"{'shape':>16} {'dims':>10} {'ordered us':>11} {'numpy us':>9} {'ratio':>6}")
    for shape, dims in CASES:
        x = rng.standard_normal(shape).astype(np.float32)
        ordered = per_call_us(lambda: sum_array(x, dims, True))
        plain = per_call_us(lambda: np.add.reduce(x, axis=dims, keepdims=True))
        print(f"{str(shape):>16} {str(dims):>10} {ordered:11.1f} {plain:9.1f} {ordered / plain:6.1f}")


if __name__ == "__main__":
    main()
