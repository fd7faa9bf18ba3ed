"""Elementwise math: unary functions, activations, clamp, where, lerp, rounding, // and %, logical ops."""

from __future__ import annotations

import math

import numpy as np

from gradcli.engine import dtypes
from gradcli.engine.autograd import runs_first
from gradcli.engine import elementary as cr     # the correctly rounded elementary functions
from gradcli.engine.fma import fma, one_minus_square
from gradcli.engine.layout import contiguous, laid_out
from gradcli.engine.forward import (NOT_DIFFERENTIABLE, add_tangents, dropped, sub_tangents,
                                     tangent_or_zeros)
from gradcli.engine.ops import arith as _arith
from gradcli.engine.ops.arith import clone, fill, power
from gradcli.engine.recording import (Op, apply, is_meta, binary, broadcast_error, checked_scalar, compute, int_param,
                                      index_arg, needs_grad, number_arg, number_operand, operands, result_dtype,
                                      same_device, scalar_param, tensor_arg, type_word, unary)
from gradcli.engine.tensor import Tensor, _scalar_name
from gradcli.engine.state import STATE

LN2 = 0.6931471805599453
LN10 = 2.3025850929940456
TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
SQRT1_2 = 0.7071067811865476
M_2_SQRTPI = 1.1283791670955126    # <cmath>'s 2 / sqrt(pi), as PyTorch's kernels multiply their constants
GELU_BETA = M_2_SQRTPI * SQRT1_2 * 0.5            # 1 / sqrt(2 pi)
GELU_TANH_BETA = math.sqrt(2.0) * M_2_SQRTPI * 0.5  # sqrt(2 / pi): M_SQRT2 * M_2_SQRTPI * 0.5, one bit below
                                                    # the nearest double
GELU_KAPPA = 0.044715


# ------------------------------------------------------------------------------------ array kernels
# The forward column of rows numpy alone does not quite compute: PyTorch's values and its refusals of
# dtypes a kernel does not cover (checked before anything is computed).

def _refuse(x: np.ndarray, kernel: str, kinds: str) -> None:
    """PyTorch's dispatch error for a dtype its kernel does not cover."""
    if x.dtype.kind in kinds:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{type_word(x)}'")


def sign_array(x: np.ndarray) -> np.ndarray:
    """PyTorch's sign: -1, 0 or 1, and 0 for NaN and -0.0 (numpy's gives NaN)."""
    if x.dtype == np.bool_:
        return x.copy()
    return (x > 0).astype(x.dtype) - (x < 0).astype(x.dtype)


def angle_array(x: np.ndarray) -> np.ndarray:
    """The angle of real numbers: pi below zero, 0 from -0.0 up, nan for nan (in the input's floating type)."""
    t = x.dtype.type
    return np.where(x < 0, t(math.pi), np.where(x != x, x, t(0)))


def abs_array(x: np.ndarray) -> np.ndarray:
    _refuse(x, "abs_cpu", "b")
    return np.abs(x)


_F32 = np.dtype(np.float32)


def half_in_float(kernel):
    """A kernel as PyTorch runs it on float16 (and bfloat16) tensors: its float32 form on the inputs converted to
    float (the kernels' opmath type), each result rounded once to the input's type. Other dtypes go straight
    through."""
    def run(*args):
        first = args[0]
        half = first.dtype              # (a dtype's class, for a kernel handed one)
        if first.__class__ is not np.ndarray and is_meta(first):
            return on_meta(run, *args)
        if getattr(half, "char", "x") not in "eE":
            return kernel(*args)
        # (a 0-d gradient may come as a numpy scalar)
        out = kernel(*(a.astype(_F32) if (a.__class__ is np.ndarray or isinstance(a, np.generic)) and a.dtype == half
                       else a for a in args))
        if out.__class__ is tuple:
            return tuple(o.astype(half) for o in out)
        return out.astype(half)
    run.__name__ = run.__qualname__ = kernel.__name__
    run.__doc__ = kernel.__doc__
    return run


def on_meta(kernel, *args):
    """An elementwise kernel whose first argument is a meta array, on the one element of each array argument:
    kernels that loop in Python (until every element converges, over masked parts) would otherwise loop over a
    shape with no data, some forever (gradcli.engine.meta)."""
    from gradcli.engine.meta import broadcast_shapes, on_one
    arrays = [a for a in args if isinstance(a, np.ndarray)]
    shape = broadcast_shapes([a.shape for a in arrays])
    first = next(i for i, a in enumerate(args) if a is arrays[0])
    return on_one(lambda a, *rest: kernel(*args[:first], a, *rest), arrays[0], shape, *args[first + 1:])


@half_in_float
def mish_array(x):
    """x * tanh(log1p(exp(x))), PyTorch's kernel step by step (each elementary function correctly rounded)."""
    _refuse(x, "mish_cpu", "iub")
    return x * cr.tanh(cr.log1p(cr.exp(x)))


@half_in_float
def mish_backward_array(g, x):
    """mish_backward's kernel: dy * (tanh_softplus + x * sigmoid * (1 - tanh_softplus * tanh_softplus))."""
    one = x.dtype.type(1)
    sigmoid = one / (one + cr.exp(-x))
    tanh_softplus = cr.tanh(cr.log1p(cr.exp(x)))
    return g * (tanh_softplus + x * sigmoid * (one - tanh_softplus * tanh_softplus))


def _glu_jvp(dx, x, glu_out, dim):
    """glu_jvp: da * sigmoid(b) + glu * (1 - sigmoid(b)) * db."""
    from gradcli.engine import ops
    d = dim % x.ndim
    n = glu_out.shape[d]
    sig_b = ops.sigmoid(ops.narrow(x, d, n, n))
    return ops.narrow(dx, d, 0, n) * sig_b + glu_out * (1 - sig_b) * ops.narrow(dx, d, n, n)


def _glu_backward_jvp(F, ts, xs, dim):
    """GluBackwardBackward0's tangent: the tangent of grad_output through glu_backward, plus the input's
    through glu_double_backward."""
    from gradcli.engine.forward import add_tangents, dropped
    tg, tx = ts
    g, x = xs
    first = dropped(x) if tg is None else _glu_self(F, tg, x, dim)
    second = dropped(x) if tx is None else _glu_double_self(F, tx, g, x, dim)
    return add_tangents(first, second, x._a.shape)


def _mish_self(F, g, self):
    """MishBackward0: the kernel under a plain backward; under create_graph PyTorch's differentiable form,
    grad * (tanh(softplus(x)) + sigmoid(x) * x * (1 - tanh(softplus(x))^2)), op by op."""
    if not F.tensors:
        return mish_backward_array(g, self)
    from gradcli.engine import ops
    sigmoid = ops.sigmoid(self)
    tanh_softplus = ops.tanh(ops.softplus(self))
    return g * (tanh_softplus + sigmoid * self * (1 - tanh_softplus * tanh_softplus))


@half_in_float
def sigmoid_array(x):
    """1 / (1 + exp(-x)), PyTorch's formula."""
    one = x.dtype.type(1)
    return one / (one + cr.exp(-x))


def relu_array(x: np.ndarray) -> np.ndarray:
    if x.dtype.kind == "b":
        raise RuntimeError("Boolean inputs not supported for relu")
    zero = number_operand(x, 0)
    if zero.__class__ is int:
        zero = x.dtype.type(0)
    out = np.maximum(x, zero, out=np.empty_like(x))     # ~10x faster than np.where; nan propagates
    zeros = x == zero
    if np.count_nonzero(zeros):
        np.copyto(out, x, where=zeros)        # but relu(-0.) is -0. in PyTorch, where maximum gives +0.
    return out


@half_in_float
def silu_array(x: np.ndarray) -> np.ndarray:
    _refuse(x, "silu_cpu", "iub")
    return x / (x.dtype.type(1) + cr.exp(-x))


def _rounding_array(fn, kernel: str):
    """floor, ceil, trunc, round: integers are already whole (a copy); bool is refused."""
    def rounded(x: np.ndarray) -> np.ndarray:
        _refuse(x, kernel, "b")
        return fn(x) if x.dtype.kind in "fV" else x.copy()
    rounded.__name__ = kernel.split("_")[0]
    return rounded


floor_array = _rounding_array(np.floor, "floor_vml_cpu")
ceil_array = _rounding_array(np.ceil, "ceil_vml_cpu")
round_array = _rounding_array(np.rint, "round_vml_cpu")
trunc_array = _rounding_array(np.trunc, "trunc_vml_cpu")


def frac_array(x: np.ndarray) -> np.ndarray:
    _refuse(x, "frac_cpu", "iub")
    return x - np.trunc(x)


def maximum_array(p, q):
    return np.where(q != q, q, np.where(p < q, q, p))     # a nan on either side wins


def minimum_array(p, q):
    return np.where(q != q, q, np.where(q < p, q, p))


