"""sort, argsort, msort and topk, with the values, indices and order of ties PyTorch's CPU kernels give.

PyTorch sorts each row along `dim` with libstdc++'s std::sort (introsort: ties end where its swaps leave
them), std::stable_sort when `stable=True`, and a radix sort (stable) for a 1-d integer tensor of 32768
elements or more sorted ascending. NaN sorts above every number (first when descending). topk selects with
std::partial_sort when k * 64 <= n, else with std::nth_element and, when `sorted`, std::sort of the first
k - 1 (PyTorch's own bound). `gradcli.engine.cxxsort` repeats those algorithms step for step; a row whose
keys are all distinct (and not NaN) has one answer whatever the algorithm, so numpy sorts it.

The values' node (SortBackward0, SortBackward1 for the `stable=` overload, TopkBackward0) sends each
gradient back to the index it came from, as max(dim)'s does.
"""

from __future__ import annotations

import math

import numpy as np

from gradcli.engine import budget, cxxsort, signatures
from gradcli.engine.ops.reduce import ReturnTypes, _gather_kept_jvp, _index_key, _plain, _select_backward
from gradcli.engine.recording import Op, apply, index_arg, wrap_dim
from gradcli.engine.signatures import type_name
from gradcli.engine.tensor import Tensor

# fmt: off
#                  node               forward  saves                               formulas
SORT        = Op("SortBackward0",  None,    ("shape", "key", "dim", "keepdim"), (_select_backward,),
                 saves_tensors=True, quiet=True, jvp=_gather_kept_jvp)
SORT_STABLE = Op("SortBackward1",  None,    ("shape", "key", "dim", "keepdim"), (_select_backward,),
                 saves_tensors=True, quiet=True, jvp=_gather_kept_jvp)
TOPK        = Op("TopkBackward0",  None,    ("shape", "key", "dim", "keepdim"), (_select_backward,),
                 saves_tensors=True, quiet=True, jvp=_gather_kept_jvp)
# fmt: on

_RADIX_MIN = 32768          # at::internal::GRAIN_SIZE: from here a 1-d integer sort is fbgemm's radix sort
_UNSET = object()           # `stable` not given: the sort(dim, descending) overload


def _ascending(x, y) -> bool:
    """KeyValueCompAsc: NaN above every number."""
    return (not math.isnan(x[0]) and math.isnan(y[0])) or x[0] < y[0]


def _descending(x, y) -> bool:
    """KeyValueCompDesc: NaN before every number."""
    return (math.isnan(x[0]) and not math.isnan(y[0])) or x[0] > y[0]


def _int_ascending(x, y) -> bool:
    return x[0] < y[0]


def _int_descending(x, y) -> bool:
    return x[0] > y[0]


def _comparator(dtype: np.dtype, descending: bool):
    if dtype.kind in "fV":
        return _descending if descending else _ascending
    return _int_descending if descending else _int_ascending


def _stable_order(rows: np.ndarray, descending: bool) -> np.ndarray:
    """The stable order of each row (the last axis): what std::stable_sort with PyTorch's comparators gives,
    and so the one order of rows without ties."""
    if not descending:
        return np.argsort(rows, axis=-1, kind="stable")         # numpy too puts NaN last
    if rows.dtype.kind in "fV":
        # NaN first, then the numbers from the largest; np.lexsort is stable and its last key leads
        return np.lexsort((-rows, ~np.isnan(rows)), axis=-1)
    return np.argsort(~rows, axis=-1, kind="stable")           # ~ reverses every integer type's order (and bool's)


def _distinct(rows: np.ndarray) -> np.ndarray:
    """Per row: whether no two keys compare equal (NaNs compare equal to each other for a sort's purposes;
    -0.0 equals 0.0)."""
    if rows.shape[-1] < 2:
        return np.ones(rows.shape[:-1], dtype=bool)
    s = np.sort(rows, axis=-1)
    distinct = ~(s[..., 1:] == s[..., :-1]).any(axis=-1)
    if rows.dtype.kind in "fV":
        distinct &= ~np.isnan(rows).any(axis=-1)
    return distinct


