"""The shared base of the adapters that make a posterior speak
:class:`~delight_gym.de.posterior.ValuePosterior` (each lives beside its posterior, which
returns it from ``as_value_posterior``). torch is imported only where tensors are taken.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from delight_gym._checks import check_finite_array, check_instance, check_positive_int, check_shape
from delight_gym.de.posterior import PosteriorValues

__all__ = ["BanditAdapter", "PosteriorAdapter", "split_values", "to_numpy"]


def to_numpy(tensor: Any) -> np.ndarray:
    """A tensor (on any device) as a float64 numpy array."""
    return np.asarray(tensor.detach().cpu().numpy(), dtype=np.float64)


def split_values(mean: Any, baseline: Any, expected_improvement: Any) -> PosteriorValues:
    """:class:`PosteriorValues` from device tensors ``(n, A)``, ``(n,)``, ``(n, A)``, in one
    host copy."""
    torch = _torch()
    a = mean.shape[-1]  # one concatenated copy to the host instead of three
    both = to_numpy(torch.cat([mean, expected_improvement, baseline[:, None]], dim=-1))
    return PosteriorValues(both[:, :a], both[:, 2 * a], both[:, a : 2 * a])


def _torch() -> Any:
    import torch

    return torch


class PosteriorAdapter:
    """Shared base of the adapters: the wrapped ``posterior`` (``TypeError`` unless an
    ``expected`` instance) and ``num_actions``."""

    def __init__(self, posterior: Any, expected: type, num_actions: int | None) -> None:
        self.posterior: Any = check_instance(
            posterior, expected, "posterior", f"a {expected.__name__}"
        )
        self.num_actions: int = check_positive_int(num_actions, "num_actions")

    def row_map(self, n: int) -> np.ndarray:
        """Which posterior row serves each of ``n`` observation rows, int64 ``(n,)``: all row 0
        for a one-row posterior, row ``i`` for an ``n``-row one; ``ValueError`` otherwise."""
        batch_size = self.posterior.batch_size
        if batch_size == 1:
            return np.zeros(n, dtype=np.int64)
        if batch_size == n:
            return np.arange(n)
        raise ValueError(
            f"posterior has batch_size {batch_size}: it serves either every row (batch_size 1) "
            f"or row i of a batch of exactly {batch_size} observations, got {n}"
        )

    def absorb_rows(self, update: Callable[..., None], *rows: Any) -> None:
        """``update(*rows)`` at once when the posterior has a row per observation, else one
        observation row at a time, in order (the caller has checked ``row_map``)."""
        n = len(rows[0])
        if self.posterior.batch_size == n:
            update(*rows)
        else:
            for i in range(n):
                update(*(x[i : i + 1] for x in rows))

    def posterior_tensor(self, value: Any, shape: Any, name: str) -> Any:
        """``value`` as a tensor in the posterior's dtype and device, of ``shape``."""
        torch = _torch()
        out = torch.as_tensor(
            np.asarray(value), dtype=self.posterior.dtype, device=self.posterior.device
        )
        return check_shape(out, shape, name)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.posterior!r}, num_actions={self.num_actions})"


class BanditAdapter(PosteriorAdapter):
    """Base of the bandit adapters: a transition is one pull; :meth:`update` checks the batch
    and hands it to ``absorb`` (nothing bootstraps)."""

    def absorb(self, observations: Any, actions: np.ndarray, rewards: np.ndarray) -> None:
        """Absorb ``n`` pulls (``actions`` int64 ``(n,)``, ``rewards`` float64 ``(n,)``)."""
        raise NotImplementedError

    def update(
        self,
        observations: Any,
        actions: np.ndarray,
        rewards: np.ndarray,
        next_observations: Any,
        terminated: np.ndarray,
        truncated: np.ndarray | None = None,
    ) -> None:
        """Absorb ``n`` pulls; ``ValueError`` on a batch the posterior's rows cannot serve, or
        on actions or finite rewards that are not one per row."""
        n = len(observations)
        self.row_map(n)
        act = np.asarray(actions)
        if act.size != n or not np.issubdtype(act.dtype, np.integer):
            raise ValueError(f"actions must be {n} integers, got {act.dtype} of shape {act.shape}")
        rew = check_finite_array(rewards, "rewards")
        if rew.size != n:
            raise ValueError(f"rewards must hold {n} values, got shape {rew.shape}")
        self.absorb(observations, act.reshape(n).astype(np.int64), rew.reshape(n))
