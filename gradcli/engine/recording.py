"""What every forward function shares: op rows, recording a node, saving inputs, operand promotion, dims.

An op module declares its rows (`Op`) in a table and writes forward functions that compute with numpy
and call `record`. What a node saves is what the row's formulas receive after `F` (the math
vocabulary, see backmath.py) and the incoming gradient `g`:
  * a Tensor (an input, saved with `saved_input`): numpy's array in a plain backward, the Tensor
    itself under create_graph, so higher derivatives flow through it;
  * `Out(array)`: the op's own result (saved without a reference from the node to the output tensor,
    which would be a cycle);
  * anything else (numbers, shapes, dims, index arrays) as it is.
"""

from __future__ import annotations

import numpy as np

from gradcli.engine import budget
from gradcli.engine import autograd, dtypes
from gradcli.engine.autograd import Node, edge
from gradcli.engine.tensor import Tensor
from gradcli.engine.state import STATE


class Op:
    """One row of an op table: PyTorch's node name, whether a backward pass frees what the node saved
    (PyTorch frees saved tensors, so a second pass through such a node fails), one formula per input.

    Two optional facts let a plain (numpy) backward save full-size passes; neither changes a value:
      * `fresh`: every formula returns a new array (a ufunc of the incoming gradient, like `g * result`)
        that nothing else references, so the engine may later overwrite it in place (autograd._sweep);
      * `joint(g, *saved, scratch)`, for a two-input row: when a node has the same node on both edges
        (`x * x`), the sum of the two gradients its formulas would send there, rounded the same way, or
        None when the saved values do not allow it; `scratch` says the engine owns `g`, so the result
        may be written there.
    """

    __slots__ = ("node", "saves_tensors", "backward", "fresh", "joint")

    def __init__(self, node: str, saves_tensors: bool, backward: tuple, fresh=False, joint=None):
        self.node = node
        self.saves_tensors = saves_tensors
        self.backward = backward
        self.fresh = fresh
        self.joint = joint

    def __repr__(self):
        return f"Op({self.node})"


class Out:
    """A node's saved reference to its own result."""

    __slots__ = ("a",)

    def __init__(self, a: np.ndarray):
        self.a = a


def record(op: Op, out: np.ndarray, inputs: tuple, saved: tuple, checks=None, fit=None) -> Tensor:
    """Wrap a forward result; attach a node when grad mode is on and some input requires grad."""
    t = Tensor(out)
    if STATE.observer is not None:
        STATE.observer.op(op, t, inputs)
    if not STATE.recording:
        return t
    nodes = tuple([(x.grad_fn or edge(x)) if x.__class__ is Tensor else None for x in inputs])
    for n in nodes:
        if n is not None:
            break
    else:
        return t
    if op.saves_tensors or STATE.inference_seen:
        for s in saved:
            if s.__class__ is Out:
                # the result is saved: changing it in place must fail the backward pass
                entry = (None, t._version, 0, out.shape, dtypes.of_array(out).legacy, op.node)
                checks = (entry,) if checks is None else tuple(checks) + (entry,)
            elif s.__class__ is Tensor and s._inference:
                raise RuntimeError(INFERENCE_SAVED_ERROR)
    t.grad_fn = Node(op, nodes, saved, checks, fit)
    t.requires_grad = True
    return t




INFERENCE_SAVED_ERROR = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in inference mode in "
    "computation tracked by autograd. To work around this, you can make a clone to get a normal tensor and use "
    "it in autograd, or use `torch.no_grad()` instead of `torch.inference_mode()`.")


def needs_grad(*inputs) -> bool:
    if not STATE.recording:
        return False
    for x in inputs:
        if x.__class__ is Tensor and x.requires_grad:
            return True
    return False


def version_check(t: Tensor):
    """A version-counter entry for a saved input tensor."""
    return (t, t._version, t._version[0], t._a.shape, dtypes.of_array(t._a).legacy, None)


def saved_input(t: Tensor, computed: np.ndarray):
    """What to save for input `t` that the forward computed with as `computed` (its array, maybe cast to
    the op's dtype): the tensor itself when it can carry gradients (create_graph needs it), else a
    detached tensor of the computed values, so formulas see PyTorch's promoted dtype."""
    if t.requires_grad or computed is t._a:
        return t
    return Tensor(computed)


