#!/usr/bin/env python3
"""Count how many results of gradcli's reductions (other than plain sum/mean) are bit-identical to PyTorch's.

    .venv/bin/python tools/reduce_bits.py [--python /work/oracle/bin/python] [--quick] [--only prod,var]
    .venv/bin/python tools/reduce_bits.py --write      # regenerate tests/reduce_bits.json (small cases)

For every reduction (prod, cumsum, cumprod, var/std, the vector norms and clip_grad_norm_'s total,
logsumexp, softmax/log_softmax forward and backward, cross_entropy/nll_loss, kl_div and the elementwise
losses' reductions), float32 and float64, contiguous and strided, along each dim and over all of them, on
inputs of many sizes (1 to 10^5), the tool runs PyTorch 2.13 in a child process (the oracle Python, which
imports only torch and numpy from this file) and gradcli's engine here, and prints per op the share of
output elements whose bits agree.

Float32 exp and log in PyTorch come from its vector math library, not correctly rounded; gradcli rounds
them correctly (docs/numerics.md, "Reductions other than sum"). For softmax, log_softmax and logsumexp the tool therefore also prints
the share among cases where the oracle's own exp/log rounds as the correctly rounded one on every element
the kernel takes it of ("cr-exp cases"): there the order of the reduction alone decides the bits.

The inputs come from numpy's PCG64 generator with a fixed seed per case, the same numbers on any machine,
so tests/reduce_bits.json keeps only each case and the SHA-256 digest of PyTorch's result.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "reduce_bits.json"

# op -> how its input is drawn: "normal" (standard normal), "near1" (1 + small normal: products stay finite),
# "logits" (normal * 3), "prob" (a probability in (0, 1))
OPS = {
    "prod": "near1", "prod_dim": "near1", "cumsum": "normal", "cumprod": "near1",
    "var": "normal", "std": "normal", "var_dim": "normal", "std_dim": "normal",
    "norm2": "normal", "norm1": "normal", "norm_inf": "normal", "norm_ninf": "normal", "norm0": "normal",
    "norm3": "normal", "norm_half": "normal", "norm2_dim": "normal", "norm1_dim": "normal",
    "norm3_dim": "normal", "tensor_norm_dim": "normal", "clip_total": "normal",
    "logsumexp": "logits", "softmax": "logits", "log_softmax": "logits",
    "softmax_back": "logits", "log_softmax_back": "logits",
    "cross_entropy": "logits", "cross_entropy_sum": "logits", "cross_entropy_back": "logits",
    "nll_loss": "logits", "kl_div": "prob", "mse": "normal", "l1": "normal", "smooth_l1": "normal",
    "huber": "normal", "bce": "prob", "mse_sum": "normal",
}
# ops whose result goes through a float32 exp or log of PyTorch's vector math library
EXP_OPS = {"logsumexp", "softmax", "log_softmax", "softmax_back", "log_softmax_back", "cross_entropy",
           "cross_entropy_sum", "cross_entropy_back"}
DIM_OPS = {"prod_dim", "cumsum", "cumprod", "var_dim", "std_dim", "norm2_dim", "norm1_dim", "norm3_dim",
           "tensor_norm_dim", "logsumexp", "softmax", "log_softmax", "softmax_back", "log_softmax_back"}
LOSS_OPS = {"cross_entropy", "cross_entropy_sum", "cross_entropy_back", "nll_loss"}


def draw(case) -> np.ndarray:
    """The case's input, in its layout: 'c' contiguous, 't' the transpose of a contiguous array (strided)."""
    rng = np.random.default_rng(case["seed"])
    shape = tuple(case["shape"])
    stored = shape[::-1] if case["layout"] == "t" else shape
    kind = OPS[case["op"]]
    x = rng.standard_normal(stored)
    if kind == "near1":
        x = 1.0 + x * 0.02
    elif kind == "logits":
        x = x * 3.0
    elif kind == "prob":
        x = 1.0 / (1.0 + np.exp(-x))
    x = x.astype(case["dtype"])
    return x.T if case["layout"] == "t" else x


