"""Float32 batch_norm / layer_norm / group_norm against PyTorch, bit for bit, on random inputs of many shapes.

Two steps, two interpreters:

    /work/oracle/bin/python tools/norm_oracle.py generate OUT.npz [--cases N] [--seed S]
        (PyTorch and numpy only) draws inputs, runs PyTorch's forward and backward and stores inputs and
        results: outputs, saved mean/invstd, running statistics, gradients of input, weight and bias;
    .venv/bin/python tools/norm_oracle.py compare OUT.npz
        runs gradcli's kernels on the same inputs and counts every result that is not bit-identical.

tests/norm_bits.npz is a small `generate --cases 75 --seed 3 --max-size 600` (tests/test_ops_norm.py compares
it on every run); a larger one (--cases 1500) is the evidence quoted in the commit that added the kernels.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

OPS = ("batch_norm", "layer_norm", "group_norm")


def _shape(rng, op: str, i: int) -> tuple:
    """Shapes that reach each kernel path: 2-d batch norm (the channels-last kernel), image sizes below, at and
    above the vector width, rows of one Welford chunk and of several, groups of one channel and of many."""
    n = int(rng.integers(1, 9))
    if op == "batch_norm":
        c = int(rng.integers(1, 7))
        spatial = [(), (int(rng.integers(1, 40)),), (int(rng.integers(1, 6)), int(rng.integers(1, 9))),
                   (int(rng.integers(60, 300)),)][i % 4]
        n = max(n, 3) if not spatial or np.prod(spatial) == 1 else n
        return (n, c) + spatial
    if op == "layer_norm":
        width = int(rng.choice([1, 2, 3, 7, 8, 9, 16, 17, 40, 127, 128, 136, 255, 256, 300, 520, 1100]))
        return (n, width) if i % 3 else (n, 2, width)
    groups, per = int(rng.integers(1, 4)), int(rng.integers(1, 10))
    spatial = [(), (int(rng.integers(1, 12)),), (int(rng.integers(1, 6)), int(rng.integers(1, 9))),
               (int(rng.integers(20, 200)),)][i % 4]
    if per * int(np.prod(spatial)) < 2:
        spatial = (2,)
    return (n, groups * per) + spatial


def generate(path: str, cases: int, seed: int, max_size: int = 0) -> None:
    import torch
    import torch.nn.functional as F
    rng = np.random.default_rng(seed)
    out = {}
    for i in range(cases):
        op = OPS[i % 3]
        shape = _shape(rng, op, i // 3)
        while max_size and np.prod(shape) > max_size:     # a small file: draw again
            shape = _shape(rng, op, i // 3)
        x = (rng.standard_normal(shape) * rng.uniform(0.1, 10) + rng.uniform(-5, 5)).astype(np.float32)
        g = rng.standard_normal(shape).astype(np.float32)
        pshape = (shape[-1],) if op == "layer_norm" else (shape[1],)
        w = rng.standard_normal(pshape).astype(np.float32)
        b = rng.standard_normal(pshape).astype(np.float32)
        affine = i % 4 != 3
        tx = torch.tensor(x, requires_grad=True)
        tw = torch.tensor(w, requires_grad=True) if affine else None
        tb = torch.tensor(b, requires_grad=True) if affine else None
        case = {"x": x, "g": g, "w": w, "b": b, "affine": np.array(affine)}
        if op == "batch_norm":
            training = i % 5 != 4
            rm = rng.standard_normal(shape[1]).astype(np.float32)
            rv = rng.uniform(0.5, 2, shape[1]).astype(np.float32)
            trm, trv = torch.tensor(rm), torch.tensor(rv)
            y = F.batch_norm(tx, trm, trv, tw, tb, training, 0.1, 1e-5)
            case.update(rm=rm, rv=rv, training=np.array(training), rm_out=trm.numpy(), rv_out=trv.numpy())
        elif op == "layer_norm":
            y = F.layer_norm(tx, (shape[-1],), tw, tb)
        else:
            groups = int(rng.integers(1, 4))
            while shape[1] % groups:
                groups -= 1
            y = F.group_norm(tx, groups, tw, tb)
            case.update(groups=np.array(groups))
        case.update(mean=y.grad_fn._saved_result1.detach().numpy().copy(),
                    invstd=y.grad_fn._saved_result2.detach().numpy().copy())
        y.backward(torch.tensor(g))
        case.update(y=y.detach().numpy(), gx=tx.grad.numpy())
        if affine:
            case.update(gw=tw.grad.numpy(), gb=tb.grad.numpy())
        for key, value in case.items():
            out[f"{i}:{op}:{key}"] = value
    np.savez_compressed(path, **out)


def cases_of(path: str) -> list:
    """[(op, {name: array})] from a generated file, in order."""
    data = np.load(path)
    found = {}
    for key in data.files:
        i, op, name = key.split(":")
        found.setdefault((int(i), op), {})[name] = data[key]
    return [(op, found[(i, op)]) for i, op in sorted(found)]


def mismatches(op: str, case: dict) -> list:
    """The names of gradcli's results that differ from PyTorch's in any bit."""
    from gradcli.engine import ops
    from gradcli.engine.ops import normalization as norm
    from gradcli.engine.tensor import Tensor
    x, g = case["x"], case["g"]
    affine = bool(case["affine"])
    w, b = (case["w"], case["b"]) if affine else (None, None)
    got = {}
    if op == "batch_norm":
        rm, rv = Tensor(case["rm"].copy()), Tensor(case["rv"].copy())
        training = bool(case["training"])
        y = ops.batch_norm(Tensor(x), rm, rv, None if w is None else Tensor(w), None if b is None else Tensor(b),
                           training, 0.1, 1e-5)
        got.update(y=y._a, rm_out=rm._a, rv_out=rv._a)
        if training:
            mean, var_sum, n = norm.batch_norm_stats(x)
            got.update(mean=mean, invstd=norm._invstd_train(var_sum, n, 1e-5))
        else:
            mean = invstd = np.zeros(0, np.float32)
        got["gx"], gw, gb = norm.batch_norm_backward_arrays(g, x, w, case["rm"], case["rv"], case["mean"],
                                                            case["invstd"], training, 1e-5, (1, affine, affine))
    elif op == "layer_norm":
        rows = x.reshape(-1, x.shape[-1])
        y, mean, rstd = norm.layer_norm_arrays(rows, w, b, 1e-5)
        got.update(y=y.reshape(x.shape), mean=mean.reshape(case["mean"].shape), invstd=rstd.reshape(case["mean"].shape))
        gx, gw, gb = norm.layer_norm_backward_arrays(g.reshape(rows.shape), rows, case["mean"].ravel(),
                                                     case["invstd"].ravel(), w, (1, affine, affine))
        got["gx"] = gx.reshape(x.shape)
    else:
        groups = int(case["groups"])
        got["y"], got["mean"], got["invstd"] = norm.group_norm_arrays(x, groups, w, b, 1e-5)
        got["gx"], gw, gb = norm.group_norm_backward_arrays(g, x, case["mean"], case["invstd"], w, groups,
                                                            (1, affine, affine))
    if affine:
        got.update(gw=gw, gb=gb)
    return [name for name, value in got.items() if not np.array_equal(value, case[name])]


def compare(path: str) -> int:
    counts, total = {}, {}
    for op, case in cases_of(path):
        total[op] = total.get(op, 0) + 1
        for name in mismatches(op, case):
            key = f"{op}.{name}"
            counts[key] = counts.get(key, 0) + 1
            print(f"differs: {op} {name} shape={tuple(case['x'].shape)}")
    print("cases:", total, "differing results:", counts or "none")
    return 1 if counts else 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=("generate", "compare"))
    parser.add_argument("path")
    parser.add_argument("--cases", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-size", type=int, default=0, help="draw only inputs of at most this many elements")
    args = parser.parse_args(argv)
    if args.mode == "generate":
        generate(args.path, args.cases, args.seed, args.max_size)
        return 0
    return compare(args.path)


if __name__ == "__main__":
    sys.exit(main())
