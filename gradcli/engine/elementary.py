"""The float32 elementary functions, correctly rounded: each computed in float64 and rounded once."""

# PyTorch computes float32 exp, log, sin, tanh, ... by calling whatever vector-math library it was built with
# (MKL's VML or Sleef on x86-64), so its last bits depend on the build and the CPU (docs/numerics.md,
# "Elementary functions"). gradcli gives the portable answer instead: the correctly rounded value.
# For float32 inputs a function is evaluated by numpy in float64 (an error below one float64 ulp) and the
# result rounded once to float32. That is the correctly rounded value unless the exact result lies within about
# one float64 ulp of a midpoint between two float32 numbers, where the float64 value can land on the wrong side
# ("double rounding"): of all 2^32 float32 inputs, exp and tanh miss none and log 5 (docs/numerics.md;
# tools/elementary_bits.py measures it). float16 inputs take that float32 value rounded to float16, as PyTorch
# computes float16 in float and rounds its result (docs/numerics.md, "float16").
# float64 inputs go to numpy's float64 functions unchanged.
#
# sqrt needs no round trip: IEEE sqrt is correctly rounded in every format (and rounding a float64 sqrt
# to float32 gives the same bits, since 53 >= 2 * 24 + 2), so numpy's float32 sqrt is the answer. rsqrt is
# not a library call in PyTorch but 1 / sqrt(x) in float32 (two IEEE operations), so it stays that.
#
# Cost: three passes instead of one (cast up, the float64 function, cast down). Above _CHUNKED elements
# they run block by block through one float64 block of _BLOCK elements (5.1 ms for exp of 4096x1000,
# against 6.4 ms for the ufunc's own casting loop with dtype= and out=, whose 8192-element buffers cost
# more calls, and 14 ms for astype, function, astype, which page-faults two 32 MB arrays into being);
# below _CHUNKED astype is cheaper (no set-up). numpy's float32 exp takes 1.9 ms.

import math

import numpy as np

from gradcli.engine import workers

F64 = np.dtype(np.float64)
_ROUNDED = "feE"                # dtype.char of float32, float16, bfloat16: computed in float64 (the halves through
                                # float32)
_CHUNKED = 8192                 # elements: see the top of the module (measured crossover: 8192 to 65536)
_BLOCK = 1 << 18                # elements per float64 block (2 MB): the fastest of 2^12 to 2^22 on 4096x1000
_ALIGN = 1 << 13                # elements: where the pieces of an array under two blocks may start


def _once(ufunc, name: str):
    """ufunc on float32/float16 arrays: evaluated in float64, rounded once; any other dtype: ufunc itself."""
    def function(x, out=None):
        if x.dtype.char not in _ROUNDED:
            return ufunc(x) if out is None else ufunc(x, out=out)
        if x.dtype.char in "eE":
            return _via_float32(function, x, out)
        if out is None:
            if x.size <= _CHUNKED:
                return ufunc(x.astype(F64)).astype(x.dtype)
            out = np.empty_like(x)
        if x.flags.c_contiguous and out.flags.c_contiguous:
            return _blocks(ufunc, x, out)
        if x.flags.f_contiguous and out.flags.f_contiguous:        # a transposed tensor and its result
            _blocks(ufunc, x.T, out.T)
            return out
        return ufunc(x, dtype=F64, out=out, casting="unsafe")
    function.__name__ = function.__qualname__ = name
    function.ufunc = ufunc          # the float64 function, for tools/elementary_bits.py and the tests
    return function


def _once2(ufunc, name: str):
    """A binary ufunc (atan2, pow) the same way; both operands already have the result's dtype."""
    def function(x, y):
        dt = np.result_type(x, y)
        if dt.char not in _ROUNDED:
            return ufunc(x, y)
        if dt.char in "eE":
            return np.asanyarray(function(np.asanyarray(x, np.float32), np.asanyarray(y, np.float32))).astype(dt)[()]
        if np.size(x) <= _CHUNKED and np.size(y) <= _CHUNKED:
            return np.asanyarray(ufunc(np.asanyarray(x, F64), np.asanyarray(y, F64))).astype(dt)[()]
        out = np.empty(np.broadcast_shapes(np.shape(x), np.shape(y)), dt)
        return ufunc(x, y, dtype=F64, out=out, casting="unsafe")
    function.__name__ = function.__qualname__ = name
    function.ufunc = ufunc
    return function


