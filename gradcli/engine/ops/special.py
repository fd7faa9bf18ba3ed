"""The gamma-family and Bessel special functions: lgamma, digamma, polygamma, mvlgamma, erfinv, i0, i0e, i1, i1e,
and the Hurwitz zeta function (special.zeta).

PyTorch computes digamma, polygamma (trigamma and the Hurwitz zeta series), i0, i0e, i1 and i1e with its own
series code (ATen's Math.h, derived from Cephes): the kernels below follow its formulas step by step in the
tensor's dtype, with the multiply-adds GCC fuses in its x86-64 build. lgamma (Sleef) and erfinv (MKL's
vector library) are library calls: they, and the library calls inside the series (logf, sinf, expf), are
correctly rounded here for float32 (double results come from CPython's math module or numpy, within an ulp
or a few: docs/numerics.md). float16 tensors compute in float and round the result, as there.
"""

from __future__ import annotations

import math

import numpy as np

from gradcli.engine import budget, dtypes
from gradcli.engine import elementary as cr
from gradcli.engine.cascade import sum_array
from gradcli.engine.fma import fma
from gradcli.engine.ops.elementwise import _expect_tensor, _x_log, half_in_float, is_meta, on_meta
from gradcli.engine.forward import no_tangent
from gradcli.engine.recording import TYPE_WORDS, Op, apply, int64_arg, type_word, unary
from gradcli.engine.tensor import Tensor

_F64 = np.dtype(np.float64)
_CHUNK = 1 << 16


def _per_element(fn, x: np.ndarray) -> np.ndarray:
    """fn (a float function of CPython's math module: the C library's) on each element, in float64."""
    flat = x.astype(_F64).reshape(-1).tolist()
    out = np.empty(len(flat), _F64)
    for i in range(0, len(flat), _CHUNK):
        part = flat[i:i + _CHUNK]
        out[i:i + len(part)] = [fn(v) for v in part]
    return out.reshape(x.shape)


# ---- lgamma: a library call (Sleef's) in PyTorch; here CPython's in double, rounded once for float32 ----

# lgamma at 1, 2, ..., 171: log((n - 1)!), the correctly rounded log of an exact integer (math.lgamma is
# CPython's own, an ulp or two off at some integers, which Poisson's log_prob meets at every count)
_LOG_FACTORIAL = [math.log(math.factorial(k)) for k in range(171)]


def _lgamma(v: float) -> float:
    if v.is_integer() and 1.0 <= v <= 171.0:
        return _LOG_FACTORIAL[int(v) - 1]
    try:
        return math.lgamma(v)
    except (ValueError, OverflowError):     # the poles 0, -1, -2, ... and results past double's range
        return math.inf


# Near its zeros at 1 and 2 CPython's lgamma loses its relative accuracy (thousands of ulps), where
# distributions' concentrations often lie: there the Taylor series lgamma(1 + z) = -euler z +
# sum_k (-1)^k zeta(k)/k z^k and lgamma(2 + z) = (1 - euler) z + sum_k (-1)^k (zeta(k) - 1)/k z^k, for
# |z| <= 1/4, summed by compensated Horner (each product and sum's rounding error carried along), within an
# ulp (97% of the double results are PyTorch's there). Coefficients: mpmath at 200 bits, rounded to double.
_LGAMMA_AT_1 = (-0.5772156649015329, 0.8224670334241132, -0.40068563438653143, 0.27058080842778454,
                -0.20738555102867398, 0.1695571769974082, -0.1440498967688461, 0.12550966952474304,
                -0.11133426586956469, 0.1000994575127818, -0.09095401714582904, 0.083353840546109,
                -0.0769325164113522, 0.07143294629536133, -0.06666870588242046, 0.06250095514121304,
                -0.058823978658684585, 0.055555767627403614, -0.05263167937961666, 0.05000004769810169,
                -0.047619070330142226, 0.04545455629320467, -0.04347826605304026, 0.04166666915034121,
                -0.04000000119214014, 0.03846153903467518, -0.037037037312989324, 0.035714285847333355,
                -0.034482758684919304, 0.03333333336437758, -0.03225806453115042, 0.03125000000727597,
                -0.030303030306558044, 0.029411764707594344, -0.02857142857226011, 0.027777777778181998,
                -0.027027027027223673, 0.02631578947377995, -0.025641025641072283)
_LGAMMA_AT_2 = (0.42278433509846713, 0.3224670334241132, -0.0673523010531981, 0.020580808427784546,
                -0.007385551028673986, 0.0028905103307415234, -0.001192753911703261, 0.0005096695247430425,
                -0.00022315475845357939, 9.945751278180853e-05, -4.492623673813314e-05, 2.050721277567069e-05,
                -9.439488275268397e-06, 4.374866789907488e-06, -2.039215753801366e-06, 9.55141213040742e-07,
                -4.492469198764566e-07, 2.1207184805554665e-07, -1.0043224823968099e-07, 4.7698101693639804e-08,
                -2.2711094608943164e-08, 1.0838659214896955e-08, -5.183475041970047e-09, 2.4836745438024785e-09,
                -1.1921401405860912e-09, 5.731367241678862e-10, -2.7595228851242334e-10, 1.330476437424449e-10,
                -6.4229645638381e-11, 3.1044247747322276e-11, -1.5021384080754142e-11, 7.275974480239079e-12,
                -3.527742476575915e-12, 1.711991790559618e-12, -8.315385841420285e-13, 4.04220052528944e-13,
                -1.9664756310966165e-13, 9.573630387838556e-14, -4.6640760264283744e-14)

