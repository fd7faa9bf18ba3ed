"""The orthogonal polynomials of torch.special: chebyshev_polynomial_t/u/v/w, their shifted forms,
hermite_polynomial_h/he, laguerre_polynomial_l and legendre_polynomial_p, p(x, n).

Math.h's kernels, vectorised: x and n promoted together (integers to the default float dtype), n then read as
an int64 (truncated; nan, inf and values past int64 as its smallest value, which C++'s conversion gives on
x86-64, so a polynomial of them is 0), the closed forms through acos where Math.h takes them (|x| < 1 and n past
a few), else the three-term recurrence in the dtype, its products fused, stopped early where a value turns nan
(as there). PyTorch records no node for them: they have no derivative, and a result never requires grad.
"""

from __future__ import annotations

import math

import numpy as np

from gradcli.engine import elementary as cr
from gradcli.engine.fma import fma
from gradcli.engine.recording import broadcast_error, operands, type_word
from gradcli.engine.tensor import Tensor

_I64_MIN = np.iinfo(np.int64).min
_F64 = np.dtype(np.float64)
_FEW = 16
# The recurrences run one step per degree, each a few numpy calls (some 100 µs on a busy machine): past these many
# steps (or element steps) gradcli refuses rather than loop for minutes (PyTorch's C++ loop takes about a
# nanosecond a step)
_MAX_STEPS = 1 << 14
_MAX_WORK = 1 << 24


def _degree(n: np.ndarray) -> np.ndarray:
    """static_cast<int64_t>(n) as x86-64 computes it: truncation, and INT64_MIN for nan, inf and overflow."""
    if n.dtype.kind not in "fV":
        return n.astype(np.int64)
    ok = np.isfinite(n) & (np.abs(n) < 2.0 ** 63)
    with np.errstate(invalid="ignore"):
        return np.where(ok, np.trunc(np.where(ok, n, 0)), 0).astype(np.int64) + np.where(ok, 0, _I64_MIN)


def _recur(name: str, live: np.ndarray, start: int, n: np.ndarray, p, q, step) -> np.ndarray:
    """q after `q = step(k, p, q, where)` (p taking q's value) for k = start, start + 1, ... while k <= n and q is
    not nan, on the elements of the flat mask `live` (p, q: the starting values; `where`: the positions the step
    computes); elsewhere the starting q. The arrays shrink to the elements still running as others finish."""
    result = q.copy()
    idx = np.flatnonzero(live)
    p, q, nn = p[idx], q[idx], n[idx]
    k, steps, work = start, 0, 0
    while idx.size:
        active = (k <= nn) & ~np.isnan(q)
        if not active.all():
            result[idx] = q
            idx, p, q, nn = idx[active], p[active], q[active], nn[active]
            if not idx.size:
                break
        steps += 1
        work += idx.size
        if steps > _MAX_STEPS or work > _MAX_WORK:
            raise NotImplementedError(f"gradcli does not implement torch.special.{name} for degrees this high "
                                      f"(its recurrence would run past {_MAX_STEPS} steps)")
        p, q = q, step(k, p, q, idx)
        k += 1
    return result


def _fused(a, b, c):
    """a*b + c rounded once, and c itself where c is infinite and a, b finite (the hardware's answer, which
    fma's exact-product emulation turns into nan when the product a*b alone overflows). A few float64 elements
    (a recurrence's usual case) go element by element through _fma_float, some fifty times faster there."""
    a, b, c = np.broadcast_arrays(a, b, c)
    if c.dtype == _F64 and c.size <= _FEW:
        return np.array([_fma_float(x, y, z) for x, y, z in zip(a.tolist(), b.tolist(), c.tolist())], _F64)
    r = fma(a, b, c)
    return np.where(np.isinf(c) & np.isfinite(a) & np.isfinite(b), c, r)


def _fma_float(a: float, b: float, c: float) -> float:
    """a*b + c rounded once, for Python floats: the exact value as a quotient of integers (each float is an
    integer over a power of two), and CPython's correctly rounded integer division."""
    if not (math.isfinite(a) and math.isfinite(b) and math.isfinite(c)):
        return c if math.isinf(c) and math.isfinite(a) and math.isfinite(b) else a * b + c
    na, da = a.as_integer_ratio()
    nb, db = b.as_integer_ratio()
    nc, dc = c.as_integer_ratio()
    num = na * nb * dc + nc * da * db
    if num == 0:
        return a * b + c                # an exact zero takes the sign IEEE arithmetic gives it
    try:
        return num / (da * db * dc)
    except OverflowError:
        return math.inf if num > 0 else -math.inf


