"""Bernoulli multi-armed bandits: a single Gymnasium env and a native vectorized form.

The *instance* is the arm means (``means=`` fixes it), drawn at the first reset and kept.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from numpy.typing import ArrayLike, NDArray

from delight_gym._checks import check_positive_int, check_unit_interval_array
from delight_gym.envs._bandit import (
    BanditMeans,
    OneStepBanditEnv,
    OneStepBanditVectorEnv,
    check_bandit_fits,
)
from delight_gym.envs._base import check_agrees, instance_array, set_vector_spaces, zero_final_obs

__all__ = ["DEFAULT_NUM_ARMS", "BernoulliBanditEnv", "BernoulliBanditVectorEnv"]

#: Number of arms used when neither ``num_arms`` nor ``means`` is given.
DEFAULT_NUM_ARMS = 10

_FIXED = "this env was built with fixed means"
#: Memory per arm: its mean and a uniform draw (float64).
_BYTES_PER_ARM = 16


def _resolve_num_arms(num_arms: Any, means_arms: int | None) -> int:
    if num_arms is None:
        return DEFAULT_NUM_ARMS if means_arms is None else means_arms
    k = check_positive_int(num_arms, "num_arms")
    check_agrees("num_arms", k, means_arms, "means")
    return k


class _BernoulliParameters(BanditMeans):
    """The keywords shared by the single and vector Bernoulli bandits, checked once."""

    family = "BernoulliBandit"
    reward_format = ".0f"

    def _set_parameters(
        self, num_arms: Any, means: ArrayLike | None, render_mode: Any, num_envs: int | None = None
    ) -> NDArray[np.float64] | None:
        """Check and store the keywords; return the given ``means`` (float64) or None."""
        fixed = None
        if means is not None:
            checked = check_unit_interval_array(means, "means")
            fixed = instance_array(checked, "means", ("K",), num_envs)
        self.num_arms = _resolve_num_arms(num_arms, None if fixed is None else fixed.shape[-1])
        check_bandit_fits(num_envs or 0, self.num_arms, _BYTES_PER_ARM)
        self._set_render_mode(render_mode)
        return fixed

    def _render_shape(self) -> str:
        return f"K={self.num_arms}"


class BernoulliBanditEnv(_BernoulliParameters, OneStepBanditEnv[np.int64]):
    """A ``K``-armed Bernoulli bandit: arm ``a`` pays 1 with probability ``means[a]``, else 0.

    The arm means are drawn i.i.d. ``U(0, 1)`` at the first :meth:`reset` and kept (a later
    ``reset(seed=...)`` reseeds the rewards only) unless ``means`` fixes them;
    ``reset(options={"resample": True})`` draws new ones.

    - Action space: ``Discrete(K)`` (a ``ValueError`` naming ``action`` outside it).
    - Observation space: ``Discrete(1)``, always ``0`` (a bandit has no state).
    - Rewards: ``float(self.np_random.random() < means[a])``, one uniform draw per step.
    - Episode end: one pull; ``info``: ``expected_reward``, ``optimal_expected_reward``, ``regret``.
    - Arguments: ``num_arms`` (10, or ``len(means)``), ``means`` (``(K,)``), ``render_mode``.
    - Version history: v0, the initial version (delight_gym 0.1.0).

    >>> env = BernoulliBanditEnv(num_arms=4)
    >>> obs, info = env.reset(seed=42)
    >>> env.means.round(3), env.optimal_arm
    (array([0.774, 0.439, 0.859, 0.697]), 2)
    >>> obs, reward, terminated, truncated, info = env.step(1)
    >>> reward, terminated, round(info["regret"], 3)
    (1.0, True, 0.42)
    >>> _ = env.reset(seed=7)  # reseeds the reward noise, keeps the instance
    >>> env.means.round(3)
    array([0.774, 0.439, 0.859, 0.697])
    """

    def __init__(
        self,
        num_arms: int | None = None,
        means: ArrayLike | None = None,
        render_mode: str | None = None,
    ) -> None:
        fixed = self._set_parameters(num_arms, means, render_mode)
        self.action_space = spaces.Discrete(self.num_arms)
        self.observation_space = spaces.Discrete(1)
        self._init_bandit_state(None if fixed is None else _FIXED, fixed)

    def _draw_instance(self) -> None:
        self._means = self.np_random.random(self.num_arms)
        self._optimal = float(self._means.max())
        self._last_pull = None

    def _observation(self) -> np.int64:
        return np.int64(0)

    def _reward(self, expected: float) -> float:
        return float(self.np_random.random() < expected)


class BernoulliBanditVectorEnv(_BernoulliParameters, OneStepBanditVectorEnv):  # type: ignore[misc]
    """``num_envs`` independent Bernoulli bandits, stepped together without subprocesses.

    Sub-env ``i`` behaves exactly like a :class:`BernoulliBanditEnv` reset with seed
    ``seed + i``. Spaces are batched (``MultiDiscrete``); autoreset is ``SAME_STEP``, infos
    float64 ``(num_envs,)`` arrays. ``means`` may be ``(num_envs, K)`` or ``(K,)`` shared by
    all; ``reset(options={"resample": mask})`` redraws the sub-envs in ``mask``.

    >>> envs = BernoulliBanditVectorEnv(num_envs=3, num_arms=4)
    >>> obs, infos = envs.reset(seed=42)
    >>> envs.means.round(3)  # row 0 is BernoulliBanditEnv(num_arms=4) reset with seed 42
    array([[0.774, 0.439, 0.859, 0.697],
           [0.652, 0.044, 0.02 , 0.839],
           [0.123, 0.258, 0.406, 0.969]])
    >>> obs, rewards, terminated, truncated, infos = envs.step(np.array([2, 0, 3]))
    >>> rewards, infos["regret"].round(3)
    (array([1., 1., 1.]), array([0.   , 0.187, 0.   ]))
    """

    def __init__(
        self,
        num_envs: int,
        num_arms: int | None = None,
        means: ArrayLike | None = None,
        render_mode: str | None = None,
    ) -> None:
        self.num_envs = check_positive_int(num_envs, "num_envs")
        fixed = self._set_parameters(num_arms, means, render_mode, self.num_envs)
        set_vector_spaces(self, spaces.Discrete(self.num_arms), spaces.Discrete(1))
        self._init_bandit_state(None if fixed is None else _FIXED, fixed)

    def _allocate_instances(self) -> None:
        self._means = np.empty((self.num_envs, self.num_arms))

    def _draw_instances(self, resample: NDArray[np.bool_]) -> None:
        assert self._means is not None
        for j in np.flatnonzero(resample).tolist():
            self._means[j] = self._rng(j).random(self.num_arms)
        self._instances_drawn(resample)

    def _observations(self) -> NDArray[np.int64]:
        return np.zeros(self.num_envs, dtype=np.int64)

    def _final_observations(self) -> NDArray[np.object_]:
        return zero_final_obs(self.num_envs)

    def _rewards(
        self, expected: NDArray[np.float64], rngs: list[np.random.Generator]
    ) -> NDArray[np.float64]:
        uniforms = np.array([rng.random() for rng in rngs], dtype=np.float64)
        return (uniforms < expected).astype(np.float64)
