"""Run contextual-bandit agents on batches of ``WheelBandit-v0`` / ``NeuralBandit-v0``.

Instance ``i`` of a run with base ``seed`` is the env reset with ``seed + i`` (every agent
faces the same instances and contexts); the agent's row ``i`` is seeded from ``seed + i`` too,
through its own salted generator. Regret is pseudo-regret under each round's context. DE's gate
price is ``gate_price × reward_scale`` of the env. :func:`relative_to_uniform` is the
showdown's metric. torch and the agents are imported when a run starts.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from delight_gym._checks import check_positive_int, check_would_fit
from delight_gym.envs.contextual import (
    ContextualBanditVectorEnv,
    NeuralBanditVectorEnv,
    WheelBanditVectorEnv,
)
from delight_gym.experiments.bandit import BanditResult, check_batch_run, play_rounds

if TYPE_CHECKING:
    import pandas as pd
    import torch

__all__ = ["relative_to_uniform", "run_contextual", "run_neural", "run_wheel"]


def run_contextual(
    agent: str,
    envs: ContextualBanditVectorEnv,
    horizon: int,
    *,
    per_arm: bool,
    seed: int = 0,
    device: str | torch.device | None = None,
    callback: Callable[[int], object] | None = None,
    **agent_kwargs: Any,
) -> BanditResult:
    """Play ``agent`` for ``horizon`` rounds on every sub-env of ``envs``.

    Parameters
    ----------
    agent : str
        A name of :data:`~delight_gym.agents.contextual.CONTEXTUAL_AGENTS`.
    envs : ContextualBanditVectorEnv
        A wheel or neural vector env (reset here with ``seed``).
    horizon : int
        Rounds ``T``.
    per_arm : bool
        One model per arm on the context (the wheel) or one shared model on every arm's row
        (the neural bandit).
    seed : int
        Sub-env ``i`` and the agent's row ``i`` are seeded from ``seed + i``.
    device : str or torch.device, optional
        Where the agent lives.
    callback : Callable[[int], object], optional
        Called with 1 after each round (progress bars).
    **agent_kwargs
        ``half_life``, ``gate_price`` (per unit of ``envs.reward_scale``), ``surprisal_cap``
        and the posterior's keywords.

    Returns
    -------
    BanditResult
        With DE's override rounds per seed (zeros for the other agents).
    """
    import torch

    from delight_gym.agents.contextual import make_contextual_agent

    horizon, _, seed = check_batch_run(horizon, envs.num_envs, seed)
    check_would_fit(  # the per-round regret and actions
        16 * envs.num_envs * horizon, f"horizon={horizon} (x {envs.num_envs} seeds)"
    )
    obs, _ = envs.reset(seed=seed)
    n, k = envs.num_envs, envs.num_arms
    bandit = make_contextual_agent(
        agent,
        n,
        k,
        int(obs.shape[-1]),
        per_arm=per_arm,
        seed=seed,
        device=device,
        reward_scale=envs.reward_scale,
        **agent_kwargs,
    )

    def play() -> tuple[np.ndarray, dict[str, Any]]:
        nonlocal obs
        # The agents' (batch, K, d) inputs: the wheel's context repeated for every arm, or the
        # neural bandit's rows as they are.
        x = torch.from_numpy(obs)
        inputs = x.unsqueeze(1).expand(x.shape[0], k, x.shape[1]) if per_arm else x
        a = bandit.act(inputs)
        a_np = a.cpu().numpy()
        obs, rewards, _, _, info = envs.step(a_np)
        bandit.update(inputs, a, torch.from_numpy(rewards))
        return a_np, info

    regret, actions, seconds = play_rounds(play, n, horizon, callback)
    envs.close()
    overrides = bandit.overrides.cpu().numpy()
    return BanditResult(agent, k, regret, actions, seconds, overrides)


#: The env keywords :func:`run_wheel` passes to the wheel bandit (the rest go to the run).
WHEEL_ENV_KEYS = ("noise", "mean_safe", "mean_other", "mean_large")
#: The env keywords :func:`run_neural` passes to the neural bandit.
NEURAL_ENV_KEYS = ("dim", "context_dim", "noise")


def _split(kwargs: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    """Pop the env keywords ``keys`` out of ``kwargs`` (absent ones keep the env's defaults)."""
    return {k: kwargs.pop(k) for k in keys if k in kwargs}


def run_wheel(agent: str, delta: float, horizon: int, seeds: int, **kwargs: Any) -> BanditResult:
    """:func:`run_contextual` on ``seeds`` wheel bandits: ``delta`` and :data:`WHEEL_ENV_KEYS`
    go to :class:`~delight_gym.envs.contextual.WheelBanditVectorEnv`, the rest to the run."""
    env_kwargs = _split(kwargs, WHEEL_ENV_KEYS)
    envs = WheelBanditVectorEnv(check_positive_int(seeds, "seeds"), delta=delta, **env_kwargs)
    return run_contextual(agent, envs, horizon, per_arm=True, **kwargs)


def run_neural(
    agent: str, arms: int, reward: str, horizon: int, seeds: int, **kwargs: Any
) -> BanditResult:
    """:func:`run_contextual` on ``seeds`` neural bandits: ``arms``, ``reward`` and
    :data:`NEURAL_ENV_KEYS` go to :class:`~delight_gym.envs.contextual.NeuralBanditVectorEnv`,
    the rest to the run."""
    env_kwargs = _split(kwargs, NEURAL_ENV_KEYS)
    envs = NeuralBanditVectorEnv(
        check_positive_int(seeds, "seeds"), num_arms=arms, reward=reward, **env_kwargs
    )
    return run_contextual(agent, envs, horizon, per_arm=False, **kwargs)


def relative_to_uniform(
    summary: pd.DataFrame, setting_columns: list[str], baseline: str = "uniform"
) -> pd.DataFrame:
    """The showdown's metric: each agent's mean cumulative regret divided by ``baseline``'s
    on the same setting (so ``uniform`` is 1).

    Parameters
    ----------
    summary : pandas.DataFrame
        A ``summary.csv`` frame (``agent``, the setting columns, ``regret_mean``,
        ``regret_se``).
    setting_columns : list of str
        The columns that identify a setting (``["delta", "noise"]``).
    baseline : str
        The agent whose regret is the unit.

    Returns
    -------
    pandas.DataFrame
        ``agent``, the setting columns, ``relative_regret`` and ``relative_se`` (the agent's
        s.e. over the baseline's mean); settings without the baseline are dropped.
    """
    base = summary[summary["agent"] == baseline][[*setting_columns, "regret_mean"]]
    base = base.rename(columns={"regret_mean": "_baseline"})
    merged = summary.merge(base, on=setting_columns, how="inner")
    out = merged[["agent", *setting_columns]].copy()
    out["relative_regret"] = merged["regret_mean"] / merged["_baseline"]
    out["relative_se"] = merged["regret_se"] / merged["_baseline"]
    return out.reset_index(drop=True)