_SPLIT = 134217729.0            # 2^27 + 1: Veltkamp's split of a double into two halves


def _series_near_zeros(x: np.ndarray) -> np.ndarray:
    """lgamma of float64 values in [0.75, 1.25] or [1.75, 2.25]."""
    near_one = x < 1.5
    z = np.where(near_one, x - 1.0, x - 2.0)
    c = np.array([_LGAMMA_AT_1, _LGAMMA_AT_2])[np.where(near_one, 0, 1)]        # (n, terms)
    s, err = c[:, -1].copy(), np.zeros_like(z)
    for k in range(c.shape[1] - 2, -2, -1):
        p = s * z                                        # p + pi = s * z exactly (Dekker)
        sh = s * _SPLIT
        sh = sh - (sh - s)
        zh = z * _SPLIT
        zh = zh - (zh - z)
        pi = ((sh * zh - p) + sh * (z - zh) + (s - sh) * zh) + (s - sh) * (z - zh)
        ck = c[:, k] if k >= 0 else 0.0
        s = p + ck                                       # s + sigma = p + ck exactly (Knuth)
        bb = s - p
        sigma = (p - (s - bb)) + (ck - bb)
        err = err * z + (pi + sigma)
    return s + err


@half_in_float
def lgamma_array(x: np.ndarray) -> np.ndarray:
    """log|Gamma(x)|: inf at the poles (0, -0.0 and the negative integers) and at +-inf."""
    out = _per_element(_lgamma, x)
    x64 = x.astype(_F64)
    near = ((x64 >= 0.75) & (x64 <= 1.25)) | ((x64 >= 1.75) & (x64 <= 2.25))
    if near.any():
        out[near] = _series_near_zeros(x64[near])
    return out.astype(x.dtype)


# ---- digamma, trigamma, polygamma: Math.h's series -------------------------------------------------

_PSI_10 = 2.25175258906672110764
_PSI_ASYMPTOTIC = (8.33333333333333333333E-2, -2.10927960927960927961E-2, 7.57575757575757575758E-3,
                   -4.16666666666666666667E-3, 3.96825396825396825397E-3, -8.33333333333333333333E-3,
                   8.33333333333333333333E-2)


def polevl(z: np.ndarray, coefficients) -> np.ndarray:
    """Horner's rule from the highest coefficient, each step a fused multiply-add."""
    t = z.dtype.type
    r = np.zeros_like(z)
    for c in coefficients:
        r = fma(r, z, np.full_like(z, t(c)))
    return r


@half_in_float
def digamma_array(x: np.ndarray) -> np.ndarray:
    """calc_digamma: +-inf at +-0 (the opposite sign), nan at the negative integers, the reflection
    psi(1 - x) - pi / tan(pi r) (r the fraction of x, in double) below 0, the recurrence up to 10, then the
    asymptotic series (psi(10) itself exactly 10 steps up)."""
    t = x.dtype.type
    with np.errstate(all="ignore"):
        zero = x == 0
        at_zero = np.copysign(t(np.inf), -x)
        pole = (x < 0) & (x == np.trunc(x))
        reflect = (x < 0) & ~pole
        fraction = np.modf(x[reflect].astype(_F64))[0]
        cotangent = (math.pi / np.tan(math.pi * fraction)).astype(x.dtype)
        y = np.where(reflect, t(1) - x, x)
        y[pole | zero] = t(10)
        acc = np.zeros_like(y)
        below = y < 10
        while below.any():
            acc[below] -= t(1) / y[below]
            y[below] += t(1)
            below = y < 10
        z = t(1) / (y * y)
        tail = np.where(y < t(1e17), z * polevl(z, _PSI_ASYMPTOTIC), t(0))
        out = acc + cr.log(y) - t(0.5) / y - tail
        out = np.where(y == 10, acc + t(_PSI_10), out)
        out[reflect] -= cotangent
        out[pole] = np.nan
        out[zero] = at_zero[zero]
    return out


@half_in_float
def trigamma_array(x: np.ndarray) -> np.ndarray:
    """trigamma: the reflection -pi^2 / sin^2(pi x) below 0.5, six steps up, then the asymptotic series
    (its products fused into the sums)."""
    t = x.dtype.type
    with np.errstate(all="ignore"):
        reflect = x < t(0.5)
        sign = np.where(reflect, t(-1), t(1))
        s = cr.sin(t(math.pi) * x)
        acc = np.where(reflect, -(t(t(math.pi) * t(math.pi)) / (s * s)), t(0))
        y = np.where(reflect, t(1) - x, x)
        for _ in range(6):
            acc += t(1) / (y * y)
            y = y + t(1)
        ixx = t(1) / (y * y)
        inner = fma(-ixx, np.full_like(y, t(1) / t(42)), np.full_like(y, t(1) / t(30)))
        inner = fma(-ixx, inner, np.full_like(y, t(1) / t(6)))
        series = fma(ixx, inner, t(1) + t(1) / (t(2) * y))
        acc += series / y
        return sign * acc


