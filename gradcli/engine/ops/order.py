"""Order statistics: median, nanmedian, kthvalue, mode, aminmax, quantile and nanquantile; the running extremes
cummax and cummin, and logcumsumexp. Values, indices and the index chosen among ties are those of PyTorch's CPU
kernels:

* median(dim) and nanmedian(dim) partition with a comparator that breaks ties by index, so the index is the
  middle one of the stable order (a NaN ends median's search at the first NaN; nanmedian of a row of NaNs is
  what std::nth_element leaves first when everything compares equal);
* kthvalue partitions with PyTorch's own quickselect (Sedgewick's, from TH), so a tie ends wherever its swaps
  leave it; rows whose keys are distinct have one answer and are taken from a stable sort;
* mode sorts (value, index) pairs by value with std::sort and keeps the last pair of the first longest run;
* cummax and cummin move to a later element that equals the running extreme (>= and <=), and to every NaN.

The values' nodes of median(dim), nanmedian(dim), kthvalue and mode send each gradient back to the index
returned (value_selecting_reduction_backward, as max(dim)'s); median() and nanmedian() share it evenly
between the elements equal to the result (as max()'s). quantile and nanquantile are composed from other ops
in PyTorch's order (sort, view, gather, lerp_, squeeze_), so their grad_fn chains are PyTorch's.
"""

from __future__ import annotations

import numpy as np

from gradcli.engine import budget, cxxsort, dtypes, elementary as cr, ops, signatures
from gradcli.engine.ops.reduce import (ReturnTypes, _check_keepdim, _evenly_distribute, _evenly_read_jvp,
                                       _gather_kept_jvp, _index_key, _int_dim, _plain, _select_backward,
                                       _both, _two_outputs)
from gradcli.engine.layout import contiguous
from gradcli.engine.ops.sorting import _distinct, _rows, _unrows
from gradcli.engine.recording import autocast_policy, Op, Out, apply, index_arg, type_word, wrap_dim
from gradcli.engine.tensor import Tensor


def _aminmax_backward(F, g, self, low, high, dim, keepdim):
    """aminmax_backward: each output's gradient shared evenly between the elements equal to it (its count over
    the reduced dims), the two added."""
    g_min, g_max = _both(g)
    x = self._a if F.tensors else self
    dims = tuple(range(x.ndim)) if dim is None else ((wrap_dim(dim, x.ndim),) if x.ndim else ())
    out = None
    for grad, extreme in ((g_min, low), (g_max, high)):
        if grad is None:
            continue
        extreme = extreme._a if extreme.__class__ is Tensor else extreme
        if not keepdim and dims and x.ndim:
            grad = F.unsqueeze_dims(grad, dims)
            extreme = np.expand_dims(extreme, dims)
        mask = x == extreme
        counts = mask.sum(axis=dims, keepdims=True) if x.ndim else mask.astype(np.int64)
        part = (grad / F.const(counts.astype(x.dtype)) if F.tensors else grad / counts.astype(x.dtype)) * \
            (F.const(mask) if F.tensors else mask)
        out = part if out is None else out + part
    return out


def _aminmax_jvp(F, ts, xs, result, output, low, high, dim, keepdim, _):
    """aminmax_jvp: where(self == extreme, self_t, 0).sum(dim, keepdim) / the count of those elements."""
    x = xs[0]._a
    extreme = (low, high)[output]
    extreme = extreme.a if extreme.__class__ is Out else extreme
    dims = tuple(range(x.ndim)) if dim is None else ((wrap_dim(dim, x.ndim),) if x.ndim else ())
    kept = extreme if keepdim or not x.ndim else np.expand_dims(extreme, dims)
    hit = x == kept
    if not x.ndim:
        return ops.where(Tensor(hit), ts[0], 0.) / Tensor(np.asanyarray(hit, dtype=np.int64))
    count = Tensor(hit.sum(axis=dims, keepdims=keepdim))
    return ops.reduce_sum(ops.where(Tensor(hit), ts[0], 0.), dims, keepdim) / count