def div_floor_array(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Floor division as PyTorch's CPU kernel computes it: integers as in Python, floats via fmod with
    its rounding fix-up and signed zeros (numpy differs in the sign of zero results)."""
    if a.dtype.kind in "iu":
        return np.floor_divide(a, b)
    with np.errstate(all="ignore"):
        mod = np.fmod(a, b)
        div = (a - mod) / b
        div = np.where((mod != 0) & ((b < 0) != (mod < 0)), div - 1, div)
        floordiv = np.floor(div)
        floordiv = np.where(div - floordiv > 0.5, floordiv + 1, floordiv)
        quotient = a / b
        out = np.where(div != 0, floordiv, np.copysign(np.zeros_like(div), quotient))
        return np.where(b == 0, quotient, out)


def remainder_array(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Python's modulo as PyTorch's CPU kernel computes it (the result has the divisor's sign)."""
    if a.dtype.kind in "iu":
        return np.remainder(a, b)
    with np.errstate(all="ignore"):
        mod = np.fmod(a, b)
        return np.where((mod != 0) & ((b < 0) != (mod < 0)), mod + b, mod)


# ------------------------------------------------------------------------------------------- formulas
# The longer backward formulas, named; the tables below refer to them.

def _atan2_self(F, g, self, other):
    return g * other * _atan2_recip(F, self, other)


def _atan2_other(F, g, self, other):
    return g * -self * _atan2_recip(F, self, other)


def _atan2_recip(F, self, other):
    """1 / (self^2 + other^2), with 0 where that sum is 0 (PyTorch's choice at the origin)."""
    denominator = self * self + other * other
    return F.masked_zero(F.reciprocal(denominator), denominator == 0)


def _erf_self(F, g, self):
    # 2 / sqrt(pi) * exp(-self.pow(2)) * grad: the constant a double that mul reads as such (F.times)
    return F.times(F.exp(-F.pow(self, 2)), TWO_OVER_SQRT_PI) * g


def _clamp_self(F, g, self, min, max):
    """Gradient 1 inside [min, max] including the bounds (PyTorch's subgradient choice), 0 elsewhere and at NaN.
    A number bound is compared in self's dtype (numpy would compare bfloat16 in float32)."""
    if min.__class__ is float:
        min = F.scalar(min, self)
    if max.__class__ is float:
        max = F.scalar(max, self)
    if min is None:
        keep = self <= max
    elif max is None:
        keep = self >= min
    else:
        keep = F.logical_and_(self >= min, self <= max)
    return F.where(keep, g, 0)


def _clamp_min_bound(F, g, self, min, max):
    below = self < min
    if max is not None:
        below = F.logical_and_(below, min < max)     # min > max: the result is max, so min gets nothing
    return F.where(below, g, 0)


def _clamp_max_bound(F, g, self, min, max):
    above = self > max
    if min is not None:
        above = F.logical_or_(above, max < min)
    return F.where(above, g, 0)


def _maximum_self(F, g, self, other):
    """Half the gradient to each input where they tie, as PyTorch does; the other half goes to `other`."""
    return F.masked_zero(F.where(self == other, g / 2, g), self < other)


def _maximum_other(F, g, self, other):
    return F.masked_zero(F.where(self == other, g / 2, g), self > other)


def _minimum_self(F, g, self, other):
    return F.masked_zero(F.where(self == other, g / 2, g), self > other)


def _minimum_other(F, g, self, other):
    return F.masked_zero(F.where(self == other, g / 2, g), self < other)


def fmax_array(p, q):
    """fmax: the larger, NaN only where both are; p where they are equal (so fmax(-0.0, 0.0) is -0.0)."""
    return np.where((p >= q) | (q != q), p, q)


def fmin_array(p, q):
    return np.where((p <= q) | (q != q), p, q)


def _fmax_self(F, g, self, other):
    """fmax's gradient goes to self where self >= other or other is NaN (derivatives.yaml's masks)."""
    return F.masked_zero(g, ~((self >= other) | (other != other)))


def _fmax_other(F, g, self, other):
    return F.masked_zero(g, (self >= other) | (other != other))


def _fmin_self(F, g, self, other):
    return F.masked_zero(g, ~((self <= other) | (other != other)))


def _fmin_other(F, g, self, other):
    return F.masked_zero(g, (self <= other) | (other != other))


def unimplemented(what: str):
    """The formula of a node PyTorch records without a derivative formula (not_implemented in derivatives.yaml)."""
    def formula(F, g):
        raise NotImplementedError(f"the derivative for '{what}' is not implemented.")
    return formula


def _inplace_unimplemented(name: str):
    return unimplemented(f"inplace version of {name}")


def _inplace_no_tangent(name: str):
    def jvp(F, tangents, inputs, result):
        raise NotImplementedError(f"Trying to use forward AD with {name}_ that does not support it because it has "
                                  "not been implemented yet.\nPlease file an issue to PyTorch at "
                                  "https://github.com/pytorch/pytorch/issues/new?template=feature-request.yml so "
                                  "that we can prioritize its implementation.")
    return jvp


def _not_implemented(F, g, name):
    raise RuntimeError(f"derivative for aten::{name} is not implemented")


def _leaky_relu_result_grad(F, g, result, slope):
    if slope < 0:
        raise RuntimeError(
            "In-place leakyReLu backward calculation is triggered with a negative slope which is not supported. "
            "This is caused by calling in-place forward function with a negative slope, please call out-of-place "
            "version instead. File an issue at https://github.com/pytorch/pytorch if you do require supporting "
            "in-place leakRelu backward calculation with negative slope")
    return F.leaky_relu_backward(g, result, slope)


def _elu_result_grad(F, g, result, alpha, scale, input_scale):
    if alpha < 0:
        raise RuntimeError(
            "In-place elu backward calculation is triggered with a negative slope which is not supported. "
            "This is caused by calling in-place forward function with a negative slope, please call out-of-place "
            "version instead.")
    return F.elu_backward(g, alpha, scale, input_scale, True, result)


def _softplus_backward_grad(F, g, grad_output, self, beta, threshold):
    return F.softplus_backward(g, self, beta, threshold)


def _as_factor(F, mask, like):
    """mask.type_as(like): PyTorch's formulas multiply by it, so an inf or nan where it is 0 gives nan."""
    return F.cast(mask, like._a.dtype if F.tensors else like.dtype)


def _softplus_double_backward(F, g, grad_output, self, beta, threshold):
    x = self * beta
    s = F.sigmoid_backward(g * grad_output, F.sigmoid(x))
    return s * _as_factor(F, x < threshold, s) * beta


def _gelu_double_backward(F, ggI, gO, x, approximate):
    if approximate == "tanh":
        inner = GELU_TANH_BETA * (x + GELU_KAPPA * F.pow(x, 3))
        tanh_inner = F.tanh(inner)
        sech_inner = 1 / F.cosh(inner)
        f = 0.5 * x
        g = 1 - tanh_inner * tanh_inner
        h = GELU_TANH_BETA * (1 + 3 * GELU_KAPPA * x * x)
        f_prime_gh = 0.5 * g * h
        g_prime = (2 * sech_inner) * (-sech_inner * tanh_inner) * h
        g_prime_fh = f * h * g_prime
        h_prime = 6 * GELU_KAPPA * x * GELU_TANH_BETA
        h_prime_fg = f * g * h_prime
        return ggI * gO * (2 * f_prime_gh + g_prime_fh + h_prime_fg)
    x_sq = x * x
    pdf = GELU_BETA * F.exp(-0.5 * x_sq)
    return ggI * gO * (2 * pdf - x_sq * pdf)


def _celu_scale(alpha) -> float:
    """celu's backward input_scale: derivatives.yaml's 1.0 / alpha.toFloat() (the forward's is 1 / alpha)."""
    return 1.0 / float(np.float32(alpha))


def _elu_double_backward(F, g, grad_output, alpha, scale, input_scale, is_result, x):
    """Only the negative side has a second derivative: PyTorch's formula, input_scale and the mask as
    factors."""
    inner = g * grad_output * float(input_scale)
    if not is_result:
        inner = F.elu_backward(inner, alpha, scale, input_scale, False, x)
    return inner * _as_factor(F, x < 0, inner)


def _log_sigmoid_double_backward(F, g, grad_output, self, buffer):
    z = F.sigmoid(self)
    return g * grad_output * (z - 1) * z


# Forward-mode columns (see gradcli.engine.forward) where PyTorch writes its own formula:
# (F, tangents, inputs, result, *args) -> tangent. PyTorch gives an input without a tangent an efficient
# zero tensor: where the formula multiplies or adds it, the term drops out but the add still runs, so
# the tangent gets an AddBackward0 (or SubBackward0) node when it requires grad (add_tangents,
# sub_tangents); ops that are not aware of zero tensors see real zeros (tangent_or_zeros).

def _atan2_jvp(F, ts, xs, result):
    """(-self_p * other_t + other_p * self_t) / (self_p^2 + other_p^2)."""
    st, ot = ts
    x, y = xs
    top = add_tangents(dropped(x) if ot is None else -x * ot, dropped(y) if st is None else y * st)
    return top / (F.pow(x, 2) + F.pow(y, 2))


def _extremum_jvp(F, ts, xs, result, larger):
    """maximum / minimum: other_t + where(self_p == other_p, 0.5, self_p > other_p) * (self_t - other_t)."""
    st, ot = ts
    x, y = (v._a for v in xs)
    dt = result._a.dtype
    weight = Tensor(np.where(x == y, dt.type(0.5), ((x > y) if larger else (x < y)).astype(dt)))
    return add_tangents(ot, weight * sub_tangents(st, ot))


def _clamp_tensor_jvp(F, ts, xs, result):
    """clamp_jvp: the tangent of whichever of self, min and max the result took (min when min > max)."""
    x, lo, hi = xs
    st = tangent_or_zeros(ts, xs, 0)
    if lo is not None and hi is not None:
        inner = where(x > hi, tangent_or_zeros(ts, xs, 2), st)
        return where(lo > hi, tangent_or_zeros(ts, xs, 2), where(x < lo, tangent_or_zeros(ts, xs, 1), inner))
    if lo is not None:
        return where(x > lo, st, tangent_or_zeros(ts, xs, 1))
    return where(x < hi, st, tangent_or_zeros(ts, xs, 2))


def _clamp_bound_jvp(keep_self):
    def jvp(F, ts, xs, result):
        x, bound = xs
        return where(keep_self(x, bound), tangent_or_zeros(ts, xs, 0), tangent_or_zeros(ts, xs, 1))
    return jvp


def _where_jvp(F, ts, xs, result, condition):
    return where(condition, tangent_or_zeros(ts, xs, 0), tangent_or_zeros(ts, xs, 1))


def _lerp_jvp(F, ts, xs, result, weight):
    """lerp(self_t, end_t, weight): the op itself on the tangents."""
    return lerp(tangent_or_zeros(ts, xs, 0), tangent_or_zeros(ts, xs, 1), weight)


def _lerp_tensor_jvp(F, ts, xs, result):
    x, end, weight = xs
    wt = ts[2]
    start = lerp(tangent_or_zeros(ts, xs, 0), tangent_or_zeros(ts, xs, 1), weight)
    slope = end - x
    return add_tangents(start, dropped(slope) if wt is None else wt * slope)


def _modulo_rows(stem: str, rounding: str) -> tuple:
    """remainder's and fmod's rows: a number divisor (the gradient passes through), a tensor divisor
    (its gradient -grad * self.div(other, rounding_mode=rounding)), with the matching tangents."""
    quotient = "floor_divide" if rounding == "floor" else "trunc_divide"

    def jvp(F, ts, xs, result):
        st, ot = ts
        x, y = xs
        q = div_rounding(x, y, rounding)
        return sub_tangents(st, dropped(q) if ot is None else ot * q, q._a.shape)
    by_number = Op(f"{stem}Backward0", None, (), (lambda F, g: g,), fits=True, quiet=True, jvp="auto")
    by_tensor = Op(f"{stem}Backward1", None, ("self", "other"),
                   (lambda F, g, self, other: g,
                    lambda F, g, self, other: -g * getattr(F, quotient)(self, other)), fits=True, quiet=True,
                   needed_by={"self": "other", "other": "other"}, jvp=jvp)
    return by_number, by_tensor


def _copy_jvp(F, ts, xs, result):
    """copy_ (written by hand in PyTorch): src's tangent, broadcast to self; zeros when only self has one
    (PyTorch fills self's tangent with 0: FillBackward2)."""
    st, src = ts
    if src is None:
        return fill(st, 0)
    if st is not None:
        return copy(F.zeros_like(result), src)
    value = F.expand(src, result._a.shape) if src._a.shape != result._a.shape else clone(src)
    return value if value._a.dtype == result._a.dtype else F.cast(value, result._a.dtype)


def _copied(formula):
    """leaky_relu_ / elu_: PyTorch copies the backward formula on the tangent into self's tangent
    (self_t.copy_(...)), so a tangent that requires grad gets a CopyBackwards node."""
    def jvp(F, ts, xs, result, *args):
        return copy(F.zeros_like(result), formula(F, ts[0], result, *args))
    return jvp


# The activations' backward kernels, for forward-over-reverse: the grad_output term (the kernel itself,
# which sees real zeros for a missing tangent) plus the self term (which drops out with its tangent where
# PyTorch's formula multiplies by it).

def _tanh_backward_jvp(F, ts, xs, result):
    grad_output, output = xs
    ot = ts[1]
    return add_tangents(tanh_backward(tangent_or_zeros(ts, xs, 0), output),
                        dropped(output, grad_output) if ot is None else ot * (-2 * output * grad_output))


def _sigmoid_backward_jvp(F, ts, xs, result):
    grad_output, output = xs
    ot = ts[1]
    return add_tangents(sigmoid_backward(tangent_or_zeros(ts, xs, 0), output),
                 dropped(output, grad_output) if ot is None else ot * grad_output * (-2 * output + 1))


def _threshold_backward_jvp(F, ts, xs, result, threshold):
    return add_tangents(None, threshold_backward(tangent_or_zeros(ts, xs, 0), xs[1], threshold))


def _softplus_backward_jvp(F, ts, xs, result, beta, threshold):
    grad_output, self = xs
    return (softplus_backward(tangent_or_zeros(ts, xs, 0), self, beta, threshold)
            + _softplus_double_backward(F, tangent_or_zeros(ts, xs, 1), grad_output, self, beta, threshold))


def _gelu_backward_jvp(F, ts, xs, result, approximate):
    grad_output, self = xs
    st = ts[1]
    return add_tangents(gelu_backward(tangent_or_zeros(ts, xs, 0), self, approximate),
                 dropped(grad_output, self) if st is None else
                 _gelu_double_backward(F, st, grad_output, self, approximate))


def _elu_backward_jvp(F, ts, xs, result, alpha, scale, input_scale, is_result):
    grad_output, x = xs
    return (elu_backward(tangent_or_zeros(ts, xs, 0), alpha, scale, input_scale, is_result, x)
            + _elu_double_backward(F, tangent_or_zeros(ts, xs, 1), grad_output, alpha, scale, input_scale,
                                   is_result, x))


def _hardtanh_backward_jvp(F, ts, xs, result, min, max):
    """Only grad_output's tangent counts: without one the result has none."""
    if ts[0] is None:
        return None
    x = xs[1]._a
    return where(Tensor((x > min) & (x < max)), ts[0], 0)


def _hardswish_double_backward(F, g, grad_output, self):
    """hardswish_backward's derivative in its input: grad * grad_output / 3 strictly inside (-3, 3)."""
    return F.where((self > -3) & (self < 3), g * grad_output / 3, 0)


def _hardswish_backward_jvp(F, ts, xs, result):
    grad_output, self = xs
    first = None if ts[0] is None else hardswish_backward(ts[0], self)
    second = None if ts[1] is None else _hardswish_double_backward(F, ts[1], grad_output, self)
    return add_tangents(first, second)


def _leaky_relu_backward_jvp(F, ts, xs, result, slope):
    return None if ts[0] is None else leaky_relu_backward(ts[0], xs[1], slope)


def _log_sigmoid_backward_jvp(F, ts, xs, result, buffer):
    grad_output, self = xs
    st = ts[1]
    return add_tangents(log_sigmoid_backward(tangent_or_zeros(ts, xs, 0), self, buffer),
                 dropped(grad_output, self) if st is None else
                 _log_sigmoid_double_backward(F, st, grad_output, self, buffer))


# Formulas receive (F, g, *saved), the saved values in the row's `saves` order (see recording.Op).
# fmt: off
#            node                forward        saves               formulas, one per input
LOG     = Op("LogBackward0",     cr.log,        ("self",),          (lambda F, g, self: g / self,),
             floats=True, quiet=True, jvp="auto")
SQRT    = Op("SqrtBackward0",    cr.sqrt,       ("result",),        (lambda F, g, result: g / (2 * result),),
             floats=True, quiet=True, jvp="auto")
ABS     = Op("AbsBackward0",     abs_array,     ("self",),          (lambda F, g, self: g * F.sgn(self),), quiet=True,
             jvp="auto")
SIGN    = Op("SignBackward0",    sign_array,    (),                 (lambda F, g: F.zeros_like(g),), jvp="auto")
ANGLE   = Op("AngleBackward0",   angle_array,   ("self",),          (lambda F, g, self: F.zeros_like(g),),
             floats=True, quiet=True, jvp="auto")
SGN     = Op("SgnBackward0",     sign_array,    ("self", "result"), (lambda F, g, self, result: F.zeros_like(g),),
             quiet=True, jvp="auto")
EXP2    = Op("Exp2Backward0",    cr.exp2,       ("result",),        (lambda F, g, result: F.times(g * result, LN2),),
             floats=True, quiet=True, jvp="auto")
EXPM1   = Op("Expm1Backward0",   cr.expm1,      ("result",),        (lambda F, g, result: g * (result + 1),),
             floats=True, quiet=True, jvp="auto")
LOG2    = Op("Log2Backward0",    cr.log2,       ("self",),          (lambda F, g, self: g / F.times(self, LN2),),
             floats=True, quiet=True, jvp="auto")
LOG10   = Op("Log10Backward0",   cr.log10,      ("self",),          (lambda F, g, self: g / F.times(self, LN10),),
             floats=True, quiet=True, jvp="auto")
LOG1P   = Op("Log1PBackward0",   cr.log1p,      ("self",),          (lambda F, g, self: g / (self + 1),),
             floats=True, quiet=True, jvp="auto")
RSQRT   = Op("RsqrtBackward0",   cr.rsqrt,      ("result",),
             (lambda F, g, result: F.times(g, -0.5) * F.pow(result, 3),), floats=True, quiet=True, jvp="auto")
SIN     = Op("SinBackward0",     cr.sin,        ("self",),          (lambda F, g, self: g * F.cos(self),),
             floats=True, quiet=True, jvp="auto")
COS     = Op("CosBackward0",     cr.cos,        ("self",),          (lambda F, g, self: g * -F.sin(self),),
             floats=True, quiet=True, jvp="auto")
TAN     = Op("TanBackward0",     cr.tan,        ("result",),        (lambda F, g, result: g * (1 + F.pow(result, 2)),),
             floats=True, quiet=True, jvp="auto")
ASIN    = Op("AsinBackward0",    cr.asin,       ("self",),
             (lambda F, g, self: g * F.rsqrt(-self * self + 1),), floats=True, quiet=True, jvp="auto")
ACOS    = Op("AcosBackward0",    cr.acos,       ("self",),
             (lambda F, g, self: g * -F.rsqrt(-self * self + 1),), floats=True, quiet=True, jvp="auto")
ATAN    = Op("AtanBackward0",    cr.atan,       ("self",),          (lambda F, g, self: g / (self * self + 1),),
             floats=True, quiet=True, jvp="auto")
ASINH   = Op("AsinhBackward0",   cr.asinh,      ("self",),
             (lambda F, g, self: g * F.rsqrt(F.pow(self, 2) + 1),), floats=True, quiet=True, jvp="auto")
ACOSH   = Op("AcoshBackward0",   cr.acosh,      ("self",),
             (lambda F, g, self: g * F.rsqrt(F.pow(self, 2) - 1),), floats=True, quiet=True, jvp="auto")
ATANH   = Op("AtanhBackward0",   cr.atanh,      ("self",),          (lambda F, g, self: g / (1 - F.pow(self, 2)),),
             floats=True, quiet=True, jvp="auto")
# PyTorch records the in-place forms (asinh_, ...) with nodes whose derivative it has not implemented
ASINH_  = Op("AsinhBackward1",   cr.asinh,      (), (_inplace_unimplemented("asinh"),), floats=True, quiet=True,
             jvp=_inplace_no_tangent("asinh"))
ACOSH_  = Op("AcoshBackward1",   cr.acosh,      (), (_inplace_unimplemented("acosh"),), floats=True, quiet=True,
             jvp=_inplace_no_tangent("acosh"))
ATANH_  = Op("AtanhBackward1",   cr.atanh,      (), (_inplace_unimplemented("atanh"),), floats=True, quiet=True,
             jvp=_inplace_no_tangent("atanh"))
SINH    = Op("SinhBackward0",    cr.sinh,       ("self",),          (lambda F, g, self: g * F.cosh(self),),
             floats=True, quiet=True, jvp="auto")
COSH    = Op("CoshBackward0",    cr.cosh,       ("self",),          (lambda F, g, self: g * F.sinh(self),),
             floats=True, quiet=True, jvp="auto")
TANH    = Op("TanhBackward0",    cr.tanh,       ("result",),        (lambda F, g, result: F.tanh_backward(g, result),),
             floats=True, quiet=True, jvp="auto")
SIGMOID = Op("SigmoidBackward0", sigmoid_array, ("result",),
             (lambda F, g, result: F.sigmoid_backward(g, result),), floats=True, quiet=True, jvp="auto")
ERF     = Op("ErfBackward0",     cr.erf,        ("self",),          (_erf_self,), floats=True, quiet=True,
             jvp="auto")
RELU    = Op("ReluBackward0",    relu_array,    ("result",),
             (lambda F, g, result: F.threshold_backward(g, result, 0),), quiet=True, jvp="auto")
MISH    = Op("MishBackward0",    mish_array,    ("self",),          (_mish_self,), quiet=True, jvp="auto")
SILU    = Op("SiluBackward0",    silu_array,    ("self",),          (lambda F, g, self: F.silu_backward(g, self),),
             quiet=True, jvp="auto")
FLOOR   = Op("FloorBackward0",   floor_array,   (),                 (lambda F, g: F.zeros_like(g),), jvp="auto")
CEIL    = Op("CeilBackward0",    ceil_array,    (),                 (lambda F, g: F.zeros_like(g),), jvp="auto")
ROUND   = Op("RoundBackward0",   round_array,   (),                 (lambda F, g: F.zeros_like(g),), jvp="auto")
TRUNC   = Op("TruncBackward0",   trunc_array,   (),                 (lambda F, g: F.zeros_like(g),), jvp="auto")
FRAC    = Op("FracBackward0",    frac_array,    (),                 (lambda F, g: g,), jvp="auto")
ATAN2   = Op("Atan2Backward0",   cr.atan2,      ("self", "other"),  (_atan2_self,
                                                                     _atan2_other), fits=True, floats=True,
             quiet=True, jvp=_atan2_jvp)
MAXIMUM = Op("MaximumBackward0", maximum_array, ("self", "other"),  (_maximum_self,
                                                                     _maximum_other), fits=True, quiet=True,
             jvp=lambda F, ts, xs, result: _extremum_jvp(F, ts, xs, result, True))
FMAX    = Op("FmaxBackward0",    fmax_array,     ("self", "other"),  (_fmax_self, _fmax_other), fits=True, quiet=True,
             jvp="auto")
FMIN    = Op("FminBackward0",    fmin_array,     ("self", "other"),  (_fmin_self, _fmin_other), fits=True, quiet=True,
             jvp="auto")
MINIMUM = Op("MinimumBackward0", minimum_array, ("self", "other"),  (_minimum_self,
                                                                     _minimum_other), fits=True, quiet=True,
             jvp=lambda F, ts, xs, result: _extremum_jvp(F, ts, xs, result, False))
# fmt: on

# Rows computed by the forward functions below.
# fmt: off
#                     node                   forward  saves                          formulas, one per input
ROUND_DECIMALS   = Op("RoundBackward1",      None,    (),                            (lambda F, g: F.zeros_like(g),),
                      jvp="auto")
MASKED_FILL      = Op("MaskedFillBackward0", None,    ("mask",),
                      (lambda F, g, mask: F.masked_zero(g, mask),), fits=True, saves_tensors=True, jvp="auto")
MASKED_FILL_TENSOR = Op("MaskedFillBackward1", None,  ("mask",),
                        (lambda F, g, mask: F.masked_zero(g, mask),
                         lambda F, g, mask: F.sum(F.getitem(g, mask))),
                        inputs=("self", "value"), fits=True, saves_tensors=True,
                        jvp=lambda F, ts, xs, result, mask: masked_fill(tangent_or_zeros(ts, xs, 0), mask,
                                                                        tangent_or_zeros(ts, xs, 1)))
CLAMP            = Op("ClampBackward1",      None,    ("self", "min", "max"),        (_clamp_self,),
                      fits=True, quiet=True, jvp="auto")
CLAMP_TENSOR     = Op("ClampBackward0",      None,    ("self", "min", "max"),        (_clamp_self,
                                                                                      _clamp_min_bound,
                                                                                      _clamp_max_bound),
                      inputs=("self", "min", "max"), fits=True, quiet=True, jvp=_clamp_tensor_jvp)
CLAMP_MIN        = Op("ClampMinBackward0",   None,    ("self", "min"),
                      (lambda F, g, self, min: _clamp_self(F, g, self, min, None),), fits=True, quiet=True,
                      jvp="auto")
CLAMP_MIN_TENSOR = Op("ClampMinBackward1",   None,    ("self", "min"),
                      (lambda F, g, self, min: F.where(self >= min, g, 0),
                       lambda F, g, self, min: F.where(self < min, g, 0)),
                      inputs=("self", "min"), fits=True, quiet=True,
                      jvp=_clamp_bound_jvp(lambda x, bound: x >= bound))
CLAMP_MAX        = Op("ClampMaxBackward0",   None,    ("self", "max"),
                      (lambda F, g, self, max: _clamp_self(F, g, self, None, max),), fits=True, quiet=True,
                      jvp="auto")
CLAMP_MAX_TENSOR = Op("ClampMaxBackward1",   None,    ("self", "max"),
                      (lambda F, g, self, max: F.where(self <= max, g, 0),
                       lambda F, g, self, max: F.where(self > max, g, 0)),
                      inputs=("self", "max"), fits=True, quiet=True,
                      jvp=_clamp_bound_jvp(lambda x, bound: x <= bound))
WHERE            = Op("WhereBackward0",      None,    ("condition",),
                      (lambda F, g, condition: F.where(condition, g, 0),
                       lambda F, g, condition: F.where(condition, 0, g)), fits=True, saves_tensors=True, quiet=True,
                      jvp=_where_jvp)
LERP             = Op("LerpBackward0",       None,    ("weight",),
                      (lambda F, g, weight: g * (1 - weight),
                       lambda F, g, weight: g * weight), inputs=("self", "end"), fits=True, quiet=True,
                      jvp=_lerp_jvp)
LERP_TENSOR      = Op("LerpBackward1",       None,    ("self", "end", "weight"),
                      (lambda F, g, self, end, weight: g * (1 - weight),
                       lambda F, g, self, end, weight: g * weight,
                       lambda F, g, self, end, weight: F.mul(g, end - self)),
                      inputs=("self", "end", "weight"), fits=True, quiet=True, jvp=_lerp_tensor_jvp,
                      needed_by={"self": "weight", "end": "weight"})
REMAINDER, REMAINDER_TENSOR = _modulo_rows("Remainder", "floor")    # Python's %: the divisor's sign
FMOD, FMOD_TENSOR = _modulo_rows("Fmod", "trunc")                     # C's fmod: the dividend's sign
NOT_IMPLEMENTED  = Op("NotImplemented",      None,    ("name",),                     (_not_implemented,
                                                                                      _not_implemented,
                                                                                      _not_implemented), quiet=True,
                      jvp=NOT_DIFFERENTIABLE)


def not_implemented(out, inputs: tuple, name: str) -> Tensor:
    """A result whose derivative PyTorch does not implement: its node (NotImplemented) raises when the backward
    pass reaches it, and runs first there (autograd.runs_first). As PyTorch's, the node has edges to the inputs
    that require grad only (heaviside's values, a margin loss's incoming gradient: no None edge for them)."""
    kept = tuple([x for x in inputs if x.__class__ is Tensor and x.requires_grad])
    return runs_first(apply(NOT_IMPLEMENTED, out, kept or inputs, (name,)))


DIV_ROUNDING     = Op("DivBackward2",        None,    (),                            (lambda F, g: F.zeros_like(g),
                                                                                      lambda F, g: F.zeros_like(g)),
                      fits=True, quiet=True, jvp=lambda F, ts, xs, result: F.zeros_like(result))
COPY             = Op("CopyBackwards",       None,    (),                            (lambda F, g: F.zeros_like(g),
                                                                                      lambda F, g: g),
                      inputs=("self", "src"), fits=True, quiet=True, jvp=_copy_jvp)
SOFTPLUS         = Op("SoftplusBackward0",   None,    ("self", "beta", "threshold"),
                      (lambda F, g, self, beta, threshold: F.softplus_backward(g, self, beta, threshold),),
                      quiet=True, jvp="auto")
GELU             = Op("GeluBackward0",       None,    ("self", "approximate"),
                      (lambda F, g, self, approximate: F.gelu_backward(g, self, approximate),), quiet=True,
                      jvp="auto")
LEAKY_RELU       = Op("LeakyReluBackward0",  None,    ("self", "slope"),
                      (lambda F, g, self, slope: F.leaky_relu_backward(g, self, slope),), quiet=True, jvp="auto")
LEAKY_RELU_      = Op("LeakyReluBackward1",  None,    ("result", "slope"),           (_leaky_relu_result_grad,),
                      quiet=True, jvp=_copied(_leaky_relu_result_grad))
ELU              = Op("EluBackward0",        None,    ("self", "alpha", "scale", "input_scale"),
                      (lambda F, g, self, alpha, scale, input_scale:
                       F.elu_backward(g, alpha, scale, input_scale, False, self),), quiet=True, jvp="auto")
ELU_             = Op("EluBackward1",        None,    ("result", "alpha", "scale", "input_scale"),
                      (_elu_result_grad,), quiet=True, jvp=_copied(_elu_result_grad))
CELU             = Op("CeluBackward0",       None,    ("self", "alpha"),
                      (lambda F, g, self, alpha: F.elu_backward(g, alpha, 1, _celu_scale(alpha), False, self),),
                      quiet=True, jvp="auto")
CELU_            = Op("CeluBackward1",       None,    ("result", "alpha"),
                      (lambda F, g, result, alpha: _elu_result_grad(F, g, result, alpha, 1, _celu_scale(alpha)),),
                      quiet=True, jvp=_copied(lambda F, g, result, alpha:
                                                  _elu_result_grad(F, g, result, alpha, 1, _celu_scale(alpha))))
HARDTANH         = Op("HardtanhBackward0",   None,    ("self", "min", "max"),
                      (lambda F, g, self, min, max: F.hardtanh_backward(g, self, min, max),), quiet=True, jvp="auto")
LOG_SIGMOID      = Op("LogSigmoidBackward0", None,    ("self", "buffer"),
                      (lambda F, g, self, buffer: F.log_sigmoid_backward(g, self, buffer),), quiet=True, jvp="auto")
HARDSIGMOID      = Op("HardsigmoidBackward0", None,   ("self",),
                      (lambda F, g, self: F.hardsigmoid_backward(g, self),), quiet=True, jvp="auto")
HARDSWISH        = Op("HardswishBackward0",  None,    ("self",),
                      (lambda F, g, self: F.hardswish_backward(g, self),), quiet=True, jvp="auto")
# fmt: on

# Under create_graph the activations' backward kernels are recorded as ops of their own, named as PyTorch
# names them; their inputs are the incoming gradient (grad_output) and the saved input or result, and
# their forward is the kernel on arrays (the `*_array` functions below, which a plain backward runs).
# fmt: off
TANH_BACKWARD        = Op("TanhBackwardBackward0",       None,    ("grad_output", "output"),
                          (lambda F, g, grad_output, output: F.tanh_backward(g, output),
                           lambda F, g, grad_output, output: g * (-2 * output * grad_output)),
                          inputs=("grad_output", "output"), jvp=_tanh_backward_jvp)
SIGMOID_BACKWARD     = Op("SigmoidBackwardBackward0",    None,    ("grad_output", "output"),
                          (lambda F, g, grad_output, output: F.sigmoid_backward(g, output),
                           lambda F, g, grad_output, output: g * grad_output * (-2 * output + 1)),
                          inputs=("grad_output", "output"), jvp=_sigmoid_backward_jvp)
THRESHOLD            = Op("ThresholdBackward0",          None,    ("self", "threshold"),
                          (lambda F, g, self, threshold: F.threshold_backward(g, self, threshold),), jvp="auto")
THRESHOLD_           = Op("ThresholdBackward1",          None,    ("self", "threshold"),
                          (lambda F, g, self, threshold: F.threshold_backward(g, self, threshold),), jvp="auto")
THRESHOLD_BACKWARD   = Op("ThresholdBackwardBackward0",  None,    ("self", "threshold"),
                          (lambda F, g, self, threshold: F.threshold_backward(g, self, threshold),
                           lambda F, g, self, threshold: F.zeros_like(g)), inputs=("grad_output", "self"),
                          jvp=_threshold_backward_jvp)
SOFTPLUS_BACKWARD    = Op("SoftplusBackwardBackward0",   None,    ("grad_output", "self", "beta", "threshold"),
                          (_softplus_backward_grad,
                           _softplus_double_backward), inputs=("grad_output", "self"), jvp=_softplus_backward_jvp)
GELU_BACKWARD        = Op("GeluBackwardBackward0",       None,    ("grad_output", "self", "approximate"),
                          (lambda F, g, grad_output, self, approximate: F.gelu_backward(g, self, approximate),
                           _gelu_double_backward), inputs=("grad_output", "self"), jvp=_gelu_backward_jvp)
LEAKY_RELU_BACKWARD  = Op("LeakyReluBackwardBackward0",  None,    ("self", "slope"),
                          (lambda F, g, self, slope: F.leaky_relu_backward(g, self, slope),
                           lambda F, g, self, slope: F.zeros_like(g)), inputs=("grad_output", "self"),
                          jvp=_leaky_relu_backward_jvp)
ELU_BACKWARD         = Op("EluBackwardBackward0",        None,
                          ("grad_output", "alpha", "scale", "input_scale", "is_result", "x"),
                          (lambda F, g, grad_output, alpha, scale, input_scale, is_result, x:
                           F.elu_backward(g, alpha, scale, input_scale, is_result, x),
                           _elu_double_backward), inputs=("grad_output", "x"), jvp=_elu_backward_jvp)
HARDTANH_BACKWARD    = Op("HardtanhBackwardBackward0",   None,    ("self", "min", "max"),
                          (lambda F, g, self, min, max: F.hardtanh_backward(g, self, min, max),
                           lambda F, g, self, min, max: F.zeros_like(g)), inputs=("grad_output", "self"),
                          jvp=_hardtanh_backward_jvp)
HARDSWISH_BACKWARD   = Op("HardswishBackwardBackward0",  None,    ("grad_output", "self"),
                          (lambda F, g, grad_output, self: F.hardswish_backward(g, self),
                           _hardswish_double_backward), inputs=("grad_output", "self"),
                          jvp=_hardswish_backward_jvp)
LOG_SIGMOID_BACKWARD = Op("LogSigmoidBackwardBackward0", None,    ("grad_output", "self", "buffer"),
                          (lambda F, g, grad_output, self, buffer: F.log_sigmoid_backward(g, self, buffer),
                           _log_sigmoid_double_backward), inputs=("grad_output", "self"),
                          jvp=_log_sigmoid_backward_jvp)
# fmt: on


# ------------------------------------------------------------------------------------------ unary ops

log = unary(LOG, "log")
sqrt = unary(SQRT, "sqrt")
abs = unary(ABS, "abs")
sign = unary(SIGN, "sign")
angle = unary(ANGLE, "angle")
sgn = unary(SGN, "sgn")
exp2 = unary(EXP2, "exp2")
expm1 = unary(EXPM1, "expm1")
log2 = unary(LOG2, "log2")
log10 = unary(LOG10, "log10")
log1p = unary(LOG1P, "log1p")
rsqrt = unary(RSQRT, "rsqrt")
sin = unary(SIN, "sin")
cos = unary(COS, "cos")
tan = unary(TAN, "tan")
asin = unary(ASIN, "asin")
acos = unary(ACOS, "acos")
atan = unary(ATAN, "atan")
asinh = unary(ASINH, "asinh")
acosh = unary(ACOSH, "acosh")
atanh = unary(ATANH, "atanh")


def _inplace_row(op, name: str):
    """The function of an in-place row without a derivative: not one the row tests generate gradient checks
    from (tests/test_ops_elementwise.py checks PyTorch's refusal instead)."""
    function = unary(op, name)
    del function.op
    return function


asinh_inplace = _inplace_row(ASINH_, "asinh")
acosh_inplace = _inplace_row(ACOSH_, "acosh")
atanh_inplace = _inplace_row(ATANH_, "atanh")
sinh = unary(SINH, "sinh")
cosh = unary(COSH, "cosh")
tanh = unary(TANH, "tanh")
sigmoid = unary(SIGMOID, "sigmoid")
erf = unary(ERF, "erf")
relu = unary(RELU, "relu")
silu = unary(SILU, "silu")
mish = unary(MISH, "mish")
floor = unary(FLOOR, "floor")
ceil = unary(CEIL, "ceil")
trunc = unary(TRUNC, "trunc")
frac = unary(FRAC, "frac")
_round_half_even = unary(ROUND, "round")
maximum = binary(MAXIMUM, "maximum")
minimum = binary(MINIMUM, "minimum")
fmax = binary(FMAX, "fmax")
fmin = binary(FMIN, "fmin")
atan2 = binary(ATAN2, "atan2")


# ------------------------------------------------------------------------- activation backward kernels
# PyTorch's CPU kernels for the activations' backward, on arrays (a plain backward pass) and, for create_graph,
# as recorded ops whose nodes carry PyTorch's *BackwardBackward0 names.

@half_in_float
def tanh_backward_array(g, y):
    """grad * (1 - y*y), with 1 - y*y one fused multiply-add (PyTorch's kernel, vector body and tail)."""
    return g * one_minus_square(y)


def sigmoid_backward_array(g, y):
    """grad * (1 - y) * y; float16 in float16 arithmetic throughout (PyTorch's kernel has no float path for it),
    bfloat16 in float, rounded once (its kernel has one: every bfloat16 input agrees)."""
    if y.dtype.kind == "V":
        y32 = y.astype(_F32)
        return (np.asanyarray(g).astype(_F32) * (_F32.type(1) - y32) * y32).astype(y.dtype)
    return g * (1 - y) * y


_SAME_SIZE_INT = {2: np.int16, 4: np.int32, 8: np.int64}


def threshold_backward_array(g, x, threshold):
    """g where x > threshold (a nan x passes it, as in PyTorch), +0 elsewhere: g's bits and-ed with a mask
    of all ones or none, which keeps a -0, an inf or a nan gradient exactly and is faster than np.where
    or a multiply (whose -0 and nan would need fixing)."""
    as_int = _SAME_SIZE_INT[g.itemsize]
    mask = np.less_equal(x, number_operand(x, threshold)).astype(as_int)      # 1 where the gradient is dropped
    mask -= 1                                               # then 0 there, and all ones where it passes
    return np.bitwise_and(g.view(as_int), mask).view(g.dtype)


@half_in_float
def softplus_backward_array(g, x, beta, threshold):
    t = x.dtype.type
    scaled = x * t(beta)
    z = cr.exp(scaled)
    return np.where(scaled > t(threshold), g, g * z / (z + t(1)))


@half_in_float
def gelu_backward_array(g, x, approximate):
    """PyTorch's kernel, with its fused multiply-adds: x + kappa*x^3, 1 - tanh^2, 1 + 3*kappa*x^2 and the
    final left' + right' (tanh form); cdf + x*pdf (erf form)."""
    t = x.dtype.type
    if approximate == "tanh":
        x_sq = x * x
        x_cube = x_sq * x
        inner = t(GELU_TANH_BETA) * fma(t(GELU_KAPPA), x_cube, x)
        tanh_inner = cr.tanh(inner)
        left = t(0.5) * x
        left_derivative = t(0.5) * (t(1) + tanh_inner)
        tanh_derivative = one_minus_square(tanh_inner)
        inner_derivative = t(GELU_TANH_BETA) * fma(t(3) * t(GELU_KAPPA), x_sq, t(1))
        return g * fma(left * tanh_derivative, inner_derivative, left_derivative)
    cdf = t(0.5) * (t(1) + cr.erf(x * t(SQRT1_2)))
    pdf = t(GELU_BETA) * cr.exp(x * x * t(-0.5))
    return g * fma(x, pdf, cdf)


@half_in_float
def leaky_relu_backward_array(g, x, slope):
    return np.where(x > 0, g, g * slope)


@half_in_float
def _elu_coefficients(t, alpha, scale, input_scale):
    """The elu kernels' negcoef (alpha * scale, a product in the opmath type), poscoef and negiptcoef."""
    return t(t(alpha) * t(scale)), t(scale), t(input_scale)


def elu_backward_array(g, alpha, scale, input_scale, is_result, x):
    """elu_backward's kernel: where x <= 0, grad * negiptcoef * (x + negcoef) from the result, or
    grad * negiptcoef * negcoef * exp(x * negiptcoef) from the input; grad * poscoef elsewhere (float16 in
    float, rounded once)."""
    if x.dtype.char in "eE":
        return elu_backward_array(np.asanyarray(g).astype(_F32), alpha, scale, input_scale, is_result,
                                  x.astype(_F32)).astype(x.dtype)
    t = x.dtype.type
    neg, pos, ipt = _elu_coefficients(t, alpha, scale, input_scale)
    positive = g if pos == 1 else g * pos
    if is_result:
        return np.where(x <= 0, g * ipt * (x + neg), positive)
    return np.where(x <= 0, g * ipt * neg * cr.exp(x if ipt == 1 else x * ipt), positive)


def hardtanh_backward_array(g, x, min, max):
    return np.where((x <= min) | (x >= max), g.dtype.type(0), g)


@half_in_float
def hardsigmoid_backward_array(g, x):
    """PyTorch's kernel multiplies by the float 1/6 strictly inside (-3, 3)."""
    t = g.dtype.type
    return np.where((x > -3) & (x < 3), g * t(np.float32(1 / 6)), t(0))


@half_in_float
def hardswish_backward_array(g, x):
    """0 up to -3, grad * (x / 3 + 1/2) below 3, else grad (from 3 on, and for NaN, as PyTorch's kernel)."""
    t = g.dtype.type
    return np.where(x <= -3, t(0), np.where(x < 3, g * (x / t(3) + t(0.5)), g))


@half_in_float
def silu_backward_array(g, x):
    """grad * s * (1 + x * (1 - s)), s = sigmoid(x), the bracket one fused multiply-add."""
    one = x.dtype.type(1)
    sigmoid = sigmoid_array(x)
    return g * sigmoid * fma(x, one - sigmoid, one)


@half_in_float
def log_sigmoid_backward_array(g, x, buffer):
    ratio = buffer / (1 + buffer)
    return np.where(x < 0, 1 - ratio, ratio) * g        # (max_deriv - sign * ratio) * grad


def tanh_backward(grad_output: Tensor, output: Tensor) -> Tensor:
    out = tanh_backward_array(grad_output._a, output._a)
    return apply(TANH_BACKWARD, out, (grad_output, output))


def sigmoid_backward(grad_output: Tensor, output: Tensor) -> Tensor:
    out = sigmoid_backward_array(grad_output._a, output._a)
    return apply(SIGMOID_BACKWARD, out, (grad_output, output))


def threshold_backward(grad_output: Tensor, self: Tensor, threshold) -> Tensor:
    out = threshold_backward_array(grad_output._a, self._a, threshold)
    return apply(THRESHOLD_BACKWARD, out, (grad_output, self), (threshold,))


def softplus_backward(grad_output: Tensor, self: Tensor, beta, threshold) -> Tensor:
    out = softplus_backward_array(grad_output._a, self._a, beta, threshold)
    return apply(SOFTPLUS_BACKWARD, out, (grad_output, self), (beta, threshold))


def gelu_backward(grad_output: Tensor, self: Tensor, approximate) -> Tensor:
    out = gelu_backward_array(grad_output._a, self._a, approximate)
    return apply(GELU_BACKWARD, out, (grad_output, self), (approximate,))


def leaky_relu_backward(grad_output: Tensor, self: Tensor, slope) -> Tensor:
    out = leaky_relu_backward_array(grad_output._a, self._a, slope)
    return apply(LEAKY_RELU_BACKWARD, out, (grad_output, self), (slope,))


def elu_backward(grad_output: Tensor, alpha, scale, input_scale, is_result, self_or_result: Tensor) -> Tensor:
    out = elu_backward_array(grad_output._a, alpha, scale, input_scale, is_result, self_or_result._a)
    return apply(ELU_BACKWARD, out, (grad_output, self_or_result), (alpha, scale, input_scale, is_result))


def hardtanh_backward(grad_output: Tensor, self: Tensor, min, max) -> Tensor:
    out = hardtanh_backward_array(grad_output._a, self._a, min, max)
    return apply(HARDTANH_BACKWARD, out, (grad_output, self), (min, max))


def hardsigmoid_backward(grad_output: Tensor, self: Tensor) -> Tensor:
    """Under create_graph: PyTorch gives hardsigmoid_backward no derivative (a NotImplemented node)."""
    out = hardsigmoid_backward_array(grad_output._a, self._a)
    return not_implemented(out, (grad_output, self), "hardsigmoid_backward")


def hardswish_backward(grad_output: Tensor, self: Tensor) -> Tensor:
    out = hardswish_backward_array(grad_output._a, self._a)
    return apply(HARDSWISH_BACKWARD, out, (grad_output, self))


def silu_backward(grad_output: Tensor, self: Tensor) -> Tensor:
    """PyTorch's infinitely differentiable form, used when grad mode is on: composed of recorded ops."""
    s = sigmoid(self)
    return grad_output * s * (1 + self * (1 - s))


def log_sigmoid_backward(grad_output: Tensor, self: Tensor, buffer: Tensor) -> Tensor:
    out = log_sigmoid_backward_array(grad_output._a, self._a, buffer._a)
    return apply(LOG_SIGMOID_BACKWARD, out, (grad_output, self), (buffer,))


# ------------------------------------------------------------------------------------ argument checks

def _expect_tensor(value, fn: str, arg: str, position: int | None):
    if value.__class__ is not Tensor:
        where = f" (position {position})" if position is not None else ""
        raise TypeError(f"{fn}(): argument '{arg}'{where} must be Tensor, not {type(value).__name__}")


def _expect_number(value, fn: str, arg: str, position: int | None = None):
    """`value` as a Number argument (a 0-d tensor without grad counts as its value), or PyTorch's TypeError."""
    return number_arg(value, fn, arg, position)


def _expect_some_tensor(a, b, fn: str):
    if a.__class__ is not Tensor and b.__class__ is not Tensor:
        raise TypeError(f"{fn}() received an invalid combination of arguments - got ({type(a).__name__}, "
                        f"{type(b).__name__}), but expected one of:\n"
                        " * (Tensor input, Tensor other, *, Tensor out = None)\n"
                        " * (Number self, Tensor other)\n"
                        " * (Tensor input, Number other)\n")


def _not_for(a: Tensor, kernel: str, kinds: str):
    _refuse(a._a, kernel, kinds)


def _broadcast_shapes(*shapes) -> tuple:
    """The broadcast of several shapes, failing with PyTorch's message for the first operand that does not fit."""
    out = ()
    for s in shapes:
        try:
            out = np.broadcast_shapes(out, s)
        except ValueError:
            raise broadcast_error(out, s) from None
    return out


def _cast(v, npdt):
    """A tensor's array or a Python number, in the dtype an op computes in."""
    if v.__class__ is Tensor:
        return v._a if v._a.dtype == npdt else v._a.astype(npdt)
    return npdt.type(v)


# ------------------------------------------------------------------------------------------ rounding

def round(a: Tensor, decimals=0, name="round", by_decimals: bool = False) -> Tensor:
    """`by_decimals`: round.decimals even for 0 decimals (torch.special.round: RoundBackward1)."""
    if decimals.__class__ is Tensor:
        decimals = index_arg(decimals)      # a 0-d integer tensor is read as its value
    if decimals.__class__ is not int:
        raise TypeError(f"{name}(): argument 'decimals' must be int, not {type(decimals).__name__}")
    int_param(decimals)
    if decimals == 0 and not by_decimals:
        return _round_half_even(a)
    _not_for(a, "round_vml_cpu" if decimals == 0 else "round_cpu", "iub")     # (0 decimals: the plain kernel)
    x = a._a
    # PyTorch's kernel: 10 ** |decimals| as a double (inf past 1e308), cast to the op's compute type
    # (float for float16 and float32, double for float64), then rint(x * s) / s, or rint(x / s) * s
    # for negative decimals, in that type.
    exponent = -decimals if decimals < 0 else decimals
    opmath = np.float64 if x.dtype == np.float64 else np.float32
    with np.errstate(over="ignore", invalid="ignore"):
        scale = opmath(10.0 ** exponent if exponent <= 308 else math.inf)
        xo = x if x.dtype == opmath else x.astype(opmath)
        out = np.rint(xo / scale) * scale if decimals < 0 else np.rint(xo * scale) / scale
    return apply(ROUND_DECIMALS, out if out.dtype == x.dtype else out.astype(x.dtype), (a,))


def isnan(a: Tensor) -> Tensor:
    x = a._a
    return Tensor(np.isnan(x) if x.dtype.kind in "fV" else np.zeros(x.shape, dtype=np.bool_))


def isinf(a: Tensor) -> Tensor:
    x = a._a
    return Tensor(np.isinf(x) if x.dtype.kind in "fV" else np.zeros(x.shape, dtype=np.bool_))


def isfinite(a: Tensor) -> Tensor:
    x = a._a
    return Tensor(np.isfinite(x) if x.dtype.kind in "fV" else np.ones(x.shape, dtype=np.bool_))


def square(a: Tensor) -> Tensor:
    """PyTorch's square is pow(x, 2): arith's PowBackward0 row."""
    return power(a, 2)


# ------------------------------------------------------------------------------------------ clamp

def _type_name(v) -> str:
    return "Tensor" if v.__class__ is Tensor else type(v).__name__


def _bound_numbers(min, max) -> tuple:
    """Clamp bounds where one is a number: PyTorch's parser reads a 0-d tensor that does not require grad
    as a number too."""
    bounds = []
    for v in (min, max):
        if v is None or isinstance(v, (int, float)):
            bounds.append(v)
        elif v.__class__ is Tensor and v._a.ndim == 0 and not v.requires_grad:
            bounds.append(v._a.item())
        else:
            given = [u for u in (min, max) if u is not None]
            got = ", ".join(_type_name(u) for u in given)
            marks = ", ".join(f"!{_type_name(u)}!" for u in given)
            why = f"      didn't match because some of the arguments have invalid types: ({marks})\n" \
                if len(given) > 1 else ""
            raise TypeError(f"clamp() received an invalid combination of arguments - got ({got}), but expected "
                            f"one of:\n * (Tensor min = None, Tensor max = None)\n{why}"
                            f" * (Number min = None, Number max = None)\n{why}")
    return tuple(bounds)


def _at_least(p, q):
    """max(p, q) as clamp takes it: a nan bound (like a nan input) gives nan."""
    return np.where((p < q) | (q != q), q, p)


def _at_most(p, q):
    return np.where((p > q) | (q != q), q, p)


def clamp(a: Tensor, min=None, max=None) -> Tensor:
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if (min.__class__ is Tensor or min is None) and (max.__class__ is Tensor or max is None):
        return _clamp_tensors(a, min, max)
    min, max = _bound_numbers(min, max)
    scalar_param(min, max)
    npdt = result_dtype(a, min, max).np
    for bound in (min, max):
        if bound is not None:
            checked_scalar(bound, npdt)
    x = _cast(a, npdt)
    out = x
    if min is not None:
        out = _at_least(out, npdt.type(min))
    if max is not None:
        out = _at_most(out, npdt.type(max))
    return apply(CLAMP, out, (a,), (min, max), (x,))


def _clamp_tensors(a: Tensor, min, max) -> Tensor:
    npdt = result_dtype(a, min, max).np
    shape = _broadcast_shapes(*[t._a.shape for t in (a, min, max) if t is not None])
    x = _cast(a, npdt)
    lo = None if min is None else _cast(min, npdt)
    hi = None if max is None else _cast(max, npdt)
    out = np.broadcast_to(x, shape)
    if lo is not None:
        out = _at_least(out, lo)
    if hi is not None:
        out = _at_most(out, hi)
    return apply(CLAMP_TENSOR, laid_out(out, x, lo, hi), (a, min, max), (), (x, lo, hi))


def _clamp_one_side(a: Tensor, bound, fn: str, keep_below: bool, row: Op, tensor_row: Op) -> Tensor:
    if bound.__class__ is not Tensor and not isinstance(bound, (int, float)):
        tname = type(bound).__name__
        raise TypeError(f"{fn}() received an invalid combination of arguments - got ({tname}), but expected one of:\n"
                        f" * (Tensor {fn[6:]})\n"
                        f"      didn't match because some of the arguments have invalid types: (!{tname}!)\n"
                        f" * (Number {fn[6:]})\n"
                        f"      didn't match because some of the arguments have invalid types: (!{tname}!)\n")
    if bound.__class__ is not Tensor:
        checked_scalar(bound, result_dtype(a, bound).np)
    x, y = operands(a, bound)
    out = compute(_at_most if keep_below else _at_least, x, y)
    if bound.__class__ is not Tensor:       # the bound as given (the node shows it so; numpy compares a
        return apply(row, out, (a,), (bound,), (x,))        # Python number in the array's dtype, as PyTorch)
    return apply(tensor_row, out, (a, bound), (), (x, y))


def clamp_min(a: Tensor, min) -> Tensor:
    return _clamp_one_side(a, min, "clamp_min", False, CLAMP_MIN, CLAMP_MIN_TENSOR)


def clamp_max(a: Tensor, max) -> Tensor:
    return _clamp_one_side(a, max, "clamp_max", True, CLAMP_MAX, CLAMP_MAX_TENSOR)


def check_number_bounds_in_place(a: Tensor, *bounds):
    """clamp_ with number bounds on an integer tensor: PyTorch names the output type in C++ words here."""
    numbers = [b for b in bounds if b is not None and b.__class__ is not Tensor]
    if numbers and len(numbers) == len([b for b in bounds if b is not None]) and a._a.dtype.kind in "iub":
        dt = result_dtype(a, *numbers)
        if dt.category == dtypes.FLOAT:
            raise RuntimeError(f"result type {type_word(np.empty(0, dt.np))} can't be cast to the desired output "
                               f"type {_scalar_name(a._a)}")


# ------------------------------------------------------------------------------------------ binary ops

def _integer_zero_division(x, y):
    if np.result_type(x, y).kind in "iu" and not np.all(y):
        raise RuntimeError("ZeroDivisionError")


def _tensor_inputs(a, b) -> tuple:
    return tuple(t for t in (a, b) if t.__class__ is Tensor)


def floor_divide(a, b) -> Tensor:
    """`a // b` and torch.floor_divide (either side may be a number)."""
    return floor_divide_named(a, b, "floor_divide")


def floor_divide_(a, b) -> Tensor:
    return floor_divide_named(a, b, "floor_divide_")


def floor_divide_named(a, b, name) -> Tensor:
    """Floor division: PyTorch records no derivative, only a node that refuses (named after the ATen
    op `name`, `floor_divide_` for the in-place form)."""
    x, y = operands(a, b)
    if x.dtype == np.bool_:
        raise NotImplementedError("\"div_floor_cpu\" not implemented for 'Bool'")
    _integer_zero_division(x, y)
    out = compute(div_floor_array, x, y)
    out = np.asanyarray(out)
    return not_implemented(out, _tensor_inputs(a, b), name)


def div_rounding(a, b, rounding_mode) -> Tensor:
    """a / b rounded towards zero ("trunc") or down ("floor"); PyTorch's derivative of both is zero."""
    if rounding_mode.__class__ is not str:
        raise TypeError("div(): argument 'rounding_mode' must be str")
    if rounding_mode != "trunc" and rounding_mode != "floor":
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                           f"'{rounding_mode}'")
    x, y = operands(a, b)
    if x.dtype == np.bool_:
        raise NotImplementedError(f"\"div_{rounding_mode}_cpu\" not implemented for 'Bool'")
    _integer_zero_division(x, y)
    out = np.asanyarray(compute(div_floor_array if rounding_mode == "floor" else _div_trunc_array, x, y))
    return apply(DIV_ROUNDING, out, (a, b))


