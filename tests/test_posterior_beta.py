"""Tests of ``delight_gym.posteriors.beta``: exact Beta expected improvement and the posterior.

The expected improvement is checked against a 50-digit mpmath reference built from the identity
``EI = (m - v) Q + D`` (see the module under test). ``Q`` is evaluated by the classic continued
fraction of the regularized incomplete beta function (modified Lentz at 50 digits), because
``mpmath.betainc`` cannot serve as the reference on the whole grid:

* its hypergeometric series raises ``NoConvergence`` once both parameters are ``>~ 1e4``;
* ``betainc(a, b, v, 1)`` is computed as ``I(1) - I(v)``, which cancels catastrophically in the
  upper tail (at 50 digits, any ``Q < 1e-50`` is noise).

The continued-fraction reference is itself checked against ``mpmath.betainc(b, a, 0, 1 - v)``
(the lower-tail form, no subtraction) where mpmath converges, and the identity is checked
against direct ``mpmath.quad`` integration of ``(x - v) f(x)``.
"""

from __future__ import annotations

import re
import subprocess
import sys
from decimal import Context, Decimal, localcontext
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special, stats

import delight_gym.posteriors.beta_ei as beta_mod
from delight_gym.posteriors.beta import (
    BetaBernoulliPosterior,
    beta_ei_flat,
    beta_expected_improvement,
    prior_expected_improvement,
)

DPS = 50
RTOL = 1e-10  # the accuracy promised for alpha, beta in [1, 1e6] wherever EI > 1e-300
TINY = 1e-300

PARAMS = [1.0, 1.5, 3.0, 10.0, 100.0, 1e3, 1e4, 1e5, 1e6]
KS = [0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 30.0, 40.0, 60.0]
UNIFORM_VS = [0.001, 0.1, 0.3, 0.5, 0.7, 0.9, 0.999]


# ---------------------------------------------------------------------------------------------
# 50-digit reference
# ---------------------------------------------------------------------------------------------


def _betacf(a: float, b: float, x: float, *, reflect: bool = False) -> mp.mpf:
    """Continued fraction of ``I_x(a, b)`` (Numerical Recipes ``betacf``), modified Lentz;
    with ``reflect=True`` it is evaluated at ``1 - x`` (formed exactly to 50 digits).

    The loop runs in :mod:`decimal` with the same 50 significant digits as mpmath (correctly
    rounded, and ~10x faster than mpmath's pure-Python backend over the ~1000 steps needed
    near the mean of Beta(1e6, 1e6)); the result is handed back to mpmath.
    """
    with localcontext(Context(prec=DPS)):
        one = Decimal(1)
        a_, b_ = Decimal(a), Decimal(b)
        x_ = one - Decimal(x) if reflect else +Decimal(x)
        tol = Decimal(10) ** (5 - DPS)
        qab, qap, qam = a_ + b_, a_ + one, a_ - one
        c = one
        d = one / (one - qab * x_ / qap)
        h = d
        for m in range(1, 200_000):
            m2 = 2 * m
            aa = m * (b_ - m) * x_ / ((qam + m2) * (a_ + m2))
            d = one / (one + aa * d)
            c = one + aa / c
            h *= d * c
            aa = -(a_ + m) * (qab + m) * x_ / ((a_ + m2) * (qap + m2))
            d = one / (one + aa * d)
            c = one + aa / c
            delta = d * c
            h *= delta
            if abs(delta - one) < tol:
                with mp.workdps(DPS):
                    return mp.mpf(str(h))
    raise RuntimeError("reference continued fraction did not converge")  # pragma: no cover


def _mp_parts(a: float, b: float, v: float) -> tuple[mp.mpf, mp.mpf, mp.mpf]:
    """``(Q, D, EI)`` at 50 digits for ``0 < v < 1`` (``a``, ``b``, ``v`` taken exactly)."""
    with mp.workdps(DPS):
        A, B, V = mp.mpf(a), mp.mpf(b), mp.mpf(v)
        log_beta = mp.loggamma(A) + mp.loggamma(B) - mp.loggamma(A + B)
        front = mp.exp(A * mp.log(V) + B * mp.log1p(-V) - log_beta)  # v^a (1-v)^b / B(a, b)
        if V > (A + 1) / (A + B + 2):  # upper tail directly: Q = I_{1-v}(b, a)
            q = front * _betacf(b, a, v, reflect=True) / B
        else:
            q = 1 - front * _betacf(a, b, v) / A
        d = front / (A + B)
        return q, d, (A / (A + B) - V) * q + d


def _mp_ei(a: float, b: float, v: float) -> mp.mpf:
    with mp.workdps(DPS):
        if v <= 0:
            return mp.mpf(a) / (mp.mpf(a) + mp.mpf(b)) - mp.mpf(v)
        if v >= 1:
            return mp.mpf(0)
        return _mp_parts(a, b, v)[2]


