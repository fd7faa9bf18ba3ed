#!/usr/bin/env python3
"""Measure gradcli's float32 elementary functions against PyTorch and against the correctly rounded value.

    PYTHONPATH=$PWD /work/oracle/bin/python tools/elementary_bits.py              the table (docs/numerics.md)
    PYTHONPATH=$PWD /work/oracle/bin/python tools/elementary_bits.py --edges      rewrite tests/elementary_edges.json
    PYTHONPATH=$PWD /work/oracle/bin/python tools/elementary_bits.py --double-rounding 100000000
    PYTHONPATH=$PWD /work/oracle/bin/python tools/elementary_bits.py --exhaustive exp   every float32 input
    PYTHONPATH=$PWD /work/oracle/bin/python tools/elementary_bits.py --speed     time before and after

For each function, random float32 inputs from a few ranges, in tensors of 1 to 10^5 elements, contiguous
and strided (every other element of a tensor twice as long), go through PyTorch (`torch.exp(t)`, this
machine's build) and through two numpy versions: "numpy f32", what gradcli computed before (numpy's
float32 functions), and "gradcli", gradcli.engine.elementary (float64, rounded once). Each column is the
share of elements bit-identical to PyTorch, and the share equal to the correctly rounded value.

The correctly rounded value: numpy's float64 function rounded to float32, except where that float64 lies
within 2^8 float64 ulps of a float32 rounding midpoint (numpy's float64 functions are within a few ulps),
where mpmath decides at 120 bits. Results that are not finite, or below float32's normal range, count as
correct when both are the same (the same nan-ness, infinity, or bits).

--edges runs each function on its edge values (signed zeros, infinities, nan, domain limits, overflow
thresholds) in PyTorch and stores its bits and the correctly rounded ones; tests/test_elementary.py
compares gradcli with both.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import mpmath
import numpy as np
import torch

from gradcli.engine import elementary
from gradcli.engine.ops import arith

ROOT = Path(__file__).resolve().parent.parent
EDGES = ROOT / "tests" / "elementary_edges.json"
SIZES = (1, 3, 7, 8, 9, 16, 31, 100, 1000, 10_000, 100_000)
F32 = np.float32


def uniform(lo, hi):
    return lambda rng, n: rng.uniform(lo, hi, n)


def log_uniform(lo, hi):
    """Positive values spread over decades (10^lo to 10^hi)."""
    return lambda rng, n: 10.0 ** rng.uniform(lo, hi, n)


def signed_log_uniform(lo, hi):
    return lambda rng, n: 10.0 ** rng.uniform(lo, hi, n) * rng.choice((-1.0, 1.0), n)


def normal(rng, n):
    return rng.standard_normal(n)


# name: (PyTorch, gradcli's function, what gradcli computed before, mpmath's, input ranges)
UNARY = {
    "exp": (torch.exp, elementary.exp, np.exp, mpmath.exp, (uniform(-10, 10), uniform(-87, 88))),
    "expm1": (torch.expm1, elementary.expm1, np.expm1, mpmath.expm1,
              (uniform(-10, 10), signed_log_uniform(-8, 0))),
    "exp2": (torch.exp2, elementary.exp2, np.exp2, lambda v: mpmath.power(2, v), (uniform(-20, 20),)),
    "log": (torch.log, elementary.log, np.log, mpmath.log, (uniform(0, 10), log_uniform(-30, 30))),
    "log1p": (torch.log1p, elementary.log1p, np.log1p, mpmath.log1p,
              (uniform(-0.99, 10), signed_log_uniform(-8, -1))),
    "log2": (torch.log2, elementary.log2, np.log2, lambda v: mpmath.log(v, 2), (uniform(0, 10), log_uniform(-30, 30))),
    "log10": (torch.log10, elementary.log10, np.log10, mpmath.log10, (uniform(0, 10), log_uniform(-30, 30))),
    "sin": (torch.sin, elementary.sin, np.sin, mpmath.sin, (uniform(-10, 10), uniform(-1e4, 1e4))),
    "cos": (torch.cos, elementary.cos, np.cos, mpmath.cos, (uniform(-10, 10), uniform(-1e4, 1e4))),
    "tan": (torch.tan, elementary.tan, np.tan, mpmath.tan, (uniform(-1.5, 1.5), uniform(-1e4, 1e4))),
    "asin": (torch.asin, elementary.asin, np.arcsin, mpmath.asin, (uniform(-1, 1),)),
    "acos": (torch.acos, elementary.acos, np.arccos, mpmath.acos, (uniform(-1, 1),)),
    "atan": (torch.atan, elementary.atan, np.arctan, mpmath.atan, (uniform(-10, 10), signed_log_uniform(-10, 10))),
    "sinh": (torch.sinh, elementary.sinh, np.sinh, mpmath.sinh, (uniform(-10, 10), uniform(-89, 89))),
    "cosh": (torch.cosh, elementary.cosh, np.cosh, mpmath.cosh, (uniform(-10, 10), uniform(-89, 89))),
    "tanh": (torch.tanh, elementary.tanh, np.tanh, mpmath.tanh, (uniform(-10, 10), normal)),
    "sqrt": (torch.sqrt, elementary.sqrt, np.sqrt, mpmath.sqrt, (uniform(0, 100), log_uniform(-30, 30))),
    "rsqrt": (torch.rsqrt, elementary.rsqrt, lambda x: np.reciprocal(np.sqrt(x)), lambda v: 1 / mpmath.sqrt(v),
              (uniform(0, 100), log_uniform(-30, 30))),
    "erf": (torch.erf, elementary.erf,
            lambda x: np.asarray(np.frompyfunc(math.erf, 1, 1)(x.astype(np.float64)), np.float64).astype(x.dtype),
            mpmath.erf,
            (normal, uniform(-5, 5), signed_log_uniform(-10, 0))),
}
# binary: (PyTorch, gradcli, before, mpmath, ranges of x, ranges of y); pow with a number exponent is below
BINARY = {
    "atan2": (torch.atan2, elementary.atan2, np.arctan2, mpmath.atan2, normal, normal),
    "pow": (torch.pow, elementary.pow, np.power, mpmath.power, uniform(0, 10), uniform(-3, 3)),
}
EXPONENTS = (0.3, 1.7, -2.5)

EDGE_VALUES = (0.0, -0.0, math.inf, -math.inf, math.nan, 1.0, -1.0, 0.5, -0.5, 2.0, 1e-45, -1e-45, 1.17549435e-38,
               -1.17549435e-38, 3.4028235e38, -3.4028235e38, 88.72283, 88.7, 89.5, -87.33655, -103.97, -104.0, 0.75,
               -0.75, 4.0, -4.0, 3.92, 1e-8, -1e-8, 1.5707964, 3.1415927, 1e10, -1e10, 128.0, -150.0, 1.0000001,
               0.99999994, -0.99999994, -1.0000001, 65504.0)


def _ulp_sides(r64: np.ndarray):
    """float64 results rounded to float32, and where they sit within 2^8 float64 ulps of a rounding midpoint."""
    rounded = r64.astype(F32)
    normal_range = np.isfinite(r64) & (np.abs(r64) >= 2.0 ** -126) & np.isfinite(rounded)
    low = (r64.view(np.uint64) & np.uint64((1 << 29) - 1)).astype(np.int64) - (1 << 28)
    return rounded, normal_range & (np.abs(low) <= 256)


def correctly_rounded(f64, mp, *args) -> np.ndarray:
    """The correctly rounded float32 results of a function at float32 arguments (see the module doc)."""
    return _resolved(f64, mp, *args)[1]


def _resolved(f64, mp, *args) -> tuple:
    """(float64 results rounded to float32, the correctly rounded results, how many were near a midpoint)."""
    with np.errstate(all="ignore"):
        r64 = np.asarray(f64(*(a.astype(np.float64) for a in args)), np.float64)
    rounded, near = _ulp_sides(r64)
    right = rounded.copy()
    for i in np.flatnonzero(near):
        with mpmath.workprec(120):
            exact = mp(*(mpmath.mpf(float(a[i])) for a in args))
        with mpmath.workprec(24):
            right[i] = F32(float(+exact))       # + rounds to 24 bits, nearest even; exact in float64 then
    return rounded, right, int(near.sum())


def same(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Bit-identical float32 results, any nan equal to any nan."""
    return (a.view(np.uint32) == b.view(np.uint32)) | (np.isnan(a) & np.isnan(b))


