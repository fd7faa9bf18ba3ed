"""The Bessel functions of torch.special that PyTorch computes without autograd: bessel_j0/j1/y0/y1,
modified_bessel_i0/i1/k0/k1, scaled_modified_bessel_k0/k1, spherical_bessel_j0 and airy_ai.

Each kernel is Math.h's (derived from Cephes) step by step in the tensor's dtype: rational functions by Horner's
rule, Chebyshev series by Clenshaw's recurrence, each `a * b + c` a fused multiply-add as GCC compiles PyTorch's
x86-64 kernels. The library calls inside (sin, cos, exp, log) are numpy's float64 ones (the C library's values on
float64) and correctly rounded for float32 (`elementary`, docs/numerics.md). PyTorch's kernels take float32 and
float64 (integers and bools compute in the default float dtype); float16 and bfloat16 raise its NotImplementedError.
No result records a node: these functions have no derivative in PyTorch, so a result never requires grad.
"""

from __future__ import annotations

import math

import numpy as np

from gradcli.engine import dtypes
from gradcli.engine import elementary as cr
from gradcli.engine.fma import fma
from gradcli.engine.ops.special import _I0E_A, _I0E_B, _I1E_A, _I1E_B, _special, polevl
from gradcli.engine.recording import type_word
from gradcli.engine.tensor import Tensor

_F64 = np.dtype(np.float64)

# ---- coefficients (Math.h's, from Cephes); j0 and y0 share P and Q, as do j1 and y1 ----------------------

_J0_PP = (0.0007969367292973471, 0.08283523921074408, 1.239533716464143, 5.447250030587687, 8.74716500199817,
          5.303240382353949, 1.0)
_J0_PQ = (0.0009244088105588637, 0.08562884743544745, 1.2535274390105895, 5.470977403304171, 8.761908832370695,
          5.306052882353947, 1.0)
_J0_QP = (-0.011366383889846916, -1.2825271867050931, -19.553954425773597, -93.20601521237683, -177.68116798048806,
          -147.07750515495118, -51.41053267665993, -6.050143506007285)
_J0_QQ = (64.3178256118178, 856.4300259769806, 3882.4018360540163, 7240.467741956525, 5930.727011873169,
          2062.0933166032783, 242.0057402402914)
_J0_RP = (-4794432209.782018, 1956174919465.5657, -249248344360967.72, 9708622510473064.0)
_J0_RQ = (499.563147152651, 173785.4016763747, 48440965.83399621, 11185553704.535683, 2112775201154.892,
          310518229857422.56, 3.1812195594320496e+16, 1.7108629408104315e+18)
_Y0_YP = (15592.436785523574, -14663929.59039716, 5435264770.518765, -982136065717.9115, 87590639439536.7,
          -3466283033847297.0, 4.4273326857256984e+16, -1.8495080043698668e+16)
_Y0_YQ = (1041.2835366425984, 626107.330137135, 268919633.39381415, 86400248710.3935, 20297961275010.555,
          3171577528429750.5, 2.5059625617265306e+17)
_J1_PP = (0.0007621256162081731, 0.07313970569409176, 1.1271960812968493, 5.112079511468076, 8.424045901417724,
          5.214515986823615, 1.0)
_J1_PQ = (0.0005713231280725487, 0.06884559087544954, 1.105142326340617, 5.073863861286015, 8.399855543276042,
          5.209828486823619, 1.0)
_J1_QP = (0.05108625947501766, 4.982138729512334, 75.82382841325453, 366.7796093601508, 710.8563049989261,
          597.4896124006136, 211.68875710057213, 25.207020585802372)
_J1_QQ = (74.23732770356752, 1056.4488603826283, 4986.410583376536, 9562.318924047562, 7997.041604473507,
          2826.1927851763908, 336.0936078106983)
_J1_RP = (-899971225.7055594, 452228297998.19403, -72749424522181.83, 3682957328638529.0)
_J1_RQ = (620.8364781180543, 256987.25675774884, 83514679.14319493, 22151159547.97925, 4749141220799.914,
          784369607876235.9, 8.952223361846274e+16, 5.322786203326801e+18)
_Y1_YP = (1263204747.9017804, -647355876379.1603, 114509511541823.73, -8127702555013251.0, 2.024394757135949e+17,
          -7.788771962659501e+17)
