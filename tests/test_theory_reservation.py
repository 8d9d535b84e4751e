"""Reservation values against an independent route: quadrature of ``(x − z) f(x)`` and Brent.

The library uses closed forms (uniform, exponential), the priors' own partial expectations
(beta and Gaussian EI) with Newton's method, or the survival-function integral; the reference
here integrates the density instead.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, optimize, stats

import delight_gym
from delight_gym.theory import (
    fresh_arm_threshold,
    horizon_price,
    horizon_threshold,
    partial_expectation,
    reservation_index,
    tail_probability,
    threshold_regret_bound,
)


def _density_partial_expectation(prior, z: float) -> float:
    lo, hi = (float(s) for s in prior.support())
    lo = lo if np.isfinite(lo) else float(prior.ppf(1e-18))
    hi = hi if np.isfinite(hi) else float(prior.isf(1e-18))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", integrate.IntegrationWarning)
        return integrate.quad(
            lambda x: (x - z) * prior.pdf(x), max(z, lo), hi, epsabs=1e-15, epsrel=1e-13, limit=500
        )[0]


def _reference_index(prior, ell: float, lam: float) -> float:
    c = lam / ell
    hi = float(prior.support()[1])
    hi = hi if np.isfinite(hi) else float(prior.isf(1e-18))
    left = float(prior.mean()) - c - 1.0  # g(z) >= E[X] - z > c there
    return optimize.brentq(
        lambda z: _density_partial_expectation(prior, z) - c, left, hi, xtol=1e-14
    )


PRIORS = {
    "uniform": stats.uniform(),
    "uniform(2,3)": stats.uniform(2.0, 3.0),
    "normal": stats.norm(0.3, 2.0),
    "beta(2,5)": stats.beta(2.0, 5.0),
    "beta(1,3) scaled": stats.beta(1.0, 3.0, loc=-1.0, scale=2.0),
    "expon": stats.expon(0.2, 1.5),
    "gamma (quadrature path)": stats.gamma(2.5),
}
PRICES = [(10.0, 0.1), (1.0, 0.01), (3.0, 2.0), (10.0, 1e-4), (0.5, 0.2)]


@pytest.mark.parametrize("name", list(PRIORS))
@pytest.mark.parametrize(("ell", "lam"), PRICES)
def test_reservation_index_matches_quadrature_and_brent(name, ell, lam):
    prior = PRIORS[name]
    z = reservation_index(prior, ell, lam)
    assert isinstance(z, float)
    assert z == pytest.approx(_reference_index(prior, ell, lam), abs=1e-9)


@pytest.mark.parametrize("lam", [1e-6, 1e-3, 0.1, 1.0, 4.9])
def test_uniform_closed_form_and_fresh_arm_threshold(lam):
    expected = 1.0 - math.sqrt(2.0 * lam / 10.0)
    assert reservation_index(stats.beta(1, 1), 10.0, lam) == pytest.approx(expected, abs=1e-13)
    assert fresh_arm_threshold(stats.uniform(), lam, 10.0) == pytest.approx(expected, abs=1e-13)
    assert delight_gym.reservation_index is reservation_index


def test_below_the_support_the_index_is_mean_minus_cost():
    # λ/ℓ >= E[X] - a: g(z) = E[X] - z on z <= a, so z = E[X] - λ/ℓ (nonpositive for uniform).
    assert reservation_index(stats.uniform(), 10.0, 6.0) == pytest.approx(0.5 - 0.6)
    assert reservation_index(stats.beta(2, 3), 1.0, 0.4) == pytest.approx(0.4 - 0.4)
    assert fresh_arm_threshold(stats.uniform(), 5.0, 10.0) == pytest.approx(0.0, abs=1e-15)


def test_empty_and_full_sets_give_infinities():
    u = stats.uniform()
    assert reservation_index(u, 0.0, 0.1) == -math.inf  # ℓ = 0 < λ: never in the gate
    assert reservation_index(u, 10.0, 0.0) == math.inf  # λ = 0: every z qualifies
    assert reservation_index(u, 0.0, 0.0) == math.inf
    assert reservation_index(u, 10.0, math.inf) == -math.inf
    assert reservation_index(u, math.inf, 0.1) == math.inf


def test_vectorised_over_prices_and_prior_parameters_equals_elementwise():
    a = np.array([1.0, 2.0, 0.7])
    b = np.array([[2.0], [5.0]])
    ell = np.array([1.0, 10.0, 3.0])
    lam = 0.05
    z = reservation_index(stats.beta(a, b), ell, lam)
    assert z.shape == (2, 3)
    for i in range(2):
        for j in range(3):
            single = reservation_index(stats.beta(a[j], b[i, 0]), ell[j], lam)
            assert z[i, j] == pytest.approx(single, abs=1e-13)
    zz = reservation_index(stats.uniform(), [[1.0], [0.0]], [0.1, 0.0])
    assert zz.shape == (2, 2) and zz[1, 0] == -math.inf and zz[1, 1] == math.inf


@settings(max_examples=150, deadline=None)
@given(
    a=st.floats(0.3, 20.0),
    b=st.floats(0.3, 20.0),
    ell=st.floats(0.1, 50.0),
    lam=st.floats(1e-4, 2.0),
    v=st.floats(-0.5, 1.0),
)
def test_gate_is_pandora_eligibility(a, b, ell, lam, v):
    # Proposition 1: ℓ·E[(X − v)^+] >= λ  <=>  v <= z^λ (away from the boundary itself).
    prior = stats.beta(a, b)
    z = reservation_index(prior, ell, lam)
    delight = ell * partial_expectation(prior, v)
    if abs(delight - lam) > 1e-9 * max(lam, 1.0):
        assert (delight >= lam) == (v <= z)
    assert ell * partial_expectation(prior, z) == pytest.approx(lam, rel=1e-9)


@pytest.mark.parametrize(
    "name", ["uniform", "normal", "beta(2,5)", "expon", "gamma (quadrature path)"]
)
def test_partial_expectation_matches_density_quadrature(name):
    prior = PRIORS[name]
    lo = float(prior.ppf(0.01)) - 0.5
    for z in np.linspace(lo, float(prior.ppf(0.999)), 7):
        assert partial_expectation(prior, z) == pytest.approx(
            _density_partial_expectation(prior, float(z)), rel=1e-9, abs=1e-13
        )


@pytest.mark.parametrize("horizon", [10, 1000, 10**6])
def test_uniform_horizon_price_is_l_over_2t(horizon):
    assert horizon_threshold(stats.uniform(), horizon) == pytest.approx(horizon**-0.5, rel=1e-12)
    assert horizon_price(stats.uniform(), horizon, 10.0) == pytest.approx(10 / (2 * horizon))
    # With a constant override rate ε the price is L/(2εT).
    assert horizon_price(stats.uniform(), horizon, 10.0, 0.1) == pytest.approx(
        10 / (2 * 0.1 * horizon)
    )


@pytest.mark.parametrize("alpha", [0.5, 1.0, 2.0, 4.0])
@pytest.mark.parametrize("horizon", [100, 10**5])
def test_beta_tail_threshold_price_and_consistency(alpha, horizon):
    prior = stats.beta(1.0, alpha)
    y = horizon_threshold(prior, horizon)
    assert y == pytest.approx((alpha / horizon) ** (1 / (alpha + 1)), rel=1e-10)
    assert tail_probability(prior, y) == pytest.approx(y**alpha, rel=1e-10)
    # y_T minimises the bound 1/p(y) + T y.
    bound = threshold_regret_bound(prior, horizon, np.array([y * 0.97, y, y * 1.03]))
    assert bound[1] < bound[0] and bound[1] < bound[2]
    # λ_T = L ∫_0^{y_T} s^α ds and the fresh-arm threshold at λ_T is 1 − y_T.
    lam = horizon_price(prior, horizon, 10.0)
    assert lam == pytest.approx(10.0 * y ** (alpha + 1) / (alpha + 1), rel=1e-9)
    assert fresh_arm_threshold(prior, lam, 10.0) == pytest.approx(1 - y, abs=1e-12)


def test_bad_input_names_the_argument():
    u = stats.uniform()
    with pytest.raises(ValueError, match="surprisal"):
        reservation_index(u, -1.0, 0.1)
    with pytest.raises(ValueError, match="gate_price"):
        reservation_index(u, 1.0, float("nan"))
    with pytest.raises(TypeError, match="prior"):
        reservation_index(stats.beta, 1.0, 0.1)  # not frozen
    with pytest.raises(TypeError, match="prior"):
        reservation_index(stats.poisson(3.0), 1.0, 0.1)
    with pytest.raises(TypeError, match="surprisal"):
        reservation_index(u, "ten", 0.1)
    with pytest.raises(ValueError, match="z"):
        partial_expectation(u, float("inf"))
    with pytest.raises(ValueError, match="horizon"):
        horizon_threshold(u, 0)
    with pytest.raises(ValueError, match="override_rate"):
        horizon_price(u, 100, 10.0, 1.5)
    with pytest.raises(ValueError, match="bounded"):
        horizon_threshold(stats.norm(), 100)
    with pytest.raises(ValueError, match="scalars"):
        reservation_index(stats.gamma([2.0, 3.0]), 1.0, 0.1)
    with pytest.raises(ValueError, match="surprisal_cap"):
        fresh_arm_threshold(u, 0.1, 0.0)
