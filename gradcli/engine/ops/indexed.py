"""Indexed reads and writes beyond scatter and index_add: index_fill, index_copy, index_put, index_reduce,
scatter_reduce, masked_scatter, take, put (and their in-place forms), Tensor.fill_diagonal_ and
torch.unravel_index.

Each writer is a copy of self with values written (or reduced) at the positions an index gives, checked with
PyTorch's messages before anything is written: an index out of range never reaches numpy (which would wrap a
negative one or raise its own error). Repeated positions are written in index order (the last write wins) or
reduced in index order, as PyTorch's CPU kernels loop. The gradients of the reducing ops are PyTorch's
composite formulas (scatter_reduce_backward, index_reduce_backward: a max or min shared by several elements
splits its gradient evenly), computed with the same recorded ops under create_graph.
"""

from __future__ import annotations

import numpy as np

from gradcli.engine import custom, dtypes, forward, ops, signatures, views
from gradcli.engine.autograd import _fit
from gradcli.engine.ops import arith, arrange, elementwise, indexing, scatter as scatters
from gradcli.engine.ops.scatter import _checked_index_add, _checked_scatter, _flat, _key, _src_part
from gradcli.engine.recording import autocast_policy, Op, apply, checked_scalar, number_arg, type_word, wrap_dim
from gradcli.engine.state import STATE
from gradcli.engine.tensor import Tensor


def _bound(key: str, args: tuple, kwargs: dict) -> dict:
    _, values = signatures.bound(key, args, kwargs)
    return values


def _tensor(v) -> Tensor:
    """A formula's value as a Tensor: the recorded one under create_graph, a constant in a plain pass."""
    return v if v.__class__ is Tensor else Tensor(np.asanyarray(v))


def _array(F, t):
    """A formula's result in the pass's currency: the Tensor under create_graph, its array otherwise."""
    return t if F.tensors else t._a


def _slices(d: int, idx) -> tuple:
    return (slice(None),) * d + (idx,)


# ------------------------------------------------------------------------------------------ index_fill

def _checked_index_fill(x: np.ndarray, dim, idx: np.ndarray) -> tuple:
    """index_fill_'s checks in PyTorch's order and words: the wrapped dim and the index (negative ones
    counted from the end, as its kernel allows), flat."""
    if idx.dtype != np.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    d = wrap_dim(dim, max(x.ndim, 1))
    if idx.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    size = x.shape[d] if x.ndim else 1
    flat = idx.reshape(-1)
    if x.size == 0:                 # the kernel does not run: no index is checked
        _restrided(x, d, flat.size)
        return d, flat[:0]
    bad = flat[(flat < -size) | (flat >= size)]
    if bad.size:
        raise IndexError(f"index {int(bad[0])} is out of bounds for dimension {d} with size {size}")
    return d, flat % size


def _restrided(x: np.ndarray, d: int, count: int) -> None:
    """index_fill_'s and index_copy_'s kernels view self with the index's length along dim (stride 0 there)
    before they loop: for a tensor without elements, that view's storage check is PyTorch's error. (Its
    strides are a new tensor's: gradcli keeps none for a tensor without elements.)"""
    sizes = list(x.shape)
    sizes[d] = count
    if 0 in sizes:
        return
    strides = [int(np.prod([max(n, 1) for n in x.shape[k + 1:]], dtype=np.int64)) for k in range(x.ndim)]
    strides[d] = 0
    need = x.itemsize * (1 + sum((n - 1) * s for n, s in zip(sizes, strides)))
    raise RuntimeError(f"setStorage: sizes {sizes}, strides {strides}, storage offset 0, and itemsize {x.itemsize} "
                       f"requiring a storage size of {need} are out of bounds for storage of size 0")


def _filled(x: np.ndarray, d: int, idx: np.ndarray, value) -> np.ndarray:
    out = _flat(x).copy()
    out[_slices(d, idx)] = value
    return out.reshape(x.shape)


def index_fill_zero(g, dim, index):
    """g.index_fill(dim, index, 0): recorded (IndexFillBackward0) for a Tensor, on an array otherwise."""
    if g.__class__ is Tensor:
        return _index_fill(g, dim, index, 0)
    x = g
    d, idx = _checked_index_fill(x, dim, index._a if index.__class__ is Tensor else index)
    return _filled(x, d, idx, 0)


def _value_gradient(F, g, dim, index):
    """grad.index_select(dim, unique(index)).sum(): the filled places' gradient, each counted once."""
    idx = index._a if index.__class__ is Tensor else index
    unique = Tensor(np.unique(idx.reshape(-1)))
    gt = _tensor(g)
    picked = ops.index_select(gt if gt._a.ndim else gt.reshape(1), dim, unique)
    return _array(F, ops.reduce_sum(picked))


def _index_fill_jvp(F, ts, xs, result, dim, index):
    self_t = forward.tangent_or_zeros(ts, xs, 0)
    if len(ts) == 1:
        return _index_fill(self_t, dim, index, 0)
    if ts[0] is None and ts[1] is None:
        return None
    return _index_fill(self_t, dim, index, forward.tangent_or_zeros(ts, xs, 1))


# fmt: off
#                    node                   forward saves              formulas
INDEX_FILL        = Op("IndexFillBackward0", None, ("dim", "index"),
                       (lambda F, g, dim, index: index_fill_zero(g, dim, index),),
                       saves_tensors=True, quiet=True, versioned=("index",), jvp=_index_fill_jvp)
INDEX_FILL_TENSOR = Op("IndexFillBackward1", None, ("dim", "index"),
                       (lambda F, g, dim, index: index_fill_zero(g, dim, index), _value_gradient),
                       inputs=("self", "value"), fits="dtype", saves_tensors=True, quiet=True,
                       versioned=("index",), jvp=_index_fill_jvp)
# fmt: on


