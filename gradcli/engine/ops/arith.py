"""Arithmetic ops: + - * / ** and their kin, exp, copies and casts, fill, unbind."""

from __future__ import annotations

import numpy as np

from gradcli.engine import budget, dtypes, views, workers
from gradcli.engine import elementary as cr     # the correctly rounded elementary functions
from gradcli.engine.autograd import Node, edge, unrecorded_view
from gradcli.engine.fma import by_rows, fma, fused_body
from gradcli.engine.layout import copied_in_format, is_contiguous_in, laid_out, preserved, suggested_format
from gradcli.engine.recording import (Op, apply, broadcast_error, checked_scalar, compute, needs_grad, number_arg,
                                      number_operand, operands, result_dtype, same_device, scalar_param, unary,
                                      with_numbers)
from gradcli.engine.forward import DROPPED, add_tangents, dropped, sub_tangents
from gradcli.engine.state import STATE
from gradcli.engine.tensor import Tensor


def _pow_self(F, g, self, exponent):
    """d(self ** exponent)/d(self) for a number or tensor exponent (zero where the exponent is 0)."""
    if exponent.__class__ is int or exponent.__class__ is float or exponent.__class__ is bool:
        if exponent == 0:
            return F.zeros_like(g)
        exponent = float(exponent)      # PyTorch's formula takes the exponent as a double (exponent - 1 too)
        return g * F.times(F.pow(self, exponent - 1), exponent)
    return F.masked_zero(g * (exponent * F.pow(self, exponent - 1)), exponent == 0)


def _times(F, g, other):
    """g * other in the gradient of `self * other`: a Python number there was wrapped in a 0-d tensor by
    the forward op, so under create_graph the product is MulBackward0 (not the formulas' MulBackward1)."""
    if other.__class__ is int or other.__class__ is float:
        return F.mul_wrapped(g, other)
    return g * other


def _times_array(g, other):
    """g * other in a plain backward: a Python float as recording.number_operand hands it to numpy (same bits),
    or beside a float16 gradient as the forward's kernel reads it (half_with_number)."""
    if other.__class__ is float:
        number = number_operand(g, other)
        dt = g.dtype
        return g * number if number is not other and (dt is _F32 or dt is _F64 or dt.kind != "V") \
            else _times_number(g, other)
    return g * other


def _over(F, g, other):
    """g / other in the gradient of `self / other` (DivBackward0 for a wrapped number, as _times)."""
    if other.__class__ is int or other.__class__ is float:
        return F.div_wrapped(g, other)
    return g / other


def _pow_exponent(F, g, self, exponent, result):
    """PyTorch's pow_backward_exponent: grad * where(self == 0 & exponent >= 0, 0, result * self.log()), the
    base first converted to the result's dtype (a float16 base of a float32 power takes a float32 log)."""
    want = getattr(result, "_a", result).dtype
    if getattr(self, "_a", self).dtype != want:
        self = F.cast(self, want)
    return g * F.where((self == 0) & (exponent >= 0), F.zero_of(g), result * F.log(self))


def _scalar_times(F, g, other):
    """g * other in MulBackward1: a product by a number, as the formula's C++ multiplies by a double."""
    return F.times(g, other)


def _scalar_over(F, g, other):
    return F.over(g, other)


def _pow_base(F, g, base, result):
    grad = g * F.times(result, F.log_scalar(base, result))
    return F.masked_zero(grad, result >= 0) if base == 0 else grad


# Forward-mode columns (see gradcli.engine.forward): (F, tangents, inputs, result, *args) -> tangent. Where
# an input has no tangent its term is left out, as PyTorch's zero tangents drop out of its formulas.

def _add_jvp(F, ts, xs, result, alpha, negate=False):
    """add / sub: self_t + other_t * alpha (- for sub), a missing tangent as PyTorch's zero tensor (whose
    add or sub still records a node when the other side requires grad)."""
    st, ot = ts
    if ot is not None and alpha != 1:
        ot = ot * alpha
    shape = result._a.shape
    return sub_tangents(st, ot, shape) if negate else add_tangents(st, ot, shape)


def _sub_jvp(F, ts, xs, result, alpha):
    return _add_jvp(F, ts, xs, result, alpha, negate=True)


def _scaled_by(term, value):
    """maybe_multiply(term, value): the term itself when value is 1."""
    return term if term is None or term is DROPPED or value == 1 else term * value


def _addcmul_jvp(F, ts, xs, result, value):
    """self_t + maybe_multiply(tensor1_t * tensor2_p, value) + maybe_multiply(tensor2_t * tensor1_p, value)."""
    st, t1, t2 = ts
    _, x1, x2 = xs
    first = _scaled_by(dropped(x2) if t1 is None else t1 * x2, value)
    second = _scaled_by(dropped(x1) if t2 is None else t2 * x1, value)
    shape = result._a.shape
    return add_tangents(add_tangents(st, first, shape), second, shape)


def _addcdiv_jvp(F, ts, xs, result, value):
    """self_t + maybe_multiply(tensor1_t / tensor2_p, value)
    - maybe_multiply(tensor2_t * (tensor1_p / tensor2_p) / tensor2_p, value)."""
    st, t1, t2 = ts
    _, x1, x2 = xs
    first = _scaled_by(dropped(x2) if t1 is None else t1 / x2, value)
    second = _scaled_by(dropped(x1, x2) if t2 is None else t2 * (x1 / x2) / x2, value)
    shape = result._a.shape
    return sub_tangents(add_tangents(st, first, shape), second, shape)


