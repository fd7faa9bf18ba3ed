"""scatter, scatter_add and index_add (and their in-place forms): values written or added into a copy of a
tensor at the positions an index tensor gives.

scatter's node is reduce.SCATTER (ScatterBackward0), which the gradient of max(dim), sort and topk also
records; the others are rows here. With `reduce=` PyTorch has no derivative: its node is NotImplemented.
Positions that repeat along `dim` are written in index order (the last write wins) or added in index
order, as PyTorch's CPU kernels loop.
"""

from __future__ import annotations

import numpy as np

from gradcli.engine import forward, ops, signatures
from gradcli.engine.fma import fma
# the modules, not their rows: a row belongs to the table of the module that declares it
from gradcli.engine.ops import elementwise, reduce as reductions
from gradcli.engine.ops.reduce import gather_src_backward, scatter_self_backward
from gradcli.engine.recording import Op, apply, checked_scalar, number_arg, type_word, wrap_dim
from gradcli.engine.state import STATE
from gradcli.engine.tensor import Tensor


def _index_add_source(F, g, alpha, dim, index, source, source_dim):
    """maybe_multiply(grad.index_select(dim, index).expand_as(source), alpha)."""
    picked = F.expand(F.index_select(g, dim, index), source.shape)
    return picked if alpha == 1 else F.times(picked, alpha)


def _scatter_value_jvp(F, ts, xs, result, dim, index):
    return scatter_zero(ts[0], dim, index)


def _scatter_add_jvp(F, ts, xs, result, dim, index, src_shape):
    if ts[0] is None and ts[1] is None:
        return None
    return _scatter_add(forward.tangent_or_zeros(ts, xs, 0), dim, index, forward.tangent_or_zeros(ts, xs, 1))


def _index_add_jvp(F, ts, xs, result, alpha, dim, index, source_dim):
    if ts[0] is None and ts[1] is None:
        return None
    return _index_add(forward.tangent_or_zeros(ts, xs, 0), dim, index, forward.tangent_or_zeros(ts, xs, 1),
                     alpha=alpha)


# fmt: off
#                    node                     forward saves                               formulas
SCATTER_VALUE = Op("ScatterBackward1",     None, ("dim", "index"),                  (scatter_self_backward,),
                   saves_tensors=True, quiet=True, jvp=_scatter_value_jvp, versioned=("index",))
SCATTER_ADD   = Op("ScatterAddBackward0",  None, ("dim", "index", "src_shape"),
                   (lambda F, g, dim, index, src_shape: g, gather_src_backward("ScatterAddBackward0")),
                   inputs=("self", "src"), saves_tensors=True, quiet=True, jvp=_scatter_add_jvp,
                   versioned=("index",))
INDEX_ADD     = Op("IndexAddBackward0",    None, ("alpha", "dim", "index", "source", "source_dim"),
                   (lambda F, g, alpha, dim, index, source, source_dim: g, _index_add_source),
                   inputs=("self", "source"), saves_tensors=True, quiet=True, jvp=_index_add_jvp,
                   versioned=("index",))
# fmt: on

_REDUCE_WARNING = ("The reduce argument of torch.scatter with Tensor src is deprecated and will be removed in a "
                   "future PyTorch release. Use torch.scatter_reduce instead for more reduction options. (Triggered "
                   "internally at /__w/pytorch/pytorch/aten/src/ATen/native/TensorAdvancedIndexing.cpp:225.)")
_REDUCERS = {"add": np.add, "multiply": np.multiply}


# ------------------------------------------------------------------------------------------ the checks

def _size_list(shape) -> str:
    return "[" + ", ".join(str(n) for n in shape) + "]"


def _dims(x: np.ndarray) -> int:
    return max(x.ndim, 1)           # PyTorch's kernels read a 0-d tensor as one of shape (1,)