_MACHEP = 1.11022302462515654042E-16
_ZETA_A = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
           -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,
           1.8152105401943546773e17, -7.1661652561756670113e18)


def zeta_array(s, q: np.ndarray) -> np.ndarray:
    """The Hurwitz zeta function zeta(s, q), s a number or an array of q's dtype that broadcasts with q, in
    double (Math.h's zeta, whose accumulator is double for float tensors too, though its first term q^-s is a
    float pow there): inf at s = 1, nan below; for q <= 0, inf at the integers and nan for a fractional s;
    the direct sum until its terms fall below machine epsilon (at least nine terms and q past 9), then the
    Euler-Maclaurin tail."""
    if is_meta(q) or is_meta(s):
        return on_meta(zeta_array, s, q)
    shape = np.broadcast_shapes(np.shape(s), q.shape)
    x = np.broadcast_to(np.asanyarray(s, q.dtype), shape).reshape(-1)
    q = np.broadcast_to(q, shape).reshape(-1)
    out = np.empty(q.shape, _F64)
    with np.errstate(all="ignore"):
        first = cr.pow(q, -x).astype(_F64)
        q, x = q.astype(_F64), x.astype(_F64)
        integer_q = (q <= 0) & (q == np.floor(q))
        out[(q <= 0) & (x != np.floor(x))] = np.nan
        out[integer_q] = np.inf
        out[x < 1] = np.nan
        out[x == 1] = np.inf
        live = np.flatnonzero(~((x <= 1) | integer_q | ((q <= 0) & (x != np.floor(x)))))
        total = first[live]
        a = q[live].copy()
        xs = x[live]
        b = np.zeros_like(a)
        i = 0
        while live.size:
            i += 1
            a += 1.0
            b = np.power(a, -xs)
            total += b
            done = (-_MACHEP * total < b) & (b < _MACHEP * total)
            more = (i < 9) | (a <= 9.0)
            stop = done | ~more
            if stop.any():
                finished = done & stop
                out[live[finished]] = total[finished]
                tail = stop & ~done
                if tail.any():
                    out[live[tail]] = _zeta_tail(xs[tail], a[tail], b[tail], total[tail])
                keep = ~stop
                live, total, a, b, xs = live[keep], total[keep], a[keep], b[keep], xs[keep]
    return out.reshape(shape)


def _zeta_tail(s, w: np.ndarray, b: np.ndarray, total: np.ndarray) -> np.ndarray:
    """The Euler-Maclaurin remainder of zeta's sum past w, Bernoulli terms until one is below epsilon."""
    total = total + b * w / (s - 1.0)
    total = fma(np.full_like(b, -0.5), b, total)
    out = np.full_like(total, np.nan)
    open_ = np.ones(total.shape, bool)
    a, k = 1.0, 0.0
    for coefficient in _ZETA_A:
        a *= s + k
        b = b / w
        term = a * b / coefficient
        total = total + term
        small = open_ & (np.abs(term / total) < _MACHEP)
        out[small] = total[small]
        open_ &= ~small
        k += 1.0
        a *= s + k
        b = b / w
        k += 1.0
    out[open_] = total[open_]
    return out


def polygamma_array(n: int, x: np.ndarray) -> np.ndarray:
    """psi^(n)(x): digamma for n = 0, trigamma for 1, else (-1)^(n+1) n! zeta(n + 1, x), with n! as
    exp(lgamma(n + 1)) in the tensor's type."""
    if is_meta(x):
        return on_meta(polygamma_array, n, x)
    if x.dtype.char in "eE":
        return polygamma_array(n, x.astype(np.float32)).astype(x.dtype)
    if n == 0:
        return digamma_array(x)
    if n == 1:
        return trigamma_array(x)
    t = x.dtype.type
    with np.errstate(all="ignore"):
        if n > 170:                                         # n! past double's range
            factorial = t(np.inf)
        else:
            log_factorial = math.log(math.factorial(n))     # lgamma(n + 1), rounded to the type
            factorial = t(math.exp(t(log_factorial)))
        return (t(1 if n % 2 else -1) * factorial) * zeta_array(n + 1.0, x).astype(x.dtype)


# ---- erfinv: MKL's, correctly rounded -----------------------------------------------------------------