def _sorted_rows(rows: np.ndarray, descending: bool, stable: bool) -> np.ndarray:
    """The permutation PyTorch's sort gives each row of a 2-d array (rows, n)."""
    order = _stable_order(rows, descending)
    if stable:
        return order
    before = _comparator(rows.dtype, descending)
    n = rows.shape[1]
    for r in np.flatnonzero(~_distinct(rows)).tolist():      # rows with ties: std::sort's own order
        queue = list(zip(rows[r].tolist(), range(n)))
        cxxsort.sort(queue, n, before)
        order[r] = [i for _, i in queue]
    return order


def _rows(x: np.ndarray, d: int) -> tuple:
    """x with `dim` d last, as a 2-d array of rows, and the shape to put it back from."""
    moved = np.moveaxis(x, d, -1)
    return moved.reshape(math.prod(moved.shape[:-1]), x.shape[d]), moved.shape


def _unrows(a: np.ndarray, moved_shape: tuple, d: int) -> np.ndarray:
    return np.ascontiguousarray(np.moveaxis(a.reshape(moved_shape), -1, d))


def _bound(key: str, args: tuple, kwargs: dict) -> tuple:
    """The arguments of a call bound as PyTorch's parser binds them (its TypeError otherwise): the
    signature's index and the values, `stable=None` taken as the stable overload's `stable=False`."""
    stable_none = kwargs.get("stable", False) is None
    if stable_none:
        kwargs = dict(kwargs, stable=False)
    form, values = signatures.bound(key, args, kwargs)
    return form, values


def _given(values: dict, name: str, default):
    value = values.get(name)
    return default if value is None else value


def _sort(a: Tensor, dim, descending, stable) -> tuple:
    """The values and indices arrays of a sort, and the row of its node."""
    x = a._a
    if x.dtype.kind == "c":
        raise RuntimeError(" Sort does not support complex dtypes on CPU")
    row = SORT if stable is _UNSET else SORT_STABLE
    stable = bool(stable) if stable is not _UNSET and stable is not None else False
    if x.ndim == 0:
        wrap_dim(dim, 0)
        return x.copy(), np.zeros((), np.int64), row, 0
    d = wrap_dim(dim, x.ndim)
    budget.check_tensor(x.shape, x.itemsize + 8)
    n = x.shape[d]
    if x.strides[d] == 0 or n < 2:         # PyTorch's kernel leaves an expanded dim in its order
        order = np.broadcast_to(np.arange(n, dtype=np.int64).reshape((n,) + (1,) * (x.ndim - 1 - d)), x.shape)
        return x.copy(), np.ascontiguousarray(order), row, d
    rows, moved = _rows(x, d)
    radix = x.ndim == 1 and x.dtype.kind in "iu" and not descending and x.size >= _RADIX_MIN
    order = _sorted_rows(rows, descending, stable or radix).astype(np.int64, copy=False)
    values = np.take_along_axis(rows, order, axis=1)
    return _unrows(values, moved, d), _unrows(order, moved, d), row, d


def _with_node(a: Tensor, row: Op, values: np.ndarray, indices: np.ndarray, d: int, given: int):
    """The values' tensor, with the node that sends each gradient back to its index (keeping `dim` as the
    script gave it, as PyTorch's _saved_dim shows it)."""
    if _plain(a):
        return Tensor(values)
    x = a._a
    key = _index_key(x.shape, d, indices) if x.ndim else ()
    return apply(row, values, (a,), (x.shape, key, given, True))


def sort(*args, **kwargs) -> ReturnTypes:
    """torch.sort: (values, indices), the values' node SortBackward0, or SortBackward1 for the overload with
    `stable=` (even `stable=None`)."""
    return _sorted("torch.sort", args, kwargs, True)


def sort_method(self: Tensor, *args, **kwargs) -> ReturnTypes:
    return _sorted("Tensor.sort", (self,) + args, kwargs, False)


def argsort(*args, **kwargs) -> Tensor:
    """torch.argsort: sort's indices (PyTorch's argsort is sort's second output, without a node)."""
    return _sorted("torch.argsort", args, kwargs, True)


