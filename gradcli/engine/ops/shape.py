"""Shape ops: views and rearrangements of a tensor's elements (reshape, permute, cat, split, gather, ...)."""

from __future__ import annotations

import math
import operator

import numpy as np
from numpy.lib.stride_tricks import as_strided

from gradcli.engine.layout import (contiguous as row_major, copied_in_format, in_inputs_format, preserved,
                                   suggested_format, unsqueezed)
from gradcli.engine import autograd, budget, views
from gradcli.engine import dtypes, signatures
from gradcli.engine.ops import arith, indexing, padding
from gradcli.engine.recording import (autocast_policy, TYPE_WORDS, Op, apply, axes, broadcast_error, check_list_int, checked_double,
                                      given_dims, int64_arg,
                                      index_arg, int_param, list_element_arg, type_word, wrap_dim, wrap_int64)
from gradcli.engine.state import STATE
from gradcli.engine.tensor import Size, Tensor


class _EachInput:
    """The formulas of an op with any number of inputs (cat, stack): input i's gradient is
    `formula(F, g, i, *saved)`."""

    __slots__ = ("formula",)

    def __init__(self, formula):
        self.formula = formula

    def __getitem__(self, i):
        formula = self.formula
        return lambda F, g, *saved: formula(F, g, i, *saved)


def _repeat_backward(F, g, repeats, shape):
    """Sum the tiles of `repeat` back onto the input: each repeated dim is split into (repeat, size)."""
    lead = len(repeats) - len(shape)
    for _ in range(lead):
        g = F.sum_dims(g, (0,))
    size, dims = [], []
    for r, s in zip(repeats[lead:], shape):
        if r != 1:
            size.append(r)
            dims.append(len(size) - 1)
        size.append(s)
    return F.sum_dims(F.reshape(g, tuple(size)), tuple(dims)) if dims else g


def _cat_backward(F, g, i, parts):
    key = parts[i]
    return F.getitem(g, key) if key is not None else F.zeros((0,), g)


def _stack_backward(F, g, i, dim):
    if dim < 0:                 # the dim as the script gave it (the node shows it so)
        return F.getitem(g, (Ellipsis, i) + (slice(None),) * (-dim - 1))
    return F.getitem(g, (slice(None),) * dim + (i,))


def _gather_0d_backward(F, g, shapes, key):
    """A gather with a 0-d input or index ran on 1-d views of both (`shapes`: the input's, its 1-d
    view's, the index's 1-d view's); under create_graph, PyTorch's zeros.scatter_add on the tensors as given."""
    if F.tensors:
        from gradcli.engine.ops import scatter
        index = Tensor(np.asarray(key[0], dtype=np.int64).reshape(g._a.shape))
        return scatter.scatter_add(Tensor(np.zeros(shapes[0], g._a.dtype)), key.given["dim"], index, g)
    return F.reshape(F.index_add(F.reshape(g, shapes[2]), shapes[1], key), shapes[0])


def _gather_backward(F, g, shape, key):
    """gather_backward: the gradient added back at the gathered places; under create_graph recorded as PyTorch's
    zeros.scatter_add(dim, index, grad) (ScatterAddBackward0, whose first edge is the zeros': None)."""
    if not F.tensors:
        return F.index_add(g, shape, key)
    from gradcli.engine.ops import scatter
    dim = key.given["dim"]
    index = Tensor(np.ascontiguousarray(key[wrap_dim(dim, len(shape))]).astype(np.int64))
    return scatter.scatter_add(Tensor(np.zeros(shape, g._a.dtype)), dim, index, g)


def _index_select_backward(F, g, shape, key):
    """index_select_backward: the gradient added back at the selected slices; under create_graph recorded as
    PyTorch's zeros.index_add(dim, index, grad) (IndexAddBackward0, its first edge None)."""
    if not F.tensors or not key:
        return F.index_add(g, shape, key)
    from gradcli.engine.ops import scatter
    dim = key.given["dim"]
    index = Tensor(np.asarray(key[wrap_dim(dim, len(shape))], dtype=np.int64))
    return scatter.index_add(Tensor(np.zeros(shape, g._a.dtype)), dim, index, g)


def _piece_backward(F, g, shape, key, index):
    """The gradient of one output of split / chunk: zeros but for its slice."""
    return F.scatter(g, shape, key, "slice")


# Forward-mode columns (gradcli.engine.forward). Every row here is linear: PyTorch's auto_linear, the op
# applied to the tangent with the forward's own arguments, so a tangent of a view is a view of the input's
# tangent (an in-place change of one shows in the other) and, when the tangent requires grad, it gets the
# row's own node. cat and stack take zeros for the inputs without a tangent (PyTorch's cat_jvp, stack_jvp).

def _linear_view(op: Op, array_of):
    """The column of view row `op`: the tangent seen through the same view (`array_of(tangent, result,
    *saved)` is the tangent's numpy view), recorded with the row's saved values."""
    return lambda F, ts, xs, result, *saved: _view_of(ts[0], array_of(ts[0]._a, result._a, *saved), op, saved)


def _linear_copy(op: Op, array_of):
    """The column of row `op` whose result is a new array: the same rearrangement of the tangent."""
    return lambda F, ts, xs, result, *saved: apply(op, array_of(ts[0]._a, result._a, *saved), (ts[0],), saved)


def _reshaped(x: np.ndarray, r: np.ndarray, *saved) -> np.ndarray:
    """`x` with the result's shape: a view when its strides allow one (a tangent made by the caller may be
    laid out otherwise than its primal, which a view of the primal could not tell), else a copy."""
    out = _nocopy_reshape(x, r.shape)
    return x.reshape(r.shape) if out is None else out


def _cat_jvp(F, ts, xs, result, parts):
    from gradcli.engine import forward
    dim = next((len(key) - 1 for key in parts if key is not None), 0)
    return cat([forward.tangent_or_zeros(ts, xs, i) for i in range(len(xs))], dim)


def _stack_jvp(F, ts, xs, result, dim):
    from gradcli.engine import forward
    return stack([forward.tangent_or_zeros(ts, xs, i) for i in range(len(xs))], dim)


def _permute_jvp(F, ts, xs, result, inverse):
    order = [0] * len(inverse)
    for i, d in enumerate(inverse):
        order[d] = i
    return permute(ts[0], tuple(order))


def _unsqueeze_to(F, g, shape):
    """PyTorch's unsqueeze_to: the gradient itself when the squeeze removed no dim (so autograd.grad hands
    back a grad_outputs tensor unchanged), else reshaped."""
    return g if g.shape == shape else F.reshape(g, shape)


# Multi-output ops (split, chunk, unbind) record one node per output, each scattering its
# gradient into the input's shape; PyTorch shares one node between the outputs.
# fmt: off
EXPAND        = Op("ExpandBackward0",         None,    ("shape",),
                   (lambda F, g, shape: F.sum_to(g, shape),),
                   jvp=lambda F, ts, xs, result, shape: expand(ts[0], result._a.shape))
UNSQUEEZE     = Op("UnsqueezeBackward0",      None,    ("dim",),
                   (lambda F, g, dim: F.squeeze(g, dim),),
                   jvp=lambda F, ts, xs, result, dim: unsqueeze(ts[0], dim))
SQUEEZE_ALL   = Op("SqueezeBackward0",        None,    ("shape",),
                   (_unsqueeze_to,),
                   jvp=lambda F, ts, xs, result, shape: squeeze(ts[0]))
SQUEEZE       = Op("SqueezeBackward1",        None,    ("dim", "shape"),
                   (lambda F, g, dim, shape: _unsqueeze_to(F, g, shape),),
                   jvp=lambda F, ts, xs, result, dim, shape: squeeze(ts[0], dim))
# squeezing size-1 dims keeps the elements' order: the result's shape says which went
SQUEEZE_DIMS  = Op("SqueezeBackward2",        None,    ("shape",),
                   (_unsqueeze_to,))
SQUEEZE_      = Op("SqueezeBackward4",        None,    ("dim", "shape"),
                   (lambda F, g, dim, shape: _unsqueeze_to(F, g, shape),))
# the in-place view ops (t_, transpose_, squeeze_, unsqueeze_): a tensor takes a new shape, and its node
SQUEEZE_ALL_  = Op("SqueezeBackward3",        None,    ("shape",),
                   (_unsqueeze_to,),
                   jvp=lambda F, ts, xs, result, shape: squeeze(ts[0]))
UNSQUEEZE_    = Op("UnsqueezeBackward1",      None,    ("dim",),
                   (lambda F, g, dim: F.squeeze(g, dim),),
                   jvp=lambda F, ts, xs, result, dim: unsqueeze(ts[0], dim))
TRANSPOSE_T_  = Op("TBackward1",              None,    (),                        (lambda F, g: F.t(g),),
                   jvp=lambda F, ts, xs, result: t(ts[0]))
TRANSPOSE_    = Op("TransposeBackward1",      None,    ("dim0", "dim1"),
                   (lambda F, g, dim0, dim1: F.transpose(g, dim0, dim1),),
                   jvp=lambda F, ts, xs, result, dim0, dim1: transpose(ts[0], dim0, dim1))
