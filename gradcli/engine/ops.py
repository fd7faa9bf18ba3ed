"""The op table: every differentiable op once, with PyTorch's node name and one backward formula per input.

A row says what PyTorch's node is called (written out so it is greppable), whether its node keeps
tensors that a backward pass frees, and how each input's gradient follows from the incoming gradient
`g` and what the forward function saved (PyTorch's derivatives.yaml vocabulary: self, other, result).
Broadcast reduction, dtype casts, freeing and version checks are the engine's (autograd.py), never a row's.
The forward functions below the table compute with numpy and record a node when grad mode needs one.
"""

from __future__ import annotations

import numpy as np

from gradcli.engine import autograd, dtypes
from gradcli.engine.autograd import Node, edge
from gradcli.engine.tensor import Tensor


class Op:
    __slots__ = ("node", "saves_tensors", "backward")

    def __init__(self, node: str, saves_tensors: bool, backward: tuple):
        self.node = node
        self.saves_tensors = saves_tensors
        self.backward = backward

    def __repr__(self):
        return f"Op({self.node})"


def _expand(g, shape, axes, keepdim):
    """Gradient of a reduction over `axes`: put the reduced dims back, then broadcast."""
    if not keepdim and axes:
        g = np.expand_dims(g, axes)
    return np.broadcast_to(g, shape)


def _pow_self(g, self, exponent):
    if isinstance(exponent, np.ndarray):
        grad = g * (exponent * np.power(self, exponent - 1))
        return np.where(exponent == 0, 0, grad).astype(grad.dtype, copy=False)
    if exponent == 0:
        return np.zeros_like(g)
    return g * (exponent * _scalar_power(self, exponent - 1))


def _pow_exponent_tensor(g, self, exponent, result):
    grad = g * (result * np.log(self))
    return np.where((self == 0) & (exponent >= 0), 0, grad).astype(grad.dtype, copy=False)


def _pow_base_scalar(g, base, result):
    if base == 0:
        return np.where(result >= 0, 0, g * (result * np.log(result.dtype.type(base)))).astype(g.dtype, copy=False)
    return g * (result * np.log(result.dtype.type(base)))


def _norm_backward(g, self, result, axes, keepdim):
    if axes is not None and not keepdim:
        g = np.expand_dims(g, axes)
        result = np.expand_dims(result, axes)
    scale = g / result
    scale = np.where(result == 0, 0, scale).astype(scale.dtype, copy=False)
    return self * scale


# Formulas receive (g, *saved) where saved is exactly what the forward function below stores.
# fmt: off
ADD        = Op("AddBackward0",       False, (lambda g, alpha: g,                        lambda g, alpha: g if alpha == 1 else g * alpha))
SUB        = Op("SubBackward0",       False, (lambda g, alpha: g,                        lambda g, alpha: -g if alpha == 1 else -g * alpha))
RSUB       = Op("RsubBackward1",      False, (lambda g: -g,))
MUL        = Op("MulBackward0",       True,  (lambda g, self, other: g * other,          lambda g, self, other: g * self))
DIV        = Op("DivBackward0",       True,  (lambda g, self, other: g / other,          lambda g, self, other: -g * ((self / other) / other)))
RECIPROCAL = Op("ReciprocalBackward0", True, (lambda g, result: -g * (result * result),))
NEG        = Op("NegBackward0",       False, (lambda g: -g,))
POW_SCALAR = Op("PowBackward0",       True,  (_pow_self,))
POW_TENSOR = Op("PowBackward1",       True,  (lambda g, self, exponent, result: _pow_self(g, self, exponent), _pow_exponent_tensor))
POW_BASE   = Op("PowBackward2",       True,  (_pow_base_scalar,))
SUM        = Op("SumBackward0",       False, (lambda g, shape: np.broadcast_to(g, shape),))
SUM_DIM    = Op("SumBackward1",       False, (_expand,))
MEAN       = Op("MeanBackward0",      False, (lambda g, shape, n: np.broadcast_to(g, shape) / n,))
MEAN_DIM   = Op("MeanBackward1",      False, (lambda g, shape, axes, keepdim, n: _expand(g, shape, axes, keepdim) / n,))
NORM       = Op("LinalgVectorNormBackward0", True, (_norm_backward,))
MM         = Op("MmBackward0",        True,  (lambda g, self, mat2: g @ mat2.T,          lambda g, self, mat2: self.T @ g))
EXP        = Op("ExpBackward0",       True,  (lambda g, result: g * result,))
CLONE      = Op("CloneBackward0",     False, (lambda g: g,))
TO_COPY    = Op("ToCopyBackward0",    False, (lambda g: g,))
ZERO       = Op("ZeroBackward0",      False, (lambda g: np.zeros_like(g),))
FILL       = Op("FillBackward2",      False, (lambda g: np.zeros_like(g),))
FILL_TENSOR = Op("FillBackward3",     False, (lambda g: np.zeros_like(g), lambda g: np.asarray(g.sum())))
# fmt: on