def ulps_apart(a: np.ndarray, b: np.ndarray) -> int:
    """The largest distance in float32 steps between finite results of the same sign (0 if none differ)."""
    both = np.isfinite(a) & np.isfinite(b) & (np.signbit(a) == np.signbit(b))
    if not both.any():
        return 0
    return int(np.max(np.abs(a[both].view(np.int32).astype(np.int64) - b[both].view(np.int32).astype(np.int64))))


def draws(rng, make, n: int, strided: bool) -> np.ndarray:
    values = make(rng, 2 * n if strided else n).astype(F32)
    return values[::2] if strided else values


def measure(rng, torch_fn, ours, before, f64, mp, makers) -> dict:
    counts = dict(n=0, torch_before=0, torch_ours=0, cr_before=0, cr_ours=0, cr_torch=0, ulps=0)
    for make in makers:
        for n in SIZES:
            for strided in (False, True):
                args = [draws(rng, m, n, strided) for m in make]
                with np.errstate(all="ignore"):
                    theirs = torch_fn(*(torch.from_numpy(a) for a in args)).numpy()
                    old = np.asarray(before(*args), F32)
                    new = np.asarray(ours(*args), F32)
                right = correctly_rounded(f64, mp, *args)
                counts["n"] += n
                counts["torch_before"] += int(same(theirs, old).sum())
                counts["torch_ours"] += int(same(theirs, new).sum())
                counts["cr_before"] += int(same(right, old).sum())
                counts["cr_ours"] += int(same(right, new).sum())
                counts["cr_torch"] += int(same(right, theirs).sum())
                counts["ulps"] = max(counts["ulps"], ulps_apart(theirs, new))
    return counts