def _blocks(ufunc, x: np.ndarray, out: np.ndarray) -> np.ndarray:
    """ufunc of C-contiguous x into C-contiguous out (x itself allowed), through float64 blocks; a big
    array in pieces on the worker threads, each with a block of its own. The pieces start on the blocks'
    boundaries when there are blocks to share (each block then computed as one thread computes it), else
    on multiples of _ALIGN elements."""
    source, target = x.reshape(-1), out.reshape(-1)
    if workers.worth(source.size):
        def piece(begin: int, end: int) -> None:
            _run_blocks(ufunc, source[begin:end], target[begin:end])
        workers.split(source.size, piece, _BLOCK if source.size >= 2 * _BLOCK else _ALIGN)
    else:
        _run_blocks(ufunc, source, target)
    return out


def _via_float32(function, x: np.ndarray, out=None):
    """A float16 (or bfloat16) input as PyTorch computes it: its float kernel (here the correctly rounded float32
    value), the result rounded to the input's type, so twice rounded as there."""
    r = function(x.astype(np.float32))
    if out is None:
        return r.astype(x.dtype)
    np.copyto(out, r, casting="unsafe")
    return out


def _run_blocks(ufunc, source: np.ndarray, target: np.ndarray) -> None:
    block = np.empty(min(source.size, _BLOCK), F64)
    for start in range(0, source.size, _BLOCK):
        part = block[:min(_BLOCK, source.size - start)]
        np.copyto(part, source[start:start + _BLOCK])
        ufunc(part, out=part)
        np.copyto(target[start:start + _BLOCK], part, casting="unsafe")


exp = _once(np.exp, "exp")
expm1 = _once(np.expm1, "expm1")
exp2 = _once(np.exp2, "exp2")
log = _once(np.log, "log")
log1p = _once(np.log1p, "log1p")
log2 = _once(np.log2, "log2")
log10 = _once(np.log10, "log10")
sin = _once(np.sin, "sin")
cos = _once(np.cos, "cos")
tan = _once(np.tan, "tan")
asin = _once(np.arcsin, "asin")
acos = _once(np.arccos, "acos")
atan = _once(np.arctan, "atan")
asinh = _once(np.arcsinh, "asinh")
acosh = _once(np.arccosh, "acosh")
atanh = _once(np.arctanh, "atanh")
sinh = _once(np.sinh, "sinh")
cosh = _once(np.cosh, "cosh")
tanh = _once(np.tanh, "tanh")
atan2 = _once2(np.arctan2, "atan2")
pow = _once2(np.power, "pow")
hypot = _once2(np.hypot, "hypot")
sqrt = np.sqrt                  # correctly rounded as it is (see the top of the module)


def rsqrt(x, out=None):
    """1 / sqrt(x) in the input's own precision, as PyTorch's kernel computes it (Vectorized::rsqrt is a
    division by a square root): two IEEE operations, so the same bits on every machine (measured 100%);
    float16 in float, as PyTorch's kernel computes it. bfloat16 too, but for the elements past the last whole
    vector of 32 (AVX-512's, the reference machine's; 16 on AVX2), which the kernel's scalar loop computes as
    1 / sqrt(x) in bfloat16 steps, the square root rounded first."""
    if x.dtype.char == "E" and x.size % 32 and x.flags.f_contiguous and not x.flags.c_contiguous:
        r = rsqrt(x.T).T            # (memory order: the kernel's for a transposed tensor)
        if out is None:
            return r
        np.copyto(out, r)
        return out
    if x.dtype.char == "E" and x.flags.c_contiguous and x.size % 32:
        r = _via_float32(rsqrt, x)
        flat, tail = r.reshape(-1), x.reshape(-1)[x.size - x.size % 32:]
        flat[x.size - x.size % 32:] = np.reciprocal(np.sqrt(tail))      # (ml_dtypes: each in float, rounded)
        if out is None:
            return r
        np.copyto(out, r)
        return out
    if x.dtype.char in "eE":
        return _via_float32(rsqrt, x, out)
    return np.reciprocal(np.sqrt(x), out=out)