# ------------------------------------------------------------------------------------------ recording

def _record(op, out: np.ndarray, inputs: tuple, saved: tuple, checks=None, fit=None) -> Tensor:
    """Wrap a forward result; attach a node when grad mode is on and some input requires grad."""
    t = Tensor(out)
    if autograd._grad_enabled[0]:
        nodes = tuple([edge(x) if x.__class__ is Tensor else None for x in inputs])
        for n in nodes:
            if n is not None:
                t.grad_fn = Node(op, nodes, saved, checks, fit)
                t.requires_grad = True
                break
    return t


def _needs_grad(*inputs) -> bool:
    if not autograd._grad_enabled[0]:
        return False
    for x in inputs:
        if x.__class__ is Tensor and x.requires_grad:
            return True
    return False


def _check(t: Tensor):
    """A version-counter entry for a saved input tensor."""
    return (t, t._version, t._version[0], t._a.shape, dtypes.of_array(t._a).legacy, None)


def _fit_for(out: np.ndarray, *inputs):
    """(shape, dtype) targets for inputs whose gradient must be reduced or cast, or None when none must."""
    fit = None
    for i, x in enumerate(inputs):
        if x.__class__ is Tensor:
            a = x._a
            if a.shape != out.shape or a.dtype != out.dtype:
                if fit is None:
                    fit = [None] * len(inputs)
                fit[i] = (a.shape, a.dtype)
    return fit


# -------------------------------------------------------------------------------- operand preparation

_PY_NUMBERS = (float, int, bool)


def _broadcast_error(a_shape, b_shape):
    n = max(len(a_shape), len(b_shape))
    pa = (1,) * (n - len(a_shape)) + tuple(a_shape)
    pb = (1,) * (n - len(b_shape)) + tuple(b_shape)
    for i in range(n - 1, -1, -1):
        if pa[i] != pb[i] and pa[i] != 1 and pb[i] != 1:
            return RuntimeError(f"The size of tensor a ({pa[i]}) must match the size of tensor b ({pb[i]}) "
                                f"at non-singleton dimension {i}")
    return RuntimeError(f"shapes {list(a_shape)} and {list(b_shape)} cannot be broadcast")


def _result_dtype(a, b) -> dtypes.DType:
    dim = zero = scalar = None
    for x in (a, b):
        if x.__class__ is Tensor:
            d = dtypes.of_array(x._a)
            if x._a.ndim:
                dim = d if dim is None else dtypes.promote_types(dim, d)
            else:
                zero = d if zero is None else dtypes.promote_types(zero, d)
        else:
            d = dtypes.scalar_dtype(x)
            scalar = d if scalar is None else dtypes.promote_types(scalar, d)
    return dtypes.result_type(dim, zero, scalar)


def _operands(a, b, floating=False):
    """The numpy operands of a binary op, already in PyTorch's result dtype (numpy's own promotion
    differs: int64 * 2.5 is float64 there, float32 in PyTorch), and that dtype."""
    if b.__class__ is not Tensor and not isinstance(b, _PY_NUMBERS):
        raise TypeError(f"unsupported operand type: {type(b).__name__}")
    if a.__class__ is not Tensor and not isinstance(a, _PY_NUMBERS):
        raise TypeError(f"unsupported operand type: {type(a).__name__}")
    dt = _result_dtype(a, b)
    if floating and dt.category != dtypes.FLOAT:
        dt = dtypes.default_float
    npdt = dt.np
    if a.__class__ is Tensor:
        x = a._a if a._a.dtype == npdt else a._a.astype(npdt)
    else:
        x = npdt.type(a)
    if b.__class__ is Tensor:
        y = b._a if b._a.dtype == npdt else b._a.astype(npdt)
    else:
        y = npdt.type(b)
    return x, y