def argsort_method(self: Tensor, *args, **kwargs) -> Tensor:
    return _sorted("Tensor.argsort", (self,) + args, kwargs, False)


def _sorted(key: str, args: tuple, kwargs: dict, function: bool):
    """sort's (values, indices), or argsort's indices, for a call bound to `key`'s signatures."""
    a = args[0]
    form, values = _bound(key, args if function else args[1:], kwargs)
    dim, descending = _given(values, "dim", -1), _given(values, "descending", False)
    if key.endswith("argsort"):
        return Tensor(_sort(a, dim, descending, bool(values["stable"]) if form == 0 else False)[1])
    d_values, indices, row, d = _sort(a, dim, descending, values["stable"] if form == 0 else _UNSET)
    return ReturnTypes("sort", _with_node(a, row, d_values, indices, d, index_arg(dim)), Tensor(indices))


def msort(input) -> Tensor:
    """torch.msort / Tensor.msort: sort(dim=0)'s values."""
    if input.__class__ is not Tensor:
        raise TypeError(f"msort(): argument 'input' (position 1) must be Tensor, not {type_name(input)}")
    values, indices, row, d = _sort(input, 0, False, _UNSET)
    return _with_node(input, row, values, indices, d, 0)


def topk(*args, **kwargs) -> ReturnTypes:
    """torch.topk: the k largest (or smallest) along dim and their indices, in the order PyTorch's
    selection leaves them."""
    return _topk_call("torch.topk", args, kwargs, True)


def topk_method(self: Tensor, *args, **kwargs) -> ReturnTypes:
    return _topk_call("Tensor.topk", (self,) + args, kwargs, False)


def _topk_call(key: str, args: tuple, kwargs: dict, function: bool) -> ReturnTypes:
    a = args[0]
    _, values = _bound(key, args if function else args[1:], kwargs)
    k = index_arg(values["k"])
    largest, sorted_ = _given(values, "largest", True), _given(values, "sorted", True)
    x = a._a
    given = index_arg(_given(values, "dim", -1))
    d = wrap_dim(given, x.ndim)
    n = x.shape[d] if x.ndim else 1
    if k < 0 or k > n:
        raise RuntimeError("selected index k out of range")
    if x.dtype == np.bool_:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    if x.dtype.kind == "c":
        raise RuntimeError(" topk does not support complex dtypes on CPU")
    if x.ndim == 0:            # a 0-d input gives itself, whatever k (0 or 1)
        out, indices = x.copy(), np.zeros((), np.int64)
    else:
        budget.check_tensor(x.shape[:d] + (k,) + x.shape[d + 1:], x.itemsize + 8)
        rows, moved = _rows(x, d)
        order = np.empty((rows.shape[0], k), np.int64)
        for r in range(rows.shape[0]):
            order[r] = top_indices(rows[r], k, largest, sorted_)
        out = np.take_along_axis(rows, order, axis=1)
        moved = moved[:-1] + (k,)
        out, indices = _unrows(out, moved, d), _unrows(order, moved, d)
    return ReturnTypes("topk", _with_node(a, TOPK, out, indices, d, given), Tensor(indices))


def top_indices(keys: np.ndarray, k: int, largest: bool = True, sorted: bool = True) -> np.ndarray:
    """The indices topk(keys, k) returns for one row on the CPU, ties (and an unsorted selection) in the
    order libstdc++'s algorithms leave them."""
    n = keys.size
    if k == 0:
        return np.empty(0, np.int64)
    partial = k * 64 <= n
    if (partial or sorted) and _distinct(keys[None, :])[0]:
        return _stable_order(keys, largest)[:k]         # one answer: no two keys tie
    queue = list(zip(keys.tolist(), range(n)))
    before = _comparator(keys.dtype, largest)
    if partial:
        cxxsort.partial_sort(queue, k, before)
    else:
        cxxsort.nth_element(queue, k - 1, before)
        if sorted:
            cxxsort.sort(queue, k - 1, before)
    return np.array([i for _, i in queue[:k]], dtype=np.int64)
