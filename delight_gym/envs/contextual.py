"""Contextual bandits: the wheel bandit and a many-armed bandit with nonlinear mean rewards.

Both are one-step bandits (:mod:`delight_gym.envs._base`) whose arm means change every
episode with a context drawn at ``reset``: ``info`` gives the pseudo-regret of the pull under
the current context and the optimal action. Each env exposes ``reward_scale``, the width
of an interval holding every mean reward (the unit in which DE's gate price is given).
"""

from __future__ import annotations

import math
from typing import Any, cast

import numpy as np
from gymnasium import spaces
from gymnasium.error import ResetNeeded
from numpy.typing import NDArray

from delight_gym._checks import (
    check_finite_array,
    check_finite_float,
    check_nonnegative_float,
    check_nonnegative_int,
    check_positive_int,
    check_probability,
    check_would_fit,
)
from delight_gym.envs._base import (
    OneStepBanditEnv,
    OneStepBanditVectorEnv,
    check_bandit_fits,
    check_render_mode,
    read_only_copy,
    set_vector_spaces,
)

__all__ = [
    "DEFAULT_NEURAL_DIM",
    "DEFAULT_NEURAL_NUM_ARMS",
    "NEURAL_REWARDS",
    "WHEEL_NUM_ARMS",
    "WHEEL_SAFE_ARM",
    "NeuralBanditEnv",
    "NeuralBanditVectorEnv",
    "WheelBanditEnv",
    "WheelBanditVectorEnv",
    "check_neural_arms",
    "check_neural_fits",
    "check_neural_reward",
    "neural_bandit_nbytes",
    "neural_mean_reward",
    "wheel_means",
]

#: The wheel's arms: arms 0-3 are the quadrants' arms, arm 4 is the safe arm.
WHEEL_NUM_ARMS = 5
#: Index of the wheel's safe arm (the showdown's ``argmax(mean_v)`` with ``mean_v[4] = 1.2``).
WHEEL_SAFE_ARM = 4
#: Number of arms of the neural bandit when ``num_arms`` is not given.
DEFAULT_NEURAL_NUM_ARMS = 100
#: Dimension of the neural bandit's arm features when ``dim`` is not given (NeuralUCB's d).
DEFAULT_NEURAL_DIM = 20
#: The neural bandit's mean-reward functions of ``s = xᵀθ`` and each one's reward scale.
NEURAL_REWARDS: dict[str, float] = {"quadratic": 10.0, "cosine": 2.0}