TRANSPOSE_T   = Op("TBackward0",              None,    (),                        (lambda F, g: F.t(g),),
                   jvp=lambda F, ts, xs, result: t(ts[0]))
TRANSPOSE     = Op("TransposeBackward0",      None,    ("dim0", "dim1"),
                   (lambda F, g, dim0, dim1: F.transpose(g, dim0, dim1),),
                   jvp=lambda F, ts, xs, result, dim0, dim1: transpose(ts[0], dim0, dim1))
PERMUTE       = Op("PermuteBackward0",        None,    ("inverse",),
                   (lambda F, g, inverse: F.permute(g, inverse),), jvp=_permute_jvp)
VIEW          = Op("ViewBackward0",           None,    ("shape",),
                   (lambda F, g, shape: F.reshape(g, shape),))
# Tensor.resize / resize_as (deprecated): PyTorch's Python Function Resize, which has no forward-mode formula
RESIZE        = Op("ResizeBackward",          None,    ("shape",),
                   (lambda F, g, shape: F.reshape(g, shape),),
                   jvp=lambda F, ts, xs, result, shape: _no_resize_jvp())
RESHAPE_ALIAS = Op("ReshapeAliasBackward0",   None,    ("shape",),
                   (lambda F, g, shape: F.reshape(g, shape),))
UNSAFE_VIEW   = Op("UnsafeViewBackward0",     None,    ("shape",),
                   (lambda F, g, shape: F.reshape(g, shape),),
                   jvp=lambda F, ts, xs, result, shape: unsafe_view(ts[0], result._a.shape))
REPEAT        = Op("RepeatBackward0",         None,    ("repeats", "shape"),      (_repeat_backward,),
                   jvp=lambda F, ts, xs, result, repeats, shape: repeat(ts[0], repeats))
CAT           = Op("CatBackward0",            None,    ("parts",),                _EachInput(_cat_backward),
                   fits="dtype", jvp=_cat_jvp)
STACK         = Op("StackBackward0",          None,    ("dim",),                  _EachInput(_stack_backward),
                   fits="dtype", jvp=_stack_jvp)
SPLIT         = Op("SplitBackward0",          None,    ("shape", "key", "index"), (_piece_backward,))
SPLIT_SIZES   = Op("SplitWithSizesBackward0", None,    ("shape", "key", "index"), (_piece_backward,))
# the same pieces, not views to autograd (they share the data all the same): torch.unsafe_split and kin
UNSAFE_SPLIT  = Op("UnsafeSplitBackward0",    None,    ("shape", "key", "index"), (_piece_backward,))
UNSAFE_SPLIT_SIZES = Op("UnsafeSplitWithSizesBackward0", None, ("shape", "key", "index"), (_piece_backward,))
NARROW_COPY   = Op("NarrowCopyBackward0",     None,    ("shape", "key", "index"), (_piece_backward,))
PAD           = Op("ConstantPadNdBackward0",  None,    ("pad",),
                   (lambda F, g, pad: _pad_gradient(F, g, pad),),
                   jvp=lambda F, ts, xs, result, pad: constant_pad(ts[0], pad, 0))
FLIP          = Op("FlipBackward0",           None,    ("dims",),
                   (lambda F, g, dims: F.flip_dims(g, dims),),
                   jvp=lambda F, ts, xs, result, dims: flip(ts[0], dims))
ROLL          = Op("RollBackward0",           None,    ("shifts", "dims"),
                   (lambda F, g, shifts, dims: F.roll(g, tuple(-s for s in shifts), dims),),
                   jvp=lambda F, ts, xs, result, shifts, dims: roll(ts[0], shifts, dims))
GATHER        = Op("GatherBackward0",         None,    ("shape", "key"), (_gather_backward,), saves_tensors=True)
GATHER_0D     = Op("GatherBackward0",         None,    ("shapes", "key"),         (_gather_0d_backward,),
                   saves_tensors=True)
INDEX_SELECT  = Op("IndexSelectBackward0",    None,    ("shape", "key"), (_index_select_backward,),
                   saves_tensors=True)
UNFOLD        = Op("UnfoldBackward0",         None,    ("shape", "dimension", "size", "step"),
                   (lambda F, g, shape, dimension, size, step: F.unfold_backward(g, shape, dimension, size, step),),
                   jvp=lambda F, ts, xs, result, shape, dimension, size, step: unfold(ts[0], dimension, size, step))
# unfold's gradient recorded under create_graph (its own gradient is the unfold of the incoming one)
UNFOLD_BACKWARD = Op("UnfoldBackwardBackward0", None,  ("dimension", "size", "step"),
                   (lambda F, g, dimension, size, step: F.unfold(g, dimension, size, step),),
                   jvp=lambda F, ts, xs, result, dimension, size, step: unfold_backward(
                       ts[0], result._a.shape, dimension, size, step))
TRIL          = Op("TrilBackward0",           None,    ("diagonal",),
                   (lambda F, g, diagonal: F.tril(g, diagonal),),
                   jvp=lambda F, ts, xs, result, diagonal: tril(ts[0], diagonal))
TRIU          = Op("TriuBackward0",           None,    ("diagonal",),
                   (lambda F, g, diagonal: F.triu(g, diagonal),),
                   jvp=lambda F, ts, xs, result, diagonal: triu(ts[0], diagonal))
# fmt: on

# the columns that name their own row
SQUEEZE_DIMS.jvp = _linear_view(SQUEEZE_DIMS, _reshaped)
SQUEEZE_.jvp = _linear_copy(SQUEEZE_, lambda x, r, dim, shape: x.reshape(r.shape))
VIEW.jvp = _linear_view(VIEW, _reshaped)
RESHAPE_ALIAS.jvp = _linear_view(RESHAPE_ALIAS, _reshaped)
SPLIT.jvp = _linear_view(SPLIT, lambda x, r, shape, key, index: x[key])
SPLIT_SIZES.jvp = _linear_view(SPLIT_SIZES, lambda x, r, shape, key, index: x[key])
UNSAFE_SPLIT.jvp = _linear_copy(UNSAFE_SPLIT, lambda x, r, shape, key, index: np.ascontiguousarray(x[key]))
UNSAFE_SPLIT_SIZES.jvp = _linear_copy(UNSAFE_SPLIT_SIZES,
                                      lambda x, r, shape, key, index: np.ascontiguousarray(x[key]))
NARROW_COPY.jvp = _linear_copy(NARROW_COPY, lambda x, r, shape, key, index: np.ascontiguousarray(x[key]))
GATHER.jvp = _linear_copy(GATHER, lambda x, r, shape, key: x[key])
GATHER_0D.jvp = _linear_copy(GATHER_0D, lambda x, r, shapes, key: x.reshape(-1)[key].reshape(r.shape))
INDEX_SELECT.jvp = _linear_copy(INDEX_SELECT, lambda x, r, shape, key: x[key] if key else x.copy())


# ------------------------------------------------------------------------------------------ helpers

def _size_list(shape) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


def _view_of(a: Tensor, out: np.ndarray, op: Op, saved: tuple) -> Tensor:
    """A result aliasing `a`'s data: it shares the version counter, and `_base` names the tensor that
    owns the data (the base of a view of a view is the original). A view of an inference tensor is
    one too, wherever it is made. A view not recorded (no-grad mode) of a tensor that requires grad
    requires grad all the same (autograd.NoGradView)."""
    t = apply(op, out, (a,), saved)
    t._version = a._version
    base = t._base = a._base if a._base is not None else a
    t._inference = a._inference
    if t.grad_fn is None:
        if base.requires_grad:
            autograd.unrecorded_view(t, base)
    else:
        if a._acc is not None and a._acc.__class__ in autograd.NO_GRAD_VIEW_MARKS:
            autograd.made_from_no_grad_view(t, a)
        if base.grad_fn is not None:        # in-place changes of base must reach this view's history
            views.track(t, base)
    if STATE.fw_level is not None and getattr(a, "_fw", None):
        from gradcli.engine import forward
        forward.keep_hidden(t, a)
    return t


def alias(a: Tensor) -> Tensor:
    """A view of all of `a` (AliasBackward0): what torch.Tensor(t) returns."""
    return _view_of(a, a._a.view(), indexing.ALIAS, ())


def _no_resize_jvp():
    raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it with "
                              "forward mode AD.")


def _is_int(v) -> bool:
    if isinstance(v, (bool, float)):
        return False
    try:
        operator.index(v)
    except TypeError:
        return False
    return True


def int_list(values, fn: str, arg: str, position: int = 1) -> tuple:
    """A tuple of ints from ints, a sequence of ints or a torch.Size, as PyTorch's argument parser takes
    them (view(2, 3) and view((2, 3)) alike), with its complaints about anything else. `values`: the call's
    arguments from the list's own; `position`: the list's place among the function's parameters."""
    spread = len(values) != 1
    if not spread:
        if not isinstance(values[0], (tuple, list)):
            if not _is_int(values[0]):
                if fn == "view":
                    raise _view_overload_error(values)
                raise TypeError(f"{fn}(): argument '{arg}' (position {position}) must be tuple of ints, "
                                f"not {type(values[0]).__name__}")
        else:
            values = tuple(values[0])
    for i, v in enumerate(values):
        if not _is_int(v) and not (i > 0 and v.__class__ is bool):     # the parser unpacks later elements as ints
            if i > 0:
                raise TypeError(f"{fn}(): argument '{arg}' failed to unpack the object at pos {i + 1} with error "
                                f"\"type must be tuple of ints,but got {type(v).__name__}\"")
            if spread:
                if fn == "view":
                    raise _view_overload_error(values)
                raise TypeError(f"{fn}() takes 1 positional argument but {len(values)} were given")
            if fn == "view":
                raise _view_overload_error((values,))
            raise TypeError(f"{fn}(): argument '{arg}' (position {position}) must be tuple of ints, but found "
                            f"element of type {type(v).__name__} at pos {i}")
        check_list_int(v, fn, arg, i + 1)
    return tuple(operator.index(v) for v in values)


