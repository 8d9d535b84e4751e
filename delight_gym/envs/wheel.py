"""WheelBandit-v0: the wheel bandit of *Deep Bayesian Bandits Showdown*, single and vector."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from numpy.typing import NDArray

from delight_gym._checks import (
    check_finite_array,
    check_finite_float,
    check_nonnegative_float,
    check_positive_int,
    check_probability,
)
from delight_gym.envs._bandit import (
    BanditKeywords,
    ContextualBanditEnv,
    ContextualBanditVectorEnv,
    check_bandit_fits,
    float32_box,
)
from delight_gym.envs._base import set_vector_spaces

__all__ = [
    "WHEEL_NUM_ARMS",
    "WHEEL_SAFE_ARM",
    "WheelBanditEnv",
    "WheelBanditVectorEnv",
    "draw_disk_point",
    "wheel_means",
]

#: The wheel's arms: arms 0-3 are the quadrants' arms, arm 4 is the safe arm.
WHEEL_NUM_ARMS = 5
#: Index of the wheel's safe arm (the showdown's ``argmax(mean_v)`` with ``mean_v[4] = 1.2``).
WHEEL_SAFE_ARM = 4


def wheel_means(
    contexts: NDArray[np.float64],
    delta: float,
    mean_safe: float = 1.2,
    mean_other: float = 1.0,
    mean_large: float = 50.0,
) -> NDArray[np.float64]:
    """The wheel's arm means for contexts of any leading shape.

    Parameters
    ----------
    contexts : numpy.ndarray
        ``(..., 2)`` points of the unit disk.
    delta : float
        The radius from which the quadrant's arm pays ``mean_large``.
    mean_safe, mean_other, mean_large : float
        Mean of the safe arm (4), of the other arms, and of the quadrant's arm (0 for
        ``x₁ > 0, x₂ > 0``, 1 for ``x₁ > 0, x₂ <= 0``, 2 for ``x₁ <= 0, x₂ > 0``, else 3).

    Returns
    -------
    numpy.ndarray
        ``(..., 5)`` float64 means.
    """
    contexts = check_finite_array(contexts, "contexts")
    if contexts.ndim == 0 or contexts.shape[-1] != 2:
        raise ValueError(f"contexts must have shape (..., 2), got {contexts.shape}")
    return _wheel_means(contexts, *_check_wheel(delta, mean_safe, mean_other, mean_large))


def _check_wheel(delta: Any, *means: Any) -> tuple[float, ...]:
    """``delta`` in ``[0, 1]`` and the finite ``mean_safe``, ``mean_other``, ``mean_large``."""
    names = ("mean_safe", "mean_other", "mean_large")
    checked = check_probability(delta, "delta")
    return (checked, *(check_finite_float(m, n) for n, m in zip(names, means, strict=True)))


def _wheel_means(
    contexts: NDArray[np.float64],
    delta: float,
    mean_safe: float,
    mean_other: float,
    mean_large: float,
) -> NDArray[np.float64]:
    x1, x2 = contexts[..., 0], contexts[..., 1]
    means = np.full((*contexts.shape[:-1], WHEEL_NUM_ARMS), mean_other, dtype=np.float64)
    means[..., WHEEL_SAFE_ARM] = mean_safe
    quadrant = np.where(x1 > 0, np.where(x2 > 0, 0, 1), np.where(x2 > 0, 2, 3))
    value = np.where(np.hypot(x1, x2) >= delta, mean_large, mean_other)  # the quadrant's arm
    np.put_along_axis(means, quadrant[..., None], value[..., None], axis=-1)
    return means


def draw_disk_point(rng: np.random.Generator) -> NDArray[np.float64]:
    """A uniform point of the closed unit disk: pairs ``rng.uniform(-1, 1, 2)`` until one has
    norm ``<= 1`` (the showdown's rejection sampler)."""
    while True:
        point = rng.uniform(-1.0, 1.0, 2)
        if np.hypot(point[0], point[1]) <= 1.0:
            return point


class _WheelParameters(BanditKeywords):
    """The keywords shared by the single and vector wheel bandits, checked once."""

    family = "WheelBandit"
    num_arms: int
    delta: float
    mean_safe: float
    mean_other: float
    mean_large: float
    noise: float

    def _set_parameters(
        self,
        delta: Any,
        mean_safe: Any,
        mean_other: Any,
        mean_large: Any,
        noise: Any,
        render_mode: str | None,
    ) -> None:
        checked = _check_wheel(delta, mean_safe, mean_other, mean_large)
        self.delta, self.mean_safe, self.mean_other, self.mean_large = checked
        self.noise = check_nonnegative_float(noise, "noise")
        self.num_arms = WHEEL_NUM_ARMS
        self._set_render_mode(render_mode)

    @property
    def reward_scale(self) -> float:
        """Width of the mean rewards' range (49 at the defaults)."""
        values = (self.mean_safe, self.mean_other, self.mean_large)
        return max(values) - min(values)

    def _context_state(
        self, contexts: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], NDArray[np.float32]]:
        means = _wheel_means(contexts, self.delta, self.mean_safe, self.mean_other, self.mean_large)
        return means, contexts.astype(np.float32)

    def _render_shape(self) -> str:
        return f"delta={self.delta}"


