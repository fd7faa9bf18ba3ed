"""Fractional max pooling: F.fractional_max_pool2d/3d (and their _with_indices forms), their rows and the
backward kernels' rows (double backward).

Each plane (or volume) has one random sample per spatial dim, drawn by F's Python as torch.rand(N, C, n)
in the input's dtype unless `_random_samples` is given. A dim's window starts come from its sample u as
PyTorch's generate_intervals computes them, in the input's dtype: alpha = (in - k) / (out - 1), start i =
int((i + u) * alpha) - int(u * alpha) (C's truncating conversion to int), the last start in - k. Each
window is k elements from its start, scanned in row-major order keeping `val > max || isnan(val)` from
-inf: the first maximum, or the last NaN; a window of -inf (or an empty one, for a kernel below 1)
keeps its first position.
"""

from __future__ import annotations

import numpy as np

from gradcli.engine import autograd, budget, factories
from gradcli.engine.ops import pool
from gradcli.engine.recording import autocast_policy, Op, apply, type_word
from gradcli.engine.tensor import Tensor

_INT_MIN = -(1 << 31)


# ----------------------------------------------------------------------------------------- the kernel

def _c_int(v: np.ndarray) -> np.ndarray:
    """static_cast<int> of floats as x86 does it: truncation, and INT_MIN for NaN or a value out of range."""
    wide = v.astype(np.float64)
    bad = ~np.isfinite(wide) | (wide >= 2.0 ** 31) | (wide <= -(2.0 ** 31) - 1)
    return np.where(bad, _INT_MIN, np.trunc(np.where(bad, 0, wide))).astype(np.int64)


def _starts(samples: np.ndarray, size: int, out: int, k: int) -> np.ndarray:
    """generate_intervals for each plane's sample (samples: (planes,), in the input's dtype): (planes, out)."""
    dt = samples.dtype.type
    seq = np.empty((samples.shape[0], out), dtype=np.int64)
    if out > 1:
        alpha = dt(dt(size - k) / dt(out - 1))
        i = np.arange(out - 1).astype(samples.dtype)
        with np.errstate(all="ignore"):
            moved = (i[None, :] + samples[:, None]) * alpha
            first = samples * alpha
        diff = _c_int(moved) - _c_int(first)[:, None]
        seq[:, :-1] = (diff + (1 << 31)) % (1 << 32) - (1 << 31)     # int - int wraps around in 32 bits
    if out > 0:
        seq[:, -1] = size - k
    return seq


def fractional_array(x: np.ndarray, k: tuple, outs: tuple, samples: np.ndarray):
    """Values and int64 indices (into each plane or volume) of the pooling of x's last n dims; samples:
    (planes, n) in the order PyTorch reads them (2-d: width, height; 3-d: time, height, width)."""
    n = len(k)
    sizes = x.shape[-n:]
    xp = x.reshape((-1,) + sizes)
    planes = xp.shape[0]
    order = (1, 0) if n == 2 else (0, 1, 2)         # the sample of each spatial dim
    kk = tuple(max(v, 0) for v in k)                # (a kernel below 1 has an empty window)
    count = int(np.prod(kk, dtype=np.int64))
    budget.check_tensor((planes,) + tuple(outs) + (max(count, 1),), max(x.dtype.itemsize, 8))
    # per dim: the window starts, as (planes, *outs) grids, and (planes, *outs, *ks) positions
    starts, pos = [], []
    for d in range(n):
        seq = _starts(samples[:, order[d]], sizes[d], outs[d], k[d])
        grid = [planes] + [1] * n
        grid[1 + d] = outs[d]
        starts.append(seq.reshape(grid))
        spread = [planes] + [1] * (2 * n)
        spread[1 + d], spread[1 + n + d] = outs[d], kk[d]
        pos.append((seq[:, :, None] + np.arange(kk[d])[None, None, :]).reshape(spread))
    if count == 0:          # nothing is read: -inf at each window's start
        values = np.full((planes,) + tuple(outs), -np.inf, dtype=x.dtype)
        index = np.broadcast_to(pool._flat_index(starts, sizes), values.shape)
    else:
        for d in range(n):
            if pos[d].size and (pos[d].min() < 0 or pos[d].max() >= sizes[d]):
                raise RuntimeError(f"fractional_max_pool{n}d: a window left the input (its random samples put it "
                                   "out of range)")
        win = xp[(np.arange(planes).reshape((planes,) + (1,) * (2 * n)),) + tuple(pos)]
        win = win.reshape((planes,) + tuple(outs) + (count,))
        pick = pool._pick_max(win, np.ones(count, dtype=bool))     # (a window of -inf: its first element)
        values = np.take_along_axis(win, pick[..., None], axis=-1)[..., 0]
        offsets = np.unravel_index(pick, kk)
        index = pool._flat_index([s + o for s, o in zip(starts, offsets)], sizes)
    shape_ = x.shape[:-n] + tuple(outs)
    return (np.ascontiguousarray(values).reshape(shape_),
            np.ascontiguousarray(index, dtype=np.int64).reshape(shape_))