def _index_fill(a: Tensor, dim, index: Tensor, value) -> Tensor:
    x = a._a
    tensor_value = value.__class__ is Tensor
    if tensor_value and value._a.ndim:
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                           f"{value._a.ndim} dimension(s).")
    d, idx = _checked_index_fill(x, dim, index._a)
    number = value._a.item() if tensor_value else value
    fill = x.dtype.type(checked_scalar(number, x.dtype)) if x.dtype.kind != "b" else bool(number)
    out = _filled(x, d, idx, fill)
    if tensor_value:
        if value.requires_grad and STATE.recording and x.dtype.kind not in "fV":
            # an integer result recorded for a value that requires grad: autograd's own refusal
            raise RuntimeError(f"Autograd not support dtype: {type_word(x)}")
        return apply(INDEX_FILL_TENSOR, out, (a, value), (dim, index))
    return apply(INDEX_FILL, out, (a,), (dim, index))


def index_fill(*args, **kwargs) -> Tensor:
    """torch.index_fill: a copy of input with the slices at index along dim set to value."""
    v = _bound("torch.index_fill", args, kwargs)
    return _index_fill(v["input"], v["dim"], v["index"], v["value"])


def index_fill_method(self: Tensor, *args, **kwargs) -> Tensor:
    v = _bound("Tensor.index_fill", args, kwargs)
    return _index_fill(self, v["dim"], v["index"], v["value"])


def index_fill_inplace(self: Tensor, *args, **kwargs) -> Tensor:
    v = _bound("Tensor.index_fill_", args, kwargs)
    fill = lambda a: _index_fill(a, v["dim"], v["index"], v["value"])          # noqa: E731
    if self._base is not None and _expanded_write(self, v["value"], fill, ("index_fill_", "mask", "scalar", 1913)):
        return self
    return self._inplace_with(fill, v["value"])


def _expanded_write(a: Tensor, operand, op, words: tuple) -> bool:
    """An in-place index_fill_ or index_put_ on a tensor whose elements share memory (an expanded view), when
    nothing is recorded: PyTorch warns that this is deprecated and writes, so every element sharing a written
    one sees the value. False when `a` shares nothing, or the op must be recorded (the in-place rules then
    refuse it, as PyTorch's do)."""
    x = a._a
    if not ops.shape.internal_overlap(x) or STATE.fw_level is not None or (STATE.recording and (
            a.requires_grad or operand.__class__ is Tensor and operand.requires_grad)):
        return False
    if a._inference and not STATE.inference:
        return False                    # (the in-place path gives PyTorch's error)
    out = op(a)._a                      # PyTorch's checks, and the values
    if STATE.warn is not None:
        STATE.warn("UserWarning", indexing._EXPANDED.format(*words))
    changed = out != x                  # (equal values need no write: the places are shared anyway)
    if out.dtype.kind in "fV":
        changed |= np.isnan(out) != np.isnan(x)
    np.copyto(x, out, where=changed)
    a._version[0] += 1
    return True


# ------------------------------------------------------------------------------------------ index_copy

def _checked_index_copy(x: np.ndarray, dim, idx: np.ndarray, y: np.ndarray) -> int:
    """index_copy_'s checks in PyTorch's order and words (index_copy's meta function, then the kernel's
    bounds, which take no negative index): the wrapped dim."""
    d = wrap_dim(dim, x.ndim)
    if idx.ndim >= 2:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got {idx.ndim})")
    count = idx.size
    if y.ndim == 0 and count != 1:
        raise IndexError(f"index_copy_(): When source is scalar, index should have one element (got {count})")
    if y.ndim != x.ndim and y.ndim and x.ndim:
        raise IndexError("index_copy_(): When source and destination are not scalars, their dimensionality must "
                         f"match. Source dimensionality ({y.ndim}), destination dimensionality ({x.ndim})")
    if idx.dtype != np.int64:
        raise RuntimeError(f"index_copy_(): Expected a long tensor for index, but got {type_word(idx)}")
    if x.dtype != y.dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, but got (self) "
                           f"{type_word(x)} and (source) {type_word(y)}")
    xs, ys = list(x.shape), list(y.shape)
    if xs:
        del xs[d]
    if ys:
        del ys[d]
    if xs != ys:
        raise RuntimeError("index_copy_(): Source/destination tensor must have same slice shapes. Destination slice "
                           f"shape: {' '.join(map(str, xs))} at dimension {d} and source slice shape: "
                           f"{' '.join(map(str, ys))} at dimension 0.")
    if y.ndim and count != y.shape[d]:
        raise IndexError(f"index_copy_(): Number of indices ({count}) should be equal to source.size(dim) "
                         f"({y.shape[d]})")
    size = x.shape[d] if x.ndim else 1
    flat = idx.reshape(-1)
    if x.size == 0:
        _restrided(x, d, flat.size)
        return d
    bad = flat[(flat < 0) | (flat >= size)]
    if bad.size:
        raise IndexError(f"index_copy_(): index {int(bad[0])} is out of bounds for dimension {d} with size {size}")
    return d


def _copied(x: np.ndarray, d: int, idx: np.ndarray, y: np.ndarray) -> np.ndarray:
    """x with y's slices written at idx along d, in index order (numpy assigns a repeated index's slices in
    order too: the last wins)."""
    if x.size == 0:
        return x.copy()
    out = _flat(x).copy()
    out[_slices(d, idx.reshape(-1))] = _flat(y)
    return out.reshape(x.shape)


def _index_copy_source(F, g, dim, index, source, source_dim):
    """grad.index_select(dim, index), as the source's shape (expand_as for a source with dims)."""
    idx = index if index.__class__ is Tensor else Tensor(index)
    if F.tensors:
        picked = ops.index_select(g if g._a.ndim else g.reshape(1), dim, idx.reshape(-1))
        return F.expand(picked, source._a.shape) if source_dim else picked.reshape(())
    shape = source._a.shape if source.__class__ is Tensor else source.shape
    picked = F.index_select(g if g.ndim else g.reshape(1), wrap_dim(dim, max(g.ndim, 1)), idx._a)
    return np.broadcast_to(picked, shape).copy() if source_dim else picked.reshape(())