def _cummax_jvp(F, ts, xs, result, indices, dim):
    """self_t.gather(dim, indices)."""
    return ops.gather(ts[0], dim, indices) if xs[0]._a.ndim else ts[0]


def _logcumsumexp_jvp(F, ts, xs, result, dim):
    """logcumsumexp_jvp: the cumulative sum of exp(self - its max) * self_t, over the cumulative sum of
    exp(self - its max) plus 1e-13."""
    x, t = xs[0], ts[0]
    scaled = ops.exp(x - x.max(dim, True)[0])
    total = ops.cumsum(scaled, dim)
    tangent = ops.cumsum(scaled * t, dim)
    return tangent / (total + 1e-13)


# fmt: off
#                     node                   forward saves                                   formulas
MEDIAN       = Op("MedianBackward0",      None,   ("self", "mask", "count", "result"),    (_evenly_distribute,),
                  quiet=True, jvp=_evenly_read_jvp)
NANMEDIAN    = Op("NanmedianBackward0",   None,   ("self", "mask", "count", "result"),    (_evenly_distribute,),
                  quiet=True, jvp=_evenly_read_jvp)
MEDIAN_DIM   = Op("MedianBackward1",      None,   ("shape", "key", "dim", "keepdim"),     (_select_backward,),
                  saves_tensors=True, quiet=True, jvp=_gather_kept_jvp)
NANMEDIAN_DIM = Op("NanmedianBackward1",  None,   ("shape", "key", "dim", "keepdim"),     (_select_backward,),
                  saves_tensors=True, quiet=True, jvp=_gather_kept_jvp)
KTHVALUE     = Op("KthvalueBackward0",    None,   ("shape", "key", "dim", "keepdim"),     (_select_backward,),
                  saves_tensors=True, quiet=True, jvp=_gather_kept_jvp)
MODE         = Op("ModeBackward0",        None,   ("shape", "key", "dim", "keepdim"),     (_select_backward,),
                  saves_tensors=True, quiet=True, jvp=_gather_kept_jvp)
AMINMAX      = Op("AminmaxBackward0",     None,   ("self", "min", "max", "dim", "keepdim"), (_aminmax_backward,),
                  saves_tensors=True, quiet=True, jvp=_aminmax_jvp)
CUMMAX       = Op("CummaxBackward0",      None,   ("self", "indices", "dim"),
                  (lambda F, g, self, indices, dim: F.cummaxmin_backward(g, self, indices, dim),),
                  saves_tensors=True, quiet=True, jvp=_cummax_jvp)
CUMMIN       = Op("CumminBackward0",      None,   ("self", "indices", "dim"),
                  (lambda F, g, self, indices, dim: F.cummaxmin_backward(g, self, indices, dim),),
                  saves_tensors=True, quiet=True, jvp=_cummax_jvp)
LOGCUMSUMEXP = Op("LogcumsumexpBackward0", None,  ("self", "result", "dim"),
                  (lambda F, g, self, result, dim: F.logcumsumexp_backward(g, self, result, dim),),
                  quiet=True, jvp=_logcumsumexp_jvp)
# fmt: on


# ------------------------------------------------------------------------------------------- arguments

def _bound(key: str, args: tuple, kwargs: dict) -> tuple:
    form, values = signatures.bound(key, args, kwargs)
    return form, values


def _not_for(x: np.ndarray, kernel: str) -> None:
    """PyTorch's refusal of bool and complex input, which its kernel is not compiled for."""
    if x.dtype == np.bool_ or x.dtype.kind == "c":
        raise NotImplementedError(f'"{kernel}" not implemented for \'{type_word(x)}\'')


def _nonempty_dim(x: np.ndarray, d: int, name: str) -> None:
    if x.ndim and x.shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def _selected(name: str, row: Op, a: Tensor, idx: np.ndarray, d: int, given: int, keepdim: bool) -> ReturnTypes:
    """(values, indices) of a selection along dim d, `idx` shaped as the input with dim d of size 1."""
    x = a._a
    if x.ndim == 0:
        values, indices = x.copy(), np.zeros((), np.int64)
    else:
        values = np.take_along_axis(x, idx, axis=d) if x.size else np.empty(idx.shape, x.dtype)
        indices = idx
        if not keepdim:
            values, indices = values.squeeze(d), indices.squeeze(d)
    values, indices = contiguous(values), contiguous(indices.astype(np.int64, copy=False))
    if _plain(a):
        return ReturnTypes(name, Tensor(values), Tensor(indices))
    key = _index_key(x.shape, d, idx) if x.ndim else ()
    return ReturnTypes(name, apply(row, values, (a,), (x.shape, key, given, keepdim)), Tensor(indices))


