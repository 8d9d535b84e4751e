"""Bernoulli multi-armed bandits: a single Gymnasium env and a native vectorized form.

The *instance* is the arm means; ``means=`` fixes it. Its life cycle (drawn at the first
reset, kept, ``resample``) and the vector form's seed-for-seed equality with single envs are
those of every one-step bandit (:mod:`delight_gym.envs._base`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from numpy.typing import ArrayLike, NDArray

from delight_gym._checks import check_positive_int, check_unit_interval_array
from delight_gym.envs._base import (
    OneStepBanditEnv,
    OneStepBanditVectorEnv,
    check_bandit_fits,
    check_render_mode,
    instance_array,
    set_vector_spaces,
)

__all__ = ["DEFAULT_NUM_ARMS", "BernoulliBanditEnv", "BernoulliBanditVectorEnv"]

#: Number of arms used when neither ``num_arms`` nor ``means`` is given.
DEFAULT_NUM_ARMS = 10

_FIXED = "this env was built with fixed means"


def _check_means(value: Any, num_envs: int | None) -> NDArray[np.float64]:
    """``means`` as a float64 copy of shape ``(K,)`` or, batched, ``(num_envs, K)``."""
    return instance_array(check_unit_interval_array(value, "means"), "means", ("K",), num_envs)


#: Memory per arm: its mean and a uniform draw (float64).
_BYTES_PER_ARM = 16


def _resolve_num_arms(num_arms: Any, means_arms: int | None) -> int:
    """Validate ``num_arms`` and reconcile it with the number of arms ``means`` implies."""
    if num_arms is None:
        return DEFAULT_NUM_ARMS if means_arms is None else means_arms
    k = check_positive_int(num_arms, "num_arms")
    if means_arms is not None and means_arms != k:
        raise ValueError(
            f"num_arms={k} disagrees with means, which has {means_arms} arms; "
            "pass one of them or make them agree"
        )
    return k


class BernoulliBanditEnv(OneStepBanditEnv[np.int64]):
    """A ``K``-armed Bernoulli bandit: arm ``a`` pays 1 with probability ``means[a]``, else 0.

    ## Description

    The classic stochastic multi-armed bandit with Bernoulli rewards, as in the Bernoulli
    experiments of the Delight-gated exploration paper. An *instance* is the vector of arm
    means. Unless ``means`` is given, the instance is drawn i.i.d. ``U(0, 1)`` (as
    ``self.np_random.random(K)``) at the **first** :meth:`reset`, from the generator that
    reset's ``seed`` creates, and it is **kept for the env's life**: a later
    ``reset(seed=...)`` reseeds the reward noise but does not redraw the instance. So ``T``
    pulls on one instance are ``T`` one-step episodes (``step`` then ``reset``).
    ``reset(options={"resample": True})`` draws a new instance from ``self.np_random``.

    ## Action Space

    ``Discrete(K)``: the arm to pull. An action outside the space (negative, ``>= K``,
    non-integer or bool) raises a ``ValueError`` naming ``action``.

    ## Observation Space

    ``Discrete(1)``. A bandit has no state, so the observation is always ``0``
    (a ``np.int64``). It exists only so that generic RL code and Gymnasium's API work.

    ## Rewards

    ``1.0`` with probability ``means[a]``, otherwise ``0.0``, drawn as
    ``float(self.np_random.random() < means[a])`` (exactly one uniform draw per step).

    ## Episode End

    Every episode is one pull: ``terminated=True`` and ``truncated=False`` on every step. There
    is no ``max_episode_steps``; the termination is the env's own. Stepping again without a
    ``reset`` is not supported by Gymnasium's API (wrappers from ``gym.make`` may complain).

    ## Information

    ``step`` returns ``info`` with Python floats

    - ``"expected_reward"``: ``means[a]``;
    - ``"optimal_expected_reward"``: ``max(means)``;
    - ``"regret"``: ``max(means) - means[a]`` (the pseudo-regret of the pull, not the noisy
      reward difference).

    ``reset`` returns an empty ``info``.

    Bad arguments raise ``TypeError`` (wrong type) or ``ValueError`` (bad value) naming the
    argument. ``optimal_arm`` breaks ties by the lowest index.

    ## Version History

    - v0: initial version (delight_gym 0.1.0).

    Parameters
    ----------
    num_arms : int | None
        int >= 1, optional: ``K``. Defaults to 10 when ``means`` is not given, and to ``len(means)``
        when it is; if both are given they must agree.
    means : ArrayLike | None
        array-like of shape ``(K,)``, optional: fixes the instance. Entries must be finite and in
        ``[0, 1]``. With ``means`` given, ``resample`` is an error.
    render_mode : str | None
        ``None`` or ``"ansi"``: ``"ansi"`` makes :meth:`render` return a one-line text summary of
        the instance and the last pull.

    Examples
    --------
    >>> from delight_gym.envs import BernoulliBanditEnv
    >>> env = BernoulliBanditEnv(num_arms=4)
    >>> obs, info = env.reset(seed=42)
    >>> obs, info
    (np.int64(0), {})
    >>> env.means.round(3)
    array([0.774, 0.439, 0.859, 0.697])
    >>> env.optimal_arm
    2
    >>> obs, reward, terminated, truncated, info = env.step(1)
    >>> reward, terminated, truncated
    (1.0, True, False)
    >>> {key: round(value, 3) for key, value in info.items()}
    {'expected_reward': 0.439, 'optimal_expected_reward': 0.859, 'regret': 0.42}
    >>> _ = env.reset(seed=7)  # reseeds the reward noise, keeps the instance
    >>> env.means.round(3)
    array([0.774, 0.439, 0.859, 0.697])

    With the ids registered (``import delight_gym``), ``gym.make("BernoulliBandit-v0",
    num_arms=100)`` builds it and ``gym.make_vec("BernoulliBandit-v0", num_envs=64)`` builds
    :class:`BernoulliBanditVectorEnv`.
    """

    family = "BernoulliBandit"
    reward_format = ".0f"

    def __init__(
        self,
        num_arms: int | None = None,
        means: ArrayLike | None = None,
        render_mode: str | None = None,
    ) -> None:
        fixed = None if means is None else _check_means(means, None)
        self.num_arms = _resolve_num_arms(num_arms, None if fixed is None else fixed.size)
        check_bandit_fits(0, self.num_arms, _BYTES_PER_ARM)
        self.render_mode = check_render_mode(render_mode, self.metadata["render_modes"])
        self.action_space = spaces.Discrete(self.num_arms)
        self.observation_space = spaces.Discrete(1)
        self._fixed_instance = None if fixed is None else _FIXED
        self._means = fixed
        self._optimal = float(fixed.max()) if fixed is not None else float("nan")
        self._has_reset = False
        self._last_pull = None

    def _draw_instance(self) -> None:
        self._means = self.np_random.random(self.num_arms)
        self._optimal = float(self._means.max())
        self._last_pull = None

    def _observation(self) -> np.int64:
        return np.int64(0)

    def _reward(self, expected: float) -> float:
        return float(self.np_random.random() < expected)

    def _render_shape(self) -> str:
        return f"K={self.num_arms}"


class BernoulliBanditVectorEnv(OneStepBanditVectorEnv):
    """``num_envs`` independent Bernoulli bandits, stepped together without subprocesses.

    Sub-env ``i`` behaves exactly like a :class:`BernoulliBanditEnv` reset with seed
    ``seed + i`` (Gymnasium's convention; a list of per-env seeds is accepted too): it owns a
    generator made as ``gymnasium.utils.seeding.np_random(seed_i)`` makes it, draws its means
    from it as the single env does, and draws one uniform per step from it in the same order.
    Same seeds and actions therefore give identical means, rewards and infos.

    ## Spaces

    ``action_space = MultiDiscrete([K] * num_envs)``, ``observation_space =
    MultiDiscrete([1] * num_envs)`` (observations are all 0).

    ## Autoreset

    ``metadata["autoreset_mode"] = AutoresetMode.SAME_STEP``: every episode is one pull, and
    each sub-env is reset inside the step that terminates it, so every ``step`` is a pull and
    no step is spent on an autoreset. The autoreset never resamples the instance. As
    ``SAME_STEP`` requires, the step's ``infos`` carry ``final_obs`` (object array of the
    terminal observations) and ``final_info`` (the terminal step's infos, with ``_key`` masks),
    with masks ``_final_obs`` / ``_final_info`` (all True). The observations returned are those
    of the new episodes (0). For convenience the pull's infos are also at the top level of
    ``infos`` (with masks), since a reset itself adds no info.

    ## Step

    ``step(actions)`` takes an integer array of shape ``(num_envs,)`` with entries in
    ``[0, K)`` and returns ``obs`` (int64 zeros), ``rewards`` (float64), ``terminated`` (all
    True), ``truncated`` (all False) and ``infos`` holding float64 arrays
    ``expected_reward``, ``optimal_expected_reward`` and ``regret``.

    ``reset(options={"resample": ...})`` takes a bool (all sub-envs) or a bool array of shape
    ``(num_envs,)`` (those sub-envs).

    Parameters
    ----------
    num_envs : int
        int >= 1.
    num_arms : int | None
        int >= 1, optional: as in :class:`BernoulliBanditEnv`.
    means : ArrayLike | None
        array-like, shape ``(num_envs, K)`` or ``(K,)`` shared by all, optional.
    render_mode : str | None
        ``None`` or ``"ansi"``: :meth:`render` returns a tuple of strings.

    Examples
    --------
    >>> import numpy as np
    >>> from delight_gym.envs import BernoulliBanditVectorEnv
    >>> envs = BernoulliBanditVectorEnv(num_envs=3, num_arms=4)
    >>> obs, infos = envs.reset(seed=42)
    >>> envs.means.round(3)  # row 0 is BernoulliBanditEnv(num_arms=4) reset with seed 42
    array([[0.774, 0.439, 0.859, 0.697],
           [0.652, 0.044, 0.02 , 0.839],
           [0.123, 0.258, 0.406, 0.969]])
    >>> obs, rewards, terminated, truncated, infos = envs.step(np.array([2, 0, 3]))
    >>> rewards, terminated, truncated
    (array([1., 1., 1.]), array([ True,  True,  True]), array([False, False, False]))
    >>> infos["regret"].round(3)
    array([0.   , 0.187, 0.   ])
    >>> infos["final_info"]["regret"].round(3)  # SAME_STEP: the terminal step's infos
    array([0.   , 0.187, 0.   ])
    """

    family = "BernoulliBandit"
    reward_format = ".0f"

    def __init__(
        self,
        num_envs: int,
        num_arms: int | None = None,
        means: ArrayLike | None = None,
        render_mode: str | None = None,
    ) -> None:
        self.num_envs = check_positive_int(num_envs, "num_envs")
        fixed = None if means is None else _check_means(means, self.num_envs)
        self.num_arms = _resolve_num_arms(num_arms, None if fixed is None else fixed.shape[1])
        check_bandit_fits(self.num_envs, self.num_arms, _BYTES_PER_ARM)
        self.render_mode = check_render_mode(render_mode, self.metadata["render_modes"])

        set_vector_spaces(self, spaces.Discrete(self.num_arms), spaces.Discrete(1))
        self._means = fixed
        self._optimal = None if fixed is None else fixed.max(axis=1)
        self._init_bandit_state(None if fixed is None else _FIXED)

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
        final_obs = np.empty(self.num_envs, dtype=object)
        final_obs.fill(np.int64(0))
        return final_obs

    def _rewards(
        self, expected: NDArray[np.float64], rngs: list[np.random.Generator]
    ) -> NDArray[np.float64]:
        uniforms = np.array([rng.random() for rng in rngs], dtype=np.float64)
        return (uniforms < expected).astype(np.float64)

    def _render_shape(self) -> str:
        return f"K={self.num_arms}"
