"""The exact expected improvement of a Beta variable (numpy, float64).

``EI(v) = E[(X − v)^+] = (m − v) Q + D`` for ``X ~ Beta(a, b)``, ``m = a/(a+b)``, ``Q = P(X > v)``,
``D = v (1 − v) f(v) / (a + b)``; where that cancels (``v`` well above ``m``) a continued
fraction replaces it; small integer parameters use a finite binomial sum.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from delight_gym._checks import broadcast_named, check_finite_array

__all__ = [
    "R_SWITCH",
    "SMALL_A_MAX",
    "SMALL_A_SPLIT",
    "SMALL_N_MAX",
    "Z_PRESCREEN",
    "beta_ei_flat",
    "beta_ei_upper_bound",
    "beta_expected_improvement",
    "prior_expected_improvement",
]

#: Above this value of ``r = (v - m) Q / D`` the continued fraction replaces the identity.
R_SWITCH = 0.5
#: Points with ``(v - m) / sd >= Z_PRESCREEN`` go to the continued fraction without computing
#: ``Q`` first (a speed-up only: the fraction is accurate for every ``v > m``).
Z_PRESCREEN = 3.0
#: Iteration cap of the continued fraction. Where it is used it needs < 100 steps, except near
#: r = 0.5 with both parameters huge: ~320 for a = b = 1e6 and ~1060 for a = b = 1e12.
_CF_MAX_ITER = 5000
_EPS = float(np.finfo(np.float64).eps)
#: Below this ``v`` the density is evaluated at ``_V_TINY`` and rescaled.
_V_TINY = 1e-280

#: Stirling-series coefficients of ``stirlerr`` (Loader, "Fast and accurate computation of
#: binomial probabilities", 2000).
_STIRLING = (1.0 / 12.0, 1.0 / 360.0, 1.0 / 1260.0, 1.0 / 1680.0, 1.0 / 1188.0)
_LOG_SQRT_2PI = 0.5 * float(np.log(2.0 * np.pi))
#: ``stirlerr(n)`` for ``n = 0 … 15`` (``math.lgamma``; ``stirlerr(0) = 0``).
_STIRLERR_INTEGERS = np.array(
    [0.0]
    + [math.lgamma(k + 1.0) - (k + 0.5) * math.log(k) + k - _LOG_SQRT_2PI for k in range(1, 16)]
)


def _stirlerr(n: np.ndarray) -> np.ndarray:
    """``log(n!) - log(sqrt(2 pi n) (n/e)^n)`` for ``n > 0``, elementwise."""
    out = np.empty(n.shape)
    big = n > 15.0
    nb = n[big]
    r = 1.0 / (nb * nb)
    s0, s1, s2, s3, s4 = _STIRLING
    out[big] = (s0 - (s1 - (s2 - (s3 - s4 * r) * r) * r) * r) / nb
    small = np.flatnonzero(~big)
    if small.size:
        ns = n[small]
        whole = ns == np.floor(ns)
        out[small[whole]] = _STIRLERR_INTEGERS[ns[whole].astype(np.int64)]
        if not whole.all():
            from scipy import special

            nf = ns[~whole]
            lc = special.gammaln(nf + 1.0) - (nf + 0.5) * np.log(nf) + nf
            out[small[~whole]] = lc - _LOG_SQRT_2PI
    return out


def _bd0(x: np.ndarray, m: np.ndarray) -> np.ndarray:
    """``x log(x/m) + m - x`` for ``x, m > 0`` without cancellation when ``x ~ m`` (Loader)."""
    out = x * np.log(x / m) + m - x
    near = np.flatnonzero(np.abs(x - m) < 0.1 * (x + m))
    if near.size:
        xn, mn = x[near], m[near]
        v = (xn - mn) / (xn + mn)
        s = (xn - mn) * v
        term = 2.0 * xn * v
        v2 = v * v
        for j in range(1, 200):  # |v| < 0.1: about 8 terms reach double precision
            term = term * v2
            s_next = s + term / (2 * j + 1)
            if np.array_equal(s_next, s):
                break
            s = s_next
        out[near] = s
    return out


def _log_binomial_core(k: np.ndarray, nk: np.ndarray, p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``log(C(n, k) p^k q^nk·sqrt(2π k nk / n))``, ``n = k + nk``, by Loader's saddle point."""
    n = k + nk
    return _stirlerr(n) - _stirlerr(k) - _stirlerr(nk) - _bd0(k, n * p) - _bd0(nk, n * q)