_Y1_YQ = (594.3015923461282, 235564.09294306856, 73481194.44597217, 18760131610.870617, 3882312774962.3857,
          620557727146953.8, 6.871410873553005e+16, 3.9727060811656064e+18)
_K0_A = (1.374465435613523e-16, 4.25981614279661e-14, 1.0349695257633842e-11, 1.904516377220209e-09,
         2.5347910790261494e-07, 2.286212103119452e-05, 0.001264615411446926, 0.0359799365153615, 0.3442898999246285,
         -0.5353273932339028)
_K0_B = (5.300433772686263e-18, -1.6475804301524212e-17, 5.2103915050390274e-17, -1.678231096805412e-16,
         5.512055978524319e-16, -1.848593377343779e-15, 6.3400764774050706e-15, -2.2275133269916698e-14,
         8.032890775363575e-14, -2.9800969231727303e-13, 1.140340588208475e-12, -4.514597883373944e-12,
         1.8559491149547177e-11, -7.957489244477107e-11, 3.577397281400301e-10, -1.69753450938906e-09,
         8.574034017414225e-09, -4.660489897687948e-08, 2.766813639445015e-07, -1.8317555227191195e-06,
         1.39498137188765e-05, -0.00012849549581627802, 0.0015698838857300533, -0.0314481013119645,
         2.4403030820659555)
_K1_A = (-7.023863479386288e-18, -2.427449850519366e-15, -6.666901694199329e-13, -1.4114883926335278e-10,
         -2.213387630734726e-08, -2.4334061415659684e-06, -0.0001730288957513052, -0.006975723859639864,
         -0.12261118082265715, -0.3531559607765449, 1.5253002273389478)
_K1_B = (-5.756744483665017e-18, 1.7940508731475592e-17, -5.689462558442859e-17, 1.838093544366639e-16,
         -6.057047248373319e-16, 2.038703165624334e-15, -7.019837090418314e-15, 2.4771544244813043e-14,
         -8.976705182324994e-14, 3.3484196660784293e-13, -1.2891739609510289e-12, 5.13963967348173e-12,
         -2.1299678384275683e-11, 9.218315187605006e-11, -4.1903547593418965e-10, 2.015049755197033e-09,
         -1.0345762465678097e-08, 5.7410841254500495e-08, -3.5019606030878126e-07, 2.406484947837217e-06,
         -1.936197974166083e-05, 0.00019521551847135162, -0.002857816859622779, 0.10392373657681724,
         2.7206261904844427)
_AIRY_AN = (0.346538101525629, 12.007595273964581, 76.27960536152345, 168.08922493463058, 159.75639135016442,
            70.53609068404442, 14.026469116338967, 1.0)
_AIRY_AD = (0.5675945326387702, 14.75625625848472, 84.51389701414746, 177.31808814540045, 164.2346928715297,
            71.47784008255756, 14.095913560783403, 1.0)
_AIRY_AFN = (-0.1316963234183318, -0.6264565444319123, -0.6931580360369335, -0.2797799815451191, -0.04919001326095003,
             -0.004062659235948854, -0.0001592764962392621, -2.776491081552329e-06, -1.6778769848911465e-08)
_AIRY_AFD = (13.356042070655324, 32.682503279522464, 26.736704094149957, 9.187074029072596, 1.4752914677166642,
             0.11568717379518804, 0.004402916416152112, 7.547203482874142e-05, 4.5185009297058035e-07)
_AIRY_AGN = (0.01973399320916857, 0.39110302961568827, 1.0657989759959559, 0.9391692298166502, 0.35146565610554764,
             0.06338889196289255, 0.005858041130483885, 0.000282851600836737, 6.98793669997261e-06,
             8.117892395543892e-08, 3.415517847659236e-10)
_AIRY_AGD = (9.30892908077442, 19.835292871831214, 15.564662893286462, 5.476860694229755, 0.9542936116189619,
             0.08645808263523921, 0.004126565238242226, 0.00010125908511650914, 1.1716673321441352e-06,
             4.9183457006293e-09)


