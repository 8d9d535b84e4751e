"""The written-out gradients of the neural posteriors' training against autograd: per step
(``BatchedMLP.squared_error_gradients`` against ``torch.autograd.grad`` of the loss), over
several retrainings (NeuralLinear's weights, RMSProp state and predictive; the bandit
ensemble's weights and Adam state), and over a short wheel run (the same actions)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import delight_gym.posteriors.batched_mlp as batched_mlp
from delight_gym.experiments.contextual import run_wheel
from delight_gym.posteriors.bandit_ensemble import BanditEnsemblePosterior
from delight_gym.posteriors.batched_mlp import BatchedMLP
from delight_gym.posteriors.neural_linear import NeuralLinearPosterior

DEVICES = [
    "cpu",
    pytest.param(
        "cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
    ),
]


def _gens(n: int, seed: int = 100) -> list[torch.Generator]:
    return [torch.Generator().manual_seed(seed + i) for i in range(n)]


def _autograd_gradients(
    net: BatchedMLP,
    inputs: torch.Tensor,
    columns: torch.Tensor,
    targets: torch.Tensor,
    *,
    scale: float,
    offset: torch.Tensor | None = None,
) -> list[torch.Tensor]:
    """The reference: autograd through :meth:`BatchedMLP.forward` of
    ``scale · Σ (f + offset − y)²``."""
    with torch.enable_grad():
        loss = scale * (_predicted(net, inputs, columns, offset) - targets).square().sum()
        return list(torch.autograd.grad(loss, list(net.parameters())))


def _predicted(
    net: BatchedMLP, inputs: torch.Tensor, columns: torch.Tensor, offset: torch.Tensor | None
) -> torch.Tensor:
    """``f(x)[c] (+ offset)`` through :meth:`BatchedMLP.forward` (call under ``enable_grad``)."""
    pred = net(inputs, columns)
    return pred if offset is None else pred + offset


def _assert_relative(fast: list[torch.Tensor], ref: list[torch.Tensor], tol: float) -> None:
    assert len(fast) == len(ref)
    for f, r in zip(fast, ref, strict=True):
        assert f.shape == r.shape and f.dtype == r.dtype
        err = float((f - r).abs().max())
        assert err <= tol * float(r.abs().max()), (err, float(r.abs().max()))


@pytest.mark.parametrize("hidden", [(7,), (6, 5), (4, 6, 3)])
@pytest.mark.parametrize("groups", [1, 4])
@pytest.mark.parametrize(("models", "batch", "seed"), [(6, 9, 0), (4, 300, 1), (6, 64, 2)])
@pytest.mark.parametrize("per_chunk", [1, 4, 100])
def test_squared_error_gradients_equal_autograd(
    hidden: tuple[int, ...],
    groups: int,
    models: int,
    batch: int,
    seed: int,
    per_chunk: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One to three hidden layers, one or several outputs, chunks of one model, of four
    models (not dividing six) and of all models; float64, with and without an offset; biases
    away from their initial zeros."""
    chunk_bytes = per_chunk * max(hidden) * batch * 8  # ``per_chunk`` models' activations
    monkeypatch.setattr(batched_mlp, "_CHUNK_BYTES", chunk_bytes)
    gen = torch.Generator().manual_seed(seed)
    sizes = (3, *hidden, groups)
    net = BatchedMLP(models, sizes, generators=_gens(2, seed), dtype=torch.float64)
    with torch.no_grad():
        for b in net.biases:
            b.uniform_(-0.5, 0.5, generator=gen)
    x = torch.randn(models, batch, 3, generator=gen, dtype=torch.float64)
    cols = torch.randint(groups, (models, batch), generator=gen)
    y = torch.randn(models, batch, generator=gen, dtype=torch.float64)
    offset = torch.randn(models, batch, generator=gen, dtype=torch.float64)
    for off, scale in [(None, 1.0 / batch), (offset, 0.5 / batch)]:
        fast = net.squared_error_gradients(x, cols, y, scale=scale, offset=off)
        ref = _autograd_gradients(net, x, cols, y, scale=scale, offset=off)
        _assert_relative(fast, ref, 1e-12)
        assert all(float(g.abs().max()) > 0 for g in ref)  # every parameter is exercised


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("groups", [1, 4])
def test_squared_error_gradients_equal_autograd_on_device(device: str, groups: int) -> None:
    """On the device (one chunk of all models off the CPU): autograd's gradients to 1e-12."""
    gen = torch.Generator().manual_seed(4)
    net = BatchedMLP(6, (3, 6, 5, groups), generators=_gens(3), dtype=torch.float64)
    net = net.to(device)
    x = torch.randn(6, 300, 3, generator=gen, dtype=torch.float64).to(device)
    cols = torch.randint(groups, (6, 300), generator=gen).to(device)
    y = torch.randn(6, 300, generator=gen, dtype=torch.float64).to(device)
    fast = net.squared_error_gradients(x, cols, y, scale=1 / 300)
    assert all(g.device.type == device for g in fast)
    _assert_relative(fast, _autograd_gradients(net, x, cols, y, scale=1 / 300), 1e-12)


