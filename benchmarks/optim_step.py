"""What one optimiser step costs: gradcli's Adam, SGD (momentum) and Muon steps against the same update written
by hand in numpy, and against PyTorch's, on a few small parameter tensors (a 2-layer MLP's; Muon on its two
weight matrices only, as it takes matrices alone).

    .venv/bin/python benchmarks/optim_step.py [--steps N] [--torch-python PATH]

gradcli's step is timed in-process on the engine's optimiser (the script-level call adds one attribute
look-up and call, the same for any method). The numpy floor is the plain float32 update, one line per
PyTorch kernel, without gradcli's rounding repair of fused multiply-adds. PyTorch runs in its own
process (`--torch-python`, or $ORACLE_PYTHON) with one thread. Figures are medians of 5 rounds, in µs
per step.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

SHAPES = [(64, 32), (64,), (10, 64), (10,)]      # Linear(32, 64), Linear(64, 10)
MATRICES = [0, 2]                                 # the shapes Muon steps (2-D)


def _median_us(step, steps: int) -> float:
    rounds = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(steps):
            step()
        rounds.append((time.perf_counter() - start) / steps * 1e6)
    return statistics.median(rounds)


def _arrays():
    rng = np.random.default_rng(0)
    return [rng.standard_normal(s).astype(np.float32) for s in SHAPES]


def gradcli_steps(steps: int) -> dict:
    from gradcli.engine import muon, optim
    from gradcli.engine.tensor import Tensor
    figures = {}
    for name, make in (("Adam", lambda ps: optim.Adam(ps, lr=1e-3)),
                       ("SGD momentum", lambda ps: optim.SGD(ps, lr=1e-3, momentum=0.9)),
                       ("Muon", lambda ps: muon.Muon([ps[i] for i in MATRICES], lr=1e-3))):
        params = []
        for a, g in zip(_arrays(), _arrays()):
            p = Tensor(a)
            p.requires_grad = True
            p.grad = Tensor(g * np.float32(1e-3))
            params.append(p)
        figures[name] = _median_us(make(params).step, steps)
    return figures


def numpy_steps(steps: int) -> dict:
    f = np.float32
    params, grads = _arrays(), [g * f(1e-3) for g in _arrays()]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    count = [0]

    def adam():
        count[0] += 1
        lr, b1, b2, eps = 1e-3, 0.9, 0.999, 1e-8
        bc1, bc2 = 1 - b1 ** count[0], 1 - b2 ** count[0]
        for p, g, mi, vi in zip(params, grads, m, v):
            mi += f(1 - b1) * (g - mi)
            vi *= f(b2)
            vi += f(1 - b2) * g * g
            denom = np.sqrt(vi)
            denom /= f(bc2 ** 0.5)
            denom += f(eps)
            upd = f(-lr / bc1) * mi
            upd /= denom
            p += upd

    bufs = [None] * len(params)

    def sgd():
        for i, (p, g) in enumerate(zip(params, grads)):
            if bufs[i] is None:
                bufs[i] = g.copy()
            else:
                bufs[i] *= f(0.9)
                bufs[i] += g
            p += f(-1e-3) * bufs[i]

    return {"Adam": _median_us(adam, steps), "SGD momentum": _median_us(sgd, steps),
            "Muon": _median_us(_muon_floor(params, grads, None), steps)}


def _muon_floor(params, grads, rounded):
    """Muon's update by hand in numpy float32 (`rounded`: a function rounding each product to bfloat16, or
    None for plain float32), on the matrices only."""
    f = np.float32
    mats = [(params[i], grads[i], np.zeros_like(grads[i])) for i in MATRICES]
    keep = rounded or (lambda a: a)

    def step():
        for p, g, buf in mats:
            buf += f(0.05) * (g - buf)
            u = g + f(0.95) * (buf - g)
            x = keep(u.T if u.shape[0] > u.shape[1] else u)
            x = keep(x / max(np.linalg.norm(x), 1e-7))
            for _ in range(5):
                a = keep(x @ x.T)
                b = keep(f(-4.775) * a + f(2.0315) * (a @ a))
                x = keep(f(3.4445) * x + b @ x)
            if u.shape[0] > u.shape[1]:
                x = x.T
            p *= f(1 - 1e-3 * 0.1)
            p -= f(1e-3 * max(1, p.shape[0] / p.shape[1]) ** 0.5) * x
    return step


def _fma_inline(x, y, z, out):
    """x*y + z rounded once, the numpy calls gradcli's engine makes for it, written out."""
    p = np.multiply(x, y, dtype=np.float64)
    s = p + z
    if np.count_nonzero(np.bitwise_and(s.view(np.int64), 0x1FFFFFFF) == 0x10000000):
        raise AssertionError("a double-rounding tie: not in this benchmark's data")
    np.copyto(out, s, casting="same_kind")