def _compute(fn, x, y, a, b):
    try:
        return fn(x, y)
    except ValueError:
        raise _broadcast_error(np.shape(x), np.shape(y)) from None


# ------------------------------------------------------------------------------------ arithmetic ops

def add(a: Tensor, b, alpha=1) -> Tensor:
    if b.__class__ is not Tensor and a._a.dtype.kind == "f" and (b.__class__ is float or b.__class__ is int):
        out = a._a + b if alpha == 1 else a._a + b * alpha
        return _record(ADD, out, (a, b), (alpha,))
    x, y = _operands(a, b)
    out = _compute(np.add, x, y if alpha == 1 else y * alpha, a, b)
    return _record(ADD, out, (a, b), (alpha,), fit=_fit_for(out, a, b))


def sub(a: Tensor, b, alpha=1) -> Tensor:
    if b.__class__ is not Tensor and a._a.dtype.kind == "f" and (b.__class__ is float or b.__class__ is int):
        out = a._a - b if alpha == 1 else a._a - b * alpha
        return _record(SUB, out, (a, b), (alpha,))
    if (a._a.dtype == np.bool_) and (b.__class__ is Tensor and b._a.dtype == np.bool_ or b is True or b is False):
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                           "Use the `^` or `logical_xor()` operator instead.")
    x, y = _operands(a, b)
    out = _compute(np.subtract, x, y if alpha == 1 else y * alpha, a, b)
    return _record(SUB, out, (a, b), (alpha,), fit=_fit_for(out, a, b))


def rsub(a: Tensor, b) -> Tensor:
    """`number - tensor`."""
    x, y = _operands(a, b)
    out = _compute(np.subtract, y, x, b, a)
    return _record(RSUB, out, (a,), (), fit=_fit_for(out, a))


def mul(a: Tensor, b) -> Tensor:
    if b.__class__ is not Tensor and a._a.dtype.kind == "f" and (b.__class__ is float or b.__class__ is int):
        return _record(MUL, a._a * b, (a, b), (None, b))
    x, y = _operands(a, b)
    out = _compute(np.multiply, x, y, a, b)
    if not _needs_grad(a, b):
        return Tensor(out)
    b_is_t = b.__class__ is Tensor
    saved = (x if b_is_t and b.requires_grad else None, y)
    checks = tuple(_check(t) for t, keep in ((a, b_is_t and b.requires_grad), (b, a.requires_grad))
                   if keep and t.__class__ is Tensor)
    return _record(MUL, out, (a, b), saved, checks or None, _fit_for(out, a, b))


def div(a: Tensor, b) -> Tensor:
    if b.__class__ is not Tensor and a._a.dtype.kind == "f" and (b.__class__ is float or b.__class__ is int):
        return _record(DIV, _compute(np.true_divide, a._a, b, a, b), (a, b), (None, b))
    x, y = _operands(a, b, floating=True)
    out = _compute(np.true_divide, x, y, a, b)
    if not _needs_grad(a, b):
        return Tensor(out)
    checks = tuple(_check(t) for t in (a, b) if t.__class__ is Tensor)
    return _record(DIV, out, (a, b), (x, y), checks or None, _fit_for(out, a, b))


def rdiv(a: Tensor, b) -> Tensor:
    """`number / tensor`: PyTorch records it as reciprocal(tensor) * number."""
    return mul(reciprocal(a), b)


def reciprocal(a: Tensor) -> Tensor:
    x = a._a if a._a.dtype.kind == "f" else a._a.astype(dtypes.default_float.np)
    with np.errstate(divide="ignore"):
        out = np.reciprocal(x)
    return _record(RECIPROCAL, out, (a,), (out,))