# ------------------------------------------------------------------------- the maths
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
        Mean of the safe arm (4), of the quadrant arms (0-3) and of the quadrant's arm when
        ``‖x‖ >= delta``.

    Returns
    -------
    numpy.ndarray
        ``(..., 5)`` float64 means. With ``x = (x₁, x₂)`` and ``‖x‖ >= delta``, arm 0 pays
        ``mean_large`` when ``x₁ > 0, x₂ > 0``, arm 1 when ``x₁ > 0, x₂ <= 0``, arm 2 when
        ``x₁ <= 0, x₂ > 0`` and arm 3 when ``x₁ <= 0, x₂ <= 0`` (the showdown's
        ``sample_wheel_bandit_data``).
    """
    contexts = check_finite_array(contexts, "contexts")
    if contexts.ndim == 0 or contexts.shape[-1] != 2:
        raise ValueError(f"contexts must have shape (..., 2), got {contexts.shape}")
    return _wheel_means(
        contexts,
        check_probability(delta, "delta"),
        check_finite_float(mean_safe, "mean_safe"),
        check_finite_float(mean_other, "mean_other"),
        check_finite_float(mean_large, "mean_large"),
    )


def _wheel_means(
    contexts: NDArray[np.float64],
    delta: float,
    mean_safe: float,
    mean_other: float,
    mean_large: float,
) -> NDArray[np.float64]:
    """:func:`wheel_means` of checked arguments."""
    x1, x2 = contexts[..., 0], contexts[..., 1]
    means = np.full((*contexts.shape[:-1], WHEEL_NUM_ARMS), mean_other, dtype=np.float64)
    means[..., WHEEL_SAFE_ARM] = mean_safe
    quadrant = np.where(x1 > 0, np.where(x2 > 0, 0, 1), np.where(x2 > 0, 2, 3))
    large = np.hypot(x1, x2) >= delta
    np.put_along_axis(
        means,
        quadrant[..., None],
        np.where(large, mean_large, mean_other)[..., None],
        axis=-1,
    )
    return means


def neural_mean_reward(projection: NDArray[np.float64], reward: str) -> NDArray[np.float64]:
    """``h(s)`` of the neural bandit for projections ``s = xᵀθ`` (any shape).

    ``"quadratic"``: ``10 s²`` (in ``[0, 10]``); ``"cosine"``: ``cos(3 s)`` (in ``[-1, 1]``).
    """
    if check_neural_reward(reward) == "quadratic":
        return 10.0 * projection * projection
    return np.cos(3.0 * projection)


def _draw_disk_point(rng: np.random.Generator) -> NDArray[np.float64]:
    """A uniform point of the closed unit disk by rejection from ``U([-1, 1]²)`` (as the
    showdown's sampler): pairs ``rng.uniform(-1, 1, 2)`` until one has norm ``<= 1``."""
    while True:
        point = rng.uniform(-1.0, 1.0, 2)
        if np.hypot(point[0], point[1]) <= 1.0:
            return point


def _draw_unit_sphere(rng: np.random.Generator, shape: tuple[int, ...]) -> NDArray[np.float64]:
    """Uniform points of the unit sphere along the last axis: normalised standard normals."""
    z = rng.standard_normal(shape)
    return z / np.sqrt(np.sum(z * z, axis=-1, keepdims=True))


def check_neural_reward(value: Any, name: str = "reward") -> str:
    """Return ``value`` if it names a mean-reward function of :data:`NEURAL_REWARDS`; raise a
    ``ValueError`` naming ``name`` otherwise."""
    if not isinstance(value, str) or value not in NEURAL_REWARDS:
        raise ValueError(f"{name} must be one of {list(NEURAL_REWARDS)}, got {value!r}")
    return value


def neural_bandit_nbytes(num_arms: int, dim: int, context_dim: int, num_envs: int = 0) -> int:
    """Bytes a neural bandit's arrays take (``num_envs = 0``: a single env): per arm and
    sub-env its features and their draw (float64), its mean and projection, its observation
    row (float32); the observation space's bounds (two float32 and two bool arrays) once."""
    rows = num_arms * (dim + context_dim)
    per_env = num_arms * (24 * dim + 16) + 4 * rows
    return max(num_envs, 1) * per_env + 10 * rows


def check_neural_fits(num_arms: int, dim: int, context_dim: int, num_envs: int = 0) -> None:
    """Refuse, before anything is allocated, a neural bandit that would not fit in memory
    (:func:`neural_bandit_nbytes`): a ``ValueError`` naming ``num_arms`` (with ``dim``,
    ``context_dim`` and ``num_envs``) and the memory needed."""
    nbytes = neural_bandit_nbytes(num_arms, dim, context_dim, num_envs)
    envs = max(num_envs, 1)
    check_bandit_fits(
        num_envs,
        num_arms,
        -(-nbytes // (envs * num_arms)),
        f", dim={dim}, context_dim={context_dim}",
    )


#: Bytes per arm that every run of a neural bandit needs at least (``dim = 1``, one seed, no
#: network): the env's arrays and a round's float64 inputs of the agent, a few copies each.
_NEURAL_MIN_BYTES_PER_ARM = neural_bandit_nbytes(1, 1, 0) + 4 * 8 * 3


def check_neural_arms(value: Any, name: str = "num_arms") -> int:
    """``value`` as an int if it is a positive number of arms whose smallest neural-bandit run
    (``dim = 1``, one seed) fits in memory; a ``ValueError`` naming ``name`` and the memory it
    would need otherwise. A check that needs only the number of arms (the command line's
    ``--arms``); the env and the agents check their full size again."""
    k = check_positive_int(value, name)
    check_would_fit(k * _NEURAL_MIN_BYTES_PER_ARM, f"{name}={k} (one seed, dim=1)")
    return k


def _context_box(shape: tuple[int, ...]) -> spaces.Space[NDArray[np.float32]]:
    box = spaces.Box(-1.0, 1.0, shape=shape, dtype=np.float32)
    return cast("spaces.Space[NDArray[np.float32]]", box)  # Box is typed for any dtype


class _WheelSettings:
    """The wheel's keywords, checked once for the single and the vector env."""

    delta: float
    mean_safe: float
    mean_other: float
    mean_large: float
    noise: float

    def _set_wheel(
        self, delta: Any, mean_safe: Any, mean_other: Any, mean_large: Any, noise: Any
    ) -> None:
        self.delta = check_probability(delta, "delta")
        self.mean_safe = check_finite_float(mean_safe, "mean_safe")
        self.mean_other = check_finite_float(mean_other, "mean_other")
        self.mean_large = check_finite_float(mean_large, "mean_large")
        self.noise = check_nonnegative_float(noise, "noise")

    @property
    def reward_scale(self) -> float:
        """Width of the range of the mean rewards: the largest of ``mean_safe``,
        ``mean_other`` and ``mean_large`` minus the smallest (49 at the defaults)."""
        values = (self.mean_safe, self.mean_other, self.mean_large)
        return max(values) - min(values)

    def _means_of(self, contexts: NDArray[np.float64]) -> NDArray[np.float64]:
        return _wheel_means(contexts, self.delta, self.mean_safe, self.mean_other, self.mean_large)


class _NeuralSettings:
    """The neural bandit's keywords, checked once for the single and the vector env."""

    num_arms: int
    dim: int
    context_dim: int
    reward: str
    noise: float

    def _set_neural(
        self,
        num_arms: Any,
        dim: Any,
        context_dim: Any,
        reward: Any,
        noise: Any,
        num_envs: int = 0,
    ) -> None:
        self.num_arms = check_positive_int(num_arms, "num_arms")
        self.dim = check_positive_int(dim, "dim")
        self.context_dim = check_nonnegative_int(context_dim, "context_dim")
        self.reward = check_neural_reward(reward)
        self.noise = check_nonnegative_float(noise, "noise")
        check_neural_fits(self.num_arms, self.dim, self.context_dim, num_envs)

    @property
    def input_dim(self) -> int:
        """Length of one arm's row ``x``: ``dim + context_dim``."""
        return self.dim + self.context_dim

    @property
    def reward_scale(self) -> float:
        """Width of an interval holding every mean reward: 10 for ``"quadratic"`` (``[0, 10]``),
        2 for ``"cosine"`` (``[-1, 1]``)."""
        return NEURAL_REWARDS[self.reward]

    def _projection(
        self, arm_part: NDArray[np.float64], theta: NDArray[np.float64], context: Any
    ) -> NDArray[np.float64]:
        """``xᵀθ`` of every arm from ``arm_part = φ(a)ᵀθ_φ`` (``(..., K)``), ``θ``
        (``(..., D)``) and the context (``(..., C)``, ignored when ``C = 0``)."""
        if self.context_dim == 0:
            return arm_part
        context_part = np.sum(context * theta[..., self.dim :], axis=-1)
        return (arm_part + context_part[..., None]) / math.sqrt(2.0)

    def _arm_rows(
        self, features: NDArray[np.float64], context: NDArray[np.float64]
    ) -> NDArray[np.float32]:
        """The observation: ``[φ(a), c] / √2`` per arm (``φ(a)`` when ``C = 0``), float32."""
        if self.context_dim == 0:
            return features.astype(np.float32)
        shape = (*features.shape[:-1], self.context_dim)
        joined = np.concatenate([features, np.broadcast_to(context[..., None, :], shape)], -1)
        return (joined / math.sqrt(2.0)).astype(np.float32)


# ------------------------------------------------------------------------ shared bases
class ContextualBanditEnv(OneStepBanditEnv[NDArray[np.float32]]):
    """A one-step bandit whose arm means depend on a context drawn at every :meth:`reset`.

    Subclasses implement :meth:`_draw_context` (from ``self.np_random``, setting ``_means``,
    ``_optimal`` and the observation). ``step`` adds ``info["optimal_action"]``.
    """

    _obs: NDArray[np.float32] | None
    noise: float

    @property
    def reward_scale(self) -> float:
        """Width of an interval holding every mean reward (set by each family)."""
        raise NotImplementedError

    def _draw_context(self) -> None:
        raise NotImplementedError

    def _reward(self, expected: float) -> float:
        return expected + self.noise * float(self.np_random.standard_normal())

    def _start_episode(self) -> NDArray[np.float32]:
        self._draw_context()
        return self._observation()

    def _observation(self) -> NDArray[np.float32]:
        assert self._obs is not None
        return self._obs.copy()

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


class ContextualBanditVectorEnv(OneStepBanditVectorEnv):
    """``num_envs`` independent contextual bandits; every step pulls, then draws each sub-env's
    next context from its own generator (as a single env's next ``reset`` does).

    Subclasses implement :meth:`_draw_contexts` (each sub-env's context from ``self._rng(j)``,
    then ``_means``, ``_optimal`` and the observations). ``step``'s infos add
    ``optimal_action`` (int64).
    """

    _obs: NDArray[np.float32] | None
    noise: float

    @property
    def reward_scale(self) -> float:
        """Width of an interval holding every mean reward (set by each family)."""
        raise NotImplementedError

    def _draw_contexts(self) -> None:
        raise NotImplementedError

    def _start_episodes(self) -> None:
        """Draw every sub-env's context (the contextual bandits' one random draw at a reset)."""
        self._draw_contexts()

    def _observations(self) -> NDArray[np.float32]:
        assert self._obs is not None
        return self._obs.copy()

    def _final_observations(self) -> NDArray[np.object_]:
        final = self._observations()
        final.flags.writeable = False  # the entries are views of this one copy
        return np.fromiter(final, dtype=object, count=self.num_envs)

    def _rewards(
        self, expected: NDArray[np.float64], rngs: list[np.random.Generator]
    ) -> NDArray[np.float64]:
        normals = np.array([rng.standard_normal() for rng in rngs], dtype=np.float64)
        return expected + self.noise * normals

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


# ------------------------------------------------------------------------------ wheel
class WheelBanditEnv(_WheelSettings, ContextualBanditEnv):
    """The wheel bandit of *Deep Bayesian Bandits Showdown* (Riquelme, Tucker & Snoek, 2018).

    ## Description

    Every episode draws a context ``x`` uniform in the unit disk and offers 5 arms. Arm 4
    (the *safe* arm) has mean ``mean_safe`` (1.2), arms 0-3 have mean ``mean_other`` (1.0),
    except that when ``‖x‖ >= delta`` the arm of ``x``'s quadrant has mean ``mean_large``
    (50): arm 0 for ``x₁ > 0, x₂ > 0``, arm 1 for ``x₁ > 0, x₂ <= 0``, arm 2 for
    ``x₁ <= 0, x₂ > 0``, arm 3 for ``x₁ <= 0, x₂ <= 0`` (the indexing of the showdown's public
    ``sample_wheel_bandit_data``, :func:`wheel_means`). A fraction ``1 - delta²`` of the
    contexts pays 50; the rest is best served by the safe arm. There is no instance to draw:
    the env is fixed by its keywords.

    ## Action Space

    ``Discrete(5)``: the arm to pull (a ``ValueError`` naming ``action`` outside it).

    ## Observation Space

    ``Box(-1, 1, shape=(2,), dtype=float32)``: the context ``x`` (rounded to float32; the
    float64 context that sets the means is :attr:`context`). ``step`` returns the context just
    played; the next ``reset`` draws a new one by rejection, pairs of
    ``self.np_random.uniform(-1, 1, 2)`` until one has norm ``<= 1`` (the showdown's sampler).

    ## Rewards

    The arm's mean plus ``noise·z``, ``z = self.np_random.standard_normal()`` (one draw per
    step). The showdown's paper states ``σ = 0.01`` for every reward; its public example
    script uses 0.05 for the small rewards and 0.01 for the large one: here one ``noise``
    (default 0.01) serves every arm.

    ## Episode End

    One pull: ``terminated=True``, ``truncated=False``.

    ## Information

    ``step``'s ``info``: ``expected_reward`` (the arm's mean under ``x``),
    ``optimal_expected_reward``, ``regret`` (their difference, the pseudo-regret) and
    ``optimal_action`` (``WHEEL_SAFE_ARM`` inside the radius, the quadrant's arm outside).

    ## Arguments

    - ``delta`` (float in [0, 1]): the radius. Default 0.95.
    - ``mean_safe``, ``mean_other``, ``mean_large`` (finite floats): 1.2, 1.0, 50.
    - ``noise`` (float >= 0): the reward noise's standard deviation. Default 0.01.
    - ``render_mode`` (``None`` or ``"ansi"``).

    ``reward_scale`` is ``max - min`` of the three means (49 at the defaults).

    ## Example

    >>> from delight_gym.envs import WheelBanditEnv
    >>> env = WheelBanditEnv(delta=0.5)
    >>> obs, info = env.reset(seed=3)
    >>> obs.round(3), env.means
    (array([-0.829, -0.526], dtype=float32), array([ 1. ,  1. ,  1. , 50. ,  1.2]))
    >>> obs, reward, terminated, truncated, info = env.step(4)
    >>> round(info["regret"], 3), info["optimal_action"], terminated
    (48.8, 3, True)

    ## Version History

    - v0: initial version (delight_gym 0.1.0).
    """

    family = "WheelBandit"

    def __init__(
        self,
        delta: float = 0.95,
        mean_safe: float = 1.2,
        mean_other: float = 1.0,
        mean_large: float = 50.0,
        noise: float = 0.01,
        render_mode: str | None = None,
    ) -> None:
        self._set_wheel(delta, mean_safe, mean_other, mean_large, noise)
        self.num_arms = WHEEL_NUM_ARMS
        self.render_mode = check_render_mode(render_mode, self.metadata["render_modes"])
        self.action_space = spaces.Discrete(WHEEL_NUM_ARMS)
        self.observation_space = _context_box((2,))
        self._fixed_instance = None
        self._means = None
        self._context: NDArray[np.float64] | None = None
        self._obs = None
        self._optimal = float("nan")
        self._last_pull = None
        self._has_reset = False

    def _has_instance(self) -> bool:
        return True  # nothing to draw: the keywords fix the wheel

    def _draw_instance(self) -> None:
        pass

    def _draw_context(self) -> None:
        self._context = _draw_disk_point(self.np_random)
        self._means = self._means_of(self._context)
        self._optimal = float(self._means.max())
        self._obs = self._context.astype(np.float32)

    @property
    def context(self) -> NDArray[np.float64]:
        """The current context ``x``, shape ``(2,)`` (float64, a read-only copy)."""
        if self._context is None:
            raise ResetNeeded("the context is drawn at reset(); call reset()")
        return read_only_copy(self._context)

    def _render_shape(self) -> str:
        return f"delta={self.delta}"


class WheelBanditVectorEnv(_WheelSettings, ContextualBanditVectorEnv):  # type: ignore[misc]
    """``num_envs`` independent wheel bandits stepped together (no subprocesses).

    Sub-env ``i`` behaves exactly as a :class:`WheelBanditEnv` reset with seed ``seed + i``:
    it draws its contexts and its reward noise from its own generator in the single env's
    order. ``observation_space`` is ``Box(-1, 1, (num_envs, 2), float32)``, ``action_space``
    ``MultiDiscrete([5] * num_envs)``; autoreset is ``SAME_STEP`` (``final_obs`` holds the
    contexts just played, the returned observations the next ones). ``step``'s infos hold
    float64 ``expected_reward``, ``optimal_expected_reward``, ``regret`` and int64
    ``optimal_action``, each ``(num_envs,)``. The keywords are those of
    :class:`WheelBanditEnv`, shared by every sub-env.

    >>> import numpy as np
    >>> from delight_gym.envs import WheelBanditVectorEnv
    >>> envs = WheelBanditVectorEnv(num_envs=2, delta=0.5)
    >>> obs, _ = envs.reset(seed=3)
    >>> obs.round(3)  # row 0 is WheelBanditEnv(delta=0.5) reset with seed 3
    array([[-0.829, -0.526],
           [ 0.886,  0.023]], dtype=float32)
    >>> obs, rewards, terminated, truncated, infos = envs.step(np.array([4, 4]))
    >>> infos["regret"].round(3), infos["optimal_action"]
    (array([48.8, 48.8]), array([3, 0]))
    """

    family = "WheelBandit"

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
        self._set_wheel(delta, mean_safe, mean_other, mean_large, noise)
        self.num_arms = WHEEL_NUM_ARMS
        self.render_mode = check_render_mode(render_mode, self.metadata["render_modes"])
        set_vector_spaces(self, spaces.Discrete(WHEEL_NUM_ARMS), _context_box((2,)))
        self._means = None
        self._optimal = None
        self._obs = None
        self._contexts = np.zeros((self.num_envs, 2))
        self._init_bandit_state(None)

    def _allocate_instances(self) -> None:
        self._means = np.zeros((self.num_envs, WHEEL_NUM_ARMS))

    def _draw_instances(self, resample: NDArray[np.bool_]) -> None:
        self._instances_drawn(resample)  # nothing to draw: the keywords fix the wheel

    def _draw_contexts(self) -> None:
        for j in range(self.num_envs):
            self._contexts[j] = _draw_disk_point(self._rng(j))
        self._means = self._means_of(self._contexts)
        self._optimal = self._means.max(axis=1)
        self._obs = self._contexts.astype(np.float32)

    @property
    def context(self) -> NDArray[np.float64]:
        """Every sub-env's current context, shape ``(num_envs, 2)`` (a read-only copy)."""
        self._require_means()
        return read_only_copy(self._contexts)

    def _render_shape(self) -> str:
        return f"delta={self.delta}"


# ----------------------------------------------------------------------------- neural
class NeuralBanditEnv(_NeuralSettings, ContextualBanditEnv):
    """A fixed set of ``K`` arms whose mean reward is nonlinear in their features.

    ## Description

    The synthetic reward functions of *Neural Contextual Bandits with UCB-based Exploration*
    (Zhou, Li & Gu, 2020) and *Neural Thompson Sampling* (Zhang, Zhou, Li & Gu, 2021) on a
    persistent arm set, as in the linear bandit. An *instance* is the arm features
    ``φ(a)``, uniform on the unit sphere of ``R^dim``, and ``θ``, uniform on the unit sphere
    of ``R^(dim + context_dim)``, drawn at the first :meth:`reset` (features first, each
    as normalised standard normals) from a generator spawned from ``self.np_random``
    (``self.np_random.spawn(1)[0]``), so the stream of contexts and noise after a seeded
    reset does not depend on whether that reset drew the instance. The instance is kept for
    the env's life; ``reset(options={"resample": True})`` draws a new one.

    With ``context_dim = C > 0`` each reset also draws a context ``c`` uniform on the unit
    sphere of ``R^C`` (from ``self.np_random``) and arm ``a``'s row is
    ``x_a = [φ(a), c] / √2`` (on the unit sphere of ``R^(dim + C)``); with ``C = 0``,
    ``x_a = φ(a)``. The mean reward of arm ``a`` is ``h(x_aᵀθ)`` with ``h(s) = 10 s²``
    (``reward="quadratic"``) or ``h(s) = cos(3 s)`` (``reward="cosine"``).

    ## Action Space

    ``Discrete(K)`` (a ``ValueError`` naming ``action`` outside it).

    ## Observation Space

    ``Box(-1, 1, shape=(K, dim + context_dim), dtype=float32)``: row ``a`` is ``x_a``. With
    ``C = 0`` it is the same at every step of an instance.

    ## Rewards

    ``h(x_aᵀθ) + noise·z``, ``z = self.np_random.standard_normal()`` (one draw per step).

    ## Episode End

    One pull: ``terminated=True``, ``truncated=False``.

    ## Information

    ``expected_reward``, ``optimal_expected_reward``, ``regret`` (pseudo-regret) and
    ``optimal_action``, under the current context.

    ## Arguments

    - ``num_arms`` (int >= 1): ``K``. Default 100.
    - ``dim`` (int >= 1): the arm features' dimension. Default 20 (NeuralUCB's ``d``).
    - ``context_dim`` (int >= 0): ``C``. Default 0 (no per-round context).
    - ``reward`` (``"quadratic"`` or ``"cosine"``). Default ``"quadratic"``.
    - ``noise`` (float >= 0): the reward noise's standard deviation. Default 0.1.
    - ``render_mode`` (``None`` or ``"ansi"``).

    ``reward_scale`` is 10 (quadratic) or 2 (cosine).

    ## Example

    >>> from delight_gym.envs import NeuralBanditEnv
    >>> env = NeuralBanditEnv(num_arms=3, dim=2, reward="cosine")
    >>> obs, info = env.reset(seed=0)
    >>> obs.shape, env.means.round(3), env.optimal_arm
    ((3, 2), array([ 0.759, -0.552, -0.796]), 0)
    >>> obs, reward, terminated, truncated, info = env.step(2)
    >>> round(info["regret"], 3), info["optimal_action"]
    (1.556, 0)

    ## Version History

    - v0: initial version (delight_gym 0.1.0).
    """

    family = "NeuralBandit"

    def __init__(
        self,
        num_arms: int = DEFAULT_NEURAL_NUM_ARMS,
        dim: int = DEFAULT_NEURAL_DIM,
        context_dim: int = 0,
        reward: str = "quadratic",
        noise: float = 0.1,
        render_mode: str | None = None,
    ) -> None:
        self._set_neural(num_arms, dim, context_dim, reward, noise)
        self.render_mode = check_render_mode(render_mode, self.metadata["render_modes"])
        self.action_space = spaces.Discrete(self.num_arms)
        self.observation_space = _context_box((self.num_arms, self.input_dim))
        self._fixed_instance = None
        self._features: NDArray[np.float64] | None = None
        self._theta: NDArray[np.float64] | None = None
        self._arm_part: NDArray[np.float64] | None = None
        self._context = np.zeros(self.context_dim)
        self._means = None
        self._obs = None
        self._optimal = float("nan")
        self._last_pull = None
        self._has_reset = False

    def _has_instance(self) -> bool:
        return self._features is not None

    def _draw_instance(self) -> None:
        rng = self.np_random.spawn(1)[0]
        self._features = _draw_unit_sphere(rng, (self.num_arms, self.dim))
        self._theta = _draw_unit_sphere(rng, (self.input_dim,))
        self._arm_part = np.sum(self._features * self._theta[: self.dim], axis=-1)
        self._last_pull = None
        if self.context_dim == 0:
            self._set_means()

    def _draw_context(self) -> None:
        if self.context_dim == 0:
            return  # nothing to draw; the means and rows were set with the instance
        self._context = _draw_unit_sphere(self.np_random, (self.context_dim,))
        self._set_means()

    def _set_means(self) -> None:
        assert self._features is not None and self._theta is not None
        assert self._arm_part is not None
        projection = self._projection(self._arm_part, self._theta, self._context)
        self._means = neural_mean_reward(projection, self.reward)
        self._optimal = float(self._means.max())
        self._obs = self._arm_rows(self._features, self._context)

    @property
    def features(self) -> NDArray[np.float64]:
        """The arm features ``φ``, shape ``(K, dim)`` (float64, a read-only copy)."""
        if self._features is None:
            raise ResetNeeded("the bandit instance is drawn at the first reset(); call reset()")
        return read_only_copy(self._features)

    @property
    def theta(self) -> NDArray[np.float64]:
        """``θ``, shape ``(dim + context_dim,)`` (float64, a read-only copy)."""
        if self._theta is None:
            raise ResetNeeded("the bandit instance is drawn at the first reset(); call reset()")
        return read_only_copy(self._theta)

    @property
    def context(self) -> NDArray[np.float64]:
        """The current context ``c``, shape ``(context_dim,)`` (a read-only copy)."""
        self._require_means()
        return read_only_copy(self._context)

    def _render_shape(self) -> str:
        return f"K={self.num_arms} D={self.input_dim} {self.reward}"


class NeuralBanditVectorEnv(_NeuralSettings, ContextualBanditVectorEnv):  # type: ignore[misc]
    """``num_envs`` independent neural bandits stepped together (no subprocesses).

    Sub-env ``i`` behaves exactly as a :class:`NeuralBanditEnv` reset with seed ``seed + i``:
    its instance comes from a generator spawned from its own, its contexts and noise from its
    own, in the single env's order. ``observation_space`` is ``Box(-1, 1, (num_envs, K,
    dim + context_dim), float32)``, ``action_space`` ``MultiDiscrete([K] * num_envs)``;
    autoreset is ``SAME_STEP``. ``step``'s infos hold float64 ``expected_reward``,
    ``optimal_expected_reward``, ``regret`` and int64 ``optimal_action``, each
    ``(num_envs,)``. The keywords are those of :class:`NeuralBanditEnv`;
    ``reset(options={"resample": mask})`` redraws the instances of the sub-envs in ``mask``.

    >>> import numpy as np
    >>> from delight_gym.envs import NeuralBanditVectorEnv
    >>> envs = NeuralBanditVectorEnv(num_envs=2, num_arms=3, dim=2, reward="cosine")
    >>> obs, _ = envs.reset(seed=0)
    >>> envs.means.round(3)  # row 0 is NeuralBanditEnv(...) reset with seed 0
    array([[ 0.759, -0.552, -0.796],
           [-0.531, -0.988,  0.897]])
    """

    family = "NeuralBandit"

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
        self._set_neural(num_arms, dim, context_dim, reward, noise, self.num_envs)
        self.render_mode = check_render_mode(render_mode, self.metadata["render_modes"])
        n, k = self.num_envs, self.num_arms
        set_vector_spaces(self, spaces.Discrete(k), _context_box((k, self.input_dim)))
        self._features = np.zeros((n, k, self.dim))
        self._theta = np.zeros((n, self.input_dim))
        self._arm_part = np.zeros((n, k))
        self._contexts = np.zeros((n, self.context_dim))
        self._means = None
        self._optimal = None
        self._obs = None
        self._init_bandit_state(None)

    def _allocate_instances(self) -> None:
        self._means = np.zeros((self.num_envs, self.num_arms))

    def _draw_instances(self, resample: NDArray[np.bool_]) -> None:
        for j in np.flatnonzero(resample).tolist():
            rng = self._rng(j).spawn(1)[0]
            self._features[j] = _draw_unit_sphere(rng, (self.num_arms, self.dim))
            self._theta[j] = _draw_unit_sphere(rng, (self.input_dim,))
        self._arm_part[resample] = np.sum(
            self._features[resample] * self._theta[resample, None, : self.dim], axis=-1
        )
        if self.context_dim == 0:  # the means and rows are the instance's own
            assert self._means is not None
            self._means[resample] = neural_mean_reward(self._arm_part[resample], self.reward)
            if self._obs is None:
                self._obs = self._arm_rows(self._features, self._contexts)
            else:
                self._obs[resample] = self._arm_rows(self._features[resample], self._contexts)
        self._instances_drawn(resample)

    def _draw_contexts(self) -> None:
        if self.context_dim == 0:
            return  # nothing to draw; the means and rows were set with the instances
        for j in range(self.num_envs):
            self._contexts[j] = _draw_unit_sphere(self._rng(j), (self.context_dim,))
        projection = self._projection(self._arm_part, self._theta, self._contexts)
        self._means = neural_mean_reward(projection, self.reward)
        self._optimal = self._means.max(axis=1)
        self._obs = self._arm_rows(self._features, self._contexts)

    @property
    def features(self) -> NDArray[np.float64]:
        """Arm features, shape ``(num_envs, K, dim)`` (a read-only copy)."""
        self._require_means()
        return read_only_copy(self._features)

    @property
    def theta(self) -> NDArray[np.float64]:
        """``θ`` of each sub-env, shape ``(num_envs, dim + context_dim)`` (a read-only copy)."""
        self._require_means()
        return read_only_copy(self._theta)

    @property
    def context(self) -> NDArray[np.float64]:
        """Every sub-env's context, shape ``(num_envs, context_dim)`` (a read-only copy)."""
        self._require_means()
        return read_only_copy(self._contexts)

    def _render_shape(self) -> str:
        return f"K={self.num_arms} D={self.input_dim} {self.reward}"
