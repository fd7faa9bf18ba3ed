"""Statistics of samples: histc, histogram, cov, corrcoef, trapezoid, trapz, cumulative_trapezoid and isin.

cov, corrcoef and the trapezoid rules are CompositeImplicit in PyTorch (Correlation.cpp, Integration.cpp): they
are built here from the same ops in the same order, so their values round as PyTorch's do and their grad_fn
chains are PyTorch's (a product by a C++ double is MulBackward1, `/ 2.` DivBackward1). histc counts as
PyTorch's histogram kernel does (linear interpolation into linspace's bin edges, then a local search among
the neighbouring edges); its result has no gradient. isin has none either.
"""

from __future__ import annotations

import math

import numpy as np

from gradcli.engine import budget, dtypes, ops, signatures
from gradcli.engine.factories import _linspace
from gradcli.engine.layout import contiguous
from gradcli.engine.ops import arith, elementwise
from gradcli.engine.ops.order import _bound
from gradcli.engine.recording import checked_scalar, index_arg, type_word, wrap_dim
from gradcli.engine.state import STATE
from gradcli.engine.tensor import Tensor


# ------------------------------------------------------------------------------------------------- histc

def histc(*args, **kwargs) -> Tensor:
    """torch.histc: counts of the elements in `bins` equal bins between min and max (the data's own range when
    min == max), elements outside it ignored, the last bin closed on the right."""
    _, values = _bound("torch.histc", args, kwargs)
    return _histc(values["input"], values["bins"], values["min"], values["max"])


def histc_method(self: Tensor, *args, **kwargs) -> Tensor:
    _, values = _bound("Tensor.histc", args, kwargs)
    return _histc(self, values["bins"], values["min"], values["max"])


def _histc(a: Tensor, bins, low, high) -> Tensor:
    x = a._a
    bins = index_arg(100 if bins is None else bins)
    left = float(0 if low is None else low)
    right = float(0 if high is None else high)
    if left == right and x.size:
        finite = x.astype(np.float64)
        left, right = float(finite.min()), float(finite.max())
        if x.size > 1 and left != left:     # PyTorch's min/max kernels give x86's default NaN, sign bit set
            left = right = -math.nan
    if left == right:
        left, right = left - 1, right + 1
    if not (np.isfinite(left) and np.isfinite(right)):
        raise RuntimeError(f"torch.histc: range of [{_c_number(left)}, {_c_number(right)}] is not finite")
    if not left < right:
        raise RuntimeError("torch.histc: max must be larger than min")
    if x.dtype == np.bool_:
        raise NotImplementedError("\"linspace_cpu\" not implemented for 'Bool'")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    if x.dtype.kind not in "fV":
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{type_word(x)}'")
    budget.check_tensor((bins + 1,), x.itemsize)
    edges = _linspace(left, right, bins + 1, x.dtype)
    return Tensor(histogram_counts(x.reshape(-1), edges))



def _c_number(v: float) -> str:
    """A float as PyTorch's C++ message shows it: %g, and a NaN with its sign bit set as `-nan` (the NaN that x86
    makes of inf - inf has it)."""
    if v != v:
        return "-nan" if math.copysign(1.0, v) < 0 else "nan"
    return f"{v:g}"

def histogram_counts(x: np.ndarray, edges: np.ndarray, weight=None) -> np.ndarray:
    """The histogram kernel's counts (LINEAR_INTERPOLATION_WITH_LOCAL_SEARCH), in x's dtype: each element in
    [edges[0], edges[-1]] goes to bin int((x - lo) * (n - 1) / (hi - lo)) computed in x's dtype, corrected by
    an upper bound among the edges from one before to two after it; the last edge belongs to the last bin."""
    keep = (x >= edges[0]) & (x <= edges[-1])
    return _accumulated(_linear_positions(x[keep], edges), edges.size - 1, x.dtype, weight, keep)


