"""The BoTorch anchor: BoTorch's analytic UCB and log-EI against our closed forms on the same
fitted GP, and the run function on the continuum instances the other agents play."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from scipy.stats import norm

pytest.importorskip("botorch")

from delight_gym.agents.botorch_continuum import (
    botorch_acquisition,
    fit_gp,
    run_botorch,
)
from delight_gym.agents.continuum import srinivas_beta
from delight_gym.envs.continuum import ContinuumBanditEnv
from delight_gym.experiments.continuum import run_continuum


def _closed_form_posterior(model, x_train, y_train, x):
    """Mean and std of the fitted GP at ``x`` by hand: RBF-ARD kernel, constant mean, noise,
    all in standardised outcome units, then un-standardised."""
    ls = model.covar_module.lengthscale.detach()[0]
    const = model.mean_module.constant.detach()
    noise = model.likelihood.noise.detach()[0]
    mean_y = model.outcome_transform.means.detach()[0, 0]
    std_y = model.outcome_transform.stdvs.detach()[0, 0]
    ys = (y_train[:, 0] - mean_y) / std_y

    def k(a, b):
        diff = (a[:, None, :] - b[None, :, :]) / ls
        return torch.exp(-0.5 * (diff**2).sum(-1))

    gram = k(x_train, x_train) + noise * torch.eye(len(x_train), dtype=x.dtype)
    cross = k(x, x_train)
    solve = torch.linalg.solve(gram, torch.stack([ys - const, *cross], dim=1))
    mu = const + cross @ solve[:, 0]
    var = 1.0 - (cross * solve[:, 1:].T).sum(-1)
    return mean_y + std_y * mu, std_y * var.clamp_min(0).sqrt()


@pytest.fixture(scope="module")
def fitted():
    gen = torch.Generator().manual_seed(0)
    x = torch.rand((15, 3), generator=gen, dtype=torch.float64)
    y = torch.sin(5 * x).sum(-1, keepdim=True)
    return x, y, fit_gp(x, y)


def test_botorch_ucb_is_our_closed_form_gp_ucb_on_the_same_fitted_gp(fitted):
    x, y, model = fitted
    test = torch.rand((7, 3), generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    mu, sd = _closed_form_posterior(model, x, y, test)
    acq = botorch_acquisition("botorch-ucb", model, y, 9, 64)
    beta = float(srinivas_beta(9, 64))
    assert acq.beta.item() == pytest.approx(beta)
    with torch.no_grad():
        got = acq(test[:, None, :])
    torch.testing.assert_close(got, mu + math.sqrt(beta) * sd, rtol=1e-5, atol=1e-6)


def test_botorch_log_ei_is_the_log_of_the_gaussian_ei_closed_form(fitted):
    x, y, model = fitted
    test = torch.rand((7, 3), generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    mu, sd = _closed_form_posterior(model, x, y, test)
    z = ((mu - y.max()) / sd).numpy()
    ei = sd.numpy() * (z * norm.cdf(z) + norm.pdf(z))
    with torch.no_grad():
        got = botorch_acquisition("botorch-logei", model, y, 9, 64)(test[:, None, :])
    np.testing.assert_allclose(got.numpy(), np.log(ei), rtol=1e-5)


def test_run_botorch_plays_the_same_instances_and_reproduces():
    regret, first, _ = run_botorch("botorch-logei", 2, 8, 2, seed=4, num_restarts=2, raw_samples=16)
    assert regret.shape == first.shape == (2, 8) and (regret >= 0).all()
    again, _, _ = run_botorch("botorch-logei", 2, 8, 2, seed=4, num_restarts=2, raw_samples=16)
    np.testing.assert_array_equal(regret, again)
    env = ContinuumBanditEnv(dim=2, bump_width=0.3 * 2**0.5, needle_width=0.15 * 2**0.5)
    env.reset(seed=5)  # instance 1 of seed 4: its optimum is the regret's reference
    best = env.optimal_expected_reward
    assert best == 1.0 and (regret[1] <= best).all()


def test_run_continuum_dispatches_botorch_agents():
    result = run_continuum("botorch-ucb", 2, 7, 1, num_restarts=2, raw_samples=16)
    assert result.regret.shape == (1, 7) and result.overrides.tolist() == [0]
    with pytest.raises(ValueError, match="agent must be one of"):
        run_botorch("botorch-pi", 2, 3, 1)
