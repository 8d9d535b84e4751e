"""Continuum-armed bandits: one agent of :mod:`delight_gym.agents.continuum` on a batch of
:class:`~delight_gym.envs.continuum.ContinuumBanditVectorEnv` instances (one per seed).

:func:`run_continuum` plays ``horizon`` rounds and returns the per-round pseudo-regret.
Instance ``i`` is seeded ``seed + i``; the agent draws from its own generators, seeded from
``seed`` and a fixed salt, so two agents see the same instances.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from delight_gym.experiments.bandit import (
    AGENT_SEED_SALT,
    BanditResult,
    check_batch_run,
    play_rounds,
)

__all__ = ["run_continuum"]


def run_continuum(
    agent: str,
    dim: int,
    horizon: int,
    seeds: int,
    *,
    seed: int = 0,
    needle_width: float = 0.03,
    bump_width: float = 0.15,
    num_bumps: int = 5,
    noise: float = 0.1,
    **agent_kwargs: Any,
) -> BanditResult:
    """Run ``agent`` for ``horizon`` rounds on ``seeds`` continuum bandits of dimension ``dim``.

    Parameters
    ----------
    agent : str
        One of :data:`~delight_gym.agents.continuum.CONTINUUM_AGENTS`.
    dim, horizon, seeds : int
        ``d``, ``T`` and the number of instances.
    seed : int
        Instance ``i`` is seeded ``seed + i``.
    needle_width, bump_width, num_bumps, noise :
        The environment's (:class:`~delight_gym.envs.continuum.ContinuumBanditEnv`).
    **agent_kwargs
        Keywords of :class:`~delight_gym.agents.continuum.ContinuumAgent`.

    Returns
    -------
    BanditResult
        ``regret`` ``(seeds, horizon)``; ``actions`` holds each round's first coordinate.
    """
    from delight_gym.agents.continuum import ContinuumAgent
    from delight_gym.envs.continuum import ContinuumBanditVectorEnv

    horizon, seeds, seed = check_batch_run(horizon, seeds, seed)
    envs = ContinuumBanditVectorEnv(
        seeds,
        dim=dim,
        num_bumps=num_bumps,
        bump_width=bump_width,
        needle_width=needle_width,
        noise=noise,
    )
    agent_seed = int(np.random.SeedSequence([seed, AGENT_SEED_SALT]).generate_state(1)[0])
    learner = ContinuumAgent(agent, seeds, dim, seed=agent_seed, noise=noise, **agent_kwargs)
    envs.reset(seed=seed)

    def play() -> tuple[np.ndarray, dict[str, Any]]:
        played = learner.act().astype(np.float32)
        _, rewards, _, _, info = envs.step(played)
        learner.update(played.astype(np.float64), np.asarray(rewards, dtype=np.float64))
        return played[:, 0], info

    regret, first, seconds = play_rounds(play, seeds, horizon, action_dtype=np.float64)
    return BanditResult(agent, 0, regret, first, seconds, learner.override_count.copy())
