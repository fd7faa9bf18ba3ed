"""The cases tools/numerics.py measures: PyTorch-syntax snippets per op row, their inputs' domains and shapes.

Imported by both sides of the measurement: gradcli's process and the oracle's (which has PyTorch and numpy but not
gradcli), so it needs numpy alone. A snippet is Python run with `torch`, `F` (torch.nn.functional), `d` (a
create_graph gradient: `d(y, x, g)`) and the inputs `a`, `b`, `c`, ... bound; it assigns `out` (a bare expression
is taken as `out = ...`). The same text runs against gradcli's `torch` namespace and against PyTorch's, so a
case says nothing about either engine. Domains follow the gradient-check cases (tests/test_gradcheck.py `any_`,
`pos`; tests/test_ops_elementwise.py `unit`, `away`; tests/test_ops_reduce.py `probs`, `distinct`).
"""

from __future__ import annotations

import zlib
from math import isqrt

import numpy as np

SIZES = (1, 7, 8, 33, 100, 1000, 10_000, 100_000)
QUICK_SIZES = (1, 8, 33, 1000)


# ---- shapes: functions of the size n (about n elements; exactly n for vectors)

def _rc(n):
    r = max(1, isqrt(n))
    return r, max(1, n // r)


def V(n):
    return (n,)


def S(n):
    return ()


def M(n):
    return _rc(n)


def Mt(n):
    return _rc(n)[::-1]


def C(n):
    return (_rc(n)[1],)


def R(n):
    return (_rc(n)[0],)


def R1(n):
    return (_rc(n)[0], 1)


def P3(n):
    """Rows of 3-vectors, about n elements."""
    return (max(1, n // 3), 3)


def P1(n):
    """cdist's first point set: rows of 8 features, as many as make r1 * r2 * 8 about n."""
    return (max(1, isqrt(max(1, n // 8))), 8)


def P2(n):
    return (max(1, isqrt(max(1, n // 8)) // 2 + 1), 8)


def SQ(n):
    k = max(1, isqrt(n))
    return (k, k)


def _bpq(n):
    b = max(1, round(n ** (1 / 3)))
    p = max(1, isqrt(n // b))
    return b, p, max(1, n // (b * p))


def B3(n):
    return _bpq(n)


def B3t(n):
    b, p, q = _bpq(n)
    return (b, q, p)


def _hw(n, channels):
    h = max(4, isqrt(n // (2 * channels)))
    return h, max(4, n // (2 * channels * h))


def IMG(n):
    return (2, 3, *_hw(n, 3))


def SEQ(n):
    return (2, 3, max(4, n // 6))


def AFF(n):
    """affine_grid's theta: two 2 x 3 matrices."""
    return (2, 2, 3)


def const(*shape):
    return lambda n: shape


# ---- domains: (rng, shape) -> float64 array (rounded to float32 later) or an integer/bool array

def _uniform(lo, hi):
    return lambda rng, shape, n: rng.uniform(lo, hi, size=shape)


def _away(rng, shape, n):
    return rng.uniform(0.2, 2.0, size=shape) * rng.choice((-1.0, 1.0), size=shape)


def _distinct(rng, shape, n):
    """Distinct values exact in float32 (max/min gradients go to one element, not shared between ties)."""
    size = int(np.prod(shape, dtype=np.int64))
    scale = 2.0 ** -max(0, int(size).bit_length() - 2)
    return (rng.permutation(size) - size / 2).reshape(shape) * scale


def _invertible(rng, shape, n):
    k = shape[-1]
    return rng.uniform(-1, 1, size=shape) + 2 * np.eye(k)


def _spd(rng, shape, n):
    """Symmetric positive-definite matrices (Cholesky's input): M M^T / k + I."""
    k = shape[-1]
    m = rng.uniform(-1, 1, size=shape)
    return m @ np.swapaxes(m, -1, -2) / k + np.eye(k)


def _lower(rng, shape, n):
    """Lower-triangular matrices well away from singular (triangular solves)."""
    return np.tril(rng.uniform(-1, 1, size=shape)) + 2 * np.eye(shape[-1])


def idx(limit):
    """Integer indices in [0, limit(n))."""
    return lambda rng, shape, n: rng.integers(0, max(1, limit(n)), size=shape)


def _mask(rng, shape, n):
    return rng.random(size=shape) < 0.5


DOMAINS = {"any": _uniform(-2.0, 2.0), "pos": _uniform(0.5, 2.0), "unit": _uniform(0.2, 0.9), "away": _away,
           "prob": _uniform(0.05, 0.95), "distinct": _distinct, "inv": _invertible, "mask": _mask,
           "spd": _spd, "lower": _lower,
           "small": _uniform(-0.5, 0.5)}


class Case:
    """One snippet of one row: `inputs` is a tuple of (domain, shape function); a domain that is a function
    makes integer or bool inputs, which neither require grad nor change with the dtype."""

    __slots__ = ("row", "code", "inputs", "kind", "min_n", "max_n", "note", "elementwise", "layouts", "fixed")

    def __init__(self, row, code, inputs, kind="algorithmic", min_n=1, max_n=None, note="",
                 layouts=("contiguous", "strided")):
        self.row, self.code, self.inputs, self.kind, self.layouts = row, code, inputs, kind, layouts
        self.fixed = False          # fixed shapes: one run, whatever the sizes
        self.min_n, self.max_n, self.note = min_n, max_n, note
        # vectors in, a vector out: gradient element k depends on forward element k alone
        self.elementwise = all(shape is V for dom, shape in self.inputs if isinstance(dom, str))
        if "out =" not in code and "out=" not in code:
            self.code = "out = " + code

    def sizes(self, sizes):
        """The sizes of `sizes` this case runs at (a case too big for 10^5 caps itself)."""
        if self.fixed:
            return [0]
        return [n for n in sizes if n >= self.min_n and (self.max_n is None or n <= self.max_n)]


def _in(spec):
    """'any:M pos:C' -> ((domain, shape), ...) using this module's names."""
    out = []
    for part in spec.split():
        dom, shape = part.split(":")
        out.append((dom, globals()[shape]))
    return tuple(out)


def case(row, code, spec, **kw):
    return Case(row, code, _in(spec) if isinstance(spec, str) else spec, **kw)


LIB = {"kind": "library"}
_N_CLASSES = lambda n: _rc(n)[1]        # noqa: E731  (class count of an (r, c) logit matrix)

# Rows (module.NAME) measured by each case. Library: the result passes through a platform elementary function,
# BLAS/LAPACK or oneDNN in PyTorch, so the goal is the correctly rounded rate, not 100%.
CASES = [
    # arith
    case("arith.ADD", "a + b", "any:M any:C"), case("arith.ADD", "a.add(b, alpha=3)", "any:V any:V"),
    case("arith.SUB", "a - b", "any:M any:R1"), case("arith.SUB", "a.sub(b, alpha=2)", "any:V any:V"),
    case("arith.RSUB", "2 - a", "any:V"), case("arith.RSUB", "torch.rsub(a, 2, 1.5)", "any:V"),
    case("arith.RSUB_TENSOR", "torch.rsub(a, b, alpha=0.5)", "any:M any:C"),
    case("arith.MUL", "a * b", "any:M any:C"), case("arith.MUL", "a * b", "any:V any:S"),
    case("arith.DIV", "a / b", "any:M pos:C"),
    case("arith.RECIPROCAL", "a.reciprocal()", "pos:V"), case("arith.RECIPROCAL", "2 / a", "pos:V"),
    case("arith.NEG", "-a", "any:V"),
    case("arith.EXP", "a.exp()", "any:V", **LIB),
    case("arith.CLONE", "a.clone()", "any:V"), case("arith.CONTIGUOUS", "a.t().contiguous()", "any:M"),
    case("arith.POW_SCALAR", "a ** 2", "any:V"), case("arith.POW_SCALAR", "a ** 3", "any:V"),
    case("arith.POW_SCALAR", "a ** 0.5", "pos:V", **LIB), case("arith.POW_SCALAR", "a ** -1.5", "pos:V", **LIB),
    case("arith.POW_TENSOR", "a ** b", "pos:M any:C", **LIB),
    case("arith.POW_BASE", "2 ** a", "any:V", **LIB), case("arith.POW_BASE", "0.5 ** a", "any:V", **LIB),
    case("arith.TO_COPY", "a.double() * 1.5 if a.dtype == torch.float32 else a.float() * 1.5", "any:V"),
    case("arith.ZERO", "(a * 1).zero_() + a", "any:V"),
    case("arith.FILL", "(a * 1).fill_(2.5) * a", "any:V"),
    case("arith.FILL_TENSOR", "(a * 1).fill_(b) * a", "any:V any:S"),
    case("arith.FILL_NEW", "torch.fill(a, 2.5) * a", "any:V"),
    case("arith.FILL_NEW_TENSOR", "torch.fill(a, b) * a", "any:V any:S"),
    case("arith.MUL_SCALAR", "F.cross_entropy(a, i, label_smoothing=0.2)", (("any", M), (idx(_N_CLASSES), R)),
         kind="library"),
    case("arith.DIV_SCALAR", "F.cross_entropy(a, b)", "any:M prob:M", **LIB),
    # recorded by create_graph formulas that add a number: log1p's grad / (self + 1), pow's exponent - 1
    case("arith.ADD_SCALAR", "d(a.log1p(), a, b)", "pos:V any:V"),
    case("arith.SUB_SCALAR", "d(a ** b, a, c)", "pos:V any:V any:V", **LIB),
    case("arith.UNBIND", "sum(a.unbind(1))", "any:M", max_n=10_000),
    case("arith.ADDCMUL", "a.addcmul(b, c, value=0.5)", "any:V any:V any:V"),
    case("arith.ADDCDIV", "a.addcdiv(b, c, value=0.5)", "any:V any:V pos:V"),
    # unary math and activations
    case("elementwise.LOG", "a.log()", "pos:V", **LIB),
    case("elementwise.SQRT", "a.sqrt()", "pos:V", **LIB),
    case("elementwise.ABS", "a.abs()", "away:V"),
    case("elementwise.SIGN", "a.sign() * a", "away:V"),
    case("elementwise.SGN", "a.sgn() * a", "away:V"),
    case("elementwise.ANGLE", "a.angle() * a", "away:V"),
    case("elementwise.EXP2", "a.exp2()", "any:V", **LIB),
    case("elementwise.EXPM1", "a.expm1()", "any:V", **LIB),
    case("elementwise.LOG2", "a.log2()", "pos:V", **LIB),
    case("elementwise.LOG10", "a.log10()", "pos:V", **LIB),
    case("elementwise.LOG1P", "a.log1p()", "pos:V", **LIB),
    case("elementwise.RSQRT", "a.rsqrt()", "pos:V", **LIB),
    case("elementwise.SIN", "a.sin()", "any:V", **LIB),
    case("elementwise.COS", "a.cos()", "any:V", **LIB),
    case("elementwise.TAN", "a.tan()", "unit:V", **LIB),
    case("elementwise.ASIN", "a.asin()", "unit:V", **LIB),
    case("elementwise.ACOS", "a.acos()", "unit:V", **LIB),
    case("elementwise.ASINH", "a.asinh()", "any:V", **LIB),
    case("elementwise.MISH", "F.mish(a)", "any:V", **LIB),
    case("elementwise.CELU", "F.celu(a, 0.7)", "any:V", **LIB),
    case("elementwise.CELU_", "F.celu(a * 1, 0.7, inplace=True)", "any:V", **LIB),
    case("elementwise.SOFTSHRINK", "F.softshrink(a, 0.3)", "any:V"),
    case("elementwise.ACOSH", "(a + 1).acosh()", "pos:V", **LIB),
    case("elementwise.ATANH", "a.atanh()", "unit:V", **LIB),
    case("elementwise.ATAN", "a.atan()", "any:V", **LIB),
    case("elementwise.SINH", "a.sinh()", "any:V", **LIB),
    case("elementwise.COSH", "a.cosh()", "any:V", **LIB),
    case("elementwise.TANH", "a.tanh()", "any:V", **LIB),
    case("elementwise.SIGMOID", "a.sigmoid()", "any:V", **LIB),
    case("elementwise.ERF", "a.erf()", "any:V", **LIB),
    # the special functions: series in PyTorch's own code around glibc's or Sleef's elementary functions
    # (lgamma is Sleef's, erfinv MKL's), so the goal is the correctly rounded rate
    case("special.LGAMMA", "a.lgamma()", "pos:V", **LIB), case("special.DIGAMMA", "a.digamma()", "pos:V", **LIB),
    case("special.POLYGAMMA", "torch.polygamma(1, a)", "pos:V", **LIB),
    case("special.ENTR", "torch.special.entr(a)", "pos:V", **LIB),
    case("special.POLYGAMMA_", "(a * 1).polygamma_(2)", "pos:V", **LIB),
    case("special.MVLGAMMA", "torch.mvlgamma(a + 1, 2)", "pos:V", **LIB),
    case("special.ERFINV", "a.erfinv()", "unit:V", **LIB), case("special.I0", "a.i0()", "any:V", **LIB),
    case("special.I0E", "torch.special.i0e(a)", "any:V", **LIB),
    case("special.I1", "torch.special.i1(a)", "any:V", **LIB),
    case("special.I1E", "torch.special.i1e(a)", "any:V", **LIB),
    case("normal.NDTRI", "torch.special.ndtri(a)", "prob:V", **LIB),
    case("normal.LOG_NDTR", "torch.special.log_ndtr(a)", "any:V", **LIB),
    case("normal.ERFCX", "torch.special.erfcx(a)", "any:V", **LIB),
    case("special.ZETA", "torch.special.zeta(a.detach() + 1.5, b)", "pos:V pos:V", **LIB),
    case("special.ZETA_SELF_NUMBER", "torch.special.zeta(2.5, a)", "pos:V", **LIB),
    case("igamma.IGAMMA", "torch.igamma(a.detach() * 3, b)", "pos:V pos:V", **LIB),
    case("igamma.IGAMMAC", "torch.special.gammaincc(a.detach() * 3, b)", "pos:V pos:V", **LIB),
    case("elementwise.RELU", "a.relu()", "away:V"),
    case("elementwise.SILU", "F.silu(a)", "any:V", **LIB),
    case("elementwise.FLOOR", "a.floor() * a", "away:V"),
    case("elementwise.CEIL", "a.ceil() * a", "away:V"),
    case("elementwise.ROUND", "a.round() * a", "away:V"),
    case("elementwise.ROUND_DECIMALS", "a.round(decimals=1) + a", "away:V"),
    case("elementwise.TRUNC", "a.trunc() * a", "away:V"),
    case("elementwise.FRAC", "a.frac()", "away:V"),
    case("elementwise.ATAN2", "a.atan2(b)", "any:M any:C", **LIB),
    case("elementwise.MAXIMUM", "a.maximum(b)", "away:M away:C"),
    case("elementwise.MINIMUM", "a.minimum(b)", "away:M away:R1"),
    case("elementwise.MASKED_FILL", "a.masked_fill(m, 0.5) * a", (("any", V), (_mask, V))),
    case("elementwise.MASKED_FILL_TENSOR", "a.masked_fill(m, b) * a", (("any", V), ("any", S), (_mask, V))),
    case("elementwise.CLAMP", "a.clamp(-0.5, 0.5)", "away:V"), case("elementwise.CLAMP", "a.clamp(min=0.1)", "away:V"),
    case("elementwise.CLAMP_TENSOR", "a.clamp(b, c)", "any:M small:C pos:R1"),
    case("elementwise.CLAMP_MIN", "a.clamp_min(0.25)", "away:V"),
    case("elementwise.CLAMP_MIN_TENSOR", "a.clamp_min(b)", "away:M away:C"),
    case("elementwise.CLAMP_MAX", "a.clamp_max(0.25)", "away:V"),
    case("elementwise.CLAMP_MAX_TENSOR", "a.clamp_max(b)", "away:M away:R1"),
    case("elementwise.WHERE", "torch.where(m, a, b)", (("any", M), ("any", C), (_mask, M))),
    case("elementwise.LERP", "a.lerp(b, 0.3)", "any:M any:C"),
    case("elementwise.LERP", "a.lerp(b, 0.8)", "any:V any:V"),
    case("elementwise.LERP_TENSOR", "a.lerp(b, c)", "any:M any:C unit:R1"),
    case("elementwise.REMAINDER", "a % 1.5", "away:V"), case("elementwise.REMAINDER", "a.remainder(-2)", "away:V"),
    case("elementwise.REMAINDER_TENSOR", "a % b", "away:M pos:C"),
    case("elementwise.DIV_ROUNDING", "a.div(b, rounding_mode='trunc') * a", "away:M away:C"),
    case("elementwise.COPY", "y = a * 1\ny.copy_(b)\nout = y * a", "any:M any:C"),
    case("elementwise.SOFTPLUS", "F.softplus(a)", "any:V", **LIB),
    case("elementwise.SOFTPLUS", "F.softplus(a, 2.0, 1.5)", "any:V", **LIB),
    case("elementwise.GELU", "F.gelu(a)", "any:V", **LIB),
    case("elementwise.GELU", "F.gelu(a, approximate='tanh')", "any:V", **LIB),
    case("elementwise.LEAKY_RELU", "F.leaky_relu(a, 0.2)", "away:V"),
    case("elementwise.LEAKY_RELU_", "F.leaky_relu(a * 1, 0.3, True)", "away:V"),
    case("elementwise.ELU", "F.elu(a)", "away:V", **LIB),
    case("elementwise.ELU", "F.elu(a, alpha=0.5)", "away:V", **LIB),
    case("elementwise.ELU_", "F.elu_(a * 1, 2.0)", "away:V", **LIB),
    case("elementwise.HARDTANH", "F.hardtanh(a)", "away:V"), case("elementwise.HARDTANH", "F.relu6(a * 4)", "away:V"),
    case("elementwise.LOG_SIGMOID", "F.logsigmoid(a)", "any:V", **LIB),
    case("elementwise.HARDSIGMOID", "F.hardsigmoid(a * 2.5)", "any:V"),
    case("elementwise.HARDSWISH", "F.hardswish(a * 2.5)", "any:V"),
    case("elementwise.ERFC", "a.erfc()", "any:V", **LIB),
    case("elementwise.SINC", "a.sinc()", "any:V", **LIB),
    case("elementwise.LOGIT", "a.logit()", "prob:V", **LIB),
    case("elementwise.LOGIT", "a.logit(0.1)", "prob:V", **LIB),
    case("elementwise.NAN_TO_NUM", "(a / b).nan_to_num(posinf=2.5)", "any:V small:V"),
    case("elementwise.XLOGY", "torch.xlogy(a, b)", "any:M pos:C", **LIB),
    case("elementwise.XLOGY_SELF_NUMBER", "torch.xlogy(2.5, a)", "pos:V", **LIB),
    case("elementwise.XLOGY_OTHER_NUMBER", "torch.xlogy(a, 1.5)", "any:V", **LIB),
    case("elementwise.XLOG1PY", "torch.special.xlog1py(a, b)", "any:M pos:C", **LIB),
    case("elementwise.XLOG1PY_SELF_NUMBER", "torch.special.xlog1py(2.5, a)", "pos:V", **LIB),
    case("elementwise.XLOG1PY_OTHER_NUMBER", "torch.special.xlog1py(a, 1.5)", "any:V", **LIB),
    case("elementwise.LOGADDEXP", "a.logaddexp(b)", "any:M any:C", **LIB),
    case("elementwise.LOGADDEXP2", "a.logaddexp2(b)", "any:M any:C", **LIB),
    case("elementwise.HYPOT", "a.hypot(b)", "any:M any:C", **LIB),
    case("elementwise.COPYSIGN", "a.copysign(b)", "away:M away:C"),
    case("elementwise.COPYSIGN_NUMBER", "a.copysign(-1.5)", "away:V"),
    case("elementwise.LDEXP", "torch.ldexp(a, b)", "any:M any:C", **LIB),
    case("elementwise.FREXP", "torch.frexp(a).mantissa * a", "any:V"),
    case("elementwise.NEXTAFTER", "torch.nextafter(a, b)", "any:M any:C"),
    case("elementwise.FMAX", "torch.fmax(a, b)", "any:M any:C"), case("elementwise.FMIN", "torch.fmin(a, b)", "any:M any:R1"),
    *[case(f"elementwise.{name.upper()}_NUMBER", f"(a * 1).{name}_(0.5) * a", "away:V")
      for name in ("eq", "ne", "lt", "le", "gt", "ge")],
    *[case(f"elementwise.{name.upper()}_TENSOR", f"(a * 1).{name}_(b) * a", "away:M away:C")
      for name in ("eq", "ne", "lt", "le", "gt", "ge")],
    # backward formulas run by a double backward: out is the first derivative, its grads run the row
    case("elementwise.TANH_BACKWARD", "d(a.tanh(), a, b)", "any:V any:V", **LIB, note="y = tanh(a) from the library"),
    case("elementwise.SIGMOID_BACKWARD", "d(a.sigmoid(), a, b)", "any:V any:V", **LIB),
    case("elementwise.THRESHOLD_BACKWARD", "d(a.relu() * a, a, b)", "away:V any:V"),
    case("elementwise.SOFTPLUS_BACKWARD", "d(F.softplus(a, 2.0, 1.5), a, b)", "any:V any:V", **LIB),
    case("elementwise.GELU_BACKWARD", "d(F.gelu(a), a, b)", "any:V any:V", **LIB),
    case("elementwise.GELU_BACKWARD", "d(F.gelu(a, approximate='tanh'), a, b)", "any:V any:V", **LIB),
    case("elementwise.LEAKY_RELU_BACKWARD", "d(F.leaky_relu(a, 0.2) * a, a, b)", "away:V any:V"),
    case("elementwise.ELU_BACKWARD", "d(F.elu(a, 0.7), a, b)", "away:V any:V", **LIB),
    case("elementwise.HARDTANH_BACKWARD", "d(F.hardtanh(a * 2) * a, a, b)", "away:V any:V"),
    case("elementwise.HARDSWISH_BACKWARD", "d(F.hardswish(a * 2.5) * a, a, b)", "any:V any:V"),
    case("elementwise.LOG_SIGMOID_BACKWARD", "d(F.logsigmoid(a), a, b)", "any:V any:V", **LIB),
    # reductions
    case("reduce.SUM", "a.sum()", "any:V"), case("reduce.SUM", "a.sum()", "any:M"),
    case("reduce.SUM_DIM", "a.sum(1)", "any:M"), case("reduce.SUM_DIM", "a.sum(0)", "any:M"),
    case("reduce.MEAN", "a.mean()", "any:V"), case("reduce.MEAN", "a.mean()", "any:M"),
    case("reduce.MEAN_DIM", "a.mean(1)", "any:M"), case("reduce.MEAN_DIM", "a.mean(0, keepdim=True)", "any:M"),
    case("reduce.PROD", "a.prod()", "pos:V", max_n=1000), case("reduce.PROD_DIM", "a.prod(1)", "pos:M"),
    case("reduce.MAX", "a.max()", "distinct:M"), case("reduce.MIN", "a.min()", "distinct:M"),
    case("reduce.MAX_DIM", "a.max(1)[0]", "distinct:M"), case("reduce.MIN_DIM", "a.min(0)[0]", "distinct:M"),
    case("reduce.AMAX", "a.amax(1)", "distinct:M"), case("reduce.AMIN", "a.amin()", "distinct:M"),
    case("sorting.SORT", "a.sort(1)[0]", "distinct:M"), case("sorting.SORT", "a.sort(0, True)[0]", "distinct:M"),
    case("sorting.SORT_STABLE", "a.sort(dim=1, stable=True)[0]", "distinct:M"),
    case("sorting.TOPK", "a.topk(1, 1)[0]", "distinct:M"), case("sorting.TOPK", "a.topk(1, 0, False)[0]", "distinct:M"),
    case("order.MEDIAN", "a.median()", "distinct:M"), case("order.NANMEDIAN", "a.nanmedian()", "distinct:V"),
    case("order.MEDIAN_DIM", "a.median(1)[0]", "distinct:M"), case("order.NANMEDIAN_DIM", "a.nanmedian(0)[0]", "distinct:M"),
    case("order.KTHVALUE", "a.kthvalue(1, 1)[0]", "distinct:M"), case("order.MODE", "a.mode(0)[0]", "distinct:M"),
    case("order.AMINMAX", "torch.aminmax(a, dim=1)[0] * 2 + torch.aminmax(a, dim=1)[1]", "distinct:M"),
    case("order.AMINMAX", "torch.aminmax(a).max", "distinct:V"),
    case("order.CUMMAX", "a.cummax(1)[0]", "distinct:M"), case("order.CUMMIN", "a.cummin(0)[0]", "distinct:M"),
    case("order.LOGCUMSUMEXP", "a.logcumsumexp(1)", "any:M", **LIB),
    case("order.LOGCUMSUMEXP", "a.logcumsumexp(0)", "any:V", **LIB),
    case("reduce.DIST", "torch.dist(a, b)", "any:M any:C", **LIB), case("reduce.DIST", "a.dist(b, 1)", "any:V any:V"),
    case("reduce.DIST", "torch.dist(a, b, float('inf'))", "any:V any:V"),
    case("reduce.RENORM", "torch.renorm(a, 2, 0, 0.5)", "any:M", **LIB),
    case("reduce.NORM", "a.norm()", "any:V", **LIB), case("reduce.NORM", "a.norm(dim=1)", "any:M", **LIB),
    case("reduce.NORM", "a.norm(p=1)", "any:V"), case("reduce.NORM", "a.norm(3, dim=0)", "any:M", **LIB),
    case("reduce.STD", "a.std()", "any:V", **LIB, min_n=2), case("reduce.STD", "a.std(1)", "any:M", **LIB, min_n=2),
    case("reduce.VAR", "a.var()", "any:V", min_n=2), case("reduce.VAR", "a.var(0)", "any:M", min_n=4),
    case("reduce.LOGSUMEXP", "a.logsumexp(1)", "any:M", **LIB),
    case("linalg.CROSS", "torch.linalg.cross(a, b)", "any:P3 any:P3"),
    case("linalg.CDIST", "torch.cdist(a, b, compute_mode='donot_use_mm_for_euclid_dist')", "any:P1 any:P2"),
    case("linalg.CDIST", "torch.cdist(a, b, p=1)", "any:P1 any:P2"),
    case("linalg.CDIST", "torch.cdist(a, b, p=3)", "any:P1 any:P2", **LIB),
    case("linalg.EUCLIDEAN_DIST", "torch.cdist(a, b, compute_mode='use_mm_for_euclid_dist')", "any:P1 any:P2", **LIB),
    case("reduce.NANSUM", "a.nansum()", "any:V"), case("reduce.NANSUM", "a.nansum(0)", "any:M"),
    case("reduce.NANSUM", "a.nanmean(1)", "any:M"),
    case("reduce.VAR_MEAN", "torch.var_mean(a)[0] * 2 + torch.var_mean(a)[1]", "any:V", min_n=2),
    case("reduce.VAR_MEAN", "torch.var_mean(a, 1)[1]", "any:M"), case("reduce.VAR_MEAN", "torch.var_mean(a, 0)[0]", "any:M", min_n=4),
    case("reduce.STD_MEAN", "torch.std_mean(a)[0]", "any:V", min_n=2, **LIB),
    case("reduce.STD_MEAN", "torch.std_mean(a, 1)[0] + torch.std_mean(a, 1)[1]", "any:M", min_n=4, **LIB),
    case("reduce.CUMSUM", "a.cumsum(0)", "any:V"), case("reduce.CUMSUM", "a.cumsum(1)", "any:M"),
    case("reduce.CUMPROD", "a.cumprod(0)", "pos:V", max_n=1000), case("reduce.CUMPROD", "a.cumprod(1)", "pos:M"),
    # shape rows: copies, no arithmetic (the backward of a repeat or expand sums)
    case("shape.EXPAND", "a.expand(3, -1) * 2", "any:V"),
    case("shape.UNSQUEEZE", "a.unsqueeze(1) * 2", "any:V"),
    case("shape.SQUEEZE_ALL", "a.unsqueeze(0).squeeze() * 2", "any:V"),
    case("shape.SQUEEZE", "a.unsqueeze(0).squeeze(0) * 2", "any:V"),
    case("shape.SQUEEZE_DIMS", "a.unsqueeze(0).squeeze((0,)) * 2", "any:V"),
    case("shape.SQUEEZE_", "a @ b", "any:R any:M", kind="library"),     # a vector-matrix product (mm)
    case("shape.TRANSPOSE_T", "a.t() * 2", "any:M"),
    case("shape.TRANSPOSE", "a.transpose(0, 1) * 2", "any:M"),
    case("shape.PERMUTE", "a.permute(1, 0) * 2", "any:M"),
    case("shape.VIEW", "a.view(-1) * 2", "any:V"),
    case("shape.RESIZE", "a.resize(a.numel()) * 2", "any:M"),
    case("shape.RESHAPE_ALIAS", "a.t().reshape(a.shape[1], a.shape[0]) * 2", "any:M"),
    case("shape.UNSAFE_VIEW", "a.t().reshape(-1) * 2", "any:M"),
    case("shape.REPEAT", "a.repeat(2, 3)", "any:M"),
    case("shape.CAT", "torch.cat([a, b])", "any:M any:M"),
    case("shape.STACK", "torch.stack([a, b])", "any:V any:V"),
    case("shape.SPLIT", "a.split(a.shape[0] // 2 + 1)[1 if a.shape[0] > 1 else 0] * 2", "any:V"),
    case("shape.SPLIT_SIZES", "a.split([1, a.shape[0] - 1])[1] * 2", "any:V", min_n=2),
    case("shape.UNSAFE_SPLIT", "a.unsafe_chunk(2)[0] * 2", "any:V"),
    case("shape.UNSAFE_SPLIT_SIZES", "a.unsafe_split_with_sizes([1, a.shape[0] - 1])[1] * 2", "any:V", min_n=2),
    case("shape.NARROW_COPY", "a.narrow_copy(0, 0, a.shape[0]) * 2", "any:V"),
    case("shape.PAD", "F.pad(a, (1, 2), value=0.5) * 2", "any:M"),
    case("elementwise.DEG2RAD", "a.deg2rad()", "any:V"), case("elementwise.RAD2DEG", "a.rad2deg()", "any:V"),
    case("shape.FLIP", "a.flip(0) * a", "any:M"),
    case("shape.UNFOLD", "a.unfold(1, 3, 1) * 2", "any:M", min_n=9),
    case("fold.IM2COL", "F.unfold(a, 2) * 2", "any:IMG"), case("fold.COL2IM", "F.fold(F.unfold(a, 3, padding=1), a.shape[-2:], 3, padding=1)", "any:IMG"),
    case("shape.ROLL", "a.roll(1) * a", "any:M"),
    case("shape.GATHER", "a.gather(1, i)", (("any", M), (idx(_N_CLASSES), M))),
    case("shape.GATHER_0D", "a.gather(0, i) * a", (("any", S), (idx(lambda n: 1), V))),
    case("shape.INDEX_SELECT", "a.index_select(1, i)", (("any", M), (idx(_N_CLASSES), C))),
    # scatters (ops.scatter): copies, except the adds of scatter_add and index_add in index order
    case("reduce.SCATTER", "a.scatter(1, i, b)", (("any", M), (idx(_N_CLASSES), M), ("any", M))),
    case("scatter.SCATTER_VALUE", "a.scatter(1, i, 0.5) * a", (("any", M), (idx(_N_CLASSES), M))),
    case("scatter.SCATTER_ADD", "a.scatter_add(1, i, b)", (("any", M), (idx(_N_CLASSES), M), ("any", M))),
    case("scatter.INDEX_ADD", "a.index_add(1, i, b, alpha=0.5)", (("any", M), (idx(_N_CLASSES), C), ("any", M))),
    case("scatter.INDEX_ADD", "a.index_add(0, i, b)", (("any", V), (idx(lambda n: n), V), ("any", V))),
    # indexed writers and reducers (ops.indexed): copies, except the folds of put/index_put (accumulate),
    # scatter_reduce and index_reduce in index order
    case("indexed.INDEX_FILL", "a.index_fill(1, i, 0.5) * a", (("any", M), (idx(_N_CLASSES), C))),
    case("indexed.INDEX_FILL_TENSOR", "a.index_fill(1, i, b) * a", (("any", M), ("any", S), (idx(_N_CLASSES), C))),
    case("indexed.INDEX_COPY", "a.index_copy(1, i, b) * a", (("any", M), (idx(_N_CLASSES), C), ("any", M))),
    case("indexed.TAKE", "a.take(i) * 2", (("any", M), (idx(lambda n: _rc(n)[0] * _rc(n)[1]), V))),
    case("indexed.PUT", "a.put(i, b, accumulate=True)", (("any", V), (idx(lambda n: n), V), ("any", V))),
    case("indexed.MASKED_SCATTER", "a.masked_scatter(m, b) * a", (("any", M), ("any", M), (_mask, M))),
    case("indexed.INDEX_PUT", "a.index_put((i,), b, accumulate=True)", (("any", V), ("any", V), (idx(lambda n: n), V))),
    *[case("indexed.SCATTER_REDUCE", f"a.scatter_reduce(1, i, b, '{r}')", (("any", M), (idx(_N_CLASSES), M), ("any", M)))
      for r in ("sum", "prod", "mean", "amax")],
    *[case("indexed.INDEX_REDUCE", f"a.index_reduce(1, i, b, '{r}', include_self=False)",
           (("any", M), (idx(_N_CLASSES), C), ("any", M))) for r in ("prod", "mean", "amin")],
    case("arrange.ROT90", "a.rot90() * 2", "any:M"), case("arrange.ROT90", "a.rot90(2, (1, 0)) * a", "any:M"),
    case("arrange.BLOCK_DIAG", "torch.block_diag(a, b) * 2", "any:SQ any:V", max_n=1000),
    case("shape.TRIL", "a.tril() * 2", "any:SQ"), case("shape.TRIU", "a.triu(1) * 2", "any:SQ"),
    # matrix products and linear algebra
    case("linalg.MM", "a.mm(b)", "any:M any:Mt", kind="library", max_n=100_000),
    # torch.fft: PyTorch's transforms are MKL's (library), gradcli's numpy's pocketfft (docs/numerics.md, FFT)
    case("fft.R2C", "torch.view_as_real(torch.fft.rfft(a))", "any:V", **LIB),
    case("fft.C2R", "torch.fft.irfft(torch.fft.rfft(a), n=a.shape[0])", "any:V", **LIB),
    case("fft.C2C", "torch.fft.ifft(torch.fft.fft(a)).real", "any:V", **LIB),
    case("linalg.BMM", "a.bmm(b)", "any:B3 any:B3t", kind="library"),
    case("linalg.MV", "a.mv(b)", "any:M any:C", kind="library"),
    case("linalg.DOT", "a.dot(b)", "any:V any:V", kind="library"),
    case("linalg.VDOT", "a.vdot(b)", "any:V any:V", kind="library"),
    case("blas.ADDMM", "F.linear(a, b, c)", "any:M any:M any:R", kind="library"),
    case("blas.ADDMM", "torch.addmm(a, b, c, beta=0.5, alpha=2)", "any:R any:M any:Mt", kind="library"),
    case("blas.ADDMV", "torch.addmv(a, b, c, beta=2, alpha=0.5)", "any:R any:M any:C", kind="library"),
    case("blas.ADDR", "torch.addr(a, b, c, beta=0.5, alpha=2)", "any:M any:R any:C"),
    case("blas.BADDBMM", "torch.baddbmm(a[..., :1], a, b, beta=0.5, alpha=2)", "any:B3 any:B3t", kind="library"),
    case("blas.ADDBMM", "torch.addbmm(a[0, :, :1], a, b, beta=0.5, alpha=2)", "any:B3 any:B3t", kind="library"),
    case("linalg.DET", "a.det()", "inv:SQ", kind="library", max_n=10_000),
    case("linalg.INV", "a.inverse()", "inv:SQ", kind="library", max_n=10_000),
    case("linalg.SOLVE", "torch.linalg.solve(a, b)", "inv:SQ any:SQ", kind="library", max_n=10_000),
    case("linalg.CHOLESKY", "torch.linalg.cholesky(a)", "spd:SQ", kind="library", max_n=10_000),
    case("linalg.CHOLESKY", "torch.linalg.cholesky(a, upper=True)", "spd:SQ", kind="library", max_n=1000),
    case("linalg.CHOLESKY_LEGACY", "torch.cholesky(a)", "spd:SQ", kind="library", max_n=1000),
    case("linalg.CHOLESKY_INVERSE", "torch.cholesky_inverse(a)", "lower:SQ", kind="library", max_n=10_000),
    case("linalg.CHOLESKY_INVERSE", "torch.cholesky_inverse(a.mT, upper=True)", "lower:SQ", kind="library",
         max_n=1000),
    case("linalg.SOLVE_TRIANGULAR", "torch.linalg.solve_triangular(a, b, upper=False)", "lower:SQ any:SQ",
         kind="library", max_n=10_000),
    case("linalg.SOLVE_TRIANGULAR", "torch.linalg.solve_triangular(a.mT, b, upper=True, left=False)",
         "lower:SQ any:SQ", kind="library", max_n=1000),
    case("lu.LU_FACTOR", "torch.linalg.lu_factor(a).LU", "inv:SQ", kind="library", max_n=10_000),
    case("lu.LU", "torch.linalg.lu(a).U", "inv:SQ", kind="library", max_n=1000),
    case("lu.LU_SOLVE", "torch.linalg.lu_solve(*torch.linalg.lu_factor(a), b)", "inv:SQ any:SQ", kind="library",
         max_n=1000),
    case("lu.LU_SOLVE", "torch.linalg.lu_solve(*torch.linalg.lu_factor(a), b, adjoint=True)", "inv:SQ any:SQ",
         kind="library", max_n=1000),
    case("lu.LU_UNPACK", "torch.lu_unpack(*torch.linalg.lu_factor(a)).L", "inv:SQ", kind="library", max_n=1000),
    case("lstsq.LSTSQ", "torch.linalg.lstsq(a, b).solution", "inv:SQ any:SQ", kind="library", max_n=1000),
    case("lu.TRIANGULAR_SOLVE", "torch.triangular_solve(b, a).solution", "lower:SQ any:SQ", kind="library",
         max_n=1000),
    case("householder.HOUSEHOLDER_PRODUCT", "torch.linalg.householder_product(*torch.geqrf(a))", "any:SQ",
         kind="library", max_n=1000),
    case("householder.ORMQR", "torch.ormqr(*torch.geqrf(a), b)", "any:SQ any:SQ", kind="library", max_n=1000),
    case("lu.CHOLESKY_SOLVE", "torch.cholesky_solve(b, torch.linalg.cholesky(a))", "spd:SQ any:SQ", kind="library",
         max_n=1000),
    case("linalg.SLOGDET", "torch.linalg.slogdet(a).logabsdet", "inv:SQ", kind="library", max_n=10_000),
    case("linalg.SLOGDET", "torch.logdet(a @ a.mT)", "inv:SQ", kind="library", max_n=1000),
    case("linalg.MATRIX_EXP", "torch.linalg.matrix_exp(a)", "any:SQ", kind="library", max_n=1000),
    case("linalg.MATRIX_EXP", "torch.linalg.matrix_exp(a * 0.05)", "any:SQ", kind="library", max_n=1000),
    case("linalg.SVD", "torch.linalg.svdvals(a)", "any:SQ", kind="library", max_n=1000),
    case("linalg.EIGH", "torch.linalg.eigvalsh(a)", "any:SQ", kind="library", max_n=1000),
    case("linalg.QR", "torch.linalg.qr(a).R", "any:SQ", kind="library", max_n=1000),
    case("linalg.PINV", "torch.linalg.pinv(a)", "inv:SQ", kind="library", max_n=1000),
    case("linalg.TRACE", "a.trace()", "any:SQ"),
    case("linalg.DIAGONAL", "a.diagonal() * 2", "any:SQ"),
    case("linalg.DIAG", "a.diag() * 2", "any:SQ"),
    case("linalg.DIAG_EMBED", "a.diag() * 2", "any:V", max_n=1000),
    case("linalg.DIAGONAL_BACKWARD", "d((a.diagonal() ** 2).sum(), a, None)", "any:SQ"),
    # indexing
    case("indexing.SELECT", "a[1] * a[0]", "any:M", min_n=4),
    case("indexing.SLICE", "a[1:] * 2", "any:V", min_n=2),
    case("indexing.UNSQUEEZE", "a[:, None] * 2", "any:V"),
    case("indexing.ALIAS", "a[:, :] * 2", "any:M"),
    case("indexing.INDEX", "a[i]", (("any", V), (idx(lambda n: n), V))),
    case("indexing.INDEX_PUT_IMPL", "d((a[i] ** 3).sum(), a, None)", (("any", V), (idx(lambda n: n), V))),
    case("indexing.INDEX_PUT_", "y = a * 1\ny[i] = b\nout = y", (("any", V), ("any", const(1)),
                                                                  (idx(lambda n: n), const(1)))),
    case("indexing.SELECT_BACKWARD", "d((a[0] * a[0]).sum(), a, None)", "any:M"),
    case("indexing.SLICE_BACKWARD", "d((a[1:] ** 2).sum(), a, None)", "any:V", min_n=2),
    case("indexing.INDEX_PUT", "d((a[i] ** 2).sum(), a, None)", (("any", V), (idx(lambda n: n), V))),
    # nn
    case("nn.SOFTMAX", "a.softmax(1)", "any:M", **LIB), case("nn.SOFTMAX", "a.softmax(0)", "any:M", **LIB),
    case("nn.LOG_SOFTMAX", "a.log_softmax(1)", "any:M", **LIB),
    case("nn.LOG_SOFTMAX", "a.log_softmax(0)", "any:M", **LIB),
    case("nn.SOFTMAX_BACKWARD_DATA", "d(a.softmax(1), a, b)", "any:M any:M", **LIB),
    case("nn.LOG_SOFTMAX_BACKWARD_DATA", "d(a.log_softmax(1), a, b)", "any:M any:M", **LIB),
    case("attention.FLASH", "F.scaled_dot_product_attention(a.contiguous()[None, None], "
         "a.contiguous()[None, None], a.contiguous()[None, None])", "any:M", **LIB),
    case("attention.SAFE_SOFTMAX", "F.scaled_dot_product_attention(a, a, a)", "any:M", **LIB),
    case("nn.MSE_LOSS", "F.mse_loss(a, b)", "any:M any:M"),
    case("nn.MSE_LOSS", "F.mse_loss(a, b, reduction='none')", "any:M any:M"),
    case("nn.MSE_LOSS_BACKWARD", "d(F.mse_loss(a, b) * (a * a).sum(), a, None)", "any:M any:M"),
    case("nn.SMOOTH_L1", "F.smooth_l1_loss(a, b)", "any:M any:M"),
    case("nn.SMOOTH_L1_BACKWARD", "d(F.smooth_l1_loss(a, b) * (a * a).sum(), a, None)", "any:M any:M"),
    case("nn.SMOOTH_L1_BACKWARD", "d(F.smooth_l1_loss(a, b, reduction='none', beta=0.5) * a, a, None)", "any:M any:M"),
    case("nn.HUBER", "F.huber_loss(a, b, delta=0.5)", "any:M any:M"),
    case("nn.HUBER_BACKWARD", "d(F.huber_loss(a, b, delta=0.5) * (a * a).sum(), a, None)", "any:M any:M"),
    case("nn.HUBER_BACKWARD", "d(F.huber_loss(a, b, reduction='sum') * (b * b).sum(), b, None)", "any:M any:M"),
    case("nn.PRELU", "F.prelu(a, b[0])", "any:M any:M"),
    case("nn.PRELU_BACKWARD", "torch.autograd.grad((F.prelu(a, b[0]) ** 2).sum(), a, create_graph=True)[0]",
         "any:M any:M"),
    case("nn.NLL_LOSS", "F.nll_loss(a, i)", (("any", M), (idx(_N_CLASSES), R))),
    case("nn.NLL_LOSS_BACKWARD", "d(F.nll_loss(a, i) * (a * a).sum(), a, None)", (("any", M), (idx(_N_CLASSES), R))),
    # (the target is not differentiable: PyTorch refuses one that requires grad)
    case("margin.SOFT_MARGIN", "F.soft_margin_loss(a, b.detach())", "any:M any:M", **LIB),
    case("margin.SOFT_MARGIN_BACKWARD", "d(F.soft_margin_loss(a, b.detach()) * (a * a).sum(), a, None)", "any:M any:M",
         **LIB),
    case("margin.SOFT_MARGIN_BACKWARD", "d((F.soft_margin_loss(a, b.detach(), reduction='none') * a).sum(), a, None)",
         "any:M any:M", **LIB),
    case("margin.MULTI_MARGIN", "F.multi_margin_loss(a, i)", (("any", M), (idx(_N_CLASSES), R))),
    case("margin.MULTI_MARGIN", "F.multi_margin_loss(a, i, p=2, margin=0.5)", (("any", M), (idx(_N_CLASSES), R))),
    case("margin.MULTILABEL_MARGIN", "F.multilabel_margin_loss(a, i)", (("any", M), (idx(_N_CLASSES), M))),
    case("pdist.PDIST", "F.pdist(a)", "any:P1", **LIB),
    case("pdist.PDIST", "F.pdist(a, p=1)", "any:P1"),
    case("affine_grid.AFFINE_GRID", "F.affine_grid(a, (2, 3, 5, 7), align_corners=False)", "any:AFF"),
    case("grid_sample.GRID_SAMPLER_2D", "F.grid_sample(a, b, align_corners=False)", (("any", IMG), ("any", const(2, 6, 7, 2)))),
    case("grid_sample.GRID_SAMPLER_2D", "F.grid_sample(a, b, mode='bicubic', padding_mode='reflection', align_corners=True)",
         (("any", IMG), ("any", const(2, 6, 7, 2)))),
    case("ctc.CTC_LOSS", "F.ctc_loss(a.log_softmax(2), torch.tensor([[1, 2, 2, 3], [3, 1, 0, 0]]), (8, 7), (4, 2), reduction='none')",
         (("any", const(8, 2, 5)),), **LIB),
    case("grid_sample.GRID_SAMPLER_3D", "F.grid_sample(a.unsqueeze(2), b, padding_mode='border', align_corners=False)",
         (("any", IMG), ("any", const(2, 2, 6, 7, 3)))),
    # PyTorch's nll_loss2d backward refuses a transposed input ("grad_input must be contiguous")
    case("nn.NLL_LOSS2D", "F.nll_loss(a, i)", (("any", IMG), (idx(lambda n: 3), lambda n: (2, *_hw(n, 3)))),
         layouts=("contiguous",)),
    case("nn.NLL_LOSS2D_BACKWARD", "d(F.nll_loss(a, i) * (a * a).sum(), a, None)",
         (("any", IMG), (idx(lambda n: 3), lambda n: (2, *_hw(n, 3)))), layouts=("contiguous",)),
    case("nn.BCE", "F.binary_cross_entropy(a, b)", "prob:M prob:M", **LIB),
    case("nn.BCE_BACKWARD", "d(F.binary_cross_entropy(a, b) * (a * a).sum(), a, None)", "prob:M prob:M", **LIB),
    case("nn.BCE_BACKWARD", "d((F.binary_cross_entropy(a, b, reduction='none') * a).sum(), a, None)", "prob:M prob:M", **LIB),
    case("nn.BCE_LOGITS", "F.binary_cross_entropy_with_logits(a, b)", "any:M prob:M", **LIB),
    case("nn.EMBEDDING", "F.embedding(i, a)", (("any", M), (idx(lambda n: _rc(n)[0]), R))),
    case("nn.EMBEDDING_DENSE_BACKWARD", "d((F.embedding(i, a) ** 3).sum(), a, None)",
         (("any", M), (idx(lambda n: _rc(n)[0]), R))),
    case("nn.TRILINEAR", "F.bilinear(a, b, c)", (("any", M), ("any", M), ("any", lambda n: (3, _rc(n)[1], _rc(n)[1]))),
         kind="library", max_n=1000),
    case("views.COPY_SLICES_SAVE", "y = a * 1\ny.view(-1)[1:].mul_(b)\nout = y * y", "any:V any:S", min_n=2),
    case("views.COPY_SLICES", "y = a * 1\nr = y[0]\nr.add_(b)\nout = y * 2", "any:M any:C"),
    case("views.AS_STRIDED", "y = a * 1\nr = y[0]\nr.add_(b)\nout = y * r.sum()", "any:M any:C"),
    # normalization, convolution, padding, pooling
    case("normalization.BATCH_NORM", "F.batch_norm(a, None, None, b, c, training=True)", "any:M any:C any:C",
         min_n=4),
    case("normalization.BATCH_NORM", "F.batch_norm(a, None, None, b, c, training=True)",
         (("any", IMG), ("any", const(3)), ("any", const(3)))),
    case("normalization.LAYER_NORM", "F.layer_norm(a, (a.shape[1],), b, c)", "any:M any:C any:C"),
    case("normalization.GROUP_NORM", "F.group_norm(a, 3, b, c)", (("any", IMG), ("any", const(3)), ("any", const(3)))),
    case("normalization.BATCH_NORM_BACKWARD",
         "d((F.batch_norm(a, None, None, b, c, training=True) ** 3).sum(), a, None)", "any:M any:C any:C", min_n=4),
    case("normalization.LAYER_NORM_BACKWARD", "d((F.layer_norm(a, (a.shape[1],), b) ** 3).sum(), a, None)",
         "any:M any:C"),
    case("conv.CONVOLUTION", "F.conv2d(a, b, c, padding=1)", (("any", IMG), ("any", const(4, 3, 3, 3)),
                                                              ("any", const(4))), kind="library"),
    case("conv.CONVOLUTION", "F.conv1d(a, b, c, stride=2)", (("any", SEQ), ("any", const(4, 3, 3)), ("any", const(4))),
         kind="library"),
    case("conv.CONVOLUTION_BACKWARD", "d((F.conv2d(a, b, padding=1) ** 2).sum(), a, None)",
         (("any", IMG), ("any", const(4, 3, 3, 3))), kind="library"),
    case("padding.REFLECTION_PAD1D", "F.pad(a, (2, 1), mode='reflect')", "any:SEQ"),
    case("padding.REFLECTION_PAD2D", "F.pad(a, (2, 1, 1, 2), mode='reflect')", "any:IMG"),
    case("padding.REFLECTION_PAD3D", "F.pad(a, (1, 0, 1, 1, 0, 1), mode='reflect')", "any:IMG"),
    case("padding.REPLICATION_PAD1D", "F.pad(a, (3, 1), mode='replicate')", "any:SEQ"),
    case("padding.REPLICATION_PAD2D", "F.pad(a, (2, 2, 0, 3), mode='replicate')", "any:IMG"),
    case("padding.REPLICATION_PAD3D", "F.pad(a.unsqueeze(0), (1, 1, 2, 0, 1, 1), mode='replicate')", "any:IMG"),
    case("padding.REFLECTION_PAD1D_BACKWARD", "d(F.pad(a, (2, 1), mode='reflect'), a, b)",
         (("any", SEQ), ("any", lambda n: (2, 3, max(4, n // 6) + 3)))),
    case("padding.REFLECTION_PAD2D_BACKWARD", "d(F.pad(a, (1, 1, 2, 0), mode='reflect'), a, b)",
         (("any", IMG), ("any", lambda n: (2, 3, _hw(n, 3)[0] + 2, _hw(n, 3)[1] + 2)))),
    case("padding.REFLECTION_PAD3D_BACKWARD", "d(F.pad(a, (1, 0, 0, 1, 1, 1), mode='reflect'), a, b)",
         (("any", IMG), ("any", lambda n: (2, 5, _hw(n, 3)[0] + 1, _hw(n, 3)[1] + 1)))),
    case("padding.REPLICATION_PAD1D_BACKWARD", "d(F.pad(a, (3, 1), mode='replicate'), a, b)",
         (("any", SEQ), ("any", lambda n: (2, 3, max(4, n // 6) + 4)))),
    case("padding.REPLICATION_PAD2D_BACKWARD", "d(F.pad(a, (0, 2, 1, 1), mode='replicate'), a, b)",
         (("any", IMG), ("any", lambda n: (2, 3, _hw(n, 3)[0] + 2, _hw(n, 3)[1] + 2)))),
    case("padding.REPLICATION_PAD3D_BACKWARD", "d(F.pad(a, (1, 1, 1, 1, 1, 1), mode='replicate'), a, b)",
         (("any", IMG), ("any", lambda n: (2, 5, _hw(n, 3)[0] + 2, _hw(n, 3)[1] + 2)))),
    case("pool.MAX_POOL2D", "F.max_pool2d(a, 2)", "distinct:IMG"),
    case("pool.AVG_POOL2D", "F.avg_pool2d(a, 2)", "any:IMG"),
    case("pool.AVG_POOL2D", "F.avg_pool2d(a, 3, 2, 1, ceil_mode=True, count_include_pad=False)", "any:IMG"),
    case("pool.ADAPTIVE_AVG", "F.adaptive_avg_pool2d(a, (3, 2))", "any:IMG"),
    case("pool.ADAPTIVE_MAX", "F.adaptive_max_pool2d(a, (3, 2))", "distinct:IMG"),
    case("pool.MAX_POOL_BACKWARD", "d(F.max_pool2d(a, 2), a, b)",
         (("distinct", IMG), ("any", lambda n: (2, 3, _hw(n, 3)[0] // 2, _hw(n, 3)[1] // 2)))),
    case("pool.ADAPTIVE_MAX_BACKWARD", "d(F.adaptive_max_pool2d(a, (3, 2)), a, b)",
         (("distinct", IMG), ("any", const(2, 3, 3, 2)))),
    case("pool.AVG_POOL_BACKWARD", "d(F.avg_pool2d(a, 2), a, b)",
         (("any", IMG), ("any", lambda n: (2, 3, _hw(n, 3)[0] // 2, _hw(n, 3)[1] // 2)))),
    case("pool.ADAPTIVE_AVG_BACKWARD", "d(F.adaptive_avg_pool2d(a, (3, 2)), a, b)",
         (("any", IMG), ("any", const(2, 3, 3, 2)))),
    # the 3-d poolings on IMG as an unbatched volume (2 channels of 3 x h x w)
    case("pool.MAX_POOL3D", "F.max_pool3d(a, 2, 1, 1)", "distinct:IMG"),
    case("pool.AVG_POOL3D", "F.avg_pool3d(a, 3, 2, 1, ceil_mode=True, count_include_pad=False)", "any:IMG"),
    case("pool.ADAPTIVE_AVG3D", "F.adaptive_avg_pool3d(a, (2, 3, 2))", "any:IMG"),
    case("pool.ADAPTIVE_MAX3D", "F.adaptive_max_pool3d(a, (2, 3, 2))", "distinct:IMG"),
    case("pool.MAX_POOL3D_BACKWARD", "d(F.max_pool3d(a, 2), a, b)",
         (("distinct", IMG), ("any", lambda n: (2, 1, _hw(n, 3)[0] // 2, _hw(n, 3)[1] // 2)))),
    case("pool.ADAPTIVE_MAX3D_BACKWARD", "d(F.adaptive_max_pool3d(a, (2, 3, 2)), a, b)",
         (("distinct", IMG), ("any", const(2, 2, 3, 2)))),
    case("pool.AVG_POOL3D_BACKWARD", "d(F.avg_pool3d(a, 2), a, b)",
         (("any", IMG), ("any", lambda n: (2, 1, _hw(n, 3)[0] // 2, _hw(n, 3)[1] // 2)))),
    case("pool.ADAPTIVE_AVG3D_BACKWARD", "d(F.adaptive_avg_pool3d(a, (2, 3, 2)), a, b)",
         (("any", IMG), ("any", const(2, 2, 3, 2)))),
    # fractional max pooling with fixed samples (windows of 2 at starts drawn as PyTorch draws them), on IMG and on
    # IMG as an unbatched volume
    case("fractional_pool.FRACTIONAL_MAX_POOL2D",
         "F.fractional_max_pool2d(a, 2, output_ratio=(0.5, 0.5), _random_samples=torch.full((2, 3, 2), 0.37, "
         "dtype=a.dtype))", "distinct:IMG"),
    case("fractional_pool.FRACTIONAL_MAX_POOL3D",
         "F.fractional_max_pool3d(a, 2, output_ratio=0.5, _random_samples=torch.full((1, 2, 3), 0.37, dtype=a.dtype))",
         "distinct:IMG"),
    case("fractional_pool.FRACTIONAL_BACKWARD2D",
         "d(F.fractional_max_pool2d(a, 2, output_ratio=(0.5, 0.5), _random_samples=torch.full((2, 3, 2), 0.37, "
         "dtype=a.dtype)), a, b)",
         (("distinct", IMG), ("any", lambda n: (2, 3, _hw(n, 3)[0] // 2, _hw(n, 3)[1] // 2)))),
    case("fractional_pool.FRACTIONAL_BACKWARD3D",
         "d(F.fractional_max_pool3d(a, 2, output_ratio=0.5, _random_samples=torch.full((1, 2, 3), 0.37, "
         "dtype=a.dtype)), a, b)",
         (("distinct", IMG), ("any", lambda n: (2, 1, _hw(n, 3)[0] // 2, _hw(n, 3)[1] // 2)))),
    # max_unpool: the values of a max pooling put back at its indices (a copy: no arithmetic forward, its
    # gradient a gather)
    case("pool.MAX_UNPOOL2D", "F.max_unpool2d(*F.max_pool2d(a, 2, return_indices=True), 2)", "distinct:IMG"),
    case("pool.MAX_UNPOOL3D", "F.max_unpool3d(*F.max_pool3d(a, 2, return_indices=True), 2)", "distinct:IMG"),
    # F.interpolate: outputs of 9 x 11 (the channels-last kernel PyTorch takes for small outputs) and 1.7x
    # the input (the generic kernel once height plus width passes 128)
    case("upsample.UPSAMPLE_NEAREST1D", "F.interpolate(a, scale_factor=1.7)", "any:SEQ"),
    case("upsample.UPSAMPLE_NEAREST2D", "F.interpolate(a, scale_factor=1.7)", "any:IMG"),
    case("upsample.UPSAMPLE_NEAREST3D", "F.interpolate(a.unsqueeze(2), scale_factor=(2, 1.5, 0.7))", "any:IMG"),
    case("upsample.UPSAMPLE_NEAREST_EXACT1D", "F.interpolate(a, scale_factor=0.6, mode='nearest-exact')", "any:SEQ"),
    case("upsample.UPSAMPLE_NEAREST_EXACT2D", "F.interpolate(a, size=(9, 11), mode='nearest-exact')", "any:IMG"),
    case("upsample.UPSAMPLE_NEAREST_EXACT3D", "F.interpolate(a.unsqueeze(2), size=(2, 9, 11), mode='nearest-exact')",
         "any:IMG"),
    case("upsample.UPSAMPLE_LINEAR1D", "F.interpolate(a, scale_factor=1.7, mode='linear')", "any:SEQ"),
    case("upsample.UPSAMPLE_BILINEAR2D", "F.interpolate(a, size=(9, 11), mode='bilinear')", "any:IMG"),
    case("upsample.UPSAMPLE_BILINEAR2D", "F.interpolate(a, scale_factor=1.7, mode='bilinear', align_corners=True)",
         "any:IMG"),
    case("upsample.UPSAMPLE_TRILINEAR3D", "F.interpolate(a.unsqueeze(2), size=(3, 9, 11), mode='trilinear')", "any:IMG"),
    case("upsample.UPSAMPLE_BICUBIC2D", "F.interpolate(a, size=(9, 11), mode='bicubic')", "any:IMG"),
    case("upsample.UPSAMPLE_BICUBIC2D", "F.interpolate(a, scale_factor=1.7, mode='bicubic', align_corners=True)",
         "any:IMG"),
    case("upsample.UPSAMPLE_BICUBIC2D_BACKWARD", "d(F.interpolate(a, size=(9, 11), mode='bicubic'), a, b)",
         (("any", IMG), ("any", const(2, 3, 9, 11)))),
    case("upsample.UPSAMPLE_NEAREST1D_BACKWARD", "d(F.interpolate(a, size=9), a, b)",
         (("any", SEQ), ("any", const(2, 3, 9)))),
    case("upsample.UPSAMPLE_NEAREST2D_BACKWARD", "d(F.interpolate(a, size=(9, 11)), a, b)",
         (("any", IMG), ("any", const(2, 3, 9, 11)))),
    case("upsample.UPSAMPLE_NEAREST3D_BACKWARD", "d(F.interpolate(a.unsqueeze(2), size=(2, 9, 11)), a, b)",
         (("any", IMG), ("any", const(2, 3, 2, 9, 11)))),
    case("upsample.UPSAMPLE_NEAREST_EXACT1D_BACKWARD", "d(F.interpolate(a, size=9, mode='nearest-exact'), a, b)",
         (("any", SEQ), ("any", const(2, 3, 9)))),
    case("upsample.UPSAMPLE_NEAREST_EXACT2D_BACKWARD",
         "d(F.interpolate(a, size=(9, 11), mode='nearest-exact'), a, b)", (("any", IMG), ("any", const(2, 3, 9, 11)))),
    case("upsample.UPSAMPLE_NEAREST_EXACT3D_BACKWARD",
         "d(F.interpolate(a.unsqueeze(2), size=(2, 9, 11), mode='nearest-exact'), a, b)",
         (("any", IMG), ("any", const(2, 3, 2, 9, 11)))),
    case("upsample.UPSAMPLE_LINEAR1D_BACKWARD", "d(F.interpolate(a, size=9, mode='linear'), a, b)",
         (("any", SEQ), ("any", const(2, 3, 9)))),
    case("upsample.UPSAMPLE_BILINEAR2D_BACKWARD", "d(F.interpolate(a, size=(9, 11), mode='bilinear'), a, b)",
         (("any", IMG), ("any", const(2, 3, 9, 11)))),
    case("upsample.UPSAMPLE_TRILINEAR3D_BACKWARD",
         "d(F.interpolate(a.unsqueeze(2), size=(3, 9, 11), mode='trilinear'), a, b)",
         (("any", IMG), ("any", const(2, 3, 3, 9, 11)))),
]

# Rows no snippet drives, and why (listed in the table, never silently left out).
# the complex rows: the tool draws real inputs; their figures are docs/numerics.md's "Complex tensors" section
_COMPLEX = "complex inputs (tools/numerics.py draws real ones): measured in docs/numerics.md, Complex tensors"
NOT_DRIVEN = {
    # its values are the input times a drawn mask times a double scale (exact per element, as PyTorch's kernel),
    # the mask a random stream gradcli draws as PyTorch does: engine cases pin them, gradients and tangents too
    "nn.NATIVE_DROPOUT": "a random mask per call: tests/engine_cases/legacy_functions.txt pins values and gradients",
    "complexops.CONJ": _COMPLEX,
    "complexops.CONJ_PHYS": _COMPLEX,
    "complexops.ABS": _COMPLEX,
    "complexops.ANGLE": _COMPLEX,
    "complexops.VIEW_AS_REAL": _COMPLEX,
    "complexops.VIEW_AS_CPLX": _COMPLEX,
    "complexops.COMPLEX": _COMPLEX,
    "complexops.POLAR": _COMPLEX,
    "complexops.MUL": _COMPLEX,
    "complexops.DIV": _COMPLEX,
    "complexops.EXP": _COMPLEX,
    "complexops.LOG": _COMPLEX,
    "complexops.SQRT": _COMPLEX,
    "complexops.NEG_VIEW": _COMPLEX,
    "complexops.RECIPROCAL": _COMPLEX,
    "complexops.POW": _COMPLEX,
    "complexops.MM": _COMPLEX,
    "complexops.DOT": _COMPLEX,
    "complexops.VDOT": _COMPLEX,
    "arrange.PIXEL_SHUFFLE": "pixel_shuffle: a rearrangement (the values are the input's, forward and backward)",
    "arrange.PIXEL_UNSHUFFLE": "pixel_unshuffle: the same rearrangement's inverse",
    "arrange.CHANNEL_SHUFFLE": "channel_shuffle: a rearrangement of channels (the values are the input's)",
    "pdist.PDIST_BACKWARD": "pdist's gradient recorded under create_graph: PyTorch gives it no derivative",
    "grid_sample.GRID_SAMPLER_2D_BACKWARD": "grid_sample's 2-d gradient recorded under create_graph: gradcli does "
                                            "not implement its derivative",
    "grid_sample.GRID_SAMPLER_3D_BACKWARD": "grid_sample's 3-d gradient recorded under create_graph: gradcli does "
                                            "not implement its derivative",
    "randomized.RRELU": "rrelu: a random slope per element from PyTorch's stream (tests/engine_cases/nn_extras.txt "
                        "pins the draws), one multiply",
    "randomized.RRELU_": "rrelu_: the same in place",
    "randomized.RRELU_BACKWARD": "rrelu's gradient recorded under create_graph: the saved noise times the gradient",
    "householder.GEQRF": "geqrf's node: PyTorch has no derivative for it (its forward is measured through "
                         "householder_product's case)",
    "special.ZETA_OTHER_NUMBER": "zeta(x, number)'s node: PyTorch has no derivative for the order (its forward "
                                 "is measured through zeta's case)",
    "linalg.CDIST_BACKWARD": "cdist's gradient recorded under create_graph: PyTorch gives it no derivative",
    "elementwise.THRESHOLD": "threshold: a selection (value or x), no arithmetic; its gradient threshold_backward's",
    "elementwise.THRESHOLD_": "threshold_: the same selection in place",
    "elementwise.NOT_IMPLEMENTED": "PyTorch's error node for an op without a derivative: no numbers",
    "search.UNIQUE": "unique's node: PyTorch has no derivative for it (the values are copies)",
    "search.UNIQUE_DIM": "unique(dim=)'s node: no derivative",
    "search.UNIQUE_CONSECUTIVE": "unique_consecutive's node: no derivative",
    "elementwise.ASINH_": "asinh_'s node: PyTorch has no derivative for the in-place form",
    "elementwise.GLU": "glu: a * sigmoid(b), sigmoid's arithmetic (its own row) and one product",
    "elementwise.HARDSHRINK": "hardshrink: a selection, no arithmetic",
    "elementwise.FMOD": "fmod: C's exact fmod (numpy's), the gradient passes through",
    "elementwise.FMOD_TENSOR": "fmod: C's exact fmod (numpy's); the divisor's gradient a trunc division's",
    "elementwise.HARDSHRINK_BACKWARD": "hardshrink's second-order node: a selection",
    "elementwise.SOFTSHRINK_BACKWARD": "softshrink's second-order node: a selection",
    "reduce.NORM_LEGACY": "pairwise_distance's norm node: reduce.NORM's kernel and formula",
    "reduce.NORM_WHOLE": "norm_except_dim's whole-tensor norm (at::norm's NormBackward0): reduce.NORM's kernel and formula",
    "weight_norm.WEIGHT_NORM": "the fused weight_norm kernel, reached through a module's parametrization only: its bits "
                               "are checked in tests/test_ops_weight_norm.py",
    "elementwise.GLU_BACKWARD": "glu's second-order node: a composite of recorded ops",
    "shape.UNFOLD_BACKWARD": "unfold's gradient recorded under create_graph: shape.UNFOLD's backward sums, in its order",
    "arrange.MASKED_SELECT": "masked_select: copies the selected elements; its gradient writes them back (no sums)",
    "arrange.MASKED_SCATTER": "masked_select's gradient recorded under create_graph: moves elements, no arithmetic",
    "indexed.MASKED_SCATTER_BACKWARD": "masked_scatter's source gradient recorded under create_graph: moves elements, "
                                       "no arithmetic",
    "scatter.SELECT_SCATTER": "select_scatter: writes src into a copy; its gradients are views and zeros (no arithmetic)",
    "scatter.SLICE_SCATTER": "slice_scatter: the same, into a strided slice",
    "scatter.DIAGONAL_SCATTER": "diagonal_scatter: the same, into a diagonal",
    "shape.TRANSPOSE_T_": "t_()'s node: moves elements, no arithmetic",
    "shape.TRANSPOSE_": "transpose_()'s node: moves elements, no arithmetic",
    "shape.SQUEEZE_ALL_": "squeeze_()'s node: a reshape, no arithmetic",
    "shape.UNSQUEEZE_": "unsqueeze_()'s node: a reshape, no arithmetic",
    "elementwise.ACOSH_": "acosh_'s node: PyTorch has no derivative for the in-place form",
    "elementwise.ATANH_": "atanh_'s node: PyTorch has no derivative for the in-place form",
    "indexing.IDENTITY": "forward-mode unpack_dual's node: no arithmetic of its own",
    "embedding_bag.EMBEDDING_BAG": "embedding_bag: row sums in PyTorch's kernel order over random index lists; "
                                   "tests/engine_cases/embedding_bag.txt compares them with the oracle",
    "packed.PACK_PADDED": "pack_padded_sequence: moves elements, no arithmetic",
    "rnn.TRANSPOSE_": "recorded only inside gradcli's RNN layers (batch_first)",
}

# Input names, in order; integer and bool inputs are named i and m.
_NAMES = "abcdefgh"


def resolve_inputs(c: Case):
    """[(name, domain function, shape function, is_float)] of a case."""
    out, k = [], 0
    for dom, shape in c.inputs:
        if isinstance(dom, str):
            out.append((_NAMES[k], DOMAINS[dom], shape, True))
            k += 1
        else:
            out.append(("m" if dom is _mask else "i", dom, shape, False))
    return out


def seed_of(case_index: int, n: int, layout: str) -> list:
    """The random stream of one (case, size, layout): the same in both processes, the same for both dtypes
    (float64 runs see the float32 inputs widened, so they are also the float32 run's reference)."""
    return [20261126, case_index, n, zlib.crc32(layout.encode())]


def make_inputs(c: Case, case_index: int, n: int, layout: str, absolute: bool = False) -> list:
    """[(name, array, is_float)] : float inputs as float32-representable float64 arrays, laid out for `layout`
    by the caller (see strided_base)."""
    rng = np.random.default_rng(seed_of(case_index, n, layout))
    out = []
    for name, dom, shape, is_float in resolve_inputs(c):
        arr = dom(rng, shape(n), n)
        if is_float:
            arr = np.asarray(arr, dtype=np.float64).astype(np.float32).astype(np.float64)
            if absolute:
                arr = np.abs(arr)
        out.append((name, np.asarray(arr), is_float))
    return out


def grad_output(case_index: int, n: int, layout: str, shape) -> np.ndarray:
    """The gradient fed to out.backward: random, float32-representable, of the output's shape."""
    rng = np.random.default_rng(seed_of(case_index, n, layout) + [1])
    return rng.uniform(-1.0, 1.0, size=shape).astype(np.float32).astype(np.float64)


def strided_base(arr: np.ndarray) -> tuple:
    """(base array, view code) so that base viewed by the code is `arr` laid out non-contiguously: rank 1 as the
    even elements of a twice-as-long vector, rank >= 2 as the transpose of its last two dims, rank 0 as itself."""
    if arr.ndim == 0:
        return arr, None
    if arr.ndim == 1:
        base = np.zeros(2 * arr.shape[0], dtype=arr.dtype)
        base[::2] = arr
        return base, "step2"
    return np.ascontiguousarray(np.swapaxes(arr, -1, -2)), "transpose"


def apply_view(t, how):
    """A tensor's view (either engine's) as strided_base describes."""
    if how == "step2":
        return t[::2]
    if how == "transpose":
        return t.transpose(-1, -2)
    return t


def snippet_namespace(torch, inputs: dict) -> dict:
    """What a case's code sees, for either engine's `torch`."""
    def d(y, x, g):
        if g is None:
            return torch.autograd.grad(y, x, create_graph=True)[0]
        return torch.autograd.grad(y, x, g, create_graph=True)[0]
    return {"torch": torch, "F": torch.nn.functional, "d": d, "sum": sum, **inputs}


def run_case(torch, c: Case, case_index: int, dtype_name: str, n: int, layout: str, tensor_of,
             absolute: bool = False) -> dict:
    """Run one case through `torch` (gradcli's namespace or PyTorch): returns {"out": array, "grad a": array, ...}.

    `tensor_of(array, dtype_name or None, requires_grad)` makes a tensor in that engine. `absolute` runs it on the
    inputs' and the output gradient's absolute values: for a product, the scale sum(|a_i b_i|) of each element."""
    arrays = make_inputs(c, case_index, n, layout, absolute)
    env, leaves = {}, []
    for name, arr, is_float in arrays:
        if not is_float:
            env[name] = tensor_of(arr, None, False)
            continue
        how = None
        if layout == "strided":
            arr, how = strided_base(arr)
        leaf = tensor_of(arr, dtype_name, True)
        leaves.append((name, leaf))
        env[name] = apply_view(leaf, how)
    ns = snippet_namespace(torch, env)
    exec(c.code, ns)                 # noqa: S102  (the tool's own case table)
    out = ns["out"]
    results = {"out": out}
    g = grad_output(case_index, n, layout, tuple(out.shape))
    g = tensor_of(np.abs(g) if absolute else g, dtype_name, False)
    out.backward(g)
    for name, leaf in leaves:
        if leaf.grad is not None:
            results["grad " + name] = leaf.grad
    return results


# ---- matrix products at the sizes tutorials use (tools/numerics.py --products): fixed shapes, one case each

def _product_cases() -> list:
    out = []

    def add(label, code, *shapes):
        c = Case(label, code, tuple(("any", const(*s)) for s in shapes), kind="library", layouts=("contiguous",))
        c.fixed = True
        out.append(c)
    for batch in (1, 4, 16, 64):
        for fan_in in (1, 2, 10, 64, 128, 512):
            for fan_out in (1, 3, 10, 64, 128):
                add("mm", "a.mm(b)", (batch, fan_in), (fan_in, fan_out))
                add("matmul", "a @ b", (batch, fan_in), (fan_in, fan_out))
                add("linear", "F.linear(a, b, c)", (batch, fan_in), (fan_out, fan_in), (fan_out,))
    for rows in (1, 3, 10, 64, 128):
        for fan_in in (1, 2, 10, 64, 128, 512):
            add("mv", "a.mv(b)", (rows, fan_in), (fan_in,))
    for n in (1, 2, 3, 5, 8, 10, 16, 33, 64, 100, 128, 512):
        add("dot", "a.dot(b)", (n,), (n,))
    for batch in (1, 8, 64):
        for m, k, n in ((2, 3, 4), (4, 4, 4), (7, 5, 3), (8, 8, 8), (16, 16, 16), (10, 32, 10), (32, 64, 32)):
            add("bmm", "a.bmm(b)", (batch, m, k), (batch, k, n))
    return out


PRODUCT_CASES = _product_cases()
TABLES = {"ops": CASES, "products": PRODUCT_CASES}