def _mul_jvp(F, ts, xs, result):
    """mul: other_t * self_p + self_t * other_p (a term whose tangent is missing is PyTorch's zero
    tensor: dropped, but recorded where its other factor requires grad)."""
    st, ot = ts
    x, y = xs
    return add_tangents(dropped(x) if ot is None else ot * x, dropped(y) if st is None else _times(F, st, y))


def _div_jvp(F, ts, xs, result):
    """div: (self_t - other_t * result) / other_p."""
    st, ot = ts
    x, y = xs
    return _over(F, sub_tangents(st, dropped(result) if ot is None else ot * result), y)


def _fill_tensor_jvp(F, ts, xs, result):
    """fill_(value): the value's tangent everywhere; zeros when only the filled tensor had one."""
    value = ts[1]
    return F.zeros_like(result) if value is None else F.expand(value, result._a.shape)


def _mul_square(g, self, other, scratch):
    """MulBackward0's joint gradient (see recording.Op) for `x * x` in a plain backward.

    The formulas send g*x twice and the engine would add the two: three full-size passes and three new
    arrays. g*x + g*x is exactly 2*(g*x) (doubling is exact, overflow included), so one product doubled
    in place rounds the same; it goes into `g` itself when the engine owns it. On 4096x1000 float32:
    3.6 ms for the formulas and the add, 1.9 ms for this into a new array, 1.15 ms into `g`. (Doubling
    g first, (g+g)*x, would be one pass but differs: g+g can overflow where g*x+g*x does not, and a
    product in the subnormal range rounds differently.)
    """
    if self is not other:               # two different tensors (or values) on one node: no shortcut
        return None
    if scratch and g.shape == self.shape and g.dtype == self.dtype:
        out = workers.binary(np.multiply, g, self, out=g)
    else:
        out = workers.binary(np.multiply, g, self)
    if out.__class__ is not np.ndarray:  # 0-d operands give a numpy scalar
        return out + out
    return workers.binary(np.add, out, out, out=out)


def neg_array(x: np.ndarray) -> np.ndarray:
    if x.dtype == np.bool_:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.")
    return np.negative(x)


def clone_array(x: np.ndarray) -> np.ndarray:
    """clone() (memory_format=torch.preserve_format): a dense tensor keeps its strides, any other gets dense
    strides in its order of dims (layout.preserved). A meta array's copy keeps one element."""
    if x.flags.c_contiguous and 1 not in x.shape or x.__class__ is not np.ndarray:
        return x.copy()
    out = preserved(x)
    np.copyto(out, x)
    return out


def contiguous_array(x: np.ndarray) -> np.ndarray:
    """clone(memory_format=torch.contiguous_format): what contiguous() and reshape's copy make."""
    return x.copy()


# Formulas receive (F, g, *saved), the saved values in the row's `saves` order (see recording.Op).
# fmt: off
#                node                   forward        saves                           formulas, one per input
ADD         = Op("AddBackward0",        None,          ("alpha",),
                 (lambda F, g, alpha: g,
                  lambda F, g, alpha: g if alpha == 1 else g * alpha), fits=True, jvp=_add_jvp)
SUB         = Op("SubBackward0",        None,          ("alpha",),
                 (lambda F, g, alpha: g,
                  lambda F, g, alpha: -g if alpha == 1 else -g * alpha), fits=True, jvp=_sub_jvp)
RSUB        = Op("RsubBackward1",       None,          ("alpha",),
                 (lambda F, g, alpha: -g if alpha == 1 else -g * alpha,), fits=True, jvp="auto")
RSUB_TENSOR = Op("RsubBackward0",       None,          ("alpha",),
                 (lambda F, g, alpha: -g if alpha == 1 else -g * alpha,
                  lambda F, g, alpha: g), fits=True,
                 jvp=lambda F, ts, xs, result, alpha: _sub_jvp(F, ts[::-1], xs[::-1], result, alpha))
MUL         = Op("MulBackward0",        None,          ("self", "other"),
                 (lambda F, g, self, other: _times(F, g, other) if F.tensors else _times_array(g, other),
                  lambda F, g, self, other: g * self),
                 fits=True, needed_by={"self": "other", "other": "self"}, fresh=True, joint=_mul_square,
                 jvp=_mul_jvp)
DIV         = Op("DivBackward0",        None,          ("self", "other"),
                 (lambda F, g, self, other: _over(F, g, other),
                  lambda F, g, self, other: -g * ((self / other) / other)),
                 fits=True, needed_by={"self": "other"}, fresh=True, jvp=_div_jvp)
RECIPROCAL  = Op("ReciprocalBackward0", np.reciprocal, ("result",),
                 (lambda F, g, result: -g * (result * result),), floats=True, jvp="auto")
NEG         = Op("NegBackward0",        neg_array,     (),                             (lambda F, g: -g,),
                 jvp="auto")
EXP         = Op("ExpBackward0",        cr.exp,        ("result",),
                 (lambda F, g, result: workers.multiply(g, result),), floats=True, fresh=True, jvp="auto")