def _checked_scatter(x: np.ndarray, dim, idx: np.ndarray, src: np.ndarray | None, reduce,
                     reducers=_REDUCERS, refusal="reduce argument must be either add or multiply.") -> int:
    """scatter's checks in PyTorch's order and words (scatter_gather_dtype_check, scatter_shape_check, the
    reduce name, the kernel's bounds): the wrapped dim. scatter_reduce passes its own reductions and words."""
    d = wrap_dim(dim, x.ndim)
    if idx.dtype not in (np.int64, np.int32):
        raise RuntimeError("scatter(): Expected dtype int32/int64 for index")
    if src is not None and src.dtype != x.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    if idx.size:
        if _dims(idx) != _dims(x):
            raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
        if src is not None and _dims(idx) != _dims(src):
            raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
        ishape, xshape = idx.shape or (1,), x.shape or (1,)
        sshape = None if src is None else (src.shape or (1,))
        beyond_self = any(ishape[k] > xshape[k] for k in range(len(ishape)) if k != d)
        beyond_src = sshape is not None and any(ishape[k] > sshape[k] for k in range(len(ishape)))
        if beyond_self or beyond_src:
            text = (f"Expected index {_size_list(idx.shape)} to be no larger than self {_size_list(x.shape)} apart "
                    f"from dimension {d}")
            if src is not None:
                text += f" and to be no larger size than src {_size_list(src.shape)}"
            raise RuntimeError(text)
    if reduce is not None and reduce not in reducers:
        raise RuntimeError(refusal)
    if idx.size:
        size = x.shape[d] if x.ndim else 1
        bad = idx[(idx < 0) | (idx >= size)]
        if bad.size:
            raise RuntimeError(f"index {int(bad.flat[0])} is out of bounds for dimension {d} with size {size}")
    return d


def _key(idx: np.ndarray, d: int) -> tuple:
    """The positions an index of a scatter along d addresses: its own position, with `dim` replaced by its
    value (an open grid, in the index's row-major order)."""
    grid = list(np.ix_(*[np.arange(n) for n in idx.shape]))
    grid[d] = idx
    return tuple(grid)


def _flat(x: np.ndarray) -> np.ndarray:
    return x.reshape(1) if x.ndim == 0 else x


def _written(x: np.ndarray, d: int, idx: np.ndarray, values, reducer=None) -> np.ndarray:
    """A copy of x with `values` (an array of the index's shape, or one number) written at the index's
    positions: the last write of a repeated position wins, or `reducer` (np.add, np.multiply) folds
    them in index order (Half in float, rounded once)."""
    out = _flat(x).copy()
    if idx.size:
        key = _key(_flat(idx), d)
        if reducer is None:
            out[key] = values
        elif out.dtype.char in "eE":           # PyTorch's kernel folds Half (BFloat16) in float
            wide = out.astype(np.float32)
            reducer.at(wide, key, np.asanyarray(values, np.float32))
            out = wide.astype(x.dtype)
        else:
            reducer.at(out, key, values)
    return out.reshape(x.shape)


