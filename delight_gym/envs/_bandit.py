"""The bandit bases: what every bandit env declares (:class:`BanditKeywords`, the single and
vector :class:`BanditEnv` / :class:`BanditVectorEnv`), a ``K``-armed bandit played as one-pull
episodes on one instance and its native vector form, the Gaussian-reward variants, the
contextual variants (a context drawn at every ``reset``) and the instance of arm features and
``θ``. Family modules (``bandits``, ``linear``, ``wheel``, ``neural``, ``continuum``) subclass
them, each with one mixin of its keywords shared by its single and vector env.
"""

from __future__ import annotations

from typing import Any, ClassVar, cast

import numpy as np
from gymnasium import spaces
from gymnasium.error import ResetNeeded
from gymnasium.vector import AutoresetMode
from numpy.typing import NDArray

from delight_gym._checks import check_action_batch, check_would_fit
from delight_gym.envs._base import (
    InstanceEnv,
    InstanceState,
    InstanceVectorEnv,
    ObsT,
    check_render_mode,
    read_only_copy,
    vector_step_infos,
    warn_no_render_mode,
)

__all__ = [
    "SUB_ENV_BYTES",
    "BanditEnv",
    "BanditKeywords",
    "BanditMeans",
    "BanditVectorEnv",
    "ContextualBanditEnv",
    "ContextualBanditVectorEnv",
    "FeatureBanditInstance",
    "GaussianBanditEnv",
    "GaussianBanditVectorEnv",
    "OneStepBanditEnv",
    "OneStepBanditVectorEnv",
    "bandit_summary",
    "check_bandit_fits",
    "unit_box",
]


def bandit_summary(
    name: str,
    shape: str,
    means: NDArray[np.float64] | None,
    last_pull: tuple[int, float] | None,
    reward_format: str,
) -> str:
    """One line of text for a bandit's ``"ansi"`` render: best arm, and the last pull.

    Parameters
    ----------
    name : str
        the family (``"BernoulliBandit"``).
    shape : str
        its size (``"K=4"``, ``"K=4 D=2"``).
    means : NDArray[np.float64] | None
        ``(K,)`` arm means, or None before the instance is drawn.
    last_pull : tuple[int, float] | None
        ``(arm, reward)`` of the last pull, or None.
    reward_format : str
        format spec of the reward (``".0f"``, ``".3f"``).
    """
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


class BanditKeywords:
    """What a bandit env, single or vector, declares, once for both forms and for the mixin of
    its family's keywords (``_LinearBanditParameters``, ...): the family's name in ``render``'s
    text, Gymnasium's ``metadata``, the checked ``render_mode`` and the ``ResetNeeded``
    message before the instance is drawn."""

    #: The family's name in ``render``'s text (``"LinearBandit"``).
    family: ClassVar[str]
    metadata: dict[str, Any]
    render_mode: str | None
    #: The ``ResetNeeded`` message while the instance is still to be drawn.
    _not_drawn: ClassVar[str]

    def _set_render_mode(self, render_mode: Any) -> None:
        """Store ``render_mode``, checked against ``metadata["render_modes"]``."""
        self.render_mode = check_render_mode(render_mode, self.metadata["render_modes"])

    def _drawn_copy(self, part: NDArray[Any] | None, not_drawn: str | None = None) -> NDArray[Any]:
        """A read-only copy of a part of the instance (or of the context); before it is drawn,
        ``ResetNeeded`` with ``not_drawn`` (default ``_not_drawn``)."""
        if part is None:
            raise ResetNeeded(self._not_drawn if not_drawn is None else not_drawn)
        return read_only_copy(part)


class BanditEnv(BanditKeywords, InstanceEnv[ObsT]):
    """A single bandit env: rendered as ``"ansi"`` text, its instance drawn at the first reset."""

    metadata: dict[str, Any] = {"render_modes": ["ansi"], "render_fps": 4}  # noqa: RUF012
    _not_drawn = "the bandit instance is drawn at the first reset(); call reset()"


class BanditVectorEnv(BanditKeywords, InstanceVectorEnv):  # type: ignore[misc]
    """A native vector bandit env: :class:`BanditEnv`'s rendering, ``SAME_STEP`` autoreset."""

    metadata: dict[str, Any] = {  # noqa: RUF012 (Gymnasium reads it from the class)
        "render_modes": ["ansi"],
        "render_fps": 4,
        "autoreset_mode": AutoresetMode.SAME_STEP,
    }
    _not_drawn = "the bandit instances are drawn at the first reset(); call reset()"


