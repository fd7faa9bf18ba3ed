"""Ops that find, count and place elements: nonzero, argwhere, count_nonzero, unique, unique_consecutive, bincount,
searchsorted and bucketize. Their results are indices and counts; the values unique returns keep a node
(Unique2Backward0, ...) whose backward PyTorch has not implemented, as has bincount's with weights."""

from __future__ import annotations

import numpy as np

from gradcli.engine import budget, signatures
from gradcli.engine.forward import no_tangent
from gradcli.engine.ops import elementwise
from gradcli.engine.recording import Op, apply, axes, index_arg, result_dtype, type_word, wrap_dim
from gradcli.engine.signatures import type_name
from gradcli.engine.state import STATE
from gradcli.engine.tensor import Tensor


_no_tangent = no_tangent


_unimplemented = elementwise.unimplemented

# fmt: off
#                          node                          forward saves formulas
UNIQUE             = Op("Unique2Backward0",            None,  (),   (_unimplemented("_unique2"),),
                        quiet=True, jvp=_no_tangent("_unique2"))
UNIQUE_DIM         = Op("UniqueDimBackward0",          None,  (),   (_unimplemented("unique_dim"),),
                        quiet=True, jvp=_no_tangent("unique_dim"))
UNIQUE_CONSECUTIVE = Op("UniqueConsecutiveBackward0",  None,  (),   (_unimplemented("unique_consecutive"),),
                        quiet=True, jvp=_no_tangent("unique_consecutive"))
# fmt: on


def _not_batched(aten: str, message: str | None = None) -> None:
    """Inside torch.func.vmap (gradcli runs it element by element): PyTorch's refusal of an op whose result's
    shape depends on the values."""
    if STATE.vmap is not None and STATE.vmap.values:       # (jacfwd batches only tangents: values are plain)
        raise RuntimeError(message or f"vmap: We do not support batching operators that can output dynamic shape. "
                           f"Attempted to vmap over aten::{aten}. Please file an issue at "
                           "https://github.com/pytorch/pytorch/issues if you need this feature.")


def _input(name: str, value) -> np.ndarray:
    if value.__class__ is not Tensor:
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type_name(value)}")
    return value._a


def _positions(x: np.ndarray) -> np.ndarray:
    """The (count, ndim) int64 positions of x's nonzero elements in row-major order (NaN is nonzero, -0.0 is
    zero); a 0-d input reads as one position of no coordinates."""
    count = int(np.count_nonzero(x))
    budget.check_tensor((count, x.ndim), 8)
    return np.asfortranarray(np.argwhere(x), dtype=np.int64)      # PyTorch fills it column by column


def nonzero(*args, **kwargs):
    """torch.nonzero: the positions as a (count, ndim) tensor, or with `as_tuple=True` one 1-d tensor of
    coordinates per dim (a 0-d input as one of shape (1,)), the columns of that tensor as PyTorch takes them."""
    _, values = signatures.bound("torch.nonzero", args, kwargs)
    return _nonzero(_input("nonzero", values["input"]), values)


def nonzero_method(self: Tensor, *args, **kwargs):
    _, values = signatures.bound("Tensor.nonzero", args, kwargs)
    return _nonzero(self._a, values)


def _nonzero(x: np.ndarray, values: dict):
    if values["as_tuple"]:
        _not_batched("", "Batching rule not implemented for aten::nonzero_numpy. We could not generate a fallback.")
    _not_batched("nonzero")
    if x.__class__ is not np.ndarray:
        from gradcli.engine import meta
        raise NotImplementedError(meta.NO_NONZERO)
    positions = _positions(x)
    if not values["as_tuple"]:
        return Tensor(positions)
    if x.ndim == 0:
        return (Tensor(np.zeros(positions.shape[0], np.int64)),)
    return Tensor(positions).unbind(1)


def nonzero_static(*args, **kwargs) -> Tensor:
    """torch.nonzero_static(input, *, size, fill_value=-1): nonzero's first `size` positions, rows of fill_value
    after them when there are fewer."""
    values = signatures.parsed("torch.nonzero_static", args, kwargs, {"fill_value": -1})
    return _nonzero_static(_input("nonzero_static", values["input"]), values["size"], values["fill_value"])


