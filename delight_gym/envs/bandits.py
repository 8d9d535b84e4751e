"""Bernoulli multi-armed bandits: a single Gymnasium env and a native vectorized form.

The *instance* (the arm means) is drawn from the env's own generator at the first
:meth:`reset` and kept for the env's life, so ``T`` pulls are ``T`` one-step episodes on one
instance; ``reset(options={"resample": True})`` draws a new instance and ``means=`` fixes it.
The vectorized form equals ``num_envs`` single envs seed for seed (see
:class:`BernoulliBanditVectorEnv`).
"""

from __future__ import annotations

from typing import Any, cast

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.error import ResetNeeded
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from numpy.typing import ArrayLike, NDArray

from delight_gym._checks import (
    check_action_batch,
    check_positive_int,
    check_unit_interval_array,
)

__all__ = ["DEFAULT_NUM_ARMS", "BernoulliBanditEnv", "BernoulliBanditVectorEnv"]

#: Number of arms used when neither ``num_arms`` nor ``means`` is given.
DEFAULT_NUM_ARMS = 10

_RENDER_MODES = ("ansi",)
_RESET_OPTIONS = frozenset({"resample"})


def _check_render_mode(render_mode: str | None) -> str | None:
    if render_mode is not None and render_mode not in _RENDER_MODES:
        raise ValueError(
            f"render_mode must be None or one of {list(_RENDER_MODES)}, got {render_mode!r}"
        )
    return render_mode


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


def _check_options(options: dict[str, Any] | None) -> dict[str, Any]:
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise TypeError(f"options must be a dict or None, got {type(options).__name__}")
    unknown = set(options) - _RESET_OPTIONS
    if unknown:
        raise ValueError(
            f"options has unknown keys {sorted(unknown)}; supported keys: {sorted(_RESET_OPTIONS)}"
        )
    return options