CLONE       = Op("CloneBackward0",      clone_array,   (),                             (lambda F, g: g,),
                 jvp=lambda F, ts, xs, result: _laid_like(clone(ts[0]), result))
CONTIGUOUS  = Op("CloneBackward0",      contiguous_array, (),                          (lambda F, g: g,),
                 jvp=lambda F, ts, xs, result: _laid_like(contiguous_clone(ts[0]), result))
POW_SCALAR  = Op("PowBackward0",        None,          ("self", "exponent"),           (_pow_self,),
                 fits=True, quiet=True, jvp="auto")
POW_TENSOR  = Op("PowBackward1",        None,          ("self", "exponent", "result"),
                 (lambda F, g, self, exponent, result: _pow_self(F, g, self, exponent),
                  _pow_exponent), inputs=("self", "exponent"), fits=True, quiet=True, jvp="auto")
POW_BASE    = Op("PowBackward2",        None,          ("self", "result"),             (_pow_base,),
                 inputs=("exponent",), fits=True, quiet=True, jvp="auto")
TO_COPY     = Op("ToCopyBackward0",     None,          (),                             (lambda F, g: g,), fits=True,
                 jvp=lambda F, ts, xs, result: _laid_like(F.cast(ts[0], result._a.dtype), result))
ZERO        = Op("ZeroBackward0",       None,          (),                             (lambda F, g: F.zeros_like(g),),
                 jvp=lambda F, ts, xs, result: F.zeros_like(result))
FILL        = Op("FillBackward2",       None,          (),                             (lambda F, g: F.zeros_like(g),),
                 jvp=lambda F, ts, xs, result: F.zeros_like(result))
FILL_TENSOR = Op("FillBackward3",       None,          (),                             (lambda F, g: F.zeros_like(g),
                                                                                        lambda F, g: F.sum(g)),
                 inputs=("self", "value"), fits=True, jvp=_fill_tensor_jvp)
FILL_NEW    = Op("FillBackward0",       None,          (),                             (lambda F, g: F.zeros_like(g),),
                 jvp=lambda F, ts, xs, result: F.zeros_like(result))
FILL_NEW_TENSOR = Op("FillBackward1",   None,          (),                             (lambda F, g: F.zeros_like(g),
                                                                                        lambda F, g: F.sum(g)),
                     inputs=("self", "value"), fits=True, jvp=_fill_tensor_jvp)
# The same ops with a Python number, as PyTorch's own backward formulas record them (mul.Scalar,
# add.Scalar, ...): user code's `x * 2` is MulBackward0, `grad * 2` inside a formula MulBackward1.
MUL_SCALAR  = Op("MulBackward1",        None,          ("other",),                     (_scalar_times,),
                 jvp="auto")
DIV_SCALAR  = Op("DivBackward1",        None,          ("other",),                     (_scalar_over,),
                 jvp="auto")
ADD_SCALAR  = Op("AddBackward1",        None,          (),                             (lambda F, g: g,),
                 jvp="auto")
SUB_SCALAR  = Op("SubBackward1",        None,          (),                             (lambda F, g: g,),
                 jvp="auto")
# addcmul / addcdiv: self + value * tensor1 * tensor2 (or / tensor2), one kernel (see addcmul below). In the
# formulas `tensor * value` reads the number as PyTorch's mul does (F.times: float16 in float), while
# `value / tensor` takes it in the tensor's dtype, as its div does with a number on the left.
ADDCMUL     = Op("AddcmulBackward0",    None,          ("tensor1", "tensor2", "value"),
                 (lambda F, g, tensor1, tensor2, value: g,
                  lambda F, g, tensor1, tensor2, value: g * F.times(tensor2, value),
                  lambda F, g, tensor1, tensor2, value: g * F.times(tensor1, value)),
                 inputs=("self", "tensor1", "tensor2"), fits=True, quiet=True,
                 needed_by={"tensor1": "tensor2", "tensor2": "tensor1"}, jvp=_addcmul_jvp)
ADDCDIV     = Op("AddcdivBackward0",    None,          ("tensor1", "tensor2", "value"),
                 (lambda F, g, tensor1, tensor2, value: g,
                  lambda F, g, tensor1, tensor2, value: g * (value / tensor2),
                  lambda F, g, tensor1, tensor2, value: -g * (F.times(tensor1, value) / (tensor2 * tensor2))),
                 inputs=("self", "tensor1", "tensor2"), fits=True, quiet=True,
                 needed_by={"tensor1": "tensor2"}, jvp=_addcdiv_jvp)
UNBIND      = Op("UnbindBackward0",     None,          ("shape", "index"),
                 (lambda F, g, shape, index: F.scatter(g, shape, index, "select"),),
                 jvp=lambda F, ts, xs, result, shape, index: _unbind_jvp(ts[0], shape, index))
# fmt: on

reciprocal = unary(RECIPROCAL, "reciprocal")
neg = unary(NEG, "neg")
exp = unary(EXP, "exp")
clone = unary(CLONE, "clone")
contiguous_clone = unary(CONTIGUOUS, "clone")