def fit_for(out: np.ndarray, *inputs):
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

PY_NUMBERS = (float, int, bool)


def broadcast_error(a_shape, b_shape):
    n = max(len(a_shape), len(b_shape))
    pa = (1,) * (n - len(a_shape)) + tuple(a_shape)
    pb = (1,) * (n - len(b_shape)) + tuple(b_shape)
    for i in range(n - 1, -1, -1):
        if pa[i] != pb[i] and pa[i] != 1 and pb[i] != 1:
            return RuntimeError(f"The size of tensor a ({pa[i]}) must match the size of tensor b ({pb[i]}) "
                                f"at non-singleton dimension {i}")
    return RuntimeError(f"shapes {list(a_shape)} and {list(b_shape)} cannot be broadcast")


def result_dtype(*operands) -> dtypes.DType:
    """PyTorch's result dtype for tensors and Python numbers."""
    dim = zero = scalar = None
    for x in operands:
        if x.__class__ is Tensor:
            d = dtypes.of_array(x._a)
            if x._a.ndim:
                dim = d if dim is None else dtypes.promote_types(dim, d)
            else:
                zero = d if zero is None else dtypes.promote_types(zero, d)
        elif x is not None:
            d = dtypes.scalar_dtype(x)
            scalar = d if scalar is None else dtypes.promote_types(scalar, d)
    return dtypes.result_type(dim, zero, scalar)


def check_operand(x, name="other"):
    if x.__class__ is not Tensor and not isinstance(x, PY_NUMBERS):
        raise TypeError(f"unsupported operand type(s): expected a Tensor or a number, got {type(x).__name__}")


def operands(a, b, floating=False):
    """The numpy operands of a binary op, already in PyTorch's result dtype (numpy's own promotion
    differs: int64 * 2.5 is float64 there, float32 in PyTorch)."""
    check_operand(a)
    check_operand(b)
    if b.__class__ is int and not _INT64_MIN <= b <= _INT64_MAX:
        _wide_int_operand(a, b)
    dt = result_dtype(a, b)
    if floating and dt.category != dtypes.FLOAT:
        dt = dtypes.default_float
    npdt = dt.np
    if a.__class__ is Tensor:
        x = a._a if a._a.dtype == npdt else a._a.astype(npdt)
    else:
        try:
            x = npdt.type(a)
        except OverflowError:
            x = _wrapped_int(a, npdt)
    if b.__class__ is Tensor:
        y = b._a if b._a.dtype == npdt else b._a.astype(npdt)
    else:
        try:
            y = npdt.type(b)
        except OverflowError:
            y = _wrapped_int(b, npdt)
    if x.size * y.size > STATE.large_result:     # the broadcast result could pass --max-memory: check its size
        budget.check_broadcast(x, y)
    return x, y




_INT64_MIN, _INT64_MAX, _UINT64_END = -(1 << 63), (1 << 63) - 1, 1 << 64
# The C++ type names PyTorch's conversion messages use
_CXX_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "int64": "int64_t", "int32": "int",
              "int16": "int16_t", "int8": "int8_t", "uint8": "uint8_t"}


def scalar_int(value: int) -> None:
    """PyTorch reads a Python int into a 64-bit number, signed or (from 2**63) unsigned: past both fails."""
    if value >= _UINT64_END:
        raise OverflowError("int too big to convert")
    if value < _INT64_MIN:
        raise OverflowError("can't convert negative int to unsigned")


def int64_arg(value: int) -> int:
    """An `int` argument (an offset, a diagonal) as PyTorch's parser reads it into 64 bits."""
    if not _INT64_MIN <= value <= _INT64_MAX:
        raise ValueError("Overflow when unpacking long long")
    return value