def _moments(a: float, b: float) -> tuple[float, float]:
    m = a / (a + b)
    return m, float(np.sqrt(a * b / ((a + b) ** 2 * (a + b + 1.0))))


def _grid_points() -> list[tuple[float, float, float]]:
    points = []
    for a in PARAMS:
        for b in PARAMS:
            m, sd = _moments(a, b)
            vs = {0.0, 1.0, m, *UNIFORM_VS}
            for k in KS:
                for v in (m - k * sd, m + k * sd):
                    if 0.0 < v < 1.0:
                        vs.add(v)
            points += [(a, b, v) for v in sorted(vs)]
    return points


@pytest.fixture(scope="module")
def grid_reference() -> dict[str, np.ndarray]:
    """The grid and its 50-digit references, computed once (a few seconds)."""
    pts = _grid_points()
    a, b, v = (np.array(c) for c in zip(*pts, strict=True))
    ei, q, d = [], [], []
    for ai, bi, vi in pts:
        if 0.0 < vi < 1.0:
            qi, di, ei_i = _mp_parts(ai, bi, vi)
        else:
            qi, di, ei_i = mp.nan, mp.nan, _mp_ei(ai, bi, vi)
        ei.append(ei_i)
        q.append(qi)
        d.append(di)
    return {
        "a": a,
        "b": b,
        "v": v,
        "q_mp": np.array(q, dtype=object),
        "ei": np.array([float(x) for x in ei]),
        # r = (v - m) Q / D, the cancellation ratio of the identity (0 where v <= m)
        "r": np.array(
            [
                float(max((mp.mpf(vi) - mp.mpf(ai) / (ai + bi)) * qi / di, 0))
                if 0 < vi < 1 and di > 0
                else 0.0
                for ai, bi, vi, qi, di in zip(a, b, v, q, d, strict=True)
            ]
        ),
    }