def _div_trunc_array(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    if x.dtype.kind in "fV":
        with np.errstate(all="ignore"):
            return np.trunc(x / y)
    q = np.abs(x) // np.abs(y)          # integers: exact, where x / y would round through float64
    return np.where((x < 0) != (y < 0), -q, q).astype(x.dtype)


def remainder(a, b) -> Tensor:
    """`a % b` with Python's sign rule; `number % tensor` has no derivative in PyTorch."""
    _expect_some_tensor(a, b, "remainder")
    x, y = operands(a, b)
    if x.dtype == np.bool_:
        raise NotImplementedError("\"remainder_cpu\" not implemented for 'Bool'")
    _integer_zero_division(x, y)
    out = np.asanyarray(compute(remainder_array, x, y))
    if a.__class__ is not Tensor:
        return not_implemented(out, (b,), "remainder")
    if b.__class__ is not Tensor:
        return apply(REMAINDER, out, (a,))
    return apply(REMAINDER_TENSOR, out, (a, b), (), (x, y))


def fmod(a, b) -> Tensor:
    """torch.fmod: C's fmod, the result with the dividend's sign (FmodBackward0 for a number, FmodBackward1
    for a tensor divisor)."""
    if a.__class__ is not Tensor:
        raise TypeError(f"fmod() received an invalid combination of arguments - got ({type(a).__name__}, "
                        f"{type(b).__name__}), but expected one of:\n"
                        " * (Tensor input, Tensor other, *, Tensor out = None)\n"
                        " * (Tensor input, Number other, *, Tensor out = None)\n")
    x, y = operands(a, b)
    if np.result_type(x, y) == np.bool_:
        x, y = x.astype(np.int64), y.astype(np.int64)
    _integer_zero_division(x, y)
    with np.errstate(all="ignore"):
        out = np.asanyarray(compute(np.fmod, x, y))
    if b.__class__ is not Tensor:
        return apply(FMOD, out, (a,))
    return apply(FMOD_TENSOR, out, (a, b), (), (x, y))


def _logical(fn, name):
    def op(a: Tensor, other, position=1) -> Tensor:
        _expect_tensor(other, name, "other", position)
        if STATE.meta_seen:             # (no node: apply does not see the inputs' devices)
            same_device((a, other))
        return Tensor(compute(fn, a._a != 0, other._a != 0))
    op.__name__ = name
    return op


logical_and = _logical(np.logical_and, "logical_and")
logical_or = _logical(np.logical_or, "logical_or")
logical_xor = _logical(np.logical_xor, "logical_xor")


def logical_not(a: Tensor) -> Tensor:
    return Tensor(np.logical_not(a._a))


# ------------------------------------------------------------------------------------------ where, lerp, copy

def where(condition, input=None, other=None) -> Tensor | tuple:
    """torch.where(condition, input, other); with the condition alone, the indices where it holds."""
    if input is None and other is None:
        return tuple(Tensor(i.astype(np.int64)) for i in np.nonzero(condition._a if condition._a.ndim else
                                                                     condition._a.reshape(1)))
    if condition.__class__ is not Tensor or not (input.__class__ is Tensor or isinstance(input, (int, float))) \
            or not (other.__class__ is Tensor or isinstance(other, (int, float))):
        raise TypeError(_where_overload_message(condition, input, other))
    c = condition._a
    if STATE.meta_seen:                 # the condition's device too, which apply does not see
        same_device((condition, input, other))
    if c.dtype != np.bool_:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor with dtype "
                           f"{type_word(c)}")
    if input.__class__ is not Tensor and other.__class__ is not Tensor:
        _where_unsigned(input, other)
    npdt = result_dtype(input, other).np
    for v in (input, other):
        if v.__class__ is not Tensor:
            checked_scalar(v, npdt)
    x, y = _cast(input, npdt), _cast(other, npdt)
    if c.__class__ is not np.ndarray:       # a meta condition: PyTorch's meta kernel's words for a mismatch
        from gradcli.engine import meta
        meta.broadcast_shapes([c.shape, np.shape(x), np.shape(y)])
    _broadcast_shapes(c.shape, np.shape(x), np.shape(y))
    out = np.asanyarray(np.where(c, x, y))
    if out.dtype != npdt:
        out = out.astype(npdt)
    return apply(WHERE, laid_out(out, c, x, y), (input, other), (condition,))