def _laid_like(tangent: Tensor, result: Tensor) -> Tensor:
    """A copy's tangent laid out as the copy itself: clone's and _to_copy's tangents take the memory format the
    copy was made in (a channels-last clone of a row-major input has a channels-last tangent)."""
    t, r = tangent._a, result._a
    if t.__class__ is not np.ndarray or r.__class__ is not np.ndarray or t.strides == r.strides or \
            t.shape != r.shape or r.flags.c_contiguous and t.flags.c_contiguous:
        return tangent
    out = np.empty_like(r, dtype=t.dtype)
    np.copyto(out, t)
    return apply(CLONE, out, (tangent,))


def clone_in_format(a: Tensor, fmt) -> Tensor:
    """clone(memory_format=fmt) for a format other than preserve_format: a copy laid out in it (CloneBackward0).
    A meta tensor keeps no layout: its clone is the plain one."""
    if a._a.__class__ is not np.ndarray:
        return contiguous_clone(a) if fmt is dtypes.contiguous_format else clone(a)
    return apply(CONTIGUOUS if fmt is dtypes.contiguous_format else CLONE, copied_in_format(a._a, fmt), (a,))


def contiguous_in_format(a: Tensor, fmt) -> Tensor:
    """contiguous(memory_format=fmt): the tensor itself when it is laid out so, else its clone in that format."""
    if a._a.__class__ is not np.ndarray or is_contiguous_in(a._a, fmt):
        return a
    if fmt is dtypes.preserve_format:
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    return clone_in_format(a, fmt)


def _float_number_case(a: Tensor, b) -> bool:
    """The hot case `float tensor <op> Python number`, where numpy's promotion already agrees with
    PyTorch's (NEP 50 keeps float32 * 1.0001 in float32). Not bfloat16's: numpy makes float32 of it."""
    return (b.__class__ is float or b.__class__ is int and -_INT64_END <= b < _INT64_END) and a._a.dtype.kind == "f"


_INT64_END = 1 << 63                      # Python ints past int64 take the general path (recording.operands)

# The number paths below hand numpy's result to the Tensor as it is: a 0-d product is a numpy scalar,
# which Tensor() makes an array.


_F16 = np.dtype(np.float16)
_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)


_HALVES = "eE"          # dtype.char of float16 and bfloat16, whose kernels compute in float


def half_with_number(fn, x: np.ndarray, b) -> np.ndarray:
    """`float16 tensor * number` and `/ number` as PyTorch's mul and div kernels compute them: in float, the
    number read as a float (its original value, not first rounded to float16), the result rounded once to
    float16; bfloat16 alike. (Their add and sub kernels round the number to the tensor's type first.)"""
    with np.errstate(over="ignore"):
        return fn(x.astype(np.float32), np.float32(b)).astype(x.dtype)


def _times_number(x: np.ndarray, b) -> np.ndarray:
    dt = x.dtype          # (float32 and float64 first: they are the hot path, and the identity test is cheap)
    return x * number_operand(x, b) if dt is _F32 or dt is _F64 or dt.char not in _HALVES \
        else half_with_number(np.multiply, x, b)


def mul_scalar(a: Tensor, value) -> Tensor:
    """`tensor * number` as C++ code records it (MulBackward1)."""
    return with_numbers(MUL_SCALAR, _times_number(a._a, value), (a,), (value,), (value,))


def div_scalar(a: Tensor, value) -> Tensor:
    x = a._a
    dt = x.dtype
    out = x / number_operand(x, value) if dt is _F32 or dt is _F64 or dt.char not in _HALVES \
        else half_with_number(np.true_divide, x, value)
    return with_numbers(DIV_SCALAR, out, (a,), (value,), (value,))


def mul_wrapped(a: Tensor, value) -> Tensor:
    """`float tensor * number` as user code records it (MulBackward0, the number a wrapped 0-d tensor,
    saved for self's gradient; self is saved only for the number's, which has none)."""
    return with_numbers(MUL, _times_number(a._a, value), (a, value), (), (None, value))


def div_wrapped(a: Tensor, value) -> Tensor:
    x = a._a
    dt = x.dtype
    out = (compute(np.true_divide, x, value) if dt is _F32 or dt is _F64 or dt.char not in _HALVES
           else half_with_number(np.true_divide, x, value))
    return with_numbers(DIV, out, (a, value), (), (None, value))


def _check_alpha(name: str, a: Tensor, b, alpha):
    """`alpha` as a number, after PyTorch's checks of it against the result's dtype."""
    alpha = number_arg(alpha, name, "alpha")
    cls = alpha.__class__
    npdt = result_dtype(a, b).np
    if cls is bool:
        if npdt.kind != "b":
            raise RuntimeError("Boolean alpha only supported for Boolean results.")
    elif cls is float:
        if npdt.kind in "iub":
            raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")
        checked_scalar(alpha, npdt)         # as the kernel reads it: a float past float32's range overflows
    else:
        checked_scalar(alpha, npdt)
    return alpha