def _rel_err(got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    return np.abs(got - ref) / np.where(ref > 0, ref, 1.0)


# ---------------------------------------------------------------------------------------------
# Accuracy against mpmath
# ---------------------------------------------------------------------------------------------


def test_ei_matches_mpmath_on_grid(grid_reference: dict[str, np.ndarray]) -> None:
    g = grid_reference
    got = beta_expected_improvement(g["a"], g["b"], g["v"])
    assert got.dtype == np.float64 and got.shape == g["v"].shape
    assert np.all(np.isfinite(got)) and np.all(got >= 0.0)
    big = g["ei"] > TINY
    assert big.sum() > 1500  # the grid really exercises the promised range
    err = _rel_err(got, g["ei"])
    worst = int(np.argmax(np.where(big, err, 0.0)))
    assert err[big].max() <= RTOL, (
        f"rel err {err[worst]:.3g} at a={g['a'][worst]}, b={g['b'][worst]}, v={g['v'][worst]!r}"
    )
    # Where the true EI is below 1e-300 the result must still be tiny (not garbage).
    assert np.all(got[~big] <= 1e-290)
    # v = 1 gives exactly 0, v = 0 the mean.
    assert np.all(got[g["v"] == 1.0] == 0.0)
    at0 = g["v"] == 0.0
    np.testing.assert_allclose(got[at0], g["a"][at0] / (g["a"][at0] + g["b"][at0]), rtol=1e-15)


def test_grid_covers_both_formulas(grid_reference: dict[str, np.ndarray]) -> None:
    """The grid has points on both sides of the switch and deep in the cancelling tail."""
    g = grid_reference
    above = (g["v"] > g["a"] / (g["a"] + g["b"])) & (g["ei"] > TINY)
    r = g["r"][above]
    assert np.sum(r <= beta_mod.R_SWITCH) >= 50
    assert np.sum(r > beta_mod.R_SWITCH) >= 200
    assert np.sum(r > 0.999) >= 20  # where the plain identity loses > 3 digits


def test_upper_tail_fraction_is_accurate_for_every_v_above_the_mean(
    grid_reference: dict[str, np.ndarray],
) -> None:
    """The continued fraction alone is accurate for all v > m, not only past the switch."""
    g = grid_reference
    a, b, v = g["a"], g["b"], g["v"]
    y = 1.0 - v
    w = b * v - a * y
    sel = (v > 0) & (v < 1) & (w > 0) & (g["ei"] > TINY)
    a, b, v, y, w = a[sel], b[sel], v[sel], y[sel], w[sel]
    d = beta_mod._density_term(a, b, v, y)
    got = d * ((a + b) * y / b) * beta_mod._upper_tail_ratio(a, b, v, w)
    assert _rel_err(got, g["ei"][sel]).max() <= RTOL


def test_reference_agrees_with_mpmath_betainc(grid_reference: dict[str, np.ndarray]) -> None:
    """Cross-check of the reference Q against mpmath's hypergeometric incomplete beta."""
    g = grid_reference
    sel = np.flatnonzero(
        (g["v"] > 0) & (g["v"] < 1) & (np.maximum(g["a"], g["b"]) <= 100.0) & (g["ei"] > TINY)
    )
    assert sel.size > 300
    with mp.workdps(DPS):
        for i in sel[::3]:
            a, b, v = mp.mpf(g["a"][i]), mp.mpf(g["b"][i]), mp.mpf(g["v"][i])
            q = mp.betainc(b, a, 0, 1 - v, regularized=True)  # = I_{1-v}(b, a), no subtraction
            assert abs(q - g["q_mp"][i]) <= mp.mpf(10) ** -40 * q, (g["a"][i], g["b"][i], v)


QUAD_CASES = [
    (1.5, 3.0, [0.0, 1.0]),
    (3.0, 10.0, [-2.0, 5.0]),
    (10.0, 100.0, [0.0, 20.0]),
    (1e3, 1e4, [-5.0, 1.0, 40.0]),
    (1e4, 1e4, [0.0, 20.0]),
    (1.0, 1e3, [5.0]),
    (1e3, 1.5, [-5.0]),
]


@pytest.mark.parametrize(("a", "b", "ks"), QUAD_CASES)
def test_identity_matches_quadrature(a: float, b: float, ks: list[float]) -> None:
    """``(m - v) Q + D`` equals ``∫_v^1 (x - v) f(x) dx`` by tanh-sinh quadrature."""
    m, sd = _moments(a, b)
    for k in ks:
        v = m + k * sd
        with mp.workdps(DPS):
            A, B, V = mp.mpf(a), mp.mpf(b), mp.mpf(v)
            log_beta = mp.log(mp.beta(A, B))

            def log_pdf(x: mp.mpf, A: mp.mpf = A, B: mp.mpf = B, lb: mp.mpf = log_beta) -> mp.mpf:
                return (A - 1) * mp.log(x) + (B - 1) * mp.log1p(-x) - lb

            # mp.quad's tolerance is absolute: scale the integrand to O(1) at its bulk.
            scale = log_pdf(mp.mpf(max(v, m)))
            h = min(sd, sd * sd / (v - m)) if v > m else sd  # width of the integrand's bulk
            pts = {V, mp.mpf(1)}
            pts |= {V + h * t for t in (0.5, 1, 2, 4, 8, 16, 32, 64) if V + h * t < 1}
            pts |= {mp.mpf(m + j * sd) for j in (-10, -5, -2, -1, 0, 1, 2, 5, 10, 20, 40)}
            pts = {p for p in pts if V <= p <= 1}
            integral = mp.quad(
                lambda x, V=V, s=scale: (x - V) * mp.exp(log_pdf(x) - s), sorted(pts)
            ) * mp.exp(scale)
            ref = _mp_parts(a, b, v)[2]
            assert abs(integral - ref) <= mp.mpf(10) ** -35 * ref, (a, b, k)
        assert abs(float(beta_expected_improvement(a, b, v)) - float(ref)) <= RTOL * float(ref)


def _random_points(seed: int, n: int) -> list[tuple[float, float, float]]:
    """Log-uniform parameters in [1, 1e6]; a third with integer alpha and non-integer beta
    (where Boost's betaincc is least accurate); v around the mean and in the upper tail."""
    rng = np.random.default_rng(seed)
    a = 10 ** rng.uniform(0, 6, n)
    b = 10 ** rng.uniform(0, 6, n)
    a[: n // 3] = rng.integers(1, 40, n // 3)
    m = a / (a + b)
    sd = np.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))
    v = m + rng.uniform(-3.0, 12.0, n) * sd
    keep = (v > 0) & (v < 1)
    return list(zip(a[keep], b[keep], v[keep], strict=True))


def test_ei_matches_mpmath_at_random_points() -> None:
    pts = _random_points(20240601, 400)
    a, b, v = (np.array(c) for c in zip(*pts, strict=True))
    ref = np.array([float(_mp_ei(*p)) for p in pts])
    got = beta_expected_improvement(a, b, v)
    big = ref > TINY
    assert big.sum() > 250
    assert _rel_err(got, ref)[big].max() <= RTOL
    assert np.all(got >= 0.0)


