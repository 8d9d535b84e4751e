"""A fast finite-horizon planner for batches of tabular MDPs (torch): :class:`TabularModel` and
its value iteration."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

__all__ = ["TabularModel", "value_iteration"]


@dataclass
class TabularModel:
    """One MDP per seed, sparse: ``P(·|s, a)·V = Σ_k weight_k·V[succ_k] + uniform·mean(V)``.

    Attributes
    ----------
    reward
        Mean reward ``r(s, a)``, ``(B, S, A)``.
    succ
        Successors, int64 ``(B, S, A, J)``; ``None``: dense, ``weight`` indexed by state.
    weight
        Transition weights, ``(B, S, A, J)`` (padding slots 0).
    uniform
        Weight on the uniform distribution over all states, ``(B, S, A)``.
    extra
        Optional ``(pair, succ, weight)`` overflow entries, ``(E,)`` each, indexing the flat
        ``(B·S·A)`` pairs and ``(B·S)`` states.
    """

    reward: torch.Tensor
    succ: torch.Tensor | None
    weight: torch.Tensor
    uniform: torch.Tensor
    extra: tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None = None

    def dense_transitions(self) -> torch.Tensor:
        """The full transition tensor ``(B, S, A, S)``."""
        b, s, a = self.reward.shape
        dense = self.uniform[..., None].expand(b, s, a, s) / s
        if self.succ is None:
            return dense + self.weight
        out = dense.clone().scatter_add_(-1, self.succ, self.weight)
        if self.extra is not None:
            pair, succ, weight = self.extra
            seed = pair // (s * a)
            flat = pair * s + (succ - seed * s)
            out.view(-1).index_add_(0, flat, weight)
        return out


def value_iteration(
    model: TabularModel, horizon: int, first_step: int = 0, out: torch.Tensor | None = None
) -> torch.Tensor:
    """Finite-horizon optimal ``Q_h`` for ``h = first_step..horizon-1`` (``V_horizon = 0``),
    ``O(S·A·J)`` per seed and backup.

    Parameters
    ----------
    model : TabularModel
    horizon : int
        ``H >= 1`` (the posterior's, checked when it was built).
    first_step : int
        The first step wanted; only the backups ``h ≥ first_step`` are done.
    out : torch.Tensor, optional
        A contiguous buffer of the result's shape, dtype and device.

    Returns
    -------
    torch.Tensor
        ``(H - first_step, B, S, A)``; ``Q[i]`` is ``Q_{first_step + i}``.
    """
    h_total = horizon
    if not 0 <= first_step < h_total:
        raise ValueError(f"first_step must lie in [0, {h_total}), got {first_step}")
    b, s, a = model.reward.shape
    kw: dict[str, Any] = {"dtype": model.reward.dtype, "device": model.reward.device}
    shape = (h_total - first_step, b, s, a)
    q = torch.empty(shape, **kw) if out is None else out
    if out is not None and (
        (tuple(out.shape), out.dtype, out.device) != (shape, kw["dtype"], kw["device"])
        or not out.is_contiguous()
    ):
        raise ValueError(f"out must be a contiguous {kw['dtype']} tensor of shape {shape}")
    q[-1] = model.reward
    if h_total - 1 == first_step:
        return q
    v = torch.empty((b, s), **kw)
    v_mean = torch.empty((b, 1), **kw)
    # Backups write into preallocated buffers: fresh tensors cost about as much as the maths.
    if model.succ is None:
        dense_w = model.weight
    else:
        j = model.succ.shape[-1]
        # Slot-major layout (B, J, S, A): the sum over slots runs over contiguous blocks.
        index = model.succ.permute(0, 3, 1, 2).reshape(b, j * s * a)
        weight = model.weight.permute(0, 3, 1, 2).contiguous()
        gathered = torch.empty((b, j * s * a), **kw)
    uniform = model.uniform
    for h in range(h_total - 2, first_step - 1, -1):
        q_next = q[h + 1 - first_step]
        _max_action(q_next, v)
        torch.mean(v, dim=1, keepdim=True, out=v_mean)
        qh = q[h - first_step]
        if model.succ is None:
            qh.copy_(torch.einsum("bsat,bt->bsa", dense_w, v))
        elif j == 0:
            qh.zero_()
        else:
            torch.gather(v, 1, index, out=gathered)
            g4 = gathered.view(b, j, s, a)
            if j == 1:
                torch.mul(g4[:, 0], weight[:, 0], out=qh)
            else:
                g4.mul_(weight)
                torch.sum(g4, dim=1, out=qh)
        qh.add_(model.reward)
        qh.addcmul_(uniform, v_mean[:, :, None])
        if model.extra is not None:
            e_pair, e_succ, e_weight = model.extra
            qh.view(-1).index_add_(0, e_pair, v.view(-1).index_select(0, e_succ) * e_weight)
    return q


def _max_action(q: torch.Tensor, out: torch.Tensor) -> None:
    if q.shape[-1] == 2:
        torch.maximum(q[..., 0], q[..., 1], out=out)
    else:
        torch.amax(q, dim=-1, out=out)