class BanditMeans(BanditKeywords, InstanceState):
    """The ``K`` arm means of a bandit instance (single or vector), drawn at the first reset."""

    _means: NDArray[np.float64] | None
    num_arms: int
    #: How ``render`` formats the last reward.
    reward_format: ClassVar[str] = ".3f"

    def _has_instance(self) -> bool:
        return self._means is not None

    def _require_means(self) -> NDArray[np.float64]:
        if self._means is None:
            raise ResetNeeded(self._not_drawn)
        return self._means

    @property
    def means(self) -> NDArray[np.float64]:
        """The arm means of the current instance(s), shape ``(K,)`` (a single env) or
        ``(num_envs, K)`` (a vector env), as a read-only copy."""
        return read_only_copy(self._require_means())

    def _render_shape(self) -> str:
        """The instance's size for ``render`` (``"K=4"``)."""
        raise NotImplementedError


class OneStepBanditEnv(BanditMeans, BanditEnv[ObsT]):
    """A ``K``-armed bandit played as one-pull episodes on one instance.

    ``step(a)`` pulls arm ``a`` (a ``ValueError`` naming ``action`` outside ``Discrete(K)``),
    terminates, and returns ``info`` with Python floats ``expected_reward`` (the arm's mean),
    ``optimal_expected_reward`` (the best mean) and ``regret`` (their difference). Subclasses
    set ``num_arms``, ``action_space``, ``_means`` (``(K,)`` or None until drawn),
    ``_optimal``, ``_last_pull = None`` and the :class:`InstanceEnv` attributes, and implement
    :meth:`_draw_instance` (setting ``_means`` and ``_optimal``), :meth:`_observation`,
    :meth:`_reward` and :meth:`_render_shape`, and set ``family``.
    """

    _optimal: float
    _last_pull: tuple[int, float] | None

    def _observation(self) -> ObsT:
        raise NotImplementedError

    def _reward(self, expected: float) -> float:
        """The pull's reward given its expected reward (one draw from ``self.np_random``)."""
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
        if isinstance(action, bool) or not self.action_space.contains(action):
            raise ValueError(
                f"action must be an integer in [0, {self.num_arms - 1}] "
                f"(the action space {self.action_space}), got {action!r}"
            )
        arm = int(action)
        expected = float(means[arm])
        reward = self._reward(expected)
        self._last_pull = (arm, reward)
        info = {
            "expected_reward": expected,
            "optimal_expected_reward": self._optimal,
            "regret": self._optimal - expected,
        }
        return self._observation(), reward, True, False, info

    def render(self) -> str | None:
        """With ``render_mode="ansi"``, a one-line text summary; otherwise ``None``."""
        if self.render_mode is None:
            warn_no_render_mode(self)
            return None
        return bandit_summary(
            self.family, self._render_shape(), self._means, self._last_pull, self.reward_format
        )