def test_extreme_skew_near_the_mean() -> None:
    """Beta(~1e5, ~1) and Beta(~1, ~1e5): the mean is within a few ulps of 1 (or 0), so
    ``m - v`` must not be formed as ``a/(a+b) - v`` (its rounding is ~1e-9 of ``v - m``)."""
    rng = np.random.default_rng(3)
    n = 600
    a = 10 ** rng.uniform(4, 6, n)
    b = 10 ** rng.uniform(0, 0.6, n)
    swap = rng.random(n) < 0.5
    a[swap], b[swap] = b[swap], a[swap]
    m, sd = a / (a + b), np.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))
    v = m + rng.uniform(-3, 3, n) * sd
    keep = (v > 0) & (v < 1)
    a, b, v = a[keep], b[keep], v[keep]
    ref = np.array([float(_mp_ei(*p)) for p in zip(a, b, v, strict=True)])
    assert np.all(ref > TINY)
    assert _rel_err(beta_expected_improvement(a, b, v), ref).max() <= RTOL


def test_small_parameters_below_one() -> None:
    """Outside the promised range (alpha < 1) the result is still accurate in these cases,
    including subnormal v where Boost's density raises and is bypassed."""
    cases = [(0.5, 0.5, 0.3), (0.5, 3.0, 1e-9), (8.15613680e-04, 7.03297620e05, 1.10436749e-302)]
    cases += [(0.01, 2.0, 5e-324), (3.0, 0.2, 1 - 2**-52), (0.3, 10.0, 0.9)]
    for a, b, v in cases:
        ref = float(_mp_ei(a, b, v))
        got = float(beta_expected_improvement(a, b, v))
        assert abs(got - ref) <= 1e-9 * ref, (a, b, v, got, ref)


@pytest.mark.parametrize(
    ("a", "b", "v"),
    [
        (9.128142049897027e91, 3.944036965955183e77, 5.2366361837866815e-269),
        (8.55357826837481e-44, 4.7741335392716776e166, 1.9883627238181984e-170),
        (1e300, 1e300, 0.5),
        (1e-300, 1e-300, 0.5),
        (1e-300, 1e300, 1e-310),
        (1.7e308, 1.0, 0.999),
    ],
)
def test_extreme_parameters_never_give_nan(a: float, b: float, v: float) -> None:
    """Far outside any posterior: either a finite non-negative value or an exception."""
    try:
        ei = float(beta_expected_improvement(a, b, v))
    except (FloatingPointError, RuntimeError):
        return
    assert np.isfinite(ei) and ei >= 0.0


# ---------------------------------------------------------------------------------------------
# Closed forms and special values
# ---------------------------------------------------------------------------------------------

CLOSED_VS = [1e-300, 1e-12, 1e-6, 0.01, 0.2, 0.5, 0.77, 0.99, 0.999999, 1 - 2**-52]


def test_uniform_closed_form() -> None:
    v = np.array(CLOSED_VS)
    got = beta_expected_improvement(1.0, 1.0, v)
    with mp.workdps(DPS):
        ref = np.array([float((1 - mp.mpf(x)) ** 2 / 2) for x in CLOSED_VS])
    np.testing.assert_allclose(got, ref, rtol=1e-13, atol=0)


@pytest.mark.parametrize("b", [1.5, 3.0, 10.0, 1e3, 1e6])
def test_alpha_one_closed_form(b: float) -> None:
    """Beta(1, b): EI(v) = (1 - v)^(b+1) / (b+1)."""
    v = np.array(CLOSED_VS)
    got = beta_expected_improvement(1.0, b, v)
    with mp.workdps(DPS):
        ref = np.array([float((1 - mp.mpf(x)) ** (b + 1) / (b + 1)) for x in CLOSED_VS])
    big = ref > TINY
    assert big.sum() >= 3
    np.testing.assert_allclose(got[big], ref[big], rtol=RTOL, atol=0)


@pytest.mark.parametrize("a", [1.5, 3.0, 10.0, 1e3, 1e6])
def test_beta_one_closed_form(a: float) -> None:
    """Beta(a, 1): EI(v) = m - v + v^(a+1) / (a+1)."""
    v = np.array(CLOSED_VS)
    got = beta_expected_improvement(a, 1.0, v)
    with mp.workdps(DPS):
        A = mp.mpf(a)
        ref = np.array([float(A / (A + 1) - x + mp.mpf(x) ** (A + 1) / (A + 1)) for x in v])
    np.testing.assert_allclose(got, ref, rtol=RTOL, atol=0)


def test_special_values() -> None:
    a = np.array([1.0, 2.5, 30.0, 1e6])
    b = np.array([1.0, 7.0, 3.0, 2.0])
    mean = a / (a + b)
    np.testing.assert_allclose(beta_expected_improvement(a, b, 0.0), mean, rtol=1e-15)
    np.testing.assert_allclose(beta_expected_improvement(a, b, -0.5), mean + 0.5, rtol=1e-15)
    np.testing.assert_array_equal(beta_expected_improvement(a, b, 1.0), 0.0)
    np.testing.assert_array_equal(beta_expected_improvement(a, b, 3.0), 0.0)


