"""gradcli.engine.elementary: float32 elementary functions computed in float64 and rounded once, everywhere the
engine uses them, with PyTorch's signed zeros, infinities and nans (tests/elementary_edges.json, written by
tools/elementary_bits.py --edges from PyTorch 2.13 and mpmath)."""

import json
import math
from pathlib import Path

import numpy as np
import pytest

from gradcli.engine import backmath, elementary, ops
from gradcli.engine.tensor import Tensor

EDGES = json.loads((Path(__file__).parent / "elementary_edges.json").read_text())
F32, F64 = np.float32, np.float64

# gradcli's function by name: (its float64 function, a range of inputs)
UNARY = {
    "exp": (np.exp, (-20, 20)), "expm1": (np.expm1, (-5, 5)), "exp2": (np.exp2, (-30, 30)),
    "log": (np.log, (0, 50)), "log1p": (np.log1p, (-0.9, 50)), "log2": (np.log2, (0, 50)),
    "log10": (np.log10, (0, 50)), "sin": (np.sin, (-20, 20)), "cos": (np.cos, (-20, 20)),
    "tan": (np.tan, (-1.5, 1.5)), "asin": (np.arcsin, (-1, 1)), "acos": (np.arccos, (-1, 1)),
    "atan": (np.arctan, (-20, 20)), "sinh": (np.sinh, (-10, 10)), "cosh": (np.cosh, (-10, 10)),
    "tanh": (np.tanh, (-5, 5)),
}
SIZES = (1, 7, 100, 9000)          # 9000: past elementary._CHUNKED, the ufunc's chunked float64 loop
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")    # as a session: inf and nan silently


def _inputs(lo, hi, n, dtype=F32, seed=0):
    return np.random.default_rng(seed).uniform(lo, hi, n).astype(dtype)


def _bits_equal(a, b):
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    same = (a.view(np.uint8).reshape(a.shape + (-1,)) == b.view(np.uint8).reshape(b.shape + (-1,))).all(-1)
    return bool((same | (np.isnan(a) & np.isnan(b))).all())


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("n", SIZES)
def test_float32_is_float64_rounded_once(name, n):
    """Bit for bit float64-then-round; numpy's own float32 kernels would fail this for every function here."""
    f64, (lo, hi) = UNARY[name]
    x = _inputs(lo, hi, n)
    expected = f64(x.astype(F64)).astype(F32)
    assert _bits_equal(getattr(elementary, name)(x), expected)
    strided = _inputs(lo, hi, 2 * n, seed=1)[::2]
    assert _bits_equal(getattr(elementary, name)(strided), f64(strided.astype(F64)).astype(F32))


@pytest.mark.parametrize("name", UNARY)
def test_numpy_float32_kernels_differ(name):
    """The test above can tell: on 3000 inputs numpy's float32 kernel differs from float64-then-round."""
    f64, (lo, hi) = UNARY[name]
    x = _inputs(lo, hi, 3000)
    assert not _bits_equal(f64(x), f64(x.astype(F64)).astype(F32))


@pytest.mark.parametrize("name", UNARY)
def test_float16_rounds_once_and_float64_is_numpy(name):
    f64, (lo, hi) = UNARY[name]
    h = _inputs(max(lo, -8), min(hi, 8), 500, np.float16)
    assert _bits_equal(getattr(elementary, name)(h), f64(h.astype(F64)).astype(np.float16))
    d = _inputs(lo, hi, 500, F64)
    assert _bits_equal(getattr(elementary, name)(d), f64(d))


@pytest.mark.parametrize("layout", ["C", "F", "strided", "in place"])
def test_large_arrays_in_every_layout(layout):
    """Past _CHUNKED elements: float64 blocks for C- and F-contiguous arrays, the ufunc's loop otherwise."""
    x = _inputs(-5, 5, 2 * 300 * 101).reshape(600, 101)
    x = {"C": x[:300], "F": x[:300].T, "strided": x[::2], "in place": x[:300].copy()}[layout]
    expected = np.exp(x.astype(F64)).astype(F32)
    out = elementary.exp(x, out=x) if layout == "in place" else elementary.exp(x)
    assert _bits_equal(out, expected) and (out.strides == x.strides or layout == "strided")


def test_zero_dim_and_out():
    x = np.array(F32(0.7))
    assert elementary.exp(x) == F32(math.exp(F64(F32(0.7))))
    out = np.empty(3000, F32)
    x = _inputs(-3, 3, 3000)
    assert elementary.tanh(x, out=out) is out and _bits_equal(out, np.tanh(x.astype(F64)).astype(F32))


