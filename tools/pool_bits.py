#!/usr/bin/env python3
"""Write tests/pool_bits.json and tests/pool3d_bits.json: PyTorch 2.13's 2-d and 3-d pooling results
(forward and backward, float32 and float64) on many sizes, strides, paddings and modes, as SHA-256 digests
of their bytes, which tests/test_pool_numerics.py compares with gradcli's, bit for bit.

    /work/oracle/bin/python tools/pool_bits.py

The inputs and incoming gradients come from `inputs` below (integer hashing, the same numbers on any
machine), so the file stores only each case's arguments and digests.
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

import numpy as np

TESTS = Path(__file__).resolve().parents[1] / "tests"
OUT = {2: TESTS / "pool_bits.json", 3: TESTS / "pool3d_bits.json"}


def inputs(shape, seed: int, dtype: str):
    """Deterministic values in [-8, 8) with many distinct low bits."""
    n = int(np.prod(shape))
    k = np.arange(n, dtype=np.uint64) + np.uint64(seed * 7919 + 1)
    h = (k * np.uint64(2654435761) + np.uint64(seed * 40503)) % np.uint64(1 << 31)
    h = (h * np.uint64(1103515245) + np.uint64(12345)) % np.uint64(1 << 31)
    return (h.astype(np.float64) / float(1 << 27) - 8.0).astype(dtype).reshape(shape)


def case_input(case):
    x = inputs(case["shape"], case["seed"], case["dtype"])
    return x.round() if case.get("ties") else x


def digest(a) -> str:
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()[:20]


def cases(n: int = 2):
    """The cases of the n-d poolings (the 2-d list is the one this tool always wrote; the 3-d one has
    smaller sizes per dim)."""
    r = random.Random(1613 if n == 2 else 3613)
    out = []
    for i in range(160):
        kind = ("avg", "max", "adaptive_avg", "adaptive_max")[i % 4]
        dtype = "float64" if i % 5 == 4 else "float32"
        batch = r.choice([(), (2,), (1,)])
        shape = batch + (r.randint(1, 3),) + tuple(r.randint(1, 13 if n == 2 else 7) for _ in range(n))
        if kind in ("avg", "max"):
            k = [r.randint(1, 5 if n == 2 else 4) for _ in range(n)]
            args = {"kernel_size": k, "stride": [r.randint(1, 4) for _ in range(n)],
                    "padding": [r.randint(0, ki // 2) for ki in k], "ceil_mode": r.random() < 0.5}
            if kind == "avg":
                args["count_include_pad"] = r.random() < 0.5
                args["divisor_override"] = r.choice([None, None, None, 1, 3, 7])
            else:
                args["dilation"] = [r.randint(1, 2) for _ in range(n)]
        else:
            args = {"output_size": [r.randint(1, 9 if n == 2 else 6) for _ in range(n)]}
        case = {"kind": kind, "dtype": dtype, "shape": list(shape), "seed": i, "args": args}
        if kind.endswith("max") and i % 3 == 0:
            case["ties"] = True         # whole numbers: windows with equal maxima
        out.append(case)
    return out


def main():
    import torch.nn.functional as F
    for n in (2, 3):
        fns = {kind: getattr(F, f"{kind}_pool{n}d") for kind in ("avg", "max", "adaptive_avg", "adaptive_max")}
        write(cases(n), fns, OUT[n])


def write(cases_, fns, path):
    """Each case's digests from PyTorch (a case PyTorch refuses is left out) into `path`."""
    import torch
    kept = []
    for case in cases_:
        x = torch.from_numpy(case_input(case)).requires_grad_()
        try:
            y = fns[case["kind"]](x, **case["args"])
        except RuntimeError:
            continue
        g = torch.from_numpy(inputs(tuple(y.shape), case["seed"] + 1000, case["dtype"]))
        y.backward(g)
        case["out"] = digest(y.detach().numpy())
        case["grad"] = digest(x.grad.numpy())
        kept.append(case)
    path.write_text("[\n" + ",\n".join(json.dumps(c) for c in kept) + "\n]\n")
    print(f"{len(kept)} cases written to {path}")


if __name__ == "__main__":
    main()