def test_broadcasting_and_types() -> None:
    out = beta_expected_improvement([[1.0], [2.0], [5.0]], [2.0, 3.0, 4.0, 5.0], 0.3)
    assert out.shape == (3, 4) and out.dtype == np.float64
    for i, a in enumerate([1.0, 2.0, 5.0]):
        for j, b in enumerate([2.0, 3.0, 4.0, 5.0]):
            assert out[i, j] == beta_expected_improvement(a, b, 0.3)
    scalar = beta_expected_improvement(2, 3, 0.4)
    assert isinstance(scalar, np.ndarray) and scalar.shape == ()
    assert beta_expected_improvement(np.float32(2), 3, [0.1, 0.9]).dtype == np.float64


def test_vectorized_equals_elementwise() -> None:
    """Batching elements that take different code paths does not change any of them."""
    rng = np.random.default_rng(7)
    n = 400
    a = 10 ** rng.uniform(0, 6, n)
    b = 10 ** rng.uniform(0, 6, n)
    m, sd = a / (a + b), np.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))
    v = np.concatenate([m[:300] + rng.uniform(-5, 30, 300) * sd[:300], rng.uniform(-0.2, 1.2, 100)])
    batch = beta_expected_improvement(a, b, v)
    single = np.array([beta_expected_improvement(*t) for t in zip(a, b, v, strict=True)])
    np.testing.assert_allclose(batch, single, rtol=1e-14, atol=0)


