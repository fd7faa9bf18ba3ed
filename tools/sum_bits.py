#!/usr/bin/env python3
"""Write tests/sum_bits.json: PyTorch 2.13's float sums and means (float32 and float64; 1-d to 4-d; every
dim, several dims and all; contiguous, transposed, permuted and stepped views; keepdim; the dtype= argument;
sizes from 1 to 10^5, across the 32768-element parallel split) and the gradients its sum_to gives a
broadcast input, as SHA-256 digests that tests/test_sum_order.py compares with gradcli's bit for bit.

    /work/oracle/bin/python tools/sum_bits.py            # write the file (needs the oracle)
    python3 tools/sum_bits.py --measure                   # share of cases where numpy's plain sum agrees
    ATEN_CPU_CAPABILITY=avx2 /work/oracle/bin/python tools/sum_bits.py --agree
                                                          # share where that PyTorch build agrees with the file

The inputs come from `values` (integer hashing, the same numbers on any machine).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from pool_bits import digest, inputs  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "tests" / "sum_bits.json"
SIZES = [1, 2, 3, 4, 5, 7, 8, 9, 11, 15, 16, 17, 24, 31, 32, 33, 63, 64, 65, 100, 127, 128, 129, 255, 256, 257,
         511, 512, 513, 1000, 1023, 1025, 2000, 4095, 4097, 5000, 10000, 32767, 32768, 40000, 65537, 100000]


def values(shape, seed: int, dtype: str) -> np.ndarray:
    """inputs() scaled by powers of two from 2^-16 to 2^15, so that the order of additions shows in the result."""
    x = inputs(shape, seed, "float64")
    scale = inputs(shape, seed + 1, "float64")
    return (x * np.exp2(np.floor(scale * 2.0))).astype(dtype)


def view(x, case):
    """The case's view of x, made with the same operations in numpy and in torch (duck typing)."""
    how = case["view"]
    if how == "t":
        return x.T if isinstance(x, np.ndarray) else x.t()
    if how == "perm":
        return x.transpose(case["perm"]) if isinstance(x, np.ndarray) else x.permute(*case["perm"])
    if how == "step":
        return x[..., ::2]
    if how == "expand":
        return x[:, :1] if isinstance(x, np.ndarray) else x[:, :1]
    return x


def cases(seed: int = 17) -> list[dict]:
    rnd = random.Random(seed)
    out = []
    for n in SIZES:
        for dtype in ("float32", "float64"):
            out.append(dict(kind="sum", shape=[n], dims=None, view="none", dtype=dtype))
    while len(out) < 420:
        dtype = rnd.choice(["float32", "float64"])
        ndim = rnd.choice([2, 2, 2, 3, 3, 4])
        cap = {2: 28, 3: 21, 4: 11}[ndim]
        shape = [rnd.choice(SIZES[:cap]) for _ in range(ndim)]
        if np.prod(shape) > 300000 or (ndim == 2 and np.prod(shape) < 8):
            continue
        k = rnd.randint(1, ndim)
        dims = sorted(rnd.sample(range(ndim), k)) if rnd.random() < 0.85 else None
        view_kind = rnd.choice(["none", "none", "t" if ndim == 2 else "perm", "step"])
        perm = list(range(ndim))
        rnd.shuffle(perm)
        case = dict(kind=rnd.choice(["sum", "sum", "mean", "sum_to"]), shape=shape, dims=dims, view=view_kind,
                    perm=perm, dtype=dtype, keepdim=rnd.random() < 0.3)
        if case["kind"] == "sum_to":
            case["dims"] = None
            case["view"] = "none"
            case["target"] = [1 if rnd.random() < 0.5 else n for n in shape][rnd.randint(0, ndim - 1):]
        if rnd.random() < 0.1 and dtype == "float32" and case["kind"] == "sum":
            case["as_double"] = True
        out.append(case)
    for i, c in enumerate(out):
        c["seed"] = i
    return out


def run(case, lib):
    """The case computed by `lib` ('torch' or 'gradcli'): the result's digest."""
    x = values(tuple(case["shape"]), case["seed"], case["dtype"])
    if lib == "torch":
        import torch
        t = torch.from_numpy(x)
        if case["kind"] == "sum_to":
            target = torch.zeros(case["target"], dtype=t.dtype, requires_grad=True)
            (target + torch.zeros_like(t)).backward(t)
            return digest(target.grad.numpy())
        v = view(t, case)
        kw = dict(dim=case["dims"], keepdim=case["keepdim"]) if case["dims"] is not None else {}
        if case.get("as_double"):
            kw["dtype"] = torch.float64
        r = v.sum(**kw) if case["kind"] == "sum" else v.mean(**kw)
        return digest(r.numpy())
    from gradcli.engine import ops
    from gradcli.engine.tensor import Tensor
    if case["kind"] == "sum_to":
        target = Tensor(np.zeros(case["target"], dtype=case["dtype"]))
        target.requires_grad = True
        t = Tensor(x)
        ops.arith.add(target, ops.arith.mul(t, 0.0)).backward(t)
        return digest(target.grad._a)
    v = Tensor(view(x, case))
    from gradcli.engine import dtypes
    kw = dict(dim=tuple(case["dims"]), keepdim=case["keepdim"]) if case["dims"] is not None else {}
    if case.get("as_double"):
        kw["dtype"] = dtypes.by_name("float64")
    r = ops.reduce.reduce_sum(v, **kw) if case["kind"] == "sum" else ops.reduce.mean(v, **kw)
    return digest(r._a)


def numpy_digest(case):
    x = view(values(tuple(case["shape"]), case["seed"], case["dtype"]), case)
    if case["kind"] == "sum_to":
        return None
    dims = tuple(case["dims"]) if case["dims"] is not None else None
    dt = np.dtype(np.float64) if case.get("as_double") else x.dtype
    r = x.sum(axis=dims, keepdims=case.get("keepdim", False), dtype=dt)
    if case["kind"] == "mean":
        r = r / dt.type(x.size if dims is None else np.prod([x.shape[d] for d in dims]))
    return digest(np.asarray(r, dtype=dt))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--measure", action="store_true", help="compare numpy's plain sum with the stored digests")
    ap.add_argument("--agree", action="store_true",
                    help="compare this PyTorch (e.g. another ATEN_CPU_CAPABILITY) with the stored digests")
    args = ap.parse_args()
    if args.agree:
        stored = json.loads(OUT.read_text())
        same = sum(run(c, "torch") == c["expect"] for c in stored)
        print(f"this PyTorch agrees with the stored results on {same}/{len(stored)} cases")
        return
    if args.measure:
        stored = json.loads(OUT.read_text())
        same = sum(numpy_digest(c) == c["expect"] for c in stored if c["kind"] != "sum_to")
        total = sum(c["kind"] != "sum_to" for c in stored)
        print(f"numpy's sum/mean agree with PyTorch on {same}/{total} cases")
        return
    all_cases = cases()
    for c in all_cases:
        c["expect"] = run(c, "torch")
    OUT.write_text(json.dumps(all_cases, indent=0) + "\n")
    print(f"wrote {len(all_cases)} cases to {OUT}")


if __name__ == "__main__":
    main()
