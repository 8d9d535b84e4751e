"""Bernoulli bandits with arm means drawn lazily: memory grows with the arms pulled, not ``K``.

The instances are :class:`~delight_gym.envs.bandits.BernoulliBanditVectorEnv`'s *in
distribution* (not seed for seed): ``μ* ~ Beta(K, 1)`` is drawn at reset, and an arm pulled
for the first time is the best one with probability ``1/(arms not yet revealed)``, else gets a
``U(0, μ*)`` mean. Exact for any agent that does not see unobserved means; so is the regret.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv

from delight_gym._checks import check_action_batch, check_positive_int
from delight_gym.envs._base import (
    PerEnvGenerators,
    VectorStep,
    check_reset_options,
    pull_info,
    set_vector_spaces,
    vector_step_infos,
    zero_final_obs,
)

__all__ = ["LazyBernoulliBanditVectorEnv"]


class LazyBernoulliBanditVectorEnv(PerEnvGenerators, VectorEnv):  # type: ignore[misc]
    """``num_envs`` independent ``K``-armed Bernoulli bandits with lazily drawn ``U(0,1)`` means.

    The interface of :class:`~delight_gym.envs.bandits.BernoulliBanditVectorEnv` (seeding,
    spaces, infos, ``SAME_STEP``), but no ``means`` array: ``revealed_means(i)`` returns the
    means revealed so far in sub-env ``i``. Unlike the eager env, every ``reset`` draws new
    instances.

    Parameters
    ----------
    num_envs : int
        number of independent instances.
    num_arms : int
        ``K >= 1`` (any size).
    """

    metadata: dict[str, Any] = {"render_modes": [], "autoreset_mode": AutoresetMode.SAME_STEP}  # noqa: RUF012

    def __init__(self, num_envs: int, num_arms: int = 10) -> None:
        self.num_envs = check_positive_int(num_envs, "num_envs")
        self.num_arms = check_positive_int(num_arms, "num_arms")
        set_vector_spaces(self, spaces.Discrete(self.num_arms), spaces.Discrete(1))
        self._init_generators()
        self._has_reset = False
        self._best = np.zeros(self.num_envs)
        self._revealed: list[dict[int, float]] = []
        self._best_found = np.zeros(self.num_envs, dtype=bool)

    @property
    def optimal_expected_reward(self) -> np.ndarray:
        """``μ*`` of every sub-env, shape ``(num_envs,)``."""
        self._require_reset()
        return self._best.copy()

    def revealed_means(self, index: int) -> dict[int, float]:
        """The means revealed so far in sub-env ``index``, as ``{arm: mean}``."""
        self._require_reset()
        return dict(self._revealed[index])

    def _require_reset(self) -> None:
        if not self._has_reset:
            raise RuntimeError("call reset() before step() or reading the instance")

    def reset(
        self,
        *,
        seed: int | list[int | None] | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Draw new instances (every reset of the lazy env draws afresh)."""
        check_reset_options(options, allowed=frozenset())
        self._apply_seeds(self._per_env_seeds(seed))
        self._has_reset = True
        rngs = self._generators()
        # The largest of K uniforms is U^(1/K) ~ Beta(K, 1): one draw per sub-env.
        self._best = np.array([rng.random() ** (1.0 / self.num_arms) for rng in rngs])
        self._revealed = [{} for _ in range(self.num_envs)]
        self._best_found = np.zeros(self.num_envs, dtype=bool)
        return np.zeros(self.num_envs, dtype=np.int64), {}

    def _mean(self, i: int, arm: int) -> float:
        """Arm ``arm``'s mean in sub-env ``i``, drawn at its first pull."""
        revealed = self._revealed[i]
        mean = revealed.get(arm)
        if mean is None:
            rng = self._rng(i)
            # The best arm is among the unrevealed ones, each equally likely to be it.
            remaining = self.num_arms - len(revealed)
            if not self._best_found[i] and rng.random() * remaining < 1.0:
                mean = float(self._best[i])
                self._best_found[i] = True
            else:
                mean = float(self._best[i] * rng.random())
            revealed[arm] = mean
        return mean

    def step(self, actions: Any) -> VectorStep:
        """Pull one arm per sub-env; returns ``(obs, rewards, terminated, truncated, infos)``."""
        self._require_reset()
        arms = check_action_batch(actions, self.num_envs, self.num_arms)
        means = np.array([self._mean(i, int(a)) for i, a in enumerate(arms)])
        rewards = np.array(
            [float(rng.random() < m) for rng, m in zip(self._generators(), means, strict=True)]
        )
        step_info = pull_info(means, self._best.copy())
        done = np.ones(self.num_envs, dtype=bool)
        infos = vector_step_infos(step_info, done, zero_final_obs(self.num_envs))
        return np.zeros(self.num_envs, dtype=np.int64), rewards, done, ~done, infos
