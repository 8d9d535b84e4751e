"""The bandit bases, single and vector: one-pull episodes on one instance, Gaussian rewards,
contexts drawn at every ``reset``, and the instance of arm features and ``θ``. Each family
module subclasses them with one mixin of its keywords shared by its single and vector env.
"""

from __future__ import annotations

from typing import Any, ClassVar, cast

import numpy as np
from gymnasium import spaces
from numpy.typing import NDArray

from delight_gym._checks import check_action_batch, check_would_fit
from delight_gym.envs._base import (
    InstanceEnv,
    InstanceState,
    InstanceVectorEnv,
    ObsT,
    VectorStep,
    check_discrete_action,
    check_render_mode,
    pull_info,
    read_only_copy,
    require_drawn,
    vector_step_infos,
)


def bandit_summary(
    name: str,
    shape: str,
    means: NDArray[np.float64] | None,
    last_pull: tuple[int, float] | None,
    reward_format: str,
) -> str:
    """One line of a bandit's ``"ansi"`` render: best arm, and the last ``(arm, reward)``."""
    if means is None:
        return f"{name}: instance not drawn yet (call reset())"
    best = int(np.argmax(means))
    text = f"{name} {shape}: best arm {best} (mean {means[best]:.3f})"
    if last_pull is None:
        return text + "; no pull yet"
    arm, reward = last_pull
    return (
        text + f"; last pull arm {arm} (mean {means[arm]:.3f}) -> reward {reward:{reward_format}}"
    )


def float32_box(shape: tuple[int, ...], bound: float = 1.0) -> spaces.Space[NDArray[np.float32]]:
    """``Box(-bound, bound, shape, float32)``, the feature bandits' observation space."""
    box = spaces.Box(-bound, bound, shape=shape, dtype=np.float32)
    return cast("spaces.Space[NDArray[np.float32]]", box)  # Box is typed for any dtype


class BanditKeywords:
    """What a bandit env, single or vector, and its family's keyword mixin declare."""

    #: The family's name in ``render``'s text (``"LinearBandit"``).
    family: ClassVar[str]
    metadata: dict[str, Any]
    render_mode: str | None
    #: The ``ResetNeeded`` message while the instance is still to be drawn.
    _not_drawn: ClassVar[str]

    def _set_render_mode(self, render_mode: Any) -> None:
        self.render_mode = check_render_mode(render_mode, self.metadata["render_modes"])

    def _drawn_copy(self, part: NDArray[Any] | None, not_drawn: str | None = None) -> NDArray[Any]:
        """A read-only copy of ``part``; ``ResetNeeded`` while it is None."""
        return read_only_copy(
            require_drawn(part, self._not_drawn if not_drawn is None else not_drawn)
        )


class BanditEnv(BanditKeywords, InstanceEnv[ObsT]):
    """A single bandit env: rendered as ``"ansi"`` text, its instance drawn at the first reset."""

    metadata: dict[str, Any] = {"render_modes": ["ansi"], "render_fps": 4}  # noqa: RUF012
    _not_drawn = "the bandit instance is drawn at the first reset(); call reset()"


class BanditVectorEnv(BanditKeywords, InstanceVectorEnv):  # type: ignore[misc]
    """A native vector bandit env: :class:`BanditEnv`'s rendering, ``SAME_STEP`` autoreset."""

    metadata: dict[str, Any] = {**BanditEnv.metadata, **InstanceVectorEnv.metadata}  # noqa: RUF012
    _not_drawn = "the bandit instances are drawn at the first reset(); call reset()"


class BanditMeans(BanditKeywords, InstanceState):
    """The ``K`` arm means of a bandit instance (single or vector)."""

    _means: NDArray[np.float64] | None
    num_arms: int
    #: How ``render`` formats the last reward.
    reward_format: ClassVar[str] = ".3f"

    def _has_instance(self) -> bool:
        return self._means is not None

    def _require_means(self) -> NDArray[np.float64]:
        return require_drawn(self._means, self._not_drawn)

    @property
    def means(self) -> NDArray[np.float64]:
        """The arm means of the current instance(s), shape ``(K,)`` (a single env) or
        ``(num_envs, K)`` (a vector env), as a read-only copy."""
        return read_only_copy(self._require_means())

    def _render_shape(self) -> str:  # the instance's size for render ("K=4")
        raise NotImplementedError