_ERFINV_A = (0.886226899, -1.645349621, 0.914624893, -0.140543331)
_ERFINV_B = (-2.118377725, 1.442710462, -0.329097515, 0.012229801)
_ERFINV_C = (-1.970840454, -1.624906493, 3.429567803, 1.641345311)
_ERFINV_D = (3.543889200, 1.637067800)
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def _erfinv64(y: float) -> float:
    """erfinv of one double: a rational first guess, then Halley steps on erf(x) - y (on erfc(x) - (1 - y)
    in the tail, where 1 - y is exact and erf would lose it) until the step no longer changes x."""
    if not -1.0 <= y <= 1.0:
        return math.nan
    a = abs(y)
    if a == 1.0:
        return math.copysign(math.inf, y)
    if a == 0.0:
        return y
    if a <= 0.7:
        z = a * a
        num = ((_ERFINV_A[3] * z + _ERFINV_A[2]) * z + _ERFINV_A[1]) * z + _ERFINV_A[0]
        dem = (((_ERFINV_B[3] * z + _ERFINV_B[2]) * z + _ERFINV_B[1]) * z + _ERFINV_B[0]) * z + 1.0
        x = a * num / dem
    else:
        z = math.sqrt(-math.log((1.0 - a) / 2.0))
        num = ((_ERFINV_C[3] * z + _ERFINV_C[2]) * z + _ERFINV_C[1]) * z + _ERFINV_C[0]
        dem = (_ERFINV_D[1] * z + _ERFINV_D[0]) * z + 1.0
        x = num / dem
    complement = 1.0 - a
    for _ in range(6):
        slope = _TWO_OVER_SQRT_PI * math.exp(-x * x)
        if a <= 0.5:
            f = math.erf(x) - a
        else:
            f = complement - math.erfc(x)
        step = f / slope
        step = step / (1.0 + x * step)
        if step == 0 or not math.isfinite(step):
            break
        x -= step
        if abs(step) <= abs(x) * 1e-17:
            break
    return math.copysign(x, y)


@half_in_float
def erfinv_array(x: np.ndarray) -> np.ndarray:
    """The inverse error function: +-inf at +-1, nan outside [-1, 1]. float32: the same steps on whole arrays
    (erf and erfc by the elementary module's polynomials), each element whose double result lies near a
    float32 rounding midpoint, or that did not converge there, redone by _erfinv64."""
    if x.dtype != np.float32 or x.size < 1024:
        return _per_element(_erfinv64, x).astype(x.dtype)
    y = x.astype(_F64)
    r = _erfinv_vector(y)
    redo = ~np.isfinite(r) | cr._near_midpoint(r, x.dtype)
    if redo.any():
        r[redo] = [_erfinv64(v) for v in y[redo].tolist()]
    return r.astype(x.dtype)


def _erfinv_vector(y: np.ndarray) -> np.ndarray:
    """_erfinv64 on an array (three Halley steps), nan where it would need more care (the caller redoes
    those): the ends, values past [-1, 1], and iterates where erfc's polynomials stop."""
    with np.errstate(all="ignore"):
        a = np.abs(y)
        z = a * a
        num = ((_ERFINV_A[3] * z + _ERFINV_A[2]) * z + _ERFINV_A[1]) * z + _ERFINV_A[0]
        dem = (((_ERFINV_B[3] * z + _ERFINV_B[2]) * z + _ERFINV_B[1]) * z + _ERFINV_B[0]) * z + 1.0
        central = a * num / dem
        w = np.sqrt(-np.log((1.0 - a) / 2.0))
        num = ((_ERFINV_C[3] * w + _ERFINV_C[2]) * w + _ERFINV_C[1]) * w + _ERFINV_C[0]
        dem = (_ERFINV_D[1] * w + _ERFINV_D[0]) * w + 1.0
        x = np.where(a <= 0.7, central, num / dem)
        complement = 1.0 - a
        low = a <= 0.5
        for _ in range(3):
            slope = _TWO_OVER_SQRT_PI * np.exp(-x * x)
            f = np.where(low, cr.erf64(x) - a, complement - cr.erf64(x, complement=True))
            step = f / slope
            x = x - step / (1.0 + x * step)
        x[(a == 0) | (a >= 1) | (x >= 4.0)] = np.nan
        return np.copysign(x, y)


# ---- the modified Bessel functions: Math.h's Chebyshev series -----------------------------------------

_I0E_A = (-4.41534164647933937950E-18, 3.33079451882223809783E-17, -2.43127984654795469359E-16,
          1.71539128555513303061E-15, -1.16853328779934516808E-14, 7.67618549860493561688E-14,
          -4.85644678311192946090E-13, 2.95505266312963983461E-12, -1.72682629144155570723E-11,
          9.67580903537323691224E-11, -5.18979560163526290666E-10, 2.65982372468238665035E-9,
          -1.30002500998624804212E-8, 6.04699502254191894932E-8, -2.67079385394061173391E-7,
          1.11738753912010371815E-6, -4.41673835845875056359E-6, 1.64484480707288970893E-5,
          -5.75419501008210370398E-5, 1.88502885095841655729E-4, -5.76375574538582365885E-4,
          1.63947561694133579842E-3, -4.32430999505057594430E-3, 1.05464603945949983183E-2,
          -2.37374148058994688156E-2, 4.93052842396707084878E-2, -9.49010970480476444210E-2,
          1.71620901522208775349E-1, -3.04682672343198398683E-1, 6.76795274409476084995E-1)
