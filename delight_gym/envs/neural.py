"""NeuralBandit-v0: ``K`` persistent arms whose mean reward is nonlinear in their features
(NeuralUCB's and Neural Thompson Sampling's synthetic functions), single and vector.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from gymnasium import spaces
from numpy.typing import NDArray

from delight_gym._checks import (
    check_choice,
    check_nonnegative_float,
    check_nonnegative_int,
    check_positive_int,
    check_would_fit,
)
from delight_gym.envs._bandit import (
    ContextualBanditEnv,
    ContextualBanditVectorEnv,
    FeatureBanditInstance,
    check_bandit_fits,
    float32_box,
)
from delight_gym.envs._base import read_only_copy, set_vector_spaces

__all__ = [
    "DEFAULT_NEURAL_DIM",
    "DEFAULT_NEURAL_NUM_ARMS",
    "NEURAL_REWARDS",
    "NeuralBanditEnv",
    "NeuralBanditVectorEnv",
    "check_neural_arms",
    "check_neural_fits",
    "check_neural_reward",
    "draw_unit_sphere",
    "neural_bandit_nbytes",
    "neural_mean_reward",
]

#: Number of arms of the neural bandit when ``num_arms`` is not given.
DEFAULT_NEURAL_NUM_ARMS = 100
#: Dimension of the neural bandit's arm features when ``dim`` is not given (NeuralUCB's d).
DEFAULT_NEURAL_DIM = 20
#: The neural bandit's mean-reward functions of ``s = xᵀθ`` and each one's reward scale.
NEURAL_REWARDS: dict[str, float] = {"quadratic": 10.0, "cosine": 2.0}


def neural_mean_reward(projection: NDArray[np.float64], reward: str) -> NDArray[np.float64]:
    """``h(s)`` for projections ``s = xᵀθ``: ``10 s²`` (``"quadratic"``) or ``cos(3 s)``."""
    if check_neural_reward(reward) == "quadratic":
        return 10.0 * projection * projection
    return np.cos(3.0 * projection)


def draw_unit_sphere(rng: np.random.Generator, shape: tuple[int, ...]) -> NDArray[np.float64]:
    """Uniform points of the unit sphere along the last axis: normalised standard normals."""
    z = rng.standard_normal(shape)
    return z / np.sqrt(np.sum(z * z, axis=-1, keepdims=True))


def check_neural_reward(value: Any, name: str = "reward") -> str:
    """``value`` if it is a key of :data:`NEURAL_REWARDS`, else a ``ValueError``."""
    return check_choice(value, list(NEURAL_REWARDS), name)


def neural_bandit_nbytes(num_arms: int, dim: int, context_dim: int, num_envs: int = 0) -> int:
    """Bytes a neural bandit's arrays take (``num_envs = 0``: a single env)."""
    # Per arm and sub-env: features and their draw (float64), mean and projection, the
    # float32 observation row; once: the observation space's bounds (float32 and bool).
    rows = num_arms * (dim + context_dim)
    per_env = num_arms * (24 * dim + 16) + 4 * rows
    return max(num_envs, 1) * per_env + 10 * rows


