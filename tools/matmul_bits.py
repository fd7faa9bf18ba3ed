#!/usr/bin/env python3
"""Write tests/matmul_bits.json: PyTorch 2.13's float32 mm, addmm, F.linear and bmm results on this machine (MKL's
kernels) for shapes across the regions of gradcli's linalg.mkl_order and every operand layout, as SHA-256 digests,
which tests/test_matmul_bits.py compares with gradcli's.

    /work/oracle/bin/python tools/matmul_bits.py

The inputs come from `inputs` below (integer hashing: the same numbers on any machine), so the file stores only
each case's arguments and digests.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parents[1] / "tests" / "matmul_bits.json"

MS = (1, 2, 3, 4, 5, 8, 12, 32)
KS = (1, 2, 3, 4, 7, 16, 33, 100)
NS = (1, 2, 3, 5, 8, 12, 16, 17, 20, 64)
LAYOUTS = ("NN", "TN", "NT", "TT")


def inputs(shape, seed: int) -> np.ndarray:
    """Deterministic float32 values in [-2, 2) with many distinct low bits."""
    n = int(np.prod(shape))
    k = np.arange(n, dtype=np.uint64) + np.uint64(seed * 7919 + 1)
    h = (k * np.uint64(2654435761) + np.uint64(seed * 40503)) % np.uint64(1 << 31)
    h = (h * np.uint64(1103515245) + np.uint64(12345)) % np.uint64(1 << 31)
    return (h.astype(np.float64) / float(1 << 29) - 2.0).astype(np.float32).reshape(shape)


def cases() -> list:
    out, seed = [], 0
    for m in MS:
        for k in KS:
            for n in NS:
                seed += 1
                out.append({"op": "mm", "m": m, "k": k, "n": n, "layout": LAYOUTS[seed % 4], "seed": seed})
                if seed % 3 == 0:
                    out.append({"op": "addmm", "m": m, "k": k, "n": n, "layout": LAYOUTS[seed % 2 * 2],
                                "seed": seed})
    for batch, m, k, n in ((3, 2, 3, 4), (2, 4, 7, 5), (4, 8, 8, 8), (2, 16, 16, 16), (3, 5, 33, 20), (2, 12, 4, 64)):
        seed += 1
        out.append({"op": "bmm", "batch": batch, "m": m, "k": k, "n": n, "layout": "NN", "seed": seed})
    # F.linear's layout (the weight a transposed view) on the output sizes of classifiers and small heads
    for m in (2, 3, 5, 32, 100):
        for k in (4, 12, 16, 20, 64, 100):
            for n in (2, 3, 5, 6, 7, 9, 10, 11, 12, 13, 14, 15):
                seed += 1
                out.append({"op": "addmm" if seed % 2 else "mm", "m": m, "k": k, "n": n, "layout": "NT",
                            "seed": seed})
    return out


def operands(case) -> tuple:
    """(x, y, bias) as float32 arrays laid out as the case says (T: a transposed view of a contiguous array)."""
    m, k, n, seed = case["m"], case["k"], case["n"], case["seed"]
    lead = (case["batch"],) if case["op"] == "bmm" else ()
    x, y = inputs(lead + (m, k), seed), inputs(lead + (k, n), seed + 100_000)
    if case["layout"][0] == "T":
        x = np.ascontiguousarray(np.swapaxes(x, -1, -2)).swapaxes(-1, -2)
    if case["layout"][1] == "T":
        y = np.ascontiguousarray(np.swapaxes(y, -1, -2)).swapaxes(-1, -2)
    return x, y, inputs((n,), seed + 200_000)


def digest(a) -> str:
    return hashlib.sha256(np.ascontiguousarray(a, dtype=np.float32).tobytes()).hexdigest()[:20]


def torch_result(case):
    import torch
    x, y, bias = operands(case)
    tx, ty = torch.from_numpy(x), torch.from_numpy(y)     # from_numpy keeps the strides (the transposed views)
    if case["op"] == "addmm":
        return torch.addmm(torch.from_numpy(bias), tx, ty).numpy()
    if case["op"] == "bmm":
        return torch.bmm(tx, ty).numpy()
    return torch.mm(tx, ty).numpy()


def main() -> None:
    rows = [{**case, "digest": digest(torch_result(case))} for case in cases()]
    OUT.write_text(json.dumps(rows, indent=0) + "\n")
    print(f"wrote {len(rows)} cases to {OUT}")


if __name__ == "__main__":
    main()