def _src_part(src: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """The part of src that the index reads: its leading corner of the index's shape."""
    src = _flat(src)
    return src[tuple(slice(0, n) for n in _flat(idx).shape)]


# ------------------------------------------------------------------------------------------ the ops

def _bound(key: str, args: tuple, kwargs: dict) -> tuple:
    form, values = signatures.bound(key, args, kwargs)
    return form, values


def _scatter(a: Tensor, dim, index: Tensor, src, reduce) -> Tensor:
    x, idx = a._a, index._a
    if src.__class__ is Tensor:
        d = _checked_scatter(x, dim, idx, src._a, reduce)
        if reduce is not None:
            STATE.warn_once("scatter reduce", "UserWarning", _REDUCE_WARNING)
        out = _written(x, d, idx, _src_part(src._a, idx), _REDUCERS.get(reduce))
        if reduce is not None:
            return elementwise.not_implemented(out, (a, src), "scatter")
        return apply(reductions.SCATTER, out, (a, src), (dim, index, src._a.shape))
    d = _checked_scatter(x, dim, idx, None, reduce)
    value = x.dtype.type(checked_scalar(src, x.dtype))
    out = _written(x, d, idx, value, _REDUCERS.get(reduce))
    if reduce is not None:
        return elementwise.not_implemented(out, (a,), "scatter")
    return apply(SCATTER_VALUE, out, (a,), (dim, index))


def _scatter_call(key: str, a: Tensor, args: tuple, kwargs: dict) -> Tensor:
    _, values = _bound(key, args, kwargs)
    src = values["src"] if values.get("src") is not None else values["value"]
    return _scatter(a, values["dim"], values["index"], src, values.get("reduce"))


def scatter(*args, **kwargs) -> Tensor:
    """torch.scatter: a copy of input with src's values (or one value) written at index along dim."""
    _, values = _bound("torch.scatter", args, kwargs)
    src = values["src"] if values.get("src") is not None else values["value"]
    return _scatter(values["input"], values["dim"], values["index"], src, values.get("reduce"))


def scatter_method(self: Tensor, *args, **kwargs) -> Tensor:
    return _scatter_call("Tensor.scatter", self, args, kwargs)


def scatter_inplace(self: Tensor, *args, **kwargs) -> Tensor:
    _, values = _bound("Tensor.scatter_", args, kwargs)
    src = values["src"] if values.get("src") is not None else values["value"]
    return self._inplace_with(lambda a: _scatter(a, values["dim"], values["index"], src, values.get("reduce")), src)


def scatter_zero(g: Tensor, dim: int, index: Tensor) -> Tensor:
    """g.scatter(dim, index, 0), recorded (ScatterBackward1): scatter's gradient for self under
    create_graph=True, and its tangent."""
    return _scatter(g, dim, index, 0, None)


def scatter_zero_array(g: np.ndarray, dim: int, index) -> np.ndarray:
    """scatter_zero in a plain backward pass."""
    idx = index._a if index.__class__ is Tensor else index
    return _written(g, wrap_dim(dim, g.ndim), idx, 0)


def gather_array(g: np.ndarray, dim: int, index) -> np.ndarray:
    """g.gather(dim, index) in a plain backward pass: the index's shape, whatever g's other sizes."""
    idx = index._a if index.__class__ is Tensor else index
    if not idx.size:
        return np.zeros(idx.shape, g.dtype)
    return _flat(g)[_key(_flat(idx), wrap_dim(dim, g.ndim))].reshape(idx.shape)


def scatter_tangent(ts, result, dim, index):
    """scatter's tangent, self_t.scatter(dim, index, src_t) (zeros for a missing one)."""
    self_t, src_t = ts
    if self_t is None and src_t is None:
        return None
    if self_t is None:
        self_t = Tensor(np.zeros_like(result._a))
    if src_t is None:
        return scatter_zero(self_t, dim, index)
    return _scatter(self_t, dim, index, src_t, None)


def _scatter_add(a: Tensor, dim, index: Tensor, src: Tensor) -> Tensor:
    x, idx = a._a, index._a
    d = _checked_scatter(x, dim, idx, src._a, None)
    out = _written(x, d, idx, _src_part(src._a, idx), np.add)
    return apply(SCATTER_ADD, out, (a, src), (dim, index, src._a.shape))


def scatter_add(*args, **kwargs) -> Tensor:
    """torch.scatter_add: a copy of input with src's values added at index along dim."""
    _, values = _bound("torch.scatter_add", args, kwargs)
    return _scatter_add(values["input"], values["dim"], values["index"], values["src"])


def scatter_add_method(self: Tensor, *args, **kwargs) -> Tensor:
    _, values = _bound("Tensor.scatter_add", args, kwargs)
    return _scatter_add(self, values["dim"], values["index"], values["src"])


def scatter_add_inplace(self: Tensor, *args, **kwargs) -> Tensor:
    _, values = _bound("Tensor.scatter_add_", args, kwargs)
    return self._inplace_with(lambda a: _scatter_add(a, values["dim"], values["index"], values["src"]),
                              values["src"])


def _checked_index_add(x: np.ndarray, dim, idx: np.ndarray, y: np.ndarray, name: str = "index_add_",
                       alpha=1) -> int:
    """index_add's checks (index_func_meta_impl and the kernel's bounds), in PyTorch's order and words;
    index_reduce_ shares the first under its own name (checked_index_bounds: its kernel's)."""
    d = wrap_dim(dim, x.ndim)
    if idx.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector, but got dim: {idx.ndim} with type: "
                         f"{type_word(idx)} and size: {_size_list(idx.shape)}")
    if idx.dtype not in (np.int64, np.int32):
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index but got: {type_word(idx)}")
    if x.dtype != y.dtype:
        raise RuntimeError(f"{name}(): self ({type_word(x)}) and source ({type_word(y)}) must have the same "
                           "scalar type")
    if d != 0 and d >= y.ndim:
        raise RuntimeError(f"{name}(): Indexing dim {d} is out of bounds of the source tensor with dim {y.ndim}")
    count = y.shape[d] if y.ndim else 1
    if idx.size != count:
        raise RuntimeError(f"{name}(): Number of indices ({idx.size}) should be equal to source.size(dim): "
                           f"({count}), for dim: {d}")
    xs, ys = list(x.shape), list(y.shape)
    if x.ndim and y.ndim:
        del xs[d], ys[d]
    if xs != ys:
        raise RuntimeError("source tensor shape must match self tensor shape, excluding the specified dimension. "
                           f"Got self.shape = {_size_list(x.shape)} source.shape = {_size_list(y.shape)}")
    if name == "index_add_":
        bad = checked_index_bounds(x, d, idx)
        if bad is not None:
            # PyTorch scatter-adds (alpha 1, an int64 index, along the first or last of several dims), whose check
            # names the index; the scalar loop (one dim) and the slice-by-slice adds check in their own words
            if x.ndim > 1 and alpha == 1 and idx.dtype == np.int64 and d in (0, x.ndim - 1):
                raise RuntimeError(f"index {bad} is out of bounds for dimension {d} with size {x.shape[d]}")
            raise IndexError("index out of range in self")
    return d


