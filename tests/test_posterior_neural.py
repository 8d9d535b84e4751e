"""The neural contextual posteriors against independent computations: the batched MLP against a
per-model loop, TensorFlow-1 RMSProp with a per-model clip against its formulas written out,
NeuralLinear's regression against LinFull refitted on the network's features, the bandit
ensemble's EI against a loop over heads."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
import torch

from delight_gym.posteriors.bandit_ensemble import BanditEnsemblePosterior
from delight_gym.posteriors.batched_mlp import BatchedMLP, rmsprop_step
from delight_gym.posteriors.linfull import LinFullPosterior
from delight_gym.posteriors.neural_linear import NeuralLinearPosterior


def _gens(n: int, seed: int = 100) -> list[torch.Generator]:
    return [torch.Generator().manual_seed(seed + i) for i in range(n)]


@pytest.mark.parametrize("groups", [1, 3])
def test_batched_mlp_equals_a_loop_over_models(groups: int) -> None:
    net = BatchedMLP(4, (2, 5, 6, groups), generators=_gens(2), dtype=torch.float64)
    x = torch.randn(4, 7, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    cols = torch.randint(groups, (4, 7), generator=torch.Generator().manual_seed(2))
    out = net(x, cols)
    for j in range(4):
        h = x[j]
        for layer in range(2):
            h = torch.relu(h @ net.weights[layer][j] + net.biases[layer][j])
        full = h @ net.weights[2][j] + net.biases[2][j]
        torch.testing.assert_close(out[j], full[torch.arange(7), cols[j]])
    # Models 0, 1 come from generator 0, models 2, 3 from generator 1: a 2-model net built
    # from generator 1 alone has the weights of models 2, 3.
    alone = BatchedMLP(2, (2, 5, 6, groups), generators=_gens(1, 101), dtype=torch.float64)
    torch.testing.assert_close(alone.weights[0], net.weights[0][2:])
    # uniform init within ±init_scale, zero biases
    assert float(net.weights[1].detach().abs().max()) <= 0.3
    assert float(net.biases[0].detach().abs().max()) == 0


def test_rmsprop_step_clips_each_model_and_follows_tensorflow() -> None:
    p = torch.zeros(2, 3, requires_grad=True)
    p.grad = torch.tensor([[3.0, 4.0, 0.0], [0.3, 0.4, 0.0]])  # norms 5 and 0.5
    ms = [torch.ones(2, 3)]
    rmsprop_step([p], ms, 0.1, max_grad_norm=1.0)
    g = np.array([[0.6, 0.8, 0.0], [0.3, 0.4, 0.0]])  # the first model clipped to norm 1
    want_ms = 0.9 * 1.0 + 0.1 * g**2
    np.testing.assert_allclose(ms[0].numpy(), want_ms, rtol=1e-6)
    np.testing.assert_allclose(p.detach().numpy(), -0.1 * g / np.sqrt(want_ms + 1e-10), rtol=1e-6)


def test_neural_linear_regression_is_linfull_on_the_features() -> None:
    gen = torch.Generator().manual_seed(103)
    post = NeuralLinearPosterior(
        2,
        3,
        2,
        generators=_gens(2),
        hidden_sizes=(6,),
        train_every=10,
        train_steps=5,
        train_batch_size=8,
    )
    for _ in range(25):  # two retrainings, then 5 incremental updates
        x = torch.randn(2, 2, generator=gen, dtype=torch.float64)
        post.update(x, torch.randint(3, (2,), generator=gen), x.sum(-1) ** 2)
    assert post.trainings == 2 and post.data.size == 25
    feats = post.features(post.data.inputs)
    direct = LinFullPosterior(2, 3, 6, intercept=False)
    direct.refit(feats, post.data.groups, post.data.targets)
    torch.testing.assert_close(post.regression.loc, direct.loc, rtol=1e-9, atol=1e-9)
    torch.testing.assert_close(post.regression.rate, direct.rate, rtol=1e-9, atol=1e-9)
    arms = torch.randn(2, 3, 2, generator=gen, dtype=torch.float64)
    pred = post.predictive(arms)
    want = direct.predictive(post.features(arms))
    torch.testing.assert_close(pred.mean, want.mean)
    torch.testing.assert_close(pred.scale, want.scale)


@pytest.mark.parametrize("reset_lr", [None, False, True])
def test_neural_linear_step_size_schedule_over_retrainings(
    reset_lr: bool | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The step sizes of three retrainings: by default (and with ``reset_lr=False``) the
    showdown's code, ``lr₀/(1 + rate·k)`` with ``k`` its optimizer's global step over every
    step ever taken (its ``reset_lr=True`` builds a schedule that the training step never
    reads); with ``reset_lr=True``, ``k`` restarts at each retraining."""
    import delight_gym.posteriors.neural_linear as nl

    seen: list[float] = []

    def recording_step(
        params: Sequence[torch.Tensor],
        mean_squares: Sequence[torch.Tensor],
        learning_rate: float,
        **kwargs: Any,
    ) -> None:
        seen.append(learning_rate)
        rmsprop_step(params, mean_squares, learning_rate, **kwargs)

    monkeypatch.setattr(nl, "rmsprop_step", recording_step)
    options: dict[str, Any] = {} if reset_lr is None else {"reset_lr": reset_lr}
    post = NeuralLinearPosterior(
        1, 2, 2, generators=_gens(1), train_every=4, train_steps=3, train_batch_size=4, **options
    )
    gen = torch.Generator().manual_seed(105)
    for _ in range(12):  # three retrainings of 3 steps each
        x = torch.randn(1, 2, generator=gen, dtype=torch.float64)
        post.update(x, torch.randint(2, (1,), generator=gen), x.sum(-1))
    steps = [k % 3 if reset_lr else k for k in range(9)]
    assert seen == pytest.approx([0.1 / (1 + 0.5 * k) for k in steps], rel=1e-15)