def _index_copy_jvp(F, ts, xs, result, dim, index, source_dim):
    if ts[0] is None and ts[1] is None:
        return None
    return _index_copy(forward.tangent_or_zeros(ts, xs, 0), dim, index, forward.tangent_or_zeros(ts, xs, 1))


# fmt: off
INDEX_COPY = Op("IndexCopyBackward0", None, ("dim", "index", "source", "source_dim"),
                (lambda F, g, dim, index, source, source_dim: index_fill_zero(g, dim, index), _index_copy_source),
                inputs=("self", "source"), saves_tensors=True, quiet=True, versioned=("index",),
                jvp=_index_copy_jvp)
# fmt: on


def _index_copy(a: Tensor, dim, index: Tensor, source: Tensor) -> Tensor:
    x, y = a._a, source._a
    d = _checked_index_copy(x, dim, index._a, y)
    out = _copied(x, d, index._a, y)
    return apply(INDEX_COPY, out, (a, source), (dim, index, y.ndim))


@autocast_policy("promote")
def index_copy(*args, **kwargs) -> Tensor:
    """torch.index_copy: a copy of input with source's slices written at index along dim."""
    v = _bound("torch.index_copy", args, kwargs)
    return _index_copy(v["input"], v["dim"], v["index"], v["source"])


@autocast_policy("promote")
def index_copy_method(self: Tensor, *args, **kwargs) -> Tensor:
    v = _bound("Tensor.index_copy", args, kwargs)
    return _index_copy(self, v["dim"], v["index"], v["source"])


def index_copy_inplace(self: Tensor, *args, **kwargs) -> Tensor:
    v = _bound("Tensor.index_copy_", args, kwargs)
    return self._inplace_with(lambda a: _index_copy(a, v["dim"], v["index"], v["source"]), v["source"])


# ------------------------------------------------------------------------------------------ take and put
# Flat positions into the tensor read as one row-major vector; negative ones count from the end.

def _checked_positions(idx: np.ndarray, numel: int) -> np.ndarray:
    """The kernel's bounds check (the first index out of range, in order): the positions, wrapped."""
    flat = idx.reshape(-1)
    bad = flat[(flat < -numel) | (flat >= numel)]
    if bad.size:
        raise IndexError(f"out of range: tried to access index {int(bad[0])} on a tensor of {numel} elements.")
    return flat % numel if numel else flat


def _taken_back(F, g, self, index):
    """take_backward: zeros_like(self).put_(index, grad, accumulate=True)."""
    idx = index if index.__class__ is Tensor else Tensor(index)
    if F.tensors:
        return _put(Tensor(np.zeros(self._a.shape, g._a.dtype)), idx, g, True)
    shape = self._a.shape if self.__class__ is Tensor else self.shape
    out = np.zeros(int(np.prod(shape, dtype=np.int64)), g.dtype)
    np.add.at(out, _checked_positions(idx._a, out.size), g.reshape(-1))
    return out.reshape(shape)


def _put_self(F, g, accumulate, index, source):
    """accumulate ? grad : grad.put(index, zeros_like(source), false)."""
    if accumulate:
        return g
    idx = index if index.__class__ is Tensor else Tensor(index)
    if F.tensors:
        return _put(g, idx, Tensor(np.zeros(source._a.shape, g._a.dtype)), False)
    out = g.copy()
    out.reshape(-1)[_checked_positions(idx._a, out.size)] = 0
    return out


def _put_source(F, g, accumulate, index, source):
    """grad.take(index).reshape_as(source)."""
    idx = index if index.__class__ is Tensor else Tensor(index)
    if F.tensors:
        return ops.reshape(_take(g, idx), source._a.shape)
    shape = source._a.shape if source.__class__ is Tensor else source.shape
    return g.reshape(-1)[_checked_positions(idx._a, g.size)].reshape(shape)


def _put_jvp(F, ts, xs, result, accumulate, index):
    if ts[0] is None and ts[1] is None:
        return None
    return _put(forward.tangent_or_zeros(ts, xs, 0), index, forward.tangent_or_zeros(ts, xs, 1), accumulate)


# fmt: off
TAKE = Op("TakeBackward0", None, ("self", "index"), (_taken_back,), saves_tensors=True, quiet=True,
          versioned=("index",), jvp=lambda F, ts, xs, result, index: _take(ts[0], index))
PUT  = Op("PutBackward0",  None, ("accumulate", "index", "source"), (_put_self, _put_source),
          inputs=("self", "source"), saves_tensors=True, quiet=True, versioned=("index",), jvp=_put_jvp)
# fmt: on


def _take(a: Tensor, index: Tensor) -> Tensor:
    x, idx = a._a, index._a
    if idx.dtype != np.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got {type_word(idx)}")
    if idx.size == 0:
        return apply(TAKE, np.empty(idx.shape, x.dtype), (a,), (index,))
    if x.size == 0:
        raise IndexError("take(): tried to take from an empty tensor")
    out = x.reshape(-1)[_checked_positions(idx, x.size)].reshape(idx.shape)
    return apply(TAKE, out, (a,), (index,))


def take(*args, **kwargs) -> Tensor:
    """torch.take: the elements at flat positions `index` of input read as one vector, in index's shape."""
    v = _bound("torch.take", args, kwargs)
    return _take(v["input"], v["index"])


def take_method(self: Tensor, *args, **kwargs) -> Tensor:
    v = _bound("Tensor.take", args, kwargs)
    return _take(self, v["index"])


