"""Dense reference planner for the tabular MDP tests: an independent check of the package's
sparse value iteration (:func:`delight_gym.posteriors.tabular.value_iteration`)."""

from __future__ import annotations

import torch


def dense_value_iteration(
    rewards: torch.Tensor, transitions: torch.Tensor, horizon: int
) -> torch.Tensor:
    """``Q_h = r + P V_{h+1}`` with a dense ``P`` (``O(S²A)`` per backup), ``V_H = 0``.

    Parameters
    ----------
    rewards : torch.Tensor
        ``(B, S, A)``.
    transitions : torch.Tensor
        ``(B, S, A, S)``, rows summing to one.
    horizon : int
        ``H >= 1``.

    Returns
    -------
    torch.Tensor
        ``Q`` of shape ``(H, B, S, A)``.
    """
    q = torch.empty((horizon, *rewards.shape), dtype=rewards.dtype, device=rewards.device)
    v = torch.zeros(rewards.shape[:2], dtype=rewards.dtype, device=rewards.device)
    for h in range(horizon - 1, -1, -1):
        q[h] = rewards + torch.einsum("bsat,bt->bsa", transitions, v)
        v = q[h].amax(dim=-1)
    return q