_I0E_B = (-7.23318048787475395456E-18, -4.83050448594418207126E-18, 4.46562142029675999901E-17,
          3.46122286769746109310E-17, -2.82762398051658348494E-16, -3.42548561967721913462E-16,
          1.77256013305652638360E-15, 3.81168066935262242075E-15, -9.55484669882830764870E-15,
          -4.15056934728722208663E-14, 1.54008621752140982691E-14, 3.85277838274214270114E-13,
          7.18012445138366623367E-13, -1.79417853150680611778E-12, -1.32158118404477131188E-11,
          -3.14991652796324136454E-11, 1.18891471078464383424E-11, 4.94060238822496958910E-10,
          3.39623202570838634515E-9, 2.26666899049817806459E-8, 2.04891858946906374183E-7,
          2.89137052083475648297E-6, 6.88975834691682398426E-5, 3.36911647825569408990E-3,
          8.04490411014108831608E-1)
_I1E_A = (2.77791411276104639959E-18, -2.11142121435816608115E-17, 1.55363195773620046921E-16,
          -1.10559694773538630805E-15, 7.60068429473540693410E-15, -5.04218550472791168711E-14,
          3.22379336594557470981E-13, -1.98397439776494371520E-12, 1.17361862988909016308E-11,
          -6.66348972350202774223E-11, 3.62559028155211703701E-10, -1.88724975172282928790E-9,
          9.38153738649577178388E-9, -4.44505912879632808065E-8, 2.00329475355213526229E-7,
          -8.56872026469545474066E-7, 3.47025130813767847674E-6, -1.32731636560394358279E-5,
          4.78156510755005422638E-5, -1.61760815825896745588E-4, 5.12285956168575772895E-4,
          -1.51357245063125314899E-3, 4.15642294431288815669E-3, -1.05640848946261981558E-2,
          2.47264490306265168283E-2, -5.29459812080949914269E-2, 1.02643658689847095384E-1,
          -1.76416518357834055153E-1, 2.52587186443633654823E-1)
_I1E_B = (7.51729631084210481353E-18, 4.41434832307170791151E-18, -4.65030536848935832153E-17,
          -3.20952592199342395980E-17, 2.96262899764595013876E-16, 3.30820231092092828324E-16,
          -1.88035477551078244854E-15, -3.81440307243700780478E-15, 1.04202769841288027642E-14,
          4.27244001671195135429E-14, -2.10154184277266431302E-14, -4.08355111109219731823E-13,
          -7.19855177624590851209E-13, 2.03562854414708950722E-12, 1.41258074366137813316E-11,
          3.25260358301548823856E-11, -1.89749581235054123450E-11, -5.58974346219658380687E-10,
          -3.83538038596423702205E-9, -2.63146884688951950684E-8, -2.51223623787020892529E-7,
          -3.88256480887769039346E-6, -1.10588938762623716291E-4, -9.76109749136146840777E-3,
          7.78576235018280120474E-1)
# float kernels of i1 and i1e use only the last terms of the series (i0 and i0e all of them)
_FLOAT_TERMS = {_I1E_A: 17, _I1E_B: 7}


def _chbevl(y: np.ndarray, coefficients) -> np.ndarray:
    """Clenshaw's recurrence for a Chebyshev series, b0 = y*b1 - b2 + c with y*b1 - b2 fused."""
    t = y.dtype.type
    if y.dtype != _F64:
        coefficients = coefficients[-_FLOAT_TERMS.get(coefficients, len(coefficients)):]
    b0 = np.full_like(y, t(coefficients[0]))
    b1 = np.zeros_like(y)
    b2 = b1
    for c in coefficients[1:]:
        b2, b1 = b1, b0
        b0 = fma(y, b1, -b2) + t(c)
    return t(0.5) * (b0 - b2)


def _bessel(x: np.ndarray, low, high, order_one: bool, scaled: bool) -> np.ndarray:
    """i0, i0e, i1, i1e: one series on [0, 8], the other (in 32/x) beyond; odd in x for the first order."""
    t = x.dtype.type
    with np.errstate(all="ignore"):
        a = np.abs(x)
        near = _chbevl(a / t(2) - t(2), low)
        far = _chbevl(t(32) / a - t(2), high)
        root = np.sqrt(a)
        if scaled:
            near = near * a if order_one else near
            out = np.where(a <= t(8), near, far / root)
        else:
            e = cr.exp(a)
            near = e * a * near if order_one else e * near
            out = np.where(a <= t(8), near, e * far / root)
        return np.where(x < 0, -out, out) if order_one else out


@half_in_float
def i0_array(x: np.ndarray) -> np.ndarray:
    return _bessel(x, _I0E_A, _I0E_B, False, False)