def _view_overload_error(values) -> TypeError:
    got = ", ".join(type(v).__name__ for v in values)
    why = ""
    if len(values) == 1:
        bad = got
        if isinstance(values[0], (tuple, list)):
            bad = f"{got} of ({', '.join(type(v).__name__ for v in values[0])})"
        why = f"\n      didn't match because some of the arguments have invalid types: (!{bad}!)"
    return TypeError(f"view() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                     f" * (torch.dtype dtype){why}\n * (tuple of ints size){why}\n")


def _infer_size(shape: tuple, numel: int) -> tuple:
    """PyTorch's infer_size: resolve one -1 in a requested shape, with its error messages."""
    infer = None
    known = 1
    for i, s in enumerate(shape):
        if s == -1:
            if infer is not None:
                raise RuntimeError("only one dimension can be inferred")
            infer = i
        elif s >= 0:
            known = (known * s + 2**63) % 2**64 - 2**63      # an int64 product, wrapping as PyTorch's does
        else:
            raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape {_size_list(shape)}")
    if numel == known or (infer is not None and known > 0 and numel % known == 0):
        if infer is not None:
            if known == 0:
                raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {_size_list(shape)} because "
                                   "the unspecified dimension size -1 can be any value and is ambiguous")
            shape = shape[:infer] + (numel // known,) + shape[infer + 1:]
        return shape
    raise RuntimeError(f"shape '{_size_list(shape)}' is invalid for input of size {numel}")


def _nocopy_reshape(x: np.ndarray, shape: tuple):
    """`x` seen with `shape` without copying, or None when its strides do not allow it (numpy refuses
    a shape assignment exactly where PyTorch's view would need a copy)."""
    if x.flags.c_contiguous:
        return x.reshape(shape)
    out = x.view()
    try:
        out.shape = shape
    except AttributeError:
        return None
    return out


def internal_overlap(x: np.ndarray) -> bool:
    """Whether elements of x share memory (an expanded tensor). Never for a meta tensor, which has no memory (its
    one-element array is gradcli's, not a layout PyTorch would give it)."""
    return x.size > 1 and any(st == 0 and n > 1 for st, n in zip(x.strides, x.shape)) and x.__class__ is np.ndarray




def check_inplace_view(t: Tensor, overlap_ok: bool = False) -> None:
    """PyTorch's refusals of an in-place op on a view `t` (one with a `_base`). `overlap_ok`: the op writes
    an element shared by several places once for all of them (fill_, zero_, index_put_, masked_fill_, which
    PyTorch lets write into an expanded tensor), so a view with internal overlap is not refused."""
    if STATE.recording:
        fn = t.grad_fn
        name = views.MULTI_VIEW.get(fn.op.node) if fn is not None else None
        if fn is not None and fn.op.__class__ is autograd.RunOp:     # a custom Function's output
            index = fn.index if fn.__class__ is autograd.OutputSlot else 0
            raise RuntimeError(f"Output {index} of {fn.op.node.rpartition('Backward')[0]} is a "
                               "view and is being modified inplace. This view was created inside a custom "
                               "Function (or because an input was returned as-is) and the autograd logic to "
                               "handle view+inplace would override the custom backward associated with the "
                               "custom Function, leading to incorrect gradients. This behavior is forbidden. "
                               "You can fix this by cloning the output of the custom Function.")
        if name is not None:
            raise RuntimeError(f"Output {views.output_index(fn)} of {name} is a view and is being modified inplace. "
                               "This view is "
                               "the output of a function that returns multiple views. Such functions do not "
                               "allow the output views to be modified inplace. You should replace the inplace "
                               "operation by an out-of-place one.")
        base = t._base
        if t._acc.__class__ is autograd.OfNoGradView:
            raise autograd.view_mode_error(t, f"Output 0 of {fn.op.node[:-9]} is a view of a view which was "
                                              "created in {made} and is being modified inplace {now}.")
        if base.requires_grad and (not t.requires_grad or t.grad_fn is None):     # made without a node
            raise autograd.view_mode_error(t, "A view was created in {made} and is being modified inplace {now}.")
        if (t.requires_grad or base.requires_grad) and base.grad_fn is None:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place "
                               "operation.")
    if not overlap_ok and internal_overlap(t._a):
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a "
                           "single memory location. Please clone() the tensor before performing the operation.")


def _tensor_list(tensors, fn: str) -> list:
    if not isinstance(tensors, (tuple, list)):
        raise TypeError(f"{fn}(): argument 'tensors' (position 1) must be tuple of Tensors, "
                        f"not {type(tensors).__name__}")
    for i, t in enumerate(tensors):
        if t.__class__ is not Tensor:
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
    return list(tensors)


def _joined_dtype(tensors) -> np.dtype:
    dt = dtypes.of_array(tensors[0]._a)
    for t in tensors[1:]:
        dt = dtypes.promote_types(dt, dtypes.of_array(t._a))
    return dt.np


# -------------------------------------------------------------------------------- views of the shape

def view(a: Tensor, *size) -> Tensor:
    if len(size) == 1 and size[0].__class__ is dtypes.DType:
        return _view_dtype(a, size[0])
    return _view_shape(a, int_list(size, "view", "size"))


def _view_shape(a: Tensor, shape: tuple) -> Tensor:
    x = a._a
    shape = _infer_size(shape, x.size)
    out = _nocopy_reshape(x, shape)
    if out is None:
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one "
                           "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")
    return _view_of(a, out, VIEW, (x.shape,))


def _view_dtype(a: Tensor, dtype) -> Tensor:
    """view(dtype): the same bytes read as another dtype, outside autograd (the last dim rescales when the
    element sizes differ)."""
    x = a._a
    if x.dtype == dtype.np:
        return a
    if x.itemsize != dtype.np.itemsize:
        words = f"view {type_word(x)} as {TYPE_WORDS[dtype.np.name]}"
        if x.ndim == 0:
            raise RuntimeError(f"self.dim() cannot be 0 to {words} (different element sizes)")
        if x.strides[-1] != x.itemsize and x.shape[-1] != 1:
            raise RuntimeError(f"self.stride(-1) must be 1 to {words} (different element sizes), but got "
                               f"{x.strides[-1] // x.itemsize}")
        ratio = dtype.np.itemsize // x.itemsize
        if ratio > 1 and x.shape[-1] % ratio:
            raise RuntimeError(f"self.size(-1) must be divisible by {ratio} to {words} (different element "
                               f"sizes), but got {x.shape[-1]}")
    t = Tensor(x.view(dtype.np))
    t._version = a._version
    return t


def view_as(a: Tensor, other: Tensor) -> Tensor:
    return view(a, other._a.shape)


def reshape(a: Tensor, *shape) -> Tensor:
    """A view when the strides allow one (ViewBackward0 for a contiguous input, ReshapeAliasBackward0
    otherwise), else a contiguous copy: UnsafeViewBackward0 over CloneBackward0."""
    x = a._a
    shape = int_list(shape, "reshape", "shape")
    if x.flags.c_contiguous:
        return _view_shape(a, shape)
    shape = _infer_size(shape, x.size)
    out = _nocopy_reshape(x, shape)
    if out is not None:
        return _view_of(a, out, RESHAPE_ALIAS, (x.shape,))
    return unsafe_view(arith.contiguous_clone(a), shape)


def reshape_as(a: Tensor, other: Tensor) -> Tensor:
    return reshape(a, other._a.shape)


def unsafe_view(a: Tensor, shape) -> Tensor:
    """`_unsafe_view` of a fresh contiguous result: a reshape that is not recorded as a view."""
    return apply(UNSAFE_VIEW, a._a.reshape(tuple(shape)), (a,), (a._a.shape,))


def flatten(a: Tensor, start_dim=0, end_dim=-1) -> Tensor:
    x = a._a
    start_dim, end_dim = index_arg(start_dim), index_arg(end_dim)
    for name, position, value in (("start_dim", 1, start_dim), ("end_dim", 2, end_dim)):
        if value.__class__ is not int:  # PyTorch's parser, as x.flatten words it (nn.Flatten calls that)
            raise TypeError(f"flatten(): argument '{name}' (position {position}) must be int, not "
                            f"{type(value).__name__}")
    int_param(start_dim, end_dim)
    start, end = wrap_dim(start_dim, x.ndim), wrap_dim(end_dim, x.ndim)
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if x.ndim == 0:
        return reshape(a, 1)
    if start == end:
        return a
    n = 1
    for s in x.shape[start:end + 1]:
        n *= s
    return reshape(a, x.shape[:start] + (n,) + x.shape[end + 1:])


