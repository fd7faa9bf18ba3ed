#!/usr/bin/env python3
"""Count, kernel by kernel, how many elements gradcli computes bit-identical to PyTorch's fused CPU kernels.

Every case below is one PyTorch kernel (a backward formula, a one-kernel forward or an optimiser step),
written once as a function of a torch-like namespace `T`, so the same text runs on PyTorch (in the
oracle's interpreter) and on gradcli's engine (in this one). Inputs are drawn from seeded numpy
generators, for sizes from 0-d and 1 to 10^5 (below and above the 8/16 lanes of the vector body),
float32 and float64, contiguous and strided (every other element of a twice-longer array, which
sends TensorIterator down its element-by-element loop). The oracle writes its results to an .npz
file; this side recomputes them with gradcli and prints, per kernel and dtype, the share of
bit-identical elements (NaNs of either sign count as equal).

    .venv/bin/python tools/fused_bits.py                       # the table
    .venv/bin/python tools/fused_bits.py --only tanh,sigmoid --sizes 0,1,7,9,33
    .venv/bin/python tools/fused_bits.py --capability avx2     # ATEN_CPU_CAPABILITY for the oracle
    .venv/bin/python tools/fused_bits.py --write-golden        # tests/fused_bits.json for tests/test_fused_bits.py

The oracle half runs as `ORACLE tools/fused_bits.py --side torch IN.npz OUT.npz` and imports nothing of
gradcli; the gradcli half never imports torch.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
ORACLE = os.environ.get("ORACLE_PYTHON", "/work/oracle/bin/python")
SIZES = (0, 1, 3, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100, 1000, 10**5)      # 0 means a 0-d tensor
GOLDEN = ROOT / "tests" / "fused_bits.json"
GOLDEN_SIZES = (0, 1, 5, 8, 13, 16, 37, 100, 1000)
# The cases whose every element is PyTorch's (no library function inside the kernel, nor before it): the
# suite pins them (tests/test_fused_bits.py)
EXACT_PREFIXES = ("aten.tanh_backward", "aten.sigmoid_backward", "aten.elu_backward(result)", "aten.softmax",
                  "aten.log_softmax", "mse_", "l1_", "smooth_l1", "huber", "hard", "leaky_relu", "threshold_backward",
                  "pow_backward(2)", "pow_backward(3)", "div_", "mul_", "add", "sub", "reciprocal_", "clamp_", "lerp",
                  "optim ")
MISSING = ("threshold_backward(0.5)",)      # F.threshold is not in gradcli's language yet


# ------------------------------------------------------------------------------------------- domains
# How each input is drawn: (name, low, high) uniform, or "g" a normal incoming gradient.

def _draw(rng, kind, n, dtype):
    if kind == "g" or kind == "n":
        a = rng.standard_normal(n) * (1.0 if kind == "g" else 3.0)
    elif kind == "p":                   # positive, away from 0
        a = rng.uniform(0.1, 4.0, n)
    elif kind == "u":                   # a probability
        a = rng.uniform(0.02, 0.98, n)
    elif kind == "w":                   # a lerp weight on both sides of 0.5
        a = rng.uniform(-0.2, 1.2, n)
    elif kind == "t":                   # a tanh result
        a = rng.uniform(-1.0, 1.0, n)
    elif kind == "h":                   # around the hard activations' corners (-3, 3)
        a = rng.uniform(-4.5, 4.5, n)
    else:
        raise ValueError(kind)
    return a.astype(dtype)


# --------------------------------------------------------------------------------------------- cases
# name -> (input domains, which inputs require grad, function of (T, *inputs) giving the output, and
# "backward" (compare the inputs' gradients for a random incoming gradient) or "forward").

def _loss(name, **kw):
    return lambda T, x, y: getattr(T.nn.functional, name)(x, y, reduction="none", **kw)


def _loss_mean(name, **kw):
    return lambda T, x, y: getattr(T.nn.functional, name)(x, y, reduction="mean", **kw)


CASES = {
    # backward kernels
    "tanh_backward": ("n", lambda T, x: T.tanh(x)),
    "sigmoid_backward": ("n", lambda T, x: T.sigmoid(x)),
    "threshold_backward": ("n", lambda T, x: T.relu(x)),
    "threshold_backward(0.5)": ("n", lambda T, x: T.nn.functional.threshold(x, 0.5, -1.0)),
    "softmax_backward": ("n", lambda T, x: T.softmax(x, -1)),
    "log_softmax_backward": ("n", lambda T, x: T.log_softmax(x, -1)),
    "mse_backward": ("nn", _loss("mse_loss")),
    "mse_backward(mean)": ("nn", _loss_mean("mse_loss")),
    "l1_backward": ("nn", _loss("l1_loss")),
    "smooth_l1_backward": ("nn", _loss("smooth_l1_loss")),
    "smooth_l1_backward(0.7)": ("nn", _loss("smooth_l1_loss", beta=0.7)),
    "smooth_l1_backward(mean)": ("nn", _loss_mean("smooth_l1_loss", beta=0.7)),
    "huber_backward": ("nn", _loss("huber_loss")),
    "huber_backward(1.7)": ("nn", _loss("huber_loss", delta=1.7)),
    "huber_backward(mean)": ("nn", _loss_mean("huber_loss", delta=1.7)),
    "bce_backward": ("uu", _loss("binary_cross_entropy")),
    "bce_backward(mean)": ("uu", _loss_mean("binary_cross_entropy")),
    "bce_logits_backward": ("nu", _loss("binary_cross_entropy_with_logits")),
    "bce_logits_backward(mean)": ("nu", _loss_mean("binary_cross_entropy_with_logits")),
    "gelu_backward": ("n", lambda T, x: T.nn.functional.gelu(x)),
    "gelu_backward(tanh)": ("n", lambda T, x: T.nn.functional.gelu(x, approximate="tanh")),
    "silu_backward": ("n", lambda T, x: T.nn.functional.silu(x)),
    "elu_backward": ("n", lambda T, x: T.nn.functional.elu(x, 1.3)),
    "selu_backward": ("n", lambda T, x: T.nn.functional.selu(x)),
    "celu_backward": ("n", lambda T, x: T.nn.functional.celu(x, 0.7)),
    "hardtanh_backward": ("h", lambda T, x: T.nn.functional.hardtanh(x, -2.0, 2.5)),
    "hardsigmoid_backward": ("h", lambda T, x: T.nn.functional.hardsigmoid(x)),
    "hardswish_backward": ("h", lambda T, x: T.nn.functional.hardswish(x)),
    "leaky_relu_backward": ("n", lambda T, x: T.nn.functional.leaky_relu(x, 0.03)),
    "softplus_backward": ("n", lambda T, x: T.nn.functional.softplus(x)),
    "softplus_backward(2,3)": ("n", lambda T, x: T.nn.functional.softplus(x, 2.0, 3.0)),
    "log_sigmoid_backward": ("n", lambda T, x: T.nn.functional.logsigmoid(x)),
    "pow_backward(tensor)": ("pn", lambda T, x, y: T.pow(x, y)),
    "pow_backward(3)": ("n", lambda T, x: T.pow(x, 3)),
    "pow_backward(2)": ("n", lambda T, x: T.pow(x, 2)),
    "pow_backward(2.5)": ("p", lambda T, x: T.pow(x, 2.5)),
    "pow_backward(-1.5)": ("p", lambda T, x: T.pow(x, -1.5)),
    "pow_backward(0.5)": ("p", lambda T, x: T.pow(x, 0.5)),
    "rpow_backward": ("n", lambda T, x: T.pow(2.5, x)),
    "div_backward": ("np", lambda T, x, y: T.div(x, y)),
    "div_backward(scalar)": ("n", lambda T, x: T.div(x, 3.7)),
    "mul_backward": ("nn", lambda T, x, y: T.mul(x, y)),
    "mul_backward(scalar)": ("n", lambda T, x: T.mul(x, 0.3)),
    "add_backward(alpha)": ("nn", lambda T, x, y: T.add(x, y, alpha=0.3)),
    "sub_backward(alpha)": ("nn", lambda T, x, y: T.sub(x, y, alpha=0.3)),
    "sqrt_backward": ("p", lambda T, x: T.sqrt(x)),
    "rsqrt_backward": ("p", lambda T, x: T.rsqrt(x)),
    "reciprocal_backward": ("p", lambda T, x: T.reciprocal(x)),
    "exp_backward": ("n", lambda T, x: T.exp(x)),
    "clamp_backward": ("n", lambda T, x: T.clamp(x, -1.0, 2.0)),
    # the backward kernels alone, on saved values both sides share (no elementary function before them)
    "aten.tanh_backward": ("gt", lambda T, g, y: T.ops.aten.tanh_backward(g, y), "forward"),
    "aten.sigmoid_backward": ("gu", lambda T, g, y: T.ops.aten.sigmoid_backward(g, y), "forward"),
    "aten.gelu_backward": ("gn", lambda T, g, x: T.ops.aten.gelu_backward(g, x), "forward"),
    "aten.gelu_backward(tanh)": ("gn", lambda T, g, x: T.ops.aten.gelu_backward(g, x, approximate="tanh"),
                                 "forward"),
    "aten.silu_backward": ("gn", lambda T, g, x: T.ops.aten.silu_backward(g, x), "forward"),
    "aten.elu_backward": ("gn", lambda T, g, x: T.ops.aten.elu_backward(g, 1.3, 1.0, 1.0, False, x), "forward"),
    "aten.elu_backward(result)": ("gn", lambda T, g, y: T.ops.aten.elu_backward(g, 1.3, 1.0, 1.0, True, y),
                                  "forward"),
    "aten.softplus_backward": ("gn", lambda T, g, x: T.ops.aten.softplus_backward(g, x, 1.0, 20.0), "forward"),
    "aten.softplus_backward(2,3)": ("gn", lambda T, g, x: T.ops.aten.softplus_backward(g, x, 2.0, 3.0), "forward"),
    "aten.softmax_backward": ("gu", lambda T, g, y: T.ops.aten._softmax_backward_data(g, y, 0, y.dtype), "forward"),
    "aten.log_softmax_backward": ("gn", lambda T, g, y: T.ops.aten._log_softmax_backward_data(g, -abs(y), 0, y.dtype),
                                  "forward"),
    # one-kernel forwards
    "sigmoid": ("n", lambda T, x: T.sigmoid(x), "forward"),
    "softplus": ("n", lambda T, x: T.nn.functional.softplus(x), "forward"),
    "softplus(2,3)": ("n", lambda T, x: T.nn.functional.softplus(x, 2.0, 3.0), "forward"),
    "silu": ("n", lambda T, x: T.nn.functional.silu(x), "forward"),
    "gelu": ("n", lambda T, x: T.nn.functional.gelu(x), "forward"),
    "gelu(tanh)": ("n", lambda T, x: T.nn.functional.gelu(x, approximate="tanh"), "forward"),
    "elu": ("n", lambda T, x: T.nn.functional.elu(x, 1.3), "forward"),
    "selu": ("n", lambda T, x: T.nn.functional.selu(x), "forward"),
    "celu": ("n", lambda T, x: T.nn.functional.celu(x, 0.7), "forward"),
    "log_sigmoid": ("n", lambda T, x: T.nn.functional.logsigmoid(x), "forward"),
    "hardswish": ("h", lambda T, x: T.nn.functional.hardswish(x), "forward"),
    "hardsigmoid": ("h", lambda T, x: T.nn.functional.hardsigmoid(x), "forward"),
    "lerp(0.3)": ("nn", lambda T, x, y: T.lerp(x, y, 0.3), "forward"),
    "lerp(0.7)": ("nn", lambda T, x, y: T.lerp(x, y, 0.7), "forward"),
    "lerp(tensor)": ("nnw", lambda T, x, y, w: T.lerp(x, y, w), "forward"),
    "addcmul": ("nnn", lambda T, x, y, z: T.addcmul(x, y, z, value=0.3), "forward"),
    "addcdiv": ("nnp", lambda T, x, y, z: T.addcdiv(x, y, z, value=0.3), "forward"),
    "addcmul(0-d tensor2)": ("nn", lambda T, x, y: T.addcmul(x, y, T.tensor(0.7, dtype=x.dtype), value=0.3), "forward"),
    "addcmul(0-d tensors)": ("n", lambda T, x: T.addcmul(x, T.tensor(1.3, dtype=x.dtype), T.tensor(0.7, dtype=x.dtype),
                                                         value=0.3), "forward"),
    "addcmul_backward": ("nnn", lambda T, x, y, z: T.addcmul(x, y, z, value=0.3)),
    "addcdiv_backward": ("nnp", lambda T, x, y, z: T.addcdiv(x, y, z, value=0.3)),
    "add(alpha)": ("nn", lambda T, x, y: T.add(x, y, alpha=0.3), "forward"),
    "sub(alpha)": ("nn", lambda T, x, y: T.sub(x, y, alpha=0.3), "forward"),
    "add(scalar,alpha)": ("n", lambda T, x: T.add(x, 0.7, alpha=0.3), "forward"),
    "sub(scalar,alpha)": ("n", lambda T, x: T.sub(x, 1.3, alpha=0.7), "forward"),
    "mse_loss": ("nn", _loss("mse_loss"), "forward"),
    "l1_loss": ("nn", _loss("l1_loss"), "forward"),
    "smooth_l1_loss(0.7)": ("nn", _loss("smooth_l1_loss", beta=0.7), "forward"),
    "huber_loss(1.7)": ("nn", _loss("huber_loss", delta=1.7), "forward"),
    "bce": ("uu", _loss("binary_cross_entropy"), "forward"),
    "bce_logits": ("nu", _loss("binary_cross_entropy_with_logits"), "forward"),
}


def _optimiser(ctor):
    """Three steps of an optimiser on one parameter, with random gradients: the parameter after each."""
    def run(T, x, g1, g2, g3):
        p = x.detach().clone().requires_grad_(True)
        opt = ctor(T, p)
        out = []
        for g in (g1, g2, g3):
            p.grad = g.detach().clone()
            opt.step()
            out.append(p.detach().clone())
        return T.stack(out)
    return run


OPTIMISERS = {
    "SGD": lambda T, p: T.optim.SGD([p], lr=0.1),
    "SGD(momentum,wd)": lambda T, p: T.optim.SGD([p], lr=0.1, momentum=0.9, weight_decay=0.01),
    "SGD(dampening)": lambda T, p: T.optim.SGD([p], lr=0.1, momentum=0.9, dampening=0.3),
    "SGD(nesterov)": lambda T, p: T.optim.SGD([p], lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01),
    "Adam": lambda T, p: T.optim.Adam([p], lr=0.01),
    "Adam(wd,amsgrad)": lambda T, p: T.optim.Adam([p], lr=0.01, weight_decay=0.1, amsgrad=True),
    "AdamW": lambda T, p: T.optim.AdamW([p], lr=0.01),
    "RMSprop": lambda T, p: T.optim.RMSprop([p], lr=0.01),
    "RMSprop(centered,momentum)": lambda T, p: T.optim.RMSprop([p], lr=0.01, momentum=0.9, centered=True),
    "Adagrad": lambda T, p: T.optim.Adagrad([p], lr=0.1, weight_decay=0.01),
    "Adamax(wd)": lambda T, p: T.optim.Adamax([p], lr=0.01, weight_decay=0.01),
    "NAdam(wd)": lambda T, p: T.optim.NAdam([p], lr=0.01, weight_decay=0.01),
    "NAdam(decoupled)": lambda T, p: T.optim.NAdam([p], lr=0.01, weight_decay=0.1, decoupled_weight_decay=True),
    "RAdam(betas)": lambda T, p: T.optim.RAdam([p], lr=0.01, betas=(0.5, 0.6), weight_decay=0.01),
    "Adadelta": lambda T, p: T.optim.Adadelta([p], lr=1.0, weight_decay=0.01),
    "Rprop": lambda T, p: T.optim.Rprop([p], lr=0.01),
    "ASGD(t0)": lambda T, p: T.optim.ASGD([p], lr=0.01, t0=1, weight_decay=0.01),
}
for _name, _ctor in OPTIMISERS.items():
    CASES["optim " + _name] = ("nggg", _optimiser(_ctor), "optim")


def spec(name):
    entry = CASES[name]
    return entry[0], entry[1], (entry[2] if len(entry) > 2 else "backward")


# ------------------------------------------------------------------------------------------ drawing

def draw(names, sizes, dtypes=("float32", "float64")) -> dict:
    """Every case's inputs, keyed 'name|dtype|size|layout|i' (size 0: a 0-d tensor; strided: twice as
    long, the case uses every other element)."""
    arrays = {}
    for name in names:
        k = zlib.crc32(name.encode())       # the case's own stream, whichever cases run with it
        domains, _, kind = spec(name)
        if kind == "backward":
            domains += "g"
        for dtype in dtypes:
            for size in sizes:
                for layout in ("c", "s") if size > 1 else ("c",):
                    rng = np.random.default_rng([k, size, layout == "s", dtype == "float64"])
                    n = max(size, 1) * (2 if layout == "s" else 1)
                    for i, d in enumerate(domains):
                        a = _draw(rng, d, n, dtype)
                        arrays[f"{name}|{dtype}|{size}|{layout}|{i}"] = a.reshape(()) if size == 0 else a
    return arrays


def groups(arrays: dict) -> dict:
    """'name|dtype|size|layout' -> its inputs in order."""
    out: dict = {}
    for key in sorted(arrays, key=lambda k: int(k.rsplit("|", 1)[1])):
        out.setdefault(key.rsplit("|", 1)[0], []).append(arrays[key])
    return out


def run_side(T, leaf, to_numpy, arrays: dict) -> dict:
    """Each case on one side: leaf(array, strided) makes an input tensor; returns 'key|k' -> result k."""
    results = {}
    for key, inputs in groups(arrays).items():
        name, _, size, layout = key.split("|")
        domains, fn, kind = spec(name)
        strided = layout == "s"
        try:
            if kind == "backward":
                *xs, g = inputs
                ts = [leaf(a, strided, True) for a in xs]
                out = fn(T, *ts)
                grad = leaf(g, strided, False)
                for t in ts:
                    if t.grad_fn is not None:       # a strided view: keep its own gradient
                        t.retain_grad()
                out.backward(grad if out.dim() == grad.dim() else grad.reshape(-1)[0])   # a mean loss: 0-d
                for k, t in enumerate(ts):
                    results[f"{key}|{k}"] = to_numpy(t.grad)
            else:
                ts = [leaf(a, strided, False) for a in inputs]
                results[f"{key}|0"] = to_numpy(fn(T, *ts))
        except Exception as e:          # a case a side refuses: recorded, reported as a difference
            results[f"{key}|error"] = np.array(f"{type(e).__name__}: {e}")
    return results


# ---------------------------------------------------------------------------------------- the sides

def torch_side(inp: str, out: str) -> None:
    import torch
    torch.manual_seed(0)
    if os.environ.get("FUSED_BITS_MKL_SQRT") != "1":
        # PyTorch's float32 sqrt (MKL's vsSqrt) is not correctly rounded, gradcli's is: the optimiser cases
        # compare the update order with a correctly rounded sqrt on both sides (--mkl-sqrt: as shipped)
        def sqrt(t):
            return torch.from_numpy(np.asarray(np.sqrt(t.detach().numpy())))
        torch.Tensor.sqrt = sqrt
        torch.Tensor.sqrt_ = lambda t: t.copy_(sqrt(t))

    def leaf(a, strided, grad):
        t = torch.from_numpy(a.copy())
        if grad:
            t.requires_grad_(True)
        return t[::2] if strided else t

    def to_numpy(t):
        return t.detach().numpy().copy()

    arrays = dict(np.load(inp))
    np.savez(out, **run_side(torch, leaf, to_numpy, arrays))


class _Aten:
    """torch.ops.aten's backward kernels, as gradcli's engine computes them on arrays."""

    def __getattr__(self, name):
        from gradcli.engine.backmath import NUMPY
        from gradcli.engine.ops import elementwise, nn
        from gradcli.engine.tensor import Tensor
        if name.endswith("softmax_backward_data"):
            kernel = nn.softmax_backward_value if name == "_softmax_backward_data" else nn.log_softmax_backward_value
            return lambda g, y, dim, dtype: Tensor(kernel(NUMPY, g._a, y._a, (dim,) if y._a.ndim else ()))
        kernel = getattr(elementwise, name + "_array")
        if name == "elu_backward":
            return lambda g, alpha, scale, input_scale, is_result, x: Tensor(kernel(g._a, alpha, scale, input_scale,
                                                                                    is_result, x._a))
        if name == "gelu_backward":
            return lambda g, x, approximate="none": Tensor(kernel(g._a, x._a, approximate))
        return lambda *args: Tensor(kernel(*(a._a if isinstance(a, Tensor) else a for a in args)))


class _Namespace:
    """gradcli's `torch` module as scripts see it, with attribute access (a ScriptModule is a table)."""

    def __init__(self, module):
        self._module = module

    def __getattr__(self, name):
        value = self._module.members[name]
        from gradcli.language.stdlib import ScriptModule
        return _Namespace(value) if isinstance(value, ScriptModule) else value