def _beta_pdf(x: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Beta density for 1-D ``x`` inside ``(0, 1)`` (``inf`` where it overflows)."""
    out = np.empty(x.shape)
    loader = (a > 2.0) & (b > 2.0)
    with np.errstate(over="ignore", divide="ignore"):
        # a, b > 2: (a+b-1) times the binomial probability of a-1 successes in a+b-2 trials,
        # by Loader's saddle-point form, as R's dbeta. Otherwise log B(a, b) is small.
        if loader.any():
            k, nk, xl = a[loader] - 1.0, b[loader] - 1.0, x[loader]
            n = k + nk
            lc = _log_binomial_core(k, nk, xl, 1.0 - xl)
            out[loader] = (n + 1.0) * np.exp(lc) * np.sqrt(n / (2.0 * np.pi * k * nk))
        rest = ~loader
        if rest.any():
            ar, br, xr = a[rest], b[rest], x[rest]
            out[rest] = np.exp(
                (ar - 1.0) * np.log(xr) + (br - 1.0) * np.log1p(-xr) - _log_beta_small(ar, br)
            )
    return out


def _log_beta_small(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``log B(a, b)`` for ``min(a, b) <= 2``, elementwise (as R's ``lbeta``)."""
    from scipy import special  # here: integer parameters (the agents') never need it

    p, q = np.minimum(a, b), np.maximum(a, b)
    out = special.gammaln(p) + special.gammaln(q) - special.gammaln(p + q)
    big = q >= 10.0
    # q >= 10: lgamma(p) + c(q) - c(p+q) + p - p log(p+q) + (q - ½) log1p(-p/(p+q)), c the
    # Stirling remainder (betaln loses up to 3e-9 relative there).
    if big.any():
        pb, qb = p[big], q[big]
        corr = _stirlerr(qb) - _stirlerr(pb + qb)
        out[big] = (
            special.gammaln(pb)
            + corr
            + pb
            - pb * np.log(pb + qb)
            + (qb - 0.5) * np.log1p(-pb / (pb + qb))
        )
    return out


def _positive_array(value: Any, name: str) -> np.ndarray:
    arr = check_finite_array(value, name)
    if arr.size and not np.all(arr > 0):
        raise ValueError(f"{name} must be > 0, got a minimum of {arr.min()}")
    return arr


def _upper_tail_ratio(a: np.ndarray, b: np.ndarray, v: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``EI / (v (1-v)^2 f(v) / b)`` for ``v > m`` (``w = b v - a (1-v) > 0``), by the even
    contraction of the continued fraction of ``I_{1-v}(b, a)`` (modified Lentz)."""
    # Partial denominators are scaled by b and formed from ratios: no overflow up to ~1e300.
    y = 1.0 - v
    s = a + b
    n = a.size
    # b e_1 = [3b + 5 + (b+1)(w+v)] b / ((b+2)(b+3))
    f = (3.0 * (b / (b + 2.0)) + 5.0 / (b + 2.0) + ((b + 1.0) / (b + 2.0)) * (w + v)) * (
        b / (b + 3.0)
    )
    c = f.copy()
    d = np.zeros(n)
    result = np.empty(n)
    idx = np.arange(n)
    aa, bb, ss, vv, yy, ww = a, b, s, v, y, w
    for k in range(1, _CF_MAX_ITER + 1):
        # b d_{2k+1} (< 0), b d_{2k+2} and b e_{k+1} = b (1 + d_{2k+3}), the latter written as
        # a sum of positive terms: e_j = [b(2j+1) + j(3j+2) + (b+j)(w + j v)] / ((b+2j)(b+2j+1)).
        b2k = bb + 2.0 * k
        j = k + 1.0
        d_odd = -((bb + k) / b2k) * ((ss + k) * yy) * (bb / (b2k + 1.0))
        d_even = j * ((aa - j) / (b2k + 1.0)) * (yy * (bb / (b2k + 2.0)))
        e_next = (
            (2.0 * j + 1.0) * (bb / (b2k + 2.0))
            + j * (3.0 * j + 2.0) / (b2k + 2.0)
            + ((bb + j) / (b2k + 2.0)) * (ww + j * vv)
        ) * (bb / (b2k + 3.0))
        alpha_k = -d_odd * d_even
        beta_k = e_next + d_even
        d = beta_k + alpha_k * d
        d = np.where(d == 0.0, 1e-300, d)
        c = beta_k + alpha_k / c
        c = np.where(c == 0.0, 1e-300, c)
        d = 1.0 / d
        delta = c * d
        f = f * delta
        done = np.abs(delta - 1.0) <= _EPS
        if done.any():
            result[idx[done]] = f[done]
            keep = ~done
            if not keep.any():
                break
            idx, f, c, d = idx[keep], f[keep], c[keep], d[keep]
            aa, bb, ss, vv, yy, ww = aa[keep], bb[keep], ss[keep], vv[keep], yy[keep], ww[keep]
    else:
        raise RuntimeError(
            f"beta_expected_improvement: continued fraction did not converge in {_CF_MAX_ITER} "
            f"steps for {idx.size} element(s), e.g. alpha={aa[0]!r}, beta={bb[0]!r}, v={vv[0]!r}"
        )
    g_over_t2 = (a - 1.0) * y * (b / (b + 2.0)) / result  # g / T_2 with g = (a-1)(1-v)/(b+2)
    return (1.0 + g_over_t2) / ((1.0 + w) + g_over_t2)


def _density_term(a: np.ndarray, b: np.ndarray, v: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``D = v^a (1-v)^b / ((a+b) B(a, b)) = v (1-v) f(v) / (a+b)`` for ``0 < v < 1``."""
    d = np.full(v.shape, np.inf)
    regular = v >= _V_TINY
    # 0 * inf (the density overflowing) -> NaN -> log form below.
    with np.errstate(over="ignore", invalid="ignore"):
        if regular.all():
            d = (v * y / (a + b)) * _beta_pdf(v, a, b)
        elif regular.any():
            ar, br, vr = a[regular], b[regular], v[regular]
            d[regular] = (vr * y[regular] / (ar + br)) * _beta_pdf(vr, ar, br)
    if not regular.all():
        # (Near-)subnormal v: f(v) = f(v0) (v/v0)^(a-1) ((1-v)/(1-v0))^(b-1), v0 = _V_TINY.
        tiny = ~regular
        at, bt, vt = a[tiny], b[tiny], v[tiny]
        pdf0 = _beta_pdf(np.full(vt.shape, _V_TINY), at, bt)
        with np.errstate(over="ignore", invalid="ignore"):  # non-finite -> log form below
            expo = (at - 1.0) * np.log(vt / _V_TINY) + (bt - 1.0) * (_V_TINY - vt)
            d[tiny] = (vt * pdf0) * np.exp(expo) * (y[tiny] / (at + bt))
    # Log form where f(v) overflowed (a < 1, v -> 0 or b < 1, v -> 1): fine unless a, b large.
    bad = ~np.isfinite(d)
    if bad.any():
        from scipy import special

        ab, bb, vb = a[bad], b[bad], v[bad]
        d[bad] = np.exp(
            ab * np.log(vb) + bb * np.log1p(-vb) - special.betaln(ab, bb) - np.log(ab + bb)
        )
    return d


def _ei_interior(a: np.ndarray, b: np.ndarray, v: np.ndarray) -> np.ndarray:
    """EI for 1-D arrays with ``0 < v < 1``."""
    y = 1.0 - v
    s = a + b
    w = b * v - a * y  # (a+b)(v-m), accurate also when m is within ulps of 0 or 1
    d = _density_term(a, b, v, y)
    ei = np.empty_like(v)
    # Far upper tail, z = (v-m)/sd >= Z_PRESCREEN: the fraction is needed (r > R_SWITCH) and
    # cheap, so betaincc is skipped; w >= 1 guards alpha < 1, where sd is not the tail's scale.
    tail = (w >= 1.0) & (w >= Z_PRESCREEN * (np.sqrt(a / (s + 1.0)) * np.sqrt(b)))
    near = np.flatnonzero(~tail)
    if near.size:
        from scipy import special

        q = special.betaincc(a[near], b[near], v[near])
        dn = d[near]
        wn = w[near]
        excess = (wn / s[near]) * q  # (v-m) Q: > 0 exactly when v > m
        ei[near] = dn - excess  # = (m-v) Q + D
        tail[near[(wn > 0.0) & (excess > R_SWITCH * dn)]] = True
    if tail.any():
        at, bt, yt = a[tail], b[tail], y[tail]
        scale = d[tail] * (s[tail] * yt / bt)  # = v (1-v)^2 f(v) / b
        ei[tail] = scale * _upper_tail_ratio(at, bt, v[tail], w[tail])
    failed = ~(ei >= 0.0) | ~np.isfinite(ei)  # only seen for parameters beyond ~1e50
    if failed.any():
        i = int(np.flatnonzero(failed)[0])
        raise FloatingPointError(
            f"beta_expected_improvement: no finite non-negative value for {failed.sum()} "
            f"element(s) (extreme parameters), e.g. alpha={a[i]!r}, beta={b[i]!r}, v={v[i]!r}"
        )
    return ei


def beta_expected_improvement(alpha: Any, beta: Any, v: Any) -> np.ndarray:
    """Expected improvement ``E[(X - v)^+]`` of ``X ~ Beta(alpha, beta)`` over ``v``.

    Relative error ``<= 1e-10`` for ``alpha, beta`` in ``[1, 1e6]`` wherever the result
    exceeds ``1e-300``; finite and ``>= 0`` for ``alpha, beta`` in ``[1e-50, 1e50]``.

    Parameters
    ----------
    alpha, beta : array_like
        Finite, ``> 0``, broadcastable with ``v``.
    v : array_like
        Finite baseline(s); ``v <= 0`` gives ``mean - v``, ``v >= 1`` gives 0.

    Returns
    -------
    numpy.ndarray
        float64, the broadcast shape (0-d for scalars).

    Raises
    ------
    ValueError, TypeError
        An argument not finite, positive, numeric or broadcastable.
    FloatingPointError, RuntimeError
        Only for parameters beyond ``[1e-50, 1e50]``.

    Examples
    --------
    >>> round(float(beta_expected_improvement(1.0, 1.0, 0.5)), 12)  # (1 - v)^2 / 2
    0.125
    >>> beta_expected_improvement([[2.0], [5.0]], 3.0, [0.2, 0.4, 0.6]).shape
    (2, 3)
    """
    named = {"alpha": _positive_array(alpha, "alpha"), "beta": _positive_array(beta, "beta")}
    a, b, x = broadcast_named({**named, "v": check_finite_array(v, "v")})
    return beta_ei_flat(a.ravel(), b.ravel(), x.ravel()).reshape(a.shape)


def beta_ei_flat(
    a: np.ndarray, b: np.ndarray, x: np.ndarray, *, skip_below: float = 0.0
) -> np.ndarray:
    """:func:`beta_expected_improvement` of equal-length 1-D float64 arrays, unvalidated;
    elements whose :func:`beta_ei_upper_bound` is below ``skip_below`` may come back as 0."""
    out = np.zeros(a.size)
    below = x <= 0.0
    if below.any():
        ab = a[below]
        out[below] = ab / (ab + b[below]) - x[below]
    inside = (x > 0.0) & (x < 1.0)
    small = inside & _small_integer_parameters(a, b)
    if small.all():
        return _ei_small_integer(a, b, x)
    if small.any():
        out[small] = _ei_small_integer(a[small], b[small], x[small])
        inside &= ~small
    if skip_below > 0.0 and inside.any():
        costly = np.flatnonzero(inside)
        bound = beta_ei_upper_bound(a[costly], b[costly], x[costly])
        inside[costly[bound < skip_below * (1.0 - 1e-9)]] = False
    if inside.all():
        out = _ei_interior(a, b, x)
    elif inside.any():
        out[inside] = _ei_interior(a[inside], b[inside], x[inside])
    return out


def prior_expected_improvement(prior_alpha: float, prior_beta: float, v: np.ndarray) -> np.ndarray:
    """EI of an untried arm, ``X ~ Beta(prior_alpha, prior_beta)``, for a 1-D float ``v``
    (unvalidated)."""
    # Under Beta(1, 1), E[(X - v)^+] = (1 - v)^2 / 2 for 0 <= v <= 1.
    if prior_alpha == 1.0 and prior_beta == 1.0 and v.size and v.min() >= 0.0 and v.max() <= 1.0:
        return 0.5 * (1.0 - v) ** 2
    return beta_ei_flat(np.full(v.size, prior_alpha), np.full(v.size, prior_beta), v)


#: The finite binomial sum is used for integer ``a <= SMALL_A_MAX`` and ``a + b <= SMALL_N_MAX``
#: (its terms in two matrix passes, split at ``SMALL_A_SPLIT``).
SMALL_A_MAX = 1000
SMALL_A_SPLIT = 16
SMALL_N_MAX = 10_000


def _small_integer_parameters(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a <= SMALL_A_MAX) & (a + b <= SMALL_N_MAX) & (a == np.floor(a)) & (b == np.floor(b))


def _ei_small_integer(a: np.ndarray, b: np.ndarray, v: np.ndarray) -> np.ndarray:
    """EI for small integer ``a``, ``b`` (:func:`_small_integer_parameters`), ``0 < v < 1``, as a
    finite sum of positive terms."""
    # Integrating P(X > x) = P(Bin(n - 1, x) <= a - 1) from v to 1:
    #   EI = (1 - v)^n / n · Σ_{i<a} (a - i) Π_{k<i} ρ_k,  ρ_k = (n-k)/(k+1) · v/(1-v),
    # formed as exp(n·log1p(-v) + log(sum)) so (1 - v)^n never underflows on its own.
    n = a + b
    odds = v / (1.0 - v)
    with np.errstate(over="ignore", invalid="ignore"):
        # The sum is 1 for a = 1, 2 + ρ_0 for a = 2, else weighted cumulative products of ρ_k
        # (split at SMALL_A_SPLIT so the rare long sums do not widen the many short ones).
        acc = np.where(a == 1.0, 1.0, 2.0 + n * odds)
        long_sum = a > SMALL_A_SPLIT
        for big in (np.flatnonzero((a > 2.0) & ~long_sum), np.flatnonzero(long_sum)):
            if big.size:
                a_big = a[big]
                k = np.arange(int(a_big.max()) - 1)
                rho = (n[big, None] - k) / (k + 1.0) * odds[big, None]
                weights = np.maximum(a_big[:, None] - 1.0 - k, 0.0)  # (a - i) for i = k + 1
                acc[big] = a_big + (weights * np.cumprod(rho, axis=1)).sum(axis=1)
        out = np.exp(n * np.log1p(-v) + np.log(acc)) / n
    anchored = ~np.isfinite(acc)
    if anchored.any():
        out[anchored] = _ei_binomial_anchored(a[anchored], n[anchored], v[anchored])
    return out


def _ei_binomial_anchored(a: np.ndarray, n: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The binomial sum of :func:`_ei_small_integer`, scaled by its largest term."""
    # t_i = C(n, i) v^i (1-v)^(n-i) peaks at j = min(a - 1, ⌊(n+1) v⌋); every other term is
    # t_j times ratios ρ_k (above j) or 1/ρ_k (below), each at most 1, so nothing overflows.
    y = 1.0 - v
    width = int(a.max())
    j = np.minimum(a - 1.0, np.floor((n + 1.0) * v))
    k = np.arange(width - 1.0)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        rho = (n[:, None] - k) / (k + 1.0) * (v / y)[:, None]  # t_{k+1} / t_k
        above = k >= j[:, None]
        inside = k < a[:, None] - 1.0  # columns i >= a (the padding) have weight 0
        rel = np.ones((a.size, width))
        rel[:, 1:] = np.cumprod(np.where(above & inside, rho, 1.0), axis=1)
        rel[:, :-1] *= np.cumprod(np.where(above, 1.0, 1.0 / rho)[:, ::-1], axis=1)[:, ::-1]
        total = (np.maximum(a[:, None] - np.arange(width), 0.0) * rel).sum(axis=1)
    return _binomial_probability(j, n, v, y) * total / n


def _binomial_probability(j: np.ndarray, n: np.ndarray, p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``C(n, j) p^j q^(n-j)`` for integers ``0 <= j < n`` (Loader's form, ``q = 1 - p``)."""
    out = np.exp(n * np.log1p(-p))  # j = 0
    inner = j > 0
    if inner.any():
        ji, ni, pi, qi = j[inner], n[inner], p[inner], q[inner]
        nj = ni - ji
        lc = _log_binomial_core(ji, nj, pi, qi)
        out[inner] = np.exp(lc) * np.sqrt(ni / (2.0 * np.pi * ji * nj))
    return out


def beta_ei_upper_bound(alpha: np.ndarray, beta: np.ndarray, v: np.ndarray) -> np.ndarray:
    """A cheap upper bound on the Beta EI for ``0 < v < 1`` (equal-shape 1-D float arrays,
    unvalidated); ``+inf`` for ``v <= m``."""
    # For v > m, EI = D - (v - m) Q with (v - m) Q >= 0: the density term D bounds it.
    y = 1.0 - v
    above = beta * v - alpha * y > 0.0  # v > m
    bound = np.full(v.shape, np.inf)
    if above.any():
        a, b, va, ya = alpha[above], beta[above], v[above], y[above]
        bound[above] = _density_term(a, b, va, ya)
    return bound