# ------------------------------------------------------------------------------------------- formulas

class _Formulas:
    """The rows' formulas for n spatial dims: the backward scatters into the maxima, its own backward gathers."""

    def __init__(self, n: int):
        self.n = n
        self.back = None            # the backward kernel's row (set below the table)

    def backward(self, F, g, input, kernel_size, output_size, result1):
        if F.tensors:
            return fractional_backward(g, input, result1, self.back)
        return pool.scatter_planes(g, pool._indices_array(result1), input.shape, self.n)

    def gather_back(self, F, gg, indices, shape_):
        return pool._FORMULAS[self.n].gather_back(F, gg, indices, shape_)

    def no_grad(self, F, gg, indices, shape_):
        return F.zeros(shape_, gg)

    def jvp(self, F, ts, xs, result, kernel_size, output_size, result1):
        """gather(self_t.flatten(-n), -1, result1.flatten(-n)).view_as(result1)."""
        return self.gather_back(F, ts[0], result1, None)

    def backward_jvp(self, F, ts, xs, result, indices, shape_):
        if ts[0] is None:
            return None
        return fractional_backward(ts[0], xs[1], indices, self.back)


_2D, _3D = _Formulas(2), _Formulas(3)

# fmt: off
_SAVES = ("self", "kernel_size", "output_size", "result1")
_KERNEL_INPUTS = ("grad_output", "self")
#                           node                                    forward saves
FRACTIONAL_MAX_POOL2D  = Op("FractionalMaxPool2DBackward0",         None, _SAVES, (_2D.backward,), saves_tensors=True,
                            versioned=("result1",), jvp=_2D.jvp)
FRACTIONAL_MAX_POOL3D  = Op("FractionalMaxPool3DBackward0",         None, _SAVES, (_3D.backward,), saves_tensors=True,
                            versioned=("result1",), jvp=_3D.jvp)
FRACTIONAL_BACKWARD2D  = Op("FractionalMaxPool2DBackwardBackward0", None, ("indices", "shape"),
                            (_2D.gather_back, _2D.no_grad), inputs=_KERNEL_INPUTS, saves_tensors=True,
                            jvp=_2D.backward_jvp)
FRACTIONAL_BACKWARD3D  = Op("FractionalMaxPool3DBackwardBackward0", None, ("indices", "shape"),
                            (_3D.gather_back, _3D.no_grad), inputs=_KERNEL_INPUTS, saves_tensors=True,
                            jvp=_3D.backward_jvp)
# fmt: on
_2D.back, _3D.back = FRACTIONAL_BACKWARD2D, FRACTIONAL_BACKWARD3D


def fractional_backward(g: Tensor, self, indices: Tensor, row: Op) -> Tensor:
    """fractional_max_pool{2,3}d_backward as a recorded op (under create_graph)."""
    in_shape = pool._shape_of(self)
    n = 2 if row is FRACTIONAL_BACKWARD2D else 3
    out = pool.scatter_planes(g._a, indices._a, in_shape, n)
    return apply(row, out, (g, self if self.__class__ is Tensor else None), (indices, in_shape))


# ------------------------------------------------------------------------------------------------ ops

def _sizes(shape_) -> str:
    return "[" + ", ".join(str(d) for d in shape_) + "]"


def _check_samples(x: np.ndarray, samples: np.ndarray, n: int) -> None:
    """fractional_max_pool_check_shape: the samples' dtype and shape against the input's."""
    if samples.dtype != x.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if samples.ndim != 3:
        raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got {samples.ndim}")
    batch, channels = (1, x.shape[0]) if x.ndim == n + 1 else x.shape[:2]
    if samples.shape[0] < batch:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if samples.shape[1] != channels:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if samples.shape[2] != n:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {n}; got {samples.shape[2]}.")


def _check_sizes(x: np.ndarray, k: tuple, outs: tuple, n: int) -> None:
    """The meta function's checks: the dims' count, non-empty planes, windows that fit, sizes not negative."""
    fn = "fractional_max_pool2d()" if n == 2 else "fractional_max_pool3d_out()"
    if x.ndim not in (n + 1, n + 2):
        raise RuntimeError(f"{fn}: Expected {n + 1}D or {n + 2}D tensor, but got: {_sizes(x.shape)}")
    for i in range(1, x.ndim):
        if x.shape[i] <= 0:
            raise RuntimeError(f"{fn}: Expected input to have non-zero size for non-batch dimensions, but got"
                               f"{_sizes(x.shape)} with dimension {i} being empty.")
    sizes = x.shape[-n:]
    if n == 2:
        for d, word in ((0, "height"), (1, "width")):
            if outs[d] + k[d] - 1 > sizes[d]:
                raise RuntimeError(f"{fn}: pool {word} {k[d]} too large relative to input {word} {sizes[d]}")
    else:
        for d, word in ((0, "time"), (2, "width"), (1, "height")):      # PyTorch's order
            if not (k[d] <= sizes[d] and outs[d] + k[d] - 1 < sizes[d]):
                raise RuntimeError(f"{fn}: pool {word} {k[d]} too large relative to input {word} {sizes[d]}")
    shape_ = x.shape[:-n] + tuple(outs)
    if min(outs) < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(outs)}: {_sizes(shape_)}")


