"""Makes the Chebyshev coefficients of gradcli/engine/elementary.py's float64 erf, and checks their error.

    /work/oracle/bin/python tools/erf_fit.py      (needs mpmath: the oracle's Python has it)

Each polynomial interpolates its function at the Chebyshev points of the first kind (the Chebyshev
coefficients taken by the discrete cosine sums in 200-bit arithmetic), then is rewritten in powers of t:
the Chebyshev coefficients fall faster than 2^-k, so the power form is well conditioned and Horner's rule
in float64 loses almost nothing. The printed error is the largest relative error of the float64 Horner
evaluation (as gradcli.engine.elementary evaluates them) against mpmath on 20,001 points of the interval.
"""

import mpmath
import numpy as np

mpmath.mp.prec = 200
SMALL, LOW, HIGH = 0.75, 0.75, 4.0


def small(t):
    """erf(x) / x as a function of t = 2 x^2 / SMALL^2 - 1."""
    x2 = (t + 1) / 2 * mpmath.mpf(SMALL) ** 2
    return 2 / mpmath.sqrt(mpmath.pi) if x2 == 0 else mpmath.erf(mpmath.sqrt(x2)) / mpmath.sqrt(x2)


def middle(t):
    """erfc(x) exp(x^2) as a function of t = 2 (x - LOW) / (HIGH - LOW) - 1."""
    x = (t + 1) / 2 * (mpmath.mpf(HIGH) - LOW) + LOW
    return mpmath.erfc(x) * mpmath.exp(x * x)


def coefficients(f, degree: int) -> list[float]:
    n = degree + 1
    angles = [mpmath.pi * (k + mpmath.mpf(1) / 2) / n for k in range(n)]
    values = [f(mpmath.cos(a)) for a in angles]
    out = [mpmath.fsum(v * mpmath.cos(j * a) for v, a in zip(values, angles)) * 2 / n for j in range(n)]
    out[0] /= 2
    return out


def powers(chebyshev: list) -> list:
    """sum c_k T_k(t) rewritten as sum a_j t^j (T_{k+1} = 2t T_k - T_{k-1}), in mpmath."""
    n = len(chebyshev)
    out = [mpmath.mpf(0)] * n
    zero, one = mpmath.mpf(0), mpmath.mpf(1)
    previous, current = [one] + [zero] * (n - 1), [zero, one] + [zero] * (n - 2)
    for k, c in enumerate(chebyshev):
        t_k = previous if k == 0 else current
        out = [o + c * p for o, p in zip(out, t_k)]
        if k >= 1:
            previous, current = current, [2 * (current[j - 1] if j else 0) - previous[j] for j in range(n)]
    return [float(a) for a in out]


def worst(f, cs) -> float:
    ts = np.linspace(-1.0, 1.0, 20_001)
    exact = np.array([float(f(mpmath.mpf(t))) for t in ts.tolist()])
    approx = np.zeros_like(ts)
    for a in cs[::-1]:
        approx = approx * ts + a
    return float(np.max(np.abs(approx / exact - 1)))


for name, f, degree in (("_ERF_SMALL", small, 10), ("_ERF_MID", middle, 24)):
    cs = powers(coefficients(f, degree))
    print(f"{name} = (     # relative error {worst(f, cs):.2e}")
    for i in range(0, len(cs), 3):
        print("    " + " ".join(f"{c!r}," for c in cs[i:i + 3]))
    print(")")