def _put(a: Tensor, index: Tensor, source: Tensor, accumulate=False) -> Tensor:
    x, idx, y = a._a, index._a, source._a
    if idx.dtype != np.int64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got {type_word(idx)}")
    if y.dtype != x.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got self.dtype = "
                           f"{type_word(x)} and source.dtype = {type_word(y)}")
    if y.size != idx.size:
        raise IndexError(f"put_(): Expected source and index to have the same number of elements, but got "
                         f"source.numel() = {y.size}, index.numel() = {idx.size}")
    out = x.copy()
    if idx.size:
        if x.size == 0:
            raise IndexError("put_(): Tried to put elements into an empty tensor")
        positions = _checked_positions(idx, x.size)
        flat = out.reshape(-1)
        if accumulate:
            np.add.at(flat, positions, y.reshape(-1)) if x.dtype.kind != "b" else \
                np.logical_or.at(flat, positions, y.reshape(-1))
        else:
            flat[positions] = y.reshape(-1)
    return apply(PUT, out, (a, source), (bool(accumulate), index))


def put(*args, **kwargs) -> Tensor:
    """torch.put: a copy of input with source's elements written (or, accumulate, added) at flat positions."""
    v = _bound("torch.put", args, kwargs)
    return _put(v["input"], v["index"], v["source"], bool(v["accumulate"]))


def put_method(self: Tensor, *args, **kwargs) -> Tensor:
    v = _bound("Tensor.put", args, kwargs)
    return _put(self, v["index"], v["source"], bool(v["accumulate"]))


def put_inplace(self: Tensor, *args, **kwargs) -> Tensor:
    v = _bound("Tensor.put_", args, kwargs)
    return self._inplace_with(lambda a: _put(a, v["index"], v["source"], bool(v["accumulate"])), v["source"])


# ------------------------------------------------------------------------------------------ masked_scatter

def _masked_gathered(g: np.ndarray, mask, source_shape) -> np.ndarray:
    """masked_scatter_backward: the gradient where the mask is true, in order, padded with zeros to the
    source's size (the elements not read), as the source's shape."""
    numel = int(np.prod(source_shape, dtype=np.int64))
    m = mask._a if mask.__class__ is Tensor else mask
    picked = g[np.broadcast_to(m, g.shape)]
    if numel > picked.size:
        picked = np.concatenate([picked, np.zeros(numel - picked.size, g.dtype)])
    return picked.reshape(source_shape)


def _masked_source(F, g, mask, source_shape):
    """The source's gradient: masked_scatter_backward, an op of its own under create_graph
    (MaskedScatterBackwardBackward0)."""
    if F.tensors:
        return apply(MASKED_SCATTER_BACKWARD, _masked_gathered(g._a, mask, source_shape), (g,),
                     (mask, g._a.shape))
    return _masked_gathered(g, mask, source_shape)


def _masked_scatter_backward_jvp(F, ts, xs, result, mask, grad_shape):
    return apply(MASKED_SCATTER_BACKWARD, _masked_gathered(ts[0]._a, mask, result._a.shape), (ts[0],),
                 (mask, grad_shape))


def _masked_scatter_backward_grad(F, g, mask, grad_shape):
    """zeros_like(grad_output).masked_scatter(mask, grad)."""
    zeros = np.zeros(grad_shape, g._a.dtype if F.tensors else g.dtype)
    if F.tensors:
        return _masked_scatter(Tensor(zeros), mask, g)
    where = np.broadcast_to(mask._a if mask.__class__ is Tensor else mask, grad_shape)
    zeros[where] = g.reshape(-1)[:int(np.count_nonzero(where))]
    return zeros


def _masked_scatter_jvp(F, ts, xs, result, mask, source_shape):
    if ts[0] is None and ts[1] is None:
        return None
    return _masked_scatter(forward.tangent_or_zeros(ts, xs, 0), mask, forward.tangent_or_zeros(ts, xs, 1))


# fmt: off
# (a row of its own beside arrange.MASKED_SCATTER, masked_select's recorded gradient: self may broadcast here)
MASKED_SCATTER = Op("MaskedScatterBackward0", None, ("mask", "source_shape"),
                    (lambda F, g, mask, source_shape: F.masked_zero(g, mask), _masked_source),
                    inputs=("self", "source"), fits=True, saves_tensors=True, quiet=True, versioned=("mask",),
                    jvp=_masked_scatter_jvp)
MASKED_SCATTER_BACKWARD = Op("MaskedScatterBackwardBackward0", None, ("mask", "grad_shape"),
                             (_masked_scatter_backward_grad,), inputs=("grad_output",), saves_tensors=True,
                             quiet=True, jvp=_masked_scatter_backward_jvp)
# fmt: on


def _masked_scatter(a: Tensor, mask: Tensor, source: Tensor, inplace: bool = False) -> Tensor:
    x, m, y = a._a, mask._a, source._a
    if inplace:
        if m.shape != x.shape:
            ops.expand(mask, x.shape)               # PyTorch's words when the mask does not fit
        shape = x.shape
    else:
        shape = arrange._broadcast_shape(list(m.shape), list(x.shape))
    if x.dtype != y.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got{type_word(x)} "
                           f"and {type_word(y)}")
    if m.dtype != np.bool_:
        raise RuntimeError(f"masked_scatter_ only supports boolean masks, but got mask with dtype {type_word(m)}")
    out = np.array(np.broadcast_to(x, shape))
    where = np.broadcast_to(m, shape)
    count = int(np.count_nonzero(where))
    if count > y.size:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    out[where] = y.reshape(-1)[:count]
    return apply(MASKED_SCATTER, out, (a, source), (mask, tuple(y.shape)))


def masked_scatter(*args, **kwargs) -> Tensor:
    """torch.masked_scatter: a copy of input (broadcast with mask) with source's elements, in order, written
    where the mask is true."""
    v = _bound("torch.masked_scatter", args, kwargs)
    return _masked_scatter(v["input"], v["mask"], v["source"])


def masked_scatter_method(self: Tensor, *args, **kwargs) -> Tensor:
    v = _bound("Tensor.masked_scatter", args, kwargs)
    return _masked_scatter(self, v["mask"], v["source"])


