"""NeuralLinear (Riquelme, Tucker & Snoek 2018): Bayesian linear regression on a network's
last hidden layer, batched over seeds.

A network per row maps an input to features ``z`` and has one output per model group, trained
on the squared error of the observed group's output; a
:class:`~delight_gym.posteriors.linfull.LinFullPosterior` on ``z`` gives the Student-t
posterior of the mean reward. Every ``train_every`` updates the networks are trained, then the
regression is refitted.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch

from delight_gym._checks import (
    check_choice,
    check_flag,
    check_float_dtype,
    check_positive_float,
    check_positive_int,
    magnitude_limit,
)
from delight_gym.posteriors.batched_base import BatchedBanditPosterior, check_generators
from delight_gym.posteriors.batched_mlp import (
    BatchedMLP,
    ObservationBuffer,
    check_hidden_sizes,
    rmsprop_step,
)
from delight_gym.posteriors.linfull import (
    DEFAULT_A0,
    DEFAULT_B0,
    DEFAULT_LAMBDA_PRIOR,
    LinFullPosterior,
    StudentTPredictive,
)

__all__ = ["NEURAL_LINEAR_SETTINGS", "NeuralLinearPosterior", "neural_linear_settings"]

#: Named sets of :class:`NeuralLinearPosterior` keywords. ``"example"``: the Deep Bayesian
#: Bandits Showdown's public ``example_main.py`` (the constructor's defaults). ``"paper"``: its
#: paper's settings as a public reimplementation quotes them, in float32.
NEURAL_LINEAR_SETTINGS: dict[str, dict[str, Any]] = {
    "example": {},
    "paper": {
        "hidden_sizes": (100, 100),
        "train_every": 20,
        "train_steps": 20,
        "a0": 3.0,
        "b0": 3.0,
        "network_dtype": torch.float32,
    },
}


def neural_linear_settings(value: Any, name: str = "nl_settings") -> str:
    """``value`` if it names one of :data:`NEURAL_LINEAR_SETTINGS`, else a ``ValueError``."""
    return check_choice(value, sorted(NEURAL_LINEAR_SETTINGS), name)


class NeuralLinearPosterior(BatchedBanditPosterior):
    """NeuralLinear posteriors of ``G`` reward models in each of ``B`` rows.

    Parameters
    ----------
    batch_size, num_groups, input_dim : int
        ``B``, ``G`` (``K`` per-arm or 1 shared), ``d``.
    generators : sequence of torch.Generator
        ``B`` CPU generators: row ``i``'s initial weights and minibatches.
    hidden_sizes : sequence of int, default (50,)
        The last is the feature dimension.
    train_every, train_steps : int, default 50, 100
        Updates between retrainings, minibatch steps per retraining.
    train_batch_size : int, default 512
    learning_rate, lr_decay_rate : float, default 0.1, 0.5
        RMSProp's step ``k`` is ``lr_0/(1 + lr_decay_rate·k)``.
    reset_lr : bool, default False
        ``k`` restarts at 0 at each retraining, or (the default) counts over all of them.
    max_grad_norm, init_scale : float, default 5.0, 0.3
    lambda_prior, a0, b0 : float
        The regression's prior (0.25, 6, 6).
    device, dtype, network_dtype : optional
        The regression's device and dtype (float64), the network's dtype (float64).

    Attributes
    ----------
    network, regression, data, num_updates, trainings :
        The network, the regression on its features, the data, updates and retrainings.
    """

    #: Train through autograd instead of the written-out gradients (same numbers, slower).
    _autograd = False

    def __init__(
        self,
        batch_size: int,
        num_groups: int,
        input_dim: int,
        *,
        generators: Sequence[torch.Generator],
        hidden_sizes: Sequence[int] = (50,),
        train_every: int = 50,
        train_steps: int = 100,
        train_batch_size: int = 512,
        learning_rate: float = 0.1,
        lr_decay_rate: float = 0.5,
        reset_lr: bool = False,
        max_grad_norm: float = 5.0,
        init_scale: float = 0.3,
        lambda_prior: float = DEFAULT_LAMBDA_PRIOR,
        a0: float = DEFAULT_A0,
        b0: float = DEFAULT_B0,
        device: Any = None,
        dtype: torch.dtype = torch.float64,
        network_dtype: torch.dtype = torch.float64,
    ) -> None:
        self._set_shape(batch_size, num_groups, input_dim)
        self.generators = check_generators(generators, self.batch_size)
        hidden = check_hidden_sizes(hidden_sizes)
        self.train_every = check_positive_int(train_every, "train_every")
        self.train_steps = check_positive_int(train_steps, "train_steps")
        self.train_batch_size = check_positive_int(train_batch_size, "train_batch_size")
        self.learning_rate = check_positive_float(learning_rate, "learning_rate")
        self.lr_decay_rate = check_positive_float(lr_decay_rate, "lr_decay_rate")
        self.reset_lr = check_flag(reset_lr, "reset_lr")
        self.max_grad_norm = check_positive_float(max_grad_norm, "max_grad_norm")
        self.network_dtype = check_float_dtype(network_dtype, "network_dtype")
        self.regression = LinFullPosterior(
            self.batch_size,
            self.num_groups,
            hidden[-1],
            lambda_prior=lambda_prior,
            a0=a0,
            b0=b0,
            intercept=False,
            device=device,
            dtype=dtype,
        )
        self.device = self.regression.device
        self.dtype = self.regression.dtype
        self.network = BatchedMLP(
            self.batch_size,
            (self.input_dim, *hidden, self.num_groups),
            generators=self.generators,
            init="uniform",
            init_scale=init_scale,
            device=self.device,
            dtype=self.network_dtype,
        )
        self._mean_squares = [torch.ones_like(p) for p in self.network.parameters()]
        self.data = ObservationBuffer(
            self.batch_size, self.input_dim, device=self.device, dtype=self.dtype
        )
        self.num_updates = 0
        self.trainings = 0
        self.sgd_steps = 0
        self._feature_buffer = torch.empty(0, dtype=self.network_dtype, device=self.device)

    def features(self, inputs: torch.Tensor) -> torch.Tensor:
        """The networks' last hidden layer: ``(B, n, d)`` → ``(B, n, h)`` in the regression's
        dtype (no graph)."""
        with torch.no_grad():
            return self.network.hidden(inputs.to(self.network_dtype)).to(self.dtype)

    def _refit(self) -> None:
        """Refit the regression on every datum's features, computed into a buffer kept across
        retrainings (a fresh one costs more in page faults than the product)."""
        data = self.data
        batch, size, width = self.batch_size, data.size, self.network.sizes[-2]
        if self._feature_buffer.numel() < batch * size * width:
            capacity = 2 * batch * size * width  # doubles, as the data buffer does
            self._feature_buffer = torch.empty(
                capacity, dtype=self.network_dtype, device=self.device
            )
        out = self._feature_buffer[: batch * size * width].view(batch, size, width)
        with torch.no_grad():
            feats = self.network.hidden(data.inputs.to(self.network_dtype), out=out)
        feats = feats.to(self.dtype)
        # The data were checked on arrival. The features are ReLU outputs (>= 0): finite
        # when their sum is (one pass instead of a mask of every entry).
        if not bool(torch.isfinite(feats.sum())):
            raise ValueError("the network's features must be finite (no NaN or inf)")
        self.regression._refit(feats, data.groups, data.targets)

    # The public methods check the inputs and, through the regression's public methods, their
    # features; the private ones (the agents' path) trust both.
    def predictive(self, inputs: Any) -> StudentTPredictive:
        """Student-t posterior of every arm's mean reward (``(B, K, d)`` → ``(B, K)`` each)."""
        return self.regression.predictive(self.features(self.check_inputs(inputs)))

    def _predictive(self, x: torch.Tensor) -> StudentTPredictive:
        return self.regression._predictive(self.features(x))

    def mean(self, inputs: Any) -> torch.Tensor:
        """Posterior mean reward of every arm, ``(B, K)``."""
        return self.regression.mean(self.features(self.check_inputs(inputs)))

    def _mean(self, x: torch.Tensor) -> torch.Tensor:
        return self.regression._mean(self.features(x))

    def thompson_values(self, inputs: Any, generators: Sequence[torch.Generator]) -> torch.Tensor:
        """Every arm's mean reward under one draw of the regression weights, ``(B, K)``."""
        x = self.check_inputs(inputs)
        return self.regression.thompson_values(self.features(x), generators)

    def _thompson_values(
        self, x: torch.Tensor, generators: Sequence[torch.Generator]
    ) -> torch.Tensor:
        return self.regression._thompson_values(self.features(x), generators)

    def update(self, inputs: Any, groups: Any, targets: Any) -> None:
        """Absorb one observation per row (:meth:`one_observation`'s arguments), and retrain
        every ``train_every`` updates."""
        x, g, y = self.one_observation(inputs, groups, targets)
        if (self.num_updates + 1) % self.train_every != 0:
            # The regression refuses an overflowing update before it changes anything.
            self.regression._update(self.features(x[:, None]), g[:, None], y[:, None])
            self.data.add(x, g, y)
            self.num_updates += 1
            return
        saved = self._snapshot()
        try:
            self.data.add(x, g, y)
            self.num_updates += 1
            self.train()
            self._refit()
        except ValueError:
            self._restore(saved)
            raise

    def _magnitude_limit(self) -> tuple[float, str]:
        """``finfo.max ** ¼`` of the smaller of the two dtypes: squared gradients stay finite."""
        limit = min(magnitude_limit(self.network_dtype, 4), magnitude_limit(self.dtype, 4))
        return limit, "(the squares of the training's gradients must stay finite)"

    def _snapshot(self) -> dict[str, Any]:
        """What a retraining changes, to undo a refused update."""
        return {
            "params": [p.detach().clone() for p in self.network.parameters()],
            "mean_squares": [m.clone() for m in self._mean_squares],
            "generators": [gen.get_state() for gen in self.generators],
            "counters": (self.data.size, self.num_updates, self.trainings, self.sgd_steps),
        }

    def _restore(self, saved: dict[str, Any]) -> None:
        with torch.no_grad():
            for p, old in zip(self.network.parameters(), saved["params"], strict=True):
                p.copy_(old)
            for m, old in zip(self._mean_squares, saved["mean_squares"], strict=True):
                m.copy_(old)
        for gen, state in zip(self.generators, saved["generators"], strict=True):
            gen.set_state(state)
        self.data.size, self.num_updates, self.trainings, self.sgd_steps = saved["counters"]

    def train(self) -> None:
        """``train_steps`` RMSProp steps of every row's network on minibatches of its data."""
        steps, size = self.train_steps, self.train_batch_size
        picks = self.data.sample(self.generators, steps, size)
        params = list(self.network.parameters())
        start = 0 if self.reset_lr else self.sgd_steps
        for k in range(steps):
            x, g, y = self.data.batch(picks[:, k])
            x, y = x.to(self.network_dtype), y.to(self.network_dtype)
            if self._autograd:
                err = self.network(x, g) - y
                loss = err.square().sum() / size  # rows' losses summed: independent gradients
                self.network.zero_grad(set_to_none=False)
                loss.backward()
            else:  # the same gradients, written out (no graph)
                grads = self.network.squared_error_gradients(x, g, y, scale=1.0 / size)
                for p, grad in zip(params, grads, strict=True):
                    p.grad = grad
            lr = self.learning_rate / (1.0 + self.lr_decay_rate * (start + k))
            rmsprop_step(params, self._mean_squares, lr, max_grad_norm=self.max_grad_norm)
        self.sgd_steps += steps
        self.trainings += 1

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(batch_size={self.batch_size}, num_groups={self.num_groups}, "
            f"input_dim={self.input_dim}, sizes={self.network.sizes}, "
            f"train_every={self.train_every}, device={self.device})"
        )