def test_squared_error_gradients_float32_and_broadcast_columns() -> None:
    """float32 (the bandit ensemble's dtype) to float32 rounding; ``(1, n)`` columns."""
    gen = torch.Generator().manual_seed(3)
    net = BatchedMLP(5, (2, 8, 3), generators=_gens(5), init="trunc_normal")
    x = torch.randn(5, 40, 2, generator=gen)
    cols = torch.randint(3, (1, 40), generator=gen)
    y = torch.randn(5, 40, generator=gen)
    fast = net.squared_error_gradients(x, cols, y, scale=1 / 40)
    _assert_relative(fast, _autograd_gradients(net, x, cols, y, scale=1 / 40), 1e-6)


def test_squared_error_gradients_reject_bad_shapes() -> None:
    net = BatchedMLP(2, (3, 4, 2), generators=_gens(2), dtype=torch.float64)
    x, cols, y = (
        torch.zeros(2, 5, 3, dtype=torch.float64),
        torch.zeros(2, 5).long(),
        torch.zeros(2, 5),
    )
    with pytest.raises(ValueError, match="inputs must have shape"):
        net.squared_error_gradients(x[:, :4], cols, y.double(), scale=1.0)
    with pytest.raises(ValueError, match="inputs must have shape"):
        net.squared_error_gradients(x[:1], cols[:1], y[:1].double(), scale=1.0)
    with pytest.raises(ValueError, match="offset must have shape"):
        net.squared_error_gradients(x, cols, y.double(), scale=1.0, offset=y[:, :4].double())


def _feed(post: NeuralLinearPosterior | BanditEnsemblePosterior, rounds: int, seed: int) -> None:
    gen = torch.Generator().manual_seed(seed)
    b, d, g = post.batch_size, post.input_dim, post.num_groups
    for _ in range(rounds):
        x = torch.rand(b, d, generator=gen, dtype=torch.float64) * 2 - 1
        arm = torch.randint(g, (b,), generator=gen)
        y = torch.cos(3 * x.sum(-1)) + arm + 0.1 * torch.randn(b, generator=gen, dtype=x.dtype)
        post.update(x, arm, y)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(("groups", "hidden"), [(5, (50,)), (1, (8, 6)), (3, (6,))])
