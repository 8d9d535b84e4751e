"""The one TD step of an ensemble of Q-heads with randomized priors and per-head targets.

Every head ``k`` regresses ``Q_k(s, a) = f_k(s, a) + β p_k(s, a)`` on the target
``y_k = r + γ (1 − terminated) max_b [Q^-_k(s', b) + β p_k(s', b)]`` of its own target network,
with the squared loss ``½ (Q_k − y_k)²`` averaged over the batch (weighted by the bootstrap
masks when given) and summed over the heads. :func:`ensemble_td_step` is the gradient step of
every ensemble of Q-heads in the package.
"""

from __future__ import annotations

from typing import NamedTuple

import torch

from delight_gym.posteriors.ensemble_inputs import Transitions
from delight_gym.posteriors.ensemble_network import EnsembleQNetwork

__all__ = ["TDStepStats", "ensemble_td_loss", "ensemble_td_step"]


class TDStepStats(NamedTuple):
    """What one TD step reports (0-d tensors).

    Attributes
    ----------
    loss : torch.Tensor
        The summed loss of the ``K`` heads before the step.
    target_std : torch.Tensor
        Standard deviation of the TD targets over the batch and the heads.
    """

    loss: torch.Tensor
    target_std: torch.Tensor


def ensemble_td_loss(
    network: EnsembleQNetwork, batch: Transitions, gamma: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """The heads' summed TD loss on a checked batch (with a graph) and the targets' std.

    Parameters
    ----------
    network : EnsembleQNetwork
        ``K`` heads (their targets and priors are read, never trained).
    batch : Transitions
        Checked and encoded, shared by every head or one batch per head.
    gamma : float
        Discount of the targets.

    Returns
    -------
    (torch.Tensor, torch.Tensor)
        The loss and the std of the TD targets (0-d; the std without a graph).
    """
    x, xn, actions = batch.observations, batch.next_observations, batch.actions
    k = network.num_heads
    b = actions.shape[-1]
    q = network.run_layers(x, network.trainable_layers())  # (K, B, A), with a graph
    with torch.no_grad():
        tables = network.tables_for(x) if xn.ndim == 1 else None
        if tables is not None:  # β p(x) and the targets at xn, read from the tables
            prior_s, next_q = tables.lookup(x, xn)
        else:
            frozen = network.frozen_layers()
            beta = network.prior_scale
            prior_s = beta * network.run_layers(x, [(w[k:], bb[k:]) for w, bb in frozen])
            # Targets and priors in one pass of the 2K frozen heads; per-head batches twice.
            per_head = xn.ndim == (2 if xn.dtype == torch.int64 else 3)
            both = network.run_layers(torch.cat([xn, xn]) if per_head else xn, frozen)  # (2K,B,A)
            next_q = both[:k] + beta * both[k:]
        y = batch.rewards + gamma * (1.0 - batch.terminated) * next_q.max(dim=-1).values  # (K, B)
    q_sa = (q + prior_s).gather(-1, actions.expand(k, b)[..., None])[..., 0]
    sq = 0.5 * (q_sa - y) ** 2
    if batch.masks is not None:
        sq = sq * batch.masks.T
    return sq.mean(dim=1).sum(), y.std() if y.numel() > 1 else y.new_zeros(())


def ensemble_td_step(
    network: EnsembleQNetwork,
    optimizer: torch.optim.Optimizer,
    batch: Transitions,
    gamma: float,
) -> TDStepStats:
    """One optimizer step of every head on a checked batch (the targets are not touched).

    A shared, non-empty batch of states on the CPU with state tables takes their path
    (:meth:`~delight_gym.posteriors.ensemble_tabular.StateTables.td_gradients`): the same
    numbers up to float32 rounding.

    Parameters
    ----------
    network : EnsembleQNetwork
    optimizer : torch.optim.Optimizer
        Over the network's trainable parameters.
    batch : Transitions
        Checked and encoded (nothing is checked here).
    gamma : float

    Returns
    -------
    TDStepStats
    """
    x = batch.observations
    tabular = batch.next_observations.ndim == 1 and x.device.type == "cpu" and x.shape[0] > 0
    tables = network.tables_for(x) if tabular else None
    if tables is not None:
        loss, target_std = tables.td_gradients(network.trainable_layers(), batch, gamma)
    else:
        loss, target_std = ensemble_td_loss(network, batch, gamma)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
    optimizer.step()
    return TDStepStats(loss.detach(), target_std)