def nonzero_static_method(self: Tensor, *args, **kwargs) -> Tensor:
    values = signatures.parsed("Tensor.nonzero_static", args, kwargs, {"fill_value": -1})
    return _nonzero_static(self._a, values["size"], values["fill_value"])


def _nonzero_static(x: np.ndarray, size: int, fill_value: int) -> Tensor:
    if size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    _not_batched("nonzero_static")
    if x.__class__ is not np.ndarray:
        from gradcli.engine import meta
        raise NotImplementedError(meta.NO_NONZERO)
    positions = _positions(x)
    out = np.full((size, x.ndim), fill_value, np.int64)
    kept = positions[:size]
    out[:kept.shape[0]] = kept
    return Tensor(out)


def argwhere(input) -> Tensor:
    """torch.argwhere / Tensor.argwhere: nonzero's (count, ndim) positions."""
    return Tensor(_positions(_input("argwhere", input)))


def count_nonzero(*args, **kwargs) -> Tensor:
    """torch.count_nonzero: the number of nonzero elements over `dim` (an int, a tuple of ints, or all of
    them when None or empty), as int64."""
    _, values = signatures.bound("torch.count_nonzero", args, kwargs)
    return _count(_input("count_nonzero", values["input"]), values["dim"])


def count_nonzero_method(self: Tensor, *args, **kwargs) -> Tensor:
    if len(args) > 1 and not kwargs:        # x.count_nonzero(0, 1): the dims as separate ints
        return _count(self._a, args)
    _, values = signatures.bound("Tensor.count_nonzero", args, kwargs)
    return _count(self._a, values["dim"])


def _count(x: np.ndarray, dim) -> Tensor:
    dims = () if dim is None else axes(dim, x.ndim)
    if not x.ndim or not dims:
        return Tensor(np.asanyarray(np.count_nonzero(x), dtype=np.int64))
    return Tensor(np.count_nonzero(x, axis=dims).astype(np.int64, copy=False))


# ------------------------------------------------------------------------------------- unique

def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """torch.unique / Tensor.unique: the distinct values in ascending order (NaNs each their own, last; a run of
    equal values keeps its first after a stable sort), or the distinct slices along dim; with the index of each
    element's value and the count of each value when asked (a tuple then)."""
    x = _input("_unique2", input)
    _not_batched("_unique2" if dim is None else "unique_dim")
    _flags("_unique2" if dim is None else "unique_dim", sorted=sorted, return_inverse=return_inverse,
           return_counts=return_counts)
    if dim is None:
        flat = x.reshape(-1)
        order = np.argsort(flat, kind="stable")
        values, inverse, counts = _runs(flat[order], order)
        inverse = inverse.reshape(x.shape)
        row = UNIQUE
    else:
        values, inverse, counts = _unique_dim(x, dim, sort=True)
        row = UNIQUE_DIM
    return _unique_result(input, row, values, inverse, counts, return_inverse, return_counts)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """torch.unique_consecutive / Tensor.unique_consecutive: each run of equal values (or slices) kept once."""
    x = _input("unique_consecutive", input)
    _not_batched("unique_consecutive")
    _flags("unique_consecutive", return_inverse=return_inverse, return_counts=return_counts)
    if dim is None:
        flat = x.reshape(-1)
        values, inverse, counts = _runs(flat, np.arange(flat.size))
        inverse = inverse.reshape(x.shape)
    else:
        values, inverse, counts = _unique_dim(x, dim, sort=False)
    return _unique_result(input, UNIQUE_CONSECUTIVE, values, inverse, counts, return_inverse, return_counts)


def _flags(name: str, **flags) -> None:
    for arg, value in flags.items():
        if value.__class__ is not bool:
            raise TypeError(f"{name}(): argument '{arg}' must be bool, not {type_name(value)}")