def _where_unsigned(input, other) -> None:
    """where() with two numbers makes each a 0-d tensor: an int from 2**63 on is a uint64 one there, which
    PyTorch's promotion refuses beside an int or a bool (a float goes)."""
    def kind(v):
        if v.__class__ is bool:
            return "Bool"
        if v.__class__ is int:
            return "UInt64" if 2**63 <= v < 2**64 else "Long"
        return None
    kinds = (kind(input), kind(other))
    if "UInt64" in kinds and None not in kinds:
        raise RuntimeError("Promotion for uint16, uint32, uint64 types is not supported, attempted to promote "
                           f"{kinds[0]} and {kinds[1]}")


def _where_overload_message(*args) -> str:
    """PyTorch's argument-parser message for where(condition, input, other) with unusable types."""
    def line(kinds):
        marks = []
        for v, kind in zip(args, kinds):
            ok = v.__class__ is Tensor if kind == "Tensor" else isinstance(v, (int, float))
            marks.append(_type_name(v) if ok else f"!{_type_name(v)}!")
        return f"      didn't match because some of the arguments have invalid types: ({', '.join(marks)})\n"
    return (f"where() received an invalid combination of arguments - got ({', '.join(map(_type_name, args))}), "
            "but expected one of:\n"
            " * (Tensor condition)\n"
            " * (Tensor condition, Tensor input, Tensor other, *, Tensor out = None)\n"
            " * (Tensor condition, Number self, Tensor other)\n" + line(("Tensor", "Number", "Tensor")) +
            " * (Tensor condition, Tensor input, Number other)\n" + line(("Tensor", "Tensor", "Number")) +
            " * (Tensor condition, Number self, Number other)\n" + line(("Tensor", "Number", "Number")))