def checked_index_bounds(x: np.ndarray, d: int, idx: np.ndarray):
    """The first index outside [0, size) along d, or None."""
    size = x.shape[d] if x.ndim else 1
    bad = idx[(idx < 0) | (idx >= size)]
    return int(bad.flat[0]) if bad.size else None


def _added(x: np.ndarray, d: int, idx: np.ndarray, y: np.ndarray, alpha) -> np.ndarray:
    """x with alpha * y's slices added at idx along d, in index order, as PyTorch's CPU kernel adds them. A
    1-d tensor runs a scalar loop, self[j] += source[i] * alpha. A larger one adds slice by slice with the
    add kernel (self.select(dim, j).add_(source.select(dim, i), alpha): one fused multiply-add for floats
    when alpha != 1; for Half the product rounded to Half, each sum rounded), except that with alpha 1
    along its first or last dim PyTorch scatter-adds, which sums Half in float and rounds once."""
    out = _flat(x).copy()
    y, idx = _flat(y), idx.reshape(-1)
    kind = x.dtype.kind
    a = x.dtype.type(alpha) if kind != "b" else bool(alpha)
    if out.ndim == 1:
        scaled = y if alpha == 1 else y * a
        np.add.at(out, idx, scaled) if kind != "b" else np.logical_or.at(out, idx, scaled)
        return out.reshape(x.shape)
    wide = None
    if x.dtype.char in "eE" and alpha == 1 and d in (0, x.ndim - 1):
        wide = out.astype(np.float32)
    for i, j in enumerate(idx.tolist()):
        target = (slice(None),) * d + (j,)
        part = y[(slice(None),) * d + (i,)]
        if wide is not None:
            wide[target] += part
        elif kind == "b":
            out[target] = out[target] | (part & a)
        elif alpha == 1:
            out[target] = out[target] + part
        elif x.dtype.char in "eE":
            out[target] = out[target] + part * a
        elif kind in "fV":
            out[target] = fma(part, a, out[target])
        else:
            out[target] = out[target] + part * a
    return (out if wide is None else wide.astype(x.dtype)).reshape(x.shape)