def _linear_positions(inside: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """The bins of elements within the edges of a linear progression, as the kernel finds them."""
    n = edges.size
    lo, hi = edges[0], edges[-1]
    dt = inside.dtype.type
    with np.errstate(over="ignore", invalid="ignore"):
        guess = ((inside - lo) * dt(n - 1) / (hi - lo)).astype(np.int64)
    first = np.maximum(guess - 1, 0)
    stop = np.minimum(guess + 2, n)
    pos = first.copy()
    for step in range(3):
        j = first + step
        within = j < stop
        pos += within & (edges[np.minimum(j, n - 1)] <= inside)
    pos -= 1
    pos[pos == n - 1] -= 1
    return pos


def _upper_bound(edges: np.ndarray, x: np.ndarray) -> np.ndarray:
    """std::upper_bound's position of each x among `edges`, by its own bisection (so unsorted edges give what
    PyTorch's binary search gives them)."""
    first = np.zeros(x.shape, np.int64)
    count = np.full(x.shape, edges.size, np.int64)
    while count.any():
        step = count // 2
        right = (count > 0) & ~(x < edges[np.minimum(first + step, edges.size - 1)])
        first = np.where(right, first + step + 1, first)
        count = np.where(right, count - step - 1, step)
    return first


# ---------------------------------------------------------------------------------------------- histogram

def histogram(*args, **kwargs):
    """torch.histogram(input, bins, *, range, weight, density): torch.return_types.histogram(hist, bin_edges),
    as PyTorch's histogramdd kernel computes a 1-d histogram of the flattened input."""
    form, values = signatures.bound("torch.histogram", args, kwargs)
    return _histogram(values["input"], form, values)


def histogram_method(self: Tensor, *args, **kwargs):
    form, values = signatures.bound("Tensor.histogram", args, kwargs)
    return _histogram(self, form, values)


def _histogram(a: Tensor, form: int, values: dict):
    x, weight, bins = a._a, values["weight"], values["bins"]
    shown = [x.size, 1]             # (PyTorch's histogram is histogramdd of the input as one column)
    if form == 1:       # a number of equal bins over range= (the data's own range by default)
        edges = _linear_edges(x, [100 if bins is None else index_arg(bins)], values["range"])
        _check_histogram_inputs(x, None, None if weight is None else Tensor(weight._a.reshape(-1)), shown,
                                (x.size,))
    else:
        _check_histogram_inputs(x, [bins._a], None if weight is None else Tensor(weight._a.reshape(-1)), shown,
                                (x.size,))
        _bins_positive(bins._a.size - 1, 0)
        edges = [bins._a]
    if x.dtype.kind not in "fV" or x.dtype.itemsize < 4:
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{type_word(x)}'")
    hist, edges = _histogram_results(x.reshape(-1, 1), edges, form == 1, weight, values["density"])
    tracked = [t for t in (a, weight, bins) if t.__class__ is Tensor and t.requires_grad]
    return ops.reduce.ReturnTypes("histogram", *_untracked("histogram", (hist, edges[0]), tracked))


def _histogram_results(x2: np.ndarray, edges: list, linear: bool, weight, density: bool) -> tuple:
    """The histogram of the rows of x2 (one column per dim) over each dim's edges, as a tensor, and the edges as
    tensors: bins found by linear interpolation (equal bins) or by search, the weights added in the kernel's order,
    then (density) divided by the total, then by each dim's bin widths, as PyTorch divides."""
    keep = np.ones(x2.shape[0], np.bool_)
    for d, e in enumerate(edges):
        keep &= (x2[:, d] >= e[0]) & (x2[:, d] <= e[-1])
    flat = np.zeros(int(np.count_nonzero(keep)), np.int64)
    sizes = [e.size - 1 for e in edges]
    for d, e in enumerate(edges):
        inside = x2[keep, d]
        flat = flat * sizes[d] + (_linear_positions(inside, e) if linear else _searched_positions(inside, e))
    w = None if weight is None else weight._a.reshape(-1)
    hist = Tensor(_accumulated(flat, math.prod(sizes), x2.dtype, w, keep, max(1, 200 // len(edges))).reshape(sizes))
    tensors = [Tensor(e.copy()) for e in edges]
    if density:
        hist = arith.div(hist, hist.sum().item())
        for d, e in enumerate(tensors):
            widths = e.diff()
            hist = arith.div(hist, widths.reshape([-1 if k == d else 1 for k in range(len(edges))]))
    return hist, tensors


def _untracked(name: str, out: tuple, tracked: list) -> tuple:
    """The results of aten::`name`, with one NotImplemented node for them all (as PyTorch's) when an input
    requires grad."""
    if tracked and STATE.recording:
        from gradcli.engine.autograd import OutputSlot
        node = elementwise.not_implemented(out[0]._a, tuple(tracked), name).grad_fn
        if len(out) == 1:
            return (_attached(out[0], node),)
        for k, t in enumerate(out):
            _attached(t, OutputSlot(node, k, len(out)))
    return out


def _attached(t: Tensor, fn) -> Tensor:
    t.grad_fn, t.requires_grad = fn, True
    return t


def _bins_positive(count: int, d: int) -> None:
    if count <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {count} for dimension {d}")


def _outer_edges(x2: np.ndarray, given) -> list:
    """Each dim's leftmost and rightmost edges: range= (two numbers per dim) or the column's min and max (0 and 1
    for no data), widened by half on each side when they are equal."""
    dims = x2.shape[1]
    if given is not None:
        if len(given) != 2 * dims:
            raise RuntimeError(f"torch.histogramdd: for a {dims}-dimensional histogram range should have {2 * dims} "
                               f"elements, but got {len(given)}")
        bounds = [(float(given[2 * d]), float(given[2 * d + 1])) for d in range(dims)]
    elif x2.size:
        if x2.dtype.kind not in "fV" or x2.dtype.itemsize < 4:
            raise NotImplementedError(f"\"histogramdd\" not implemented for '{type_word(x2)}'")
        bounds = [(float(x2[:, d].min()), float(x2[:, d].max())) for d in range(dims)]
    else:
        bounds = [(0.0, 1.0)] * dims
    edges = []
    for d, (left, right) in enumerate(bounds):
        if not (math.isfinite(left) and math.isfinite(right)):
            raise RuntimeError(f"torch.histogramdd: dimension {d}'s range [{_c_number(left)}, {_c_number(right)}] "
                               "is not finite")
        if not left <= right:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {_c_number(left)} max "
                               f"{_c_number(right)} for dimension {d}")
        edges.append((left - 0.5, right + 0.5) if left == right else (left, right))
    return edges


def _check_histogram_inputs(x: np.ndarray, bins, weight, shown: list, expected: tuple) -> None:
    """PyTorch's checks of the bin edges given (one array per dim, or None) and of the weights (of shape
    `expected`; the input shown as `shown`), in its order."""
    from gradcli.engine.ops.linalg import cxx_type
    for d, b in enumerate(bins or ()):
        if b.dtype != x.dtype:
            raise RuntimeError(f"torch.histogramdd: input tensor and bins tensors should have the same dtype, but "
                               f"got input with dtype {cxx_type(x.dtype)} and bins for dimension {d} with dtype "
                               f"{cxx_type(b.dtype)}")
        if b.ndim != 1:
            raise RuntimeError(f"torch.histogramdd: bins tensor should have one dimension, but got {b.ndim} "
                               f"dimensions in the bins tensor for dimension {d}")
        if not b.size:
            raise RuntimeError("torch.histogramdd: bins tensor should have at least 1 element, but got 0 elements "
                               f"in the bins tensor for dimension {d}")
    if weight is not None:
        w = weight._a
        if w.dtype != x.dtype:
            raise RuntimeError("torch.histogramdd: if weight tensor is provided, input tensor and weight tensor "
                               f"should have the same dtype, but got input({cxx_type(x.dtype)}), and "
                               f"weight({cxx_type(w.dtype)})")
        if w.shape != expected:
            raise RuntimeError("torch.histogramdd: if weight tensor is provided it should have the same shape as "
                               "the input tensor excluding its innermost dimension, but got input with shape "
                               f"{shown} and weight with shape {list(w.shape)}")


def _linear_edges(x: np.ndarray, counts: list, given, counts_first: bool = True) -> list:
    """Equal bins: `counts[d]` of them over each dim's outer edges, linspace's values in the input's dtype. The
    counts are checked first (histogram's order), or left to the caller (histogramdd's: after the edges)."""
    if counts_first:
        for d, count in enumerate(counts):
            _bins_positive(count, d)
    bounds = _outer_edges(x.reshape(-1, len(counts)), given)
    if x.dtype.kind not in "fV":
        return None
    edges = []
    for (left, right), count in zip(bounds, counts):
        if count + 1 < 0:
            raise RuntimeError("number of steps must be non-negative")
        checked_scalar(left, x.dtype)       # (linspace converts its ends to the input's type, checked)
        checked_scalar(right, x.dtype)
        budget.check_tensor((count + 1,), x.itemsize)
        edges.append(_linspace(left, right, count + 1, x.dtype) if count + 1 > 1 else
                     np.full(count + 1, left, x.dtype))
    return edges


def histogramdd(*args, **kwargs):
    """torch.histogramdd(input, bins, range=None, weight=None, density=False): the histogram of the rows of input
    (one column per dim, its last) as torch.return_types.histogramdd(hist, bin_edges), bin_edges a tuple of one
    tensor per dim; bins one count, a count per dim or a tensor of edges per dim."""
    form, values = signatures.bound("torch.histogramdd", args, kwargs)
    a, bins, weight = values["input"], values["bins"], values["weight"]
    x = a._a
    if x.ndim < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    dims = x.shape[-1]
    shown, expected = list(x.shape), x.shape[:-1]
    if form < 2:
        counts = [index_arg(bins)] * dims if form == 0 else [index_arg(b) for b in bins]
        if len(counts) != dims:
            raise RuntimeError("histogramdd: The size of bins must be equal to the innermost dimension of the input.")
        edges = _linear_edges(x, counts, values["range"], counts_first=False)
        _check_histogram_inputs(x, edges, weight, shown, expected)
        for d, count in enumerate(counts):
            _bins_positive(count, d)
    else:
        if len(bins) != dims:
            raise RuntimeError(f"torch.histogramdd: expected {dims} sequences of bin edges for a {dims}-dimensional "
                               f"histogram but got {len(bins)}")
        edges = [b._a for b in bins]
        _check_histogram_inputs(x, edges, weight, shown, expected)
        for d, e in enumerate(edges):
            _bins_positive(e.size - 1, d)
    if x.dtype.kind not in "fV" or x.dtype.itemsize < 4:
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{type_word(x)}'")
    hist, edges = _histogram_results(x.reshape(-1, dims), edges, form < 2, weight, values["density"])
    tracked = [t for t in (a, weight, *(bins if form == 2 else ())) if t.__class__ is Tensor and t.requires_grad]
    # PyTorch computes them in two calls: the counts (one node), and the edges (one node for all of them), or
    # hands back the edges given
    hist, = _untracked("_histogramdd_from_bin_cts" if form < 2 else "_histogramdd_from_bin_tensors", (hist,), tracked)
    edges = _untracked("_histogramdd_bin_edges", tuple(edges), tracked) if form < 2 else tuple(bins)
    return ops.reduce.ReturnTypes("histogramdd", hist, edges)


def _searched_positions(inside: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """The bins of elements within given edges (BINARY_SEARCH): the bin before the first edge past each; the last
    edge belongs to the last bin."""
    pos = _upper_bound(edges, inside) - 1
    pos[pos == edges.size - 1] -= 1
    return pos


def _accumulated(pos: np.ndarray, bins: int, dt: np.dtype, weight, keep: np.ndarray, grain: int = 200) -> np.ndarray:
    """Each kept element's 1 (or weight) added into its bin, in dtype `dt`, as the kernel adds them: the elements
    split into one range per thread (of at least `grain`: HISTOGRAM_GRAIN_SIZE over the dims), each range summed
    in order into its own histogram, then the threads' histograms summed."""
    if weight is None:
        return np.bincount(pos, minlength=bins)[:bins].astype(dt)
    from gradcli.engine import cascade
    n = keep.size
    threads = max(1, min(cascade.get_num_threads(), -(-n // grain))) if n > grain else 1
    chunk = -(-n // threads) if n else 1
    where = np.nonzero(keep)[0]
    parts = np.zeros((threads, bins), dt)
    np.add.at(parts, (where // chunk, pos), weight[where])
    return parts[0] if threads == 1 else cascade.sum_array(parts, (0,))


# --------------------------------------------------------------------------------------------- cov, corrcoef

def cov(*args, **kwargs) -> Tensor:
    """torch.cov: the covariance matrix of the rows (variables) over the columns (observations), weighted by
    fweights (integer frequencies) and aweights (float weights), divided by the weights' sum less the
    correction; squeezed, so one variable gives a 0-d tensor."""
    _, values = _bound("torch.cov", args, kwargs)
    return _cov(values["input"], values["correction"], values["fweights"], values["aweights"])


def cov_method(self: Tensor, *args, **kwargs) -> Tensor:
    _, values = _bound("Tensor.cov", args, kwargs)
    return _cov(self, values["correction"], values["fweights"], values["aweights"])


def _cov(a: Tensor, correction, fweights, aweights) -> Tensor:
    correction = 1 if correction is None else index_arg(correction)
    x = a._a
    if x.ndim > 2:
        raise RuntimeError("cov(): expected input to have two or fewer dimensions but got an input with "
                           f"{x.ndim} dimensions")
    if x.dtype == np.bool_:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    data = a.view(1, -1) if x.ndim < 2 else a
    n = data.shape[1]
    w = None
    if fweights is not None:
        f = fweights._a
        if f.ndim > 1:
            raise RuntimeError("cov(): expected fweights to have one or fewer dimensions but got fweights with "
                               f"{f.ndim} dimensions")
        if f.dtype.kind not in "iu":
            raise RuntimeError("cov(): expected fweights to have integral dtype but got fweights with "
                               f"{type_word(f)} dtype")
        if f.size != n:
            raise RuntimeError("cov(): expected fweights to have the same numel as there are observations in the "
                               f"input but got {f.size} != {n}")
        if n and f.min() < 0:
            raise RuntimeError("cov(): fweights cannot be negative")
        w = fweights
    if aweights is not None:
        aw = aweights._a
        if aw.ndim > 1:
            raise RuntimeError("cov(): expected aweights to have one or fewer dimensions but got aweights with "
                               f"{aw.ndim} dimensions")
        if aw.dtype.kind not in "fV":
            raise RuntimeError("cov(): expected aweights to have floating point dtype but got aweights with "
                               f"{type_word(aw)} dtype")
        if aw.size != n:
            raise RuntimeError("cov(): expected aweights to have the same numel as there are observations in the "
                               f"input but got {aw.size} != {n}")
        if n and aw.min() < 0:
            raise RuntimeError("cov(): aweights cannot be negative")
        w = aweights if w is None else w * aweights
    w_sum = w.sum() if w is not None else Tensor(np.asanyarray(n, dtype=np.int64))
    if w is not None and not (w_sum._a != 0):
        raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    avg = (data * w if w is not None else data).sum(1) / w_sum
    if w is None:
        norm_factor = Tensor(np.asanyarray(n - correction, dtype=np.int64))
    elif correction == 0:
        norm_factor = w_sum
    elif aweights is None:
        norm_factor = w_sum - correction
    elif fweights is None and n == 1 and correction == 1:
        norm_factor = Tensor(np.asanyarray(0, dtype=np.int64))
    else:
        norm_factor = w_sum - arith.mul_scalar((w * aweights).sum(), correction) / w_sum
    if norm_factor._a <= 0:
        if STATE.warn is not None:
            STATE.warn("UserWarning", "cov(): degrees of freedom is <= 0. Correction should be strictly less than "
                       "the number of observations. (Triggered internally at "
                       "/__w/pytorch/pytorch/aten/src/ATen/native/Correlation.cpp:129.)")
        norm_factor = norm_factor.zero_()
    if n == 1 and (fweights is None) != (aweights is None):
        data = data.zero_()
        if data._a.dtype.kind in "iub":
            data = data.float()
    else:
        data = data - avg.unsqueeze(1)
    c = ops.mm(data, (data * w if w is not None else data).t())
    return (c / norm_factor).squeeze()


def corrcoef(input) -> Tensor:
    """torch.corrcoef / Tensor.corrcoef: cov divided by the standard deviations of both variables, clipped to
    [-1, 1] (c / c for one variable: 1, or nan where the variance is 0, nan or inf)."""
    if input.__class__ is not Tensor:
        signatures.bound("torch.corrcoef", (input,), {})
    if input._a.ndim > 2:
        raise RuntimeError("corrcoef(): expected input to have two or fewer dimensions but got an input with "
                           f"{input._a.ndim} dimensions")
    c = _cov(input, 1, None, None)
    if c._a.ndim == 0:
        return c / c
    d = c.diagonal()
    stddev = d.sqrt()
    c = c / stddev.view(-1, 1)
    c = c / stddev.view(1, -1)
    return c.clip(-1, 1)


def corrcoef_method(self: Tensor, *args, **kwargs) -> Tensor:
    """Tensor.corrcoef, a method of no arguments (CPython's words for one, as PyTorch's C method)."""
    if kwargs:
        raise TypeError("TensorBase.corrcoef() takes no keyword arguments")
    if args:
        raise TypeError(f"TensorBase.corrcoef() takes no arguments ({len(args)} given)")
    return corrcoef(self)


# ------------------------------------------------------------------------------------------ trapezoid rules

def trapezoid(*args, **kwargs) -> Tensor:
    """torch.trapezoid: the trapezoid rule along dim, with sample points x or a constant spacing dx."""
    form, values = _bound("torch.trapezoid", args, kwargs)
    return _trapezoid("trapezoid", values, form == 0, False)


def trapz(*args, **kwargs) -> Tensor:
    """torch.trapz: trapezoid under its older name."""
    form, values = _bound("torch.trapz", args, kwargs)
    return _trapezoid("trapezoid", values, form == 1, False)


def cumulative_trapezoid(*args, **kwargs) -> Tensor:
    """torch.cumulative_trapezoid: the running trapezoid rule along dim (one element fewer than y)."""
    form, values = _bound("torch.cumulative_trapezoid", args, kwargs)
    return _trapezoid("cumulative_trapezoid", values, form == 0, True)


def _cut(t: Tensor, dim: int, start, stop) -> Tensor:
    """t.slice(dim, start, stop) (SliceBackward0)."""
    return t[(slice(None),) * dim + (slice(start, stop),)]


def _trapezoid(name: str, values: dict, with_x: bool, cumulative: bool) -> Tensor:
    y = values["y"]
    given = -1 if values["dim"] is None else index_arg(values["dim"])
    yv = y._a
    dim = wrap_dim(given, yv.ndim)
    if not cumulative and yv.ndim and yv.shape[dim] == 0:          # numpy's 0 for no samples
        return Tensor(np.zeros(yv.shape[:dim] + yv.shape[dim + 1:], yv.dtype))
    if with_x:
        x = values["x"]
        xv = x._a
        if yv.dtype == np.bool_ or xv.dtype == np.bool_:
            raise RuntimeError(f"{name}: received a bool input for `x` or `y`, but bool is not supported")
        if xv.ndim == 1:
            if xv.shape[0] != yv.shape[dim]:
                raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
            sizes = [1] * yv.ndim
            sizes[dim] = xv.shape[0]
            viewed = x.view(*sizes)
        elif xv.ndim < yv.ndim:
            viewed = x.view(*((1,) * (yv.ndim - xv.ndim) + xv.shape))
        else:
            viewed = x
        dx = _cut(viewed, dim, 1, None) - _cut(viewed, dim, 0, -1)
        summed = (_cut(y, dim, 0, -1) + _cut(y, dim, 1, None)) * dx
        summed = summed.cumsum(dim) if cumulative else summed.sum(dim)
        return arith.div_scalar(_floating(summed), 2.0)
    dx = values["dx"]
    if yv.dtype == np.bool_:
        raise RuntimeError(f"{name}: received a bool input for `y`, but bool is not supported")
    if dx is None:
        dx = 1
    if isinstance(dx, bool) or isinstance(dx, complex):
        raise RuntimeError(f"{name}: Currently, we only support dx as a real number.")
    dx = float(dx.item() if dx.__class__ is Tensor else dx)
    if cumulative:
        return arith.mul_scalar(_floating(_cut(y, dim, 0, -1) + _cut(y, dim, 1, None)), dx / 2.0).cumsum(dim)
    ends = y.select(dim, 0) + y.select(dim, -1)
    return arith.mul_scalar(y.sum(dim) - arith.mul_scalar(_floating(ends), 0.5), dx)


def _floating(t: Tensor) -> Tensor:
    """An integer tensor times or over a C++ double computes in the default float dtype (integers never
    require grad, so the cast records nothing)."""
    if t._a.dtype.kind in "iub":
        return Tensor(t._a.astype(dtypes.default_float.np))
    return t


# --------------------------------------------------------------------------------------------------- isin

def isin(*args, **kwargs) -> Tensor:
    """torch.isin: whether each element is among test_elements (invert=True: is not), a bool tensor of the
    elements' shape."""
    form, values = _bound("torch.isin", args, kwargs)
    if form == 0:
        elements, tests = values["elements"], values["test_elements"]
    elif form == 1:
        elements, tests = values["element"], values["test_elements"]
    else:
        elements, tests = values["elements"], values["test_element"]
    a = elements._a if elements.__class__ is Tensor else np.asanyarray(elements)
    b = tests._a if tests.__class__ is Tensor else np.asanyarray(tests)
    for arr in (a, b):
        if arr.dtype == np.bool_:
            raise RuntimeError("Unsupported input type encountered for isin(): Bool")
    out = np.isin(a, b, invert=bool(values["invert"]))         # compared by value (NaN equals nothing)
    return Tensor(contiguous(np.asanyarray(out, dtype=np.bool_)))