_PI_4, _3PI_4 = 0.785398163397448309615660845819875721, 2.356194490192344928846982537459627163
_SQRT_2_PI = 0.797884560802865355879892119868763737              # sqrt(2 / pi)
_TWO_PI = 0.636619772367581343075535053490057448                 # 2 / pi
_J0_ZEROS = (5.78318596294678452118e+00, 3.04712623436620863991e+01)     # the squares of j0's first two zeros
_J1_ZEROS = (1.46819706421238932572e+01, 4.92184563216946036703e+01)
_INV_SQRT_PI = 5.64189583547756286948e-01
_AIRY_C1, _AIRY_C2 = 0.355028053887817239260, 0.258819403792806798405
_SPHERICAL = (1.0, -1.0 / 6.0, 1.0 / 120.0, -1.0 / 5040.0, 1.0 / 362880.0, -1.0 / 39916800.0, 1.0 / 6227020800.0)


def _asymptotic(x, z, pq, shift: float, sine_first: bool):
    """Hankel's expansion: (P(z) cos(x - shift) - 5/x Q(z) sin(x - shift)) sqrt(2/pi) / sqrt(x) for j0, j1;
    with sin and cos swapped and a plus for y0, y1. The first product is fused into the sum."""
    t = x.dtype.type
    pp, pq_, qp, qq = (polevl(z, c) for c in pq)
    w = x - t(shift)
    c, s = cr.cos(w), cr.sin(w)
    second = t(5) / x * (qp / qq)
    if sine_first:
        total = fma(pp / pq_, s, second * c)
    else:
        total = fma(pp / pq_, c, -(second * s))
    return total * t(_SQRT_2_PI) / np.sqrt(x)


def j0_array(x: np.ndarray) -> np.ndarray:
    t = x.dtype.type
    with np.errstate(all="ignore"):
        x = np.abs(x)
        xx = x * x
        near = (xx - t(_J0_ZEROS[0])) * (xx - t(_J0_ZEROS[1])) * polevl(xx, _J0_RP) / polevl(xx, _J0_RQ)
        near = np.where(x < t(1e-5), t(1) - xx / t(4), near)
        far = _asymptotic(x, t(25) / xx, (_J0_PP, _J0_PQ, _J0_QP, _J0_QQ), _PI_4, False)
        return np.where(x <= t(5), near, far)


def j1_array(x: np.ndarray) -> np.ndarray:
    """Odd: -j1(-x) below 0 (the series near 0 is odd as it stands, so -0.0 keeps its sign)."""
    t = x.dtype.type
    with np.errstate(all="ignore"):
        a = np.abs(x)
        xx = x * x
        near = polevl(xx, _J1_RP) / polevl(xx, _J1_RQ) * x * (xx - t(_J1_ZEROS[0])) * (xx - t(_J1_ZEROS[1]))
        r = t(5) / a
        far = _asymptotic(a, r * r, (_J1_PP, _J1_PQ, _J1_QP, _J1_QQ), _3PI_4, False)
        return np.where(a <= t(5), near, np.where(x < 0, -far, far))


def y0_array(x: np.ndarray) -> np.ndarray:
    """-inf at 0, nan below."""
    t = x.dtype.type
    with np.errstate(all="ignore"):
        xx = x * x
        near = fma(t(_TWO_PI) * cr.log(x), j0_array(x), polevl(xx, _Y0_YP) / polevl(xx, _Y0_YQ))
        near = np.where(x == 0, t(-np.inf), np.where(x < 0, t(np.nan), near))
        far = _asymptotic(x, t(25) / xx, (_J0_PP, _J0_PQ, _J0_QP, _J0_QQ), _PI_4, True)
        return np.where(x <= t(5), near, far)


def y1_array(x: np.ndarray) -> np.ndarray:
    """-inf at 0, nan below."""
    t = x.dtype.type
    with np.errstate(all="ignore"):
        xx = x * x
        inner = fma(j1_array(x), cr.log(x), -(t(1) / x))
        near = fma(x, polevl(xx, _Y1_YP) / polevl(xx, _Y1_YQ), t(_TWO_PI) * inner)
        near = np.where(x == 0, t(-np.inf), np.where(x < 0, t(np.nan), near))
        r = t(5) / x
        far = _asymptotic(x, r * r, (_J1_PP, _J1_PQ, _J1_QP, _J1_QQ), _3PI_4, True)
        return np.where(x <= t(5), near, far)