def test_neural_linear_fits_a_nonlinear_function() -> None:
    gen = torch.Generator().manual_seed(104)
    post = NeuralLinearPosterior(1, 1, 1, generators=_gens(1), train_every=200)
    x = torch.rand(200, 1, generator=gen, dtype=torch.float64) * 2 - 1
    for i in range(200):
        post.update(x[i : i + 1], torch.zeros(1, dtype=torch.int64), x[i] ** 2 * 4)
    grid = torch.linspace(-1, 1, 21, dtype=torch.float64)[None, :, None]
    err = post.mean(grid)[0] - 4 * grid[0, :, 0] ** 2
    assert float(err.abs().mean()) < 0.3  # the best linear fit's mean error here is about 1.0


def test_ensemble_values_ei_and_thompson_against_a_loop_over_heads() -> None:
    post = BanditEnsemblePosterior(
        2, 4, 3, generators=_gens(2), num_heads=5, hidden_sizes=(7,), dtype=torch.float64
    )
    x = torch.randn(2, 4, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(5))
    values = post.head_values(x)
    assert values.shape == (5, 2, 4)
    for b in range(2):
        for h in range(5):
            j = torch.tensor([b * 5 + h])
            f = post.network(x[b : b + 1], torch.arange(4)[None], j)
            p = post.prior(x[b : b + 1], torch.arange(4)[None], j)
            torch.testing.assert_close(values[h, b], (f + 3.0 * p)[0])
    pred = post.predictive(x)
    base = pred.mean.max(-1).values
    loop = torch.stack([(values[h] - base[:, None]).clamp_min(0) for h in range(5)]).mean(0)
    torch.testing.assert_close(pred.expected_improvement(base), loop)
    torch.testing.assert_close(pred.expected_improvement(base[1:], torch.tensor([1])), loop[1:])
    draw = post.thompson_values(x, _gens(2, 7))
    assert all(any(torch.equal(draw[b], values[h, b]) for h in range(5)) for b in range(2))
    # the priors' cache gives the same values; a training step moves the trainable heads only
    torch.testing.assert_close(post.head_values(x), values)
    prior_before = post.prior.weights[0].clone()
    post.update(x[:, 0], torch.tensor([0, 3]), torch.tensor([1.0, -1.0], dtype=torch.float64))
    assert torch.equal(post.prior.weights[0], prior_before)
    assert not torch.equal(post.head_values(x), values)


def test_ensemble_regresses_on_rewards() -> None:
    gen = torch.Generator().manual_seed(106)
    post = BanditEnsemblePosterior(1, 2, 1, generators=_gens(1), sgd_steps=5)
    for _ in range(300):
        x = torch.rand(1, 1, generator=gen) * 2 - 1
        g = torch.randint(2, (1,), generator=gen)
        post.update(x, g, torch.where(g == 0, x[:, 0], -x[:, 0]))
    arms = torch.tensor([[[0.8], [0.8]]])
    mean = post.mean(arms)[0]
    assert float(mean[0]) == pytest.approx(0.8, abs=0.25)
    assert float(mean[1]) == pytest.approx(-0.8, abs=0.25)


def test_checks_name_the_argument() -> None:
    with pytest.raises(ValueError, match="generators"):
        NeuralLinearPosterior(2, 1, 1, generators=_gens(1))
    with pytest.raises(TypeError, match="generators"):
        BanditEnsemblePosterior(1, 1, 1, generators=torch.Generator())  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="hidden_sizes"):
        BanditEnsemblePosterior(1, 1, 1, generators=_gens(1), hidden_sizes=(0,))
    post = BanditEnsemblePosterior(1, 2, 1, generators=_gens(1))
    with pytest.raises(ValueError, match="inputs"):
        post.head_values(torch.zeros(1, 3, 1))
    with pytest.raises(ValueError, match="groups"):
        post.update(torch.zeros(1, 1), torch.tensor([2]), torch.zeros(1))
    nl = NeuralLinearPosterior(1, 2, 1, generators=_gens(1))
    with pytest.raises(ValueError, match="targets"):
        nl.update(torch.zeros(1, 1), torch.tensor([0]), torch.tensor([float("nan")]))