def unflatten(a: Tensor, dim, sizes) -> Tensor:
    x = a._a
    d = wrap_dim(dim, x.ndim)
    sizes = int_list((sizes,), "unflatten", "sizes")
    if x.ndim:
        try:
            inner = _infer_size(sizes, x.shape[d])
        except RuntimeError as e:
            if not str(e).startswith("shape '"):
                raise
            raise RuntimeError(f"unflatten: Provided sizes {_size_list(sizes)} don't multiply up to the size of "
                               f"dim {dim} ({x.shape[d]}) in the input tensor") from None
    else:
        inner = sizes
    return view(a, x.shape[:d] + inner + x.shape[d + 1:])


def contiguous(a: Tensor) -> Tensor:
    """The tensor itself when its elements are in row-major order, else a copy (CloneBackward0)."""
    return a if a._a.flags.c_contiguous else arith.contiguous_clone(a)


def expand(a: Tensor, *sizes) -> Tensor:
    return _expand(a, int_list(sizes, "expand", "size"))


def _expand(a: Tensor, sizes: tuple) -> Tensor:
    x = a._a
    target, strides = expanded(x, sizes)
    # a writable view, as PyTorch's: in-place ops that would write one element twice are refused by
    # check_inplace_view, element writes through indexing are allowed
    out = as_strided(x, shape=tuple(target), strides=tuple(strides), writeable=x.flags.writeable, subok=True)
    return _view_of(a, out, EXPAND, (x.shape,))


def expanded(x: np.ndarray, sizes) -> tuple:
    """The shape and strides of x expanded to `sizes` (-1 keeps a size), after expand's checks in PyTorch's
    words."""
    if len(sizes) < x.ndim:
        name = dtypes.of_array(x).message       # PyTorch's own quirk
        raise RuntimeError(f"expand({name}{{{_size_list(x.shape)}}}, "
                           f"size={_size_list(sizes)}): the number of sizes provided ({len(sizes)}) must be greater "
                           f"or equal to the number of dimensions in the tensor ({x.ndim})")
    lead = len(sizes) - x.ndim
    target, strides = [], []
    for i in range(len(sizes) - 1, -1, -1):          # (PyTorch checks from the last dim back)
        s = sizes[i]
        have = x.shape[i - lead] if i >= lead else None
        if s == -1:
            if have is None:
                raise RuntimeError(f"The expanded size of the tensor (-1) isn't allowed in a leading, "
                                   f"non-existing dimension {i}")
            s = have
        if have is not None and have != s and have != 1:
            raise RuntimeError(f"The expanded size of the tensor ({s}) must match the existing size ({have}) at "
                               f"non-singleton dimension {i}.  Target sizes: {_size_list(sizes)}.  "
                               f"Tensor sizes: {_size_list(x.shape)}")
        target.append(s)
        strides.append(x.strides[i - lead] if have is not None and have == s else 0)
    target.reverse()
    strides.reverse()
    if math.prod(target) >= 1 << 63 or (min(target, default=0) < 0 and 0 not in target):
        raise RuntimeError("numel: integer multiplication overflow")      # (a negative size: PyTorch's check too)
    if min(target, default=0) < 0:
        raise NotImplementedError(f"gradcli does not make tensors with a negative size: expand to "
                                  f"{_size_list(target)} (PyTorch makes one when another size is 0)")
    return target, strides


def broadcast_to(a: Tensor, size) -> Tensor:
    """torch.broadcast_to: the size as one argument (the method also takes it as separate ints)."""
    if size.__class__ is int:           # the function takes a sequence only (the method also ints)
        raise TypeError("broadcast_to(): argument 'size' (position 2) must be tuple of ints, not int")
    return _expand(a, int_list((size,), "broadcast_to", "size"))


def broadcast_to_method(a: Tensor, sizes: tuple) -> Tensor:
    """Tensor.broadcast_to: the size as ints or one sequence, as expand takes it, named as itself in errors."""
    return _expand(a, int_list(sizes, "broadcast_to", "size"))


def broadcast_tensors(*tensors) -> tuple:
    """torch.broadcast_tensors: each tensor expanded to the shape they broadcast to (ExpandBackward0 views); a
    tensor that already has that shape is returned itself."""
    for i, t in enumerate(tensors):
        if t.__class__ is not Tensor:
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type(t).__name__}")
    shape = broadcast_shapes(*(t._a.shape for t in tensors)) if tensors else ()
    return tuple(t if t._a.shape == shape else _expand(t, shape) for t in tensors)


def torch_broadcast_shapes(*shapes) -> Size:
    """torch.broadcast_shapes, as PyTorch's Python computes it: ints stand for 1-d shapes, None is skipped,
    and a size that neither matches nor is 1 is refused at the first argument that brings it."""
    shapes = tuple((s,) if isinstance(s, int) else s for s in shapes if s is not None)
    if not shapes:
        return Size()
    for s in shapes:
        if not isinstance(s, (tuple, list, str, range)):
            raise RuntimeError(f"Input shapes should be of type ints, a tuple of ints, or a list of ints, got {s}")
    common = [1] * max(len(s) for s in shapes)
    for i, s in enumerate(shapes):
        for d in range(-1, -1 - len(s), -1):
            if s[d] == common[d]:
                continue
            if common[d] == 1:
                if s[d] < 0:
                    raise ValueError("Attempting to broadcast a dimension with negative length!")
                common[d] = s[d]
            if s[d] != 1 and common[d] != s[d]:
                raise RuntimeError(f"Attempting to broadcast a dimension of length {s[d]} at {d}! Mismatching "
                                   f"argument at index {i} had {s}; but expected shape should be broadcastable "
                                   f"to {common}")
    return Size(common)


def expand_as(a: Tensor, other: Tensor) -> Tensor:
    return expand(a, other._a.shape)


def unsqueeze(a: Tensor, dim: int) -> Tensor:
    x = a._a
    d = wrap_dim(dim, x.ndim + 1)
    return _view_of(a, unsqueezed(x, d), UNSQUEEZE, (operator.index(dim),))      # the dim saved as given


def squeeze(a: Tensor, dim=None) -> Tensor:
    """squeeze() (SqueezeBackward0), squeeze(dim) (SqueezeBackward1), squeeze((d0, d1)) (SqueezeBackward2)."""
    x = a._a
    if dim is None:
        return _view_of(a, np.squeeze(x), SQUEEZE_ALL, (x.shape,))
    dim = list_element_arg(dim)
    if isinstance(dim, (tuple, list)):
        dims = tuple(d for d in axes(dim, x.ndim) if x.ndim and x.shape[d] == 1)
        return _view_of(a, np.squeeze(x, dims) if dims else x.view(), SQUEEZE_DIMS, (x.shape,))
    d = wrap_dim(dim, x.ndim)
    out = np.squeeze(x, d) if x.ndim and x.shape[d] == 1 else x.view()
    return _view_of(a, out, SQUEEZE, (operator.index(dim), x.shape))


def squeeze_(a: Tensor, dim: int) -> Tensor:
    """The in-place squeeze(dim) PyTorch's matmul applies to its own fresh result (SqueezeBackward4)."""
    x = a._a
    d = wrap_dim(dim, x.ndim)
    out = np.squeeze(x, d) if x.ndim and x.shape[d] == 1 else x
    return apply(SQUEEZE_, out, (a,), (d, x.shape))


def inplace_view(a: Tensor, name: str, *args) -> Tensor:
    """`a.t_()`, `a.transpose_(d0, d1)`, `a.squeeze_()`, `a.squeeze_(d)`, `a.unsqueeze_(d)`: `a` itself
    takes the view's shape and strides over the same data (its version counter untouched, as a change of
    metadata), and when recorded the in-place node (TBackward1, TransposeBackward1, SqueezeBackward3/4,
    UnsqueezeBackward1) after its grad_fn. A leaf that requires grad is refused as by any in-place op."""
    if STATE.recording and a.requires_grad and a.grad_fn is None and a._base is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    x = a._a
    if name == "t_":
        if x.ndim > 2:
            raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is {x.ndim}D")
        out, op, saved = x.T, TRANSPOSE_T_, ()
    elif name == "transpose_":
        d0, d1 = wrap_dim(args[0], x.ndim), wrap_dim(args[1], x.ndim)
        out, op = (np.swapaxes(x, d0, d1) if x.ndim else x.view()), TRANSPOSE_
        saved = (operator.index(args[0]), operator.index(args[1]))        # the dims as given
    elif name == "unsqueeze_":
        d = wrap_dim(args[0], x.ndim + 1)
        out, op, saved = unsqueezed(x, d), UNSQUEEZE_, (operator.index(args[0]),)
    elif not args:
        out, op, saved = np.squeeze(x), SQUEEZE_ALL_, (x.shape,)
    else:
        d = wrap_dim(args[0], x.ndim)
        out, op = (np.squeeze(x, d) if x.ndim and x.shape[d] == 1 else x.view()), SQUEEZE_
        saved = (operator.index(args[0]), x.shape)
    made = apply(op, out, (a,), saved)
    if STATE.fw_level is not None:
        from gradcli.engine import forward
        forward.copy_tangents(a, made)
    a._a = made._a
    a._version[0] += 1                  # a change of metadata bumps the counter too, as in PyTorch
    if made.grad_fn is not None:
        a.grad_fn = made.grad_fn
    return a