def add(a: Tensor, b, alpha=1) -> Tensor:
    if alpha.__class__ is not int or alpha != 1:
        alpha = _check_alpha("add", a, b, alpha)
    if b.__class__ is float and a._a.dtype.kind == "f" or _float_number_case(a, b):     # a float, inline
        if STATE.in_formula and alpha == 1:
            return with_numbers(ADD_SCALAR, a._a + number_operand(a._a, b), (a,), (), ())
        args = (alpha,)
        out = a._a + number_operand(a._a, b) if alpha == 1 else _add_scaled(a._a, b, alpha)
        return with_numbers(ADD, out, (a, b), args, args)
    x, y = operands(a, b)
    out = compute(np.add, x, y) if alpha == 1 else compute(lambda x, y: _add_scaled(x, y, alpha), x, y)
    return apply(ADD, out, (a, b), (alpha,))


def sub(a: Tensor, b, alpha=1) -> Tensor:
    if alpha.__class__ is not int or alpha != 1:
        alpha = _check_alpha("sub", a, b, alpha)
    if _float_number_case(a, b):
        if STATE.in_formula and alpha == 1:
            return with_numbers(SUB_SCALAR, a._a - number_operand(a._a, b), (a,), (), ())
        args = (alpha,)
        out = a._a - number_operand(a._a, b) if alpha == 1 else _add_scaled(a._a, b, -alpha)
        return with_numbers(SUB, out, (a, b), args, args)
    check_bool_subtraction(a, b)
    x, y = operands(a, b)
    out = compute(np.subtract, x, y) if alpha == 1 else compute(lambda x, y: _add_scaled(x, y, -alpha), x, y)
    return apply(SUB, out, (a, b), (alpha,))


def _add_scaled(x, y, alpha):
    """x + alpha * y as PyTorch's add kernel computes it for floats: y and alpha in x's dtype, one fused
    multiply-add (sub passes -alpha: the same kernel). When y is one value broadcast, the compiled
    scalar loop computes alpha * y once, rounded, before the loop: the vector body (runs of 16 floats or
    8 doubles of a contiguous x) still fuses, the rest of each thread's range does not (fused_tail)."""
    dt = x.dtype
    if dt.kind not in "fV":
        return x + y * alpha
    y = np.asanyarray(y, dt)
    a = dt.type(alpha)
    if dt.itemsize == 2:
        # float16: the vector body computes in float (the product of two halves is exact there), the
        # scalar code in Half's arithmetic, the product and the sum each rounded to float16
        vector = (x.astype(np.float32) + y.astype(np.float32) * np.float32(a)).astype(dt)
        return by_rows(vector, x + y * a, x, y)
    if y.size != 1 or x.size <= 16 // dt.itemsize or not x.flags.c_contiguous:
        return fma(y, a, x)         # within one 16-byte vector, or strided (element by element): all fused
    out = np.asanyarray(x + y * a)
    flat, xs, y = out.reshape(-1), x.reshape(-1), y.reshape(())
    for start, stop in fused_body(x.size, dt):
        flat[start:stop] = fma(y, a, xs[start:stop])
    return out



_POINTWISE_SIGNATURE = "Tensor tensor1, Tensor tensor2, *, Number value = 1"


def _pointwise_operands(name: str, a, args: tuple, value, method: bool):
    """addcmul / addcdiv's argument checks in PyTorch's words (the method `a.name(...)` counts its
    arguments from tensor1, the torch function from input), then the three arrays in the result dtype
    and the broadcast shape (checked against --max-memory)."""
    if len(args) > 2:
        raise TypeError(f"{name}() takes {2 if method else 3} positional arguments but "
                        f"{len(args) + (0 if method else 1)} were given")
    if len(args) < 2:
        got = ", ".join(_type_name(v) for v in (args if method else (a,) + args))
        expected = _POINTWISE_SIGNATURE if method else f"Tensor input, {_POINTWISE_SIGNATURE}, Tensor out = None"
        raise TypeError(f"{name}() received an invalid combination of arguments - got ({got}), but expected "
                        f"({expected})")
    tensor1, tensor2 = args
    scalar_param(value)
    first = 1 if method else 2
    for arg, v, position in (("input", a, 1), ("tensor1", tensor1, first), ("tensor2", tensor2, first + 1)):
        if v.__class__ is not Tensor:
            raise TypeError(f"{name}(): argument '{arg}' (position {position}) must be Tensor, not "
                            f"{_type_name(v)}")
    value = number_arg(value, name, "value")
    npdt = result_dtype(a, tensor1, tensor2).np
    arrays = tuple(t._a if t._a.dtype == npdt else t._a.astype(npdt) for t in (a, tensor1, tensor2))
    shape = ()
    for x in arrays:
        try:
            shape = np.broadcast_shapes(shape, x.shape)
        except ValueError:
            raise broadcast_error(shape, x.shape) from None
    budget.check_tensor(shape, npdt.itemsize)      # the broadcast result (and its temporaries) within --max-memory
    # as the kernel reads it: in the result's dtype, float16's in float (its opmath type)
    checked_scalar(value, _F32 if npdt.char in _HALVES else npdt)
    return arrays, npdt, shape, value


def _type_name(v) -> str:
    return "Tensor" if v.__class__ is Tensor else type(v).__name__


def addcmul(a, *args, value=1) -> Tensor:
    return _addcmul(a, args, value, False)


def addcmul_method(a, *args, value=1) -> Tensor:
    """`a.addcmul(tensor1, tensor2)`: the same, its arguments counted from the method's."""
    return _addcmul(a, args, value, True)