class OneStepBanditEnv(BanditMeans, BanditEnv[ObsT]):
    """A ``K``-armed bandit played as one-pull episodes on one instance; ``info`` holds Python
    floats ``expected_reward``, ``optimal_expected_reward`` and ``regret``.

    Subclasses set ``family``, ``num_arms`` and ``action_space``, call
    :meth:`_init_bandit_state`, and implement :meth:`_draw_instance` (setting ``_means`` and
    ``_optimal``), :meth:`_observation`, :meth:`_reward` and :meth:`_render_shape`.
    """

    _optimal: float
    _last_pull: tuple[int, float] | None

    def _init_bandit_state(
        self, fixed: str | None, means: NDArray[np.float64] | None = None
    ) -> None:
        self._fixed_instance = fixed
        self._means = means
        self._optimal = float("nan") if means is None else float(means.max())
        self._last_pull = None

    def _observation(self) -> ObsT:
        raise NotImplementedError

    def _reward(self, expected: float) -> float:  # one draw from self.np_random
        raise NotImplementedError

    def _start_episode(self) -> ObsT:
        return self._observation()

    @property
    def optimal_arm(self) -> int:
        """Index of the best arm of the current instance (lowest index on ties)."""
        return int(np.argmax(self._require_means()))

    @property
    def optimal_expected_reward(self) -> float:
        """``max(means)`` of the current instance."""
        self._require_means()
        return self._optimal

    def step(self, action: Any) -> tuple[ObsT, float, bool, bool, dict[str, Any]]:
        """Pull arm ``action``; the episode terminates after this one pull."""
        self._require_reset()
        means = self._require_means()
        arm = check_discrete_action(action, self.action_space)
        expected = float(means[arm])
        reward = self._reward(expected)
        self._last_pull = (arm, reward)
        return self._observation(), reward, True, False, pull_info(expected, self._optimal)

    def _frame(self) -> str:
        return bandit_summary(
            self.family, self._render_shape(), self._means, self._last_pull, self.reward_format
        )