def lerp(a: Tensor, end, weight=None) -> Tensor:
    if end.__class__ is not Tensor or not (weight.__class__ is Tensor or isinstance(weight, (int, float))):
        got = ", ".join(_type_name(v) for v in (a, end, weight) if v is not None)
        raise TypeError(f"lerp() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                        " * (Tensor input, Tensor end, Tensor weight, *, Tensor out = None)\n"
                        " * (Tensor input, Tensor end, Number weight, *, Tensor out = None)\n")
    scalar_param(weight)
    x = a._a
    if end._a.dtype != x.dtype:
        raise RuntimeError(f"expected dtype {_scalar_name(x)} for `end` but got dtype {_scalar_name(end._a)}")
    tensor_weight = weight.__class__ is Tensor
    if tensor_weight and weight._a.ndim and weight._a.dtype != x.dtype:
        raise RuntimeError(f"expected dtype {_scalar_name(x)} for `weight` but got dtype {_scalar_name(weight._a)}")
    _not_for(a, "lerp_kernel_tensor" if tensor_weight else "lerp_kernel_scalar", "iub")
    y = end._a
    w = _cast(weight, x.dtype)
    shape = _broadcast_shapes(x.shape, y.shape, np.shape(w))
    # PyTorch's kernel: start + w * (end - start) for small weights, end - (end - start) * (1 - w) otherwise,
    # each a fused multiply-add: in float32, the product is exact in float64 and the sum rounds once there
    half = x.dtype if x.dtype.char in "eE" else None
    operands = x, y, w
    if half is not None:
        # float16 (bfloat16): the kernels compute in float (a number weight read as a float) and round once
        x, y = x.astype(np.float32), y.astype(np.float32)
        w = w.astype(np.float32) if tensor_weight else np.float32(weight)
    diff = y - x
    rest = x.dtype.type(1) - w
    if x.dtype == np.float32:
        wide = diff.astype(np.float64)
        small = (np.float64(w) * wide + x).astype(np.float32) if np.ndim(w) == 0 else \
            (w.astype(np.float64) * wide + x).astype(np.float32)
        large = (y - wide * np.asanyarray(rest, dtype=np.float64)).astype(np.float32)
    elif x.dtype == np.float64:
        small = fma(np.asanyarray(w, dtype=np.float64), diff, x)
        large = fma(-diff, np.asanyarray(rest, dtype=np.float64), y)
    else:
        small = x + w * diff
        large = y - diff * rest
    out = np.where(np.abs(w) < 0.5, small, large)
    if half is not None:
        out = out.astype(half)
    x, y, w = operands
    out = laid_out(np.array(np.broadcast_to(out, shape)), x, y, w)
    if not tensor_weight:
        return apply(LERP, out, (a, end), (weight,))
    return apply(LERP_TENSOR, out, (a, end, weight), (), (x, y, w))


def copy(a: Tensor, src) -> Tensor:
    """The out-of-place twin of `a.copy_(src)`: src broadcast to a's shape and cast to a's dtype."""
    if src.__class__ is not Tensor and not isinstance(src, (int, float)):
        raise TypeError(f"copy_(): argument 'other' (position 1) must be Tensor, not {type(src).__name__}")
    x = a._a
    s = src._a if src.__class__ is Tensor else np.asanyarray(src)
    shape = _broadcast_shapes(x.shape, s.shape)
    if shape != x.shape:
        raise RuntimeError(f"output with shape {list(x.shape)} doesn't match the broadcast shape {list(shape)}")
    out = np.empty_like(x)
    np.copyto(out, s, casting="unsafe")
    if x.dtype.kind not in "fV":
        return Tensor(out)      # into an integer tensor: no gradient flows, even from a float src
    return apply(COPY, out, (a, src))


# ------------------------------------------------------------------------------------------ activations

def _float_only(a: Tensor, kernel: str):
    _not_for(a, kernel, "iub")


def _kernel_param(value, x: np.ndarray, opmath: bool = True) -> None:
    """A Scalar parameter as the kernel converts it, with its overflow check: to the op's math type (float
    for float16 and float32: leaky_relu's slope, elu's alpha, softplus's beta) or, where the kernel reads it
    in the tensor's own type (hardtanh's bounds, hardshrink's lambda), to that."""
    if x.dtype.kind in "fV":
        checked_scalar(value, _F32 if opmath and x.dtype.char in "eE" else x.dtype)


def softplus(a: Tensor, beta=1, threshold=20) -> Tensor:
    beta = _expect_number(beta, "softplus", "beta")
    threshold = _expect_number(threshold, "softplus", "threshold")
    scalar_param(beta, threshold)
    _float_only(a, "softplus_cpu")
    _kernel_param(beta, a._a)
    _kernel_param(threshold, a._a)
    return apply(SOFTPLUS, _softplus_values(a._a, beta, threshold), (a,), (beta, threshold))


@half_in_float
def _softplus_values(x, beta, threshold):
    t = x.dtype.type
    scaled = x * t(beta)
    return np.where(scaled > t(threshold), x, cr.log1p(cr.exp(scaled)) / t(beta))


def gelu(a: Tensor, *, approximate="none") -> Tensor:
    if not isinstance(approximate, str):
        raise TypeError(f"gelu(): argument 'approximate' must be str, not {type(approximate).__name__}")
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    _float_only(a, "GeluKernelImpl")
    return apply(GELU, _gelu_values(a._a, approximate), (a,), (approximate,))


@half_in_float
def _gelu_values(x, approximate):
    t = x.dtype.type
    if approximate == "tanh":
        inner = t(GELU_TANH_BETA) * fma(t(GELU_KAPPA), x * x * x, x)
        out = t(0.5) * x * (t(1) + cr.tanh(inner))
    elif x.dtype == np.float32 and x.size > 1 and x.flags.c_contiguous:
        # PyTorch's vectorised float32 kernel (contiguous, more than one element): x * (1 + erf) before
        # the halving (so 2e38 overflows), and its erf approximation is nan at inf
        with np.errstate(invalid="ignore", over="ignore"):
            out = x * (t(1) + cr.erf(x * t(SQRT1_2))) * t(0.5)
        out[x == np.inf] = np.nan
    else:
        out = x * t(0.5) * (t(1) + cr.erf(x * t(SQRT1_2)))
    return out


@half_in_float
def _leaky_relu_values(x: np.ndarray, slope) -> np.ndarray:
    return np.where(x > 0, x, x * x.dtype.type(slope))


def _parametric_activation(a: Tensor, param, fn: str, kernel: str, param_name: str, values, row: Op,
                           more: tuple = ()) -> Tensor:
    """leaky_relu / elu and their in-place forms: PyTorch's out-of-place node saves the input, the
    in-place one (LeakyReluBackward1, EluBackward1) the result. `more`: elu's scale and input_scale."""
    param = _expect_number(param, fn, param_name, 2)
    scalar_param(param)
    _float_only(a, kernel)
    x = a._a
    _kernel_param(param, x)
    out = values(x, param, *more)
    return apply(row, out, (a,), (param, *more))


def leaky_relu(a: Tensor, negative_slope=0.01) -> Tensor:
    return _parametric_activation(a, negative_slope, "leaky_relu", "leaky_relu_cpu", "negative_slope",
                                  _leaky_relu_values, LEAKY_RELU)


def leaky_relu_result(a: Tensor, negative_slope=0.01) -> Tensor:
    """What `leaky_relu_` writes."""
    return _parametric_activation(a, negative_slope, "leaky_relu_", "leaky_relu_cpu", "negative_slope",
                                  _leaky_relu_values, LEAKY_RELU_)


@half_in_float
def _elu_values(x: np.ndarray, alpha, scale=1, input_scale=1) -> np.ndarray:
    """elu's kernel: expm1(x * negiptcoef) * negcoef where x <= 0, x * poscoef elsewhere."""
    neg, pos, ipt = _elu_coefficients(x.dtype.type, alpha, scale, input_scale)
    return np.where(x <= 0, cr.expm1(x if ipt == 1 else x * ipt) * neg, x if pos == 1 else x * pos)


def elu(a: Tensor, alpha=1.0) -> Tensor:
    return _parametric_activation(a, alpha, "elu", "elu_cpu", "alpha", _elu_values, ELU, (1, 1))


def elu_result(a: Tensor, alpha=1.0) -> Tensor:
    """What `elu_` writes."""
    return _parametric_activation(a, alpha, "elu_", "elu_cpu", "alpha", _elu_values, ELU_, (1, 1))


SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def selu(a: Tensor, inplace=False) -> Tensor:
    """F.selu: elu with SELU's alpha and scale (EluBackward0, or EluBackward1 in place)."""
    if a.__class__ is not Tensor:
        raise TypeError(f"selu(): argument 'input' (position 1) must be Tensor, not {type(a).__name__}")
    if inplace:
        return a._inplace_unary(lambda t: _parametric_activation(t, SELU_ALPHA, "selu_", "elu_cpu", "alpha",
                                                                 _elu_values, ELU_, (SELU_SCALE, 1)))
    return _parametric_activation(a, SELU_ALPHA, "selu", "elu_cpu", "alpha", _elu_values, ELU, (SELU_SCALE, 1))