def _index_add(a: Tensor, dim, index: Tensor, source: Tensor, alpha=1) -> Tensor:
    x, idx, y = a._a, index._a, source._a
    alpha = number_arg(alpha, "index_add", "alpha")
    d = _checked_index_add(x, dim, idx, y, alpha=alpha)
    out = _added(x, d, idx, y, alpha)
    return apply(INDEX_ADD, out, (a, source), (alpha, dim, index, y.ndim))


def index_add(*args, **kwargs) -> Tensor:
    """torch.index_add: a copy of input with alpha * source's slices added at index along dim."""
    _, values = _bound("torch.index_add", args, kwargs)
    return _index_add(values["input"], values["dim"], values["index"], values["source"], _alpha(values))


def _alpha(values: dict):
    alpha = values.get("alpha")
    return 1 if alpha is None else alpha


def index_add_method(self: Tensor, *args, **kwargs) -> Tensor:
    _, values = _bound("Tensor.index_add", args, kwargs)
    return _index_add(self, values["dim"], values["index"], values["source"], _alpha(values))


def index_add_inplace(self: Tensor, *args, **kwargs) -> Tensor:
    _, values = _bound("Tensor.index_add_", args, kwargs)
    return self._inplace_with(
        lambda a: _index_add(a, values["dim"], values["index"], values["source"], _alpha(values)), values["source"])


# ------------------------------------------------------------------ select_scatter, slice_scatter, diagonal_scatter
# A copy of self with src written into one view of it (a selected slice, a strided slice, a diagonal). The
# gradient splits: self's is the incoming one with that view zeroed (the same op with zeros as src, recorded
# under create_graph), src's the view of it (SelectBackward0, SliceBackward0, DiagonalBackward0 when recorded).

def _region(kind: str, x: np.ndarray, where: tuple) -> np.ndarray:
    """The writable view of x that `kind` writes into."""
    if kind == "diagonal":
        from gradcli.engine.ops import linalg
        offset, d1, d2 = where
        return linalg.diagonal_view(x, offset, d1, d2)
    return x[where]


def _written_view(kind: str, x: np.ndarray, src: np.ndarray, where: tuple) -> np.ndarray:
    out = x.copy()
    _region(kind, out, where)[...] = src
    return out


def _zeroed_view(F, g, kind: str, saved: tuple):
    """self's gradient: g with the written view zeroed (the op itself with zeros as src, when recorded)."""
    where = _where(kind, g._a.shape if F.tensors else g.shape, saved)
    if F.tensors:
        zeros = Tensor(np.zeros(_region(kind, g._a, where).shape, g._a.dtype))
        return _scatter_into(kind, g, zeros, where, saved)
    return _written_view(kind, g, 0, where)


def _view_gradient(F, g, kind: str, saved: tuple):
    """src's gradient: the view of g it was written into."""
    if F.tensors:
        return _view_of_gradient(kind, g, saved)
    return np.ascontiguousarray(_region(kind, g, _where(kind, g.shape, saved)))


def _view_scatter_jvp(kind: str):
    def jvp(F, ts, xs, result, *saved):
        self_t = ts[0] if ts[0] is not None else Tensor(np.zeros(result._a.shape, result._a.dtype))
        where = _where(kind, result._a.shape, saved)
        src_t = ts[1] if ts[1] is not None else Tensor(np.zeros(_region(kind, result._a, where).shape,
                                                               result._a.dtype))
        return _scatter_into(kind, self_t, src_t, where, saved)
    return jvp


def _where(kind: str, shape: tuple, saved: tuple) -> tuple:
    if kind == "select":
        dim, index = saved
        d = wrap_dim(dim, len(shape))
        return (slice(None),) * d + (index,)
    if kind == "slice":
        dim, start, end, step = saved
        d = wrap_dim(dim, len(shape))
        return (slice(None),) * d + (slice(start, end, step),)
    offset, dim1, dim2 = saved
    return offset, wrap_dim(dim1, len(shape)), wrap_dim(dim2, len(shape))