class OneStepBanditVectorEnv(BanditMeans, BanditVectorEnv):  # type: ignore[misc]
    """``num_envs`` independent one-pull bandits stepped together; every step terminates and
    resets every sub-env (``SAME_STEP``), without resampling.

    Subclasses set ``family``, ``num_envs``, ``num_arms`` and the spaces, call
    :meth:`_init_bandit_state`, and implement :meth:`_allocate_instances`, :meth:`_draw_instances`
    (ending with :meth:`_instances_drawn`), :meth:`_observations`, :meth:`_final_observations`,
    :meth:`_rewards` and :meth:`_render_shape`.
    """

    _optimal: NDArray[np.float64] | None

    def _init_bandit_state(
        self, fixed: str | None, means: NDArray[np.float64] | None = None
    ) -> None:
        self._means = means
        self._optimal = None if means is None else means.max(axis=1)
        self._init_generators()
        self._fixed_instance = fixed
        self._rows = np.arange(self.num_envs)
        self._all_true = np.ones(self.num_envs, dtype=np.bool_)
        self._last_actions: NDArray[np.int64] | None = None
        self._last_rewards: NDArray[np.float64] | None = None

    def _final_observations(self) -> NDArray[np.object_]:
        raise NotImplementedError

    def _rewards(self, expected: NDArray[np.float64], rngs: list[np.random.Generator]) -> Any:
        raise NotImplementedError  # one draw from each sub-env's generator, in order

    def _instances_drawn(self, resample: NDArray[np.bool_]) -> None:
        assert self._means is not None
        self._optimal = self._means.max(axis=1)
        if self._last_actions is not None:
            self._last_actions[resample] = -1  # render: "no pull yet" on a new instance

    @property
    def optimal_expected_reward(self) -> NDArray[np.float64]:
        """``means.max(axis=1)``, shape ``(num_envs,)`` (a read-only copy)."""
        self._require_means()
        assert self._optimal is not None
        return read_only_copy(self._optimal)

    @property
    def optimal_arm(self) -> NDArray[np.int64]:
        """Best arm of each sub-env, shape ``(num_envs,)`` (lowest index on ties)."""
        return np.argmax(self._require_means(), axis=1)

    def step(self, actions: Any) -> VectorStep:
        """Pull arm ``actions[i]`` (ints, shape ``(num_envs,)``) in sub-env ``i``; each
        terminates and is reset in this same step. ``infos`` hold float64
        ``expected_reward``, ``optimal_expected_reward`` and ``regret``."""
        self._require_reset()
        means = self._require_means()
        assert self._optimal is not None
        arms = check_action_batch(actions, self.num_envs, self.num_arms)
        # One draw per sub-env from its own generator, exactly as the single env draws it
        # (the only per-sub-env Python work; everything else is vectorized).
        rngs = cast("list[np.random.Generator]", self._rngs)  # all made by reset()
        expected = means[self._rows, arms]
        rewards = self._rewards(expected, rngs)
        self._last_actions = arms  # a private copy made by check_action_batch
        self._last_rewards = rewards.copy()
        every = self._all_true
        step_info = pull_info(expected, self._optimal.copy())
        infos = vector_step_infos(step_info, every, self._final_observations())
        return self._observations(), rewards, every.copy(), ~every, infos

    def _frames(self) -> tuple[str, ...]:
        name, shape = self.family, self._render_shape()
        texts = []
        for i in range(self.num_envs):
            means = None if self._means is None else self._means[i]
            last: tuple[int, float] | None = None
            if self._last_actions is not None and self._last_rewards is not None:
                arm = int(self._last_actions[i])  # -1: no pull on this instance yet
                last = None if arm < 0 else (arm, float(self._last_rewards[i]))
            texts.append(bandit_summary(name, shape, means, last, self.reward_format))
        return tuple(texts)


class FeatureBanditInstance(BanditMeans):
    """An instance of arm features ``φ`` and a parameter ``θ`` (linear and neural bandits);
    a part the constructor fixed is readable before any reset."""

    _features: NDArray[np.float64] | None = None  # until given or drawn
    _theta: NDArray[np.float64] | None = None
    _fixed_features: bool = False
    _fixed_theta: bool = False

    def _instance_part(self, part: NDArray[np.float64] | None, fixed: bool) -> NDArray[np.float64]:
        if not fixed:
            self._require_means()
        return self._drawn_copy(part)

    @property
    def features(self) -> NDArray[np.float64]:
        """The arm features ``Φ``, ``(K, D)`` (vector env ``(num_envs, K, D)``), read-only."""
        return self._instance_part(self._features, self._fixed_features)

    @property
    def theta(self) -> NDArray[np.float64]:
        """The parameter ``θ``, ``(D,)`` (vector env ``(num_envs, D)``), read-only."""
        return self._instance_part(self._theta, self._fixed_theta)


#: Bytes each sub-env of a native vector env costs beyond its arrays (its numpy generator).
SUB_ENV_BYTES = 1024


def check_bandit_fits(num_envs: int, num_arms: int, bytes_per_arm: int, detail: str = "") -> None:
    """Refuse, before anything is allocated, a bandit (``num_envs`` 0: a single env) whose
    ``bytes_per_arm`` per arm and sub-env would not fit in memory; ``detail`` ends the
    argument list in the message (``", dim=20"``)."""
    envs = max(num_envs, 1)
    overhead = SUB_ENV_BYTES * num_envs
    what = f"num_arms={num_arms}{detail}"
    if num_envs:
        what = f"num_envs={num_envs} x {what}"
    check_would_fit(envs * num_arms * bytes_per_arm + overhead, what)