def fractional_raw(a, kernel_size, output_size, samples, n: int):
    """torch._C._nn.fractional_max_pool{n}d(input, kernel_size, output_size, random_samples): the parser,
    the autograd check of the samples, the meta checks, the samples' checks, then the kernel."""
    fn = f"fractional_max_pool{n}d"
    pool._expect_tensor(a, fn)
    k = pool._ints(kernel_size, fn, "kernel_size", 2, n)
    outs = pool._ints(output_size, fn, "output_size", 3, n)
    if samples.__class__ is not Tensor:
        raise TypeError(f"{fn}(): argument 'random_samples' (position 4) must be Tensor, "
                        f"not {type(samples).__name__}")
    if samples.requires_grad and autograd.is_grad_enabled():
        raise RuntimeError(f"The function '{fn}' is not differentiable with respect to argument 'random_samples'. "
                           "This input cannot have requires_grad True.")
    count = "Ints" if n == 2 else "three Ints"
    if len(k) != n:
        raise RuntimeError(f"{fn}: kernel_size must either be a single Int or tuple of {count}")
    if len(outs) != n:
        raise RuntimeError(f"{fn}: output_size must either be a single Int or tuple of {count}")
    x, s = a._a, samples._a
    _check_sizes(x, k, outs, n)
    _check_samples(x, s, n)
    shape_ = x.shape[:-n] + tuple(outs)
    budget.check_tensor(shape_, x.dtype.itemsize)
    if not int(np.prod(shape_, dtype=np.int64)):
        values, index = np.zeros(shape_, dtype=x.dtype), np.zeros(shape_, dtype=np.int64)
    else:
        if x.dtype.kind != "f":
            raise NotImplementedError(f"\"{fn}_out_frame\" not implemented for '{type_word(x)}'")
        planes = int(np.prod(x.shape[:-n], dtype=np.int64))
        batch = 1 if x.ndim == n + 1 else x.shape[0]
        picked = np.ascontiguousarray(s[:batch]).reshape(planes, n)
        values, index = fractional_array(x, k, outs, picked)
    indices = Tensor(index)
    row = FRACTIONAL_MAX_POOL2D if n == 2 else FRACTIONAL_MAX_POOL3D
    return apply(row, values, (a,), (k, outs, indices)), indices


def _pooled(input, kernel_size, output_size, output_ratio, samples, n: int):
    """F.fractional_max_pool{n}d_with_indices: the output size from a ratio, the samples drawn, then the op."""
    fn = f"fractional_max_pool{n}d"
    if output_size is None and output_ratio is None:
        raise ValueError(f"{fn} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        if n == 2 and len(output_ratio) > 2:
            raise ValueError(f"{fn} requires output_ratio to either be a single Int or tuple of Ints.")
        ratio = pool._ntuple(output_ratio, n)
        output_size = [int(_size(input, d - n) * ratio[d]) for d in range(n)]
    if samples is None:
        batch = 1 if _dim(input) == n + 1 else _size(input, 0)
        samples = factories.rand(batch, _size(input, -n - 1), n, dtype=input.dtype)
    return fractional_raw(input, kernel_size, output_size, samples, n)


def _dim(input) -> int:
    if input.__class__ is not Tensor:
        raise AttributeError(f"'{type(input).__name__}' object has no attribute 'dim'")
    return input.dim()


def _size(input, d: int) -> int:
    if input.__class__ is not Tensor:
        raise AttributeError(f"'{type(input).__name__}' object has no attribute 'size'")
    return input.size(d)


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    return _pooled(input, kernel_size, output_size, output_ratio, _random_samples, 2)


@autocast_policy("fp32")
def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    pair = _pooled(input, kernel_size, output_size, output_ratio, _random_samples, 2)
    return pair if return_indices else pair[0]


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    return _pooled(input, kernel_size, output_size, output_ratio, _random_samples, 3)


@autocast_policy("fp32")
def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                          _random_samples=None):
    pair = _pooled(input, kernel_size, output_size, output_ratio, _random_samples, 3)
    return pair if return_indices else pair[0]