def _runs(keys: np.ndarray, order: np.ndarray) -> tuple:
    """The first of each run of equal keys (NaN equal to nothing), each original position's run (`order`: where
    each key came from) and the runs' lengths."""
    n = keys.shape[0]
    new = np.ones(n, dtype=bool)
    if keys.ndim == 1:
        new[1:] = keys[1:] != keys[:-1]
    elif n:
        new[1:] = (keys[1:] != keys[:-1]).reshape(n - 1, -1).any(axis=1)
    group = np.cumsum(new) - 1
    inverse = np.empty(n, np.int64)
    inverse[order] = group
    starts = np.flatnonzero(new)
    return keys[new], inverse, np.diff(np.append(starts, n)).astype(np.int64)


def _unique_dim(x: np.ndarray, dim, sort: bool) -> tuple:
    """unique / unique_consecutive along dim: the slices along dim compared whole, sorted lexicographically."""
    if x.ndim == 0:
        raise IndexError(f"Dimension specified as {index_arg(dim)} but tensor has no dimensions")
    d = wrap_dim(index_arg(dim), x.ndim)
    if x.shape[d] == 0:
        return x.copy(), np.zeros(0, np.int64), np.zeros(0, np.int64)
    if x.size == 0:
        raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique cannot be applied")
    slices = np.moveaxis(x, d, 0)
    rows = slices.reshape(slices.shape[0], -1)
    order = np.lexsort(rows.T[::-1]) if sort else np.arange(rows.shape[0])
    firsts, inverse, counts = _runs(rows[order], order)
    values = np.moveaxis(firsts.reshape((firsts.shape[0],) + slices.shape[1:]), 0, d)
    return np.ascontiguousarray(values), inverse, counts


def _unique_result(input: Tensor, row: Op, values, inverse, counts, return_inverse, return_counts):
    out = apply(row, values.reshape(-1) if values.ndim == 0 else values, (input,))
    if not return_inverse and not return_counts:
        return out
    extra = ((Tensor(inverse),) if return_inverse else ()) + ((Tensor(counts),) if return_counts else ())
    return (out,) + extra


# ------------------------------------------------------------------------------------ bincount

def bincount(*args, **kwargs) -> Tensor:
    """torch.bincount: how often each value 0, 1, ..., max (at least minlength bins) occurs in a 1-d integer
    tensor, or the sum of the weights at its positions (float32 weights sum in float32, others in double)."""
    _, values = signatures.bound("torch.bincount", args, kwargs)
    return _bincount(values["input"], values["weights"], values["minlength"])


def bincount_method(self: Tensor, *args, **kwargs) -> Tensor:
    _, values = signatures.bound("Tensor.bincount", args, kwargs)
    return _bincount(self, values["weights"], values["minlength"])


