"""Linear-Gaussian bandits: a single Gymnasium env and a native vectorized form.

Arm ``a`` has a feature vector ``φ(a)`` and pays ``φ(a)ᵀθ* + σ·N(0, 1)``. The *instance* is
the features and ``θ*`` (``features=`` / ``theta=`` fix them), drawn at the first reset.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from numpy.typing import ArrayLike, NDArray

from delight_gym._checks import (
    check_finite_array,
    check_magnitude,
    check_nonnegative_float,
    check_positive_int,
)
from delight_gym.envs._bandit import (
    FeatureBanditInstance,
    GaussianBanditEnv,
    GaussianBanditVectorEnv,
    check_bandit_fits,
    float32_box,
)
from delight_gym.envs._base import check_agrees, instance_array, set_vector_spaces

__all__ = [
    "DEFAULT_DIM",
    "DEFAULT_LINEAR_NUM_ARMS",
    "LinearBanditEnv",
    "LinearBanditVectorEnv",
]

#: Number of arms used when neither ``num_arms`` nor ``features`` is given (the paper's K).
DEFAULT_LINEAR_NUM_ARMS = 100
#: Feature dimension used when neither ``dim`` nor ``features`` / ``theta`` is given.
DEFAULT_DIM = 10

#: Bound of the observation ``Box``: the largest finite float32 (finite bounds keep
#: ``check_env`` free of warnings; an observation never holds an infinity).
_OBS_BOUND = float(np.finfo(np.float32).max)


def _draw_features(rng: np.random.Generator, num_arms: int, dim: int) -> NDArray[np.float64]:
    """``φ(a) ~ N(0, I_D / D)`` i.i.d. over arms."""
    return rng.standard_normal((num_arms, dim)) / np.sqrt(dim)


def _draw_theta(rng: np.random.Generator, dim: int) -> NDArray[np.float64]:
    """``θ* ~ N(0, I_D)``."""
    return rng.standard_normal(dim)


def _arm_means(features: NDArray[np.float64], theta: NDArray[np.float64]) -> NDArray[np.float64]:
    """``φ(a)ᵀθ*`` for every arm, over any leading batch dimensions."""
    # An elementwise product summed over the contiguous last axis, not a BLAS product: the
    # summation order then does not depend on the batch, so batched means are bit-identical.
    return np.sum(features * theta[..., None, :], axis=-1)


_FEATURE_AXES = ("num_arms", "dim")


def _check_features(value: Any, num_envs: int | None) -> NDArray[np.float64]:
    arr = instance_array(check_finite_array(value, "features"), "features", _FEATURE_AXES, num_envs)
    check_magnitude(
        arr, "features", _OBS_BOUND, why="(the float32 range: the observation is float32)"
    )
    return arr


def _resolve_shape(
    num_arms: Any,
    dim: Any,
    features: NDArray[np.float64] | None,
    theta: NDArray[np.float64] | None,
) -> tuple[int, int]:
    """``(num_arms, dim)``, checked and reconciled with the given ``features`` / ``theta``."""
    k = None if num_arms is None else check_positive_int(num_arms, "num_arms")
    d = None if dim is None else check_positive_int(dim, "dim")
    if features is not None:
        fk, fd = features.shape[-2:]
        for name, given, found in (("num_arms", k, fk), ("dim", d, fd)):
            check_agrees(name, given, found, f"features of shape {features.shape}")
        k, d = fk, fd
    if theta is not None:
        td = theta.shape[-1]
        if d is not None and td != d:
            source = "the features' dimension" if dim is None else "dim"
            raise ValueError(
                f"theta has dimension {td} (shape {theta.shape}) but {source} is {d}; "
                "make them agree"
            )
        d = td
    return (DEFAULT_LINEAR_NUM_ARMS if k is None else k, DEFAULT_DIM if d is None else d)


class _LinearBanditParameters(FeatureBanditInstance):
    """The keywords shared by the single and vector linear bandits, checked once."""

    family = "LinearBandit"
    num_arms: int
    dim: int
    noise: float

    def _set_parameters(
        self,
        num_arms: Any,
        dim: Any,
        noise: Any,
        features: ArrayLike | None,
        theta: ArrayLike | None,
        render_mode: str | None,
        num_envs: int | None = None,
    ) -> tuple[NDArray[np.float64] | None, NDArray[np.float64] | None]:
        """Check and store the keywords; return the given ``features`` and ``theta`` (or None)."""
        fixed_features = None if features is None else _check_features(features, num_envs)
        fixed_theta = None
        if theta is not None:
            checked = check_finite_array(theta, "theta")
            fixed_theta = instance_array(checked, "theta", ("dim",), num_envs)
        self.num_arms, self.dim = _resolve_shape(num_arms, dim, fixed_features, fixed_theta)
        # Per arm and sub-env: features and their draw (float64), the observation (float32),
        # the mean; the observation space's bounds (two float32 and two bool arrays) once.
        envs = num_envs or 1
        per_arm = 20 * self.dim + 16 + (10 * self.dim) // envs
        check_bandit_fits(num_envs or 0, self.num_arms, per_arm, f", dim={self.dim}")
        self.noise = check_nonnegative_float(noise, "noise")
        self._set_render_mode(render_mode)
        self._fixed_features = fixed_features is not None
        self._fixed_theta = fixed_theta is not None
        return fixed_features, fixed_theta

    def _fixed_reason(self) -> str | None:
        # resample redraws the parts not given, so it is refused only when both were given.
        if self._fixed_features and self._fixed_theta:
            return "this env was built with fixed features and theta"
        return None

    def _render_shape(self) -> str:
        return f"K={self.num_arms} D={self.dim}"


class LinearBanditEnv(_LinearBanditParameters, GaussianBanditEnv):
    """A ``K``-armed linear-Gaussian bandit: arm ``a`` pays ``φ(a)ᵀθ* + σ·N(0, 1)``.

    The instance is drawn at the first :meth:`reset` and kept: the features ``φ(a) ~ N(0, I_D /
    D)``, then ``θ* ~ N(0, I_D)``; ``features`` / ``theta`` fix their part, and
    ``reset(options={"resample": True})`` redraws the parts not given.

    - Action space: ``Discrete(K)`` (a ``ValueError`` naming ``action`` outside it).
    - Observation space: ``Box(-F, F, (K, D), float32)`` (``F`` the largest float32), the features.
    - Rewards: ``φ(a)ᵀθ* + noise·z``, one ``z ~ N(0, 1)`` per step (also when ``noise == 0``).
    - Episode end: one pull; ``info``: ``expected_reward``, ``optimal_expected_reward``, ``regret``.
    - Arguments: ``num_arms`` (100), ``dim`` (10), ``noise`` (1), ``features`` (``(K, D)``),
      ``theta`` (``(D,)``), ``render_mode`` (``None`` or ``"ansi"``).
    - Version history: v0, the initial version (delight_gym 0.1.0).

    >>> from delight_gym.envs import LinearBanditEnv
    >>> env = LinearBanditEnv(num_arms=4, dim=2, noise=0.5)
    >>> obs, info = env.reset(seed=42)
    >>> obs.shape, env.means.round(3), env.optimal_arm
    ((4, 2), array([ 0.624, -0.576,  0.809,  0.189]), 2)
    >>> obs, reward, terminated, truncated, info = env.step(1)
    >>> round(reward, 3), terminated, round(info["regret"], 3)
    (-0.137, True, 1.385)
    >>> _ = env.reset(seed=7)  # reseeds the reward noise, keeps the instance
    >>> env.means.round(3)
    array([ 0.624, -0.576,  0.809,  0.189])
    """

    def __init__(
        self,
        num_arms: int | None = None,
        dim: int | None = None,
        noise: float = 1.0,
        features: ArrayLike | None = None,
        theta: ArrayLike | None = None,
        render_mode: str | None = None,
    ) -> None:
        fixed_features, fixed_theta = self._set_parameters(
            num_arms, dim, noise, features, theta, render_mode
        )
        self.action_space = spaces.Discrete(self.num_arms)
        self.observation_space = float32_box((self.num_arms, self.dim), _OBS_BOUND)
        self._init_bandit_state(self._fixed_reason())
        self._features: NDArray[np.float64] | None = fixed_features
        self._theta: NDArray[np.float64] | None = fixed_theta
        if fixed_features is not None and fixed_theta is not None:
            self._set_instance(fixed_features, fixed_theta)

    def _set_instance(self, features: NDArray[np.float64], theta: NDArray[np.float64]) -> None:
        self._features, self._theta = features, theta
        self._means = _arm_means(features, theta)
        self._optimal = float(self._means.max())
        self._obs = features.astype(np.float32)
        self._last_pull = None

    def _draw_instance(self) -> None:
        features = self._features
        if not self._fixed_features or features is None:
            features = _draw_features(self.np_random, self.num_arms, self.dim)
        theta = self._theta
        if not self._fixed_theta or theta is None:
            theta = _draw_theta(self.np_random, self.dim)
        self._set_instance(features, theta)


class LinearBanditVectorEnv(_LinearBanditParameters, GaussianBanditVectorEnv):  # type: ignore[misc]
    """``num_envs`` independent linear bandits, stepped together without subprocesses.

    Sub-env ``i`` behaves exactly like a :class:`LinearBanditEnv` reset with seed ``seed + i``.
    Spaces are batched; autoreset is ``SAME_STEP`` (never a new instance). ``features`` may be
    ``(num_envs, K, D)`` or ``(K, D)`` shared by all, ``theta`` ``(num_envs, D)`` or ``(D,)``;
    ``reset(options={"resample": mask})`` redraws the sub-envs in ``mask``.

    >>> import numpy as np
    >>> from delight_gym.envs import LinearBanditVectorEnv
    >>> envs = LinearBanditVectorEnv(num_envs=3, num_arms=4, dim=2, noise=0.5)
    >>> obs, infos = envs.reset(seed=42)
    >>> envs.means.round(3)  # row 0 is LinearBanditEnv(num_arms=4, dim=2) reset with seed 42
    array([[ 0.624, -0.576,  0.809,  0.189],
           [ 0.453, -0.464,  1.946,  0.169],
           [ 0.348, -0.324,  0.01 ,  0.268]])
    >>> obs, rewards, terminated, truncated, infos = envs.step(np.array([2, 0, 3]))
    >>> obs.shape, bool(terminated.all())
    ((3, 4, 2), True)
    >>> infos["final_info"]["regret"].round(3)  # SAME_STEP: the terminal step's infos
    array([0.   , 1.493, 0.08 ])
    """

    _features: NDArray[np.float64]  # zeros until drawn (see FeatureBanditInstance)
    _theta: NDArray[np.float64]

    def __init__(
        self,
        num_envs: int,
        num_arms: int | None = None,
        dim: int | None = None,
        noise: float = 1.0,
        features: ArrayLike | None = None,
        theta: ArrayLike | None = None,
        render_mode: str | None = None,
    ) -> None:
        self.num_envs = check_positive_int(num_envs, "num_envs")
        fixed_features, fixed_theta = self._set_parameters(
            num_arms, dim, noise, features, theta, render_mode, self.num_envs
        )
        n, k, d = self.num_envs, self.num_arms, self.dim
        set_vector_spaces(self, spaces.Discrete(k), float32_box((k, d), _OBS_BOUND))
        self._features = np.zeros((n, k, d)) if fixed_features is None else fixed_features
        self._theta = np.zeros((n, d)) if fixed_theta is None else fixed_theta
        means = None
        if self._fixed_features and self._fixed_theta:
            means = _arm_means(self._features, self._theta)
            self._obs = self._features.astype(np.float32)
        self._init_bandit_state(self._fixed_reason(), means)

    def _allocate_instances(self) -> None:
        self._means = np.empty((self.num_envs, self.num_arms))
        self._obs = np.empty((self.num_envs, self.num_arms, self.dim), dtype=np.float32)

    def _draw_instances(self, resample: NDArray[np.bool_]) -> None:
        assert self._means is not None and self._obs is not None
        for j in np.flatnonzero(resample).tolist():
            rng = self._rng(j)  # draws in the single env's order: features, then theta
            if not self._fixed_features:
                self._features[j] = _draw_features(rng, self.num_arms, self.dim)
            if not self._fixed_theta:
                self._theta[j] = _draw_theta(rng, self.dim)
        self._means[resample] = _arm_means(self._features[resample], self._theta[resample])
        self._obs[resample] = self._features[resample]  # rounded to float32
        self._instances_drawn(resample)