class WheelBanditEnv(_WheelParameters, ContextualBanditEnv):
    """The wheel bandit of *Deep Bayesian Bandits Showdown* (Riquelme, Tucker & Snoek, 2018).

    Every episode draws a context ``x`` uniform in the unit disk (:func:`draw_disk_point`).
    Arm 4 pays ``mean_safe``, arms 0-3 ``mean_other``, except the arm of ``x``'s quadrant when
    ``‖x‖ >= delta``, which pays ``mean_large`` (:func:`wheel_means`). There is no instance.

    - Action space: ``Discrete(5)`` (a ``ValueError`` naming ``action`` outside it).
    - Observation space: ``Box(-1, 1, (2,), float32)``, the context (float64: :attr:`context`).
    - Rewards: the arm's mean plus ``noise·z``, one ``z ~ N(0, 1)`` per step.
    - Episode end: one pull; ``info``: ``expected_reward``, ``optimal_expected_reward``, ``regret``,
      ``optimal_action``.
    - Arguments: ``delta`` (0.95), ``mean_safe`` (1.2), ``mean_other`` (1), ``mean_large`` (50),
      ``noise`` (0.01), ``render_mode`` (``None`` or ``"ansi"``).
    - Version history: v0, the initial version (delight_gym 0.2.0).

    >>> env = WheelBanditEnv(delta=0.5)
    >>> obs, info = env.reset(seed=3)
    >>> obs.round(3), env.means
    (array([-0.829, -0.526], dtype=float32), array([ 1. ,  1. ,  1. , 50. ,  1.2]))
    >>> obs, reward, terminated, truncated, info = env.step(4)
    >>> round(info["regret"], 3), info["optimal_action"], terminated
    (48.8, 3, True)
    """

    def __init__(
        self,
        delta: float = 0.95,
        mean_safe: float = 1.2,
        mean_other: float = 1.0,
        mean_large: float = 50.0,
        noise: float = 0.01,
        render_mode: str | None = None,
    ) -> None:
        self._set_parameters(delta, mean_safe, mean_other, mean_large, noise, render_mode)
        self.action_space = spaces.Discrete(WHEEL_NUM_ARMS)
        self.observation_space = float32_box((2,))
        self._init_bandit_state(None)
        self._context: NDArray[np.float64] | None = None

    def _has_instance(self) -> bool:
        return True  # nothing to draw: the keywords fix the wheel

    def _draw_instance(self) -> None:
        pass  # resample: still nothing to draw

    def _draw_context(self) -> None:
        self._context = draw_disk_point(self.np_random)
        self._means, self._obs = self._context_state(self._context)
        self._optimal = float(self._means.max())

    @property
    def context(self) -> NDArray[np.float64]:
        """The current context ``x``, shape ``(2,)`` (float64, a read-only copy)."""
        return self._drawn_copy(self._context, "the context is drawn at reset(); call reset()")


class WheelBanditVectorEnv(_WheelParameters, ContextualBanditVectorEnv):  # type: ignore[misc]
    """``num_envs`` independent wheel bandits stepped together (no subprocesses).

    Sub-env ``i`` behaves exactly as a :class:`WheelBanditEnv` (same keywords) reset with
    seed ``seed + i``. Spaces are batched; autoreset is ``SAME_STEP`` (``final_obs`` holds
    the contexts just played); ``step``'s infos are ``(num_envs,)`` arrays.

    >>> envs = WheelBanditVectorEnv(num_envs=2, delta=0.5)
    >>> obs, _ = envs.reset(seed=3)
    >>> obs.round(3)  # row 0 is WheelBanditEnv(delta=0.5) reset with seed 3
    array([[-0.829, -0.526],
           [ 0.886,  0.023]], dtype=float32)
    >>> obs, rewards, terminated, truncated, infos = envs.step(np.array([4, 4]))
    >>> infos["regret"].round(3), infos["optimal_action"]
    (array([48.8, 48.8]), array([3, 0]))
    """

    def __init__(
        self,
        num_envs: int,
        delta: float = 0.95,
        mean_safe: float = 1.2,
        mean_other: float = 1.0,
        mean_large: float = 50.0,
        noise: float = 0.01,
        render_mode: str | None = None,
    ) -> None:
        self.num_envs = check_positive_int(num_envs, "num_envs")
        # Per sub-env: context, means, observation, optimum and flags (about 160 bytes).
        check_bandit_fits(self.num_envs, WHEEL_NUM_ARMS, 32)
        self._set_parameters(delta, mean_safe, mean_other, mean_large, noise, render_mode)
        set_vector_spaces(self, spaces.Discrete(WHEEL_NUM_ARMS), float32_box((2,)))
        self._contexts = np.zeros((self.num_envs, 2))
        self._init_bandit_state(None)

    def _allocate_instances(self) -> None:
        self._means = np.zeros((self.num_envs, WHEEL_NUM_ARMS))

    def _draw_instances(self, resample: NDArray[np.bool_]) -> None:
        self._instances_drawn(resample)  # nothing to draw: the keywords fix the wheel

    def _draw_contexts(self) -> None:
        for j in range(self.num_envs):
            self._contexts[j] = draw_disk_point(self._rng(j))
        self._means, self._obs = self._context_state(self._contexts)
        self._optimal = self._means.max(axis=1)