def celu(a: Tensor, alpha=1.0, inplace=False) -> Tensor:
    """F.celu: elu(x, alpha, scale 1, input_scale 1 / alpha), PyTorch's own node CeluBackward0."""
    if a.__class__ is not Tensor:
        raise TypeError(f"celu(): argument 'input' (position 1) must be Tensor, not {type(a).__name__}")
    alpha = _expect_number(alpha, "celu_" if inplace else "celu", "alpha", 2)
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    if inplace:
        return a._inplace_unary(lambda t: _parametric_activation(t, alpha, "celu_", "elu_cpu", "alpha",
                                                                 lambda x, p: _elu_values(x, p, 1, 1 / float(p)),
                                                                 CELU_))
    return _parametric_activation(a, alpha, "celu", "elu_cpu", "alpha",
                                  lambda x, p: _elu_values(x, p, 1, 1 / float(p)), CELU)


def hardtanh(a: Tensor, min_val=-1.0, max_val=1.0) -> Tensor:
    min_val = _expect_number(min_val, "hardtanh", "min_val", 2)
    max_val = _expect_number(max_val, "hardtanh", "max_val", 3)
    if min_val > max_val:           # F.hardtanh's own check, in Python before PyTorch's parser reads the bounds
        raise ValueError("min_val cannot be greater than max_val")
    scalar_param(min_val, max_val)
    x = a._a
    if x.dtype == np.bool_:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if x.dtype.kind == "u" and (min_val < 0 or max_val < 0):
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    _kernel_param(min_val, x, opmath=False)
    _kernel_param(max_val, x, opmath=False)
    t = x.dtype.type
    out = np.where(x < t(min_val), t(min_val), x)
    out = np.where(out > t(max_val), t(max_val), out)
    return apply(HARDTANH, out, (a,), (min_val, max_val))


def hardsigmoid(a: Tensor) -> Tensor:
    """clamp(x + 3, 0, 6) / 6, in the input's dtype, as PyTorch's kernel computes it."""
    _float_only(a, "hardsigmoid_cpu")
    return apply(HARDSIGMOID, _hardsigmoid_values(a._a), (a,))


@half_in_float
def _hardsigmoid_values(x):
    t = x.dtype.type
    return np.minimum(np.maximum(x + t(3), t(0)), t(6)) / t(6)


def hardswish(a: Tensor) -> Tensor:
    """x * clamp(x + 3, 0, 6) / 6, multiplied before the division as PyTorch's kernel does."""
    _float_only(a, "hardswish_cpu")
    return apply(HARDSWISH, _hardswish_values(a._a), (a,))


@half_in_float
def _hardswish_values(x):
    t = x.dtype.type
    return x * np.minimum(np.maximum(x + t(3), t(0)), t(6)) / t(6)


def functional_hardsigmoid(input: Tensor, inplace=False) -> Tensor:
    return input._inplace_unary(hardsigmoid) if inplace else hardsigmoid(input)


def functional_hardswish(input: Tensor, inplace=False) -> Tensor:
    return input._inplace_unary(hardswish) if inplace else hardswish(input)


def logsigmoid(a: Tensor) -> Tensor:
    _float_only(a, "log_sigmoid_cpu")
    out, buffer = _log_sigmoid_values(a._a)
    return apply(LOG_SIGMOID, out, (a,), (Tensor(buffer),))


@half_in_float
def _log_sigmoid_values(x):
    buffer = contiguous(cr.exp(-np.abs(x)))       # the kernel writes contiguous result and buffer
    return contiguous(np.minimum(x, x.dtype.type(0)) - cr.log1p(buffer)), buffer


# ------------------------------------------------------------------------------------------ masks and bits

_MASK_DTYPE_WORDS = {"int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
                     "uint8": "unsigned char", "float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16"}


def masked_fill(a: Tensor, mask, value, inplace: bool = False) -> Tensor:
    if mask.__class__ is not Tensor:
        raise TypeError(f"masked_fill() received an invalid combination of arguments - got (Tensor, "
                        f"{type(mask).__name__}, {type(value).__name__})")
    x, m = a._a, mask._a
    if not inplace and m.shape != x.shape:
        try:            # the out-of-place form expands (mask, self) before masked_fill_ checks anything
            np.broadcast_shapes(m.shape, x.shape)
        except ValueError:
            raise broadcast_error(m.shape, x.shape) from None
    tensor_value = value.__class__ is Tensor
    if tensor_value and value._a.ndim:
        raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value._a.ndim} dimension(s).")
    if m.dtype != np.bool_:
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{_MASK_DTYPE_WORDS[m.dtype.name]}")
    fill = value._a if tensor_value else checked_scalar(value, x.dtype)
    try:
        out = np.where(m, np.asanyarray(fill, dtype=x.dtype), x)
    except ValueError:                  # the out-of-place form expands (mask, self) first, in that order
        raise (broadcast_error(x.shape, m.shape) if inplace else broadcast_error(m.shape, x.shape)) from None
    # a mask that broadcasts beyond the input gives a larger result, as PyTorch's out-of-place form does
    # (masked_fill_ refuses it: Tensor._inplace); the gradient is reduced to the input's shape centrally
    # PyTorch fills a contiguous clone of the (expanded) input, whatever the input's layout
    if not out.flags.c_contiguous:
        out = np.ascontiguousarray(out)
    m = Tensor(np.broadcast_to(m, out.shape))
    if tensor_value:        # a tensor value gets the masked elements' gradient (MaskedFillBackward1)
        if not inplace and value.requires_grad and STATE.recording and x.dtype.kind not in "fV":
            # an integer result recorded for a value that requires grad: autograd's own refusal (the in-place
            # form records it, as PyTorch's does)
            raise RuntimeError(f"Autograd not support dtype: {type_word(x)}")
        return apply(MASKED_FILL_TENSOR, out, (a, value), (m,))
    return apply(MASKED_FILL, out, (a,), (m,))


def _bitwise(fn, name):
    def op(a, b):
        if STATE.meta_seen:             # (no node: apply does not see the inputs' devices)
            same_device((a, b))
        x, y = operands(a, b)
        if x.dtype.kind in "fV":
            raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{type_word(x)}'")
        return Tensor(compute(fn, x, y))
    op.__name__ = name
    return op


bitwise_and = _bitwise(np.bitwise_and, "bitwise_and")
bitwise_or = _bitwise(np.bitwise_or, "bitwise_or")
bitwise_xor = _bitwise(np.bitwise_xor, "bitwise_xor")


def _shift(name, left):
    def op(a, b):
        x, y = operands(a, b)
        if x.dtype.kind in "fbV":
            raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{type_word(x)}'")
        return Tensor(_shift_array(x, y, left))
    op.__name__ = name
    return op


def _shift_array(x: np.ndarray, y: np.ndarray, left: bool) -> np.ndarray:
    """PyTorch's CPU shifts: a count that is negative or at least the width gives 0 (and -1 for a
    negative number shifted right), where numpy's result is the C compiler's undefined behaviour."""
    bits = x.dtype.itemsize * 8
    out_of_range = (y < 0) | (y >= bits)
    count = np.where(out_of_range, 0, y).astype(x.dtype)
    if left:
        out = np.left_shift(x, count)
        fill = 0
    else:
        out = np.right_shift(x, count)
        fill = np.where(x < 0, -1, 0) if x.dtype.kind == "i" else 0
    return np.asanyarray(np.where(out_of_range, fill, out), dtype=x.dtype)


lshift = _shift("lshift", True)
rshift = _shift("rshift", False)


def bitwise_not(a: Tensor) -> Tensor:
    x = a._a
    if x.dtype.kind in "fV":
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return Tensor(np.logical_not(x) if x.dtype == np.bool_ else np.invert(x))



# ------------------------------------------------------------------------- torch.nn.functional forms

def functional_relu(input: Tensor, inplace=False) -> Tensor:
    return input._inplace_unary(relu) if inplace else relu(input)


def functional_leaky_relu(input: Tensor, negative_slope=0.01, inplace=False) -> Tensor:
    if inplace:
        return functional_leaky_relu_(input, negative_slope)
    return leaky_relu(input, negative_slope)


def functional_leaky_relu_(input: Tensor, negative_slope=0.01) -> Tensor:
    negative_slope = _expect_number(negative_slope, "leaky_relu_", "negative_slope", 2)   # before the in-place checks
    return input._inplace_unary(lambda t: leaky_relu_result(t, negative_slope))


def _threshold(a: Tensor, threshold, value, fn: str, row: Op) -> Tensor:
    """threshold's kernel: `value` where x <= threshold, x elsewhere (NaN kept)."""
    if a.__class__ is not Tensor:
        raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, not {type(a).__name__}")
    threshold = _expect_number(threshold, fn, "threshold", 2)
    value = _expect_number(value, fn, "value", 3)
    scalar_param(threshold, value)
    x = a._a
    _not_for(a, "threshold_cpu", "b")
    _kernel_param(threshold, x)
    _kernel_param(value, x)
    t = x.dtype.type
    out = np.where(x <= t(threshold), t(value), x).astype(x.dtype, copy=False)
    return apply(row, out, (a,), (threshold,))


def torch_threshold(input: Tensor, threshold, value) -> Tensor:
    """torch.threshold / F.threshold: ThresholdBackward0, which saves the input."""
    return _threshold(input, threshold, value, "threshold", THRESHOLD)


def torch_threshold_(input: Tensor, threshold, value) -> Tensor:
    """torch.threshold_: in place, ThresholdBackward1 (saving the input as it was)."""
    if input.__class__ is not Tensor:
        raise TypeError(f"threshold_(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    threshold = _expect_number(threshold, "threshold_", "threshold", 2)        # before the in-place checks
    value = _expect_number(value, "threshold_", "value", 3)
    return input._inplace_unary(lambda t: _threshold(t, threshold, value, "threshold_", THRESHOLD_))


def functional_threshold(input: Tensor, threshold, value, inplace=False) -> Tensor:
    return torch_threshold_(input, threshold, value) if inplace else torch_threshold(input, threshold, value)


def functional_elu(input: Tensor, alpha=1.0, inplace=False) -> Tensor:
    return functional_elu_(input, alpha) if inplace else elu(input, alpha)


def functional_elu_(input: Tensor, alpha=1.0) -> Tensor:
    alpha = _expect_number(alpha, "elu_", "alpha", 2)       # parsed before the in-place checks
    return input._inplace_unary(lambda t: elu_result(t, alpha))


def functional_hardtanh(input: Tensor, min_val=-1.0, max_val=1.0, inplace=False) -> Tensor:
    if min_val > max_val:           # F.hardtanh's own check, in Python before PyTorch's parser reads the bounds
        raise ValueError("min_val cannot be greater than max_val")
    if inplace:
        return functional_hardtanh_(input, min_val, max_val)
    return hardtanh(input, min_val, max_val)


def functional_hardtanh_(input: Tensor, min_val=-1.0, max_val=1.0) -> Tensor:
    min_val = _expect_number(min_val, "hardtanh_", "min_val", 2)     # parsed before the in-place checks
    max_val = _expect_number(max_val, "hardtanh_", "max_val", 3)
    return input._inplace_unary(lambda t: hardtanh(t, min_val, max_val))


def functional_relu6(input: Tensor, inplace=False) -> Tensor:
    return functional_hardtanh(input, 0.0, 6.0, inplace)


def functional_silu(input: Tensor, inplace=False) -> Tensor:
    return input._inplace_unary(silu) if inplace else silu(input)


# ------------------------------------------------------------------------------------------------ glu

def _halves(x, dim: int):
    n = x.shape[dim] // 2
    index = [slice(None)] * x.ndim
    first, second = list(index), list(index)
    first[dim], second[dim] = slice(0, n), slice(n, 2 * n)
    return x[tuple(first)], x[tuple(second)]


def glu_backward_array(g: np.ndarray, x: np.ndarray, dim: int) -> np.ndarray:
    """glu_backward_cpu: the first half's gradient sigmoid(b) * grad, the second's ((1 - s) * s) * a * grad,
    with s = sigmoid(b) as at::sigmoid computes it."""
    a, b = _halves(x, dim)
    sig = sigmoid_array(b)
    if x.dtype.char in "eE":    # sigmoid stored as half; the fused kernel in float; the first half's mul_ in half
        sf = sig.astype(_F32)
        second = ((_F32.type(1) - sf) * sf * a.astype(_F32) * g.astype(_F32)).astype(x.dtype)
        return np.concatenate((sig * g, second), axis=dim)
    one = x.dtype.type(1)
    return np.concatenate((sig * g, (one - sig) * sig * a * g), axis=dim)


def _glu_self(F, g, self, dim):
    if not F.tensors:
        return glu_backward_array(g, self, dim % self.ndim)
    return apply(GLU_BACKWARD, glu_backward_array(g._a, self._a, dim % self._a.ndim), (g, self), (dim,))


def _on_tensors(formula):
    """A formula (F, gg, grad_output, self, dim) written with tensor ops, run in a plain backward pass on
    arrays (unrecorded) too."""
    def run(F, gg, grad_output, self, dim):
        if F.tensors:
            return formula(F, gg, grad_output, self, dim)
        from gradcli.engine import autograd
        with autograd.no_grad():
            return formula(F, Tensor(gg), Tensor(grad_output), Tensor(self), dim)._a
    run.__name__ = run.__qualname__ = formula.__name__
    run.__doc__ = formula.__doc__
    return run


@_on_tensors
def _glu_double_self(F, gg, grad_output, self, dim):
    """glu_double_backward (FunctionsManual.cpp), op for op."""
    from gradcli.engine import ops
    d = dim % self.ndim
    n = self.shape[d] // 2
    first, second = ops.narrow(self, d, 0, n), ops.narrow(self, d, n, n)
    sig = ops.sigmoid(second)
    one_sub_sig = 1 - sig
    sig_one_sub_sig = sig * one_sub_sig
    gg_first, gg_second = ops.narrow(gg, d, 0, n), ops.narrow(gg, d, n, n)
    gg_second_times_first = gg_second * first
    gi_first = gg_second * grad_output * sig_one_sub_sig
    second_order = sig_one_sub_sig * one_sub_sig - sig * sig_one_sub_sig
    gi_second = gg_second_times_first * grad_output * second_order + gg_first * grad_output * sig_one_sub_sig
    return ops.cat([gi_first, gi_second], d)


@_on_tensors
def _glu_double_grad_output(F, gg, grad_output, self, dim):
    """glu_double_backward_grad_output: grad * glu_backward(ones, input, dim), its two halves added."""
    from gradcli.engine import ops
    d = dim % self.ndim
    n = self.shape[d] // 2
    ones = Tensor(np.ones(grad_output.shape, self._a.dtype))
    tmp = gg * apply(GLU_BACKWARD, glu_backward_array(ones._a, self._a, d), (ones, self), (dim,))
    return ops.narrow(tmp, d, 0, n) + ops.narrow(tmp, d, n, n)


# the rows here, after their formulas
GLU     = Op("GluBackward0",     None,          ("self", "dim"),    (_glu_self,), quiet=True,
             jvp=lambda F, ts, xs, result, dim: _glu_jvp(ts[0], xs[0], result, dim))
GLU_BACKWARD = Op("GluBackwardBackward0", None, ("grad_output", "self", "dim"),
                  (_glu_double_grad_output, _glu_double_self), quiet=True, inputs=("grad_output", "self"),
                  jvp=lambda F, ts, xs, result, dim: _glu_backward_jvp(F, ts, xs, dim))


def glu(input: Tensor, dim=-1) -> Tensor:
    """F.glu: a * sigmoid(b), the halves of `dim` (GluBackward0, saving self and the dim as given)."""
    if input.__class__ is not Tensor:
        raise TypeError(f"glu(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    x = input._a
    if x.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = index_arg(dim)
    wrapped = d + x.ndim if d < 0 else d
    if not 0 <= wrapped < x.ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-x.ndim}, {x.ndim - 1}], but "
                         f"got {d})")
    if x.shape[wrapped] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {wrapped} is size {x.shape[wrapped]}")
    _refuse(x, "glu_cpu", "iub")
    a, b = _halves(x, wrapped)
    return apply(GLU, half_in_float(lambda p, q: p * sigmoid_array(q))(a, b) if x.dtype.char in "eE"
                 else a * sigmoid_array(b), (input,), (d,))


# ------------------------------------------------------------------------------------- hard/softshrink

def _shrink_mask(x: np.ndarray, lambd) -> np.ndarray:
    """Where the shrink functions pass the gradient: outside [-lambd, lambd] (NaN included)."""
    return ~((x >= -lambd) & (x <= lambd))


def _shrink_backward(g, x, lambd):
    if isinstance(g, np.ndarray):
        return np.where(_shrink_mask(x, lambd), g, x.dtype.type(0)).astype(x.dtype, copy=False)
    return apply(SHRINK_BACKWARD[0], np.where(_shrink_mask(x._a, lambd), g._a, x._a.dtype.type(0)).astype(
        x._a.dtype, copy=False), (g, x), (lambd,))


