"""An ensemble with randomized prior functions for contextual bandits, batched over seeds.

Osband, Aslanides & Cassirer 2018 in one-step form: head ``h`` of row ``b`` predicts the mean
reward as ``f_h(x) + β p_h(x)`` (``f_h`` a trainable MLP, ``p_h`` a frozen random one),
regressed on the observed rewards; heads and rows are one ``BatchedMLP`` of ``B·H`` models.
EI is exact for the heads' empirical distribution.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import torch

from delight_gym._checks import (
    check_positive_float,
    check_positive_int,
    check_would_fit,
    magnitude_limit,
)
from delight_gym.posteriors.arguments import check_head_options, check_placement
from delight_gym.posteriors.batched_base import (
    BatchedBanditPosterior,
    check_generators,
)
from delight_gym.posteriors.batched_mlp import BatchedMLP, ObservationBuffer, mlp_parameter_count
from delight_gym.posteriors.ensemble import (
    DEFAULT_NUM_HEADS,
    DEFAULT_PRIOR_SCALE,
    ensemble_expected_improvement,
)
from delight_gym.posteriors.linfull import RowPredictive

__all__ = ["BanditEnsemblePosterior", "EnsemblePredictive"]


class EnsemblePredictive(RowPredictive):
    """The heads' values ``(H, B, K)`` of ``K`` actions in ``B`` rows, and their mean
    ``(B, K)``; the expected improvement is the heads' ``(1/H) Σ_h (f_h(a) − baseline)^+``."""

    def __init__(self, head_values: torch.Tensor) -> None:
        self.head_values = head_values
        self.mean = head_values.mean(dim=0)

    def _expected_improvement(
        self, v: torch.Tensor, rows: torch.Tensor | None, at_least: float
    ) -> torch.Tensor:
        values = (
            self.head_values if rows is None else self.head_values[:, rows.to(self.mean.device)]
        )
        return ensemble_expected_improvement(values, v[:, 0])