def test_neural_linear_fast_training_equals_autograd(
    groups: int, hidden: tuple[int, ...], device: str
) -> None:
    """Five retrainings: weights, RMSProp accumulators, the regression and the predictive of
    the written-out gradients' posterior against autograd's, to 1e-10."""
    options: dict[str, Any] = {
        "hidden_sizes": hidden,
        "train_every": 10,
        "train_steps": 30,
        "train_batch_size": 32,
        "device": device,
    }
    posts = []
    for autograd in (False, True):
        post = NeuralLinearPosterior(4, groups, 2, generators=_gens(4), **options)
        post._autograd = autograd
        _feed(post, 53, seed=7)
        posts.append(post)
    fast, ref = posts
    assert fast.trainings == ref.trainings == 5 and fast.sgd_steps == 150
    _assert_relative(
        [p.detach() for p in fast.network.parameters()],
        [p.detach() for p in ref.network.parameters()],
        1e-10,
    )
    _assert_relative(fast._mean_squares, ref._mean_squares, 1e-10)
    _assert_relative([fast.regression.loc], [ref.regression.loc], 1e-10)
    arms = torch.rand(4, groups, 2, generator=torch.Generator().manual_seed(8), dtype=torch.float64)
    arms = arms.to(device)
    a, b = fast.predictive(arms), ref.predictive(arms)
    _assert_relative([a.mean, a.scale], [b.mean, b.scale], 1e-10)
    # The networks moved: the comparison is not of two untrained initialisations.
    init = NeuralLinearPosterior(4, groups, 2, generators=_gens(4), **options)
    assert float((init.network.weights[0] - fast.network.weights[0]).detach().abs().max()) > 1e-3


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_neural_linear_refit_rejects_non_finite_features(bad: float) -> None:
    """A network whose features are not finite stops the retraining's refit (its check reads
    the features' sum, not every entry)."""
    post = NeuralLinearPosterior(
        2, 3, 2, generators=_gens(2), hidden_sizes=(5,), train_every=4, train_steps=2
    )
    _feed(post, 3, seed=11)
    with torch.no_grad():
        post.network.biases[0][1, 0, 2] = bad  # row 1, one hidden unit
    with pytest.raises(ValueError, match="features must be finite"):
        _feed(post, 1, seed=12)


def test_bandit_ensemble_fast_training_equals_autograd(monkeypatch: pytest.MonkeyPatch) -> None:
    """Thirty Adam steps of every head with its prior (float64): weights and Adam's moments of
    the written-out gradients against autograd's, to 1e-10."""

    def make() -> BanditEnsemblePosterior:
        return BanditEnsemblePosterior(
            3, 4, 2, generators=_gens(3), num_heads=4, hidden_sizes=(9,), dtype=torch.float64
        )

    fast = make()
    _feed(fast, 30, seed=9)
    ref = make()
    with monkeypatch.context() as patch:
        patch.setattr(BatchedMLP, "squared_error_gradients", _autograd_gradients_mean)
        _feed(ref, 30, seed=9)
    _assert_relative(
        [p.detach() for p in fast.network.parameters()],
        [p.detach() for p in ref.network.parameters()],
        1e-10,
    )
    for p, q in zip(fast.network.parameters(), ref.network.parameters(), strict=True):
        s, t = fast.optimizer.state[p], ref.optimizer.state[q]
        _assert_relative([s["exp_avg"], s["exp_avg_sq"]], [t["exp_avg"], t["exp_avg_sq"]], 1e-10)
    init = make()
    assert float((init.network.weights[1] - fast.network.weights[1]).detach().abs().max()) > 1e-3


def _autograd_gradients_mean(
    net: BatchedMLP,
    inputs: torch.Tensor,
    columns: torch.Tensor,
    targets: torch.Tensor,
    *,
    scale: float,
    offset: torch.Tensor | None = None,
) -> list[torch.Tensor]:
    """The bandit ensemble's loss as it was written for autograd, ``½ mean (f + βp − r)²``
    per head, summed (``scale`` is ``0.5 / n``)."""
    assert scale == 0.5 / targets.shape[1]
    with torch.enable_grad():
        pred = _predicted(net, inputs, columns, offset)
        loss = 0.5 * (pred - targets).square().mean(dim=1).sum()
        return list(torch.autograd.grad(loss, list(net.parameters())))


def test_wheel_run_plays_the_autograd_paths_actions(monkeypatch: pytest.MonkeyPatch) -> None:
    """thompson-neurallinear on the wheel, 200 rounds (four retrainings of 100 steps), 3 seeds:
    the same actions and regret with the written-out gradients as with autograd."""
    runs = []
    for autograd in (False, True):
        monkeypatch.setattr(NeuralLinearPosterior, "_autograd", autograd)
        runs.append(run_wheel("thompson-neurallinear", 0.5, 200, 3, seed=100))
    assert np.array_equal(runs[0].actions, runs[1].actions)
    np.testing.assert_array_equal(runs[0].regret, runs[1].regret)
    assert len(np.unique(runs[0].actions)) > 1
