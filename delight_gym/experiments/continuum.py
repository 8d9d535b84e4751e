"""Continuum-armed bandits: one agent of :mod:`delight_gym.agents.continuum` on a batch of
:class:`~delight_gym.envs.continuum.ContinuumBanditVectorEnv` instances (one per seed).

Widths are given at ``d = 1`` and scaled by ``√d`` (:func:`scaled_widths`), so that a bump
covers the same share of the cube's diameter at every ``d``. Instance ``i`` is seeded
``seed + i``; the agent draws from its own generators, seeded from ``seed`` and a salt, so
every agent sees the same instances.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from delight_gym.envs.continuum import (
    DEFAULT_NOISE,
    DEFAULT_NUM_BUMPS,
    GRID_BUMP_WIDTH,
    GRID_NEEDLE_WIDTH,
)
from delight_gym.experiments.bandit import (
    AGENT_SEED_SALT,
    BanditResult,
    check_batch_run,
    play_rounds,
)

__all__ = ["FOUND_REGRET", "needle_found", "run_continuum", "scaled_widths"]

#: A round's regret below this (expected reward above 0.6, the highest broad bump) is a round
#: in the needle's basin.
FOUND_REGRET = 0.4


def scaled_widths(dim: int, needle_width: float, bump_width: float) -> tuple[float, float]:
    """``(needle_width·√d, bump_width·√d)``: widths given at ``d = 1``, at dimension ``d``."""
    root = math.sqrt(dim)
    return needle_width * root, bump_width * root


def needle_found(regret: np.ndarray, last: float = 0.1) -> np.ndarray:
    """bool ``(seeds,)``: whether the mean of per-round ``regret`` ``(seeds, horizon)`` over the
    last ``last`` share of rounds is below :data:`FOUND_REGRET` (ended in the needle's basin)."""
    k = max(1, round(last * regret.shape[1]))
    return np.asarray(regret[:, -k:].mean(axis=1) < FOUND_REGRET)


def run_continuum(
    agent: str,
    dim: int,
    horizon: int,
    seeds: int,
    *,
    seed: int = 0,
    needle_width: float = GRID_NEEDLE_WIDTH,
    bump_width: float = GRID_BUMP_WIDTH,
    num_bumps: int = DEFAULT_NUM_BUMPS,
    noise: float = DEFAULT_NOISE,
    diagnostics: dict[str, Any] | None = None,
    **agent_kwargs: Any,
) -> BanditResult:
    """Run ``agent`` for ``horizon`` rounds on ``seeds`` continuum bandits of dimension ``dim``.

    Parameters
    ----------
    agent : str
        One of :data:`~delight_gym.agents.continuum.CONTINUUM_AGENTS` or
        :data:`~delight_gym.agents.botorch_continuum.BOTORCH_AGENTS` (BoTorch's fitted GP,
        :func:`~delight_gym.agents.botorch_continuum.run_botorch`, with its own keywords).
    dim, horizon, seeds : int
        ``d``, ``T`` and the number of instances.
    seed : int
        Instance ``i`` is seeded ``seed + i``.
    needle_width, bump_width : float
        Widths at ``d = 1``; the env gets them times ``√d``.
    num_bumps, noise :
        The environment's (:class:`~delight_gym.envs.continuum.ContinuumBanditEnv`).
    diagnostics : dict, optional
        Filled with DE's counts: ``explored`` and ``overridden`` per seed, ``sources``
        (overrides to a uniform, local, posterior-argmax pool member).
    **agent_kwargs
        Keywords of :class:`~delight_gym.agents.continuum.ContinuumAgent`; ``lengthscale``
        defaults to the scaled needle width, ``local_std`` to half of ``needle_width`` (the
        same for every agent).

    Returns
    -------
    BanditResult
        ``regret`` ``(seeds, horizon)``; ``actions`` holds each round's first coordinate.
    """
    from delight_gym.agents.continuum import ContinuumAgent
    from delight_gym.envs.continuum import ContinuumBanditVectorEnv

    horizon, seeds, seed = check_batch_run(horizon, seeds, seed)
    if agent.startswith("botorch-"):
        from delight_gym.agents.botorch_continuum import run_botorch

        regret, first, seconds = run_botorch(
            agent, dim, horizon, seeds, seed=seed, needle_width=needle_width,
            bump_width=bump_width, num_bumps=num_bumps, noise=noise, **agent_kwargs,
        )  # fmt: skip
        return BanditResult(agent, 0, regret, first, seconds, np.zeros(seeds, dtype=np.int64))
    needle, bump = scaled_widths(dim, needle_width, bump_width)
    envs = ContinuumBanditVectorEnv(
        seeds, dim=dim, num_bumps=num_bumps, bump_width=bump, needle_width=needle, noise=noise
    )
    agent_kwargs.setdefault("lengthscale", needle)
    agent_kwargs.setdefault("local_std", needle_width / 2.0)
    # One int seed: ContinuumAgent seeds both its generators with it.
    agent_seed = int(np.random.SeedSequence([seed, AGENT_SEED_SALT]).generate_state(1)[0])
    learner = ContinuumAgent(agent, seeds, dim, seed=agent_seed, noise=noise, **agent_kwargs)
    envs.reset(seed=seed)

    def play() -> tuple[np.ndarray, dict[str, Any]]:
        played = learner.act().astype(np.float32)  # the float32 action the env plays
        _, rewards, _, _, info = envs.step(played)
        learner.update(played.astype(np.float64), np.asarray(rewards, dtype=np.float64))
        return played[:, 0], info

    regret, first, seconds = play_rounds(play, seeds, horizon, action_dtype=np.float64)
    if diagnostics is not None:
        sources = learner.override_sources.tolist()
        diagnostics.update(
            explored=learner.explored_count.copy(),
            overridden=learner.override_count.copy(),
            sources=dict(zip(("uniform", "local", "posterior"), sources, strict=True)),
        )
    return BanditResult(agent, 0, regret, first, seconds, learner.override_count.copy())
