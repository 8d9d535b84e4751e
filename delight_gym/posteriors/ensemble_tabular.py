"""Per-state tables for an ensemble of Q-heads whose observations are states (look-ups).

When :class:`~delight_gym.posteriors.ensemble.EnsembleQNetwork` reads its inputs as state
indices (a ``Discrete`` space, or one-hot rows), the frozen parts of a TD step depend on the
state alone: the priors ``β p_k(s)`` never change and the targets ``Q^-_k(s) + β p_k(s)``
change only at a target update. :class:`StateTables` computes them for every state at once
(one row more for an all-zero one-hot row) and the TD step and the heads' values read them
instead of running the frozen networks at ``s`` and ``s'`` on every batch. Only the trainable
heads then run per batch. The numbers are those of the generic path up to float32 rounding
(tested to ``1e-6``).
"""

from __future__ import annotations

from collections.abc import Callable

import torch

__all__ = ["TABLE_MAX_STATES", "StateTables"]

#: Tables are kept for at most this many states (``K · (S + 1) · A`` floats each): the target
#: table is recomputed at every target update, which pays while ``S`` is small against the
#: rows a TD step would otherwise run through the frozen networks (``3 · batch`` per step).
TABLE_MAX_STATES = 1024

Layers = list[tuple[torch.Tensor, torch.Tensor]]
MLP = Callable[[torch.Tensor, Layers], torch.Tensor]


class StateTables:
    """The priors' and the targets' values at every state of a look-up ensemble.

    Parameters
    ----------
    num_states : int
        ``S``: the look-up inputs are ``0 … S - 1``, and ``-1`` for an all-zero one-hot row.
    mlp : callable
        ``mlp(states, layers) -> (H, n, A)``: the network's batched heads
        (``EnsembleQNetwork``'s), run on int64 states with ``layers`` of ``H`` heads.

    Attributes
    ----------
    prior : torch.Tensor
        float32 ``(K, S + 1, A)``: ``β p_k(s)``; row ``S`` is the all-zero input's.
    target : torch.Tensor
        float32 ``(K, S + 1, A)``: ``Q^-_k(s) + β p_k(s)`` at the last :meth:`refresh_target`.
    """

    def __init__(self, num_states: int, mlp: MLP) -> None:
        if num_states > TABLE_MAX_STATES:
            raise ValueError(
                f"state tables hold at most {TABLE_MAX_STATES} states, got {num_states}"
            )
        self.num_states = num_states
        self._mlp = mlp
        self.prior = torch.empty(0)
        self.target = torch.empty(0)

    def _states(self, device: torch.device) -> torch.Tensor:
        # Every state, then -1 (the all-zero one-hot row: its first layer is the bias alone).
        return torch.arange(-1, self.num_states, device=device).roll(-1)

    def refresh(self, frozen: Layers, num_heads: int, prior_scale: float) -> None:
        """Recompute both tables from the frozen layers (rows ``[:K]`` the targets', ``[K:]``
        the priors': ``(2K, in, out)`` weights and ``(2K, 1, out)`` biases)."""
        k = num_heads
        with torch.no_grad():
            states = self._states(frozen[0][0].device)
            self.prior = prior_scale * self._mlp(states, [(w[k:], b[k:]) for w, b in frozen])
        self.refresh_target(frozen, num_heads)

    def refresh_target(self, frozen: Layers, num_heads: int) -> None:
        """Recompute the target table (after every target update)."""
        k = num_heads
        with torch.no_grad():
            states = self._states(frozen[0][0].device)
            self.target = self._mlp(states, [(w[:k], b[:k]) for w, b in frozen]) + self.prior

    def current(self, like: torch.Tensor) -> bool:
        """Whether the tables were computed (and not invalidated since) with the device and
        dtype of ``like`` (a frozen weight)."""
        return (
            self.prior.numel() > 0
            and self.prior.device == like.device
            and self.prior.dtype == like.dtype
        )

    def invalidate(self) -> None:
        """Mark the tables stale (the frozen weights were replaced): the next use refreshes."""
        self.prior = torch.empty(0)

    def rows(self, states: torch.Tensor) -> torch.Tensor:
        """Table rows of encoded states ``(n,)`` (``-1``, the all-zero row, is row ``S``)."""
        return torch.where(states < 0, self.num_states, states)

    def lookup(self, x: torch.Tensor, xn: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(β p(x), Q^-(xn) + β p(xn))`` for states ``x, xn`` of shape ``(B,)``: each
        ``(K, B, A)``, the frozen parts of a TD step."""
        return self.prior.index_select(1, self.rows(x)), self.target.index_select(1, self.rows(xn))