def _t(k, t):
    """An int64 as the dtype T (C++'s conversion)."""
    return np.asanyarray(k).astype(t)


def _chebyshev(kind: str, shifted: bool, name: str, x: np.ndarray, n: np.ndarray) -> np.ndarray:
    t = x.dtype.type
    one = t(1)
    y = x + x - one if shifted else x              # the argument of the unshifted polynomial
    two_y = y + y
    with np.errstate(all="ignore"):
        first = {"t": y, "u": two_y, "v": two_y - one, "w": two_y + one}[kind]
        limit = (4 if kind == "w" else 6) if shifted else {"t": 6, "u": 8, "v": 8, "w": 8}[kind]
        closed = (n > limit) & (np.abs(y) < one)            # the closed forms through the angle
        at, value = _ends(kind, shifted, x, n)
        out = _recur(name, (n >= 2) & ~closed & ~at, 2, n, np.ones_like(x), first.copy(),
                     lambda k, p, q, sel: _fused(two_y[sel], q, -p))
        out = np.where(n == 1, first, out)
        out = np.where(n == 0, one, out)
        if closed.any():
            out = np.where(closed, _angle_form(kind, shifted, y, n, x), out)
        out = np.where(at, value, out)
        return np.where(n < 0, t(0), out)


def _angle_form(kind: str, shifted: bool, y: np.ndarray, n: np.ndarray, x: np.ndarray) -> np.ndarray:
    """cos(n theta), sin((n + 1) theta) / sin(theta), ... with theta = acos(y), and their limits where the
    denominator is 0 (sin) or the half angle's sine or cosine is 1."""
    t = y.dtype.type
    theta = cr.acos(y)
    nt = _t(n, t)
    sign = np.where(n % 2 == 0, t(1), t(-1))
    twice = _t(n + n + 1, t)
    if kind == "t":
        return cr.cos(nt * theta)
    if kind == "u":
        s = cr.sin(theta)
        m = _t(n + 1, t)
        return np.where(s != 0, cr.sin(m * theta) / s, m * cr.cos(m * theta) / y)
    half = theta / t(2)
    if kind == "v":
        return np.where(cr.sin(half) != 1, cr.cos((nt + t(0.5)) * theta) / cr.cos(half), sign * twice)
    fallback = sign if shifted else np.where(x > 0, twice, sign)
    return np.where(cr.cos(half) != 1, cr.sin((nt + t(0.5)) * theta) / cr.sin(half), fallback)


def _ends(kind: str, shifted: bool, x: np.ndarray, n: np.ndarray):
    """Where Math.h returns at once (|x| = 1; shifted: x = 1 and x = 0), and the values there."""
    t = x.dtype.type
    sign = np.where(n % 2 == 0, t(1), t(-1))
    m, twice = _t(n + 1, t), _t(n + n + 1, t)
    ones = np.ones_like(x)
    top = {"t": ones, "u": m * ones, "v": ones, "w": twice * ones}[kind]
    bottom = {"t": sign, "u": sign * m, "v": sign * twice, "w": sign}[kind]
    if shifted:
        return (x == 1) | (x == 0), np.where(x == 1, top, bottom)
    return np.abs(x) == 1, np.where(x > 0, top, bottom)


_HERMITE_LIMIT = {np.dtype(np.float32): 128, np.dtype(np.float64): 512}


def _hermite(physicists: bool, name: str, x: np.ndarray, n: np.ndarray) -> np.ndarray:
    """H_n (physicists': 2x q - 2k p, k stepping by 2) or He_n (x q - k p); nan past degree 128 (float32) or 512
    (float64), as Math.h caps them."""
    t = x.dtype.type
    first = x + x if physicists else x
    with np.errstate(all="ignore"):
        if physicists:
            two_x = x + x
            out = _recur(name, (n >= 2) & (n <= _HERMITE_LIMIT[x.dtype]), 1, n - 1, np.ones_like(x), first.copy(),
                         lambda k, p, q, sel: _fused(two_x[sel], q, -(_t(k + k, t) * p)))
        else:
            out = _recur(name, (n >= 2) & (n <= _HERMITE_LIMIT[x.dtype]), 1, n - 1, np.ones_like(x), first.copy(),
                         lambda k, p, q, sel: _fused(x[sel], q, -(_t(k, t) * p)))
        out = np.where(n > _HERMITE_LIMIT[x.dtype], t(np.nan), out)
        out = np.where(n == 1, first, out)
        out = np.where(n == 0, t(1), out)
        return np.where(n < 0, t(0), out)