class BanditEnsemblePosterior(BatchedBanditPosterior):
    """``H`` heads with randomized priors per row, each predicting ``G`` groups' mean rewards.

    Parameters
    ----------
    batch_size, num_groups, input_dim : int
        ``B``, ``G`` (``K`` per-arm or 1 shared), ``d``.
    generators : sequence of torch.Generator
        ``B`` CPU generators: row ``i``'s weights, priors and minibatches.
    num_heads, hidden_sizes, prior_scale :
        ``H`` (default 10), the MLPs' hidden sizes (default ``(50,)``) and ``β >= 0`` (3.0).
    learning_rate, train_batch_size, sgd_steps :
        Adam's step (1e-3), the minibatch size (128), gradient steps per :meth:`update` (1).
    device : torch.device or str, optional
    dtype : torch.dtype, default torch.float32

    Attributes
    ----------
    network, prior : BatchedMLP
        ``B·H`` trainable heads and their frozen priors (model ``b·H + h``).
    optimizer : torch.optim.Adam
    data : ObservationBuffer
    """

    def __init__(
        self,
        batch_size: int,
        num_groups: int,
        input_dim: int,
        *,
        generators: Sequence[torch.Generator],
        num_heads: int = DEFAULT_NUM_HEADS,
        hidden_sizes: Sequence[int] = (50,),
        prior_scale: float = DEFAULT_PRIOR_SCALE,
        learning_rate: float = 1e-3,
        train_batch_size: int = 128,
        sgd_steps: int = 1,
        device: Any = None,
        dtype: torch.dtype = torch.float32,
    ) -> None:
        self._set_shape(batch_size, num_groups, input_dim)
        self.generators = check_generators(generators, self.batch_size)
        self.num_heads, hidden, self.prior_scale = check_head_options(
            num_heads, hidden_sizes, prior_scale
        )
        self.learning_rate = check_positive_float(learning_rate, "learning_rate")
        self.train_batch_size = check_positive_int(train_batch_size, "train_batch_size")
        self.sgd_steps = check_positive_int(sgd_steps, "sgd_steps")
        self.device, self.dtype = check_placement(device, dtype)
        sizes = (self.input_dim, *hidden, self.num_groups)
        models = self.batch_size * self.num_heads
        itemsize = torch.empty(0, dtype=self.dtype).element_size()
        check_would_fit(  # network, prior, gradient and Adam's two moments
            5 * models * mlp_parameter_count(sizes) * itemsize,
            f"num_heads={self.num_heads} x batch_size={self.batch_size} (MLPs of sizes {sizes},"
            " five copies)",
            self.device,
        )
        common: dict[str, Any] = {"init": "trunc_normal", "device": self.device, "dtype": dtype}
        self.network = BatchedMLP(models, sizes, generators=self.generators, **common)
        self.prior = BatchedMLP(models, sizes, generators=self.generators, **common)
        self.prior.requires_grad_(False)
        self.optimizer = torch.optim.Adam(self.network.parameters(), lr=self.learning_rate)
        self.data = ObservationBuffer(
            self.batch_size, self.input_dim, device=self.device, dtype=self.dtype
        )
        self._prior_cache: tuple[torch.Tensor, torch.Tensor] | None = None

    def _columns(self, arms: int) -> torch.Tensor:
        if self.num_groups == 1:
            return torch.zeros(1, arms, dtype=torch.int64, device=self.device)
        return torch.arange(arms, device=self.device)[None]

    def _per_head(self, x: torch.Tensor) -> torch.Tensor:
        """``(B, n, d)`` → ``(B·H, n, d)``: every row's inputs for each of its heads."""
        b, n, d = x.shape
        return x[:, None].expand(b, self.num_heads, n, d).reshape(b * self.num_heads, n, d)

    def head_values(self, inputs: Any) -> torch.Tensor:
        """Every head's mean reward of every arm: ``(H, B, K)`` (no graph)."""
        return self._head_values(self.check_inputs(inputs))

    def _head_values(self, x: torch.Tensor) -> torch.Tensor:
        b, k, _ = x.shape
        cols = self._columns(k)
        xx = self._per_head(x)
        with torch.no_grad():
            values = self.network(xx, cols)
            if self.prior_scale > 0:
                # The priors' values are reused while the inputs (a fixed set of arms) stay.
                cache = self._prior_cache
                if cache is not None and cache[0].shape == x.shape and torch.equal(cache[0], x):
                    prior = cache[1]
                else:
                    prior = self.prior(xx, cols)
                    self._prior_cache = (x.clone(), prior)
                values = values + self.prior_scale * prior
        if not bool(torch.isfinite(values).all()):
            raise ValueError(f"inputs: the heads' values would overflow {self.dtype}")
        return values.reshape(b, self.num_heads, k).transpose(0, 1)

    def predictive(self, inputs: Any) -> EnsemblePredictive:
        """The heads' values, their mean and their exact EI (:class:`EnsemblePredictive`)."""
        return self._predictive(self.check_inputs(inputs))

    def _predictive(self, x: torch.Tensor) -> EnsemblePredictive:
        return EnsemblePredictive(self._head_values(x))

    def mean(self, inputs: Any) -> torch.Tensor:
        """The heads' mean reward of every arm, ``(B, K)``."""
        return self._mean(self.check_inputs(inputs))

    def _mean(self, x: torch.Tensor) -> torch.Tensor:
        return self._head_values(x).mean(dim=0)

    def thompson_values(self, inputs: Any, generators: Sequence[torch.Generator]) -> torch.Tensor:
        """The values of one head per row, drawn uniformly from its own generator: ``(B, K)``."""
        gens = check_generators(generators, self.batch_size)
        return self._thompson_values(self.check_inputs(inputs), gens)

    def _thompson_values(self, x: torch.Tensor, gens: Sequence[torch.Generator]) -> torch.Tensor:
        # One head per row from that row's generator; row b's head h is model b·H + h.
        heads = torch.cat([torch.randint(self.num_heads, (1,), generator=g) for g in gens])
        models = (torch.arange(self.batch_size) * self.num_heads + heads).to(self.device)
        cols = self._columns(x.shape[1])
        with torch.no_grad():
            values = self.network(x, cols, models)
            if self.prior_scale > 0:
                values = values + self.prior_scale * self.prior(x, cols, models)
        return values

    def update(self, inputs: Any, groups: Any, targets: Any) -> None:
        """Store one observation per row (:meth:`one_observation`'s arguments) and take
        ``sgd_steps`` Adam steps of every head."""
        x, g, y = self.one_observation(inputs, groups, targets)
        # What a refused (overflowing) update must restore.
        generator_states = [gen.get_state() for gen in self.generators]
        saved = None
        if self.sgd_steps > 1:
            saved = (
                [p.detach().clone() for p in self.network.parameters()],
                copy.deepcopy(self.optimizer.state_dict()),
            )
        self.data.add(x, g, y)
        picks = self.data.sample(self.generators, self.sgd_steps, self.train_batch_size)
        heads = self.num_heads
        for k in range(self.sgd_steps):
            xb, gb, yb = self.data.batch(picks[:, k])
            xx = self._per_head(xb)
            cols = gb.repeat_interleave(heads, dim=0)
            offset = None
            if self.prior_scale > 0:
                with torch.no_grad():
                    offset = self.prior_scale * self.prior(xx, cols)
            target = yb.repeat_interleave(heads, dim=0)
            # Each head's mean loss ½(f + βp − r)², summed over heads and rows: independent
            # gradients, autograd's (written out).
            grads = self.network.squared_error_gradients(
                xx, cols, target, scale=0.5 / target.shape[1], offset=offset
            )
            if not all(bool(torch.isfinite(grad).all()) for grad in grads):
                self._undo(generator_states, saved)
                raise ValueError(
                    f"targets: the heads' gradients would overflow {self.dtype}; the posterior "
                    "is unchanged"
                )
            for p, grad in zip(self.network.parameters(), grads, strict=True):
                p.grad = grad
            self.optimizer.step()

    def _magnitude_limit(self) -> tuple[float, str]:
        """``finfo(dtype).max ** ¼``: Adam's squares of the gradients must stay finite."""
        why = f"(the squares of the training's gradients must stay finite in {self.dtype})"
        return magnitude_limit(self.dtype, 4), why

    def _undo(self, generator_states: list[torch.Tensor], saved: Any) -> None:
        """Forget the observation just added; restore the generators, weights and optimizer."""
        self.data.size -= 1
        for gen, state in zip(self.generators, generator_states, strict=True):
            gen.set_state(state)
        if saved is not None:
            params, optimizer_state = saved
            with torch.no_grad():
                for p, old in zip(self.network.parameters(), params, strict=True):
                    p.copy_(old)
            self.optimizer.load_state_dict(optimizer_state)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(batch_size={self.batch_size}, num_groups={self.num_groups}, "
            f"input_dim={self.input_dim}, num_heads={self.num_heads}, "
            f"sizes={self.network.sizes}, prior_scale={self.prior_scale}, device={self.device})"
        )
