"""The probe set's bad input to RFFPosterior, and EnsembleQPosterior's unchecked evaluate
(issue 47): a clear error naming the argument, or the right answer."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from gymnasium import spaces

from delight_gym.posteriors.ensemble import EnsembleQPosterior
from delight_gym.posteriors.gaussian import log_gaussian_expected_improvement
from delight_gym.posteriors.rff import RFFPosterior


@pytest.mark.parametrize(
    ("method", "num_samples"),
    [("sample_weights", 10**11), ("sample_function", 10**12), ("sample_weights", 2**62)],
)
def test_huge_num_samples_refused_before_drawing(method, num_samples) -> None:
    post = RFFPosterior(1, 1, num_features=8, seed=0)
    state = post.generator.get_state()
    with pytest.raises(ValueError, match=f"num_samples={num_samples} would need"):
        getattr(post, method)(num_samples)
    assert torch.equal(post.generator.get_state(), state)  # nothing drawn
    assert post.sample_weights(3).shape == (1, 3, 8)


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda p: p.predictive(torch.rand(1, 10**7, 1)), r"x of shape \(1, 10000000, 1\)"),
        (lambda p: p.ucb(torch.rand(1, 10**7, 1), 1.0), r"x of shape \(1, 10000000, 1\)"),
        (lambda p: p.covariance(torch.rand(1, 10**6, 1)), r"x of shape \(1, 1000000, 1\)"),
        (
            lambda p: p.update(torch.rand(1, 10**7, 1), torch.zeros(1, 10**7)),
            r"actions of shape \(1, 10000000, 1\)",
        ),
    ],
)
def test_huge_query_refused_naming_it(call, name) -> None:
    post = RFFPosterior(1, 1, num_features=2048, seed=0)
    with pytest.raises(ValueError, match=f"{name} with num_features=2048 would need"):
        call(post)
    assert post.num_observations == 0
    assert post.covariance(torch.rand(1, 5, 1)).shape == (1, 5, 5)


@pytest.mark.parametrize("beta", [1e77, 1e80, 1e200, 1.7e308])
def test_float32_ucb_refuses_overflowing_beta(beta) -> None:
    x = torch.rand(1, 4, 1, generator=torch.Generator().manual_seed(0))
    post = RFFPosterior(1, 1, num_features=16, seed=0, dtype=torch.float32)
    with pytest.raises(ValueError, match="beta must be at most"):
        post.ucb(x, beta)
    assert torch.isfinite(post.ucb(x, 1e70)).all()
    assert torch.isfinite(RFFPosterior(1, 1, num_features=16, seed=0).ucb(x, beta)).all()


@pytest.mark.parametrize("best", [3e38, 3.4e38, 1e30, 0.5, -3e38])
def test_float32_log_ei_is_the_float64_answer_clamped(best) -> None:
    x = torch.rand(1, 4, 1, generator=torch.Generator().manual_seed(0))
    post = RFFPosterior(1, 1, num_features=16, seed=0, dtype=torch.float32)
    post.update(x[:, :2], torch.tensor([[0.3, -0.2]]))
    out = post.log_expected_improvement(x, torch.tensor([best]))
    mu, sd = (v.double() for v in post.predictive(x))
    ref = log_gaussian_expected_improvement(mu, sd, torch.tensor([[best]], dtype=torch.float64))
    lowest = torch.finfo(torch.float32).min
    assert torch.isfinite(out).all()
    torch.testing.assert_close(out, ref.clamp_min(lowest).float(), rtol=1e-4, atol=0.0)


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda p: p.update(np.full((1, 1, 1), 0.5), np.array([[1 + 2j]])), "rewards"),
        (lambda p: p.update(np.full((1, 1, 1), 0.5), np.array([[1 + 0j]])), "rewards"),
        (lambda p: p.update(np.full((1, 1, 1), 0.5), np.ones((1, 1), np.complex64)), "rewards"),
        (lambda p: p.update(np.full((1, 1, 1), 0.5 + 1j), [[0.0]]), "actions"),
        (lambda p: p.predictive(np.zeros((1, 2, 1), complex)), "x"),
        (lambda p: p.expected_improvement(np.zeros((1, 2, 1)), np.array([1j])), "baseline"),
    ],
)
def test_complex_arrays_refused_naming_the_argument(call, name) -> None:
    post = RFFPosterior(1, 1, num_features=8, seed=0)
    with pytest.raises(TypeError, match=f"{name} must be real"):
        call(post)
    assert post.num_observations == 0


@pytest.mark.parametrize("baseline", ["host", "max"])
def test_evaluate_unchecked_equals_evaluate(baseline) -> None:
    post = EnsembleQPosterior(spaces.Discrete(6), 3, num_heads=5, seed=0)
    obs = np.array([0, 1, 2, 3, 4, 5, 2])
    probs = np.random.default_rng(0).dirichlet(np.ones(3), size=len(obs))
    want = post.evaluate(obs, probs, baseline)
    got = post.evaluate_unchecked(obs, probs, baseline)
    for a, b in zip(want, got, strict=True):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="host_probs"):  # evaluate itself still checks
        post.evaluate(obs, probs * 2, baseline)