def t(a: Tensor) -> Tensor:
    x = a._a
    if x.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {x.ndim}D")
    return _view_of(a, x.T, TRANSPOSE_T, ())


def transpose(a: Tensor, dim0: int, dim1: int) -> Tensor:
    x = a._a
    d0, d1 = wrap_dim(dim0, x.ndim), wrap_dim(dim1, x.ndim)
    out = np.swapaxes(x, d0, d1) if x.ndim else x.view()
    return _view_of(a, out, TRANSPOSE, (operator.index(dim0), operator.index(dim1)))


def permute(a: Tensor, *dims) -> Tensor:
    x = a._a
    dims = int_list(dims, "permute", "dims")
    if len(dims) != x.ndim:
        raise RuntimeError("permute(sparse_coo): number of dimensions in the tensor input does not match the "
                           "length of the desired ordering of dimensions i.e. input.dim() = "
                           f"{x.ndim} is not equal to len(dims) = {len(dims)}")
    perm = []
    for d in dims:
        d = wrap_dim(d, x.ndim)
        if d in perm:
            raise RuntimeError("permute(): duplicate dims are not allowed.")
        perm.append(d)
    inverse = [0] * len(perm)
    for i, d in enumerate(perm):
        inverse[d] = i
    return _view_of(a, np.transpose(x, perm) if perm else x.view(), PERMUTE, (given_dims(tuple(inverse), {"dims": dims}),))


_T_WARNINGS = {0: "Tensor.T is deprecated on 0-D tensors. This function is the identity in these cases. (Triggered "
                  "internally at /__w/pytorch/pytorch/aten/src/ATen/native/TensorShape.cpp:4321.)",
               1: "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated and it "
                  "will throw an error in a future release. Consider `x.mT` to transpose batches of matrices or "
                  "`x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor. (Triggered "
                  "internally at /__w/pytorch/pytorch/aten/src/ATen/native/TensorShape.cpp:4314.)"}


def numpy_T(a: Tensor) -> Tensor:
    """`.T`: all dims reversed (PermuteBackward0); on other than a matrix, PyTorch's deprecation warning (once per
    process: one for 0-d tensors, one for the rest)."""
    n = a._a.ndim
    if n != 2:
        kind = 0 if n == 0 else 1
        STATE.warn_once(f"x.T {kind}", "UserWarning", _T_WARNINGS[kind])
    return permute(a, tuple(range(n - 1, -1, -1)))


def matrix_T(a: Tensor, name: str = "mT") -> Tensor:
    """`.mT` / `.mH` (and `.H` on a matrix): the last two dims swapped (conjugation is a no-op for real
    tensors)."""
    n = a._a.ndim
    if name == "H":
        if n != 2 and n != 0:
            extra = ". For batches of matrices, consider using tensor.mH" if n > 2 else "."
            raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {n}-D tensor{extra}")
    elif n < 2:
        if n == 0:
            return a
        raise RuntimeError(f"tensor.{name} is only supported on matrices or batches of matrices. Got {n}-D tensor.")
    out = transpose(a, -2, -1) if n else a
    if name != "mT" and a._a.dtype.kind == "c":       # the conjugate transpose: a conjugate view of the transpose
        from gradcli.engine.ops import complexops
        return complexops.conj(out)
    return out


def movedim(a: Tensor, source, destination) -> Tensor:
    x = a._a
    source, destination = index_arg(source), index_arg(destination)
    if source.__class__ is Tensor or destination.__class__ is Tensor:
        raise TypeError("argument 'dim' must be int, not Tensor")     # (the call's argument check words it)
    # an int list's later elements unpack as ints (True is 1); its first must be an int
    src = (source,) if isinstance(source, int) else tuple(int(d) if i and d.__class__ is bool else d
                                                          for i, d in enumerate(source))
    dst = (destination,) if isinstance(destination, int) else tuple(int(d) if i and d.__class__ is bool else d
                                                                    for i, d in enumerate(destination))
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({_size_list(src)} dims) should "
                           f"contain the same number of dims as destination ({_size_list(dst)} dims)")
    src_w = [wrap_dim(d, x.ndim) for d in src]
    dst_w = [wrap_dim(d, x.ndim) for d in dst]
    if len(set(src_w)) != len(src_w):
        raise RuntimeError(f"movedim: repeated dim in `source` ({_size_list(src)})")
    if len(set(dst_w)) != len(dst_w):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({_size_list(dst)})")
    if x.ndim == 0:
        return permute(a, ())
    order = [None] * x.ndim
    for s, d in zip(src_w, dst_w):
        order[d] = s
    rest = iter(d for d in range(x.ndim) if d not in src_w)
    perm = tuple(o if o is not None else next(rest) for o in order)
    return permute(a, perm)


def narrow(a: Tensor, dim: int, start, length: int, copy: bool = False) -> Tensor:
    """A slice of `length` elements from `start` along `dim` (SliceBackward0; `copy`: narrow_copy's)."""
    x = a._a
    dim, length = index_arg(dim), index_arg(length)
    if start.__class__ is Tensor:       # PyTorch's overload with a tensor start
        if start._a.ndim or start._a.dtype.kind not in "iu":
            raise RuntimeError("start must be an 0-dim integral Tensor.")
        start = int(start._a)
    int_param(dim, start, length)
    if x.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    start = operator.index(start)
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    d = wrap_dim(dim, x.ndim)
    size = x.shape[d]
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], but got {start})")
    if start < 0:
        start += size
    if start > size - length:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    key = indexing.given_dim_key(slice(start, start + length), dim, x.ndim)
    if copy:
        return apply(NARROW_COPY, np.ascontiguousarray(x[key]), (a,), (x.shape, key, 0))
    return _view_of(a, x[key], indexing.SLICE, (x.shape, key))


def narrow_copy(a: Tensor, dim: int, start, length: int) -> Tensor:
    """narrow's slice as a new contiguous tensor (NarrowCopyBackward0)."""
    if dim.__class__ is int and dim >= a._a.ndim:       # (its kernel's check, before any dim is wrapped)
        raise RuntimeError("Expected dim < static_cast<int64_t>(self_sizes.size()) to be true, but got false.  "
                           "(Could this error message be improved?  If so, please report an enhancement request "
                           "to PyTorch.)")
    return narrow(a, dim, start, length, copy=True)


# ------------------------------------------------------------------------------- copies and joins

_INT64_MAX = (1 << 63) - 1

def repeat(a: Tensor, *repeats) -> Tensor:
    x = a._a
    repeats = int_list(repeats, "repeat", "repeats")
    if len(repeats) < x.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of dimensions of "
                           "tensor")
    padded = (1,) * (len(repeats) - x.ndim) + x.shape
    if x.__class__ is not np.ndarray and any(s * r > _INT64_MAX for s, r in zip(padded, repeats)):
        # on the meta device PyTorch's Python rule multiplies in Python and hands new_empty a size past 64 bits
        raise TypeError("new_empty(): argument 'size' failed to unpack the object at pos 1 with error "
                        "\"Overflow when unpacking long long\"")
    target = [wrap_int64(s * r) for s, r in zip(padded, repeats)]       # (in int64, as PyTorch computes them)
    for s in target:
        if s == -(1 << 63):
            raise RuntimeError(f"IntArrayRef contains an int that cannot be represented as a SymInt: {s}")
    for s in target:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {_size_list(target)}")
    for i, (s, t) in enumerate(zip(padded, target)):
        if t < s and 0 not in repeats:     # a size that wrapped below the input's: the kernel's unfold along dim i
            raise RuntimeError(f"maximum size for tensor at dimension {i} is {t} but size is {s}")
    budget.check_tensor(target, x.itemsize)
    if 0 in target:     # (np.tile would size the repeats of the other dims, which may have wrapped)
        out = np.zeros(target, x.dtype) if x.__class__ is np.ndarray else np.zeros_like(x, shape=target)
    else:
        out = row_major(np.tile(x.reshape(padded), repeats)) if repeats else x.copy()
    return apply(REPEAT, out, (a,), (repeats, x.shape))


def tile(a: Tensor, *dims) -> Tensor:
    """x.tile(dims): repeat, with dims padded by leading ones to the tensor's rank (PyTorch's own definition,
    so its grad_fn is RepeatBackward0)."""
    dims = int_list(dims, "tile", "dims")
    return repeat(a, *((1,) * (a._a.ndim - len(dims)) + dims))


@autocast_policy("promote")
def cat(tensors, dim=0) -> Tensor:
    """Join along an existing dim. 1-D empty tensors are skipped, as PyTorch's legacy rule has it."""
    return _cat(tensors, dim, "cat")