def table(seed: int) -> list[tuple]:
    rng = np.random.default_rng(seed)
    rows = []
    for name, (torch_fn, ours, before, mp, ranges) in UNARY.items():
        f64 = _float64_of(ours)
        rows.append((name, measure(rng, torch_fn, ours, before, f64, mp, [(r,) for r in ranges])))
    for name, (torch_fn, ours, before, mp, xs, ys) in BINARY.items():
        rows.append((name, measure(rng, torch_fn, ours, before, ours.ufunc, mp, [(xs, ys)])))
    for e in EXPONENTS:         # x ** e: the engine's path (arith.scalar_power), the exponent a double
        rows.append((f"pow(x, {e})", measure(
            rng, lambda t, e=e: torch.pow(t, e), lambda x, e=e: arith.scalar_power(x, e),
            lambda x, e=e: np.power(x, F32(e)), lambda x, e=e: np.power(x, e),
            lambda v, e=e: mpmath.power(v, mpmath.mpf(e)), [(uniform(0, 10),)])))
    return rows


def double_rounding(seed: int, n: int) -> list[tuple]:
    """For each function with a float64 ufunc: among n random inputs (its first range), how many float32
    results of float64-then-round (gradcli's, bit for bit) are not the correctly rounded value."""
    rng = np.random.default_rng(seed)
    rows = []
    for name, (_torch_fn, ours, _before, mp, ranges) in UNARY.items():
        if not hasattr(ours, "ufunc"):
            continue
        wrong = near_total = 0
        for start in range(0, n, 1 << 22):
            x = ranges[0](rng, min(1 << 22, n - start)).astype(F32)
            rounded, right, near = _resolved(ours.ufunc, mp, x)
            near_total += near
            wrong += int((~same(rounded, right)).sum())
        rows.append((name, n, near_total, int(wrong)))
    return rows