def i0e_array(x: np.ndarray) -> np.ndarray:
    """i0e; float16 as PyTorch's kernel runs it: pairs of 16-lane vectors in float, and the elements past
    the last pair by the scalar template instantiated for Half, every step rounded to float16."""
    if x.dtype != np.float16:
        return _bessel(x, _I0E_A, _I0E_B, False, True)
    flat = x.reshape(-1)
    body = flat.size - flat.size % 32
    out = np.empty_like(flat)
    out[:body] = _bessel(flat[:body].astype(np.float32), _I0E_A, _I0E_B, False, True)
    out[body:] = _i0e_half(flat[body:])
    return out.reshape(x.shape)


def _i0e_half(x: np.ndarray) -> np.ndarray:
    """calc_i0e<Half>: the coefficients and each operation in float16 (no fused steps); the square root
    and the last division in float."""
    t = np.float16
    a = np.abs(x)

    def series(y, coefficients):
        b0, b1, b2 = np.full_like(y, t(coefficients[0])), np.zeros_like(y), np.zeros_like(y)
        for c in coefficients[1:]:
            b2, b1 = b1, b0
            b0 = y * b1 - b2 + t(c)
        return t(0.5) * (b0 - b2)
    with np.errstate(all="ignore"):
        near = series(a / t(2) - t(2), _I0E_A)
        far = (series(t(32) / a - t(2), _I0E_B).astype(np.float32) / np.sqrt(a.astype(np.float32))).astype(t)
    return np.where(a <= t(8), near, far)


@half_in_float
def i1_array(x: np.ndarray) -> np.ndarray:
    return _bessel(x, _I1E_A, _I1E_B, True, False)


@half_in_float
def i1e_array(x: np.ndarray) -> np.ndarray:
    return _bessel(x, _I1E_A, _I1E_B, True, True)


# ---- formulas (derivatives.yaml's, in its order) ------------------------------------------------------

def _erfinv_self(F, g, self):
    # 0.5 * sqrt(M_PI) * exp(self.erfinv().pow(2)) * grad
    return F.times(F.exp(F.pow(F.erfinv(self), 2)), 0.5 * math.sqrt(math.pi)) * g


def _tiny_safe(F, self):
    """i1_backward's guard: |self| > eps, and self with eps where it is not."""
    eps = float(dtypes.finfo(self.dtype if isinstance(self, np.ndarray) else self._a.dtype).eps)
    big = F.abs(self) > eps
    return big, F.where(big, self, F.scalar(eps, self))


def _i1_self(F, g, self, result):
    """i1_backward: grad * (i0(x) - result / x), 0.5 where |x| <= eps."""
    big, safe = _tiny_safe(F, self)
    return g * F.where(big, F.i0(safe) - result * F.reciprocal(safe), F.scalar(0.5, self))


def _i1e_self(F, g, self, result):
    """i1e_backward: grad * (i0e(x) - result * (sgn(x) + 1 / x)), 0.5 where |x| <= eps."""
    big, safe = _tiny_safe(F, self)
    return g * F.where(big, F.i0e(safe) - result * (F.sgn(safe) + F.reciprocal(safe)), F.scalar(0.5, self))


def _mvlgamma_self(F, g, self, p):
    """mvlgamma_backward: grad * digamma(self[..., None] + arange(-p/2 + 1/2, 1/2, 1/2)).sum(-1)."""
    return g * F.sum_dims(F.digamma(F.unsqueeze_dims(self, (-1,)) + F.mvlgamma_offsets(p, self)), (-1,))


# fmt: off
#                node                     forward         saves                formulas, one per input
LGAMMA    = Op("LgammaBackward0",    lgamma_array,   ("self",),           (lambda F, g, self: g * F.digamma(self),),
               floats=True, quiet=True, jvp="auto")
DIGAMMA   = Op("DigammaBackward0",   digamma_array,  ("self",),           (lambda F, g, self: g * F.polygamma(1, self),),
               floats=True, quiet=True, jvp="auto")
POLYGAMMA = Op("PolygammaBackward0", None,           ("n", "self"),       (lambda F, g, n, self: g * F.polygamma(n + 1, self),),
               quiet=True, jvp="auto")
POLYGAMMA_ = Op("PolygammaBackward1", None,           ("n", "self"),       (lambda F, g, n, self: g * F.polygamma(n + 1, self),),
               quiet=True, jvp="auto")
ERFINV    = Op("ErfinvBackward0",    erfinv_array,   ("self",),           (_erfinv_self,), floats=True, quiet=True, jvp="auto")
MVLGAMMA  = Op("MvlgammaBackward0",  None,           ("self", "p"),       (_mvlgamma_self,), quiet=True, jvp="auto")
I0        = Op("I0Backward0",        i0_array,       ("self",),           (lambda F, g, self: g * F.i1(self),),
               floats=True, quiet=True, jvp="auto")
I0E       = Op("SpecialI0EBackward0", i0e_array,     ("self", "result"),
               (lambda F, g, self, result: g * (F.i1e(self) - F.sgn(self) * result),), floats=True, quiet=True, jvp="auto")
I1        = Op("SpecialI1Backward0", i1_array,       ("self", "result"),  (_i1_self,), floats=True, quiet=True, jvp="auto")
I1E       = Op("SpecialI1EBackward0", i1e_array,     ("self", "result"),  (_i1e_self,), floats=True, quiet=True, jvp="auto")
# fmt: on