def _check_flag(value: Any, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool, got {value!r} ({type(value).__name__})")
    return bool(value)


class BernoulliBanditEnv(gym.Env[np.int64, np.int64]):
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

    ## Arguments

    - ``num_arms`` (int >= 1, optional): ``K``. Defaults to 10 when ``means`` is not given,
      and to ``len(means)`` when it is; if both are given they must agree.
    - ``means`` (array-like of shape ``(K,)``, optional): fixes the instance. Entries must be
      finite and in ``[0, 1]``. With ``means`` given, ``resample`` is an error.
    - ``render_mode`` (``None`` or ``"ansi"``): ``"ansi"`` makes :meth:`render` return a
      one-line text summary of the instance and the last pull.

    Bad arguments raise ``TypeError`` (wrong type) or ``ValueError`` (bad value) naming the
    argument. ``optimal_arm`` breaks ties by the lowest index.

    ## Example

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

    ## Version History

    - v0: initial version (delight_gym 0.1.0).
    """

    # Gymnasium reads ``metadata`` from the class (``gym.make`` checks render modes there).
    metadata = {"render_modes": list(_RENDER_MODES), "render_fps": 4}  # noqa: RUF012

    def __init__(
        self,
        num_arms: int | None = None,
        means: ArrayLike | None = None,
        render_mode: str | None = None,
    ) -> None:
        fixed: NDArray[np.float64] | None = None
        if means is not None:
            fixed = check_unit_interval_array(means, "means")
            if fixed.ndim != 1 or fixed.size == 0:
                raise ValueError(
                    f"means must be a non-empty 1-D array of arm means, got shape {fixed.shape}"
                )
            fixed = fixed.copy()
        self.num_arms = _resolve_num_arms(num_arms, None if fixed is None else fixed.size)
        self.render_mode = _check_render_mode(render_mode)
        self.action_space = spaces.Discrete(self.num_arms)
        self.observation_space = spaces.Discrete(1)
        self._fixed_means = fixed is not None
        self._means: NDArray[np.float64] | None = fixed
        self._optimal = float(fixed.max()) if fixed is not None else float("nan")
        self._has_reset = False
        self._last_pull: tuple[int, float] | None = None

    # ------------------------------------------------------------------ instance
    def _draw_instance(self) -> None:
        self._means = self.np_random.random(self.num_arms)
        self._optimal = float(self._means.max())
        self._last_pull = None

    def _require_instance(self) -> NDArray[np.float64]:
        if self._means is None:
            raise ResetNeeded("the bandit instance is drawn at the first reset(); call reset()")
        return self._means

    @property
    def means(self) -> NDArray[np.float64]:
        """The arm means of the current instance, shape ``(K,)`` (a read-only copy)."""
        out = self._require_instance().copy()
        out.flags.writeable = False
        return out

    @property
    def optimal_arm(self) -> int:
        """Index of the best arm of the current instance (lowest index on ties)."""
        return int(np.argmax(self._require_instance()))

    @property
    def optimal_expected_reward(self) -> float:
        """``max(means)`` of the current instance."""
        self._require_instance()
        return self._optimal

    # ----------------------------------------------------------------- Env API
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.int64, dict[str, Any]]:
        """Start a one-pull episode; draw the instance on the first call or on ``resample``.

        Args:
            seed: seeds ``self.np_random`` (which draws the instance, if it is drawn now, and
                the rewards).
            options: ``{"resample": True}`` draws a new instance (an error when ``means``
                was given). No other keys are accepted.
        """
        opts = _check_options(options)
        resample = _check_flag(opts.get("resample", False), 'options["resample"]')
        if resample and self._fixed_means:
            raise ValueError(
                'options["resample"]=True is not allowed: this env was built with fixed means'
            )
        super().reset(seed=seed)
        if self._means is None or resample:
            self._draw_instance()
        self._has_reset = True
        return np.int64(0), {}

    def step(self, action: Any) -> tuple[np.int64, float, bool, bool, dict[str, Any]]:
        """Pull arm ``action``; the episode terminates after this one pull."""
        if not self._has_reset:
            raise ResetNeeded("call reset() before step()")
        means = self._require_instance()
        if isinstance(action, bool) or not self.action_space.contains(action):
            raise ValueError(
                f"action must be an integer in [0, {self.num_arms - 1}] "
                f"(the action space {self.action_space}), got {action!r}"
            )
        arm = int(action)
        expected = float(means[arm])
        reward = float(self.np_random.random() < expected)
        self._last_pull = (arm, reward)
        info = {
            "expected_reward": expected,
            "optimal_expected_reward": self._optimal,
            "regret": self._optimal - expected,
        }
        return np.int64(0), reward, True, False, info

    def render(self) -> str | None:
        """With ``render_mode="ansi"``, a one-line text summary; otherwise ``None``."""
        if self.render_mode is None:
            gym.logger.warn(
                "You are calling render() without a render_mode; use "
                'BernoulliBanditEnv(render_mode="ansi") or gym.make(..., render_mode="ansi").'
            )
            return None
        return _render_text(self._means, self._last_pull)


def _render_text(means: NDArray[np.float64] | None, last_pull: tuple[int, float] | None) -> str:
    if means is None:
        return "BernoulliBandit: instance not drawn yet (call reset())"
    best = int(np.argmax(means))
    text = f"BernoulliBandit K={means.size}: best arm {best} (mean {means[best]:.3f})"
    if last_pull is None:
        return text + "; no pull yet"
    arm, reward = last_pull
    return text + f"; last pull arm {arm} (mean {means[arm]:.3f}) -> reward {reward:.0f}"


class _PerEnvGenerators:
    """Seeding of native vector envs: one generator per sub-env, made as a single env's.

    Sub-env ``i`` of ``reset(seed=s)`` is seeded ``s + i`` (Gymnasium's vector convention),
    so a vector env equals ``num_envs`` single envs seed for seed. Subclasses set
    ``num_envs`` and initialise ``_rngs`` and ``_seeds`` to ``[None] * num_envs``.
    """

    num_envs: int
    _rngs: list[np.random.Generator | None]
    _seeds: list[int | None]

    def _rng(self, i: int) -> np.random.Generator:
        rng = self._rngs[i]
        if rng is None:  # as gymnasium.Env.np_random does lazily
            rng, self._seeds[i] = seeding.np_random()
            self._rngs[i] = rng
        return rng

    @property
    def np_random(self) -> tuple[np.random.Generator, ...]:
        """The sub-envs' generators (as ``SyncVectorEnv.np_random`` returns them)."""
        return tuple(self._rng(i) for i in range(self.num_envs))

    @property
    def np_random_seed(self) -> tuple[int | None, ...]:
        """The seeds the sub-envs' generators were made from (as in ``SyncVectorEnv``)."""
        for i in range(self.num_envs):
            self._rng(i)
        return tuple(self._seeds)

    def _apply_seeds(self, seeds: list[int | None]) -> None:
        """Seed sub-env ``i``'s generator with ``seeds[i]`` as ``gymnasium.Env.reset(seed=...)``
        does; a ``None`` keeps the generator (or makes one from fresh entropy)."""
        for i, s in enumerate(seeds):
            if s is not None:
                self._rngs[i], self._seeds[i] = seeding.np_random(s)
            else:
                self._rng(i)

    def _per_env_seeds(self, seed: int | list[int | None] | None) -> list[int | None]:
        if seed is None:
            return [None] * self.num_envs
        if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
            return [int(seed) + i for i in range(self.num_envs)]
        if isinstance(seed, (list, tuple)):
            if len(seed) != self.num_envs:
                raise ValueError(
                    f"seed as a list must have num_envs={self.num_envs} entries, got {len(seed)}"
                )
            return list(seed)
        raise TypeError(f"seed must be None, an int or a list of ints, got {type(seed).__name__}")


def _same_step_infos(
    expected: NDArray[np.float64],
    optimal: NDArray[np.float64],
    regret: NDArray[np.float64],
    final_obs: NDArray[np.object_],
) -> dict[str, Any]:
    """The ``infos`` of a bandit vector env's step, where every sub-env terminates and is
    reset in the same step (SAME_STEP autoreset): each key with its all-true ``_key`` mask,
    and ``final_obs`` / ``final_info`` as ``SyncVectorEnv`` gives them."""
    every = np.ones(expected.shape[0], dtype=np.bool_)
    final_info = {
        "expected_reward": expected.copy(),
        "_expected_reward": every.copy(),
        "optimal_expected_reward": optimal.copy(),
        "_optimal_expected_reward": every.copy(),
        "regret": regret.copy(),
        "_regret": every.copy(),
    }
    return {
        "expected_reward": expected,
        "_expected_reward": every.copy(),
        "optimal_expected_reward": optimal,
        "_optimal_expected_reward": every.copy(),
        "regret": regret,
        "_regret": every.copy(),
        "final_obs": final_obs,
        "_final_obs": every.copy(),
        "final_info": final_info,
        "_final_info": every.copy(),
    }


# Tuples per sub-env, as SyncVectorEnv returns them, where VectorEnv declares one generator.
class BernoulliBanditVectorEnv(_PerEnvGenerators, VectorEnv):  # type: ignore[misc]
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

    ## Arguments

    - ``num_envs`` (int >= 1).
    - ``num_arms`` (int >= 1, optional): as in :class:`BernoulliBanditEnv`.
    - ``means`` (array-like, shape ``(num_envs, K)`` or ``(K,)`` shared by all, optional).
    - ``render_mode`` (``None`` or ``"ansi"``): :meth:`render` returns a tuple of strings.

    ``reset(options={"resample": ...})`` takes a bool (all sub-envs) or a bool array of shape
    ``(num_envs,)`` (those sub-envs).

    ## Example

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

    metadata = {  # noqa: RUF012 (Gymnasium reads it from the class)
        "render_modes": list(_RENDER_MODES),
        "render_fps": 4,
        "autoreset_mode": AutoresetMode.SAME_STEP,
    }

    def __init__(
        self,
        num_envs: int,
        num_arms: int | None = None,
        means: ArrayLike | None = None,
        render_mode: str | None = None,
    ) -> None:
        self.num_envs = check_positive_int(num_envs, "num_envs")
        fixed: NDArray[np.float64] | None = None
        if means is not None:
            fixed = check_unit_interval_array(means, "means")
            if fixed.ndim == 1:
                fixed = np.broadcast_to(fixed, (self.num_envs, fixed.size))
            if fixed.ndim != 2 or fixed.shape[0] != self.num_envs or fixed.shape[1] == 0:
                raise ValueError(
                    f"means must have shape (num_envs, K) = ({self.num_envs}, K) or (K,) "
                    f"with K >= 1, got shape {np.shape(means)}"
                )
            fixed = np.array(fixed, dtype=np.float64)  # own, writable copy
        self.num_arms = _resolve_num_arms(num_arms, None if fixed is None else fixed.shape[1])
        self.render_mode = _check_render_mode(render_mode)

        self.single_action_space = spaces.Discrete(self.num_arms)
        self.single_observation_space = spaces.Discrete(1)
        self.action_space = spaces.MultiDiscrete(np.full(self.num_envs, self.num_arms))
        self.observation_space = spaces.MultiDiscrete(np.ones(self.num_envs, dtype=np.int64))

        self._fixed_means = fixed is not None
        self._means: NDArray[np.float64] | None = fixed
        self._optimal: NDArray[np.float64] | None = None if fixed is None else fixed.max(axis=1)
        self._rngs: list[np.random.Generator | None] = [None] * self.num_envs
        self._seeds: list[int | None] = [None] * self.num_envs
        self._rows = np.arange(self.num_envs)
        self._all_true = np.ones(self.num_envs, dtype=np.bool_)
        self._has_reset = False
        self._last_actions: NDArray[np.int64] | None = None
        self._last_rewards: NDArray[np.float64] | None = None

    def _resample_mask(self, options: dict[str, Any] | None) -> NDArray[np.bool_]:
        value = _check_options(options).get("resample", False)
        if isinstance(value, (bool, np.bool_)):
            mask = np.full(self.num_envs, bool(value))
        else:
            mask = np.asarray(value)
            if mask.dtype != np.bool_ or mask.shape != (self.num_envs,):
                raise ValueError(
                    'options["resample"] must be a bool or a bool array of shape '
                    f"(num_envs,) = ({self.num_envs},), got {value!r}"
                )
            mask = mask.copy()
        if mask.any() and self._fixed_means:
            raise ValueError(
                'options["resample"] is not allowed: this env was built with fixed means'
            )
        return mask

    # ----------------------------------------------------------------- instance
    @property
    def means(self) -> NDArray[np.float64]:
        """Arm means, shape ``(num_envs, K)`` (a read-only copy)."""
        out = self._require_instance().copy()
        out.flags.writeable = False
        return out

    @property
    def optimal_expected_reward(self) -> NDArray[np.float64]:
        """``means.max(axis=1)``, shape ``(num_envs,)`` (a read-only copy)."""
        self._require_instance()
        assert self._optimal is not None
        out = self._optimal.copy()
        out.flags.writeable = False
        return out

    @property
    def optimal_arm(self) -> NDArray[np.int64]:
        """Best arm of each sub-env, shape ``(num_envs,)`` (lowest index on ties)."""
        return np.argmax(self._require_instance(), axis=1)

    def _require_instance(self) -> NDArray[np.float64]:
        if self._means is None:
            raise ResetNeeded("the bandit instances are drawn at the first reset(); call reset()")
        return self._means

    # --------------------------------------------------------------- VectorEnv API
    def reset(
        self,
        *,
        seed: int | list[int | None] | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[NDArray[np.int64], dict[str, Any]]:
        """Reset every sub-env; ``seed`` int ``s`` seeds sub-env ``i`` with ``s + i``."""
        seeds = self._per_env_seeds(seed)
        resample = self._resample_mask(options)
        self._apply_seeds(seeds)
        if self._means is None:
            resample[:] = True
            self._means = np.empty((self.num_envs, self.num_arms))
        if resample.any():
            for j in np.flatnonzero(resample).tolist():
                self._means[j] = self._rng(j).random(self.num_arms)
            self._optimal = self._means.max(axis=1)
            if self._last_actions is not None:
                self._last_actions[resample] = -1
        self._has_reset = True
        return np.zeros(self.num_envs, dtype=np.int64), {}

    def step(
        self, actions: Any
    ) -> tuple[
        NDArray[np.int64],
        NDArray[np.float64],
        NDArray[np.bool_],
        NDArray[np.bool_],
        dict[str, Any],
    ]:
        """Pull one arm in every sub-env; each terminates and is reset in this same step."""
        if not self._has_reset:
            raise ResetNeeded("call reset() before step()")
        means = self._require_instance()
        assert self._optimal is not None
        arms = check_action_batch(actions, self.num_envs, self.num_arms)
        # One uniform per sub-env from its own generator, exactly as the single env draws it
        # (the only per-sub-env Python work; everything else is vectorized).
        rngs = cast("list[np.random.Generator]", self._rngs)  # all made by reset()
        uniforms = np.array([rng.random() for rng in rngs], dtype=np.float64)
        expected = means[self._rows, arms]
        rewards = (uniforms < expected).astype(np.float64)
        optimal = self._optimal.copy()
        regret = optimal - expected
        self._last_actions = arms  # a private copy made by check_action_batch
        self._last_rewards = rewards.copy()

        n = self.num_envs
        every = self._all_true
        final_obs = np.empty(n, dtype=object)
        final_obs.fill(np.int64(0))
        infos = _same_step_infos(expected, optimal, regret, final_obs)
        return (
            np.zeros(n, dtype=np.int64),
            rewards,
            every.copy(),
            ~every,
            infos,
        )

    def render(self) -> tuple[str, ...] | None:
        """With ``render_mode="ansi"``, one line of text per sub-env; otherwise ``None``."""
        if self.render_mode is None:
            gym.logger.warn("You are calling render() without a render_mode.")
            return None
        if self._means is None:
            return tuple(_render_text(None, None) for _ in range(self.num_envs))
        texts = []
        for i in range(self.num_envs):
            last: tuple[int, float] | None = None
            if self._last_actions is not None and self._last_rewards is not None:
                arm = int(self._last_actions[i])
                last = None if arm < 0 else (arm, float(self._last_rewards[i]))
            texts.append(_render_text(self._means[i], last))
        return tuple(texts)