def checked_scalar(value, npdt: np.dtype):
    """`value` (a Python number) for a tensor of dtype `npdt` where PyTorch converts it with an overflow
    check (fill values, clamp bounds, where's numbers, alpha): its RuntimeError when it does not fit."""
    cls = value.__class__
    if cls is int:
        scalar_int(value)
    kind = npdt.kind
    if kind == "b" or cls is bool:
        return value
    if kind == "f":
        if npdt.itemsize < 8 and abs(value) > float(np.finfo(npdt).max) and abs(value) != float("inf"):
            raise _conversion_overflow(npdt)
        return value
    info = np.iinfo(npdt)
    if cls is float:
        fits = value == value and info.min <= value <= info.max
    elif kind == "u":
        fits = -info.max <= value <= info.max     # a negative value wraps, as C++'s conversion does
    else:
        fits = info.min <= value <= info.max
    if not fits:
        raise _conversion_overflow(npdt)
    return value


def _conversion_overflow(npdt: np.dtype) -> RuntimeError:
    return RuntimeError(f"value cannot be converted to type {_CXX_NAMES[npdt.name]} without overflow")


def _wide_int_operand(a, b: int) -> None:
    """A Python int past int64 as an operand: PyTorch reads it as an unsigned 64-bit number, which only
    integer and float tensors take (and nothing past 64 bits)."""
    scalar_int(b)
    if a.__class__ is Tensor and a._a.dtype == np.bool_:
        raise RuntimeError("Promotion for uint16, uint32, uint64 types is not supported, attempted to promote "
                           "Bool and UInt64")


def _wrapped_int(value: int, npdt: np.dtype):
    """A Python int that numpy will not put into a narrower integer dtype: wrapped around as PyTorch's
    kernels do (int8 + 300 is int8 + 44), after PyTorch's own 64-bit reading of it."""
    scalar_int(value)
    if npdt.kind not in "iu":
        return npdt.type(value)
    bits = npdt.itemsize * 8
    value %= 1 << bits
    if npdt.kind == "i" and value >= 1 << (bits - 1):
        value -= 1 << bits
    return npdt.type(value)


def compute(fn, x, y):
    """Apply a numpy binary function, turning numpy's broadcast failure into PyTorch's message."""
    try:
        return fn(x, y)
    except ValueError:
        raise broadcast_error(np.shape(x), np.shape(y)) from None


def floating(a: Tensor) -> np.ndarray:
    """The array of `a` for a floating-point op: integer and bool inputs become the default float."""
    x = a._a
    return x if x.dtype.kind == "f" else x.astype(dtypes.default_float.np)


# --------------------------------------------------------------------------------------------- dims

def axes(dim, ndim: int) -> tuple:
    """Normalise `dim` (int or sequence) to sorted non-negative axes, with PyTorch's range error."""
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    out = []
    for d in dims:
        if not isinstance(d, int) or isinstance(d, bool):
            raise TypeError(f"dim must be int or tuple of ints, not {type(d).__name__}")
        d = wrap_dim(d, ndim)
        if d in out:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
        out.append(d)
    return tuple(sorted(out))


def reduction_dims(dim, ndim: int) -> tuple:
    """`axes` for a reduction; a 0-d tensor accepts dim 0 or -1 and reduces over nothing."""
    dims = axes(dim, ndim)
    return dims if ndim else ()


def wrap_dim(d: int, ndim: int) -> int:
    """A possibly negative dim as an index into the shape; 0-d tensors accept dims 0 and -1. A dim that
    is not an int is a TypeError (which the call's argument check words as PyTorch does), one past
    64 bits PyTorch's parser's ValueError."""
    if d.__class__ is not int:
        d = _dim_int(d)
    lo, hi = (-ndim, ndim - 1) if ndim else (-1, 0)
    if d < lo or d > hi:
        int64_arg(d)
        raise IndexError(f"Dimension out of range (expected to be in range of [{lo}, {hi}], but got {d})")
    return d % ndim if ndim else 0


def _dim_int(d) -> int:
    if isinstance(d, np.integer):
        return int(d)
    raise TypeError(f"argument 'dim' must be int, not {type(d).__name__}")


TYPE_WORDS = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
              "bool": "Bool", "float32": "Float", "float64": "Double", "float16": "Half"}


def type_word(x: np.ndarray) -> str:
    """The scalar type name PyTorch's messages use: Float, Long, Bool, ..."""
    return TYPE_WORDS[x.dtype.name]