def _cat(tensors, dim, name: str) -> Tensor:
    tensors = _tensor_list(tensors, name)
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if t._a.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    npdt = _joined_dtype(tensors)
    kept = [i for i, t in enumerate(tensors) if not (t._a.ndim == 1 and t._a.size == 0)]
    if not kept:
        out = np.zeros((0,), dtype=npdt)
        return apply(CAT, out, tuple(tensors), (given_dims(tuple([None] * len(tensors)), dim),))
    first = tensors[kept[0]]._a
    d = wrap_dim(dim, first.ndim)
    for i in kept:
        shape = tensors[i]._a.shape
        if len(shape) != first.ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {first.ndim} and {len(shape)}")
        for k in range(first.ndim):
            if k != d and shape[k] != first.shape[k]:
                if any(tensors[j]._a.__class__ is not np.ndarray for j in kept):     # PyTorch's meta kernel's words
                    raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected "
                                       f"{first.shape[k]} in dimension {k} but got {shape[k]} for tensor number "
                                       f"{i} in the list")
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. Expected size "
                                   f"{first.shape[k]} but got size {shape[k]} for tensor number {i} in the list.")
    if all(tensors[i]._a.__class__ is np.ndarray for i in kept):      # (meta results take one element)
        budget.check_tensor((sum(tensors[i]._a.size for i in kept),), npdt.itemsize)
    # contiguous, whatever the inputs' layouts (numpy would follow theirs), unless every input reads as one
    # channels-last format (PyTorch's compute_output_memory_format)
    out = row_major(np.concatenate([tensors[i]._a.astype(npdt, copy=False) for i in kept], axis=d))
    if out.ndim in (4, 5) and out.__class__ is np.ndarray and len({id(suggested_format(tensors[i]._a))
                                                                   for i in kept}) == 1:
        out = in_inputs_format(out, tensors[kept[0]]._a)
    parts, offset = [None] * len(tensors), 0
    for i in kept:
        n = tensors[i]._a.shape[d]
        parts[i] = (slice(None),) * d + (slice(offset, offset + n),)
        offset += n
    return apply(CAT, out, tuple(tensors), (given_dims(tuple(parts), dim),))


def concat(tensors, dim=0) -> Tensor:
    """torch.concat: cat under its alias's name (PyTorch's messages say concat())."""
    return _cat(tensors, dim, "concat")


def concatenate(tensors, dim=0) -> Tensor:
    """torch.concatenate: cat under its alias's name; numpy's `axis=` reaches it as `dim`, as PyTorch's parser
    takes it."""
    return _cat(tensors, dim, "concatenate")


@autocast_policy("promote")
def stack(tensors, dim=0) -> Tensor:
    tensors = _tensor_list(tensors, "stack")
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    first = tensors[0]._a.shape
    d = wrap_dim(dim, len(first) + 1)
    for i, t in enumerate(tensors[1:], 1):
        if t._a.shape != first:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {_size_list(first)} at entry 0 "
                               f"and {_size_list(t._a.shape)} at entry {i}")
    npdt = _joined_dtype(tensors)
    if all(t._a.__class__ is np.ndarray for t in tensors):      # (meta results take one element)
        budget.check_tensor((len(tensors),) + first, npdt.itemsize)
    arrays = [t._a.astype(npdt, copy=False) for t in tensors]
    out = row_major(np.stack(arrays, axis=d))
    if d < len(first) and len(first) in (4, 5) and out.__class__ is np.ndarray:
        # PyTorch's stack along an existing dim is cat(tensors, dim).view(sizes): inputs all in one
        # channels-last format give cat's channels-last result, the stacked dim split off it
        fmt = suggested_format(arrays[0])
        if fmt is not dtypes.contiguous_format and all(suggested_format(a) is fmt for a in arrays):
            out = copied_in_format(np.concatenate(arrays, axis=d), fmt).reshape(out.shape)
    return apply(STACK, out, tuple(tensors), (d if index_arg(dim) >= 0 else d - len(first) - 1,))


def _stacked(tensors, name: str, min_dim: int) -> list:
    """The inputs of hstack / vstack raised to at least `min_dim` dims as PyTorch's atleast_1d / atleast_2d
    do: a 0-d tensor by reshape, a vector by unsqueeze(0)."""
    tensors = _tensor_list(tensors, name)
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    out = []
    for t in tensors:
        n = t._a.ndim
        if n == 0:
            t = reshape(t, (1,) * min_dim)
        elif n < min_dim:
            t = unsqueeze(t, 0)
        out.append(t)
    return out


def hstack(tensors) -> Tensor:
    tensors = _stacked(tensors, "hstack", 1)
    return cat(tensors, 0 if tensors[0]._a.ndim == 1 else 1)


def vstack(tensors) -> Tensor:
    return cat(_stacked(tensors, "vstack", 2), 0)


_UNSAFE = {SPLIT: UNSAFE_SPLIT, SPLIT_SIZES: UNSAFE_SPLIT_SIZES}


def _pieces(a: Tensor, op: Op, sizes, d: int, unsafe: bool = False, given: dict | None = None) -> tuple:
    """Views of consecutive pieces of `sizes` elements along dim `d`, one node per piece; `unsafe`: pieces
    autograd does not know to be views (torch.unsafe_split: the data is shared all the same, so an in-place
    change of a piece shows in `a` and no check refuses it). `given`: the node's dim and split size(s) as the
    script gave them."""
    x = a._a
    out, start = [], 0
    for i, n in enumerate(sizes):
        key = given_dims((slice(None),) * d + (slice(start, start + n),), given)
        if unsafe:
            out.append(apply(_UNSAFE[op], x[key], (a,), (x.shape, key, i)))
        else:
            out.append(_view_of(a, x[key], op, (x.shape, key, i)))
        start += n
    return tuple(out)


