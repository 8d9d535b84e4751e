"""Tests of ``delight_gym.posteriors.value.TabularValuePosterior`` (the wrapper's default).

References: the conjugate Gaussian update worked out by hand (precision ``1/s0² + n/σ²``, mean
moved by ``(1/σ²)/precision`` towards each TD target), and EI by numerical integration of
``(x − v)·pdf(x)`` (``scipy.integrate.quad``), independent of the package's Gaussian EI code.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from gymnasium import spaces
from scipy import integrate, stats

from delight_gym.posteriors import ValuePosterior
from delight_gym.posteriors.value import TabularValuePosterior, default_posterior


def test_conjugate_td_updates_by_hand() -> None:
    post = TabularValuePosterior(3, 2, gamma=0.5, prior_mean=0.0, prior_std=1.0, noise_std=0.5)
    assert isinstance(post, ValuePosterior)
    # (s=0, a=1, r=1, s'=1): target 1 + 0.5·max m(1, ·) = 1; precision 1 + 4 = 5, step 4/5.
    post.update(np.array([0]), np.array([1]), np.array([1.0]), np.array([1]), np.array([False]))
    assert post.means[0, 1] == pytest.approx(0.8, rel=1e-15)
    # (s=2, a=0, r=0.2, s'=0): target 0.2 + 0.5·0.8 = 0.6; first visit: step 4/5 -> 0.48.
    # then (s=0, a=1, r=0, terminal): target 0; second visit: precision 9, step 4/9.
    post.update(
        np.array([2, 0]),
        np.array([0, 1]),
        np.array([0.2, 0.0]),
        np.array([0, 0]),
        np.array([False, True]),
    )
    assert post.means[2, 0] == pytest.approx(0.48, rel=1e-15)
    assert post.means[0, 1] == pytest.approx(0.8 - 0.8 * 4 / 9, rel=1e-15)
    sd = post.std(np.array([0, 1, 2]))
    np.testing.assert_allclose(sd[0], [1.0, 1 / 3], rtol=1e-15)
    np.testing.assert_allclose(sd[2], [1 / math.sqrt(5), 1.0], rtol=1e-15)


def _quad_ei(m: float, s: float, v: float) -> float:
    f = lambda x: (x - v) * stats.norm.pdf(x, m, s)  # noqa: E731
    return integrate.quad(f, v, m + 40 * s, epsabs=0.0, epsrel=1e-12, limit=200)[0]


def test_expected_improvement_against_quadrature() -> None:
    post = TabularValuePosterior(2, 3, prior_std=0.7, noise_std=0.3)
    post.update(np.array([0, 0]), np.array([0, 2]), np.array([0.5, -0.2]), np.array([1, 1]),
                np.array([True, True]))  # fmt: skip
    base = np.array([0.1, -0.3])
    ei = post.expected_improvement(np.array([0, 1]), base)
    means, sds = post.mean(np.array([0, 1])), post.std(np.array([0, 1]))
    for i in range(2):
        for a in range(3):
            ref = _quad_ei(means[i, a], sds[i, a], base[i])
            assert ei[i, a] == pytest.approx(ref, rel=1e-9)


def test_from_space_discrete_and_one_hot() -> None:
    post = default_posterior(spaces.Discrete(4, start=2), 2)
    assert post.num_states == 4
    np.testing.assert_array_equal(post.mean(np.array([2, 5])), np.zeros((2, 2)))
    one_hot = TabularValuePosterior.from_space(spaces.Box(0, 1, (2, 3)), 2, prior_mean=0.25)
    obs = np.zeros((1, 2, 3))
    obs[0, 1, 2] = 1
    np.testing.assert_array_equal(one_hot.mean(obs), [[0.25, 0.25]])
    with pytest.raises(ValueError, match="one-hot"):
        one_hot.mean(np.ones((1, 2, 3)))
    with pytest.raises(ValueError, match="Discrete or one-hot"):
        TabularValuePosterior.from_space(spaces.Box(-1, 1, (3,)), 2)
    with pytest.raises(ValueError, match=r"observations must lie in \[2, 6\)"):
        post.mean(np.array([1]))
    with pytest.raises(ValueError, match="baseline"):
        post.expected_improvement(np.array([2]), np.array([0.0, 1.0]))
    with pytest.raises(ValueError, match="prior_std"):
        TabularValuePosterior(2, 2, prior_std=0.0)


def test_update_rejects_bad_actions_before_absorbing_anything() -> None:
    post = TabularValuePosterior(3, 2)
    obs, nxt, term = np.array([0, 1]), np.array([1, 2]), np.array([False, False])
    # A negative action would index the last column from the end: refused, nothing recorded.
    for bad in (np.array([0, -1]), np.array([0, 2]), np.array([0.0, 1.0]), np.array([[0], [1]])):
        with pytest.raises(ValueError, match="actions must"):
            post.update(obs, bad, np.array([1.0, 1.0]), nxt, term)
    np.testing.assert_array_equal(post.counts, np.zeros((3, 2)))
    np.testing.assert_array_equal(post.means, np.zeros((3, 2)))
    with pytest.raises(ValueError, match="prior_mean must be finite"):
        TabularValuePosterior(2, 2, prior_mean=math.inf)
    with pytest.raises(TypeError, match="prior_mean must be a real number"):
        TabularValuePosterior(2, 2, prior_mean=True)