def _shrink_double(index):
    def grad_output(F, gg, self, lambd):
        if isinstance(gg, np.ndarray):
            return _shrink_backward(gg, self, lambd)
        return apply(SHRINK_BACKWARD[index], np.where(_shrink_mask(self._a, lambd), gg._a, self._a.dtype.type(0)),
                     (gg, self), (lambd,))
    return grad_output


def _shrink_zero(F, gg, self, lambd):
    return F.zeros_like(self)


HARDSHRINK_BACKWARD = Op("HardshrinkBackwardBackward0", None, ("self", "lambd"),
                         (_shrink_double(0), _shrink_zero), quiet=True, inputs=("grad_out", "self"),
                         jvp=lambda F, ts, xs, result, lambd: None if ts[0] is None else _shrink_backward(ts[0], xs[1], lambd))
SOFTSHRINK_BACKWARD = Op("SoftshrinkBackwardBackward0", None, ("self", "lambd"),
                         (_shrink_double(1), _shrink_zero), quiet=True, inputs=("grad_output", "self"),
                         jvp=lambda F, ts, xs, result, lambd: None if ts[0] is None else _shrink_backward(ts[0], xs[1], lambd))
SHRINK_BACKWARD = (HARDSHRINK_BACKWARD, SOFTSHRINK_BACKWARD)


def _shrink_grad(index):
    def formula(F, g, self, lambd):
        mask = _shrink_mask(self if isinstance(self, np.ndarray) else self._a, lambd)
        if isinstance(g, np.ndarray):
            return np.where(mask, g, self.dtype.type(0)).astype(self.dtype, copy=False)
        return apply(SHRINK_BACKWARD[index], np.where(mask, g._a, self._a.dtype.type(0)), (g, self), (lambd,))
    return formula


HARDSHRINK = Op("HardshrinkBackward0", None, ("self", "lambd"), (_shrink_grad(0),), quiet=True,
                jvp=lambda F, ts, xs, result, lambd: _shrink_grad(0)(F, ts[0], xs[0], lambd))
SOFTSHRINK = Op("SoftshrinkBackward0", None, ("self", "lambd"), (_shrink_grad(1),), quiet=True,
                jvp=lambda F, ts, xs, result, lambd: _shrink_grad(1)(F, ts[0], xs[0], lambd))


def _shrink_lambd(name: str, lambd):
    if lambd.__class__ is Tensor:
        lambd = number_arg(lambd, name, "lambd")
    if lambd.__class__ not in (int, float, bool):
        raise TypeError(f"{name}(): argument 'lambd' (position 2) must be Number, not {type(lambd).__name__}")
    return lambd