def split(a: Tensor, split_size_or_sections, dim=0, unsafe: bool = False) -> tuple:
    x = a._a
    split_size_or_sections, dim = index_arg(split_size_or_sections), index_arg(dim)
    if not isinstance(split_size_or_sections, (int, np.integer)):
        # PyTorch's Tensor.split hands anything but an int on to torch._VF.split_with_sizes(x, ...)
        return split_with_sizes(a, split_size_or_sections, dim, position=3)
    if split_size_or_sections.__class__ is bool:        # an int to Python, not to the parser of torch._VF.split
        raise TypeError(signatures.check("torch._VF.split", (a, split_size_or_sections, dim), {}))
    int_param(split_size_or_sections)
    size = operator.index(split_size_or_sections)
    if dim.__class__ is not int and not isinstance(dim, np.integer):
        raise TypeError(signatures.check("torch._VF.split", (a, split_size_or_sections, dim), {}))
    if x.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    if size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={size}")
    d = wrap_dim(dim, x.ndim)
    n = x.shape[d]
    if size == 0 and n != 0:
        raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {n}")
    count = max((n + size - 1) // size, 1) if size else 1
    sizes = [size] * (count - 1) + [n - size * (count - 1)]
    return _pieces(a, SPLIT, sizes, d, unsafe, {"dim": dim, "split_size": size})


def split_with_sizes(a: Tensor, split_sizes, dim=0, position=2, unsafe: bool = False) -> tuple:
    """`position`: where PyTorch's parser counts `dim` (2 for the method, 3 for the function Tensor.split calls)."""
    x = a._a
    sizes = list(int_list((split_sizes,), "split_with_sizes", "split_sizes", position - 1))
    dim = index_arg(dim)
    if dim.__class__ is not int and not isinstance(dim, np.integer):
        raise TypeError(f"split_with_sizes(): argument 'dim' (position {position}) must be int, not "
                        f"{type(dim).__name__}")
    if x.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = wrap_dim(dim, x.ndim)
    if any(s < 0 for s in sizes):
        raise RuntimeError(f"split_with_sizes expects split_sizes have only non-negative entries, but got "
                           f"split_sizes={_size_list(sizes)}")
    if sum(sizes) != x.shape[d]:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {x.shape[d]} (input tensor's "
                           f"size at dimension {dim}), but got split_sizes={_size_list(sizes)}")
    return _pieces(a, SPLIT_SIZES, sizes, d, unsafe, {"dim": dim, "split_sizes": tuple(sizes)})


def chunk(a: Tensor, chunks: int, dim=0, unsafe: bool = False) -> tuple:
    x = a._a
    chunks, dim = index_arg(chunks), index_arg(dim)
    if x.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks.__class__ is not int:     # a bool too; the caller's argument_error gives PyTorch's words
        raise TypeError(f"chunk(): expected an int for chunks, not {type(chunks).__name__}")
    int_param(chunks)
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    n = x.shape[wrap_dim(dim, x.ndim)]
    size = (n + chunks - 1) // chunks
    if size == 0 and n == 0:
        return split_with_sizes(a, [0] * chunks, dim, unsafe=unsafe)
    return split(a, size, dim, unsafe)


def unsafe_split(a: Tensor, split_size, dim=0) -> tuple:
    return split(a, split_size, dim, unsafe=True)


def unsafe_split_with_sizes(a: Tensor, split_sizes, dim=0) -> tuple:
    return split_with_sizes(a, split_sizes, dim, unsafe=True)


def unsafe_chunk(a: Tensor, chunks, dim=0) -> tuple:
    return chunk(a, chunks, dim, unsafe=True)


def unbind(a: Tensor, dim=0) -> tuple:
    """One view per index along `dim` (UnbindBackward0, the row arith.unbind0 records for dim 0)."""
    x = a._a
    if x.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = wrap_dim(dim, x.ndim)
    if d == 0 and operator.index(dim) >= 0:
        return tuple(arith.unbind0(a))
    out = []
    for i in range(x.shape[d]):
        key = indexing.given_dim_key(i, dim, x.ndim)
        out.append(_view_of(a, x[key], arith.UNBIND, (x.shape, key)))
    return tuple(out)


def flip(a: Tensor, *dims) -> Tensor:
    x = a._a
    given = int_list(dims, "flip", "dims")
    dims = axes(given, x.ndim)
    if not x.ndim:
        dims = ()                 # a 0-d tensor accepts dim 0 or -1, and has nothing to flip
    out = preserved(x)      # laid out as clone() lays it out (empty_like), the flipped values written into it
    np.copyto(out, np.flip(x, dims) if dims else x)
    return apply(FLIP, out, (a,), (given_dims(dims, given),))


def fliplr(a: Tensor) -> Tensor:
    if a._a.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(a, 1)


def flipud(a: Tensor) -> Tensor:
    if a._a.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(a, 0)


def roll(a: Tensor, shifts, dims=None) -> Tensor:
    x = a._a
    shifts, dims = list_element_arg(shifts), list_element_arg(dims)
    shifts = (shifts,) if not isinstance(shifts, (tuple, list)) else tuple(shifts)
    dims = () if dims is None else ((dims,) if not isinstance(dims, (tuple, list)) else tuple(dims))
    for v in shifts + dims:
        if v.__class__ is not int and v.__class__ is not bool:
            # the caller's argument_error gives PyTorch's words (engine/signatures.py)
            raise TypeError(f"roll(): expected ints for shifts and dims, not {type(v).__name__}")
    for v in shifts + dims:
        int64_arg(v)
    if not shifts:
        raise RuntimeError("`shifts` required")
    if not dims and len(shifts) == 1:
        out = np.roll(x.reshape(-1), shifts[0]).reshape(x.shape)
        return apply(ROLL, out, (a,), (shifts, None))
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    given, dims = dims, tuple(wrap_dim(d, x.ndim) for d in dims)
    out = np.ascontiguousarray(np.roll(x, shifts, dims)) if x.ndim else x.copy()
    return apply(ROLL, out, (a,), (shifts, given_dims(dims, given)))


def gather(a: Tensor, dim: int, index: Tensor) -> Tensor:
    """out[i][j] = a[i][index[i][j]] for dim 1: advanced indexing with an open grid, whose gradient
    adds back at the same places."""
    x = a._a
    d = wrap_dim(dim, x.ndim)
    if index.__class__ is not Tensor:
        raise TypeError(f"gather(): argument 'index' (position 2) must be Tensor, not {type(index).__name__}")
    idx = index._a
    if idx.dtype not in (np.int64, np.int32):
        raise RuntimeError("gather(): Expected dtype int32/int64 for index")
    if max(idx.ndim, 1) != max(x.ndim, 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    shape_0d = None
    if x.ndim == 0 or idx.ndim == 0:       # PyTorch reads a 0-d input or index as one of shape (1,)
        shape_0d, idx = idx.shape, idx.reshape(-1)
        x = x.reshape(-1)
    src_shape, idx_shape = x.shape, idx.shape
    for k in range(len(idx_shape)):
        if k != d and idx_shape[k] > src_shape[k]:
            raise RuntimeError(f"Size does not match at dimension {k} expected index {_size_list(idx_shape)} to be "
                               f"no larger than self {_size_list(src_shape)} apart from dimension {d}")
    bad = idx[(idx < 0) | (idx >= src_shape[d])]
    if bad.size:
        raise RuntimeError(f"index {int(bad.flat[0])} is out of bounds for dimension {d} with size {src_shape[d]}")
    grid = list(np.ix_(*[np.arange(n) for n in idx_shape]))
    grid[d] = idx
    key = tuple(grid)
    out = x[key]
    if shape_0d is not None:
        return apply(GATHER_0D, out.reshape(shape_0d), (a,), ((a._a.shape, x.shape, idx.shape), given_dims(key, {"dim": dim})))
    return apply(GATHER, out, (a,), (x.shape, given_dims(key, {"dim": dim})))


def index_select(a: Tensor, dim: int, index: Tensor) -> Tensor:
    x = a._a
    if index.__class__ is not Tensor:
        raise TypeError(f"index_select(): argument 'index' (position 2) must be Tensor, not {type(index).__name__}")
    d = wrap_dim(dim, x.ndim)
    idx = index._a
    if idx.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if idx.dtype not in (np.int64, np.int32):
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    idx = idx.reshape(-1)
    if x.ndim == 0 and idx.size > 1:
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got {idx.size} value(s)")
    size = x.shape[d] if x.ndim else 1
    if size == 0 and idx.size:
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    bad = idx[(idx < 0) | (idx >= size)]
    if bad.size:
        if d == 1:          # PyTorch's CPU kernel for dim 1 has a check of its own
            raise RuntimeError(f"INDICES element is out of DATA bounds, id={int(bad.flat[0])} axis_dim={size}")
        raise IndexError("index out of range in self")
    if x.ndim == 0:
        return apply(INDEX_SELECT, x.copy(), (a,), (x.shape, given_dims((), {"dim": dim})))
    out = np.take(x, idx, axis=d)
    return apply(INDEX_SELECT, out, (a,), (x.shape, given_dims((slice(None),) * d + (idx,), {"dim": dim})))


def _matrix_offset(x: np.ndarray, diagonal: int) -> int:
    """A diagonal of the last two dims for numpy: any int64 (past the matrix: the nearest one past it)."""
    return max(min(int64_arg(diagonal), x.shape[-1]), -x.shape[-2])


def tril(a: Tensor, diagonal=0) -> Tensor:
    diagonal = index_arg(diagonal)
    if diagonal.__class__ is Tensor:
        raise TypeError("tril(): diagonal is an int")        # (the call's argument check words it)
    int_param(diagonal)
    if a._a.ndim < 2:
        raise RuntimeError("tril: input tensor must have at least 2 dimensions")
    out = row_major(np.tril(a._a, _matrix_offset(a._a, diagonal)))     # a contiguous result, as PyTorch's
    return apply(TRIL, out, (a,), (diagonal,))


def triu(a: Tensor, diagonal=0) -> Tensor:
    diagonal = index_arg(diagonal)
    if diagonal.__class__ is Tensor:
        raise TypeError("triu(): diagonal is an int")        # (the call's argument check words it)
    int_param(diagonal)
    if a._a.ndim < 2:
        raise RuntimeError("triu: input tensor must have at least 2 dimensions")
    out = row_major(np.triu(a._a, _matrix_offset(a._a, diagonal)))     # a contiguous result, as PyTorch's
    return apply(TRIU, out, (a,), (diagonal,))


def broadcast_shapes(*shapes) -> tuple:
    """The broadcast of shapes, with PyTorch's mismatch message."""
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        out = shapes[0]
        for s in shapes[1:]:
            try:
                out = np.broadcast_shapes(out, s)
            except ValueError:
                raise broadcast_error(out, s) from None
        return out


# ------------------------------------------------------------------------------------------------ pad

_PAD_MODES = ("reflect", "replicate", "circular")


def functional_pad(input, pad, mode="constant", value=None) -> Tensor:
    """torch.nn.functional.pad: constant padding (ConstantPadNdBackward0); a negative amount crops."""
    if input.__class__ is not Tensor:
        raise TypeError(f"pad(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    if not isinstance(pad, (tuple, list)):
        raise TypeError(f"pad(): argument 'pad' (position 2) must be tuple of ints, not {type(pad).__name__}")
    for i, p in enumerate(pad):     # as the parser unpacks an int list: the first element must be an int,
        if i == 0 and not _is_int(p):   # later ones may be bools; each must fit in 64 bits
            raise TypeError(f"pad(): argument 'pad' (position 2) must be tuple of ints, but found element of type "
                            f"{type(p).__name__} at pos {i}")
        if not _is_int(p) and p.__class__ is not bool:
            raise TypeError(f"pad(): argument 'pad' failed to unpack the object at pos {i + 1} with error "
                            f"\"type must be tuple of ints,but got {type(p).__name__}\"")
        check_list_int(p, "pad", "pad", i + 1)
    if mode != "constant":
        if mode not in _PAD_MODES:
            raise NotImplementedError(f"Unrecognised padding mode {mode}")
        _check_pad_length(input._a, pad)
        return padding.other_mode(input, tuple(int(p) for p in pad), mode, value)
    return constant_pad(input, tuple(int(p) for p in pad), 0 if value is None else value)


def constant_pad(a: Tensor, pad: tuple, value) -> Tensor:
    _check_pad_length(a._a, pad)
    return _constant_padded(a, pad, value)


def constant_pad_nd(*args, **kwargs) -> Tensor:
    """torch.constant_pad_nd(input, pad, value=0): F.pad's constant padding, with the checks' own words."""
    v = signatures.parsed("torch.constant_pad_nd", args, kwargs, {"value": 0})
    a, pad = v["input"], v["pad"]
    if pad.__class__ is int:            # (an unsized int list: one int does not stand for it)
        where = "" if "pad" in kwargs else " (position 2)"
        raise TypeError(f"constant_pad_nd(): argument 'pad'{where} must be tuple of ints, not int")
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    if len(pad) // 2 > a._a.ndim:
        raise RuntimeError(f"Length of pad should be no more than twice the number of dimensions of the input. Pad "
                           f"length is {len(pad)}while the input has {a._a.ndim}dimensions.")
    return _constant_padded(a, pad, v["value"])


def _constant_padded(a: Tensor, pad: tuple, value) -> Tensor:
    x = a._a
    out = in_inputs_format(_pad_array(x, pad, checked_double(value, x.dtype)), x)    # (a channels-last input's)
    return apply(PAD, out, (a,), (pad,))


def _check_pad_length(x: np.ndarray, pad) -> None:
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > x.ndim:
        raise RuntimeError("Padding length should be less than or equal to two times the input dimension but got "
                           f"padding length {len(pad)} and input of dimension {x.ndim}")


def _wrap_int64(v: int) -> int:
    return ((v + (1 << 63)) & ((1 << 64) - 1)) - (1 << 63)


def _pad_array(x: np.ndarray, pad: tuple, value) -> np.ndarray:
    """`x` with pad[2k], pad[2k+1] elements added before and after its k-th dim from the end (removed,
    where negative), the new ones `value` in x's dtype."""
    shape, src, dst = list(x.shape), [slice(None)] * x.ndim, [slice(None)] * x.ndim
    for k in range(len(pad) // 2):          # PyTorch narrows for the negative amounts first
        d = x.ndim - 1 - k
        if x.shape[d] + min(pad[2 * k], 0) + min(pad[2 * k + 1], 0) < 0:
            raise RuntimeError("narrow(): length must be non-negative.")
    for k in range(len(pad) // 2):
        d = x.ndim - 1 - k
        before, after = pad[2 * k], pad[2 * k + 1]
        size = _wrap_int64(x.shape[d] + before + after)     # C++'s int64 sum, wrapping past its range
        if size < 0:
            raise RuntimeError(f"The input size {x.shape[d]}, plus negative padding {before} and {after} resulted in "
                               f"a negative output size, which is invalid. Check dimension {d} of your input.")
        start, stop = max(0, -before), x.shape[d] - max(0, -after)
        kept = max(0, stop - start)
        src[d] = slice(start, start + kept)
        dst[d] = slice(max(0, before), max(0, before) + kept)
        shape[d] = size
    budget.check_tensor(tuple(shape), x.itemsize)
    out = np.full(shape, np.array(value).astype(x.dtype), dtype=x.dtype)
    out[tuple(dst)] = x[tuple(src)]
    return out


def _pad_gradient(F, g, pad):
    """The gradient of a padding: the incoming gradient with the padding taken off again (padded with
    zeros where the forward cropped)."""
    negated = tuple(-p for p in pad)
    return constant_pad(g, negated, 0) if F.tensors else _pad_array(g, negated, 0)



# ------------------------------------------------------------------------------------------------ unfold

def as_strided_view(a: Tensor, size, stride, storage_offset=None) -> Tensor:
    """torch.as_strided (see _as_strided)."""
    return _as_strided(a, size, stride, storage_offset, 2)


def as_strided_method(a: Tensor, size, stride, storage_offset=None) -> Tensor:
    """Tensor.as_strided (see _as_strided): its arguments counted from the one after self."""
    return _as_strided(a, size, stride, storage_offset, 1)


def _as_strided(a: Tensor, size, stride, storage_offset, first: int) -> Tensor:
    """Tensor.as_strided / torch.as_strided: a view of the storage `a` shares with its base, `size` elements with
    `stride` (in elements) from `storage_offset` (a's own by default), checked against the storage's size first, in
    PyTorch's words (so no window reaches past the memory the storage holds). Its gradient (AsStridedBackward0)
    goes back to the elements of `a` the view covers; a view reaching storage outside `a`, of a tensor that needs a
    gradient, is not implemented."""
    if a.__class__ is not Tensor:
        raise TypeError(f"as_strided(): argument 'input' (position 1) must be Tensor, not {type(a).__name__}")
    size = int_list((size,), "as_strided", "size", first)
    stride = int_list((stride,), "as_strided", "stride", first + 1)
    if storage_offset is not None and not _is_int(storage_offset):
        raise TypeError(f"as_strided(): argument 'storage_offset' (position {first + 2}) must be int, not "
                        f"{type(storage_offset).__name__}")
    base = a._base if a._base is not None else a
    storage = base._a
    if storage.__class__ is not np.ndarray or not storage.flags.c_contiguous:
        raise NotImplementedError("gradcli does not implement as_strided of a tensor whose storage is not one "
                                  "row-major block (a meta tensor, or a copy laid out in another order)")
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got strides: "
                           f"{_size_list(stride)}")
    if any(n < 0 for n in size):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={_size_list(size)} and "
                           f"strides={_size_list(stride)}")
    offset = a.storage_offset() if storage_offset is None else int(storage_offset)
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    if math.prod(size) >= 1 << 63:
        raise RuntimeError("numel: integer multiplication overflow")
    needed = 0 if 0 in size else offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))
    if needed * storage.itemsize >= 1 << 63:        # PyTorch computes the storage's bytes in int64
        raise RuntimeError(f"Storage size calculation overflowed with sizes={_size_list(size)} and "
                           f"strides={_size_list(stride)}")
    if needed > storage.size:
        item = storage.itemsize
        raise RuntimeError(f"setStorage: sizes {_size_list(size)}, strides {_size_list(stride)}, storage offset "
                           f"{offset}, and itemsize {item} requiring a storage size of {needed * item} are out of "
                           f"bounds for storage of size {storage.size * item}")
    flat = storage.reshape(-1)
    item = storage.itemsize
    try:
        out = np.lib.stride_tricks.as_strided(flat[offset:] if 0 not in size else flat[:0], tuple(size),
                                              tuple(s * item for s in stride), subok=True)
    except ValueError:          # more bytes than numpy can index, though PyTorch's numel fits in int64
        raise NotImplementedError(f"gradcli does not implement tensors of {math.prod(size)} elements: numpy "
                                  "cannot index that many bytes") from None
    where = None
    if a.requires_grad and STATE.recording:
        # each element's place in `a`: its storage position less a's start, when `a` is one row-major block there
        start = a.storage_offset()
        places = offset + sum(np.arange(n).reshape((-1,) + (1,) * (len(size) - k - 1)) * s
                              for k, (n, s) in enumerate(zip(size, stride))) if size else np.asarray(offset)
        places = np.broadcast_to(np.asarray(places) - start, tuple(size))
        if not a._a.flags.c_contiguous or (places.size and (places.min() < 0 or places.max() >= a._a.size)):
            raise NotImplementedError("gradcli does not implement the gradient of an as_strided view that reaches "
                                      "storage outside the tensor it was taken from, or of a tensor not laid out "
                                      "in one row-major block")
        where = np.array(places, dtype=np.intp)
    from gradcli.engine import views as _views
    return _view_of(a, out, _views.AS_STRIDED, (where, a._a.shape))


def unfold(a: Tensor, dimension, size, step) -> Tensor:
    """Tensor.unfold: a view of every window of `size` elements along `dimension`, `step` apart, the window's
    elements as a new last dim (UnfoldBackward0; a 0-d tensor gives itself as one window of one)."""
    x = a._a
    dimension, size, step = index_arg(dimension), index_arg(size), index_arg(step)
    int_param(dimension, size, step)
    d = wrap_dim(dimension, x.ndim)
    n = x.shape[d] if x.ndim else 1
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    return _view_of(a, unfold_array(x, d, size, step), UNFOLD, (x.shape, dimension, size, step))


def unfold_array(x: np.ndarray, d: int, size: int, step: int) -> np.ndarray:
    """The windows as a strided numpy view of x (sharing its memory)."""
    if x.ndim == 0:
        return x.reshape(1)[:size]
    count = (x.shape[d] - size) // step + 1
    shape = x.shape[:d] + (count,) + x.shape[d + 1:] + (size,)
    strides = x.strides[:d] + (x.strides[d] * step,) + x.strides[d + 1:] + (x.strides[d],)
    return np.lib.stride_tricks.as_strided(x, shape, strides, subok=True)


def unfold_backward_array(g: np.ndarray, shape: tuple, dimension: int, size: int, step: int) -> np.ndarray:
    """unfold_backward: zeros of the input's shape, each window's gradient added where the window sits, the
    windows in order (as PyTorch's kernel sums each element over the windows that hold it)."""
    out = np.zeros(shape, g.dtype)
    if not shape:
        return out + g.reshape(())
    d = wrap_dim(dimension, len(shape))
    moved = np.moveaxis(out, d, -1)
    windows = np.moveaxis(g, d, -2)          # (..., count, size)
    for i in range(windows.shape[-2]):
        moved[..., i * step:i * step + size] += windows[..., i, :]
    return out


def unfold_backward(g: Tensor, shape: tuple, dimension: int, size: int, step: int) -> Tensor:
    """The same, recorded (UnfoldBackwardBackward0)."""
    return apply(UNFOLD_BACKWARD, unfold_backward_array(g._a, shape, dimension, size, step), (g,),
                 (dimension, size, step))