def test_binary_atan2_and_pow():
    y, x = _inputs(-5, 5, 4000, seed=2), _inputs(-5, 5, 4000, seed=3)
    assert _bits_equal(elementary.atan2(y, x), np.arctan2(y.astype(F64), x.astype(F64)).astype(F32))
    base, e = _inputs(0, 10, 4000), _inputs(-3, 3, 4000, seed=4)
    assert _bits_equal(elementary.pow(base, e), np.power(base.astype(F64), e.astype(F64)).astype(F32))
    assert _bits_equal(elementary.pow(base[:5], F32(1.7)), np.power(base[:5].astype(F64), F64(F32(1.7))).astype(F32))
    ints = np.arange(5)
    assert _bits_equal(elementary.pow(ints, np.int64(3)), ints ** 3)


def test_sqrt_and_rsqrt_keep_their_ieee_operations():
    """sqrt is correctly rounded in float32 as it is; rsqrt is PyTorch's 1 / sqrt(x) in float32."""
    x = _inputs(0, 1e6, 5000)
    assert _bits_equal(elementary.sqrt(x), np.sqrt(x.astype(F64)).astype(F32))
    assert _bits_equal(elementary.rsqrt(x), F32(1) / np.sqrt(x))


def test_erf_float16_is_pytorchs_half_kernel_bit_for_bit():
    """float16 erf is PyTorch's Half kernel (its vectorised float approximation, then rounded): every finite float16
    input, against the SHA-256 of PyTorch 2.13's results (tools: torch.from_numpy(all_finite_halves).erf())."""
    import hashlib
    h = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16)
    h = h[np.isfinite(h)]
    out = elementary.erf(h)
    assert out.dtype == np.float16 and len(h) == 63488
    assert hashlib.sha256(out.view(np.uint16).tobytes()).hexdigest() == \
        "41248cb1e64f14ba017c87de654b63fb5a0f84601ecc5f3b4a33d37297f6ee20"
    # the approximation loses small arguments as PyTorch's does: erf(1.19e-7) is 0, not 1.19e-7
    small = elementary.erf(np.array([1.1920928955078125e-07, -0.55517578125, 0.5], np.float16))
    assert small.view(np.uint16).tolist() == [0, 47243, 14378]


@pytest.mark.parametrize("dtype", [F32])
def test_erf_is_math_erf_rounded_once(dtype):
    """The vectorised erf (two polynomials, math.erf near rounding midpoints) rounds as math.erf does."""
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.uniform(-5, 5, 20000), rng.standard_normal(20000),
                        10.0 ** rng.uniform(-40, 0, 2000) * rng.choice((-1, 1), 2000)]).astype(dtype)
    expected = np.array([math.erf(v) for v in x.astype(F64).tolist()]).astype(dtype)
    assert _bits_equal(elementary.erf(x), expected)
    assert _bits_equal(elementary.erf(x[::3]), expected[::3])


def test_erf_float64_and_edges():
    d = np.array([0.3, -2.0, 1e-300])
    assert _bits_equal(elementary.erf(d), np.array([math.erf(v) for v in d]))
    e = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 4.0, -4.0], F32)
    expected = np.array([0.0, -0.0, 1.0, -1.0, np.nan, 1.0, -1.0], F32)
    assert _bits_equal(elementary.erf(e), expected)
    assert _bits_equal(elementary.erf(np.tile(e, 300)), np.tile(expected, 300))     # the vectorised path
    assert np.signbit(elementary.erf(e)[1])
    assert elementary.erf(np.array(F32(0.5))) == F32(math.erf(0.5))


@pytest.mark.parametrize("dtype", [F32, np.float16])
def test_erfc_is_math_erfc_rounded_once(dtype):
    """The vectorised erfc (erf's polynomials, math.erfc from 4 on and near rounding midpoints) rounds as
    math.erfc does, down to float32's subnormals (erfc(10) ~ 2e-45) and up to 2 below -4."""
    rng = np.random.default_rng(6)
    x = np.concatenate([rng.uniform(-12, 12, 20000), rng.standard_normal(20000),
                        10.0 ** rng.uniform(-40, 0, 2000) * rng.choice((-1, 1), 2000)]).astype(dtype)
    expected = np.array([math.erfc(v) for v in x.astype(F64).tolist()]).astype(dtype)
    assert _bits_equal(elementary.erfc(x), expected)
    assert _bits_equal(elementary.erfc(x[::3]), expected[::3])