def _addcmul(a, args, value, method: bool) -> Tensor:
    """self + value * tensor1 * tensor2, PyTorch's one kernel: (value * tensor1) * tensor2 + self with one
    fused multiply-add for floats (in the vector body and the scalar tail alike)."""
    (x, y, z), npdt, shape, value = _pointwise_operands("addcmul", a, args, value, method)
    if npdt == np.bool_:
        raise NotImplementedError("\"addcmul_cpu_out\" not implemented for 'Bool'")
    if npdt.char in _HALVES:    # in float (value read as a float), rounded once
        f = np.float32
        out = fma(f(value) * y.astype(f), z.astype(f), x.astype(f)).astype(npdt)
    else:
        v = npdt.type(value)
        out = fma(v * y, z, x) if npdt.kind in "fV" else x + v * y * z
    return apply(ADDCMUL, laid_out(np.array(np.broadcast_to(out, shape)), x, y, z), (a, *args), (value,), (x, y, z))


def addcdiv(a, *args, value=1) -> Tensor:
    return _addcdiv(a, args, value, False)


def addcdiv_method(a, *args, value=1) -> Tensor:
    return _addcdiv(a, args, value, True)


def check_addcdiv_operands(args) -> None:
    """PyTorch refuses addcdiv of two integer tensors before anything else of the call (addcdiv_ too)."""
    if len(args) == 2 and all(t.__class__ is Tensor and t._a.dtype.kind in "iub" for t in args):
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release addcdiv will perform "
            "a true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as "
            "(input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer inputs and as "
            "(input + value * tensor1 / tensor2) for float inputs. The future addcdiv behavior is just the latter "
            "implementation: (input + value * tensor1 / tensor2), for all dtypes.")


def _addcdiv(a, args, value, method: bool) -> Tensor:
    """self + value * tensor1 / tensor2, PyTorch's one kernel: (value * tensor1) / tensor2, then the add."""
    (x, y, z), npdt, shape, value = _pointwise_operands("addcdiv", a, args, value, method)
    check_addcdiv_operands(args)
    if npdt.char in _HALVES:    # in float (value read as a float), rounded once
        f = np.float32
        out = (x.astype(f) + f(value) * y.astype(f) / z.astype(f)).astype(npdt)
    else:
        out = x + npdt.type(value) * y / z
    return apply(ADDCDIV, laid_out(np.array(np.broadcast_to(out, shape)), x, y, z), (a, *args), (value,), (x, y, z))


def check_bool_subtraction(a, b) -> None:
    """PyTorch refuses `-` on bool operands (a Python bool counts as a bool tensor)."""
    a_bool = a.__class__ is bool or a.__class__ is Tensor and a._a.dtype == np.bool_
    b_bool = b.__class__ is bool or b.__class__ is Tensor and b._a.dtype == np.bool_
    if a_bool and b_bool:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                           "Use the `^` or `logical_xor()` operator instead.")
    if a_bool or b_bool:
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.")


def rsub(a: Tensor, b, alpha=1) -> Tensor:
    """`number - tensor`, and torch.rsub(input, other, alpha): other - alpha * input (RsubBackward0 when
    other is a tensor, RsubBackward1 when a number)."""
    if alpha.__class__ is not int or alpha != 1:
        alpha = _check_alpha("rsub", a, b, alpha)
    check_bool_subtraction(a, b)
    x, y = operands(a, b)
    out = compute(np.subtract, y, x) if alpha == 1 else compute(lambda y, x: _add_scaled(y, x, -alpha), y, x)
    if b.__class__ is Tensor:
        return apply(RSUB_TENSOR, out, (a, b), (alpha,))
    return apply(RSUB, out, (a,), (alpha,))


def torch_rsub(input, other, alpha=1) -> Tensor:
    """torch.rsub: both operands by position (other a tensor or a number), alpha too when other is a number."""
    if input.__class__ is not Tensor or other.__class__ is not Tensor and not isinstance(other, (int, float)):
        raise TypeError("rsub(): invalid arguments")        # (PyTorch's message: signatures.py)
    return rsub(input, other, alpha)


def mul(a: Tensor, b) -> Tensor:
    x = a._a
    if b.__class__ is float and x.dtype.kind == "f" and not STATE.in_formula:    # mul_wrapped, inline
        number = number_operand(x, b)       # (b itself only for float16 and a few values: _times_number)
        out = x * number if number is not b else _times_number(x, b)
        return with_numbers(MUL, out, (a, b), (), (None, b))
    if _float_number_case(a, b):
        if STATE.in_formula:
            return mul_scalar(a, b)
        return mul_wrapped(a, b)
    x, y = operands(a, b)
    if x.dtype.kind == "c":
        return _complex().mul(a, b, x, y)
    if b.__class__ is not Tensor and x.dtype.kind == "V":
        # bfloat16 * number: the kernel reads the number as a float (the product in float, rounded once)
        return apply(MUL, _times_number(x, b), (a, b), (), (x, b), quiet=True)
    out = compute(np.multiply, x, y)
    # quiet: only the number fast path above shows an unrecorded product to the forward observer
    return apply(MUL, out, (a, b), (), (x, y if b.__class__ is Tensor else y.item()), quiet=True)


