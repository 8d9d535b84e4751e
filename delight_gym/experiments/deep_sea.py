"""Run tabular MDP agents on batches of DeepSea instances (per-episode regret).

Seed ``i`` of a run with base ``seed`` plays the instance of
``DeepSeaVectorEnv(...).reset(seed=seed + i)``, so every agent faces the same instances; the
agents see the state index (``S = N²``), ``A = 2`` and ``H = N``. An episode's regret is
``optimal_return − denoised_return``. Reward priors (``agent_kwargs`` override them): Beta(1, 1)
on rewards rescaled from ``[−0.01/N, 1]`` (deterministic), a Normal model with known noise
``σ = 1`` (stochastic).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from delight_gym._checks import check_positive_int
from delight_gym.agents.mdp import MDP_AGENTS, make_mdp_agent
from delight_gym.envs.deep_sea import DeepSeaVectorEnv
from delight_gym.experiments.bandit import AGENT_SEED_SALT, check_batch_run

__all__ = ["DeepSeaAgentResult", "DeepSeaResult", "run_deep_sea", "run_deep_sea_agent"]


@dataclass
class DeepSeaResult:
    """Output of :func:`run_deep_sea`, keyed by agent name.

    Attributes
    ----------
    size, seconds
        ``N``; wall-clock time per agent.
    regret
        per-episode regret, ``(episodes, seeds)`` float64 arrays.
    first_success, overrides
        per seed: the 0-based episode of the first treasure (``-1`` if never); DE's
        overrides drawn with a non-empty gate (zeros for the other agents).
    """

    size: int
    regret: dict[str, np.ndarray] = field(default_factory=dict)
    first_success: dict[str, np.ndarray] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    overrides: dict[str, np.ndarray] = field(default_factory=dict)

    def cumulative(self, agent: str) -> np.ndarray:
        """Cumulative regret ``(episodes, seeds)``."""
        return np.cumsum(self.regret[agent], axis=0)


@dataclass
class DeepSeaAgentResult:
    """One agent's run (:func:`run_deep_sea_agent`; the runner's cell protocol).

    Attributes
    ----------
    regret, seconds
        per-episode regret, ``(seeds, episodes)``; wall-clock time.
    overrides, first_success
        per seed: DE's gated overrides (zeros for the other agents), the 1-based episode of
        the first treasure (0 if never).
    """

    regret: np.ndarray
    seconds: float
    overrides: np.ndarray
    first_success: np.ndarray

    @property
    def cumulative(self) -> np.ndarray:
        """Cumulative regret ``(seeds, episodes)``."""
        return np.cumsum(self.regret, axis=1)


def run_deep_sea(
    size: int,
    episodes: int,
    seeds: int,
    agents: str | tuple[str, ...] | list[str] = MDP_AGENTS,
    *,
    seed: int = 0,
    deterministic: bool = True,
    device: str | torch.device = "cpu",
    progress: bool = True,
    **agent_kwargs: Any,
) -> DeepSeaResult:
    """Run each agent for ``episodes`` episodes on ``seeds`` DeepSea instances of size ``N``.

    Parameters
    ----------
    size, episodes, seeds : int
        ``N`` (the horizon and the grid side), episodes per seed, instances (one batch).
    agents : str | tuple[str, ...] | list[str]
        names from :data:`~delight_gym.agents.mdp.MDP_AGENTS`.
    seed : int
        base seed of the instances and the agents.
    deterministic : bool
        bsuite's deterministic (default) or stochastic variant.
    device, progress : str | torch.device, bool
        where the agents' posteriors live; show a tqdm bar per agent.
    agent_kwargs
        passed to :func:`~delight_gym.agents.mdp.make_mdp_agent`.

    Returns
    -------
    DeepSeaResult
    """
    n = check_positive_int(size, "size")
    num_episodes, batch, seed = check_batch_run(episodes, seeds, seed, horizon_name="episodes")
    names = (agents,) if isinstance(agents, str) else tuple(agents)
    for name in names:
        if name not in MDP_AGENTS:
            raise ValueError(f"agents must be among {list(MDP_AGENTS)}, got {name!r}")
    result = DeepSeaResult(size=n)
    for name in names:
        one = run_deep_sea_agent(
            name,
            n,
            num_episodes,
            batch,
            seed=seed,
            deterministic=deterministic,
            device=device,
            progress=progress,
            **agent_kwargs,
        )
        result.seconds[name] = one.seconds
        result.regret[name] = one.regret.T
        result.first_success[name] = one.first_success - 1
        result.overrides[name] = one.overrides
    return result


def play_deep_sea(
    agent: str,
    size: int,
    seeds: int,
    episode_done: Callable[[dict[str, Any]], bool],
    *,
    seed: int,
    deterministic: bool = True,
    device: str | torch.device = "cpu",
    mapping_seed: list[int] | None = None,
    **agent_kwargs: Any,
) -> Any:
    """Play tabular ``agent`` on ``seeds`` DeepSea instances of size ``N`` (reset with ``seed``)
    until ``episode_done(final_info)`` of a finished episode is false; returns the agent. The
    episode loop of :func:`run_deep_sea_agent` and of the bsuite families' tabular runs."""
    envs = DeepSeaVectorEnv(
        num_envs=seeds, size=size, deterministic=deterministic, mapping_seed=mapping_seed
    )
    obs, _ = envs.reset(seed=seed)
    kwargs: dict[str, Any] = (
        {"reward_range": (-envs.move_cost, 1.0)}
        if deterministic
        else {"reward_model": "normal", "reward_noise": 1.0}
    )
    kwargs.update(agent_kwargs)
    model = make_mdp_agent(
        agent, seeds, size * size, 2, size, seed=[seed, AGENT_SEED_SALT], device=device, **kwargs
    )
    go_on = True
    while go_on:
        model.begin_episode()
        # The observation is a one-hot N x N grid: the state index is its argmax.
        states = obs.reshape(seeds, -1).argmax(axis=1)
        for h in range(size):
            actions = model.act(torch.as_tensor(states, device=model.device), h)
            obs, rewards, _, _, infos = envs.step(actions.cpu().numpy())
            next_states = obs.reshape(seeds, -1).argmax(axis=1)
            model.observe(
                torch.as_tensor(states, device=model.device),
                actions,
                torch.as_tensor(rewards, device=model.device),
                # The last step has no next state: the episode ends after N steps.
                None if h == size - 1 else torch.as_tensor(next_states, device=model.device),
                h,
            )
            states = next_states
        # DeepSea ends every episode after N steps: the vector env has already reset, and
        # ``obs`` is the next episode's first state.
        go_on = episode_done(infos["final_info"])
    return model