def numpy_fma_steps(steps: int) -> dict:
    """The same updates with PyTorch's fused multiply-adds emulated by the same numpy calls as gradcli:
    the difference from gradcli's figure is gradcli's own Python."""
    f = np.float32
    params, grads = _arrays(), [g * f(1e-3) for g in _arrays()]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    count = [0]

    def adam():
        count[0] += 1
        lr, b1, b2, eps = 1e-3, 0.9, 0.999, 1e-8
        bc1, bc2 = 1 - b1 ** count[0], 1 - b2 ** count[0]
        for p, g, mi, vi in zip(params, grads, m, v):
            _fma_inline(f(1 - b1), g - mi, mi, mi)
            vi *= f(b2)
            _fma_inline(f(1 - b2) * g, g, vi, vi)
            denom = np.sqrt(vi)
            denom /= f(bc2 ** 0.5)
            denom += f(eps)
            upd = f(-lr / bc1) * mi
            upd /= denom
            p += upd

    bufs = [None] * len(params)

    def sgd():
        for i, (p, g) in enumerate(zip(params, grads)):
            if bufs[i] is None:
                bufs[i] = g.copy()
            else:
                bufs[i] *= f(0.9)
                bufs[i] += g
            _fma_inline(bufs[i], f(-1e-3), p, p)

    import ml_dtypes

    def bf16(a):
        return a.astype(ml_dtypes.bfloat16).astype(np.float32)
    return {"Adam": _median_us(adam, steps), "SGD momentum": _median_us(sgd, steps),
            "Muon": _median_us(_muon_floor(params, grads, bf16), steps)}


_TORCH = r"""
import statistics, sys, time, torch
torch.set_num_threads(1)
steps = int(sys.argv[1])
shapes = [(64, 32), (64,), (10, 64), (10,)]
out = {}
for name, make in (("Adam", lambda ps: torch.optim.Adam(ps, lr=1e-3)),
                   ("SGD momentum", lambda ps: torch.optim.SGD(ps, lr=1e-3, momentum=0.9)),
                   ("Muon", lambda ps: torch.optim.Muon([ps[0], ps[2]], lr=1e-3))):
    ps = [torch.randn(s, requires_grad=True) for s in shapes]
    for p in ps:
        p.grad = torch.randn(p.shape) * 1e-3
    opt = make(ps)
    rounds = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(steps):
            opt.step()
        rounds.append((time.perf_counter() - start) / steps * 1e6)
    out[name] = statistics.median(rounds)
print(repr(out))
"""


def torch_steps(python: str | None, steps: int):
    if not python:
        return None
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    try:
        out = subprocess.run([python, "-c", _TORCH, str(steps)], capture_output=True, text=True, check=True,
                             env=env).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return eval(out, {})        # a dict of floats printed by our own snippet


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--torch-python", default=os.environ.get("ORACLE_PYTHON"))
    args = parser.parse_args()
    ours, floor, fma_floor = gradcli_steps(args.steps), numpy_steps(args.steps), numpy_fma_steps(args.steps)
    theirs = torch_steps(args.torch_python, args.steps)
    print(f"one step on {len(SHAPES)} tensors {SHAPES}, µs (median of 5 rounds of {args.steps} steps)")
    print(f"| {'optimiser':<13} | {'gradcli':>8} | {'numpy floor':>11} | {'numpy + fma':>11} | "
          f"{'gradcli/(numpy + fma)':>21} | {'PyTorch':>8} | {'PyTorch/gradcli':>15} |")
    print(f"|{'-' * 15}|{'-' * 10}|{'-' * 13}|{'-' * 13}|{'-' * 23}|{'-' * 10}|{'-' * 17}|")
    for name in ours:
        torch_cell = f"{theirs[name]:8.1f}" if theirs else " skipped"
        ratio = f"{theirs[name] / ours[name]:14.2f}x" if theirs else "              -"
        print(f"| {name:<13} | {ours[name]:8.1f} | {floor[name]:11.1f} | {fma_floor[name]:11.1f} | "
              f"{ours[name] / fma_floor[name]:20.2f}x | {torch_cell} | {ratio} |")


if __name__ == "__main__":
    main()
