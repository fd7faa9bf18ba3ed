"""Fused multiply-add on numpy arrays: x*y + z rounded once, as PyTorch's x86-64 CPU kernels compute it."""

from __future__ import annotations

import numpy as np

from gradcli.engine.rng import _SPLIT, _fma64, _round_to_odd_fix, _two_sum_err
from gradcli.engine.cascade import thread_ranges

_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
# A float64 sum lies exactly halfway between two float32 values when its 29 low mantissa bits are 1000...0
_LOW_BITS, _HALF_WAY = 0x1FFFFFFF, 0x10000000


def fma(x, y, z, out=None):
    """x*y + z rounded once, in z's float dtype (float32 or float64), into `out` if given.

    PyTorch's vectorised kernels are compiled with fused multiply-adds (GCC contracts `a*b + c` even
    across Vectorized<T> operators), in the vector body and in the scalar tail alike, so wherever a
    kernel's formula has a product feeding a sum this is how it rounds. float32: the product is exact
    in float64, so the float64 sum rounded to float32 is the fused result unless that sum lies exactly
    halfway between two float32 values (double rounding); there the sum's error term (TwoSum) says which
    way the exact value lies. float64: Dekker's exact product and a sum rounded to odd (rng._fma64).
    Other dtypes: the plain expression."""
    dtype = z.dtype if z.__class__ is np.ndarray else np.result_type(x, y, z)
    if dtype == _F32:                   # first: the optimisers' hot path
        return sum_rounded(np.multiply(x, y, dtype=np.float64), z, out)
    if dtype == _F64:
        shape = np.broadcast_shapes(np.shape(x), np.shape(y), np.shape(z))
        r = _fma64(x, y, z) if shape else _fma64(np.reshape(x, (1,)), y, z).reshape(())
    else:
        r = x * y + z
    if out is None:
        return r
    np.copyto(out, r, casting="same_kind")
    return out


def one_minus_square(y: np.ndarray) -> np.ndarray:
    """fma(-y, y, 1): 1 - y*y rounded once (the tanh derivative from tanh's output, in PyTorch's kernels).
    For float64 values in [-1, 1] (what tanh gives) a shorter path than fma's general one, which a double
    gradcheck through tanh runs on every backward: the square split exactly (Dekker's square), 1 - the
    square's high part with its error (TwoSum), the low parts added rounded to odd, then one rounding.
    In that range nothing can overflow, and a square too small to split exactly is far below 1's last bit."""
    if y.dtype != _F64 or not y.size or not np.abs(y).max() <= 1.0:     # (a nan fails the test too)
        return fma(-y, y, y.dtype.type(1))
    p = y * y
    t = y * _SPLIT
    high = t - (t - y)
    low = y - high
    e = ((high * high - p) + 2.0 * high * low) + low * low             # y*y == p + e exactly
    th = 1.0 - p
    tl = _two_sum_err(1.0, -p, th)
    v = tl - e
    v = _round_to_odd_fix(v, _two_sum_err(tl, -e, v))
    return np.where(v == 0, th, th + v)


def sum_rounded(p: np.ndarray, z, out=None):
    """p + z rounded once to float32, where p holds float64 products of float32 values (exact) and z is float32:
    fma's float32 path once the products are made. Adam's step makes both of its products first and rounds
    them in one call (one tie test for the pair of state arrays instead of one each)."""
    s = p + z
    tie = np.bitwise_and(s.view(np.int64), _LOW_BITS) == _HALF_WAY
    if np.count_nonzero(tie):           # about one element in 2**29 for data that is not made up
        back = s - p
        err = (p - (s - back)) + (z - back)
        tie &= err != 0
        # an exact sum on the halfway point rounds once already (log_softmax's backward meets one in most
        # steps: its gradient is zero but at the targets): the nudge only where the sum was inexact
        if np.count_nonzero(tie):
            s = np.where(tie, np.nextafter(s, np.where(err > 0, np.inf, -np.inf)), s)
    if out is None:
        return s.astype(_F32)
    np.copyto(out, s, casting="same_kind")
    return out