def _per_row(x: np.ndarray, d: int, pick) -> np.ndarray:
    """The index `pick(rows)` chooses in each row along dim d (an int64 array per row), shaped as x with dim d
    of size 1."""
    if x.size == 0:
        return np.zeros(x.shape[:d] + (1,) + x.shape[d + 1:], np.int64)
    rows, moved = _rows(x, d)
    chosen = pick(rows).astype(np.int64, copy=False)
    return _unrows(chosen.reshape(-1, 1), moved[:-1] + (1,), d)


# ------------------------------------------------------------------------------------- median, nanmedian

def median(*args, **kwargs):
    """torch.median: the lower median of all elements (MedianBackward0), or along a dim with its index
    (MedianBackward1)."""
    return _median_call("torch.median", args, kwargs, False)


def median_method(self: Tensor, *args, **kwargs):
    return _median_call("Tensor.median", (self,) + args, kwargs, False, method=True)


def nanmedian(*args, **kwargs):
    """torch.nanmedian: median of the elements that are not NaN."""
    return _median_call("torch.nanmedian", args, kwargs, True)


def nanmedian_method(self: Tensor, *args, **kwargs):
    return _median_call("Tensor.nanmedian", (self,) + args, kwargs, True, method=True)


def _median_call(key: str, args: tuple, kwargs: dict, ignore_nan: bool, method: bool = False):
    a = args[0]
    form, values = _bound(key, args[1:] if method else args, kwargs)
    if not method:
        a = values["input"]
    if form == 0:
        return _median_all(a, ignore_nan)
    keepdim = values["keepdim"] if values["keepdim"] is not None else False
    return _median_dim(a, index_arg(values["dim"]), keepdim, ignore_nan)