def _laguerre(name: str, x: np.ndarray, n: np.ndarray) -> np.ndarray:
    """L_n: ((2k + 1 - x) q - k p) / (k + 1); 1 at x = 0."""
    t = x.dtype.type
    with np.errstate(all="ignore"):
        first = t(1) - x
        out = _recur(name, (n >= 2) & (x != 0), 1, n - 1, np.ones_like(x), first.copy(),
                     lambda k, p, q, sel: _fused(_t(k + k, t) + first[sel], q, -(_t(k, t) * p)) / _t(k + 1, t))
        out = np.where(n == 1, first, out)
        out = np.where((n == 0) | (x == 0), t(1), out)
        return np.where(n < 0, t(0), out)


def _legendre(name: str, x: np.ndarray, n: np.ndarray) -> np.ndarray:
    """P_n: ((2k + 1) x q - k p) / (k + 1); +-1 at |x| = 1."""
    t = x.dtype.type
    with np.errstate(all="ignore"):
        out = _recur(name, (n >= 2) & (np.abs(x) != 1), 1, n - 1, np.ones_like(x), x.copy(),
                     lambda k, p, q, sel: _fused(_t(k + k + 1, t) * x[sel], q, -(_t(k, t) * p)) / _t(k + 1, t))
        out = np.where(n == 1, x, out)
        out = np.where(n == 0, t(1), out)
        out = np.where(np.abs(x) == 1, np.where((x > 0) | (n % 2 == 0), t(1), t(-1)), out)
        return np.where(n < 0, t(0), out)


_FORMS = (" * (Tensor x, Tensor n, *, Tensor out = None)\n"
          " * (Number x, Tensor n, *, Tensor out = None)\n"
          " * (Tensor x, Number n, *, Tensor out = None)\n")
_MISSING = object()


def _type_name(value) -> str:
    return "Tensor" if value.__class__ is Tensor else type(value).__name__


def _polynomial(kernel, name: str):
    """torch.special.NAME(x, n): a tensor and a tensor, a number and a tensor, or a tensor and a number."""
    full = "special_" + name

    def op(x=_MISSING, n=_MISSING) -> Tensor:
        given = [v for v in (x, n) if v is not _MISSING]
        fits = len(given) == 2 and all(v.__class__ is Tensor or isinstance(v, (int, float)) for v in given) \
            and Tensor in (x.__class__, n.__class__)
        if not fits:
            raise TypeError(f"{full}() received an invalid combination of arguments - got "
                            f"({', '.join(_type_name(v) for v in given)}), but expected one of:\n{_FORMS}")
        a, b = operands(x, n, floating=True)
        if a.dtype not in _KINDS:
            raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{type_word(a)}'")
        try:
            a, b = np.broadcast_arrays(a, b)
        except ValueError:
            raise broadcast_error(np.shape(a), np.shape(b)) from None
        out = kernel(name, a.reshape(-1), _degree(b.reshape(-1)))
        return Tensor(out.reshape(a.shape))
    op.__name__ = op.__qualname__ = full
    return op


_KINDS = (np.dtype(np.float32), np.dtype(np.float64))


def _kind(kind: str, shifted: bool):
    return lambda name, x, n: _chebyshev(kind, shifted, name, x, n)


chebyshev_polynomial_t = _polynomial(_kind("t", False), "chebyshev_polynomial_t")
chebyshev_polynomial_u = _polynomial(_kind("u", False), "chebyshev_polynomial_u")
chebyshev_polynomial_v = _polynomial(_kind("v", False), "chebyshev_polynomial_v")
chebyshev_polynomial_w = _polynomial(_kind("w", False), "chebyshev_polynomial_w")
shifted_chebyshev_polynomial_t = _polynomial(_kind("t", True), "shifted_chebyshev_polynomial_t")
shifted_chebyshev_polynomial_u = _polynomial(_kind("u", True), "shifted_chebyshev_polynomial_u")
shifted_chebyshev_polynomial_v = _polynomial(_kind("v", True), "shifted_chebyshev_polynomial_v")
shifted_chebyshev_polynomial_w = _polynomial(_kind("w", True), "shifted_chebyshev_polynomial_w")
hermite_polynomial_h = _polynomial(lambda name, x, n: _hermite(True, name, x, n), "hermite_polynomial_h")
hermite_polynomial_he = _polynomial(lambda name, x, n: _hermite(False, name, x, n), "hermite_polynomial_he")
laguerre_polynomial_l = _polynomial(_laguerre, "laguerre_polynomial_l")
legendre_polynomial_p = _polynomial(_legendre, "legendre_polynomial_p")