class OneStepBanditVectorEnv(BanditMeans, BanditVectorEnv):  # type: ignore[misc]
    """``num_envs`` independent one-pull bandits stepped together; every step terminates and
    resets every sub-env (``SAME_STEP``), without resampling.

    Subclasses set ``num_envs``, ``num_arms``, the four spaces, ``_means`` (``(num_envs, K)``
    or None), ``_optimal`` and the :class:`InstanceVectorEnv` attributes (via
    :meth:`_init_bandit_state`), and implement :meth:`_allocate_instances`,
    :meth:`_draw_instances` (which calls :meth:`_instances_drawn`), :meth:`_observations`,
    :meth:`_final_observations`, :meth:`_rewards` and :meth:`_render_shape`, and set
    ``family``.
    """

    _optimal: NDArray[np.float64] | None

    def _init_bandit_state(self, fixed: str | None) -> None:
        self._init_generators()
        self._fixed_instance = fixed
        self._rows = np.arange(self.num_envs)
        self._all_true = np.ones(self.num_envs, dtype=np.bool_)
        self._has_reset = False
        self._last_actions: NDArray[np.int64] | None = None
        self._last_rewards: NDArray[np.float64] | None = None

    def _final_observations(self) -> NDArray[np.object_]:
        raise NotImplementedError

    def _rewards(self, expected: NDArray[np.float64], rngs: list[np.random.Generator]) -> Any:
        """The pulls' rewards, one draw from each sub-env's generator, in sub-env order."""
        raise NotImplementedError

    def _instances_drawn(self, resample: NDArray[np.bool_]) -> None:
        """Bookkeeping after :meth:`_draw_instances` set the means of ``resample``."""
        assert self._means is not None
        self._optimal = self._means.max(axis=1)
        if self._last_actions is not None:
            self._last_actions[resample] = -1

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

    def step(
        self, actions: Any
    ) -> tuple[Any, NDArray[np.float64], NDArray[np.bool_], NDArray[np.bool_], dict[str, Any]]:
        """Pull one arm in every sub-env; each terminates and is reset in this same step.

        Parameters
        ----------
        actions
            integer array of shape ``(num_envs,)`` with entries in ``[0, K)``.

        Returns
        -------
        tuple[Any, NDArray[np.float64], NDArray[np.bool_], NDArray[np.bool_], dict[str, Any]]
            ``(obs, rewards, terminated, truncated, infos)``: the new episodes'
            observations, float64 rewards ``(num_envs,)``, all-True ``terminated``,
            all-False ``truncated``, and infos with float64 arrays ``expected_reward``,
            ``optimal_expected_reward`` and ``regret`` (see :func:`vector_step_infos`).
        """
        self._require_reset()
        means = self._require_means()
        assert self._optimal is not None
        arms = check_action_batch(actions, self.num_envs, self.num_arms)
        # One draw per sub-env from its own generator, exactly as the single env draws it
        # (the only per-sub-env Python work; everything else is vectorized).
        rngs = cast("list[np.random.Generator]", self._rngs)  # all made by reset()
        expected = means[self._rows, arms]
        rewards = self._rewards(expected, rngs)
        optimal = self._optimal.copy()
        regret = optimal - expected
        self._last_actions = arms  # a private copy made by check_action_batch
        self._last_rewards = rewards.copy()
        every = self._all_true
        step_info = {
            "expected_reward": expected,
            "optimal_expected_reward": optimal,
            "regret": regret,
        }
        infos = vector_step_infos(step_info, every, self._final_observations())
        return self._observations(), rewards, every.copy(), ~every, infos

    def render(self) -> tuple[str, ...] | None:
        """With ``render_mode="ansi"``, one line of text per sub-env; otherwise ``None``."""
        if self.render_mode is None:
            warn_no_render_mode(self)
            return None
        name, shape = self.family, self._render_shape()
        if self._means is None:
            return tuple(bandit_summary(name, shape, None, None, "") for _ in range(self.num_envs))
        texts = []
        for i in range(self.num_envs):
            last: tuple[int, float] | None = None
            if self._last_actions is not None and self._last_rewards is not None:
                arm = int(self._last_actions[i])
                last = None if arm < 0 else (arm, float(self._last_rewards[i]))
            texts.append(bandit_summary(name, shape, self._means[i], last, self.reward_format))
        return tuple(texts)


class FeatureBanditInstance(BanditMeans):
    """An instance of arm features ``φ`` and a parameter ``θ`` (the linear and neural bandits),
    single or vector: its two parts, given to the constructor or drawn at the first reset.

    A single env holds ``None`` for a part until it is drawn, a vector env zeros; a part the
    constructor fixed (``_fixed_features`` / ``_fixed_theta``) is readable before any reset.
    """

    _features: NDArray[np.float64] | None
    _theta: NDArray[np.float64] | None
    _fixed_features: bool = False
    _fixed_theta: bool = False

    def _instance_part(self, part: NDArray[np.float64] | None, fixed: bool) -> NDArray[np.float64]:
        if not fixed:
            self._require_means()
        return self._drawn_copy(part)

    @property
    def features(self) -> NDArray[np.float64]:
        """The arm features ``Φ`` of the current instance, ``(K, D)`` for a single env and
        ``(num_envs, K, D)`` for a vector env (a read-only copy)."""
        return self._instance_part(self._features, self._fixed_features)

    @property
    def theta(self) -> NDArray[np.float64]:
        """The parameter ``θ`` of the current instance, ``(D,)`` for a single env and
        ``(num_envs, D)`` for a vector env (a read-only copy); ``D`` is the length of an arm's
        observed row."""
        return self._instance_part(self._theta, self._fixed_theta)


#: Bytes each sub-env of a native vector env costs beyond its arrays (its numpy generator).
SUB_ENV_BYTES = 1024


def check_bandit_fits(num_envs: int, num_arms: int, bytes_per_arm: int, detail: str = "") -> None:
    """Refuse, before anything is allocated, a bandit whose arrays of ``bytes_per_arm`` bytes
    per arm and sub-env would not fit in memory: a ``ValueError`` naming ``num_arms`` (and
    ``num_envs`` for a vector env, ``num_envs > 0``; ``0`` for a single env) and the memory
    needed (:func:`~delight_gym._checks.check_would_fit`); ``detail`` ends the argument list
    (``", dim=20"``)."""
    envs = max(num_envs, 1)
    overhead = SUB_ENV_BYTES * num_envs
    what = f"num_arms={num_arms}{detail}"
    if num_envs:
        what = f"num_envs={num_envs} x {what}"
    check_would_fit(envs * num_arms * bytes_per_arm + overhead, what)