def gradcli_side(arrays: dict) -> dict:
    # FUSED_BITS_GRADCLI=DIR measures another checkout's engine (a before/after table)
    sys.path.insert(0, os.environ.get("FUSED_BITS_GRADCLI", str(ROOT)))
    from gradcli.engine.tensor import Tensor
    from gradcli.language.stdlib import TORCH
    T = _Namespace(TORCH)
    T.ops = argparse.Namespace(aten=_Aten())

    def leaf(a, strided, grad):
        t = Tensor(a.copy())
        if grad:
            t.requires_grad_(True)
        return t[::2] if strided else t

    def to_numpy(t):
        return np.array(t.detach()._a)

    with np.errstate(all="ignore"):
        return run_side(T, leaf, to_numpy, arrays)


def oracle(arrays: dict, capability: str | None) -> dict:
    with tempfile.TemporaryDirectory(prefix="i17-fused-") as tmp:
        inp, out = os.path.join(tmp, "in.npz"), os.path.join(tmp, "out.npz")
        np.savez(inp, **arrays)
        env = dict(os.environ)
        if capability:
            env["ATEN_CPU_CAPABILITY"] = capability
        subprocess.run([ORACLE, __file__, "--side", "torch", inp, out], check=True, env=env)
        return dict(np.load(out))