def _median_all(a: Tensor, ignore_nan: bool) -> Tensor:
    x = a._a
    _not_for(x, "median_cpu")
    flat = x.reshape(-1)
    nan = np.isnan(flat) if x.dtype.kind in "fV" else np.zeros(flat.shape, bool)
    if ignore_nan:
        kept = flat[~nan]
        out = np.sort(kept)[(kept.size - 1) // 2] if kept.size else np.asanyarray(np.nan, x.dtype)
    elif x.size == 0 or nan.any():
        out = np.asanyarray(np.nan, x.dtype) if x.dtype.kind in "fV" else np.zeros((), x.dtype)
    else:
        out = np.partition(flat, (flat.size - 1) // 2)[(flat.size - 1) // 2]
    out = np.asanyarray(out, dtype=x.dtype)
    if _plain(a):
        return Tensor(out)
    mask = np.isnan(x) if x.dtype.kind in "fV" and np.isnan(out) else x == out
    return apply(NANMEDIAN if ignore_nan else MEDIAN, out, (a,), (Tensor(mask), int(np.count_nonzero(mask))))


def _median_dim(a: Tensor, dim, keepdim, ignore_nan: bool) -> ReturnTypes:
    name = "nanmedian" if ignore_nan else "median"
    _check_keepdim(name, keepdim)
    x = a._a
    given = _int_dim(dim, name)
    d = wrap_dim(given, x.ndim)
    _not_for(x, "median_out")
    if x.ndim and x.shape[d] == 0:
        raise IndexError(f"median(): Expected reduction dim {d} to have non-zero size.")
    budget.check_tensor(x.shape, x.itemsize + 8)
    idx = _per_row(x, d, _nanmedian_rows if ignore_nan else _median_rows) if x.ndim else None
    return _selected(name, NANMEDIAN_DIM if ignore_nan else MEDIAN_DIM, a, idx, d, given, keepdim)


def _median_rows(rows: np.ndarray) -> np.ndarray:
    """Per row: the first NaN, else the middle of the stable order (ties broken by index)."""
    n = rows.shape[1]
    chosen = np.argsort(rows, axis=1, kind="stable")[:, (n - 1) // 2]
    if rows.dtype.kind in "fV":
        nan = np.isnan(rows)
        has = nan.any(axis=1)
        chosen = np.where(has, nan.argmax(axis=1), chosen)
    return chosen


def _nanmedian_rows(rows: np.ndarray) -> np.ndarray:
    """Per row: the middle of the stable order of the numbers (NaN sorts last); in a row of NaNs, what
    std::nth_element leaves at the front when every element compares equal."""
    n = rows.shape[1]
    if rows.dtype.kind not in "fV":
        return _median_rows(rows)
    order = np.argsort(rows, axis=1, kind="stable")
    numbers = n - np.isnan(rows).sum(axis=1)
    position = np.maximum(numbers - 1, 0) // 2
    chosen = np.take_along_axis(order, position.reshape(-1, 1), axis=1)[:, 0]
    for r in np.flatnonzero(numbers == 0).tolist():
        queue = list(range(n))
        cxxsort.nth_element(queue, 0, lambda i, j: False)
        chosen[r] = queue[0]
    return chosen


# ------------------------------------------------------------------------------------------------ kthvalue

def kthvalue(*args, **kwargs) -> ReturnTypes:
    """torch.kthvalue: the k-th smallest along dim (default -1) and its index."""
    _, values = _bound("torch.kthvalue", args, kwargs)
    return _kthvalue(values["input"], values["k"], values["dim"], values["keepdim"])


def kthvalue_method(self: Tensor, *args, **kwargs) -> ReturnTypes:
    _, values = _bound("Tensor.kthvalue", args, kwargs)
    return _kthvalue(self, values["k"], values["dim"], values["keepdim"])


def _kthvalue(a: Tensor, k, dim, keepdim) -> ReturnTypes:
    x = a._a
    k = index_arg(k)
    given = index_arg(dim) if dim is not None else -1
    keepdim = bool(keepdim) if keepdim is not None else False
    d = wrap_dim(given, x.ndim)
    _nonempty_dim(x, d, "kthvalue")
    size = x.shape[d] if x.ndim else 1
    if k < 1 or k > size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    _not_for(x, "kthvalue_cpu")
    budget.check_tensor(x.shape, x.itemsize + 8)
    idx = _per_row(x, d, lambda rows: _kth_rows(rows, k)) if x.ndim else None
    return _selected("kthvalue", KTHVALUE, a, idx, d, given, keepdim)


def _gt_or_nan(x, y) -> bool:
    return (x != x and y == y) or x > y


def _quick_select(keys: list, k: int) -> int:
    """The index PyTorch's quick_select_template leaves at position k of one row (keys as a list)."""
    idx = list(range(len(keys)))

    def swap(i, j):
        keys[i], keys[j] = keys[j], keys[i]
        idx[i], idx[j] = idx[j], idx[i]

    lo, hi = 0, len(keys) - 1
    while True:
        if hi <= lo:
            break
        if hi == lo + 1:
            if _gt_or_nan(keys[lo], keys[hi]):
                swap(lo, hi)
            break
        p = (lo + hi) >> 1
        swap(p, lo + 1)
        if _gt_or_nan(keys[lo + 1], keys[hi]):
            swap(lo + 1, hi)
        if _gt_or_nan(keys[lo], keys[hi]):
            swap(lo, hi)
        if _gt_or_nan(keys[lo + 1], keys[lo]):
            swap(lo + 1, lo)
        i, j = lo + 1, hi
        pivot = keys[lo]
        while True:
            i += 1
            while _gt_or_nan(pivot, keys[i]):
                i += 1
            j -= 1
            while _gt_or_nan(keys[j], pivot):
                j -= 1
            if j < i:
                break
            swap(i, j)
        swap(lo, j)
        if j <= k:
            lo = i
        if j >= k:
            hi = j - 1
    return idx[k]


def _kth_rows(rows: np.ndarray, k: int) -> np.ndarray:
    """Per row: the index of the k-th smallest; rows of distinct numbers from a stable sort (one answer), the
    others by quickselect."""
    chosen = np.argsort(rows, axis=1, kind="stable")[:, k - 1]
    for r in np.flatnonzero(~_distinct(rows)).tolist():
        chosen[r] = _quick_select(rows[r].tolist(), k - 1)
    return chosen


# ---------------------------------------------------------------------------------------------------- mode

def mode(*args, **kwargs) -> ReturnTypes:
    """torch.mode: the most frequent value along dim (default -1), the smallest among equally frequent ones,
    and an index of it."""
    _, values = _bound("torch.mode", args, kwargs)
    return _mode(values["input"], values["dim"], values["keepdim"])


def mode_method(self: Tensor, *args, **kwargs) -> ReturnTypes:
    _, values = _bound("Tensor.mode", args, kwargs)
    return _mode(self, values["dim"], values["keepdim"])


def _mode(a: Tensor, dim, keepdim) -> ReturnTypes:
    x = a._a
    given = index_arg(dim) if dim is not None else -1
    keepdim = bool(keepdim) if keepdim is not None else False
    d = wrap_dim(given, x.ndim)
    _nonempty_dim(x, d, "mode")
    budget.check_tensor(x.shape, x.itemsize + 8)
    idx = _per_row(x, d, _mode_rows) if x.ndim else None
    return _selected("mode", MODE, a, idx, d, given, keepdim)


def _mode_rows(rows: np.ndarray) -> np.ndarray:
    """Per row: std::sort of (value, index) pairs by value, then the last pair of the first longest run of
    equal values."""
    n = rows.shape[1]
    chosen = np.empty(rows.shape[0], np.int64)
    for r in range(rows.shape[0]):
        queue = list(zip(rows[r].tolist(), range(n)))
        cxxsort.sort(queue, n, lambda p, q: p[0] < q[0])
        best, run, pick = 0, 0, 0
        for i in range(n):
            run += 1
            if i == n - 1 or queue[i][0] != queue[i + 1][0]:
                if run > best:
                    best, pick = run, queue[i][1]
                run = 0
        chosen[r] = pick
    return chosen


# ------------------------------------------------------------------------------------------------- aminmax

def aminmax(*args, **kwargs) -> ReturnTypes:
    """torch.aminmax: (min, max) over everything or one dim, one node for both."""
    _, values = _bound("torch.aminmax", args, kwargs)
    return _aminmax(values["input"], values["dim"], bool(values["keepdim"]))


def aminmax_method(self: Tensor, *args, **kwargs) -> ReturnTypes:
    _, values = _bound("Tensor.aminmax", args, kwargs)
    return _aminmax(self, values["dim"], bool(values["keepdim"]))


def _aminmax(input: Tensor, dim, keepdim: bool) -> ReturnTypes:
    x = input._a
    if dim is None:
        if x.size == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has "
                               "no identity.")
        axis = tuple(range(x.ndim))
        given = None
    else:
        given = index_arg(dim)
        d = wrap_dim(given, x.ndim)
        if x.ndim and x.shape[d] == 0:
            raise IndexError(f"aminmax: Expected reduction dim {d} to have non-zero size.")
        axis = (d,) if x.ndim else ()
    keep = keepdim and (x.ndim > 0)
    low = contiguous(np.asanyarray(np.min(x, axis=axis, keepdims=keep))) if x.size else \
        np.empty(np.sum(x, axis=axis, keepdims=keep).shape, x.dtype)
    high = contiguous(np.asanyarray(np.max(x, axis=axis, keepdims=keep))) if x.size else np.empty(low.shape, x.dtype)
    low, high = np.asanyarray(low, x.dtype), np.asanyarray(high, x.dtype)
    lo, hi = _two_outputs(AMINMAX, [low, high], input, (Out(low), Out(high), given, keepdim), False)
    return ReturnTypes("aminmax", lo, hi)


# ---------------------------------------------------------------------------------------- cummax, cummin

def cummax(*args, **kwargs) -> ReturnTypes:
    """torch.cummax: the running maximum along dim and the index it was taken from."""
    _, values = _bound("torch.cummax", args, kwargs)
    return _cumulative_extreme(values["input"], values["dim"], "cummax")


def cummin(*args, **kwargs) -> ReturnTypes:
    _, values = _bound("torch.cummin", args, kwargs)
    return _cumulative_extreme(values["input"], values["dim"], "cummin")


def _cumulative_extreme(a: Tensor, dim, name: str) -> ReturnTypes:
    given = index_arg(dim)
    x = a._a
    d = wrap_dim(given, x.ndim)
    budget.check_tensor(x.shape, x.itemsize + 8)
    if x.ndim == 0:
        values, indices = x.copy(), np.zeros((), np.int64)
    else:
        values, indices = _running(x, d, name == "cummax")
    if _plain(a):
        return ReturnTypes(name, Tensor(values), Tensor(indices))
    row = CUMMAX if name == "cummax" else CUMMIN
    return ReturnTypes(name, apply(row, values, (a,), (Tensor(indices), given)), Tensor(indices))


def _running(x: np.ndarray, d: int, largest: bool) -> tuple:
    """The running extreme along d and its index: an element replaces it when it is NaN, or when the running
    value is not NaN and the element is >= it (cummax; <= for cummin)."""
    moved = np.moveaxis(x, d, 0)
    values = np.empty(moved.shape, x.dtype)
    indices = np.empty(moved.shape, np.int64)
    if moved.shape[0]:
        best, where = moved[0].copy(), np.zeros(moved.shape[1:], np.int64)
        floats = x.dtype.kind in "fV"
        for i in range(moved.shape[0]):
            current = moved[i]
            take = current >= best if largest else current <= best
            if floats:
                take = np.isnan(current) | (~np.isnan(best) & take)
            best = np.where(take, current, best)
            where = np.where(take, i, where)
            values[i], indices[i] = best, where
    return contiguous(np.moveaxis(values, 0, d)), contiguous(np.moveaxis(indices, 0, d))


def cummaxmin_backward_array(g: np.ndarray, self: np.ndarray, indices: np.ndarray, dim: int) -> np.ndarray:
    """zeros like self, with g added at the indices along dim (cummaxmin_backward, a plain backward pass)."""
    out = np.zeros(self.shape, g.dtype)
    if self.size == 0:
        return out
    if self.ndim == 0:
        return out + g
    d = wrap_dim(dim, self.ndim)
    key = _index_key(self.shape, d, indices)
    np.add.at(out, key, g)
    return out


def cummaxmin_backward(g: Tensor, self: Tensor, indices: Tensor, dim: int) -> Tensor:
    """The same, recorded: zeros(...).scatter_add_(dim, indices, grad) (ScatterAddBackward0)."""
    if self._a.size == 0:
        return self
    return ops.scatter.scatter_add(Tensor(np.zeros(self._a.shape, g._a.dtype)), dim, indices, g)


# ------------------------------------------------------------------------------------------ logcumsumexp

def logcumsumexp(*args, **kwargs) -> Tensor:
    """torch.logcumsumexp: log of the running sum of exp along dim, each step log1p(exp(min - max)) + max in
    double (PyTorch's CPU accumulation type), rounded to the input's dtype."""
    _, values = _bound("torch.logcumsumexp", args, kwargs)
    return _logcumsumexp(values["input"], values["dim"])


def _logcumsumexp(input: Tensor, dim) -> Tensor:
    given = index_arg(dim)
    x = input._a
    d = wrap_dim(given, x.ndim)
    if x.dtype.kind not in "fV":
        raise NotImplementedError(f'"logcumsumexp_out_cpu" not implemented for \'{type_word(x)}\'')
    out = logcumsumexp_array(x, d)
    return apply(LOGCUMSUMEXP, out, (input,), (given,))


def logcumsumexp_array(x: np.ndarray, d: int) -> np.ndarray:
    if x.ndim == 0:
        return x.copy()
    moved = np.moveaxis(x, d, 0).astype(np.float64)
    out = np.empty(moved.shape, np.float64)
    total = np.full(moved.shape[1:], -np.inf)
    with np.errstate(invalid="ignore", over="ignore"):
        for i in range(moved.shape[0]):
            total = _log_add_exp(moved[i], total)
            out[i] = total
    return contiguous(np.moveaxis(out, 0, d).astype(x.dtype))


def _log_add_exp(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """_log_add_exp_helper: log1p(exp(min - max)) + max (NaN in y carried), x itself where both are the same
    infinity."""
    y_nan = np.isnan(y)
    low = np.where(y_nan, y, np.where(y < x, y, x))         # std::min and std::max: x when they are unordered
    high = np.where(y_nan, y, np.where(x < y, y, x))
    general = (low != high) | np.isfinite(low)
    value = np.log1p(np.exp(low - high)) + high
    return np.where(general, value, x)


def logcumsumexp_backward_array(g: np.ndarray, self: np.ndarray, result: np.ndarray, dim: int) -> np.ndarray:
    """logcumsumexp_backward in a plain backward pass: the positive and the negative parts of the gradient
    each through a reversed logcumsumexp in log space."""
    if g.ndim == 0 or g.size == 0:
        return g
    d = wrap_dim(dim, g.ndim)
    lowest = dtypes.finfo(g.dtype).min
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        log_abs = cr.log(np.abs(g))
        parts = []
        for chosen in (g > 0, g < 0):
            log_part = np.where(chosen, log_abs, g.dtype.type(lowest))
            flipped = np.flip(log_part - result, d)
            back = np.flip(logcumsumexp_array(np.ascontiguousarray(flipped), d), d)
            parts.append(cr.exp(back + self))
    return parts[0] - parts[1]


def logcumsumexp_backward(g: Tensor, self: Tensor, result: Tensor, dim: int) -> Tensor:
    """The same, recorded (under create_graph=True)."""
    if g._a.ndim == 0 or g._a.size == 0:
        return g
    lowest = Tensor(np.asanyarray(dtypes.finfo(g._a.dtype).min, g._a.dtype))
    log_abs = ops.log(ops.abs(g))
    positive = ops.where(g > 0, log_abs, lowest)
    negative = ops.where(g < 0, log_abs, lowest)

    def reverse(t):
        return ops.flip(_logcumsumexp(ops.flip(t, (dim,)), dim), (dim,))

    out_pos = ops.exp(reverse(positive - result) + self)
    out_neg = ops.exp(reverse(negative - result) + self)
    return out_pos - out_neg


def logcumsumexp_method(self: Tensor, *args, **kwargs) -> Tensor:
    _, values = _bound("Tensor.logcumsumexp", args, kwargs)
    return _logcumsumexp(self, values["dim"])


def cummax_method(self: Tensor, *args, **kwargs) -> ReturnTypes:
    _, values = _bound("Tensor.cummax", args, kwargs)
    return _cumulative_extreme(self, values["dim"], "cummax")


def cummin_method(self: Tensor, *args, **kwargs) -> ReturnTypes:
    _, values = _bound("Tensor.cummin", args, kwargs)
    return _cumulative_extreme(self, values["dim"], "cummin")


# ------------------------------------------------------------------------------------ quantile, nanquantile

_MODES = ("linear", "lower", "higher", "midpoint", "nearest")


@autocast_policy("fp32")
def quantile(*args, **kwargs) -> Tensor:
    """torch.quantile: the q-th quantiles (q a float or a 0-d/1-d tensor) over everything or along dim, by
    PyTorch's composition: sort, view, gather at the ranks below and above, lerp_, then squeeze_ (or move the
    quantiles' dim first)."""
    return _quantile_call("torch.quantile", args, kwargs, False, False)


def quantile_method(self: Tensor, *args, **kwargs) -> Tensor:
    return _quantile_call("Tensor.quantile", (self,) + args, kwargs, False, True)


@autocast_policy("fp32")
def nanquantile(*args, **kwargs) -> Tensor:
    """torch.nanquantile: quantile of the elements that are not NaN (NaN where every one is)."""
    return _quantile_call("torch.nanquantile", args, kwargs, True, False)


def nanquantile_method(self: Tensor, *args, **kwargs) -> Tensor:
    return _quantile_call("Tensor.nanquantile", (self,) + args, kwargs, True, True)


def _quantile_call(key: str, args: tuple, kwargs: dict, ignore_nan: bool, method: bool) -> Tensor:
    form, values = _bound(key, args[1:] if method else args, kwargs)
    a = args[0] if method else values["input"]
    q = values["q"]
    interpolation = values["interpolation"] if values["interpolation"] is not None else "linear"
    keepdim = bool(values["keepdim"]) if values["keepdim"] is not None else False
    dim = values["dim"]
    if form == 1:
        q = float(q)
        if not (0 <= q <= 1):
            raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {q:g}")
    if interpolation not in _MODES:
        raise RuntimeError("quantile() interpolation must be one of linear, lower, higher, midpoint or nearest, "
                           f"but got {interpolation}")
    if form == 1:
        q = np.asanyarray(q).astype(a._a.dtype)
        if a._a.__class__ is not np.ndarray and isinstance(a._a, np.ndarray):    # a meta input's q is meta too
            from gradcli.engine.meta import meta_full
            q = meta_full((), q, q.dtype)
        q = Tensor(q)
    return _quantile(a, q, None if dim is None else index_arg(dim), keepdim, interpolation, ignore_nan)


def _quantile(a: Tensor, q: Tensor, dim, keepdim: bool, interpolation: str, ignore_nan: bool) -> Tensor:
    x = a._a
    if x.size == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if q._a.ndim > 1:
        raise RuntimeError("quantile() q must be a scalar or 1D tensor")
    if x.dtype not in (np.float32, np.float64):
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if q._a.dtype != x.dtype:
        raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
    wrapped = wrap_dim(0 if dim is None else dim, x.ndim)
    reduced = []
    if dim is not None and x.ndim > 0:
        reduced = list(x.shape)
        if keepdim:
            reduced[wrapped] = 1
        else:
            del reduced[wrapped]
    elif keepdim:
        reduced = [1] * x.ndim
    if not ((q._a >= 0) & (q._a <= 1)).all():
        raise RuntimeError("quantile() q values must be in the range [0, 1]")
    if dim is None:
        ordered = a.flatten().sort()[0]
    elif wrapped == x.ndim - 1:
        ordered = a.sort()[0]
    else:
        ordered = a.unsqueeze(-1).transpose(wrapped, -1).sort()[0]
    ordered = ordered.view(reduced + [ordered.shape[-1]])
    if ordered.shape[-1] > 2 ** 24:
        raise RuntimeError("quantile() input tensor is too large")
    if ignore_nan:
        ranks = q * (ordered.isnan().logical_not().sum(-1, True) - 1)
        ranks.masked_fill_(ranks < 0, 0)
    else:
        last = ordered.shape[-1] - 1
        scaled, any_nan = q * last, ordered.isnan().any(-1, True)
        shape = np.broadcast_shapes(scaled._a.shape, any_nan._a.shape)       # at::broadcast_tensors
        if scaled._a.shape != shape:
            scaled = ops.expand(scaled, shape)
        if any_nan._a.shape != shape:
            any_nan = ops.expand(any_nan, shape)
        ranks = scaled.masked_fill(any_nan, last)
    if interpolation == "lower":
        ranks.floor_()
    elif interpolation == "higher":
        ranks.ceil_()
    elif interpolation == "nearest":
        ranks.round_()
    below = ranks.long()
    values = ordered.gather(-1, below)
    if interpolation in ("linear", "midpoint"):
        weights = Tensor(np.full(ranks.shape, 0.5, ranks.dtype.np)) if interpolation == "midpoint" else ranks - below
        above = ranks.ceil_().long()
        values_above = ordered.gather(-1, above)
        if weights.requires_grad:
            values = values.lerp(values_above, weights)
        else:
            values.lerp_(values_above, weights)
    if q._a.ndim == 0:
        values.squeeze_(-1)
    else:
        values.unsqueeze_(0).transpose_(0, -1).squeeze_(-1)
    return values