def speed() -> list[tuple]:
    """Seconds per call, before (numpy's float32 kernels; math.erf per element) and after (elementary)."""
    import timeit
    rng = np.random.default_rng(0)
    old_erf = UNARY["erf"][2]
    cases = [("exp", np.exp, elementary.exp), ("log", np.log, elementary.log), ("sin", np.sin, elementary.sin),
             ("tanh", np.tanh, elementary.tanh), ("erf", old_erf, elementary.erf)]
    rows = []
    for name, before, after in cases:
        for n in (4, 1000, 100_000, 4_096_000):
            if n > 100_000 and name not in ("exp", "erf"):
                continue
            x = rng.uniform(0.1, 3, n).astype(F32)
            number = max(1, 200_000 // n)
            times = [min(timeit.repeat(lambda f=f: f(x), number=number, repeat=7)) / number for f in (before, after)]
            rows.append((name, n, *times))
    return rows


def exhaustive(name: str) -> tuple:
    """Every float32 input (all 2^32 bit patterns): how many float64-then-round results are not correctly
    rounded, and those inputs (hex bits)."""
    ours, mp = UNARY[name][1], UNARY[name][3]
    wrong, near_total = [], 0
    step = 1 << 24
    for start in range(0, 1 << 32, step):
        x = np.arange(start, start + step, dtype=np.uint64).astype(np.uint32).view(F32)
        rounded, right, near = _resolved(ours.ufunc, mp, x)
        near_total += near
        wrong += [_hex(v) for v in x[~same(rounded, right)]]
    return near_total, wrong


def _float64_of(ours):
    """The float64 function behind a gradcli function: its ufunc, or math.erf, or 1 / sqrt."""
    if hasattr(ours, "ufunc"):
        return ours.ufunc
    if ours is elementary.erf:
        return lambda x: np.array([math.erf(v) for v in x.reshape(-1).tolist()]).reshape(x.shape)
    if ours is elementary.rsqrt:
        return lambda x: 1.0 / np.sqrt(x)
    return ours                     # sqrt: numpy's, on float64


def print_table(rows) -> None:
    print("| function | elements | numpy f32 = PyTorch | gradcli = PyTorch | numpy f32 correctly rounded "
          "| gradcli correctly rounded | PyTorch correctly rounded | most ulps from PyTorch |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, c in rows:
        n = c["n"]
        pct = [f"{100 * c[k] / n:.4f}%" for k in ("torch_before", "torch_ours", "cr_before", "cr_ours", "cr_torch")]
        print(f"| {name} | {n:,} | " + " | ".join(pct) + f" | {c['ulps']} |")


def edges() -> dict:
    """PyTorch's results on the edge values and the correctly rounded ones, as float32 bits in hex ('nan')."""
    x = np.array(EDGE_VALUES, F32)
    out = {"inputs": [_hex(v) for v in x], "torch": {}, "correct": {}}
    for name, (torch_fn, ours, _before, mp, _ranges) in UNARY.items():
        with np.errstate(all="ignore"):
            out["torch"][name] = [_hex(v) for v in torch_fn(torch.from_numpy(x)).numpy()]
            out["correct"][name] = [_hex(v) for v in correctly_rounded(_float64_of(ours), mp, x)]
    specials = (0.0, -0.0, 1.0, -1.0, 0.5, 2.0, math.inf, -math.inf, math.nan)
    grid = np.array([(a, b) for a in specials for b in specials], F32)
    out["pairs"] = [[_hex(a), _hex(b)] for a, b in grid]
    for name, (torch_fn, ours, _before, mp, _xs, _ys) in BINARY.items():
        with np.errstate(all="ignore"):
            theirs = torch_fn(torch.from_numpy(grid[:, 0].copy()), torch.from_numpy(grid[:, 1].copy()))
            out["torch"][name] = [_hex(v) for v in theirs.numpy()]
            out["correct"][name] = [_hex(v) for v in correctly_rounded(ours.ufunc, mp, grid[:, 0], grid[:, 1])]
    return out


def _dumps(data: dict) -> str:
    """JSON with one list a line (the file is diffable: a changed result changes one line)."""
    def block(d: dict, pad: str) -> str:
        items = [f"{pad} {json.dumps(k)}: " + (block(v, pad + " ") if isinstance(v, dict) else json.dumps(v))
                 for k, v in d.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    return block(data, "") + "\n"


def _hex(v) -> str:
    return "nan" if np.isnan(v) else f"{int(np.asarray(v, F32).view(np.uint32)):08x}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edges", action="store_true", help=f"rewrite {EDGES.relative_to(ROOT)}")
    parser.add_argument("--seed", type=int, default=17)
    parser.add_argument("--exhaustive", metavar="NAME", help="check every float32 input of one function")
    parser.add_argument("--speed", action="store_true", help="time the functions before and after")
    parser.add_argument("--double-rounding", type=int, metavar="N",
                        help="count float64-then-round results that are not correctly rounded, on N inputs each")
    args = parser.parse_args()
    torch.set_num_threads(2)
    if args.edges:
        EDGES.write_text(_dumps(edges()))
        print(f"wrote {EDGES.relative_to(ROOT)}", file=sys.stderr)
        return
    if args.exhaustive:
        near, wrong = exhaustive(args.exhaustive)
        print(f"| {args.exhaustive} | 4,294,967,296 | {near:,} | {len(wrong)} | {', '.join(wrong[:8])} |")
        return
    if args.speed:
        print("| function | elements | before | after | after / before |")
        print("|---|---:|---:|---:|---:|")
        for name, n, before, after in speed():
            print(f"| {name} | {n:,} | {before * 1e6:,.1f} µs | {after * 1e6:,.1f} µs | {after / before:.1f}x |")
        return
    if args.double_rounding:
        print("| function | inputs | within 2^8 float64 ulps of a midpoint | not correctly rounded |")
        print("|---|---:|---:|---:|")
        for name, n, near, wrong in double_rounding(args.seed, args.double_rounding):
            print(f"| {name} | {n:,} | {near:,} | {wrong:,} |")
        return
    print_table(table(args.seed))


if __name__ == "__main__":
    main()