# ------------------------------------------------------------------------------------------------- erf
# numpy has no erf. float64 inputs keep CPython's math.erf per element (the C library's). float32 and
# float16 inputs take a vectorised float64 erf made of two polynomials (tools/erf_fit.py makes them:
# relative error 2.2e-16 on their intervals, below 5e-16 once evaluated), then the few elements whose
# float64 value lies within _ERF_SLACK (relative) of a rounding midpoint of the target dtype (3 in 10^6)
# are recomputed with math.erf, so the result rounds as math.erf's would: as correctly rounded as exp.
#   |x| < 0.75:      erf(x) = x S(t),             t = x^2 / 0.75^2 * 2 - 1      (S: erf(x) / x, even in x)
#   0.75 <= |x| < 4: erf(x) = 1 - exp(-x^2) M(t), t = (|x| - 0.75) / 3.25 * 2 - 1  (M: erfc(x) exp(x^2))
#   |x| >= 4:        erf(x) = +-1 in float32 and float16 (erfc(4) = 1.5e-8 < 2^-25, half an ulp below 1)
# Both polynomials are evaluated on every element, side by side in one (2, n) array, by Horner's rule
# over blocks that stay in cache: branch-free (a boolean gather costs more than the polynomial) and about
# 50 numpy calls a block. From 10^5 elements on it costs a third of math.erf per element; below 1024
# elements, where the fixed cost of the polynomials dominates, math.erf itself is used.
_ERF_SMALL = (     # relative error 2.22e-16
    1.0309528156012642, -0.0896037671090999, 0.007314485234578211,
    -0.000480872478031452, 2.599164517570422e-05, -1.186568422147177e-06,
    4.678558330163392e-08, -1.6217928017585119e-09, 5.012952566544622e-11,
    -1.3998947677380024e-12, 3.552903127102359e-14,
)
_ERF_MID = (     # relative error 2.22e-16
    0.22050569220490668, -0.13158783482358447, 0.07442604345630974,
    -0.04015740991123857, 0.02077438356285378, -0.010345809593061943,
    0.00497633256497541, -0.0023182485686570565, 0.0010484094120121695,
    -0.00046120439497137754, 0.00019769901308591394, -8.270452641540634e-05,
    3.38104811607662e-05, -1.3522756563015685e-05, 5.297937426717388e-06,
    -2.0370516971972917e-06, 7.676903079068009e-07, -2.811042365785059e-07,
    1.0239508631781533e-07, -3.965625959687207e-08, 1.3872980024543317e-08,
    -2.9084589873961868e-09, 1.0293223172078393e-09, -1.0388975191565462e-09,
    3.38675369946067e-10,
)
_ERF_SLACK = 1e-13
_ERF_BLOCK = 8192
_ERF_VECTORISED = 1024          # elements: below, math.erf per element is cheaper than the polynomials' set-up
_ERF_POLY = np.array([list(_ERF_SMALL) + [0.0] * (len(_ERF_MID) - len(_ERF_SMALL)), list(_ERF_MID)]).T[:, :, None]
_ERF_SCALE = np.array([[2.0 / 0.5625], [2.0 / 3.25]])
_ERF_SHIFT = np.array([[-1.0], [-0.75 * 2.0 / 3.25 - 1.0]])


def erf64(x: np.ndarray, complement: bool = False) -> np.ndarray:
    """erf (erfc) of a float64 array holding float32/float16 values, vectorised, before the midpoint repair."""
    out = np.empty_like(x)
    flat, result = x.ravel(order="K"), out.ravel(order="K")     # the same element order; result is a view
    for start in range(0, flat.size, _ERF_BLOCK):
        _erf64_block(flat[start:start + _ERF_BLOCK], result[start:start + _ERF_BLOCK], complement)
    return out


def _erf64_block(x: np.ndarray, out: np.ndarray, complement: bool = False) -> None:
    """erf (or, with `complement`, erfc) of one block; erfc is nan from 4 on, where the polynomials stop
    (erfc's caller computes those elements with math.erfc)."""
    a = np.abs(x)
    t = np.empty((2, x.size))
    np.multiply(x, x, out=t[0])
    np.clip(a, 0.75, 4.0, out=t[1])
    decay = np.exp(-(t[1] * t[1]))
    t *= _ERF_SCALE
    t += _ERF_SHIFT
    p = np.empty_like(t)
    p[...] = _ERF_POLY[-1]
    for c in _ERF_POLY[-2::-1]:
        p *= t
        p += c
    small, erfc = p
    np.multiply(small, x, out=out)                      # x S(t): the sign and -0.0 come with x
    erfc *= decay
    if complement:
        # erfc(x) = 1 - x S(t) below 0.75 (a result above 0.28: no cancellation), erfc(|x|) from 0.75, and
        # 2 - erfc(|x|) for negative x; from 4 on nan (math.erfc's elements), to -4 and below 2 (float32's
        # and float16's value there: 2 - erfc(4) is within half an ulp of 2)
        np.subtract(1.0, out, out=out)
        np.copyto(out, erfc, where=x >= 0.75)
        np.subtract(2.0, erfc, out=erfc)
        np.copyto(out, erfc, where=x <= -0.75)
        out[x >= 4.0] = np.nan
        out[x <= -4.0] = 2.0
        return
    np.subtract(1.0, erfc, out=erfc)
    np.copysign(erfc, x, out=erfc)
    np.copyto(out, erfc, where=a >= 0.75)
    np.copyto(out, np.sign(x), where=a >= 4.0)          # +-1 (nan stays nan: a >= 4 is False for it)