@pytest.mark.parametrize("floor", [1e-6, 1e-3, 1e-2, 0.05])
def test_skip_below_returns_exact_ei_or_a_proved_zero(floor: float) -> None:
    """``beta_ei_flat(..., skip_below=f)``: each element is its exact EI, or 0 where the exact
    EI is below ``f``; the small-integer elements are never skipped."""
    rng = np.random.default_rng(11)
    n = 600
    a = np.concatenate([rng.integers(1, 40, n // 2), 10 ** rng.uniform(-0.5, 4, n // 2)])
    b = np.concatenate([rng.integers(1, 400, n // 2), 10 ** rng.uniform(-0.5, 4, n // 2)])
    a, b = a.astype(float), b.astype(float)
    m, sd = a / (a + b), np.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))
    v = np.clip(m + rng.uniform(-2, 12, n) * sd, -0.1, 1.1)
    exact = beta_expected_improvement(a, b, v)
    got = beta_ei_flat(a, b, v, skip_below=floor)
    skipped = got != exact
    np.testing.assert_array_equal(got[skipped], 0.0)
    assert np.all(exact[skipped] < floor)
    assert not skipped[: n // 2].any()  # integer parameters: the exact EI costs no more
    assert skipped.sum() > 10  # the screen did skip something


def test_density_matches_mpmath() -> None:
    """The Beta density behind ``D`` (Loader's binomial form for ``a, b > 2``, R's ``lbeta``
    otherwise; no ``scipy.stats``) against 40-digit mpmath, ``a, b`` in ``[0.05, 1e6]``, half
    of them integers, ``v`` from 8 sd below the mean to 15 above."""
    rng = np.random.default_rng(2)
    n = 400
    a, b = (np.exp(rng.uniform(np.log(0.05), np.log(1e6), n)) for _ in range(2))
    a = np.where(rng.random(n) < 0.5, np.maximum(np.round(a), 1.0), a)
    b = np.where(rng.random(n) < 0.5, np.maximum(np.round(b), 1.0), b)
    m = a / (a + b)
    v = np.clip(m + np.sqrt(m * (1 - m) / (a + b + 1)) * rng.uniform(-8, 15, n), 1e-200, 1 - 1e-15)
    got = beta_mod._beta_pdf(v, a, b)
    with mp.workdps(40):
        for ai, bi, vi, g in zip(a, b, v, got, strict=True):
            aa, bb, vv = mp.mpf(ai), mp.mpf(bi), mp.mpf(vi)
            log_ref = (aa - 1) * mp.log(vv) + (bb - 1) * mp.log1p(-vv) - mp.log(mp.beta(aa, bb))
            if not -690 < log_ref < 690:
                continue
            ref = mp.exp(log_ref)
            assert abs(mp.mpf(g) - ref) <= 5e-12 * ref, (ai, bi, vi)


def test_integer_parameters_match_the_exact_binomial_sum() -> None:
    """Integer ``a <= 1000``, ``a + b <= 10^4`` (the bandit agents' parameters, computed by the
    binomial sum: cumulative products, or anchored at the largest term) against the same
    finite sum in 40-digit mpmath, ``v`` from 6 sd below the mean to 14 above."""
    rng = np.random.default_rng(5)
    points = []
    for _ in range(150):
        n = int(rng.integers(2, 10_001))
        a = int(rng.integers(1, min(n, 1001)))
        m = a / n
        v = float(np.clip(m + np.sqrt(m * (1 - m) / (n + 1)) * rng.uniform(-6, 14), 1e-12, 0.999))
        points.append((a, n - a, v))
    a, b, v = (np.array(c, dtype=float) for c in zip(*points, strict=True))
    got = beta_expected_improvement(a, b, v)
    with mp.workdps(40):
        for (ai, bi, vi), g in zip(points, got, strict=True):
            n, x = ai + bi, mp.mpf(vi)
            ref = mp.fsum(
                (ai - i) * mp.binomial(n, i) * x**i * (1 - x) ** (n - i) for i in range(ai)
            )
            if ref > TINY:
                assert abs(mp.mpf(g) - ref / n) <= 1e-12 * ref / n, (ai, bi, vi)


def test_ei_does_not_import_scipy_stats() -> None:
    """``scipy.stats`` takes a second to import: the EI never needs it, and integer parameters
    (a bandit agent's) need no SciPy at all (``scipy.special`` takes a few tenths)."""
    code = (
        "import sys; import numpy as np; "
        "from delight_gym.posteriors.beta import beta_expected_improvement as ei; "
        "ei(np.array([300.0, 2.0, 7.0]), np.array([90.0, 1e3, 4e3]), [0.5, 0.01, 0.9]); "
        "assert 'scipy' not in sys.modules, 'integer parameters imported scipy'; "
        "ei(np.array([300.5, 2.5, 1e5]), np.array([90.0, 1e4, 2e5]), 0.5); "
        "sys.exit(int('scipy.stats' in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_iteration_cap_raises(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(beta_mod, "_CF_MAX_ITER", 3)
    m, sd = _moments(1e4 + 0.5, 1e4)
    with pytest.raises(RuntimeError, match="did not converge"):
        beta_expected_improvement(1e4 + 0.5, 1e4, m + 5 * sd)


@pytest.mark.parametrize(
    ("kwargs", "exc", "name"),
    [
        ({"alpha": 0.0}, ValueError, "alpha"),
        ({"alpha": -1.0}, ValueError, "alpha"),
        ({"alpha": np.nan}, ValueError, "alpha"),
        ({"alpha": [1.0, np.inf]}, ValueError, "alpha"),
        ({"alpha": "x"}, TypeError, "alpha"),
        ({"beta": 0.0}, ValueError, "beta"),
        ({"beta": [2.0, -3.0]}, ValueError, "beta"),
        ({"beta": np.inf}, ValueError, "beta"),
        ({"v": np.nan}, ValueError, "v"),
        ({"v": [0.5, -np.inf]}, ValueError, "v"),
        ({"v": [0.1, 0.2, 0.3], "alpha": [1.0, 2.0]}, ValueError, "broadcast"),
    ],
)
def test_ei_rejects_bad_input(kwargs: dict, exc: type[Exception], name: str) -> None:
    args = {"alpha": 2.0, "beta": 3.0, "v": 0.5} | kwargs
    with pytest.raises(exc, match=rf"\b{re.escape(name)}\b"):
        beta_expected_improvement(**args)


# ---------------------------------------------------------------------------------------------
# Properties (hypothesis)
# ---------------------------------------------------------------------------------------------

log_params = st.floats(0.0, 6.0).map(lambda e: float(10.0**e))  # alpha, beta in [1, 1e6]


def _exact_mean_var(a: float, b: float) -> tuple[Fraction, Fraction]:
    fa, fb = Fraction(a), Fraction(b)
    return fa / (fa + fb), fa * fb / ((fa + fb) ** 2 * (fa + fb + 1))


@settings(max_examples=150, deadline=None)
@given(a=log_params, b=log_params, vs=st.lists(st.floats(-0.1, 1.1), min_size=2, max_size=30))
def test_ei_is_non_increasing_in_v(a: float, b: float, vs: list[float]) -> None:
    v = np.sort(np.array(vs))
    ei = beta_expected_improvement(a, b, v)
    # dEI/dv = -Q <= 0; allow only rounding-level increases.
    assert np.all(ei[1:] <= ei[:-1] * (1 + 1e-11) + 1e-300)


@settings(max_examples=200, deadline=None)
@given(a=log_params, b=log_params, v=st.floats(-0.5, 1.5))
def test_jensen_lower_bound(a: float, b: float, v: float) -> None:
    """EI >= (m - v)^+ (Jensen), with m - v formed exactly."""
    m, _ = _exact_mean_var(a, b)
    gap = float(max(m - Fraction(v), Fraction(0)))
    assert float(beta_expected_improvement(a, b, v)) >= gap * (1 - 1e-12)


@settings(max_examples=200, deadline=None)
@given(a=log_params, b=log_params, z=st.floats(1e-3, 80.0))
def test_upper_bounds_above_the_mean(a: float, b: float, z: float) -> None:
    """For v > m: EI <= Var/(v - m) (second moment) and EI <= (sqrt(Var + d^2) - d)/2
    (Scarf's bound, d = v - m); also EI <= (1 - v) Q and EI <= D (both since v > m)."""
    m_exact, var_exact = _exact_mean_var(a, b)
    m, var = float(m_exact), float(var_exact)
    v = m + z * np.sqrt(var)
    if not m < v < 1:
        return
    d = float(Fraction(v) - m_exact)
    ei = float(beta_expected_improvement(a, b, v))
    assert ei <= var / d * (1 + 1e-12)
    assert ei <= 0.5 * var / (np.sqrt(var + d * d) + d) * (1 + 1e-10)
    q = special.betaincc(a, b, v)
    assert ei <= (1 - v) * q * (1 + 1e-9)
    density = v * (1 - v) * stats.beta.pdf(v, a, b) / (a + b)
    assert ei <= density * (1 + 1e-9)


@settings(max_examples=200, deadline=None)
@given(
    a=st.floats(1e-3, 1e9),
    b=st.floats(1e-3, 1e9),
    v=st.one_of(
        st.floats(-2.0, 2.0),
        st.floats(0.0, 1e-300, allow_subnormal=True),
        st.floats(0.0, 1e-12).map(lambda t: 1.0 - t),
    ),
)
def test_never_nan_never_negative(a: float, b: float, v: float) -> None:
    ei = float(beta_expected_improvement(a, b, v))
    assert np.isfinite(ei) and ei >= 0.0
    assert ei <= max(a / (a + b) - v, 0.0) + 1.0  # EI <= E[X] + |v| <= 1 + |v|


# ---------------------------------------------------------------------------------------------
# BetaBernoulliPosterior
# ---------------------------------------------------------------------------------------------


def test_posterior_starts_at_prior_and_resets() -> None:
    post = BetaBernoulliPosterior(3, 4, prior_alpha=2.0, prior_beta=0.5)
    assert (post.batch_size, post.num_arms) == (3, 4)
    assert post.alpha.shape == post.beta.shape == (3, 4)
    assert post.alpha.dtype == post.beta.dtype == np.float64
    assert np.all(post.alpha == 2.0) and np.all(post.beta == 0.5)
    post.update(np.array([0, 1, 3]), np.array([1.0, 0.0, 0.25]))
    assert not np.all(post.alpha == 2.0)
    post.reset()
    assert np.all(post.alpha == 2.0) and np.all(post.beta == 0.5)


def test_conjugate_update_matches_counting() -> None:
    rng = np.random.default_rng(0)
    batch, arms, steps = 5, 3, 60
    post = BetaBernoulliPosterior(batch, arms, prior_alpha=1.5, prior_beta=2.0)
    successes = [[0.0] * arms for _ in range(batch)]
    pulls = [[0] * arms for _ in range(batch)]
    for t in range(steps):
        actions = rng.integers(0, arms, batch)
        rewards = rng.integers(0, 2, batch).astype(float) if t % 2 else rng.random(batch)
        post.update(actions, rewards)
        for i in range(batch):  # by hand
            successes[i][actions[i]] += rewards[i]
            pulls[i][actions[i]] += 1
    s, n = np.array(successes), np.array(pulls)
    np.testing.assert_allclose(post.alpha, 1.5 + s, rtol=1e-13)
    np.testing.assert_allclose(post.beta, 2.0 + n - s, rtol=1e-13)
    np.testing.assert_allclose(post.alpha + post.beta, 3.5 + n, rtol=1e-14)


def test_mean_and_variance_closed_forms() -> None:
    post = BetaBernoulliPosterior(2, 3)
    post.alpha[:] = [[1.0, 2.0, 30.0], [0.5, 7.0, 1e6]]
    post.beta[:] = [[1.0, 5.0, 3.0], [0.5, 1.0, 2e6]]
    dist = stats.beta(post.alpha, post.beta)
    np.testing.assert_allclose(post.mean(), dist.mean(), rtol=1e-14)
    np.testing.assert_allclose(post.variance(), dist.var(), rtol=1e-12)


def test_sample_moments_match_the_posterior() -> None:
    n = 40_000
    post = BetaBernoulliPosterior(n, 3)
    post.alpha[:] = [2.0, 0.7, 40.0]
    post.beta[:] = [5.0, 0.4, 9.0]
    draws = post.sample(np.random.default_rng(123))
    assert draws.shape == (n, 3) and np.all((draws >= 0) & (draws <= 1))
    mean, var = post.mean()[0], post.variance()[0]
    kurt = stats.beta(post.alpha[0], post.beta[0]).stats(moments="k")
    se_mean = np.sqrt(var / n)
    se_var = np.sqrt((kurt + 2.0) * var**2 / n)  # Var(s^2) ~ (mu4 - sigma^4)/n
    assert np.all(np.abs(draws.mean(axis=0) - mean) < 5 * se_mean)
    assert np.all(np.abs(draws.var(axis=0) - var) < 5 * se_var)


def test_sampling_is_reproducible() -> None:
    post = BetaBernoulliPosterior(4, 5, prior_alpha=2.0, prior_beta=3.0)
    first = post.sample(np.random.default_rng(42))
    again = post.sample(np.random.default_rng(42))
    other = post.sample(np.random.default_rng(43))
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)


def test_expected_improvement_method() -> None:
    post = BetaBernoulliPosterior(3, 4)
    rng = np.random.default_rng(1)
    for _ in range(20):
        post.update(rng.integers(0, 4, 3), rng.integers(0, 2, 3))
    baseline = post.mean().max(axis=1)
    ei = post.expected_improvement(baseline)
    assert ei.shape == (3, 4)
    for i in range(3):
        for k in range(4):
            assert ei[i, k] == beta_expected_improvement(
                post.alpha[i, k], post.beta[i, k], baseline[i]
            )


@pytest.mark.parametrize(
    ("args", "kwargs", "exc", "name"),
    [
        ((0, 3), {}, ValueError, "batch_size"),
        ((2.0, 3), {}, TypeError, "batch_size"),
        ((True, 3), {}, TypeError, "batch_size"),
        ((2, 0), {}, ValueError, "num_arms"),
        ((2, "3"), {}, TypeError, "num_arms"),
        ((2, 3), {"prior_alpha": 0.0}, ValueError, "prior_alpha"),
        ((2, 3), {"prior_alpha": np.inf}, ValueError, "prior_alpha"),
        ((2, 3), {"prior_beta": -1.0}, ValueError, "prior_beta"),
        ((2, 3), {"prior_beta": np.nan}, ValueError, "prior_beta"),
    ],
)
def test_posterior_rejects_bad_construction(
    args: tuple, kwargs: dict, exc: type[Exception], name: str
) -> None:
    with pytest.raises(exc, match=rf"\b{name}\b"):
        BetaBernoulliPosterior(*args, **kwargs)


@pytest.mark.parametrize(
    ("actions", "rewards", "exc", "name"),
    [
        (np.array([0.0, 1.0]), np.array([1.0, 0.0]), TypeError, "actions"),
        (np.array([True, False]), np.array([1.0, 0.0]), TypeError, "actions"),
        (np.array([0, 3]), np.array([1.0, 0.0]), ValueError, "actions"),
        (np.array([-1, 0]), np.array([1.0, 0.0]), ValueError, "actions"),
        (np.array([0, 1, 2]), np.array([1.0, 0.0]), ValueError, "actions"),
        (np.array([[0, 1]]), np.array([1.0, 0.0]), ValueError, "actions"),
        (np.array([0, 1]), np.array([1.0, 1.5]), ValueError, "rewards"),
        (np.array([0, 1]), np.array([-0.1, 0.0]), ValueError, "rewards"),
        (np.array([0, 1]), np.array([np.nan, 0.0]), ValueError, "rewards"),
        (np.array([0, 1]), np.array([1.0]), ValueError, "rewards"),
        (np.array([0, 1]), ["a", "b"], TypeError, "rewards"),
    ],
)
def test_update_rejects_bad_input_and_leaves_state_alone(
    actions: object, rewards: object, exc: type[Exception], name: str
) -> None:
    post = BetaBernoulliPosterior(2, 3)
    with pytest.raises(exc, match=rf"\b{name}\b"):
        post.update(actions, rewards)
    assert np.all(post.alpha == 1.0) and np.all(post.beta == 1.0)


def test_sample_and_ei_reject_bad_input() -> None:
    post = BetaBernoulliPosterior(2, 3)
    with pytest.raises(TypeError, match=r"\brng\b"):
        post.sample(np.random.RandomState(0))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"\brng\b"):
        post.sample(0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"\bbaseline\b"):
        post.expected_improvement(np.array([0.5, 0.5, 0.5]))
    with pytest.raises(ValueError, match=r"\bbaseline\b"):
        post.expected_improvement(np.array([0.5, np.nan]))


@pytest.mark.parametrize(("a", "b"), [(1.0, 1.0), (2.0, 3.0), (0.5, 0.5)])
def test_prior_expected_improvement_matches_general_ei(a, b):
    """The untried-arm EI (closed form (1 − v)²/2 under Beta(1, 1)) equals the general EI."""
    v = np.linspace(0.0, 1.0, 41)
    np.testing.assert_allclose(
        prior_expected_improvement(a, b, v), beta_expected_improvement(a, b, v), rtol=1e-12
    )
    if a == b == 1.0:
        np.testing.assert_allclose(prior_expected_improvement(a, b, v), (1 - v) ** 2 / 2)