def _view_of_gradient(kind: str, g: Tensor, saved: tuple) -> Tensor:
    if kind == "select":
        return ops.indexing.select(g, *saved)
    if kind == "slice":
        dim, start, end, step = saved
        d = wrap_dim(dim, g._a.ndim)
        return g[(slice(None),) * d + (slice(start, end, step),)]
    from gradcli.engine.ops import linalg
    return linalg.diagonal(g, *saved)


# fmt: off
SELECT_SCATTER   = Op("SelectScatterBackward0",   None, ("dim", "index"),
                      (lambda F, g, dim, index: _zeroed_view(F, g, "select", (dim, index)),
                       lambda F, g, dim, index: _view_gradient(F, g, "select", (dim, index))),
                      inputs=("self", "src"), fits="dtype", quiet=True, jvp=_view_scatter_jvp("select"))
SLICE_SCATTER    = Op("SliceScatterBackward0",    None, ("dim", "start", "end", "step"),
                      (lambda F, g, dim, start, end, step: _zeroed_view(F, g, "slice", (dim, start, end, step)),
                       lambda F, g, dim, start, end, step: _view_gradient(F, g, "slice", (dim, start, end, step))),
                      inputs=("self", "src"), fits="dtype", quiet=True, jvp=_view_scatter_jvp("slice"))
DIAGONAL_SCATTER = Op("DiagonalScatterBackward0", None, ("offset", "dim1", "dim2"),
                      (lambda F, g, offset, dim1, dim2: _zeroed_view(F, g, "diagonal", (offset, dim1, dim2)),
                       lambda F, g, offset, dim1, dim2: _view_gradient(F, g, "diagonal", (offset, dim1, dim2))),
                      inputs=("self", "src"), fits="dtype", quiet=True, jvp=_view_scatter_jvp("diagonal"))
# fmt: on
_ROWS = {"select": SELECT_SCATTER, "slice": SLICE_SCATTER, "diagonal": DIAGONAL_SCATTER}


def _scatter_into(kind: str, a: Tensor, src: Tensor, where: tuple, saved: tuple) -> Tensor:
    x = a._a
    region = _region(kind, x, where)
    s = src._a
    if s.shape != region.shape:
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{_size_list(s.shape)}, slice size = {_size_list(region.shape)}")
    out = _written_view(kind, x, s.astype(x.dtype, copy=False), where)
    return apply(_ROWS[kind], out, (a, src), saved)


def select_scatter(input, src, dim, index) -> Tensor:
    """torch.select_scatter: a copy of input with src as its slice at `index` along `dim`."""
    x = input._a
    if x.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, x.ndim)
    i = index.__index__()
    if not -x.shape[d] <= i < x.shape[d]:
        raise IndexError(f"select(): index {i} out of range for tensor of size {_size_list(x.shape)} at dimension {d}")
    return _scatter_into("select", input, src, _where("select", x.shape, (dim, i)), (dim, i))


def slice_scatter(input, src, dim=0, start=None, end=None, step=1) -> Tensor:
    """torch.slice_scatter: a copy of input with src as its slice start:end:step along `dim`."""
    x = input._a
    if step is not None and step <= 0:
        raise RuntimeError("slice step must be positive")
    saved = (dim, start, end, 1 if step is None else step)
    return _scatter_into("slice", input, src, _where("slice", x.shape, saved), saved)


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1) -> Tensor:
    """torch.diagonal_scatter: a copy of input with src as its diagonal `offset` of dims dim1, dim2."""
    x = input._a
    saved = (offset, dim1, dim2)
    return _scatter_into("diagonal", input, src, _where("diagonal", x.shape, saved), saved)


def select_scatter_method(self: Tensor, src, dim, index) -> Tensor:
    return select_scatter(self, src, dim, index)


def slice_scatter_method(self: Tensor, src, dim=0, start=None, end=None, step=1) -> Tensor:
    return slice_scatter(self, src, dim, start, end, step)


def diagonal_scatter_method(self: Tensor, src, offset=0, dim1=0, dim2=1) -> Tensor:
    return diagonal_scatter(self, src, offset, dim1, dim2)