def div(a: Tensor, b) -> Tensor:
    if _float_number_case(a, b):
        if STATE.in_formula:
            return div_scalar(a, b)
        return div_wrapped(a, b)
    x, y = operands(a, b, floating=True)
    if x.dtype.kind == "c":
        return _complex().div(a, b, x, y)
    if b.__class__ is not Tensor and x.dtype.kind == "V":       # bfloat16 / number: as mul's
        return apply(DIV, half_with_number(np.true_divide, x, b), (a, b), (), (x, b), quiet=True)
    out = compute(np.true_divide, x, y)
    # quiet as in mul
    return apply(DIV, out, (a, b), (), (x, y if b.__class__ is Tensor else y.item()), quiet=True)


def rdiv(a: Tensor, b) -> Tensor:
    """`number / tensor`: PyTorch records it as reciprocal(tensor) * number."""
    if a._a.dtype.kind == "c" or b.__class__ is complex:
        complexops = _complex()
        return mul(complexops.reciprocal(a if a._a.dtype.kind == "c" else to_dtype(a, dtypes.default_complex())), b)
    return mul(reciprocal(a), b)


def scalar_power(x: np.ndarray, e):
    """x ** e for a number exponent, taking the same shortcuts as PyTorch's CPU kernel so results agree
    to the last bit (x*x for 2, x*x*x for 3, sqrt for 0.5, ...)."""
    if x.dtype.kind in "fV":
        if e == 2:
            return x * x
        if e == 3:
            if x.dtype.char == "e":         # float16: cubed in float and rounded once, as PyTorch's kernel does
                                            # (bfloat16's rounds each product)
                f = x.astype(np.float32)
                return (f * f * f).astype(x.dtype)
            return x * x * x
        if e == 0.5:
            return cr.sqrt(x)
        if e == -0.5:
            return cr.rsqrt(x)
        if e == -1:
            return 1 / x
        if e == -2:
            return 1 / (x * x)
        if e == 1:
            return x.copy()
    if x.dtype == np.bool_:             # bool ** bool stays bool (numpy's power would give int8)
        return x.copy() if e else np.ones_like(x)
    if x.dtype.kind in "fV":
        # the exponent as the double it is: PyTorch's scalar loop (0-d tensors, fewer than 8 elements, strided
        # ones, vector tails) computes pow(double(x), e), its vector loop powf(x, float(e)) within an ulp
        if x.dtype.kind == "V":         # bfloat16: in float, rounded once (numpy would keep the float32)
            return cr.pow(x.astype(np.float32), float(e)).astype(x.dtype)
        return cr.pow(x, float(e))
    return cr.pow(x, x.dtype.type(e))


def power(a, b) -> Tensor:
    """tensor ** number (PowBackward0), tensor ** tensor (PowBackward1), number ** tensor (PowBackward2)."""
    if a.__class__ is Tensor and b.__class__ is not Tensor:
        x, _ = operands(a, b)
        if x.dtype.kind == "c":
            return _complex().pow_(a.to(dtypes.of_array(x)) if a._a.dtype != x.dtype else a, b)
        if x.dtype.kind in "iub" and isinstance(b, int):
            if b < 0:
                raise RuntimeError("Integers to negative integer powers are not allowed.")
            checked_scalar(b, x.dtype)      # an integer exponent read in the tensor's own type
        elif x.dtype.char in _HALVES:
            checked_scalar(b, x.dtype)      # half's kernel reads the exponent as a half, with the overflow check
        out = scalar_power(x, b)
        return apply(POW_SCALAR, out, (a,), (b,), (x,))
    if a.__class__ is Tensor:
        x, y = operands(a, b)
        out = compute(_power_array, x, y)
        return apply(POW_TENSOR, out, (a, b), (), (x, y))
    x, y = operands(a, b)       # a is a Python number, b a tensor
    out = compute(_power_array, x, y)
    return apply(POW_BASE, out, (b,), (a,))


