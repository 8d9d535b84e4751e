"""Run linear-bandit agents on batches of ``LinearBandit-v0`` instances (pseudo-regret).

Seeding as for the Bernoulli runs (:mod:`delight_gym.experiments.bandit`); regret is
``Σ_t (max_a φ(a)ᵀθ* − φ(A_t)ᵀθ*)``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from delight_gym._checks import check_positive_float, check_positive_int
from delight_gym.agents.linear import make_linear_agent
from delight_gym.envs.linear import LinearBanditVectorEnv
from delight_gym.experiments.bandit import (
    AGENT_SEED_SALT,
    BanditResult,
    check_batch_run,
    play_rounds,
)

__all__ = ["run_linear"]


def run_linear(
    agent: str,
    arms: int,
    dim: int,
    noise: float,
    horizon: int,
    seeds: int,
    *,
    seed: int = 0,
    device: str | torch.device | None = None,
    dtype: torch.dtype = torch.float64,
    callback: Callable[[int], object] | None = None,
    **agent_kwargs: Any,
) -> BanditResult:
    """Run ``agent`` for ``horizon`` rounds on ``seeds`` independent linear bandits.

    Parameters
    ----------
    agent : str
        ``delight``, ``thompson``, ``egreedy``, ``greedy`` or ``ucb``.
    arms, dim, noise
        ``K``, ``D`` and the reward noise ``σ`` (the agent's known σ).
    horizon, seeds, seed : int
        rounds, instances, base seed (instance ``i``: ``seed + i``).
    device, dtype
        where the agent's posterior lives.
    callback : Callable[[int], object] | None
        called with 1 after each round (progress bars).
    **agent_kwargs
        ``half_life``, ``gate_price``, ``surprisal_cap``, ``prior_precision``.

    Returns
    -------
    BanditResult
    """
    num_arms = check_positive_int(arms, "arms")
    dim = check_positive_int(dim, "dim")
    noise = check_positive_float(noise, "noise")
    horizon, seeds, seed = check_batch_run(horizon, seeds, seed)
    env = LinearBanditVectorEnv(seeds, num_arms=num_arms, dim=dim, noise=noise)
    env.reset(seed=seed)
    bandit = make_linear_agent(
        agent,
        seeds,
        num_arms,
        dim,
        noise=noise,
        seed=[seed, AGENT_SEED_SALT],
        device=device,
        dtype=dtype,
        **agent_kwargs,
    )
    # An instance's arm features are fixed: one tensor on the agent's device for every round.
    features = torch.as_tensor(np.array(env.features), dtype=dtype, device=bandit.device)

    def play() -> tuple[np.ndarray, dict[str, Any]]:
        a = bandit.act(features)
        a_np = a.cpu().numpy()
        _, rewards, _, _, info = env.step(a_np)
        bandit.update(a, rewards)
        return a_np, info

    regret, actions, seconds = play_rounds(play, seeds, horizon, callback)
    env.close()
    overrides = bandit.gate_rounds.cpu().numpy()
    return BanditResult(agent, num_arms, regret, actions, seconds, overrides)