def _clenshaw(y: np.ndarray, coefficients) -> np.ndarray:
    """a = y*q - p + c (the product and difference fused) over the coefficients; returns (a, p), the last two
    terms (the series' value is (a - p) / 2)."""
    t = y.dtype.type
    p = np.zeros_like(y)
    q = np.zeros_like(y)
    a = np.full_like(y, t(coefficients[0]))
    for c in coefficients[1:]:
        p, q = q, a
        a = fma(y, q, -p) + t(c)
    return a, p


def _half_difference(y, coefficients):
    a, p = _clenshaw(y, coefficients)
    return y.dtype.type(0.5) * (a - p)


def i0_array(x: np.ndarray) -> np.ndarray:
    """modified_bessel_i0: the series of i0e on [0, 8] and beyond, times exp(|x|)."""
    t = x.dtype.type
    with np.errstate(all="ignore"):
        a = np.abs(x)
        e = cr.exp(a)
        near = e * _half_difference(a / t(2) - t(2), _I0E_A)
        far = e * _half_difference(t(32) / a - t(2), _I0E_B) / np.sqrt(a)
        return np.where(a <= t(8), near, far)


def i1_array(x: np.ndarray) -> np.ndarray:
    """modified_bessel_i1: every coefficient of i1e's series in float32 too (torch.special.i1's float kernel
    drops the first ones), the products in Math.h's order; odd."""
    t = x.dtype.type
    with np.errstate(all="ignore"):
        a = np.abs(x)
        e = cr.exp(a)
        near = _half_difference(a / t(2) - t(2), _I1E_A) * a * e
        far = e * _half_difference(t(32) / a - t(2), _I1E_B) / np.sqrt(a)
        out = np.where(a <= t(8), near, far)
        return np.where(x < 0, -out, out)


def _k_small(x: np.ndarray, order: int, scaled: bool) -> np.ndarray:
    """k0 / k1 on (0, 2]: the series in x*x - 2 (fused) with the log term. Unscaled k0 takes the log of the
    double 0.5 * x (a double literal in Math.h), so a float32 k0 computes that log and its last steps in double."""
    t = x.dtype.type
    y = fma(x, x, np.full_like(x, t(-2)))
    if order == 1:
        h = _half_difference(y, _K1_A)
        return fma(cr.log(t(0.5) * x), i1_array(x), h / x)
    h = _half_difference(y, _K0_A)
    i = i0_array(x)
    if x.dtype == np.float32 and not scaled:
        x64 = x.astype(_F64)
        return fma(-np.log(0.5 * x64), i.astype(_F64), h.astype(_F64)).astype(x.dtype)
    return fma(-cr.log(t(0.5) * x), i, h)


def _k(x: np.ndarray, order: int, scaled: bool) -> np.ndarray:
    t = x.dtype.type
    with np.errstate(all="ignore"):
        near = _k_small(x, order, scaled)
        if scaled:
            near = near * cr.exp(x)
        far = _half_difference(t(8) / x - t(2), _K0_B if order == 0 else _K1_B)
        far = far / np.sqrt(x) if scaled else cr.exp(-x) * far / np.sqrt(x)
        out = np.where(x <= t(2), near, far)
        out = np.where(x < 0, t(np.nan), out)
        return np.where(x == 0, t(np.inf), out)


def k0_array(x):
    return _k(x, 0, False)


def k1_array(x):
    return _k(x, 1, False)


def k0e_array(x):
    return _k(x, 0, True)


def k1e_array(x):
    return _k(x, 1, True)


def spherical_j0_array(x: np.ndarray) -> np.ndarray:
    """sin(x) / x; its Taylor series below 0.5 (nested, each step fused); 0 at +-inf."""
    t = x.dtype.type
    with np.errstate(all="ignore"):
        xx = x * x
        series = np.full_like(x, t(_SPHERICAL[-1]))
        for c in _SPHERICAL[-2::-1]:
            series = fma(xx, series, np.full_like(x, t(c)))
        out = np.where(np.abs(x) < t(0.5), series, cr.sin(x) / x)
        return np.where(np.isinf(x), t(0), out)


