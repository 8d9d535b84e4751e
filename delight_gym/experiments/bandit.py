"""Run bandit agents on batches of Bernoulli bandit instances and measure pseudo-regret.

Seed ``i`` of a run with base ``seed`` plays the ``BernoulliBandit-v0`` instance of
``reset(seed=seed + i)``, so every agent faces the same instances (paired comparisons); the
agent's own generator is seeded with ``[seed, AGENT_SEED_SALT]``. Regret is pseudo-regret,
``Σ_t (max_a μ_a − μ_{A_t})``, from the env's ``info``, never from the noisy rewards.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from delight_gym._checks import check_nonnegative_int, check_positive_int
from delight_gym.agents.bandits import make_bandit_agent
from delight_gym.agents.dense import make_dense_bandit_agent
from delight_gym.envs.bandits import BernoulliBanditVectorEnv
from delight_gym.envs.lazy import LazyBernoulliBanditVectorEnv

__all__ = ["AGENT_SEED_SALT", "BanditResult", "run_bernoulli"]

#: Second word of the agent generator's seed, keeping it apart from the environments' seeds.
AGENT_SEED_SALT = 2026

#: ``env="auto"`` switches to the lazily drawn instances above this many arms.
LAZY_ARMS_THRESHOLD = 100_000


@dataclass(frozen=True)
class BanditResult:
    """Per-step pseudo-regret of one agent on a batch of instances.

    Attributes
    ----------
    agent, num_arms
        agent name, ``K``.
    regret, actions
        per-step pseudo-regret and arms played, ``(seeds, horizon)``.
    seconds, overrides
        wall-clock time of the run; per seed, the rounds where DE's override fired with a
        non-empty gate (zeros for the other agents).
    """

    agent: str
    num_arms: int
    regret: np.ndarray
    actions: np.ndarray
    seconds: float
    overrides: np.ndarray

    @property
    def cumulative(self) -> np.ndarray:
        """Cumulative pseudo-regret, shape ``(seeds, horizon)``."""
        return np.cumsum(self.regret, axis=1)


def run_bernoulli(
    agent: str,
    arms: int,
    horizon: int,
    seeds: int,
    *,
    seed: int = 0,
    means: np.ndarray | None = None,
    callback: Callable[[int], object] | None = None,
    dense: bool = False,
    env: str = "auto",
    **agent_kwargs: Any,
) -> BanditResult:
    """Run ``agent`` for ``horizon`` rounds on ``seeds`` independent Bernoulli bandits.

    Parameters
    ----------
    agent : str
        ``delight``, ``thompson``, ``egreedy``, ``greedy`` or ``ucb``.
    arms, horizon, seeds : int
        ``K``, rounds ``T`` and independent instances (one batch).
    seed : int
        base seed; instance ``i`` uses environment seed ``seed + i``.
    means : np.ndarray | None
        optional fixed arm means, shape ``(seeds, K)`` or ``(K,)``.
    callback : Callable[[int], object] | None
        called with the number of rounds just completed (for progress bars).
    dense : bool
        use the dense reference agents of :mod:`delight_gym.agents.dense` instead.
    env : str
        ``"eager"`` (instance ``i`` is ``BernoulliBandit-v0``'s with seed ``seed + i``),
        ``"lazy"`` (:class:`~delight_gym.envs.lazy.LazyBernoulliBanditVectorEnv`: the same
        instances in distribution, memory independent of ``K``) or ``"auto"`` (lazy above
        :data:`LAZY_ARMS_THRESHOLD` arms).
    **agent_kwargs
        passed to the agent (``half_life``, ``gate_price``, ...).

    Returns
    -------
    BanditResult
    """
    num_arms = check_positive_int(arms, "arms")
    horizon, seeds, seed = check_batch_run(horizon, seeds, seed)
    if env not in ("auto", "eager", "lazy"):
        raise ValueError(f"env must be 'auto', 'eager' or 'lazy', got {env!r}")
    # "auto" keeps the eager instances (exactly BernoulliBandit-v0's) while K means fit easily.
    lazy = env == "lazy" or (env == "auto" and means is None and num_arms > LAZY_ARMS_THRESHOLD)
    if lazy and means is not None:
        raise ValueError("means cannot be given with env='lazy'")
    bandits: BernoulliBanditVectorEnv | LazyBernoulliBanditVectorEnv
    if lazy:
        bandits = LazyBernoulliBanditVectorEnv(seeds, num_arms=num_arms)
    else:
        bandits = BernoulliBanditVectorEnv(seeds, num_arms=num_arms, means=means)
    bandits.reset(seed=seed)
    make = make_dense_bandit_agent if dense else make_bandit_agent
    bandit = make(agent, seeds, num_arms, seed=[seed, AGENT_SEED_SALT], **agent_kwargs)
    overrides = np.zeros(seeds, dtype=np.int64)

    def play() -> tuple[np.ndarray, dict[str, Any]]:
        nonlocal overrides
        a = bandit.act()
        _, rewards, _, _, info = bandits.step(a)
        bandit.update(a, rewards)
        if "overridden" in bandit.last_info:  # only DE reports overrides
            overrides += bandit.last_info["overridden"]
        return a, info

    regret, actions, seconds = play_rounds(play, seeds, horizon, callback)
    bandits.close()
    return BanditResult(agent, num_arms, regret, actions, seconds, overrides)


def check_batch_run(
    horizon: int, seeds: int, seed: int, *, horizon_name: str = "horizon"
) -> tuple[int, int, int]:
    """``horizon`` (named ``horizon_name`` in errors) and ``seeds`` positive, ``seed``
    non-negative, as ints; a ``TypeError``/``ValueError`` naming the bad one."""
    return (
        check_positive_int(horizon, horizon_name),
        check_positive_int(seeds, "seeds"),
        check_nonnegative_int(seed, "seed"),
    )


def play_rounds(
    play: Callable[[], tuple[np.ndarray, dict[str, Any]]],
    seeds: int,
    horizon: int,
    callback: Callable[[int], object] | None = None,
    *,
    action_dtype: type[np.generic] = np.int64,
) -> tuple[np.ndarray, np.ndarray, float]:
    """``horizon`` rounds of a batch of ``seeds`` bandits: each ``play()`` acts, steps, learns
    and returns the actions to record ``(seeds,)`` and the step's info (with ``"regret"``);
    ``callback(1)`` after each. Returns the per-round regret and actions ``(seeds, horizon)``
    and the seconds the rounds took."""
    regret = np.empty((seeds, horizon))
    actions = np.empty((seeds, horizon), dtype=action_dtype)
    start = time.perf_counter()
    for t in range(horizon):
        a, info = play()
        regret[:, t] = info["regret"]
        actions[:, t] = a
        if callback is not None:
            callback(1)
    return regret, actions, time.perf_counter() - start