def masked_scatter_inplace(self: Tensor, *args, **kwargs) -> Tensor:
    v = _bound("Tensor.masked_scatter_", args, kwargs)
    return self._inplace_with(lambda a: _masked_scatter(a, v["mask"], v["source"], True), v["source"])


# ------------------------------------------------------------------------------------------ index_put
# `x.index_put(indices, values)` is `x[indices] = values` on a copy, with one index tensor (or mask) per
# leading dim; accumulate=True adds the values in index order instead.

def _index_put_self(F, g, indices, accumulate, key, values_fit):
    """accumulate ? grad : grad.index_put(indices, zeros_like(values), false)."""
    if accumulate:
        return g
    if F.tensors:
        return indexing.index_put(g, key, Tensor(np.zeros(values_fit[0], g._a.dtype)))
    return F.zero_at(g, key)


def _index_put_jvp(F, ts, xs, result, indices, accumulate, key, values_fit):
    if ts[0] is None and ts[1] is None:
        return None
    return _index_put(forward.tangent_or_zeros(ts, xs, 0), indices, forward.tangent_or_zeros(ts, xs, 1),
                      accumulate)


# fmt: off
INDEX_PUT = Op("IndexPutBackward0", None, ("indices", "accumulate", "key", "values_fit"),
               (_index_put_self,
                lambda F, g, indices, accumulate, key, values_fit: _fit(F, F.getitem(g, key), values_fit)),
               inputs=("self", "values"), saves_tensors=True, quiet=True, versioned=("indices",),
               jvp=_index_put_jvp)
# fmt: on




def _index_key(x: np.ndarray, indices, values: np.ndarray, accumulate: bool) -> tuple:
    """The numpy key of index_put's indices, with PyTorch's checks (indexing's, in its order)."""
    if not indices:
        raise RuntimeError("sym_strides() called on an undefined Tensor")
    specified = sum(max(t._a.ndim, 1) if indexing._is_mask(t._a) else 1 for t in indices)
    if specified > x.ndim:
        raise IndexError(f"too many indices for tensor of dimension {x.ndim} (got {specified})")
    if len(indices) == 1 and indices[0]._a.dtype == np.uint8 and values.size == 1 and not accumulate:
        indexing.refuse_byte_fill(x.shape, 0, indices[0]._a)
    for t in indices:
        if t._a.dtype == np.uint8 and STATE.warn is not None:
            STATE.warn("UserWarning", indexing.BYTE_MASK)
    advanced, dim = [], 0
    for t in indices:
        advanced.append((dim, t._a))
        dim += t._a.ndim if indexing._is_mask(t._a) else 1
    return indexing._advanced_key(x, advanced)


def _index_put(a: Tensor, indices, values: Tensor, accumulate=False) -> Tensor:
    x, v = a._a, values._a
    indices = tuple(indices)
    key = _index_key(x, indices, v, accumulate)
    target = indexing.check_put_values(x, key, v)
    out = x.copy()
    if accumulate:
        spread = np.broadcast_to(v, target)
        np.add.at(out, key, spread) if x.dtype.kind != "b" else np.logical_or.at(out, key, spread)
    else:
        out[key] = v
    return apply(INDEX_PUT, out, (a, values), (indices, bool(accumulate), key, (v.shape, v.dtype)))


def index_put(*args, **kwargs) -> Tensor:
    """torch.index_put: a copy of input with values written at the places the index tensors pick."""
    v = _bound("torch.index_put", args, kwargs)
    return _index_put(v["input"], v["indices"], v["values"], bool(v["accumulate"]))


def index_put_(*args, **kwargs) -> Tensor:
    """torch.index_put_: the same, in place."""
    v = _bound("torch.index_put_", args, kwargs)
    return _index_put_inplace(v["input"], v)


def _index_put_inplace(self: Tensor, v: dict) -> Tensor:
    put = lambda a: _index_put(a, v["indices"], v["values"], bool(v["accumulate"]))   # noqa: E731
    if self._base is not None and _expanded_write(self, v["values"], put, ("index_put_", "indices", "tensor", 976)):
        return self
    return self._inplace_with(put, v["values"])


def index_put_method(self: Tensor, *args, **kwargs) -> Tensor:
    v = _bound("Tensor.index_put", args, kwargs)
    return _index_put(self, v["indices"], v["values"], bool(v["accumulate"]))


def index_put_inplace(self: Tensor, *args, **kwargs) -> Tensor:
    return _index_put_inplace(self, _bound("Tensor.index_put_", args, kwargs))


# ------------------------------------------------------------------------------------------ fill_diagonal_

def _strided(x: np.ndarray, start: tuple, size: int, stride: int) -> np.ndarray:
    """PyTorch's as_strided window of x: `size` elements `stride` bytes apart from element `start`."""
    first = x[tuple(slice(i, None) for i in start)]
    return np.lib.stride_tricks.as_strided(first, shape=(size,), strides=(stride,))