def second(case, shape) -> np.ndarray:
    """A second operand (target, incoming gradient) of `shape`, contiguous."""
    rng = np.random.default_rng(case["seed"] + 7_000_000)
    if case["op"] in ("kl_div", "bce"):
        return (1.0 / (1.0 + np.exp(-rng.standard_normal(shape)))).astype(case["dtype"])
    return rng.standard_normal(shape).astype(case["dtype"])


def targets(case, n: int, classes: int) -> np.ndarray:
    return np.random.default_rng(case["seed"] + 9_000_000).integers(0, classes, n)


def cases(quick: bool = False, only=None, tiny: bool = False) -> list:
    """Sizes 1..64 one by one, then a spread to 5000 and a few to 10^5, 1-d and 2-d, both layouts."""
    sizes = list(range(1, 65)) + [65, 71, 96, 100, 127, 128, 129, 255, 256, 257, 500, 1000, 1023, 2047, 3000,
                                    4096, 4999, 5000]
    big = [10_000, 32_768, 32_769, 65_537, 100_000]
    matrices = ((3, 5), (5, 3), (7, 33), (33, 7), (64, 10), (128, 100), (10, 64), (100, 128), (2, 1000),
                (1000, 2), (17, 300), (300, 17), (50, 2000), (4, 40_000))
    if quick:
        sizes = [1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 257, 1000]
        big = [40_000]
    if tiny:
        sizes, big = [1, 2, 3, 5, 8, 15, 16, 17, 33, 100, 1000], []
        matrices = ((3, 5), (5, 3), (33, 7), (64, 10), (128, 100), (300, 17))
    out = []
    seed = 0
    for op in OPS:
        if only and op not in only:
            continue
        for dtype in ("float32", "float64"):
            shapes = []
            if op in LOSS_OPS:
                for b in ((1, 3, 17, 64, 128) if tiny else (1, 2, 3, 5, 8, 16, 17, 64, 100, 128, 1000)):
                    shapes += [((b, c), 1) for c in (2, 3, 10, 100)]
            else:
                shapes += [((n,), 0) for n in sizes + big]
                for r, c in matrices:
                    shapes += [((r, c), 1), ((r, c), 0)] if op in DIM_OPS else [((r, c), None)]
                shapes += [((3, 4, 5), 1), ((4, 9, 17), 0), ((4, 9, 17), 2)] if op in DIM_OPS else [
                    ((4, 9, 17), None)]
            for shape, dim in shapes:
                for layout in ("c", "t"):
                    if layout == "t" and (len(shape) == 1 or op in LOSS_OPS):
                        continue
                    seed += 1
                    out.append({"op": op, "dtype": dtype, "shape": list(shape), "dim": dim, "layout": layout,
                                "seed": seed})
    return out


def digest(a) -> str:
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()[:20]


# ------------------------------------------------------------------------------------- the oracle side