def run_deep_sea_agent(
    agent: str,
    size: int,
    horizon: int,
    seeds: int,
    *,
    seed: int = 0,
    deterministic: bool = True,
    device: str | torch.device = "cpu",
    progress: bool = False,
    **agent_kwargs: Any,
) -> DeepSeaAgentResult:
    """The ``deepsea`` family's run function: :func:`run_deep_sea` for one agent (``horizon``
    its ``episodes``)."""
    if agent not in MDP_AGENTS:
        raise ValueError(f"agents must be among {list(MDP_AGENTS)}, got {agent!r}")
    n = check_positive_int(size, "size")
    num_episodes, batch, seed = check_batch_run(horizon, seeds, seed, horizon_name="episodes")
    regret = np.zeros((num_episodes, batch))
    first = np.full(batch, -1, dtype=np.int64)
    bar: Any = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=num_episodes, desc=f"deepsea N={n} {agent}", leave=False)
    episode = 0

    def record(final: dict[str, Any]) -> bool:
        nonlocal episode
        ret = np.asarray(final["denoised_return"], dtype=np.float64)
        regret[episode] = np.asarray(final["optimal_return"], dtype=np.float64) - ret
        first[(first < 0) & (ret > 0.5)] = episode
        if bar is not None:
            bar.update(1)
        episode += 1
        return episode < num_episodes

    start = time.perf_counter()
    model = play_deep_sea(
        agent, n, batch, record, seed=seed, deterministic=deterministic, device=device,
        **agent_kwargs,
    )  # fmt: skip
    if bar is not None:
        bar.close()
    seconds = time.perf_counter() - start
    count = getattr(model, "override_count", None)  # DE's counter of gated overrides
    overrides = np.zeros(batch, np.int64) if count is None else count.cpu().numpy()
    return DeepSeaAgentResult(regret.T, seconds, overrides, first + 1)