def neg(a: Tensor) -> Tensor:
    if a._a.dtype == np.bool_:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` operator instead.")
    return _record(NEG, np.negative(a._a), (a,), ())


def _scalar_power(x: np.ndarray, e):
    """x ** e for a scalar exponent, taking the same shortcuts as PyTorch's CPU kernel so results agree
    to the last bit (x*x for 2, x*x*x for 3, sqrt for 0.5, ...)."""
    if x.dtype.kind == "f":
        if e == 2:
            return x * x
        if e == 3:
            return x * x * x
        if e == 0.5:
            return np.sqrt(x)
        if e == -0.5:
            return 1 / np.sqrt(x)
        if e == -1:
            return 1 / x
        if e == -2:
            return 1 / (x * x)
        if e == 1:
            return x.copy()
    return np.power(x, x.dtype.type(e))


def power(a, b) -> Tensor:
    """tensor ** number (PowBackward0), tensor ** tensor (PowBackward1), number ** tensor (PowBackward2)."""
    if a.__class__ is Tensor and b.__class__ is not Tensor:
        x, y = _operands(a, b)
        if x.dtype.kind in "iub" and isinstance(b, int) and b < 0:
            raise RuntimeError("Integers to negative integer powers are not allowed.")
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            out = _scalar_power(x, b)
        if not _needs_grad(a):
            return Tensor(out)
        return _record(POW_SCALAR, out, (a,), (x, b), (_check(a),), _fit_for(out, a))
    if a.__class__ is Tensor:
        x, y = _operands(a, b)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            out = np.power(x, y)
        if not _needs_grad(a, b):
            return Tensor(out)
        checks = (_check(a), _check(b))
        return _record(POW_TENSOR, out, (a, b), (x, y, out), checks, _fit_for(out, a, b))
    # a is a Python number, b a tensor
    x, y = _operands(a, b)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out = np.power(x, y)
    if not _needs_grad(b):
        return Tensor(out)
    return _record(POW_BASE, out, (b,), (a, out), (_check(b),), _fit_for(out, b))


def exp(a: Tensor) -> Tensor:
    x = a._a if a._a.dtype.kind == "f" else a._a.astype(dtypes.default_float.np)
    with np.errstate(over="ignore"):
        out = np.exp(x)
    return _record(EXP, out, (a,), (out,))


# ------------------------------------------------------------------------------------------ comparisons

def compare(fn, a, b) -> Tensor:
    x, y = _operands(a, b)
    return Tensor(_compute(fn, x, y, a, b))


# ----------------------------------------------------------------------------------------- reductions

def _axes(dim, ndim: int) -> tuple:
    """Normalise `dim` (int or sequence) to sorted non-negative axes, with PyTorch's range error."""
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    out = []
    for d in dims:
        if not isinstance(d, int) or isinstance(d, bool):
            raise TypeError(f"dim must be int or tuple of ints, not {type(d).__name__}")
        lo, hi = (-ndim, ndim - 1) if ndim else (-1, 0)
        if d < lo or d > hi:
            raise IndexError(f"Dimension out of range (expected to be in range of [{lo}, {hi}], but got {d})")
        d = d % ndim if ndim else 0
        if d in out:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        out.append(d)
    return tuple(sorted(out))


def _sum_dtype(a: np.ndarray):
    # PyTorch sums integers and bools as int64
    return np.int64 if a.dtype.kind in "iub" else a.dtype


def reduce_sum(a: Tensor, dim=None, keepdim=False, dtype=None) -> Tensor:
    x = a._a
    out_dtype = dtype.np if dtype is not None else _sum_dtype(x)
    if dim is None:
        out = np.asarray(x.sum(dtype=out_dtype))
        return _record(SUM, out, (a,), (x.shape,))
    axes = _axes(dim, x.ndim)
    out = np.asarray(x.sum(axis=axes if x.ndim else None, keepdims=keepdim and x.ndim > 0, dtype=out_dtype))
    return _record(SUM_DIM, out, (a,), (x.shape, axes if x.ndim else (), keepdim))


def mean(a: Tensor, dim=None, keepdim=False, dtype=None) -> Tensor:
    x = a._a
    if dtype is not None:
        x = x.astype(dtype.np)
    if x.dtype.kind not in "fc":
        raise RuntimeError(
            "mean(): could not infer output dtype. Input dtype must be either a floating point or complex "
            f"dtype. Got: {_type_word(x)}")
    if dim is None:
        n = x.size
        with np.errstate(invalid="ignore", divide="ignore"):
            out = np.asarray(x.sum(dtype=x.dtype) / x.dtype.type(n) if n else np.float64("nan"), dtype=x.dtype)
        return _record(MEAN, out, (a,), (x.shape, n))
    axes = _axes(dim, x.ndim)
    n = 1
    for ax in axes:
        n *= x.shape[ax] if x.ndim else 1
    with np.errstate(invalid="ignore", divide="ignore"):
        s = x.sum(axis=axes if x.ndim else None, keepdims=keepdim and x.ndim > 0)
        out = np.asarray(s / x.dtype.type(n) if n else s * np.nan, dtype=x.dtype)
    return _record(MEAN_DIM, out, (a,), (x.shape, axes if x.ndim else (), keepdim, n))


def _type_word(x: np.ndarray) -> str:
    return {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
            "bool": "Bool", "float32": "Float", "float64": "Double", "float16": "Half"}[x.dtype.name]


def norm(a: Tensor, p=2, dim=None, keepdim=False) -> Tensor:
    x = a._a
    if x.dtype.kind != "f":
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as input. "
                           f"Got {_type_word(x)}")
    axes = None if dim is None else _axes(dim, x.ndim)
    ax = axes if (axes is not None and x.ndim) else None
    keep = keepdim and axes is not None and x.ndim > 0
    if p == 2 or p == "fro":
        out = np.sqrt(np.sum(x * x, axis=ax, keepdims=keep))
    elif p == 1:
        out = np.sum(np.abs(x), axis=ax, keepdims=keep)
    elif p == float("inf"):
        out = np.max(np.abs(x), axis=ax, keepdims=keep)
    else:
        raise NotImplementedError(f"norm with p={p!r} is not available yet in gradcli")
    out = np.asarray(out, dtype=x.dtype)
    if p != 2 and p != "fro" and _needs_grad(a):
        raise NotImplementedError(f"the gradient of norm with p={p!r} is not available yet in gradcli")
    if keepdim and axes is not None:
        axes_saved, keep_saved = axes, True
    else:
        axes_saved, keep_saved = (axes if x.ndim else None), False
    return _record(NORM, out, (a,), (x, out, axes_saved, keep_saved), (_check(a),))


# ------------------------------------------------------------------------------------- linear algebra

def _dtype_word(x: np.ndarray) -> str:
    return {"int64": "long int", "int32": "int", "float32": "float", "float64": "double",
            "bool": "bool", "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
            "float16": "c10::Half"}[x.dtype.name]


def mm(a: Tensor, b: Tensor) -> Tensor:
    if b.__class__ is not Tensor:
        raise TypeError(f"mm(): argument 'mat2' (position 1) must be Tensor, not {type(b).__name__}")
    x, y = a._a, b._a
    if x.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if y.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    if x.shape[1] != y.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied "
                           f"({x.shape[0]}x{x.shape[1]} and {y.shape[0]}x{y.shape[1]})")
    if x.dtype != y.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{_dtype_word(x)} != {_dtype_word(y)}")
    out = x @ y
    if not _needs_grad(a, b):
        return Tensor(out)
    return _record(MM, out, (a, b), (x, y), (_check(a), _check(b)))


# ----------------------------------------------------------------------------------------- copies

def clone(a: Tensor) -> Tensor:
    return _record(CLONE, a._a.copy(), (a,), ())


def to_dtype(a: Tensor, dtype: dtypes.DType, copy=False) -> Tensor:
    """`.to(dtype)` / `.float()` / `.double()`: the same tensor when nothing changes, as in PyTorch."""
    if a._a.dtype == dtype.np and not copy:
        return a
    out = a._a.astype(dtype.np)
    if dtype.category != dtypes.FLOAT:
        return Tensor(out)
    return _record(TO_COPY, out, (a,), (), fit=_fit_for(out, a))


def fill(a: Tensor, value, zero=False) -> Tensor:
    """The out-of-place twin of fill_/zero_: the values, with a node whose gradient is zero."""
    if value.__class__ is Tensor:
        if value._a.ndim != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value._a.ndim} dimensions.")
        out = np.full(a._a.shape, value._a, dtype=a._a.dtype)
        return _record(FILL_TENSOR, out, (a, value), (), fit=[None, (value._a.shape, value._a.dtype)])
    out = np.full(a._a.shape, value, dtype=a._a.dtype)
    return _record(ZERO if zero else FILL, out, (a,), ())


def unbind0(a: Tensor) -> list:
    """Iterating a tensor yields its rows; PyTorch records them as outputs of one UnbindBackward0."""
    x = a._a
    if x.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    rows = [Tensor(x[i]) for i in range(x.shape[0])]
    if _needs_grad(a):
        for i, r in enumerate(rows):
            r.grad_fn = Node(_unbind_op(i, x.shape), (edge(a),), ())
            r.requires_grad = True
    return rows


_UNBIND_CACHE = {}


def _unbind_op(i: int, shape: tuple) -> Op:
    # One row of UnbindBackward0 per (index, shape): its formula scatters g into row i of zeros.
    key = (i, shape)
    op = _UNBIND_CACHE.get(key)
    if op is None:
        def scatter(g, i=i, shape=shape):
            out = np.zeros(shape, dtype=g.dtype)
            out[i] = g
            return out
        op = _UNBIND_CACHE[key] = Op("UnbindBackward0", False, (scatter,))
    return op


# ------------------------------------------------------------------------------------------ indexing
#
# Basic indexing is decomposed the way PyTorch records it: one node per integer (select), per
# non-trivial slice (slice) and per None (unsqueeze), so X[0, 1] is SelectBackward0 of SelectBackward0.
# Anything with a list, a bool or a tensor in it is advanced indexing: one IndexBackward0.

def _scatter(g, shape, key):
    out = np.zeros(shape, dtype=g.dtype)
    out[key] = g
    return out


def _scatter_add(g, shape, key):
    out = np.zeros(shape, dtype=g.dtype)
    np.add.at(out, key, g)
    return out


def _copy_slices_self(g, key, value_shape):
    g = g.copy()
    g[key] = 0
    return g


# fmt: off
SELECT      = Op("SelectBackward0",    False, (_scatter,))
SLICE       = Op("SliceBackward0",     False, (_scatter,))
UNSQUEEZE   = Op("UnsqueezeBackward0", False, (lambda g, dim: np.squeeze(g, dim),))
ALIAS       = Op("AliasBackward0",     False, (lambda g: g,))
INDEX       = Op("IndexBackward0",     True,  (_scatter_add,))
COPY_SLICES = Op("CopySlices",         False, (_copy_slices_self, lambda g, key, value_shape: g[key]))
# fmt: on


def _view(a: Tensor, out: np.ndarray, op, saved) -> Tensor:
    """A result that aliases `a`'s data (numpy view) and so shares its version counter."""
    t = _record(op, out, (a,), saved)
    t._version = a._version
    return t


def _index_error_0d():
    return IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                      "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")


def _is_advanced(k) -> bool:
    return k.__class__ is Tensor or k.__class__ is list or k is True or k is False


def _advanced_key(x: np.ndarray, key: tuple):
    """The numpy key for advanced indexing, with PyTorch's errors for out-of-range indices."""
    arrays = []
    for k in key:
        if k.__class__ is Tensor:
            arr = k._a
        elif k.__class__ is list or k is True or k is False:
            arr = np.asarray(k)
        else:
            arrays.append(k)
            continue
        if arr.dtype.kind not in "iub":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        arrays.append(arr)
    consuming = 0
    for k in arrays:
        if k is None or k is Ellipsis:
            continue
        consuming += k.ndim if isinstance(k, np.ndarray) and k.dtype == np.bool_ else 1
    dim = 0
    for k in arrays:
        if k is Ellipsis:
            dim += x.ndim - consuming
        elif k is None:
            continue
        elif isinstance(k, np.ndarray) and k.dtype == np.bool_:
            dim += k.ndim
        else:
            if isinstance(k, np.ndarray) and dim < x.ndim:
                size = x.shape[dim]
                bad = k[(k >= size) | (k < -size)]
                if bad.size:
                    raise IndexError(f"index {int(bad.flat[0])} is out of bounds for dimension {dim} "
                                     f"with size {size}")
            dim += 1
    return tuple(arrays)


def _basic_steps(x: np.ndarray, key: tuple):
    """Expand `...` and check sizes: a list of (kind, dim, value) applied left to right."""
    consuming = sum(1 for k in key if k is not None and k is not Ellipsis)
    if consuming > x.ndim:
        if x.ndim == 0:
            raise _index_error_0d()
        raise IndexError(f"too many indices for tensor of dimension {x.ndim}")
    steps = []
    dim = 0
    seen_ellipsis = False
    for k in key:
        if k is Ellipsis:
            if seen_ellipsis:
                raise IndexError("an index can only have a single ellipsis ('...')")
            seen_ellipsis = True
            dim += x.ndim - consuming
        elif k is None:
            steps.append(("unsqueeze", dim, None))
            dim += 1
        elif k.__class__ is slice:
            steps.append(("slice", dim, k))
            dim += 1
        else:
            try:
                i = k.__index__()
            except (AttributeError, TypeError):
                raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                                 "Variables are valid indices (got " + type(k).__name__ + ")") from None
            steps.append(("select", dim, i))
    return steps


def getitem(a: Tensor, key) -> Tensor:
    x = a._a
    single = key.__class__ is not tuple
    keys = (key,) if single else key
    if any(_is_advanced(k) for k in keys):
        if x.ndim == 0 and not all(k is True or k is False or k is None for k in keys):
            raise _index_error_0d()
        npkey = _advanced_key(x, keys)
        try:
            out = x[npkey]
        except IndexError as e:
            raise IndexError(str(e).replace("axis", "dimension")) from None
        return _record(INDEX, out, (a,), (x.shape, npkey))
    t = a
    changed = False
    offset = 0                 # dims removed by earlier selects
    for kind, dim, value in _basic_steps(x, keys):
        d = dim - offset
        cur = t._a
        if kind == "select":
            size = cur.shape[d]
            if value < -size or value >= size:
                raise IndexError(f"index {value} is out of bounds for dimension {d} with size {size}")
            k = (slice(None),) * d + (value,)
            t = _view(t, cur[k], SELECT, (cur.shape, k))
            offset += 1
            changed = True
        elif kind == "slice":
            if value == slice(None) and not single:
                continue
            if value.step is not None and value.step <= 0:
                raise ValueError("step must be greater than zero")
            k = (slice(None),) * d + (value,)
            t = _view(t, cur[k], SLICE, (cur.shape, k))
            changed = True
        else:
            t = _view(t, np.expand_dims(cur, d), UNSQUEEZE, (d,))
            changed = True
    if not changed:
        return _view(a, x.view(), ALIAS, ())
    return t


def setitem(a: Tensor, key, value) -> None:
    """`a[key] = value`: in place, recorded as CopySlices when autograd is involved."""
    recording = autograd._grad_enabled[0]
    if recording and a.requires_grad and a.grad_fn is None:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")
    x = a._a
    keys = key if key.__class__ is tuple else (key,)
    if any(_is_advanced(k) for k in keys):
        npkey = _advanced_key(x, keys)
    else:
        steps = _basic_steps(x, keys)
        for kind, dim, i in steps:
            if kind == "select":
                size = x.shape[dim] if dim < x.ndim else 0
                if i < -size or i >= size:
                    raise IndexError(f"index {i} is out of bounds for dimension {dim} with size {size}")
        npkey = key
    if value.__class__ is Tensor:
        src = value._a
    elif isinstance(value, (int, float, bool)):
        src = value
    else:
        raise TypeError(f"can't assign a {type(value).__name__} to a {dtypes.of_array(x).legacy}")
    try:
        target_shape = x[npkey].shape
        x[npkey] = src
    except ValueError:
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(np.shape(src))} cannot be broadcast "
                           f"to indexing result of shape {list(target_shape)}") from None
    a._version[0] += 1
    if recording and (a.requires_grad or (value.__class__ is Tensor and value.requires_grad)):
        vshape = np.shape(src)
        fit = [None, (vshape, src.dtype) if value.__class__ is Tensor and (vshape != target_shape or src.dtype != x.dtype) else None]
        node = Node(COPY_SLICES, (edge(a), edge(value) if value.__class__ is Tensor else None),
                    (npkey, vshape), None, fit if fit[1] is not None else None)
        a.grad_fn = node
        a.requires_grad = True