def _power_array(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """x ** y for a tensor exponent: integers to a negative power as PyTorch's kernel gives them (1 and -1
    keep their magnitude, everything else is 0), where numpy refuses; no bool ** bool, as in PyTorch."""
    kind = x.dtype.kind
    if kind == "b":
        raise NotImplementedError("\"pow\" not implemented for 'Bool'")
    if kind in "iu" and (y < 0).any():
        negative = y < 0
        with np.errstate(all="ignore"):
            out = np.power(x, np.where(negative, 0, y))
        if kind == "i":
            small = np.where(x == -1, np.where(y % 2 == 0, 1, -1), np.where(x == 1, 1, 0)).astype(x.dtype)
        else:
            small = (x == 1).astype(x.dtype)
        return np.asanyarray(np.where(negative, small, out), dtype=out.dtype)
    return cr.pow(x, y)


def compare(fn, a, b) -> Tensor:
    if STATE.meta_seen:                 # (no node: apply does not see the inputs' devices)
        same_device((a, b))
    x, y = operands(a, b)
    if x.dtype.kind == "c" and fn is not np.equal and fn is not np.not_equal:
        raise _complex().refusal(fn.__name__.replace("less", "lt").replace("greater", "gt").replace("_equal", "e")
                                 .replace("lte", "le").replace("gte", "ge"), x.dtype)
    return Tensor(compute(fn, x, y))


def _complex():
    """gradcli.engine.ops.complexops, imported when an op first meets a complex operand."""
    from gradcli.engine.ops import complexops
    return complexops


def to_dtype(a: Tensor, dtype: dtypes.DType, copy=False, fmt=None) -> Tensor:
    """`.to(dtype)` / `.float()` / `.double()`: the same tensor when nothing changes, as in PyTorch. `fmt`: the
    memory format of `.to(memory_format=)` (None: preserve_format), which a tensor PyTorch reads as laid out in
    it already keeps (suggest_memory_format)."""
    if dtype is dtypes.float32 and STATE.replay is not None:
        dtype = dtypes.float64      # float32 means float64 in a --check-grads replay: `.float()` keeps it
    if fmt is dtypes.preserve_format or a._a.__class__ is not np.ndarray:     # (a meta tensor keeps no layout)
        fmt = None
    if a._a.dtype == dtype.np and not copy and (fmt is None or suggested_format(a._a) is fmt):
        return a
    if fmt is not None:
        return _to_format(a, dtype, fmt)
    if a._a.dtype.kind == "c" and dtype is dtypes.bool_:
        return Tensor(a._a != 0)           # (either part non-zero, and no warning: nothing is discarded)
    if a._a.dtype.kind == "c" and dtype.category != dtypes.COMPLEX:
        if STATE.warn is not None:
            STATE.warn("UserWarning", "Casting complex values to real discards the imaginary part (Triggered internally "
                       "at /__w/pytorch/pytorch/aten/src/ATen/native/Copy.cpp:307.)")
        out = a._a.real.astype(dtype.np)
    else:
        out = a._a.astype(dtype.np)
    if dtype.category == dtypes.COMPLEX:
        _complex().seen()
    elif dtype.category != dtypes.FLOAT:
        return Tensor(out)
    return apply(TO_COPY, out, (a,))


def _to_format(a: Tensor, dtype: dtypes.DType, fmt) -> Tensor:
    """`.to(dtype, memory_format=fmt)`: a copy in that dtype laid out in `fmt` (ToCopyBackward0)."""
    cast = to_dtype(Tensor(a._a), dtype, True)
    out = copied_in_format(cast._a, fmt)
    return apply(TO_COPY, out, (a,)) if out.dtype.kind in "fVc" else Tensor(out)


def to_device(a: Tensor, out: np.ndarray) -> Tensor:
    """`.to('meta')`: `out`, a's shape and dtype on the other device, with the node PyTorch records for the copy."""
    return apply(TO_COPY, out, (a,)) if out.dtype.kind in "fV" else Tensor(out)


def fill(a: Tensor, value, zero=False, rows=(FILL, FILL_TENSOR)) -> Tensor:
    """The out-of-place twin of fill_/zero_: the values, with a node whose gradient is zero (`rows`: the
    nodes for a number and for a tensor value)."""
    if value.__class__ is Tensor:
        if value._a.ndim != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value._a.ndim} dimensions.")
        out = np.full(a._a.shape, value._a, dtype=a._a.dtype)
        return apply(rows[1], out, (a, value))
    out = np.full(a._a.shape, checked_scalar(value, a._a.dtype), dtype=a._a.dtype)
    return apply(ZERO if zero else rows[0], out, (a,))


def fill_function(input: Tensor, value) -> Tensor:
    """torch.fill(input, value): a new tensor like `input`, filled (FillBackward0, or FillBackward1 for a
    tensor value)."""
    if value.__class__ is not Tensor and not isinstance(value, (int, float)):
        raise TypeError("fill(): value must be a Tensor or a Number")       # (PyTorch's message: signatures.py)
    return fill(input, value, rows=(FILL_NEW, FILL_NEW_TENSOR))


def _unbind_jvp(tangent: Tensor, shape: tuple, index: tuple) -> Tensor:
    """unbind's auto_linear: the tangent's row, a view of it recorded as UnbindBackward0 as in PyTorch."""
    from gradcli.engine.ops.shape import _view_of
    key = index if Ellipsis in index else index + (Ellipsis,)      # 0-d: a view too
    return _view_of(tangent, tangent._a[key], UNBIND, (shape, index))


def unbind0(a: Tensor) -> list:
    """Iterating a tensor yields its rows; PyTorch records them as outputs of one UnbindBackward0."""
    x = a._a
    if x.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    if x.ndim > 1:
        rows = [Tensor(x[i]) for i in range(x.shape[0])]
    else:
        rows = [Tensor(x[i, ...]) for i in range(x.shape[0])]      # a 0-d view (x[i] would copy it)
    # one node per row, all outputs of one op: `apply` records single results, so the nodes are made here
    if needs_grad(a):
        source = edge(a)
        for i, r in enumerate(rows):
            r.grad_fn = Node(UNBIND, (source,), (x.shape, (i,)))
            r.requires_grad = True
    base = a._base if a._base is not None else a
    for r in rows:
        r._version = a._version
        r._base = base                  # views: in-place changes reach `a`, and its tangent (forward.py)
        unrecorded_view(r, base)
        if r.grad_fn is not None and base.grad_fn is not None:
            views.track(r, base)        # in-place changes of base make its history unusable
    if STATE.fw_level is not None:
        from gradcli.engine import forward
        forward.each_output(UNBIND, rows, a, [(x.shape, (i,)) for i in range(len(rows))])
    return rows