# ------------------------------------------------------------------------------------------ compare

def same_bits(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Elementwise: equal bits, or both NaN."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return np.zeros(max(a.size, 1), bool)
    a, b = a.reshape(-1), b.reshape(-1)
    width = {4: np.uint32, 8: np.uint64}[a.itemsize]
    return (a.view(width) == b.view(width)) | (np.isnan(a) & np.isnan(b))


def compare(ours: dict, theirs: dict) -> dict:
    """name -> dtype -> [identical, total, {(size, layout): (identical, total)}]."""
    table: dict = {}
    for key in sorted(theirs):
        if key.endswith("|error"):
            continue
        name, dtype, size, layout, _ = key.split("|")
        row = table.setdefault(name, {}).setdefault(dtype, [0, 0, {}])
        mine = ours.get(key)
        if mine is None:
            same = np.zeros(max(theirs[key].size, 1), bool)
        else:
            same = same_bits(mine, theirs[key])
        row[0] += int(same.sum())
        row[1] += same.size
        cell = row[2].setdefault((int(size), layout), [0, 0])
        cell[0] += int(same.sum())
        cell[1] += same.size
    return table


def _where(cells: dict) -> str:
    """The (size, layout) cells that differ, briefly: 7s = 7 elements strided."""
    bad = [f"{'0-d' if s == 0 else s}{'s' if lay == 's' else ''}" for (s, lay), (ok, n) in sorted(cells.items())
           if ok != n]
    return " ".join(bad[:10]) + (" ..." if len(bad) > 10 else "")


def report(table: dict, errors: list) -> None:
    print(f"{'kernel':30} {'float32':>9} {'float64':>9}  differing cells, float32 | float64 (7s: 7 strided)")
    for name in CASES:
        if name not in table:
            continue
        shares, where = [], []
        for dtype in ("float32", "float64"):
            ok, n, per = table[name].get(dtype, [0, 0, {}])
            shares.append("-" if n == 0 else f"{100.0 * ok / n:.3f}%")
            where.append(_where(per))
        cells = " | ".join(where) if any(where) else ""
        print(f"{name:30} {shares[0]:>9} {shares[1]:>9}  {cells}")
    for e in errors:
        print("error:", e)


def golden_names() -> list:
    return [n for n in CASES if n.startswith(EXACT_PREFIXES) and n not in MISSING]


def digest(a) -> str:
    a = np.asarray(a)
    return hashlib.sha256(f"{a.dtype}{a.shape}".encode() + np.ascontiguousarray(a).tobytes()).hexdigest()[:12]


def inputs_digest(arrays: dict) -> str:
    """One digest of every input, in key order: a change in numpy's random streams shows as changed inputs,
    not as wrong kernels."""
    return digest(np.concatenate([np.ravel(arrays[k]).astype(np.float64) for k in sorted(arrays)]))


def write_golden(arrays: dict, theirs: dict) -> None:
    """The oracle's results as digests, one line per result. Softmax backward rows are kept below 5
    elements, where the row sum's order is the plain one (longer rows are the reduction work's)."""
    lines = []
    for key, value in sorted(theirs.items()):
        name, dtype, size, layout, k = key.split("|")
        if k != "error" and not ("softmax" in name and int(size) >= 5):
            lines.append(f"{json.dumps(key)}: {json.dumps(digest(value))}")
    GOLDEN.write_text(f'{{"sizes": {json.dumps(list(GOLDEN_SIZES))}, "inputs": "{inputs_digest(arrays)}",\n'
                      '"results": {\n' + ",\n".join(lines) + "\n}}\n")
    print(f"{len(lines)} results written to {GOLDEN}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--side", help=argparse.SUPPRESS)
    parser.add_argument("files", nargs="*", help=argparse.SUPPRESS)
    parser.add_argument("--only", help="comma-separated case names (prefixes)")
    parser.add_argument("--sizes", help="comma-separated sizes (0 = 0-d)")
    parser.add_argument("--capability", help="ATEN_CPU_CAPABILITY for the oracle (avx2, default, avx512)")
    parser.add_argument("--versus", help="compare the oracle with itself under this capability instead of gradcli")
    parser.add_argument("--mkl-sqrt", action="store_true", help="leave the oracle's own (MKL) float32 sqrt")
    parser.add_argument("--write-golden", action="store_true",
                        help=f"write {GOLDEN.relative_to(ROOT)} (digests of the exact kernels' results) for the suite")
    args = parser.parse_args()
    if args.side == "torch":
        torch_side(*args.files)
        return
    names = golden_names() if args.write_golden else list(CASES)
    if args.only:
        prefixes = args.only.split(",")
        names = [n for n in names if any(n.startswith(p) for p in prefixes)]
    sizes = GOLDEN_SIZES if args.write_golden else SIZES
    if args.sizes:
        sizes = tuple(int(s) for s in args.sizes.split(","))
    arrays = draw(names, sizes)
    if args.mkl_sqrt:
        os.environ["FUSED_BITS_MKL_SQRT"] = "1"
    theirs = oracle(arrays, args.capability)
    if args.write_golden:
        write_golden(arrays, theirs)
        return
    ours = oracle(arrays, args.versus) if args.versus else gradcli_side(arrays)
    errors = sorted({f"{k.split('|')[0]}: torch {theirs[k]}" for k in theirs if k.endswith("|error")} |
                    {f"{k.split('|')[0]}: ours {ours[k]}" for k in ours if k.endswith("|error")})
    report(compare(ours, theirs), errors)


if __name__ == "__main__":
    main()