def vector_body(n: int, dt) -> list:
    """The element ranges of n contiguous elements that a PyTorch CPU kernel runs in its vector body
    (Loops.h vectorized_loop, two 32-byte vectors at a time), after at::parallel_for has split [0, n)
    into one chunk per thread (2 here) above the grain size; the rest of each chunk is its scalar tail."""
    step = 64 // dt.itemsize
    return [(begin, end - (end - begin) % step, end) for begin, end in thread_ranges(n)]


def vectorised(*operands) -> bool:
    """Whether TensorIterator runs its vectorised loop over these arrays: each contiguous or one
    broadcast value (a strided operand sends it element by element through the scalar code)."""
    return all(np.ndim(a) == 0 or a.size == 1 or a.flags.c_contiguous for a in operands)


def by_loop(vector, scalar, *operands):
    """A kernel whose vector code rounds differently from its scalar code: the vector formula's values
    in the vector body, the scalar formula's elsewhere (all of them when an operand is strided)."""
    if not vectorised(*operands):
        return scalar
    out = np.array(scalar)
    flat, vec = out.reshape(-1), np.broadcast_to(vector, out.shape).reshape(-1)
    for begin, tail, _ in vector_body(out.size, out.dtype):
        flat[begin:tail] = vec[begin:tail]
    return out


def by_rows(vector, scalar, *operands):
    """by_loop for operands that may broadcast into a C-contiguous result: TensorIterator coalesces the
    trailing dims along which every operand steps evenly into its inner loop and runs the vector body row by
    row (an operand steady along the inner dim counts as a broadcast value), a thread's range cut at the rows'
    ends; any other layout goes element by element through the scalar code."""
    out = np.array(scalar)
    views = [np.broadcast_to(o, out.shape) for o in operands if np.ndim(o) and np.size(o) != 1]
    if all(v.flags.c_contiguous for v in views):
        return by_loop(vector, out, *operands)
    # the loop runs in the memory order of the first operand that does not broadcast (a transposed pair
    # is one contiguous run): its dims by falling stride
    full = [v for v in views if 0 not in v.strides]
    perm = sorted(range(out.ndim), key=lambda d: -full[0].strides[d]) if full else list(range(out.ndim))
    views = [v.transpose(perm) for v in views]
    shape = tuple(out.shape[d] for d in perm)
    dims = [d for d in range(out.ndim) if shape[d] != 1]
    last = dims[-1]
    if any(v.strides[last] not in (0, v.itemsize) for v in views):
        return out
    inner, prev = shape[last], last
    for d in reversed(dims[:-1]):
        if not all(v.strides[d] == v.strides[prev] * shape[prev] for v in views):
            break
        inner *= shape[d]
        prev = d
    n, step = out.size, 64 // out.dtype.itemsize
    idx = np.arange(n)
    start = idx - idx % inner
    end = start + inner
    for begin, stop in thread_ranges(n)[1:]:        # a thread's range starts a row of its own
        cut = (idx >= begin) & (start < begin)
        start = np.where(cut, begin, start)
        ahead = (idx < begin) & (end > begin)
        end = np.where(ahead, begin, end)
    length = end - start
    vec = (idx - start < length - length % step).reshape(shape).transpose(np.argsort(perm))
    np.copyto(out, vector, where=vec)
    return out


def fused_body(n: int, dt) -> list:
    """The element ranges where a vectorised CPU kernel over n contiguous elements, one of whose operands
    is a single broadcast value, fuses its multiply-add; elsewhere the product with that value is
    rounded once before the loop (the compiler hoists it) and then added.

    The vector body (vector_body) is fused; the scalar tail of r elements is vectorised by GCC itself:
    for r up to one 16-byte vector all fused, else one fused element, whole 16-byte vectors not fused,
    and the last (r - 1) mod lanes fused again (measured on the oracle, every r, float32 and float64)."""
    lanes = 16 // dt.itemsize
    ranges = []
    for begin, tail, end in vector_body(n, dt):
        r = end - tail
        if r <= lanes:
            ranges.append((begin, end))
            continue
        ranges.append((begin, tail + 1))
        ranges.append((end - (r - 1) % lanes, end))
    return [(a, b) for a, b in ranges if b > a]