# ------------------------------------------------------------------- Gaussian rewards
class GaussianBanditEnv(OneStepBanditEnv[NDArray[np.float32]]):
    """A one-step bandit paying the arm's mean plus ``noise·z``, one standard normal per pull
    (also when ``noise == 0``); the observation is a copy of the float32 ``_obs``."""

    _obs: NDArray[np.float32] | None = None  # until the instance (or context) is drawn
    noise: float

    def _observation(self) -> NDArray[np.float32]:
        assert self._obs is not None
        return self._obs.copy()

    def _reward(self, expected: float) -> float:
        return expected + self.noise * float(self.np_random.standard_normal())


class GaussianBanditVectorEnv(OneStepBanditVectorEnv):
    """The vector form of :class:`GaussianBanditEnv`."""

    _obs: NDArray[np.float32] | None = None  # until the instance (or context) is drawn
    noise: float

    def _observations(self) -> NDArray[np.float32]:
        assert self._obs is not None
        return self._obs.copy()

    def _final_observations(self) -> NDArray[np.object_]:
        return np.fromiter(self._observations(), dtype=object, count=self.num_envs)

    def _rewards(
        self, expected: NDArray[np.float64], rngs: list[np.random.Generator]
    ) -> NDArray[np.float64]:
        normals = np.array([rng.standard_normal() for rng in rngs], dtype=np.float64)
        return expected + self.noise * normals


# ------------------------------------------------------------------------- contextual
class ContextualBanditEnv(GaussianBanditEnv):
    """A Gaussian one-step bandit whose arm means depend on a context drawn at every reset.

    Subclasses implement :meth:`_draw_context` (setting ``_means``, ``_optimal``, ``_obs``).
    """

    def _draw_context(self) -> None:
        raise NotImplementedError

    def _start_episode(self) -> NDArray[np.float32]:
        self._draw_context()
        return self._observation()

    def step(self, action: Any) -> tuple[NDArray[np.float32], float, bool, bool, dict[str, Any]]:
        """Pull arm ``action`` under the current context; ``info`` also holds
        ``optimal_action`` (the lowest best arm). The observation is the context played."""
        self._require_reset()
        best = self.optimal_arm
        obs, reward, terminated, truncated, info = super().step(action)
        info["optimal_action"] = best
        return obs, reward, terminated, truncated, info


class ContextualBanditVectorEnv(GaussianBanditVectorEnv):
    """``num_envs`` independent contextual bandits; every step pulls, then draws each sub-env's
    next context from its own generator (as a single env's next ``reset`` does).

    Subclasses implement :meth:`_draw_contexts` (setting ``_means``, ``_optimal``, ``_obs``
    and ``_contexts``).
    """

    _contexts: NDArray[np.float64]

    @property
    def reward_scale(self) -> float:
        """Width of an interval holding every mean reward (set by each family)."""
        raise NotImplementedError

    def _draw_contexts(self) -> None:
        raise NotImplementedError

    def _start_episodes(self) -> None:
        self._draw_contexts()

    @property
    def context(self) -> NDArray[np.float64]:
        """Every sub-env's current context, ``(num_envs, C)`` (a read-only copy)."""
        self._require_means()
        return read_only_copy(self._contexts)

    def _final_observations(self) -> NDArray[np.object_]:
        final = self._observations()
        final.flags.writeable = False  # the entries are views of this one copy
        return np.fromiter(final, dtype=object, count=self.num_envs)

    def step(self, actions: Any) -> VectorStep:
        """Pull one arm in every sub-env under its current context, then draw the next
        contexts (``final_obs`` holds those just played); ``infos`` and
        ``infos["final_info"]`` also hold int64 ``optimal_action``."""
        self._require_reset()
        best = self.optimal_arm
        _, rewards, terminated, truncated, infos = super().step(actions)
        for target in (infos, infos["final_info"]):
            target["optimal_action"] = best.copy()
            target["_optimal_action"] = self._all_true.copy()
        self._draw_contexts()
        return self._observations(), rewards, terminated, truncated, infos