# ------------------------------------------------------------------- Gaussian rewards
class GaussianBanditEnv(OneStepBanditEnv[NDArray[np.float32]]):
    """A one-step bandit whose reward is the arm's mean plus ``noise·z``, one standard normal
    ``z`` from ``self.np_random`` per pull (also when ``noise == 0``), and whose observation
    is a copy of the float32 array ``_obs``."""

    _obs: NDArray[np.float32] | None
    noise: float

    def _observation(self) -> NDArray[np.float32]:
        assert self._obs is not None
        return self._obs.copy()

    def _reward(self, expected: float) -> float:
        return expected + self.noise * float(self.np_random.standard_normal())


class GaussianBanditVectorEnv(OneStepBanditVectorEnv):
    """The vector form of :class:`GaussianBanditEnv`: one standard normal from each sub-env's
    generator per step; the observations are a copy of ``_obs`` (``(num_envs, ...)``)."""

    _obs: NDArray[np.float32] | None
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
def unit_box(shape: tuple[int, ...]) -> spaces.Space[NDArray[np.float32]]:
    """``Box(-1, 1, shape, float32)``, the contextual bandits' observation space."""
    box = spaces.Box(-1.0, 1.0, shape=shape, dtype=np.float32)
    return cast("spaces.Space[NDArray[np.float32]]", box)  # Box is typed for any dtype


class ContextualBanditEnv(GaussianBanditEnv):
    """A Gaussian one-step bandit whose arm means depend on a context drawn at every
    :meth:`reset`.

    Subclasses implement :meth:`_draw_context` (from ``self.np_random``, setting ``_means``,
    ``_optimal`` and ``_obs``). ``step`` adds ``info["optimal_action"]``.
    """

    @property
    def reward_scale(self) -> float:
        """Width of an interval holding every mean reward (set by each family)."""
        raise NotImplementedError

    def _draw_context(self) -> None:
        raise NotImplementedError

    def _start_episode(self) -> NDArray[np.float32]:
        self._draw_context()
        return self._observation()

    def step(self, action: Any) -> tuple[NDArray[np.float32], float, bool, bool, dict[str, Any]]:
        """Pull arm ``action`` under the current context; the episode ends after this pull.

        ``info`` holds ``expected_reward``, ``optimal_expected_reward`` and ``regret`` (Python
        floats, under the current context) and ``optimal_action`` (a Python int, the lowest
        best arm). The observation returned is the context just played.
        """
        self._require_reset()
        best = self.optimal_arm
        obs, reward, terminated, truncated, info = super().step(action)
        info["optimal_action"] = best
        return obs, reward, terminated, truncated, info


class ContextualBanditVectorEnv(GaussianBanditVectorEnv):
    """``num_envs`` independent contextual bandits; every step pulls, then draws each sub-env's
    next context from its own generator (as a single env's next ``reset`` does).

    Subclasses implement :meth:`_draw_contexts` (each sub-env's context from ``self._rng(j)``,
    then ``_means``, ``_optimal`` and ``_obs``). ``step``'s infos add ``optimal_action``
    (int64).
    """

    @property
    def reward_scale(self) -> float:
        """Width of an interval holding every mean reward (set by each family)."""
        raise NotImplementedError

    def _draw_contexts(self) -> None:
        raise NotImplementedError

    def _start_episodes(self) -> None:
        """Draw every sub-env's context (the contextual bandits' one random draw at a reset)."""
        self._draw_contexts()

    def _final_observations(self) -> NDArray[np.object_]:
        final = self._observations()
        final.flags.writeable = False  # the entries are views of this one copy
        return np.fromiter(final, dtype=object, count=self.num_envs)

    def step(
        self, actions: Any
    ) -> tuple[Any, NDArray[np.float64], NDArray[np.bool_], NDArray[np.bool_], dict[str, Any]]:
        """Pull one arm in every sub-env under its current context, then draw the next
        contexts (``SAME_STEP`` autoreset: ``final_obs`` holds the contexts just played).

        Returns
        -------
        tuple
            ``(obs, rewards, terminated, truncated, infos)`` as
            :meth:`OneStepBanditVectorEnv.step`, ``obs`` being the next contexts' observations
            and ``infos`` (and ``infos["final_info"]``) also holding ``optimal_action``
            (int64, ``(num_envs,)``) with its mask.
        """
        self._require_reset()
        best = self.optimal_arm
        _, rewards, terminated, truncated, infos = super().step(actions)
        every = np.ones(self.num_envs, dtype=np.bool_)
        for target in (infos, infos["final_info"]):
            target["optimal_action"] = best.copy()
            target["_optimal_action"] = every.copy()
        self._draw_contexts()
        return self._observations(), rewards, terminated, truncated, infos