def _bincount(a: Tensor, weights, minlength) -> Tensor:
    x = a._a
    minlength = 0 if minlength is None else index_arg(minlength)
    if x.dtype.kind not in "iu":
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{type_word(x)}'")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if x.ndim == 1 and x.size == 0:
        budget.check_tensor((minlength,), 8)
        return Tensor(np.zeros(minlength, np.int64))
    if x.ndim != 1 or x.min() < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and (weights._a.ndim != 1 or weights._a.shape[0] != x.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    bins = max(int(x.max()) + 1, minlength)
    if weights is None:
        budget.check_tensor((bins,), 8)
        return Tensor(np.bincount(x, minlength=bins).astype(np.int64))
    w = weights._a
    dt = np.float32 if w.dtype == np.float32 else np.float64
    budget.check_tensor((bins,), np.dtype(dt).itemsize)
    out = np.zeros(bins, dt)
    np.add.at(out, x, w.astype(dt))         # in input order, as the kernel's loop adds
    return elementwise.not_implemented(out, (None, weights), "bincount")   # no derivative, a node


# ------------------------------------------------------------------------------- searchsorted

def searchsorted(*args, **kwargs) -> Tensor:
    """torch.searchsorted: for each value, the index where it would go in the sorted (innermost dim of the)
    boundaries, before equal ones (after them with right=True or side='right'), found by PyTorch's binary search
    (a NaN compares as past every boundary)."""
    form, values = signatures.bound("torch.searchsorted", args, kwargs)
    v = values["input"] if form == 0 else values["self"]
    return _searchsorted(values["sorted_sequence"], v, values["out_int32"], values["right"], values["side"],
                         values["sorter"])


def bucketize(*args, **kwargs) -> Tensor:
    """torch.bucketize: searchsorted with the roles swapped, the boundaries 1-d."""
    form, values = signatures.bound("torch.bucketize", args, kwargs)
    b = values["boundaries"]
    if b._a.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({b._a.ndim})")
    v = values["input"] if form == 0 else values["self"]
    return _searchsorted(b, v, values["out_int32"], values["right"], None, None)


def _searchsorted(boundaries: Tensor, v, out_int32, right, side, sorter) -> Tensor:
    b = boundaries._a
    right, out_int32 = bool(right), bool(out_int32)
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got side of left "
                               "while right was True")
        right = side == "right"
    scalar = v.__class__ is not Tensor
    x = np.asanyarray(v) if scalar else v._a
    if b.ndim == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 "
                           "dimension")
    if sorter is not None:
        s = sorter._a
        if s.dtype != np.int64:
            raise RuntimeError(f"torch.searchsorted(): sorter must be a tensor of long dtype but got dtype "
                               f"{type_word(s)}")
        if s.shape != b.shape:
            raise RuntimeError(f"torch.searchsorted(): boundary and sorter must have the same size, but got boundary "
                               f"tensor {_shape_text(b)}and got sorter tensor {_shape_text(s)}")
        if s.size and (s.min() < 0 or s.max() >= b.shape[-1]):
            raise RuntimeError("torch.searchsorted(): sorter index out of range")
        b = np.take_along_axis(b, s, axis=-1)
    if b.ndim != 1 and (scalar or b.shape[:-1] != x.shape[:-1]):
        raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions "
                           f"of boundaries tensor and input value tensor must match, but we got boundaries tensor "
                           f"{_shape_text(b)} and input value tensor {_shape_text(x)}")
    if b.dtype == np.bool_ or x.dtype == np.bool_:
        raise NotImplementedError("\"searchsorted_out_cpu\" not implemented for 'Bool'")
    common = result_dtype(boundaries, v if scalar else Tensor(x)).np
    keys, values = b.astype(common), x.astype(common).reshape(-1)
    if b.shape[-1] == 0:        # nothing to search: every value goes first
        return Tensor(np.zeros(x.shape, np.int32 if out_int32 else np.int64))
    rows = keys.reshape(-1, b.shape[-1])
    if b.ndim == 1:         # every value searches the one row
        which = np.zeros(values.shape[0], np.int64)
    else:                   # each row of values its own row of boundaries
        per_row = x.shape[-1] if x.ndim else 1
        which = np.arange(values.shape[0], dtype=np.int64) // max(per_row, 1)
    out = _bound_indices(rows, which, values, right)
    return Tensor(out.reshape(x.shape).astype(np.int32 if out_int32 else np.int64))


def _bound_indices(rows: np.ndarray, which: np.ndarray, values: np.ndarray, right: bool) -> np.ndarray:
    """PyTorch's binary search of each value in its row of boundaries (`which`): the first index whose boundary is
    not below the value (right: not at or below it), NaN failing every comparison as its loop's
    `!(mid >= val)` reads it."""
    n = rows.shape[1]
    start = np.zeros(values.shape[0], np.int64)
    end = np.full(values.shape[0], n, np.int64)
    rng = which
    with np.errstate(invalid="ignore"):
        while True:
            active = start < end
            if not active.any():
                return start
            mid = start + ((end - start) >> 1)
            mid_val = rows[rng, np.minimum(mid, n - 1)]
            past = ~(mid_val > values) if right else ~(mid_val >= values)
            start = np.where(active & past, mid + 1, start)
            end = np.where(active & ~past, mid, end)


def _shape_text(x: np.ndarray) -> str:
    return "[" + ", ".join(str(n) for n in x.shape) + "]"