def airy_ai_array(x: np.ndarray) -> np.ndarray:
    """Ai(x): the asymptotic forms below -2.09 and from 2.09, the Maclaurin series f, g between (summed until
    a term is below the dtype's epsilon; from 2.09 to 8.32 Math.h sums it and returns the asymptotic value);
    0 past 103.892, nan at +-inf."""
    t = x.dtype.type
    out = np.full_like(x, t(np.nan))
    with np.errstate(all="ignore"):
        left = (x < t(-2.09)) & ~np.isinf(x)
        if left.any():
            v = x[left]
            r = np.sqrt(-v)
            zeta = t(-2) * v * r / t(3)
            z = t(1) / zeta
            zz = z * z
            f = t(1) + zz * polevl(zz, _AIRY_AFN) / polevl(zz, _AIRY_AFD)
            g = z * polevl(zz, _AIRY_AGN) / polevl(zz, _AIRY_AGD)
            w = zeta + t(0.25 * math.pi)
            out[left] = t(_INV_SQRT_PI) / np.sqrt(r) * fma(cr.sin(w), f, -(cr.cos(w) * g))
        right = (x >= t(2.09)) & ~np.isinf(x)
        if right.any():
            v = x[right]
            zeta = t(2) * v * np.sqrt(v) / t(3)
            iz = t(1) / zeta
            ratio = polevl(iz, _AIRY_AN) / polevl(iz, _AIRY_AD)
            out[right] = t(_INV_SQRT_PI) * ratio / (t(2) * np.sqrt(np.sqrt(v)) * cr.exp(zeta))
        middle = ~left & ~right & ~np.isinf(x)
        if middle.any():
            out[middle] = _airy_series(x[middle])
        out[right & (x > t(103.892))] = 0
    return out


def _airy_series(x: np.ndarray) -> np.ndarray:
    t = x.dtype.type
    eps = t(dtypes.finfo(x.dtype).eps)
    f, g = np.ones_like(x), x.copy()
    m, n, k = np.ones_like(x), x.copy(), np.ones_like(x)
    z = x * x * x
    live = np.ones(x.shape, bool)
    while live.any():
        zl, kl = z[live], k[live]
        ml = m[live] * zl
        kl = kl + t(1)
        ml = ml / kl
        nl = n[live] * zl
        kl = kl + t(1)
        nl = nl / kl
        ml = ml / kl
        f[live] = f[live] + ml
        kl = kl + t(1)
        nl = nl / kl
        g[live] = g[live] + nl
        m[live], n[live], k[live] = ml, nl, kl
        live[live] = np.abs(ml / f[live]) > eps
    return fma(np.full_like(x, t(_AIRY_C1)), f, -(t(_AIRY_C2) * g))


_KINDS = (np.dtype(np.float32), np.dtype(np.float64))


def _function(kernel, name: str):
    """torch.special.NAME(input): integers and bools in the default float dtype, float16 and bfloat16 refused
    as PyTorch's kernel refuses them; a result that records no node."""
    def op(input: Tensor) -> Tensor:
        x = input._a
        if x.dtype.kind in "biu":
            x = x.astype(dtypes.default_float.np)
        if x.dtype not in _KINDS:
            raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{type_word(x)}'")
        return Tensor(np.asanyarray(kernel(x), x.dtype))
    return _special(op, "special_" + name)


bessel_j0 = _function(j0_array, "bessel_j0")
bessel_j1 = _function(j1_array, "bessel_j1")
bessel_y0 = _function(y0_array, "bessel_y0")
bessel_y1 = _function(y1_array, "bessel_y1")
modified_bessel_i0 = _function(i0_array, "modified_bessel_i0")
modified_bessel_i1 = _function(i1_array, "modified_bessel_i1")
modified_bessel_k0 = _function(k0_array, "modified_bessel_k0")
modified_bessel_k1 = _function(k1_array, "modified_bessel_k1")
scaled_modified_bessel_k0 = _function(k0e_array, "scaled_modified_bessel_k0")
scaled_modified_bessel_k1 = _function(k1e_array, "scaled_modified_bessel_k1")
spherical_bessel_j0 = _function(spherical_j0_array, "spherical_bessel_j0")
airy_ai = _function(airy_ai_array, "airy_ai")