def test_erfc_float64_and_edges():
    d = np.array([0.3, -2.0, 27.0, 1e-300])
    assert _bits_equal(elementary.erfc(d), np.array([math.erfc(v) for v in d]))
    e = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 4.0, -4.0, 0.75, -0.75, 10.5], F32)
    expected = np.array([math.erfc(v) if v == v else np.nan for v in e.astype(F64).tolist()]).astype(F32)
    assert _bits_equal(elementary.erfc(e), expected)
    assert _bits_equal(elementary.erfc(np.tile(e, 300)), np.tile(expected, 300))     # the vectorised path
    assert elementary.erfc(np.array(F32(0.5))) == F32(math.erfc(0.5))


def test_hypot_is_rounded_once():
    rng = np.random.default_rng(7)
    a, b = (rng.standard_normal(5000) * 10.0 ** rng.uniform(-20, 20, 5000)).astype(F32), rng.standard_normal(5000).astype(F32)
    assert _bits_equal(elementary.hypot(a, b), np.hypot(a.astype(F64), b.astype(F64)).astype(F32))


def _unhex(values):
    return np.array([np.nan if v == "nan" else np.array(int(v, 16), np.uint32).view(F32) for v in values], F32)


def _edge_results(name):
    if name in ("atan2", "pow"):
        pairs = np.array([_unhex(p) for p in EDGES["pairs"]])
        return getattr(elementary, name)(pairs[:, 0].copy(), pairs[:, 1].copy()), pairs[:, 0]
    x = _unhex(EDGES["inputs"])
    return getattr(elementary, name)(x), x


@pytest.mark.parametrize("name", [n for n in EDGES["torch"] if n != "rsqrt"])
def test_edge_values_are_correctly_rounded(name):
    ours, _ = _edge_results(name)
    assert _bits_equal(ours, _unhex(EDGES["correct"][name]))


def test_rsqrt_edge_values_are_pytorchs():
    """rsqrt is PyTorch's own arithmetic (1 / sqrt in float32), not a library call: its bits everywhere."""
    ours, _ = _edge_results("rsqrt")
    assert _bits_equal(ours, _unhex(EDGES["torch"]["rsqrt"]))


# Where PyTorch's result on an edge value is not the correctly rounded one, both are finite and an ulp apart
# (its vector-math library), except log1p of a subnormal, which PyTorch flushes to zero.
@pytest.mark.parametrize("name", list(EDGES["torch"]))
def test_edge_values_keep_pytorchs_special_results(name):
    ours, x = _edge_results(name)
    theirs = _unhex(EDGES["torch"][name])
    for a, t, v in zip(ours, theirs, x):
        if _bits_equal(a, t):
            continue
        if name == "log1p" and t == 0 and abs(v) < 2.0 ** -126:
            continue
        assert np.isfinite(a) and np.isfinite(t) and a != 0 and np.signbit(a) == np.signbit(t), (name, v, a, t)
        assert abs(int(np.array(a, F32).view(np.int32)) - int(np.array(t, F32).view(np.int32))) == 1, (name, v)


# ----------------------------------------------------------------------- the engine goes through them

@pytest.mark.parametrize("name", ["exp", "log", "sin", "cos", "tanh", "expm1", "log1p", "atan", "sinh"])
def test_op_rows_compute_correctly_rounded(name):
    f64, (lo, hi) = UNARY[name]
    x = _inputs(lo, hi, 257)
    assert _bits_equal(getattr(ops, name)(Tensor(x))._a, f64(x.astype(F64)).astype(F32))


def test_backward_formulas_use_them():
    """sin's gradient is g * cos(x) with the correctly rounded cos (and the same under create_graph)."""
    x = _inputs(-20, 20, 300)
    cos = np.cos(x.astype(F64)).astype(F32)
    assert _bits_equal(backmath.NUMPY.cos(x), cos)
    t = Tensor(x.copy())
    t.requires_grad = True
    ops.reduce.reduce_sum(ops.sin(t)).backward()
    assert _bits_equal(t.grad._a, cos)


def test_fused_kernels_and_losses_call_them():
    x = _inputs(-6, 6, 500)
    assert _bits_equal(ops.sigmoid(Tensor(x))._a, F32(1) / (F32(1) + np.exp(-x.astype(F64)).astype(F32)))
    assert _bits_equal(ops.erf(Tensor(x))._a, np.array([math.erf(v) for v in x.astype(F64).tolist()]).astype(F32))
    p = Tensor(_inputs(0.5, 3, 100))
    # a number exponent stays a double, as in PyTorch's scalar loop (x to the double 1.7, rounded once)
    assert _bits_equal(ops.power(p, 1.7)._a, np.power(p._a.astype(F64), 1.7).astype(F32))
    assert _bits_equal(ops.power(Tensor(np.array(F32(2.5))), 1.7)._a, np.array(F32(2.5 ** 1.7)))