lgamma = unary(LGAMMA, "lgamma")
digamma = unary(DIGAMMA, "digamma")
erfinv = unary(ERFINV, "erfinv")
i0 = unary(I0, "i0")
special_i0e = unary(I0E, "special_i0e")
special_i1 = unary(I1, "special_i1")
special_i1e = unary(I1E, "special_i1e")


def int_argument(value, fn: str, arg: str, position: int) -> int:
    """An `int` argument as PyTorch's parser reads it (a 0-d integer tensor counts as its value)."""
    if value.__class__ is Tensor and value._a.ndim == 0 and value._a.dtype.kind in "iu":
        value = int(value._a)
    if value.__class__ is not int:
        raise TypeError(f"{fn}(): argument '{arg}' (position {position}) must be int, not {type(value).__name__}")
    int64_arg(value)
    return value


def _floats(a: Tensor) -> np.ndarray:
    x = a._a
    return x if x.dtype.kind in "fV" else x.astype(dtypes.default_float.np)


def polygamma(n, input, name: str = "polygamma", row: Op = POLYGAMMA) -> Tensor:
    """torch.polygamma(n, input): the n-th derivative of digamma (integers in the default float dtype);
    `row`: PolygammaBackward1 for the in-place form."""
    n = int_argument(n, name, "n", 1)
    _expect_tensor(input, name, "input", 2)
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    x = _floats(input)
    return apply(row, polygamma_array(n, x), (input,), (n,), (x,))


def polygamma_method(a: Tensor, n) -> Tensor:
    """Tensor.polygamma(n)."""
    return polygamma(int_argument(n, "polygamma", "n", 1), a)


def mvlgamma_offsets(p: int, like: np.ndarray) -> np.ndarray:
    """arange(-p/2 + 1/2, 1/2, 1/2) in like's dtype: the p shifts of the multivariate gamma's factors."""
    return (np.arange(p, dtype=_F64) * 0.5 - (p - 1) * 0.5).astype(like.dtype)


def mvlgamma_array(x: np.ndarray, p: int) -> np.ndarray:
    """sum_j lgamma(x - j/2) over j < p (the ordered sum over the last dim), + p(p-1)/4 log(pi)."""
    budget.check_tensor(x.shape + (p,), x.dtype.itemsize)       # the p shifted copies PyTorch makes
    args = x[..., None] + mvlgamma_offsets(p, x)
    total = sum_array(lgamma_array(args), (-1,))
    return total + x.dtype.type(p * (p - 1) * math.log(math.pi) * 0.25)


def mvlgamma(input=None, p=None, name: str = "mvlgamma") -> Tensor:
    """torch.mvlgamma(input, p) / torch.special.multigammaln: the log of the multivariate gamma function."""
    missing = [arg for arg, value in (("input", input), ("p", p)) if value is None]
    if missing:         # (PyTorch's parser says "arguments" of one and "argument" of two)
        raise TypeError(f"{name}() missing {len(missing)} required positional argument{'s' if len(missing) == 1 else ''}"
                        ": " + ", ".join(f'"{arg}"' for arg in missing))
    _expect_tensor(input, name, "input", 1)
    p = int_argument(p, name, "p", 2)
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    x = _floats(input)
    return apply(MVLGAMMA, np.asanyarray(mvlgamma_array(x, p), x.dtype), (input,), (p,), (x,))


def mvlgamma_inplace(a: Tensor, p) -> Tensor:
    """Tensor.mvlgamma_(p): an integer tensor cannot hold the result (PyTorch's own wording)."""
    p = int_argument(p, "mvlgamma_", "p", 1)
    if a._a.dtype.kind not in "fV":
        raise RuntimeError(f"mvlgamma: result type {TYPE_WORDS[a._a.dtype.name]} can't be cast to the desired "
                           f"output type {TYPE_WORDS[dtypes.default_float.np.name]}")
    return a._inplace_unary(lambda t: mvlgamma(t, p))


def mvlgamma_tensor(p: int, self: Tensor) -> Tensor:
    """The offsets as a tensor (the create_graph form of the backward formula)."""
    return Tensor(mvlgamma_offsets(p, self._a))


def special_polygamma(n, input) -> Tensor:
    return polygamma(n, input, "special_polygamma")


def multigammaln(input=None, p=None) -> Tensor:
    return mvlgamma(input, p, "special_multigammaln")


@half_in_float
def entr_array(x: np.ndarray) -> np.ndarray:
    """-x log(x) for x > 0, 0 at 0, -inf below, NaN kept: PyTorch's kernel, the log correctly rounded."""
    with np.errstate(all="ignore"):
        out = -x * cr.log(np.where(x > 0, x, x.dtype.type(1)))
    out = np.where(x == 0, x.dtype.type(0), out)
    return np.where(x < 0, x.dtype.type(-math.inf), out)


def _entr_self(F, g, self):
    """grad * (-(1 + self.log()))."""
    return g * -(F.log(self) + 1)