def check_neural_fits(num_arms: int, dim: int, context_dim: int, num_envs: int = 0) -> None:
    """Refuse, before anything is allocated, a neural bandit that would not fit in memory."""
    nbytes = neural_bandit_nbytes(num_arms, dim, context_dim, num_envs)
    # Bytes per arm and sub-env, rounded up (-(-a // b) is the ceiling of a / b).
    per_arm = -(-nbytes // (max(num_envs, 1) * num_arms))
    check_bandit_fits(num_envs, num_arms, per_arm, f", dim={dim}, context_dim={context_dim}")


#: Bytes per arm that every run of a neural bandit needs at least (``dim = 1``, one seed, no
#: network): the env's arrays and a round's float64 inputs of the agent, a few copies each.
_NEURAL_MIN_BYTES_PER_ARM = neural_bandit_nbytes(1, 1, 0) + 4 * 8 * 3


def check_neural_arms(value: Any, name: str = "num_arms") -> int:
    """``value`` as an int if the smallest neural-bandit run with that many arms (``dim = 1``,
    one seed) fits in memory (the command line's ``--arms``), else a ``ValueError``."""
    k = check_positive_int(value, name)
    check_would_fit(k * _NEURAL_MIN_BYTES_PER_ARM, f"{name}={k} (one seed, dim=1)")
    return k


class _NeuralParameters(FeatureBanditInstance):
    """The neural bandits' keywords, checked once, and the maths of an instance and a context."""

    family = "NeuralBandit"
    num_arms: int
    dim: int
    context_dim: int
    reward: str
    noise: float

    def _set_parameters(
        self,
        num_arms: Any,
        dim: Any,
        context_dim: Any,
        reward: Any,
        noise: Any,
        render_mode: str | None,
        num_envs: int = 0,
    ) -> None:
        self.num_arms = check_positive_int(num_arms, "num_arms")
        self.dim = check_positive_int(dim, "dim")
        self.context_dim = check_nonnegative_int(context_dim, "context_dim")
        self.reward = check_neural_reward(reward)
        self.noise = check_nonnegative_float(noise, "noise")
        check_neural_fits(self.num_arms, self.dim, self.context_dim, num_envs)
        self._set_render_mode(render_mode)

    @property
    def input_dim(self) -> int:
        """Length of one arm's row ``x``: ``dim + context_dim``."""
        return self.dim + self.context_dim

    @property
    def reward_scale(self) -> float:
        """Width of the mean rewards' range: 10 (``"quadratic"``) or 2 (``"cosine"``)."""
        return NEURAL_REWARDS[self.reward]

    def _draw_arms(
        self, rng: np.random.Generator
    ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """A new instance: ``φ`` ``(K, dim)``, ``θ`` ``(D,)`` and ``φ(a)ᵀθ_φ`` ``(K,)``."""
        # A spawned child draws the instance, so that the env's own stream (contexts, noise)
        # does not depend on K or dim.
        spawned = rng.spawn(1)[0]
        features = draw_unit_sphere(spawned, (self.num_arms, self.dim))
        theta = draw_unit_sphere(spawned, (self.input_dim,))
        return features, theta, np.sum(features * theta[: self.dim], axis=-1)

    def _context_state(
        self,
        features: NDArray[np.float64],
        theta: NDArray[np.float64],
        arm_part: NDArray[np.float64],
        context: NDArray[np.float64],
    ) -> tuple[NDArray[np.float64], NDArray[np.float32]]:
        """The arm means ``(..., K)`` and observation ``(..., K, D)`` of an instance under
        ``context`` ``(..., C)`` (ignored when ``C = 0``)."""
        if self.context_dim == 0:
            projection = arm_part
            rows = features.astype(np.float32)
        else:
            # x_a = [φ(a), c] / √2, so xᵀθ = (φ(a)ᵀθ_φ + cᵀθ_c) / √2.
            context_part = np.sum(context * theta[..., self.dim :], axis=-1)
            projection = (arm_part + context_part[..., None]) / math.sqrt(2.0)
            shape = (*features.shape[:-1], self.context_dim)
            joined = np.concatenate([features, np.broadcast_to(context[..., None, :], shape)], -1)
            rows = (joined / math.sqrt(2.0)).astype(np.float32)
        return neural_mean_reward(projection, self.reward), rows

    def _render_shape(self) -> str:
        return f"K={self.num_arms} D={self.input_dim} {self.reward}"


class NeuralBanditEnv(_NeuralParameters, ContextualBanditEnv):
    """A fixed set of ``K`` arms whose mean reward is nonlinear in their features.

    The instance, drawn at the first :meth:`reset` and kept (``reset(options={"resample":
    True})`` draws a new one): features ``φ(a)`` uniform on the unit sphere of ``R^dim``, and
    ``θ`` uniform on that of ``R^(dim + C)``. With ``context_dim = C > 0`` each reset draws a
    context ``c`` and arm ``a``'s row is ``x_a = [φ(a), c] / √2``, else ``x_a = φ(a)``.

    - Action space: ``Discrete(K)`` (a ``ValueError`` naming ``action`` outside it).
    - Observation space: ``Box(-1, 1, (K, dim + C), float32)``, row ``a`` being ``x_a``.
    - Rewards: ``h(x_aᵀθ) + noise·z``, ``h(s) = 10 s²`` or ``cos(3 s)``, ``z ~ N(0, 1)``.
    - Episode end: one pull; ``info``: ``expected_reward``, ``optimal_expected_reward``, ``regret``,
      ``optimal_action``.
    - Arguments: ``num_arms`` (100), ``dim`` (20), ``context_dim`` (0), ``reward``
      (``"quadratic"`` or ``"cosine"``), ``noise`` (0.1), ``render_mode``.
    - Version history: v0, the initial version (delight_gym 0.2.0).

    >>> env = NeuralBanditEnv(num_arms=3, dim=2, reward="cosine")
    >>> obs, info = env.reset(seed=0)
    >>> obs.shape, env.means.round(3), env.optimal_arm
    ((3, 2), array([ 0.759, -0.552, -0.796]), 0)
    >>> obs, reward, terminated, truncated, info = env.step(2)
    >>> round(info["regret"], 3), info["optimal_action"]
    (1.556, 0)
    """

    def __init__(
        self,
        num_arms: int = DEFAULT_NEURAL_NUM_ARMS,
        dim: int = DEFAULT_NEURAL_DIM,
        context_dim: int = 0,
        reward: str = "quadratic",
        noise: float = 0.1,
        render_mode: str | None = None,
    ) -> None:
        self._set_parameters(num_arms, dim, context_dim, reward, noise, render_mode)
        self.action_space = spaces.Discrete(self.num_arms)
        self.observation_space = float32_box((self.num_arms, self.input_dim))
        self._init_bandit_state(None)
        self._arm_part: NDArray[np.float64] | None = None
        self._context = np.zeros(self.context_dim)

    def _has_instance(self) -> bool:
        return self._features is not None

    def _draw_instance(self) -> None:
        self._features, self._theta, self._arm_part = self._draw_arms(self.np_random)
        self._last_pull = None
        if self.context_dim == 0:
            self._set_means()

    def _draw_context(self) -> None:
        if self.context_dim == 0:
            return  # nothing to draw; the means and rows were set with the instance
        self._context = draw_unit_sphere(self.np_random, (self.context_dim,))
        self._set_means()

    def _set_means(self) -> None:
        assert self._features is not None and self._theta is not None
        assert self._arm_part is not None
        self._means, self._obs = self._context_state(
            self._features, self._theta, self._arm_part, self._context
        )
        self._optimal = float(self._means.max())

    @property
    def context(self) -> NDArray[np.float64]:
        """The current context ``c``, shape ``(context_dim,)`` (a read-only copy)."""
        self._require_means()
        return read_only_copy(self._context)


class NeuralBanditVectorEnv(_NeuralParameters, ContextualBanditVectorEnv):  # type: ignore[misc]
    """``num_envs`` independent neural bandits stepped together (no subprocesses).

    Sub-env ``i`` behaves exactly as a :class:`NeuralBanditEnv` (same keywords) reset with
    seed ``seed + i``. Spaces are batched; autoreset is ``SAME_STEP``; infos are ``(num_envs,)``
    arrays; ``reset(options={"resample": mask})`` redraws the sub-envs in ``mask``.

    >>> envs = NeuralBanditVectorEnv(num_envs=2, num_arms=3, dim=2, reward="cosine")
    >>> obs, _ = envs.reset(seed=0)
    >>> envs.means.round(3)  # row 0 is NeuralBanditEnv(...) reset with seed 0
    array([[ 0.759, -0.552, -0.796],
           [-0.531, -0.988,  0.897]])
    """

    _features: NDArray[np.float64]  # zeros until drawn (see FeatureBanditInstance)
    _theta: NDArray[np.float64]

    def __init__(
        self,
        num_envs: int,
        num_arms: int = DEFAULT_NEURAL_NUM_ARMS,
        dim: int = DEFAULT_NEURAL_DIM,
        context_dim: int = 0,
        reward: str = "quadratic",
        noise: float = 0.1,
        render_mode: str | None = None,
    ) -> None:
        self.num_envs = check_positive_int(num_envs, "num_envs")
        self._set_parameters(num_arms, dim, context_dim, reward, noise, render_mode, num_envs)
        n, k = self.num_envs, self.num_arms
        set_vector_spaces(self, spaces.Discrete(k), float32_box((k, self.input_dim)))
        self._features = np.zeros((n, k, self.dim))
        self._theta = np.zeros((n, self.input_dim))
        self._arm_part = np.zeros((n, k))
        self._contexts = np.zeros((n, self.context_dim))
        self._init_bandit_state(None)

    def _allocate_instances(self) -> None:
        self._means = np.zeros((self.num_envs, self.num_arms))
        if self.context_dim == 0:  # the rows are the instance's own (else set per context)
            self._obs = np.zeros((self.num_envs, self.num_arms, self.dim), dtype=np.float32)

    def _draw_instances(self, resample: NDArray[np.bool_]) -> None:
        assert self._means is not None
        for j in np.flatnonzero(resample).tolist():
            self._features[j], self._theta[j], self._arm_part[j] = self._draw_arms(self._rng(j))
        if self._obs is not None and self.context_dim == 0:
            self._means[resample], self._obs[resample] = self._context_state(
                self._features[resample],
                self._theta[resample],
                self._arm_part[resample],
                self._contexts[resample],
            )
        self._instances_drawn(resample)

    def _draw_contexts(self) -> None:
        if self.context_dim == 0:
            return  # nothing to draw; the means and rows were set with the instances
        for j in range(self.num_envs):
            self._contexts[j] = draw_unit_sphere(self._rng(j), (self.context_dim,))
        self._means, self._obs = self._context_state(
            self._features, self._theta, self._arm_part, self._contexts
        )
        self._optimal = self._means.max(axis=1)