def erf(x: np.ndarray) -> np.ndarray:
    """erf elementwise: float32 correctly rounded (as above), float64 by math.erf, float16 by the approximation
    PyTorch's Half kernel runs in float (_erf_half)."""
    if x.__class__ is not np.ndarray and isinstance(x, np.ndarray):    # a meta array: its one element
        from gradcli.engine.meta import on_one
        return on_one(erf, x, x.shape)
    if x.dtype.char in "eE":
        return _erf_half(x)[()]
    if x.dtype.char not in _ROUNDED or x.size < _ERF_VECTORISED:
        # math.erf per element, rounded once: the same values (frompyfunc hands a 0-d input back as a float)
        return np.asanyarray(np.frompyfunc(math.erf, 1, 1)(x.astype(F64)), F64).astype(x.dtype)
    x64 = np.asanyarray(x, F64)
    r = erf64(x64)
    near = _near_midpoint(r, x.dtype)
    if near.any():
        r[near] = [math.erf(v) for v in x64[near].tolist()]
    return r.astype(x.dtype)[()]


def _erf_half(x: np.ndarray) -> np.ndarray:
    """float16 erf as PyTorch's CPU kernel computes it: in float, by its vectorised float erf (Abramowitz and
    Stegun's 7.1.26 with fused multiply-adds: t = 1 / fma(p, |x|, 1), a degree-5 polynomial in t by fused
    Horner steps, sign(x) * fma(-exp(-x^2) * t, r, 1)), for every element and length; the result rounded to
    float16. Its exp is the vector library's, here the correctly rounded one: all 63,488 finite float16 inputs
    agree with PyTorch 2.13 bit for bit. (It loses small arguments, erf(1.2e-7) is 0, as PyTorch's does.)"""
    from gradcli.engine.rng import _fma32
    f = np.float32
    x32 = np.asanyarray(x, f)
    t = (f(1.0) / _fma32(f(0.3275911), np.abs(x32), f(1.0))).astype(f)
    r = _fma32(f(1.061405429), t, f(-1.453152027))
    for c in (f(1.421413741), f(-0.284496736), f(0.254829592)):
        r = _fma32(r, t, c)
    e = exp(-(x32 * x32).astype(f))
    out = _fma32((-e * t).astype(f), r, f(1.0))
    return np.where(np.signbit(x32), -out, out).astype(x.dtype)


def erfc(x: np.ndarray) -> np.ndarray:
    """erfc elementwise, as erf: float32 correctly rounded (the polynomials below 4, math.erfc from 4 on,
    where the result falls towards float32's subnormals, and near a rounding midpoint), float16 rounded from
    float32, float64 by math.erfc."""
    if x.__class__ is not np.ndarray and isinstance(x, np.ndarray):    # a meta array: its one element
        from gradcli.engine.meta import on_one
        return on_one(erfc, x, x.shape)
    if x.dtype.char in "eE":
        return _via_float32(erfc, x)[()]
    if x.dtype.char not in _ROUNDED or x.size < _ERF_VECTORISED:
        return np.asanyarray(np.frompyfunc(math.erfc, 1, 1)(x.astype(F64)), F64).astype(x.dtype)
    x64 = np.asanyarray(x, F64)
    r = erf64(x64, complement=True)
    near = _near_midpoint(r, x.dtype) | (x64 >= 4.0)
    if near.any():
        r[near] = [math.erfc(v) for v in x64[near].tolist()]
    return r.astype(x.dtype)[()]


def _near_midpoint(r: np.ndarray, dt: np.dtype) -> np.ndarray:
    """Where float64 values lie within _ERF_SLACK (relative) of a midpoint between two numbers of dtype dt."""
    if dt.char == "f":
        # a float32 midpoint is a float64 whose 29 low mantissa bits are 1000...0: look at those bits, and
        # send every value below float32's normal range (other midpoints) to the slow path too
        low = (r.view(np.uint64) & _LOW29) - _FROM
        return (low < _WIDTH) | (np.abs(r) < _TINY32)
    y = r.astype(dt)
    back = y.astype(F64)
    side = np.where(r > back, np.inf, -np.inf).astype(dt)
    mid = (back + np.nextafter(y, side).astype(F64)) * 0.5
    return np.abs(r - mid) <= _ERF_SLACK * np.abs(r)


_LOW29 = np.uint64((1 << 29) - 1)
_SLACK_ULPS = 1 << 11                   # float64 ulps: 2^11 * 2^-52 > _ERF_SLACK, relative to the leading bit
_FROM = np.uint64((1 << 28) - _SLACK_ULPS)
_WIDTH = np.uint64(2 * _SLACK_ULPS)
_TINY32 = 2.0 ** -126