# fmt: off
ENTR = Op("SpecialEntrBackward0", entr_array, ("self",), (_entr_self,), floats=True, quiet=True, jvp="auto")
# fmt: on
entr = unary(ENTR, "special_entr")


def special_ndtr(input) -> Tensor:
    """The standard normal CDF as PyTorch composes it in C++: (1 + erf(x * M_SQRT1_2)) * 0.5, the number steps
    recorded as C++ records them (MulBackward1, AddBackward1); integers in the default float dtype."""
    from gradcli.engine.ops import arith, elementwise
    from gradcli.engine.recording import number_operand, with_numbers
    _expect_tensor(input, "special_ndtr", "input", 1)
    x = input if input._a.dtype.kind in "fV" else Tensor(input._a.astype(dtypes.default_float.np))
    e = elementwise.erf(arith.mul_scalar(x, elementwise.SQRT1_2))
    return arith.mul_scalar(with_numbers(arith.ADD_SCALAR, e._a + number_operand(e._a, 1), (e,), (), ()), 0.5)


def special_softmax(input, dim, dtype=None) -> Tensor:
    _expect_tensor(input, "special_softmax", "input", 1)
    from gradcli.engine.ops import nn
    return nn.softmax(input, dim, dtype)


def special_log_softmax(input, dim, dtype=None) -> Tensor:
    _expect_tensor(input, "special_log_softmax", "input", 1)
    from gradcli.engine.ops import nn
    return nn.log_softmax(input, dim, dtype)


def special_logsumexp(input, dim, keepdim=False) -> Tensor:
    _expect_tensor(input, "special_logsumexp", "input", 1)
    from gradcli.engine.ops import reduce
    return reduce.logsumexp(input, dim, keepdim)


def special_round(input, *, decimals=0) -> Tensor:
    """torch.special.round: round.decimals, whatever the decimals (RoundBackward1)."""
    _expect_tensor(input, "special_round", "input", 1)
    from gradcli.engine.ops.elementwise import round as round_op
    return round_op(input, decimals, "special_round", by_decimals=True)


def _special(op, name: str):
    """torch.special.X(input): the op, with its argument error in PyTorch's words."""
    def function(input=None, *extra) -> Tensor:
        if input is None:
            raise TypeError(f'{name}() missing 1 required positional arguments: "input"')
        if extra:
            raise TypeError(f"{name}() takes 1 positional argument but {1 + len(extra)} were given")
        _expect_tensor(input, name, "input", 1)
        return op(input)
    function.__name__ = function.__qualname__ = name
    return function


special_i0e_function = _special(special_i0e, "special_i0e")
special_entr = _special(lambda t: entr(t), "special_entr")
special_i1_function = _special(special_i1, "special_i1")
special_i1e_function = _special(special_i1e, "special_i1e")


# ---- torch.special.zeta: the Hurwitz zeta function of two tensors, or of a number and a tensor -----------

def _zeta_self(F, g, self, other):
    raise NotImplementedError("the derivative for 'zeta' is not implemented.")


def _zeta_other(F, g, self, other):
    """grad * -self * special_zeta(self + 1., other); self a Python number in the self_scalar form."""
    if self.__class__ in (int, float, bool):
        return F.times(g, -self) * F.zeta(self + 1.0, other)
    return g * -self * F.zeta(self + 1.0, other)


def _zeta_number_self(F, g, other):
    raise NotImplementedError("the derivative for 'zeta' is not implemented.")


_NO_ZETA_TANGENT = no_tangent("special_zeta")
# fmt: off
ZETA              = Op("SpecialZetaBackward0", None, ("self", "other"), (_zeta_self, _zeta_other), fits=True,
                       quiet=True, jvp=_NO_ZETA_TANGENT)
ZETA_SELF_NUMBER  = Op("SpecialZetaBackward1", None, ("self", "other"), (_zeta_other,), inputs=("other",),
                       quiet=True, jvp=_NO_ZETA_TANGENT)
ZETA_OTHER_NUMBER = Op("SpecialZetaBackward2", None, ("other",), (_zeta_number_self,), inputs=("self",),
                       quiet=True, jvp=_NO_ZETA_TANGENT)
# fmt: on


def _zeta_kernel(x: np.ndarray, q: np.ndarray) -> np.ndarray:
    if x.dtype not in (np.float32, np.float64):
        raise NotImplementedError(f"\"zeta_cpu\" not implemented for '{type_word(x)}'")
    return zeta_array(x, q).astype(x.dtype)


# torch.special.zeta(x, q): tensors or a number on either side (integers in the default float dtype), the
# gradient for q only; its forms and argument checks are xlogy's
special_zeta = _x_log((ZETA, ZETA_SELF_NUMBER, ZETA_OTHER_NUMBER), _zeta_kernel, "special_zeta")


def zeta_numpy(s, q: np.ndarray) -> np.ndarray:
    """special_zeta in a plain backward pass: s an array or a number (read in q's dtype)."""
    return zeta_array(s, q).astype(q.dtype)