def fill_diagonal_inplace(self: Tensor, *args, **kwargs) -> Tensor:
    """Tensor.fill_diagonal_: fill_ on PyTorch's strided views of the main diagonal (all dims equal), and with
    wrap=True of a tall matrix's diagonal restarted every width + 1 rows (a CopySlices node each)."""
    v = _bound("Tensor.fill_diagonal_", args, kwargs)
    value, wrap = number_arg(v["fill_value"], "fill_diagonal_", "fill_value"), bool(v["wrap"])
    x = self._a
    if x.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    height, width = x.shape[0], x.shape[1]
    if x.ndim > 2 and any(n != height for n in x.shape):
        raise RuntimeError("all dimensions of input must be of equal length")
    size = min(height, width)
    stride = sum(x.strides)
    windows = [((0,) * x.ndim, size)]
    if wrap and x.ndim == 2 and height > width + 1:
        step = width + 1
        windows.append(((step, 0), (x.size + step - 1) // step - size))
    for start, count in windows:
        region = _strided(x, start, count, stride)
        view = ops.shape._view_of(self, region, views.AS_STRIDED, (views.positions(region, x), x.shape))
        own = getattr(view, "_fw", None)
        if own:             # forward mode: the window's tangent is its region of the base's (a view, not a copy)
            view._fw = {level: t for level, t in own.items() if t is None} or None
        view._inplace(lambda a, _: ops.fill(a, value), None)
        if self._base is not None and view.grad_fn is not None and view.grad_fn.op is views.AS_STRIDED:
            views.follow(self)          # self is a view too: it sees its base's new history
    return self


# ------------------------------------------------------------------------------------------ unravel_index

def unravel_index(indices, shape) -> tuple:
    """torch.unravel_index: flat indices as coordinates, composed as PyTorch composes it (in Python):
    indices.unsqueeze(-1).floor_divide(strides) % shape, unbound along the last dim."""
    if indices.__class__ is not Tensor:
        raise AttributeError(f"'{signatures.type_name(indices)}' object has no attribute 'is_complex'")
    if indices._a.dtype.kind not in "iu":
        raise TypeError(f"expected 'indices' to be integer dtype, but got {dtypes.of_array(indices._a)}")
    if shape.__class__ is int or shape.__class__ is bool:
        shape = (shape,)
    elif shape.__class__ in (list, tuple, str, range) or isinstance(shape, tuple):
        for n in shape:
            if n.__class__ is not int and n.__class__ is not bool:
                raise TypeError(f"expected 'shape' sequence to only contain ints, but got <class "
                                f"'{signatures.type_name(n)}'>")
        shape = tuple(shape)
    else:
        name = "torch.Tensor" if shape.__class__ is Tensor else signatures.type_name(shape)
        raise TypeError(f"expected 'shape' to be int or sequence of ints, but got <class '{name}'>")
    if any(n < 0 for n in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {tuple(int(n) for n in shape)}")
    coefs, running = [], 1
    for n in reversed(tuple(shape[1:]) + (1,)):
        running *= int(n)
        coefs.append(running)
    if any(c >= 1 << 63 for c in coefs) or any(n >= 1 << 63 for n in shape):
        raise ValueError("Overflow when unpacking long long")      # torch.tensor(coefs, dtype=torch.int64)
    strides = Tensor(np.array(coefs[::-1], dtype=np.int64))
    sizes = Tensor(np.array([int(n) for n in shape], dtype=np.int64))
    return ops.unbind(ops.remainder(ops.floor_divide(ops.unsqueeze(indices, -1), strides), sizes), -1)


# ------------------------------------------------------------------------------------------ scatter_reduce, index_reduce
# Both fold values into self at the positions an index gives: scatter_reduce element by element (scatter's
# positions), index_reduce slice by slice (index_add's). With include_self=False the positions written are
# first set to the reduction's identity, so self's own values there take no part. `mean` divides the sum by
# the count of values folded in (self's own counting once when included), floor-dividing integers.

_UFUNCS = {"sum": np.add, "prod": np.multiply, "mean": np.add, "amax": np.maximum, "amin": np.minimum}
_BOOL_UFUNCS = {"sum": np.logical_or, "prod": np.logical_and, "amax": np.logical_or, "amin": np.logical_and}


def _identity(reduce: str, dtype: np.dtype):
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if dtype.kind == "b":
        return reduce == "amin"
    if dtype.kind in "fV":
        return -np.inf if reduce == "amax" else np.inf
    info = np.iinfo(dtype)
    return info.min if reduce == "amax" else info.max


def _folded(x: np.ndarray, key: tuple, values: np.ndarray, reduce: str, include_self: bool, kind: str) -> np.ndarray:
    """A copy of x with `values` folded in at `key` (an index with repeats), in index order. scatter_reduce's
    kernel sums and multiplies Half in float, rounding once; index_reduce's rounds each step."""
    out = _flat(x).copy()
    if not include_self:
        out[key] = _identity(reduce, out.dtype)
    if out.dtype.kind == "b":
        if reduce == "mean":
            raise NotImplementedError(f"\"{kind}_cpu_reduce_mean\" not implemented for 'Bool'")
        _BOOL_UFUNCS[reduce].at(out, key, values)
    elif out.dtype.char in "eE" and reduce in ("sum", "mean", "prod") and kind != "index_func_":
        half = out.dtype
        wide = out.astype(np.float32)
        _UFUNCS[reduce].at(wide, key, values.astype(np.float32))
        out = wide.astype(half)
    elif reduce in ("amax", "amin"):
        _extremes(out, key, values, reduce == "amax")
    else:
        _UFUNCS[reduce].at(out, key, values)
    if reduce == "mean":
        count = np.full(out.shape, 1 if include_self else 0, out.dtype)
        np.add.at(count, key, np.ones(values.shape, out.dtype))
        count[count == 0] = 1
        out = out / count if out.dtype.kind in "fV" else np.floor_divide(out, count)
    return out.reshape(x.shape)


def _positions(shape: tuple, key: tuple) -> np.ndarray:
    """The flat positions `out[key]` reads, in its order, without a grid of the whole tensor: scatter's key
    (an open grid of arrays) or index_reduce's (slices, then one index vector along its dim)."""
    full = list(key) + [slice(None)] * (len(shape) - len(key))
    sliced = any(k.__class__ is slice for k in full)
    grids = []
    for axis, k in enumerate(full):
        along = [-1 if j == axis else 1 for j in range(len(shape))]
        if k.__class__ is slice:
            grids.append(np.arange(shape[axis]).reshape(along))
        else:
            grids.append(k.reshape(along) if sliced else k)
    return np.ravel_multi_index(np.broadcast_arrays(*grids), shape)


def _extremes(out: np.ndarray, key: tuple, values: np.ndarray, largest: bool) -> None:
    """amax/amin folded in index order as PyTorch's kernels compare: a value replaces the one held only when
    it is larger (smaller) or NaN, so of equal values (0.0 and -0.0) the first stays (np.maximum may not)."""
    grid = _positions(out.shape, key)                           # the flat position each value goes to
    targets, values = grid.reshape(-1), np.broadcast_to(values, grid.shape).reshape(-1)
    flat = out.reshape(-1)
    order = np.argsort(targets, kind="stable")
    ordered = targets[order]
    starts = np.r_[0, np.flatnonzero(ordered[1:] != ordered[:-1]) + 1]
    ranks = np.empty(targets.size, np.int64)
    ranks[order] = np.arange(targets.size) - np.repeat(starts, np.diff(np.r_[starts, targets.size]))
    for r in range(int(ranks.max()) + 1 if targets.size else 0):
        pick = ranks == r                   # one value for each position, the r-th written there
        at, new = targets[pick], values[pick]
        held = flat[at]
        wins = (new > held) if largest else (new < held)
        if new.dtype.kind in "fV":
            wins |= np.isnan(new)
        flat[at] = np.where(wins, new, held)


def _saved(F, v):
    return v if F.tensors or v.__class__ is Tensor else Tensor(np.asanyarray(v))


def _reduce_backward(F, g, which: str, want: int, self, dim, index, src, reduce, include_self, result):
    """scatter_reduce_backward / index_reduce_backward (PyTorch's FunctionsManual), input `want`'s part (0:
    self, 1: src), with the same ops in the same order: recorded under create_graph, on constants otherwise."""
    if reduce not in _SCATTER_REDUCTIONS[:5]:         # max, min: the forward kernel takes them, this does not
        raise RuntimeError(f"Expected 'reduce' to be one of 'sum', 'prod', 'mean', 'amax', 'amin' but got {reduce}.")
    g, self, src, result = _tensor(g), _saved(F, self), _saved(F, src), _saved(F, result)
    index = index if index.__class__ is Tensor else Tensor(index)
    scattered = which == "scatter"
    pick = ops.gather if scattered else ops.index_select
    add_at = scatters._scatter_add if scattered else (lambda a, d, i, s: scatters._index_add(a, d, i, s))
    fold = _scatter_reduce if scattered else _index_reduce
    zeros_like = lambda t: Tensor(np.zeros(t._a.shape, t._a.dtype))         # noqa: E731
    ones_like = lambda t: Tensor(np.ones(t._a.shape, t._a.dtype))           # noqa: E731
    cast = lambda t: arith.to_dtype(t, dtypes.of_array(self._a))              # noqa: E731
    if reduce == "sum":
        out = g if want == 0 else pick(g, dim, index)
    elif reduce == "prod":
        if want == 0:
            masked_self = elementwise.masked_fill(self, self == 0, 1)
            out = g * fold(masked_self, dim, index, src, reduce, include_self) / masked_self
        else:
            src_zero = src == 0
            src_num_zeros = pick(add_at(zeros_like(self), dim, index, cast(src_zero)), dim, index)
            src_single_zero = ops.bitwise_and(src_zero, src_num_zeros == 1)
            masked_src = elementwise.masked_fill(src, src_single_zero, 1)
            masked_src_result = fold(self, dim, index, masked_src, reduce, include_self)
            out = elementwise.where(src_single_zero, pick(g * masked_src_result, dim, index),
                                    pick(g * result, dim, index) / elementwise.masked_fill(src, src_zero, 1))
            if F.tensors and STATE.recording and bool((src_num_zeros._a > 1).any()):
                name, arg = ("scatter_reduce", "src") if scattered else ("index_reduce", "source")
                out = custom._delayed_error(out, f"{name}(): Double backward is unsupported for {arg} when >1 zeros "
                                                 f"in {arg} are scattered to the same position in self")
    elif reduce == "mean":
        n = ones_like(g) if include_self else zeros_like(g)
        n = add_at(n, dim, index, ones_like(src))
        n = elementwise.masked_fill(n, n == 0, 1)
        out = g / n if want == 0 else pick(g, dim, index) / pick(n, dim, index)
    else:
        value = pick(result, dim, index)
        self_is_result = cast(self == result)
        src_is_result = cast(src == value)
        distributed = g / add_at(self_is_result, dim, index, src_is_result)
        if want == 0:
            out = ((self == result) if scattered else self_is_result) * distributed
        else:
            out = ((src == value) if scattered else src_is_result) * pick(distributed, dim, index)
    if want == 0 and not include_self:
        out = scatters.scatter_zero(out, dim, index) if scattered else _index_fill(out, dim, index, 0)
    return _array(F, out)


def _reduce_formula(which: str, want: int):
    def formula(F, g, self, dim, index, src, reduce, include_self, result):
        return _reduce_backward(F, g, which, want, self, dim, index, src, reduce, include_self, result)
    return formula


def _scatter_reduce_jvp(F, ts, xs, result, dim, index, reduce, include_self):
    """scatter_reduce_jvp: sum and mean are linear; a max or min takes the tangents of the elements equal to
    it, averaged; prod (and the legacy max, min) has no formula: an undefined tangent, as in PyTorch."""
    if reduce not in ("sum", "mean", "amax", "amin") or (ts[0] is None and ts[1] is None):
        return None
    self_t, src_t = forward.tangent_or_zeros(ts, xs, 0), forward.tangent_or_zeros(ts, xs, 1)
    if reduce in ("sum", "mean"):
        return _scatter_reduce(self_t, dim, index, src_t, reduce, include_self)
    self_p, src_p = xs
    mask_self = self_p == result
    mask_src = src_p == ops.gather(result, dim, index)
    dtype = dtypes.of_array(self_t._a)
    div = _scatter_reduce(arith.to_dtype(mask_self, dtype), dim, index, arith.to_dtype(mask_src, dtype), "sum",
                          include_self)
    return _scatter_reduce(elementwise.where(mask_self, self_t, 0.), dim, index,
                           elementwise.where(mask_src, src_t, 0.), "sum", include_self) / div


# fmt: off
SCATTER_REDUCE = Op("ScatterReduceBackward0", None,
                    ("self", "dim", "index", "src", "reduce", "include_self", "result"),
                    (_reduce_formula("scatter", 0), _reduce_formula("scatter", 1)), inputs=("self", "src"),
                    saves_tensors=True, quiet=True, versioned=("index",), jvp=_scatter_reduce_jvp)
INDEX_REDUCE   = Op("IndexReduceBackward0", None,
                    ("self", "dim", "index", "source", "reduce", "include_self", "result"),
                    (_reduce_formula("index", 0), _reduce_formula("index", 1)), inputs=("self", "source"),
                    saves_tensors=True, quiet=True, versioned=("index",), jvp=forward.no_tangent("index_reduce"))
# fmt: on

# (PyTorch's kernel also takes the legacy names max and min, for amax and amin)
_SCATTER_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin", "max", "min")
_LEGACY = {"max": "amax", "min": "amin"}
_INDEX_REDUCTIONS = ("prod", "mean", "amax", "amin")
_INDEX_REDUCE_WARNING = ("index_reduce() is in beta and the API may change at any time. (Triggered internally at "
                         "/__w/pytorch/pytorch/aten/src/ATen/native/TensorAdvancedIndexing.cpp:1523.)")


def _scatter_reduce(a: Tensor, dim, index: Tensor, src: Tensor, reduce: str, include_self=True) -> Tensor:
    x, idx, y = a._a, index._a, src._a
    d = _checked_scatter(x, dim, idx, y, reduce, _SCATTER_REDUCTIONS,
                         f"reduce argument must be either sum, prod, mean, amax or amin, got {reduce}")
    include_self = bool(include_self)
    if idx.size:
        out = _folded(x, _key(_flat(idx), d), _src_part(y, idx), _LEGACY.get(reduce, reduce), include_self,
                      "scatter_gather_tensor")
    else:
        out = x.copy()
    return apply(SCATTER_REDUCE, out, (a, src), (dim, index, reduce, include_self))


def _index_reduce(a: Tensor, dim, index: Tensor, source: Tensor, reduce: str, include_self=True) -> Tensor:
    x, idx, y = a._a, index._a, source._a
    if reduce not in _INDEX_REDUCTIONS:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {reduce}.")
    d = _checked_index_add(x, dim, idx, y, "index_reduce_")
    include_self = bool(include_self)
    if not include_self:            # PyTorch first sets the slices to the identity, as index_fill_ does
        if x.dtype.kind == "b":
            raise NotImplementedError("\"index_reduce_func_exclude_input_init\" not implemented for 'Bool'")
        size = x.shape[d] if x.ndim else 1
        flat = idx.reshape(-1)
        if x.size == 0:
            _restrided(x, d, flat.size)
        outside = flat[(flat < -size) | (flat >= size)]
        if outside.size:
            raise IndexError(f"index {int(outside[0])} is out of bounds for dimension {d} with size {size}")
    if x.ndim > 1 and x.shape[d] == 0 and idx.size:     # the slice loop's first select, before any bound
        raise IndexError(f"select(): index 0 out of range for tensor of size {list(x.shape)} at dimension {d}")
    if scatters.checked_index_bounds(x, d, idx) is not None:
        raise IndexError("index out of range in self")
    if x.dtype.kind == "b" and (x.ndim <= 1 or reduce == "mean"):
        # a vector loops in index_func_ (no Bool); larger tensors fold slices with Bool's and/or, but the
        # mean's floor division has no Bool kernel
        raise NotImplementedError("\"index_func_\" not implemented for 'Bool'" if x.ndim <= 1 else
                                  "\"div_floor_cpu\" not implemented for 'Bool'")
    key = _slices(d, idx.reshape(-1)) if x.ndim else (idx.reshape(-1),)
    out = _folded(x, key, _flat(y), reduce, include_self, "index_func_")
    return apply(INDEX_REDUCE, out, (a, source), (dim, index, reduce, include_self))


def scatter_reduce(*args, **kwargs) -> Tensor:
    """torch.scatter_reduce: a copy of input with src's elements folded in at index along dim."""
    v = _bound("torch.scatter_reduce", args, kwargs)
    return _scatter_reduce(v["input"], v["dim"], v["index"], v["src"], v["reduce"], _included(v))


def _included(values: dict) -> bool:
    return True if values.get("include_self") is None else bool(values["include_self"])


def scatter_reduce_method(self: Tensor, *args, **kwargs) -> Tensor:
    v = _bound("Tensor.scatter_reduce", args, kwargs)
    return _scatter_reduce(self, v["dim"], v["index"], v["src"], v["reduce"], _included(v))


def scatter_reduce_inplace(self: Tensor, *args, **kwargs) -> Tensor:
    v = _bound("Tensor.scatter_reduce_", args, kwargs)
    return self._inplace_with(
        lambda a: _scatter_reduce(a, v["dim"], v["index"], v["src"], v["reduce"], _included(v)), v["src"])


def _warn_beta() -> None:
    STATE.warn_once("index_reduce beta", "UserWarning", _INDEX_REDUCE_WARNING)


def index_reduce(*args, **kwargs) -> Tensor:
    """torch.index_reduce: a copy of input with source's slices folded in at index along dim."""
    v = _bound("torch.index_reduce", args, kwargs)
    _warn_beta()
    return _index_reduce(v["input"], v["dim"], v["index"], v["source"], v["reduce"], _included(v))


def index_reduce_method(self: Tensor, *args, **kwargs) -> Tensor:
    v = _bound("Tensor.index_reduce", args, kwargs)
    _warn_beta()
    return _index_reduce(self, v["dim"], v["index"], v["source"], v["reduce"], _included(v))


def index_reduce_inplace(self: Tensor, *args, **kwargs) -> Tensor:
    v = _bound("Tensor.index_reduce_", args, kwargs)
    _warn_beta()
    return self._inplace_with(
        lambda a: _index_reduce(a, v["dim"], v["index"], v["source"], v["reduce"], _included(v)), v["source"])