def hardshrink(input: Tensor, lambd=0.5) -> Tensor:
    """F.hardshrink: 0 inside [-lambd, lambd], x elsewhere (NaN kept); HardshrinkBackward0."""
    if input.__class__ is not Tensor:
        raise TypeError(f"hardshrink(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    lambd = _shrink_lambd("hardshrink", lambd)
    x = input._a
    _refuse(x, "hardshrink_cpu", "iub")
    _kernel_param(lambd, x, opmath=False)
    out = np.where((x >= -lambd) & (x <= lambd), x.dtype.type(0), x).astype(x.dtype, copy=False)
    return apply(HARDSHRINK, out, (input,), (lambd,))


def softshrink(input: Tensor, lambd=0.5) -> Tensor:
    """F.softshrink: x - lambd above lambd, x + lambd below -lambd, x * 0 between (keeping a negative zero);
    SoftshrinkBackward0."""
    if input.__class__ is not Tensor:
        raise TypeError(f"softshrink(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    lambd = _shrink_lambd("softshrink", lambd)
    x = input._a
    _refuse(x, "softshrink_check", "iub")
    limit = float(dtypes.finfo(x.dtype).max)
    if not 0 <= lambd <= limit:
        raise RuntimeError(f"lambda must be in range [0, {limit:g}] for input dtype {type_word(x)}, but found "
                           f"{float(lambd):g}")
    dt = x.dtype.type
    if x.dtype.char in "eE":
        xf = x.astype(_F32)
        out = np.where(xf > lambd, xf - _F32.type(lambd), np.where(xf < -lambd, xf + _F32.type(lambd), xf * 0))
        out = out.astype(x.dtype)
    else:
        out = np.where(x > lambd, x - dt(lambd), np.where(x < -lambd, x + dt(lambd), x * dt(0)))
    return apply(SOFTSHRINK, np.asanyarray(out, dtype=x.dtype), (input,), (lambd,))


def functional_mish(input: Tensor, inplace=False) -> Tensor:
    """F.mish: MishBackward0, or mish_ in place."""
    return input._inplace_unary(mish) if inplace else mish(input)


def functional_softsign(input) -> Tensor:
    """PyTorch composes it in Python, so its graph is DivBackward0 over AddBackward0 over AbsBackward0."""
    return input / (input.abs() + 1)


# --------------------------------------------------------- logit, xlogy, logaddexp, hypot, copysign, ...
# The array kernels first (a plain backward runs them too), then the formulas, the rows and the op functions.

INV_LN2 = 1.0 / LN2                 # logaddexp2's 1 / ln 2, a double PyTorch casts to the kernel's type


def _logit_bounds(t, eps):
    """The kernel's clamp bounds for `eps` read in the tensor's type: None without one (or a negative one)."""
    if eps is None or t(eps) < 0:
        return None
    lo = t(eps)
    return lo, t(1) - lo


def logit_array(x: np.ndarray, eps) -> np.ndarray:
    """log(x / (1 - x)), x first clamped to [eps, 1 - eps] when eps >= 0 (PyTorch's kernel: the quotient in
    the tensor's type, then its vector log)."""
    t = x.dtype.type
    bounds = _logit_bounds(t, eps)
    if bounds is not None:
        lo, hi = bounds
        x = np.where(x < lo, lo, np.where(x > hi, hi, x))       # (a nan stays nan)
    return cr.log(x / (t(1) - x))


def logit_backward_array(g: np.ndarray, x: np.ndarray, eps) -> np.ndarray:
    """logit_backward's kernel: g / (x * (1 - x)) inside [0, 1] (nan outside) without eps, inside
    [eps, 1 - eps] (0 outside) with one; in the tensor's own type. At 0 and 1 its scalar loop's g * inf
    (+inf for x = -0.0, where the vector loop's division gives -inf)."""
    t = x.dtype.type
    bounds = _logit_bounds(t, eps)
    lo, hi = (t(0), t(1)) if bounds is None else bounds
    inside = np.where((x == 0) | (x == 1), g * t(np.inf), g / (x * (t(1) - x)))
    return np.where((x >= lo) & (x <= hi), inside, t(np.nan) if bounds is None else t(0))


def _x_log_array(log, edge):
    """xlogy's and xlog1py's kernel: nan where y is nan, 0 where x is 0, else x * log(y) (log1p), the
    logarithm rounded to the tensor's type before the product (float16 too, as c10::Half's log)."""
    def kernel(x, y):
        x, y = np.asanyarray(x), np.asanyarray(y)
        out = x * log(y)
        return np.where(y != y, y, np.where(x == 0, x.dtype.type(0), out))
    kernel.__name__ = kernel.__qualname__ = edge
    return kernel


xlogy_array = _x_log_array(cr.log, "xlogy")
xlog1py_array = _x_log_array(cr.log1p, "xlog1py")


@half_in_float
def logaddexp_array(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """max(a, b) + log1p(exp(-|a - b|)), a itself where a and b are the same infinity; float16 in float."""
    _refuse(a, "logaddexp_cpu", "iub")
    out = np.maximum(a, b) + cr.log1p(cr.exp(-np.abs(a - b)))
    return np.where(np.isinf(a) & (a == b), a, out)


@half_in_float
def logaddexp2_array(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """max(a, b) + log1p(exp2(-|a - b|)) / ln 2, the product by 1 / ln 2 fused into the sum (PyTorch's
    kernel as GCC contracts it), a itself where a and b are the same infinity; float16 in float."""
    _refuse(a, "logaddexp2_cpu", "iub")
    m = np.maximum(a, b)
    tail = np.asanyarray(cr.log1p(cr.exp2(-np.abs(a - b))))
    out = fma(tail, np.full(tail.shape, a.dtype.type(INV_LN2)), np.asanyarray(m))
    return np.where(np.isinf(a) & (a == b), a, out)


def hypot_array(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    _refuse(a, "hypot_cpu", "iub")
    return cr.hypot(a, b)


@half_in_float
def sinc_array(x: np.ndarray) -> np.ndarray:
    """sin(pi x) / (pi x), 1 at 0: pi and the product in the kernel's math type (float for float16)."""
    t = x.dtype.type
    product = t(math.pi) * x
    return np.where(x == 0, t(1), cr.sin(product) / product)


def signbit(a: Tensor) -> Tensor:
    """Whether the sign bit is set (-0.0 and -nan included); integers: whether negative."""
    x = a._a
    return Tensor(np.signbit(x) if x.dtype.kind in "fV" else np.asanyarray(x < 0) if x.dtype.kind == "i"
                  else np.zeros(x.shape, np.bool_))


# formulas (derivatives.yaml's, in its order of operations)

def _one_minus(F, x):
    """`1.0 - x` as a formula's C++ writes it: ATen subtracts from a wrapped number (SubBackward0, not the
    RsubBackward1 of Python's `1 - t`)."""
    if F.tensors:
        from gradcli.engine.ops.arith import sub
        return sub(Tensor(np.ones((), x._a.dtype)), x)
    return x.dtype.type(1) - x


def _logit_self(F, g, self, eps):
    """logit_backward (the kernel) in a plain backward; under create_graph PyTorch's differentiable form:
    where(lo <= self <= hi, grad / (self * (1 - self)), 0), or nan outside [0, 1] without eps."""
    if not F.tensors:
        return logit_backward_array(g, self, eps)
    lo, hi = (0.0, 1.0) if eps is None else (eps, 1.0 - eps)
    inside = logical_and(self >= lo, self <= hi)
    fill = Tensor(np.full((), np.nan if eps is None else 0.0, self._a.dtype))
    return where(inside, g / (self * _one_minus(F, self)), fill)


def _x_log_self(kernel_name: str, limit: float):
    """xlogy's (xlog1py's) gradient for self: xlogy(grad, other), 0 where self == 0 and other <= limit."""
    def formula(F, g, self, other):
        return F.masked_zero(getattr(F, kernel_name)(g, other), (self == 0) & (other <= limit))
    return formula


def _x_log_other(plus_one: bool):
    """grad * self / other (xlog1py: / (other + 1)); self a Python number in the Scalar_Self form."""
    def formula(F, g, self, other):
        top = F.times(g, self) if self.__class__ in (int, float, bool) else g * self
        return top / (other + 1 if plus_one else other)
    return formula


def _x_log_self_number(kernel_name: str, limit: float):
    """The Scalar_Other form's gradient for self: xlogy(grad, other), masked where self == 0 unless
    other > limit."""
    def formula(F, g, self, other):
        value = getattr(F, kernel_name)(g, other)
        return value if other > limit else F.masked_zero(value, self == 0)
    return formula


def _x_log_jvp(kernel_name: str, limit: float, plus_one: bool):
    """xlogy(self_t, other_p).masked_fill((self_p == 0) & (other_p <= limit), 0) + other_t * self_p / other_p
    (other_p + 1 for xlog1py)."""
    def jvp(F, ts, xs, result):
        st, ot = ts
        x, y = xs
        first = None if st is None else F.masked_zero(getattr(F, kernel_name)(st, y), (x == 0) & (y <= limit))
        second = dropped(x, y) if ot is None else ot * x / (y + 1 if plus_one else y)
        return add_tangents(first, second, result._a.shape)
    return jvp


def _logaddexp_grad(flip: bool, two: bool):
    """grad / (1 + exp(other - self)) for self (exp(self - other) for other); logaddexp2: pow(2, ...)."""
    def formula(F, g, self, other):
        d = self - other if flip else other - self
        return g / (1 + (F.pow(2, d) if two else F.exp(d)))
    return formula


def _logaddexp_jvp(two: bool):
    def jvp(F, ts, xs, result):
        st, ot = ts
        x, y = xs
        grow = (lambda d: F.pow(2, d)) if two else F.exp
        first = dropped(x, y) if st is None else st / (1 + grow(y - x))
        second = dropped(x, y) if ot is None else ot / (1 + grow(x - y))
        return add_tangents(first, second, result._a.shape)
    return jvp


def _hypot_jvp(F, ts, xs, result):
    """self_t * self_p / result + other_t * other_p / result."""
    st, ot = ts
    x, y = xs
    first = dropped(x, result) if st is None else st * x / result
    second = dropped(y, result) if ot is None else ot * y / result
    return add_tangents(first, second, result._a.shape)


def _copysign_self(F, g, self, result):
    """copysign_tensor_self_backward: grad * (result / self), the ratio 0 where self is 0."""
    return g * F.masked_zero(result / self, self == 0)


def _copysign_jvp(F, ts, xs, result):
    """copysign_tensor_self_backward(self_t, self_p, result): other's tangent does not count (without
    self's, the product with PyTorch's zero tensor is zeros)."""
    if ts[0] is None:
        return F.zeros_like(result)
    return _copysign_self(F, ts[0], xs[0], result)


def _sinc_self(F, g, self):
    """sinc_backward: grad * ((self*pi * cos(self*pi) - sin(self*pi)) / (self * self * pi)), 0 where that
    denominator is 0."""
    self_pi = F.times(self, math.pi)
    self_squared_pi = F.times(self * self, math.pi)
    out = g * ((self_pi * F.cos(self_pi) - F.sin(self_pi)) / self_squared_pi)
    return F.where(self_squared_pi == 0, F.zeros_like(g), out)


def _erfc_self(F, g, self):
    # -2 / sqrt(pi) * exp(-self.pow(2)) * grad, as erf's formula
    return F.times(F.exp(-F.pow(self, 2)), -TWO_OVER_SQRT_PI) * g


# fmt: off
#                   node                         forward            saves                         formulas, one per input
ERFC          = Op("ErfcBackward0",              cr.erfc,           ("self",),                    (_erfc_self,),
                   floats=True, quiet=True, jvp="auto")
SINC          = Op("SincBackward0",              sinc_array,        ("self",),                    (_sinc_self,),
                   floats=True, quiet=True, jvp="auto")
LOGIT         = Op("LogitBackward0",             None,              ("self", "eps"),              (_logit_self,),
                   quiet=True, jvp="auto")
NAN_TO_NUM    = Op("NanToNumBackward0",          None,              ("self",),
                   (lambda F, g, self: g * F.isfinite(self),), quiet=True, jvp="auto")
XLOGY         = Op("XlogyBackward0",             None,              ("self", "other"),            (_x_log_self("xlogy", 0.0),
                                                                                                   _x_log_other(False)),
                   fits=True, quiet=True, jvp=_x_log_jvp("xlogy", 0.0, False))
XLOGY_SELF_NUMBER  = Op("XlogyBackward1",        None,              ("self", "other"),            (_x_log_other(False),),
                        inputs=("other",), quiet=True, jvp="auto")
XLOGY_OTHER_NUMBER = Op("XlogyBackward2",        None,              ("self", "other"),            (_x_log_self_number("xlogy", 0.0),),
                        inputs=("self",), quiet=True, jvp="auto")
XLOG1PY       = Op("SpecialXlog1PyBackward0",    None,              ("self", "other"),            (_x_log_self("xlog1py", -1.0),
                                                                                                   _x_log_other(True)),
                   fits=True, quiet=True, jvp=_x_log_jvp("xlog1py", -1.0, True))
XLOG1PY_SELF_NUMBER  = Op("SpecialXlog1PyBackward1", None,          ("self", "other"),            (_x_log_other(True),),
                          inputs=("other",), quiet=True, jvp="auto")
XLOG1PY_OTHER_NUMBER = Op("SpecialXlog1PyBackward2", None,          ("self", "other"),            (_x_log_self_number("xlog1py", -1.0),),
                          inputs=("self",), quiet=True, jvp="auto")
LOGADDEXP     = Op("LogaddexpBackward0",         logaddexp_array,   ("self", "other"),            (_logaddexp_grad(False, False),
                                                                                                   _logaddexp_grad(True, False)),
                   fits=True, quiet=True, jvp=_logaddexp_jvp(False))
LOGADDEXP2    = Op("Logaddexp2Backward0",        logaddexp2_array,  ("self", "other"),            (_logaddexp_grad(False, True),
                                                                                                   _logaddexp_grad(True, True)),
                   fits=True, quiet=True, jvp=_logaddexp_jvp(True))
HYPOT         = Op("HypotBackward0",             hypot_array,       ("self", "other", "result"),
                   (lambda F, g, self, other, result: g * self / result,
                    lambda F, g, self, other, result: g * other / result), fits=True, quiet=True, jvp=_hypot_jvp)
COPYSIGN      = Op("CopysignBackward0",          None,              ("self", "result"),           (_copysign_self,
                                                                                                   lambda F, g, self, result: F.zeros_like(g)),
                   fits=True, quiet=True, jvp=_copysign_jvp)
COPYSIGN_NUMBER = Op("CopysignBackward1",        None,              ("self", "result"),           (_copysign_self,),
                     quiet=True, jvp="auto")
# fmt: on

erfc = unary(ERFC, "erfc")
sinc = unary(SINC, "sinc")
logaddexp = binary(LOGADDEXP, "logaddexp")
logaddexp2 = binary(LOGADDEXP2, "logaddexp2")
hypot = binary(HYPOT, "hypot")


def expit(input) -> Tensor:
    """torch.special.expit: sigmoid (SigmoidBackward0)."""
    _expect_tensor(input, "special_expit", "input", 1)
    return sigmoid(input)


def logit(a: Tensor, eps=None, name: str = "logit", position: int | None = 2) -> Tensor:
    """log(x / (1 - x)), x clamped to [eps, 1 - eps] when eps is given; integers in the default float dtype.
    `position`: eps's in PyTorch's argument error (None when given by keyword)."""
    if eps is not None:
        eps = number_arg(eps, name, "eps", position, word="float")
        if eps.__class__ is not float:
            eps = float(eps)
    x = a._a
    if x.dtype.kind not in "fV":
        x = x.astype(dtypes.default_float.np)
    if eps is not None:
        checked_scalar(eps, x.dtype)        # the kernel reads eps in the tensor's type, with the overflow check
    return apply(LOGIT, logit_array(x, eps), (a,), (eps,), (x,))


def nan_to_num(a: Tensor, nan=0.0, posinf=None, neginf=None, name: str = "nan_to_num", first: int = 2,
               keywords=()) -> Tensor:
    """nan, +inf and -inf replaced (by 0, the dtype's largest and lowest values unless given); integer and
    bool tensors copied as they are. `first`: nan's position in PyTorch's argument errors; `keywords`: the
    arguments given by keyword (no position there)."""
    values = []
    for i, (arg, v) in enumerate((("nan", nan), ("posinf", posinf), ("neginf", neginf))):
        position = None if arg in keywords else first + i
        values.append(None if v is None else float(number_arg(v, name, arg, position, word="float")))
    nan, posinf, neginf = values
    x = a._a
    if x.dtype.kind not in "fV":
        return apply(NAN_TO_NUM, x.copy(), (a,))
    t = x.dtype.type
    info = dtypes.finfo(x.dtype)
    out = np.where(x == np.inf, t(posinf) if posinf is not None else info.max, x)      # (static_cast: a value
    out = np.where(x == -np.inf, t(neginf) if neginf is not None else info.min, out)   # past the range is inf)
    out = np.where(x != x, t(nan if nan is not None else 0.0), out)
    return apply(NAN_TO_NUM, np.asanyarray(out, x.dtype), (a,))


_X_LOG_FORMS = (" * (Tensor input, Tensor other, *, Tensor out = None)\n"
                " * (Number self, Tensor other, *, Tensor out = None)\n"
                " * (Tensor input, Number other, *, Tensor out = None)\n")


_ABSENT = object()       # an argument not given (PyTorch's parser names only those given)


def _x_log(rows: tuple, kernel, name: str):
    """xlogy / special.xlog1py (and special.zeta): tensor and tensor, number and tensor, tensor and number."""
    both, self_number, other_number = rows

    def op(input=_ABSENT, other=_ABSENT) -> Tensor:
        if not ((input.__class__ is Tensor or isinstance(input, (int, float))) and
                (other.__class__ is Tensor or isinstance(other, (int, float)))) or \
                input.__class__ is not Tensor and other.__class__ is not Tensor:
            got = ", ".join(_type_name(v) for v in (input, other) if v is not _ABSENT)
            raise TypeError(f"{name}() received an invalid combination of arguments - got ({got}), "
                            f"but expected one of:\n{_X_LOG_FORMS}")
        scalar_param(input, other)
        x, y = operands(input, other, floating=True)
        out = np.asanyarray(compute(kernel, x, y))
        if input.__class__ is not Tensor:
            return apply(self_number, out, (other,), (input,), (y,))
        if other.__class__ is not Tensor:
            return apply(other_number, out, (input,), (other,), (x,))
        return apply(both, out, (input, other), (), (x, y))
    op.__name__ = op.__qualname__ = name
    return op


xlogy = _x_log((XLOGY, XLOGY_SELF_NUMBER, XLOGY_OTHER_NUMBER), xlogy_array, "xlogy")
special_xlogy = _x_log((XLOGY, XLOGY_SELF_NUMBER, XLOGY_OTHER_NUMBER), xlogy_array, "special_xlogy")
xlog1py = _x_log((XLOG1PY, XLOG1PY_SELF_NUMBER, XLOG1PY_OTHER_NUMBER), xlog1py_array, "special_xlog1py")


def xlogy_method(a: Tensor, other) -> Tensor:
    """Tensor.xlogy(other): a tensor or a number."""
    if other.__class__ is not Tensor and not isinstance(other, (int, float)):
        tname = _type_name(other)
        raise TypeError(f"xlogy() received an invalid combination of arguments - got ({tname}), but expected one of:\n"
                        f" * (Tensor other)\n"
                        f"      didn't match because some of the arguments have invalid types: (!{tname}!)\n"
                        f" * (Number other)\n"
                        f"      didn't match because some of the arguments have invalid types: (!{tname}!)\n")
    return xlogy(a, other)


def copysign(input, other, _method: bool = False) -> Tensor:
    """|input| with other's sign; integer and bool inputs in the default float dtype. A number `other` is
    CopysignBackward1, a tensor CopysignBackward0."""
    tensor_other = other.__class__ is Tensor
    if input.__class__ is not Tensor or not (tensor_other or isinstance(other, (int, float))):
        if _method:
            tname = _type_name(other)
            raise TypeError(f"copysign() received an invalid combination of arguments - got ({tname}), but expected "
                            f"one of:\n * (Tensor other)\n"
                            f"      didn't match because some of the arguments have invalid types: (!{tname}!)\n"
                            f" * (Number other)\n"
                            f"      didn't match because some of the arguments have invalid types: (!{tname}!)\n")
        raise TypeError(f"copysign() received an invalid combination of arguments - got ({_type_name(input)}, "
                        f"{_type_name(other)}), but expected one of:\n"
                        " * (Tensor input, Tensor other, *, Tensor out = None)\n"
                        " * (Tensor input, Number other, *, Tensor out = None)\n")
    scalar_param(other)
    x, y = operands(input, other, floating=True)
    out = np.asanyarray(compute(np.copysign, x, y))
    if not tensor_other:
        return apply(COPYSIGN_NUMBER, out, (input,), (), (x,))
    return apply(COPYSIGN, out, (input, other), (), (x, y))


# ------------------------------------------------------------------------- angles, heaviside, gcd, lcm

DEG2RAD_FACTOR = math.pi / 180          # c10's M_PI_180 (a double the kernel reads as the tensor's type)
RAD2DEG_FACTOR = 180 / math.pi          # M_180_PI


def _scaled(factor: float):
    def forward(x: np.ndarray) -> np.ndarray:
        return _arith._times_number(x, factor)
    return forward


# fmt: off
DEG2RAD = Op("Deg2RadBackward0", _scaled(DEG2RAD_FACTOR), (), (lambda F, g: F.times(g, DEG2RAD_FACTOR),),
             floats=True, jvp="auto")
RAD2DEG = Op("Rad2DegBackward0", _scaled(RAD2DEG_FACTOR), (), (lambda F, g: F.times(g, RAD2DEG_FACTOR),),
             floats=True, jvp="auto")
# fmt: on
deg2rad = unary(DEG2RAD, "deg2rad")
rad2deg = unary(RAD2DEG, "rad2deg")


def heaviside(input, values) -> Tensor:
    """torch.heaviside: 0 below zero, 1 above, `values` at zero (NaN gives 0); both of one dtype. PyTorch has no
    derivative for it (its node is NotImplemented)."""
    tensor_arg(input, "heaviside", "input", 1)
    tensor_arg(values, "heaviside", "values", 2)
    x, v = input._a, values._a
    if x.dtype != v.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    x, v = np.broadcast_arrays(x, v)
    out = np.where(x == 0, v, (x > 0).astype(x.dtype)).astype(x.dtype)
    out = np.ascontiguousarray(out) if out.ndim else out
    if needs_grad(input, values):
        return not_implemented(out, (input, values), "heaviside")
    return Tensor(out)


def _integer_pair(name: str, a: Tensor, b) -> tuple:
    if b.__class__ is not Tensor:
        raise TypeError(f"{name}(): argument 'other' (position 2) must be Tensor, not {type(b).__name__}")
    x, y = operands(a, b)
    if x.dtype.kind not in "iu":
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{type_word(x)}'")
    return x, y


def gcd(input, other) -> Tensor:
    """torch.gcd: the greatest common divisor, elementwise, of integer tensors (never negative)."""
    x, y = _integer_pair("gcd", input, other)
    return Tensor(compute(np.gcd, x, y))


def lcm(input, other) -> Tensor:
    """torch.lcm: the least common multiple (0 where either is 0), elementwise, of integer tensors."""
    x, y = _integer_pair("lcm", input, other)
    return Tensor(compute(np.lcm, x, y))


# ------------------------------------------------------------------------- comparisons written in place
# x.eq_(y) and its kin keep x's dtype (1 where the comparison holds, else 0) and, unlike the out-of-place
# comparisons, record a node: its gradient is zero for both sides (derivatives.yaml's eq_.Scalar/.Tensor).

def _zero_result_tangent(F, ts, xs, result):
    return F.zeros_like(result)


def _zeros(F, g):
    return F.zeros_like(g)


# fmt: off
#                 node            forward saves formulas        facts
EQ_NUMBER = Op("EqBackward0", None, (), (_zeros,),         jvp=_zero_result_tangent)
EQ_TENSOR = Op("EqBackward1", None, (), (_zeros, _zeros), fits=True, jvp=_zero_result_tangent)
NE_NUMBER = Op("NeBackward0", None, (), (_zeros,),         jvp=_zero_result_tangent)
NE_TENSOR = Op("NeBackward1", None, (), (_zeros, _zeros), fits=True, jvp=_zero_result_tangent)
LT_NUMBER = Op("LtBackward0", None, (), (_zeros,),         jvp=_zero_result_tangent)
LT_TENSOR = Op("LtBackward1", None, (), (_zeros, _zeros), fits=True, jvp=_zero_result_tangent)
LE_NUMBER = Op("LeBackward0", None, (), (_zeros,),         jvp=_zero_result_tangent)
LE_TENSOR = Op("LeBackward1", None, (), (_zeros, _zeros), fits=True, jvp=_zero_result_tangent)
GT_NUMBER = Op("GtBackward0", None, (), (_zeros,),         jvp=_zero_result_tangent)
GT_TENSOR = Op("GtBackward1", None, (), (_zeros, _zeros), fits=True, jvp=_zero_result_tangent)
GE_NUMBER = Op("GeBackward0", None, (), (_zeros,),         jvp=_zero_result_tangent)
GE_TENSOR = Op("GeBackward1", None, (), (_zeros, _zeros), fits=True, jvp=_zero_result_tangent)
# fmt: on
_COMPARISON_ROWS = {np.equal: (EQ_NUMBER, EQ_TENSOR), np.not_equal: (NE_NUMBER, NE_TENSOR),
                    np.less: (LT_NUMBER, LT_TENSOR), np.less_equal: (LE_NUMBER, LE_TENSOR),
                    np.greater: (GT_NUMBER, GT_TENSOR), np.greater_equal: (GE_NUMBER, GE_TENSOR)}


def compare_as_self(fn, a: Tensor, other) -> Tensor:
    """The out-of-place twin of a.eq_(other) and its kin (Tensor._inplace writes it into `a`): the
    comparison in a's dtype, with its node."""
    x, y = operands(a, other)
    out = np.asanyarray(compute(fn, x, y)).astype(a._a.dtype)
    number_row, tensor_row = _COMPARISON_ROWS[fn]
    if other.__class__ is Tensor:
        return apply(tensor_row, out, (a, other))
    return apply(number_row, out, (a,))


# ------------------------------------------------------------------ ldexp, frexp, nextafter, isreal

def _two_to(F, other):
    """at::pow(2, other): integer exponents stay integers (a negative power is 0), others rounded once."""
    return F.pow(2, other) if F.tensors else _arith.power(2, Tensor(other))._a


def _frexp_self(F, g, exponent):
    """grad / exponent.exp2(): the powers of two in float (the default dtype), as exp2 of an int32 tensor."""
    if F.tensors:
        return g / exp2(exponent)
    return g / np.ldexp(np.float32(1), exponent)


def nextafter_array(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    _refuse(x, "nextafter_cpu", "iub")
    return np.nextafter(x, y)


# fmt: off
#                  node                 forward          saves                formulas, one per input
LDEXP     = Op("LdexpBackward0",     None,            ("other", "result"), (lambda F, g, other, result: g * _two_to(F, other),
                                                                            lambda F, g, other, result: F.times(g * result, LN2)),
               fits=True, quiet=True, jvp="auto")
FREXP     = Op("FrexpBackward0",     None,            ("exponent",),       (_frexp_self,), fits="dtype", saves_tensors=True,
               quiet=True, jvp=lambda F, ts, xs, result, exponent: _frexp_self(F, ts[0], exponent))
NEXTAFTER = Op("NextafterBackward0", nextafter_array, ("self", "other"),   (lambda F, g, self, other: F.where(self != other, g, F.zeros_like(g)),
                                                                            lambda F, g, self, other: F.zeros_like(g)),
               fits=True, quiet=True, jvp="auto")
# fmt: on
nextafter = binary(NEXTAFTER, "nextafter")


def ldexp(input, other, position: int = 2) -> Tensor:
    """input * 2 ** other: exact for an integer exponent (a float result, the default dtype for an integer
    input), otherwise 2 ** other rounded once and multiplied, in the promoted float dtype. `position`:
    other's in PyTorch's argument error (1 for the method)."""
    tensor_arg(input, "ldexp", "input", 1)
    tensor_arg(other, "ldexp", "other", position)
    _refuse(other._a, "ldexp_cpu_exp", "b")
    if other._a.dtype.kind in "iu":
        x, y = input._a, other._a
        if x.dtype.kind not in "fV":
            x = x.astype(dtypes.default_float.np)
        out = compute(lambda a, b: np.ldexp(a, np.clip(b, -4096, 4096).astype(np.int32)), x, y)
    else:
        x, y = operands(input, other, floating=True)
        out = compute(lambda a, b: a * cr.pow(b.dtype.type(2), b), x, y)
    return apply(LDEXP, np.asanyarray(out), (input, other), (), (x, y))


def frexp(input):
    """(mantissa, exponent) with input = mantissa * 2 ** exponent, |mantissa| in [0.5, 1) (0 for 0); the
    exponent int32. Only the mantissa has a gradient (FrexpBackward0)."""
    from gradcli.engine.ops.reduce import ReturnTypes
    tensor_arg(input, "frexp", "input", 1)
    x = input._a
    if x.dtype.kind not in "fV":
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    m, e = np.frexp(x)
    exponent = Tensor(np.asanyarray(e, np.int32))
    return ReturnTypes("frexp", apply(FREXP, np.asanyarray(m, x.dtype), (input,), (exponent,)), exponent)


def isreal(input) -> Tensor:
    """True for every element: gradcli's tensors are real."""
    tensor_arg(input, "isreal", "input", 1)
    return Tensor(np.ones_like(input._a, dtype=np.bool_))