def torch_result(case):
    import torch
    import torch.nn.functional as F
    x = torch.from_numpy(draw(case))
    op, d = case["op"], case["dim"]
    if op == "prod":
        return x.prod()
    if op == "prod_dim":
        return x.prod(d)
    if op == "cumsum":
        return x.cumsum(d)
    if op == "cumprod":
        return x.cumprod(d)
    if op in ("var", "std", "var_dim", "std_dim"):
        fn = torch.var if op.startswith("var") else torch.std
        return fn(x, correction=case["seed"] % 2) if d is None or op in ("var", "std") else fn(
            x, d, correction=case["seed"] % 2)
    norms = {"norm2": 2, "norm1": 1, "norm_inf": float("inf"), "norm_ninf": float("-inf"), "norm0": 0,
             "norm3": 3, "norm_half": 0.5, "norm2_dim": 2, "norm1_dim": 1, "norm3_dim": 3}
    if op in norms:
        return torch.linalg.vector_norm(x, norms[op], dim=d if op.endswith("_dim") else None)
    if op == "tensor_norm_dim":
        return x.norm(dim=d)
    if op == "clip_total":
        parts = [p for p in torch.split(x.reshape(-1), max(1, x.numel() // 3))]
        return torch.nn.utils.get_total_norm(parts, 2.0)
    if op == "logsumexp":
        return torch.logsumexp(x, d)
    if op in ("softmax", "log_softmax"):
        return getattr(torch, op)(x, d)
    if op in ("softmax_back", "log_softmax_back"):
        x.requires_grad_()
        y = getattr(torch, op[:-5])(x, d)
        y.backward(torch.from_numpy(second(case, tuple(y.shape))))
        return x.grad
    if op in LOSS_OPS:
        t = torch.from_numpy(targets(case, x.shape[0], x.shape[1]))
        if op == "nll_loss":
            return F.nll_loss(x, t)
        if op == "cross_entropy_back":
            x.requires_grad_()
            F.cross_entropy(x, t).backward()
            return x.grad
        return F.cross_entropy(x, t, reduction="sum" if op.endswith("sum") else "mean")
    y = torch.from_numpy(second(case, tuple(x.shape)))
    if op == "kl_div":
        return F.kl_div(x.log(), y, reduction="batchmean")
    fn = {"mse": F.mse_loss, "mse_sum": F.mse_loss, "l1": F.l1_loss, "smooth_l1": F.smooth_l1_loss,
          "huber": F.huber_loss, "bce": F.binary_cross_entropy}[op]
    return fn(x, y, reduction="sum" if op.endswith("sum") else "mean")


def kernel_exp(z: np.ndarray) -> np.ndarray:
    """The exp of PyTorch's softmax kernels (Vectorized<float or double>::exp, SLEEF), read back through
    _log_softmax_backward_data: in a row whose gradient is 1 at a first element of output 0 and 0
    elsewhere, the row sum is 1 and every other element's result is 0 - exp(output) * 1."""
    import torch
    flat = z.reshape(-1)
    m = -(-flat.size // 16)
    y = np.zeros((m, 17), z.dtype)
    y[:, 1:].reshape(-1)[:flat.size] = flat
    g = np.zeros_like(y)
    g[:, 0] = 1
    t = torch.from_numpy(y)
    out = torch._log_softmax_backward_data(torch.from_numpy(g), t, 1, t.dtype).numpy()
    return (-out[:, 1:]).reshape(-1)[:flat.size].reshape(z.shape)


def libm_exp(z: np.ndarray) -> np.ndarray:
    """std::exp of the C library (expf for float32), element by element."""
    import ctypes
    libm = ctypes.CDLL("libm.so.6")
    fn = libm.expf if z.dtype == np.float32 else libm.exp
    ctype = ctypes.c_float if z.dtype == np.float32 else ctypes.c_double
    fn.restype, fn.argtypes = ctype, [ctype]
    return np.array([fn(float(v)) for v in z.reshape(-1)], dtype=z.dtype).reshape(z.shape)


def exp_rounds_correctly(case) -> bool:
    """Whether PyTorch's float32 exp rounds as the correctly rounded one on every value x - max(x) the op's
    kernel takes it of (the kernel's own exp for softmax and log_softmax; torch.exp, which logsumexp calls,
    for logsumexp), and where a log of the row sums follows, that it rounds correctly too (float32 only for
    log_softmax and cross_entropy)."""
    import torch
    x = draw(case)
    d = case["dim"] if case["op"] not in LOSS_OPS else 1
    z = x - x.max(axis=d, keepdims=True)
    mine = np.exp(z.astype(np.float64)).astype(z.dtype)
    if not np.array_equal(mine, torch.exp(torch.from_numpy(z)).numpy() if case["op"] == "logsumexp" else kernel_exp(z)):
        return False
    if case["op"] not in LOSS_OPS and d != x.ndim - 1 and not np.array_equal(mine, libm_exp(z)):
        return False        # the non-last-dim kernels' scalar tails call the C library's exp
    if case["op"] in ("softmax", "softmax_back"):
        return True
    if case["op"] != "logsumexp":
        # the vector log of log_softmax cannot be read back alone; its float32 results have agreed with
        # the correctly rounded log on every case measured, its float64 ones (SLEEF's) not always
        return case["dtype"] == "float32"
    s = np.atleast_1d(mine.sum(axis=d))
    return np.array_equal(np.log(s.astype(np.float64)).astype(s.dtype), torch.log(torch.from_numpy(s)).numpy())


def oracle_main(case_file: str, out_file: str):
    import warnings
    import torch
    warnings.simplefilter("ignore")
    torch.set_num_threads(2)
    todo = json.loads(Path(case_file).read_text())
    results = {}
    for i, case in enumerate(todo):
        r = torch_result(case)
        results[f"r{i}"] = r.detach().numpy()
        results[f"e{i}"] = np.asarray(case["op"] not in EXP_OPS or exp_rounds_correctly(case))
    np.savez(out_file, **results)


# ------------------------------------------------------------------------------------- gradcli's side

def gradcli_result(case) -> np.ndarray:
    from gradcli.engine import clipgrad, ops
    from gradcli.engine.tensor import Tensor
    x = Tensor(draw(case))
    op, d = case["op"], case["dim"]
    if op == "prod":
        return ops.prod(x)._a
    if op == "prod_dim":
        return ops.prod(x, d)._a
    if op == "cumsum":
        return ops.cumsum(x, d)._a
    if op == "cumprod":
        return ops.cumprod(x, d)._a
    if op in ("var", "std", "var_dim", "std_dim"):
        fn = ops.var if op.startswith("var") else ops.std
        if d is None or op in ("var", "std"):
            return fn(x, correction=case["seed"] % 2)._a
        return fn(x, d, correction=case["seed"] % 2)._a
    norms = {"norm2": 2, "norm1": 1, "norm_inf": float("inf"), "norm_ninf": float("-inf"), "norm0": 0,
             "norm3": 3, "norm_half": 0.5, "norm2_dim": 2, "norm1_dim": 1, "norm3_dim": 3}
    if op in norms:
        return ops.vector_norm(x, norms[op], d if op.endswith("_dim") else None)._a
    if op == "tensor_norm_dim":
        return ops.norm(x, dim=d)._a
    if op == "clip_total":
        flat = draw(case).reshape(-1)
        step = max(1, flat.size // 3)
        parts = [Tensor(flat[i:i + step]) for i in range(0, flat.size, step)]
        return clipgrad.get_total_norm(parts, 2.0)._a
    if op == "logsumexp":
        return ops.logsumexp(x, d)._a
    if op in ("softmax", "log_softmax"):
        return getattr(ops, op)(x, d)._a
    if op in ("softmax_back", "log_softmax_back"):
        x.requires_grad = True
        y = getattr(ops, op[:-5])(x, d)
        y.backward(Tensor(second(case, y._a.shape)))
        return x.grad._a
    if op in LOSS_OPS:
        t = Tensor(targets(case, x._a.shape[0], x._a.shape[1]))
        if op == "nll_loss":
            return ops.nll_loss(x, t)._a
        if op == "cross_entropy_back":
            x.requires_grad = True
            ops.cross_entropy(x, t).backward()
            return x.grad._a
        return ops.cross_entropy(x, t, reduction="sum" if op.endswith("sum") else "mean")._a
    y = Tensor(second(case, x._a.shape))
    if op == "kl_div":
        return ops.kl_div(ops.log(x), y, reduction="batchmean")._a
    fn = {"mse": ops.mse_loss, "mse_sum": ops.mse_loss, "l1": ops.l1_loss, "smooth_l1": ops.smooth_l1_loss,
          "huber": ops.huber_loss, "bce": ops.binary_cross_entropy}[op]
    return fn(x, y, reduction="sum" if op.endswith("sum") else "mean")._a


def run_oracle(todo: list, python: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="i17-reduce-") as tmp:
        case_file, out_file = Path(tmp) / "cases.json", Path(tmp) / "out.npz"
        case_file.write_text(json.dumps(todo))
        subprocess.run([python, __file__, "--oracle-side", str(case_file), str(out_file)], check=True)
        with np.load(out_file) as z:
            return {k: z[k] for k in z.files}


def bits_equal(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Elementwise: the same bits (NaNs of the same payload included)."""
    kind = np.uint32 if a.dtype == np.float32 else np.uint64
    return np.ascontiguousarray(a).view(kind) == np.ascontiguousarray(b).view(kind)


def compare(todo: list, oracle: dict, verbose: bool = False):
    """Per op: (matching elements, elements, matching cases, cases, cr-exp matching elements, cr-exp elements)."""
    from gradcli.engine.state import STATE
    table = {}
    with STATE.isolated():
        np.seterr(all="ignore")
        for i, case in enumerate(todo):
            want = oracle[f"r{i}"]
            got = np.asarray(gradcli_result(case))
            same = got.shape == want.shape and got.dtype == want.dtype
            eq = bits_equal(got, want) if same else np.zeros(want.shape, bool)
            if verbose and not eq.all():
                print("differs:", {k: case[k] for k in ("op", "dtype", "shape", "dim", "layout", "seed")},
                      f"{int(eq.sum())}/{eq.size}")
            row = table.setdefault(f'{case["op"]} {case["dtype"][5:]}', [0] * 6)
            row[0] += int(eq.sum())
            row[1] += eq.size
            row[2] += int(eq.all())
            row[3] += 1
            if bool(oracle[f"e{i}"]):
                row[4] += int(eq.sum())
                row[5] += eq.size
    return table


def print_table(table: dict):
    print(f"{'op, float bits':20} {'elements':>22} {'cases':>14} {'cr-exp elements':>22}")
    for op, (m, n, cm, cn, em, en) in table.items():
        share = f"{m}/{n} {100 * m / max(n, 1):6.2f}%"
        cr = f"{em}/{en} {100 * em / max(en, 1):6.2f}%" if op.split()[0] in EXP_OPS else ""
        print(f"{op:20} {share:>22} {f'{cm}/{cn}':>14} {cr:>22}")


# the ops whose every case tests/test_reduce_numerics.py holds to PyTorch's bits (the softmax family where
# PyTorch's own exp rounds correctly; not norm3_dim, whose float32 powf is not always the correctly rounded pow)
COMMITTED = ("cumsum", "cumprod", "var", "std", "var_dim", "std_dim", "softmax", "log_softmax", "softmax_back",
             "cross_entropy", "cross_entropy_sum", "nll_loss", "norm2", "norm1", "norm_inf", "norm_ninf", "norm0",
             "norm3", "norm_half", "norm2_dim", "norm1_dim", "tensor_norm_dim", "clip_total", "prod", "prod_dim",
             "mse", "mse_sum", "smooth_l1", "huber", "logsumexp")


def small_cases() -> list:
    """The committed subset: the ops above, both dtypes and layouts, a few sizes each."""
    return cases(only=set(COMMITTED), tiny=True)


def write(python: str):
    todo = small_cases()
    oracle = run_oracle(todo, python)
    kept = []
    for i, case in enumerate(todo):
        case = dict(case, out=digest(oracle[f"r{i}"]), exact=bool(oracle[f"e{i}"]))
        kept.append(case)
    DATA.write_text(json.dumps(kept, separators=(",", ":")) + "\n")
    print(f"wrote {len(kept)} cases to {DATA.relative_to(ROOT)}")


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--oracle-side":
        oracle_main(sys.argv[2], sys.argv[3])
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default="/work/oracle/bin/python")
    parser.add_argument("--quick", action="store_true", help="fewer sizes")
    parser.add_argument("--only", help="comma-separated ops")
    parser.add_argument("--verbose", action="store_true", help="list the cases that differ")
    parser.add_argument("--write", action="store_true", help=f"regenerate {DATA.relative_to(ROOT)}")
    args = parser.parse_args()
    if args.write:
        write(args.python)
        return
    sys.path.insert(0, str(ROOT))
    todo = cases(args.quick, set(args.only.split(",")) if args.only else None)
    print_table(compare(todo, run_oracle(todo, args.python), args.verbose))


if __name__ == "__main__":
    main()
