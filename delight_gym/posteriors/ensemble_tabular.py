"""Per-state tables for an ensemble of Q-heads whose observations are states (look-ups).

With state-index inputs (a ``Discrete`` space, or one-hot rows) the frozen parts of a TD step
depend on the state alone: the priors ``β p_k(s)`` never change and the targets
``Q^-_k(s) + β p_k(s)`` change only at a target update. :class:`StateTables` keeps them per
state (one row more for an all-zero one-hot row), read instead of running the frozen networks
on every batch. On the CPU :meth:`StateTables.td_gradients` also takes the TD step's gradients
without autograd. The numbers are the generic path's up to float32 rounding.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import torch

if TYPE_CHECKING:
    from delight_gym.posteriors.ensemble_inputs import Transitions

__all__ = ["TABLE_MAX_STATES", "StateTables"]

#: Tables are kept for at most this many states: the target table is recomputed at every
#: target update, which pays while ``S`` is small against a TD step's ``3 · batch`` rows.
TABLE_MAX_STATES = 1024

Layers = list[tuple[torch.Tensor, torch.Tensor]]
MLP = Callable[[torch.Tensor, Layers], torch.Tensor]


class StateTables:
    """The priors' and the targets' values at every state of a look-up ensemble.

    Parameters
    ----------
    num_states : int
        ``S`` (at most :data:`TABLE_MAX_STATES`, as the caller checks): the look-up inputs are
        ``0 … S - 1``, and ``-1`` for an all-zero one-hot row.
    mlp : callable
        ``mlp(states, layers) -> (H, n, A)``: the network's batched heads on int64 states.

    Attributes
    ----------
    prior : torch.Tensor
        float32 ``(K, S + 1, A)``: ``β p_k(s)``; row ``S`` is the all-zero input's.
    target : torch.Tensor
        float32 ``(K, S + 1, A)``: ``Q^-_k(s) + β p_k(s)``; on the CPU current only at the rows
        :meth:`next_rows` returned so far.
    target_max : torch.Tensor
        float32 ``(K, S + 1)``: ``target``'s maximum over the actions.
    """

    def __init__(self, num_states: int, mlp: MLP) -> None:
        self.num_states = num_states
        self._mlp = mlp
        self.prior = torch.empty(0)
        self.target = torch.empty(0)
        self.target_max = torch.empty(0)
        # Rows of ``target`` kept current: on the CPU the next states looked up so far, a numpy
        # mask (cheap to index); elsewhere every row, a tensor (no host synchronisation).
        self._kept: np.ndarray | torch.Tensor = np.zeros(0, dtype=bool)
        self._target_layers: Layers = []

    def _inputs(self, rows: torch.Tensor) -> torch.Tensor:
        # table row S is the all-zero one-hot input, -1
        return torch.where(rows == self.num_states, -1, rows)

    def refresh(self, frozen: Layers, num_heads: int, prior_scale: float) -> None:
        """Recompute both tables from the frozen layers (rows ``[:K]`` targets, ``[K:]`` priors)."""
        k = num_heads
        with torch.no_grad():
            device = frozen[0][0].device
            every = torch.arange(self.num_states + 1, device=device)
            self.prior = prior_scale * self._mlp(
                self._inputs(every), [(w[k:], b[k:]) for w, b in frozen]
            )
            self.target = torch.zeros_like(self.prior)
            self.target_max = self.target[..., 0].clone()
            if device.type != "cpu":
                self._kept = torch.ones(self.num_states + 1, dtype=torch.bool, device=device)
            elif not isinstance(self._kept, np.ndarray) or len(self._kept) != self.num_states + 1:
                self._kept = np.zeros(self.num_states + 1, dtype=bool)
        self.refresh_target(frozen, num_heads)

    def refresh_target(self, frozen: Layers, num_heads: int) -> None:
        """Recompute the target table's kept rows (after every target update)."""
        self._target_layers = [(w[:num_heads], b[:num_heads]) for w, b in frozen]
        if isinstance(self._kept, np.ndarray):
            self._compute_targets(torch.from_numpy(np.flatnonzero(self._kept)))
        else:  # every row, without a host synchronisation
            self._compute_targets(torch.arange(self.num_states + 1, device=self._kept.device))

    def _compute_targets(self, rows: torch.Tensor) -> None:
        if rows.numel() == 0:
            return
        with torch.no_grad():
            values = self._mlp(self._inputs(rows), self._target_layers)
            values += self.prior.index_select(1, rows)
            self.target.index_copy_(1, rows, values)
            self.target_max.index_copy_(1, rows, values.max(dim=-1).values)

    def next_rows(self, xn: torch.Tensor) -> torch.Tensor:
        """Table rows of next states ``xn`` ``(B,)``, their targets current (computed now for
        rows not kept so far)."""
        rows = self.rows(xn)
        if isinstance(self._kept, np.ndarray):
            missing = ~self._kept[rows.numpy()]
            if missing.any():
                new = torch.unique(rows[torch.from_numpy(missing)])
                self._kept[new.numpy()] = True
                self._compute_targets(new)
        return rows

    def current(self, like: torch.Tensor) -> bool:
        """Whether the tables are computed, not invalidated, on ``like``'s device and dtype."""
        return (
            self.prior.numel() > 0
            and self.prior.device == like.device
            and self.prior.dtype == like.dtype
        )

    def invalidate(self) -> None:
        """Mark the tables stale (the frozen weights were replaced): the next use refreshes."""
        self.prior = torch.empty(0)

    def rows(self, states: torch.Tensor) -> torch.Tensor:
        """Table rows of encoded states ``(n,)`` (``-1``, the all-zero input, is row ``S``)."""
        return states.remainder(self.num_states + 1)

    def lookup(self, x: torch.Tensor, xn: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(β p(x), Q^-(xn) + β p(xn))``, each ``(K, B, A)``, for states ``x, xn`` ``(B,)``."""
        return self.prior.index_select(1, self.rows(x)), self.target.index_select(
            1, self.next_rows(xn)
        )

    def td_gradients(
        self, layers: Layers, batch: Transitions, gamma: float
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """The TD loss of the trainable ``layers`` on a batch of states, its gradients written
        to each parameter's ``.grad`` without autograd.

        The heads run once per distinct state of the batch; the loss, targets and gradients are
        :func:`~delight_gym.posteriors.ensemble_td.ensemble_td_loss`'s and its backward pass's
        up to float32 rounding (sums over a repeated state are taken in another order).

        Parameters
        ----------
        layers : list of (torch.Tensor, torch.Tensor)
            The trainable ``(K, S, out)``, ..., ``(K, in, A)`` weights and ``(K, 1, out)`` biases.
        batch : Transitions
            Checked and shared by every head, with int64 ``(B,)`` states and next states.
        gamma : float

        Returns
        -------
        (torch.Tensor, torch.Tensor)
            The summed loss of the ``K`` heads and the TD targets' std (0-d, no graph).
        """
        x, xn, actions = batch.observations, batch.next_observations, batch.actions
        weights = None if batch.masks is None else batch.masks.T  # (K, B)
        w0, b0 = layers[0]
        k, b, s = w0.shape[0], actions.shape[0], self.num_states
        with torch.no_grad():
            rows = self.rows(x)  # (B,) in [0, S]; S is the all-zero row (the bias alone)
            # distinct (U,) ascending (an all-zero row last); where (B,): each row's place in it
            distinct, where = torch.unique(rows, sorted=True, return_inverse=True)
            blank = int(distinct[-1]) == s
            h = w0.index_select(1, distinct.clamp_max(s - 1)) + b0  # (K, U, out)
            if blank:
                h[:, -1] = b0[:, 0]
            hidden = []
            for w, bias in layers[1:-1]:
                hidden.append(torch.relu(h))
                h = torch.baddbmm(bias, hidden[-1], w)
            # The values transposed, (K, A, U): with few actions, (K, A, in) @ (K, in, U) is
            # several times cheaper than (K, U, in) @ (K, in, A), and so is its backward.
            w_t = layers[-1][0].transpose(1, 2).contiguous()  # (K, A, in)
            if len(layers) > 1:
                hidden.append(torch.relu(h))
                q_t = torch.baddbmm(layers[-1][1].transpose(1, 2), w_t, hidden[-1].transpose(1, 2))
            else:
                q_t = h.transpose(1, 2).contiguous()
            num_actions, u = q_t.shape[1], q_t.shape[2]
            taken = actions * u + where  # (B,): flat (action, state) in q_t
            q_sa = q_t.view(k, -1).index_select(1, taken)
            q_sa += self.prior.reshape(k, -1).index_select(1, rows * num_actions + actions)
            next_max = self.target_max.index_select(1, self.next_rows(xn))  # (K, B)
            y = batch.rewards + gamma * (1.0 - batch.terminated) * next_max
            # Backward by hand: d loss / d q_sa = (q_sa - y) w / B, scattered into (K, A, U).
            diff = q_sa - y
            sq = 0.5 * diff**2
            scale = diff * (1.0 / b)
            if weights is not None:
                sq = sq * weights
                scale = scale * weights
            loss = sq.mean(dim=1).sum()
            grad_t = torch.zeros_like(q_t).view(k, -1).index_add_(1, taken, scale).view_as(q_t)
            grads = []  # (weight, bias) gradients from the last layer back
            grad = grad_t.transpose(1, 2)  # (K, U, A)
            if len(layers) > 1:  # the last layer, in the transposed layout of its forward
                a = hidden.pop()
                grads.append(
                    (torch.bmm(grad_t, a).transpose(1, 2).contiguous(), grad_t.sum(2)[:, None])
                )
                grad = torch.ops.aten.threshold_backward(torch.bmm(grad, w_t), a, 0)
            for (w, _), a in zip(reversed(layers[1:-1]), reversed(hidden), strict=True):
                grads.append((torch.bmm(a.transpose(1, 2), grad), grad.sum(1, keepdim=True)))
                # relu's backward, as autograd computes it (zero where the output is not > 0)
                grad = torch.ops.aten.threshold_backward(torch.bmm(grad, w.transpose(1, 2)), a, 0)
            # The first layer is a look-up: its weight gradient is the distinct states' rows of
            # a zeroed dense (K, S, out) tensor, so a dense optimizer sees autograd's gradient.
            first = grad[:, :-1] if blank else grad  # the all-zero row has no weight row
            rows_written = distinct[:-1] if blank else distinct
            grads.append(
                (torch.zeros_like(w0).index_copy_(1, rows_written, first), grad.sum(1, True))
            )
            for (w, bias), (gw, gb) in zip(layers, reversed(grads), strict=True):
                w.grad, bias.grad = gw, gb
            return loss, y.std() if y.numel() > 1 else y.new_zeros(())
