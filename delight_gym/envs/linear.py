"""Linear-Gaussian bandits: a single Gymnasium env and a native vectorized form.

Arm ``a`` has a feature vector ``φ(a)`` and pays ``φ(a)ᵀθ* + σ·N(0, 1)``. The *instance* is
the features and ``θ*``; ``features=`` / ``theta=`` fix them. Its life cycle (drawn at the
first reset, kept, ``resample``) and the vector form's seed-for-seed equality with single envs
are those of every one-step bandit (:mod:`delight_gym.envs._base`).
"""

from __future__ import annotations

from typing import Any, ClassVar, cast

import numpy as np
from gymnasium import spaces
from gymnasium.error import ResetNeeded
from numpy.typing import ArrayLike, NDArray

from delight_gym._checks import check_finite_array, check_nonnegative_float, check_positive_int
from delight_gym.envs._base import (
    OneStepBanditEnv,
    OneStepBanditVectorEnv,
    check_bandit_fits,
    check_render_mode,
    instance_array,
    read_only_copy,
    set_vector_spaces,
)

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

#: Bound of the observation ``Box``: the largest finite float32. Every finite float32 lies in
#: ``[-_OBS_BOUND, _OBS_BOUND]``, so this is the unbounded ``Box(-inf, inf)`` minus the
#: infinities an observation never holds; finite bounds keep ``check_env`` free of warnings.
_OBS_BOUND = float(np.finfo(np.float32).max)


def _obs_space(shape: tuple[int, ...]) -> spaces.Space[NDArray[np.float32]]:
    box = spaces.Box(-_OBS_BOUND, _OBS_BOUND, shape=shape, dtype=np.float32)
    return cast("spaces.Space[NDArray[np.float32]]", box)  # Box is typed for any dtype


# ---------------------------------------------------------------------- the instance law
def _draw_features(rng: np.random.Generator, num_arms: int, dim: int) -> NDArray[np.float64]:
    """``φ(a) ~ N(0, I_D / D)`` i.i.d. over arms: ``rng.standard_normal((K, D)) / sqrt(D)``."""
    return rng.standard_normal((num_arms, dim)) / np.sqrt(dim)


def _draw_theta(rng: np.random.Generator, dim: int) -> NDArray[np.float64]:
    """``θ* ~ N(0, I_D)``: ``rng.standard_normal(D)``."""
    return rng.standard_normal(dim)


def _arm_means(features: NDArray[np.float64], theta: NDArray[np.float64]) -> NDArray[np.float64]:
    """``φ(a)ᵀθ*`` for every arm, over any leading batch dimensions.

    An elementwise product and numpy's sum over the last (contiguous) axis: unlike a BLAS
    product, the summation order does not depend on the batch shape or on memory alignment,
    so one instance and the same instance inside a batch give bit-identical means.
    """
    return np.sum(features * theta[..., None, :], axis=-1)


# ------------------------------------------------------------------------- validation
_FEATURE_AXES = ("num_arms", "dim")


def _check_features(value: Any, num_envs: int | None) -> NDArray[np.float64]:
    """``features`` as a float64 copy of shape ``(K, D)`` or, batched, ``(num_envs, K, D)``."""
    arr = instance_array(check_finite_array(value, "features"), "features", _FEATURE_AXES, num_envs)
    if np.abs(arr).max() > _OBS_BOUND:
        raise ValueError(
            f"features must lie within the float32 range (|x| <= {_OBS_BOUND:.4g}) because the "
            f"observation is float32; got a magnitude of {np.abs(arr).max():.4g}"
        )
    return arr


def _check_theta(value: Any, num_envs: int | None) -> NDArray[np.float64]:
    """``theta`` as a float64 copy of shape ``(D,)`` or, batched, ``(num_envs, D)``."""
    return instance_array(check_finite_array(value, "theta"), "theta", ("dim",), num_envs)


def _resolve_shape(
    num_arms: Any,
    dim: Any,
    features: NDArray[np.float64] | None,
    theta: NDArray[np.float64] | None,
) -> tuple[int, int]:
    """Validate ``num_arms`` / ``dim``; reconcile them with the given ``features`` / ``theta``."""
    k = None if num_arms is None else check_positive_int(num_arms, "num_arms")
    d = None if dim is None else check_positive_int(dim, "dim")
    if features is not None:
        fk, fd = features.shape[-2:]
        if k is not None and fk != k:
            raise ValueError(
                f"features has {fk} arms (shape {features.shape}) but num_arms={k}; "
                "pass one of them or make them agree"
            )
        if d is not None and fd != d:
            raise ValueError(
                f"features has dimension {fd} (shape {features.shape}) but dim={d}; "
                "pass one of them or make them agree"
            )
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


class _LinearBanditParameters:
    """The arguments shared by :class:`LinearBanditEnv` and :class:`LinearBanditVectorEnv`
    (``num_arms``, ``dim``, ``noise``, ``features``, ``theta``, ``render_mode``), checked once
    by :meth:`_set_parameters`, and what follows from them alone."""

    family: ClassVar[str] = "LinearBandit"
    metadata: dict[str, Any]
    render_mode: str | None
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
        """Check and store the arguments (``num_envs`` None: the single env's shapes, else
        the vector env's, where a single ``(K, D)`` / ``(D,)`` is shared by all sub-envs).

        Returns
        -------
        tuple
            The given ``features`` and ``theta`` as float64 copies (``None`` where drawn).
        """
        fixed_features = None if features is None else _check_features(features, num_envs)
        fixed_theta = None if theta is None else _check_theta(theta, num_envs)
        self.num_arms, self.dim = _resolve_shape(num_arms, dim, fixed_features, fixed_theta)
        # Per arm and sub-env: features and their draw (float64), the observation (float32),
        # the mean; the observation space's bounds (two float32 and two bool arrays) once.
        envs = num_envs or 1
        per_arm = 20 * self.dim + 16 + (10 * self.dim) // envs
        check_bandit_fits(num_envs or 0, self.num_arms, per_arm, f", dim={self.dim}")
        self.noise = check_nonnegative_float(noise, "noise")
        self.render_mode = check_render_mode(render_mode, self.metadata["render_modes"])
        self._fixed_features = fixed_features is not None
        self._fixed_theta = fixed_theta is not None
        return fixed_features, fixed_theta

    def _fixed_reason(self) -> str | None:
        """Why ``resample`` is refused: only when both parts of the instance were given."""
        if self._fixed_features and self._fixed_theta:
            return "this env was built with fixed features and theta"
        return None

    def _render_shape(self) -> str:
        return f"K={self.num_arms} D={self.dim}"


class LinearBanditEnv(_LinearBanditParameters, OneStepBanditEnv[NDArray[np.float32]]):
    """A ``K``-armed linear-Gaussian bandit: arm ``a`` pays ``φ(a)ᵀθ* + σ·N(0, 1)``.

    ## Description

    The linear bandit of the Delight-gated exploration paper's linear experiments. An
    *instance* is the feature matrix ``Φ`` (one row ``φ(a) ∈ R^D`` per arm) and the parameter
    ``θ*``. Unless given, they are drawn at the **first** :meth:`reset`, from the generator
    that reset's ``seed`` creates, features first and then ``θ*``:

    - ``φ(a) ~ N(0, I_D / D)`` i.i.d., as ``self.np_random.standard_normal((K, D)) / sqrt(D)``;
    - ``θ* ~ N(0, I_D)``, as ``self.np_random.standard_normal(D)``

    (so each arm's mean ``φ(a)ᵀθ*`` has variance ``E‖θ*‖²/D = 1`` across instances). The
    instance is **kept for the env's life**: a later ``reset(seed=...)`` reseeds the reward
    noise but does not redraw it, so ``T`` pulls on one instance are ``T`` one-step episodes.
    ``reset(options={"resample": True})`` draws a new instance from ``self.np_random``
    (only the parts that were not given: with ``features`` given it redraws ``θ*`` alone).

    ## Action Space

    ``Discrete(K)``: the arm to pull. An action outside the space (negative, ``>= K``,
    non-integer or bool) raises a ``ValueError`` naming ``action``.

    ## Observation Space

    ``Box(-F, F, shape=(K, D), dtype=float32)`` with ``F`` the largest finite float32 (the
    whole finite float32 range: unbounded in effect, but with finite bounds, which Gymnasium's
    ``check_env`` asks for): the arm features ``Φ`` rounded to float32, row ``a`` being
    ``φ(a)``. The observation is the same on every reset and step of an instance (a fresh
    array each time); it changes only when the instance is resampled. The exact float64
    features are :attr:`features`.

    ## Rewards

    ``φ(a)ᵀθ* + noise·z`` with ``z = self.np_random.standard_normal()``: exactly one standard
    normal draw per step, also when ``noise == 0`` (the reward is then exactly
    ``φ(a)ᵀθ*``), so the random stream does not depend on ``noise``.

    ## Episode End

    Every episode is one pull: ``terminated=True`` and ``truncated=False`` on every step. There
    is no ``max_episode_steps``; the termination is the env's own.

    ## Information

    ``step`` returns ``info`` with Python floats

    - ``"expected_reward"``: ``φ(a)ᵀθ*``;
    - ``"optimal_expected_reward"``: ``max_b φ(b)ᵀθ*``;
    - ``"regret"``: their difference, the pseudo-regret of the pull (not the noisy reward
      difference).

    ``reset`` returns an empty ``info``.

    Bad arguments raise ``TypeError`` (wrong type) or ``ValueError`` (bad value) naming the
    argument. ``optimal_arm`` breaks ties by the lowest index.

    ## Version History

    - v0: initial version (delight_gym 0.1.0).

    Parameters
    ----------
    num_arms : int | None
        int >= 1, optional: ``K``. Defaults to 100 (the paper's K), or to the number of rows of
        ``features`` when that is given; if both are given they must agree.
    dim : int | None
        int >= 1, optional: ``D``. Defaults to 10, or to what ``features`` / ``theta`` imply; given
        ones must agree.
    noise : float
        float >= 0, finite: the reward noise's standard deviation ``σ``. Default 1.
    features : ArrayLike | None
        array-like ``(K, D)``, finite and within the float32 range, optional: fixes ``Φ``.
    theta : ArrayLike | None
        array-like ``(D,)``, finite, optional: fixes ``θ*``. With both ``features`` and ``theta``
        given, ``resample`` is an error.
    render_mode : str | None
        ``None`` or ``"ansi"``: ``"ansi"`` makes :meth:`render` return a one-line text summary of
        the instance and the last pull.

    Examples
    --------
    >>> import numpy as np
    >>> from delight_gym.envs import LinearBanditEnv
    >>> env = LinearBanditEnv(num_arms=4, dim=2, noise=0.5)
    >>> obs, info = env.reset(seed=42)
    >>> obs.shape, obs.dtype, info
    ((4, 2), dtype('float32'), {})
    >>> env.features.round(3)
    array([[ 0.215, -0.735],
           [ 0.531,  0.665],
           [-1.38 , -0.921],
           [ 0.09 , -0.224]])
    >>> env.theta.round(3)
    array([-0.017, -0.853])
    >>> env.means.round(3), env.optimal_arm
    (array([ 0.624, -0.576,  0.809,  0.189]), 2)
    >>> obs, reward, terminated, truncated, info = env.step(1)
    >>> round(reward, 3), terminated, truncated
    (-0.137, True, False)
    >>> {key: round(value, 3) for key, value in info.items()}
    {'expected_reward': -0.576, 'optimal_expected_reward': 0.809, 'regret': 1.385}
    >>> _ = env.reset(seed=7)  # reseeds the reward noise, keeps the instance
    >>> env.means.round(3)
    array([ 0.624, -0.576,  0.809,  0.189])

    With the ids registered (``import delight_gym``), ``gym.make("LinearBandit-v0",
    dim=30, noise=1.0)`` builds it and ``gym.make_vec("LinearBandit-v0", num_envs=64)`` builds
    :class:`LinearBanditVectorEnv`.
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
        self.observation_space = _obs_space((self.num_arms, self.dim))
        self._fixed_instance = self._fixed_reason()
        self._features: NDArray[np.float64] | None = fixed_features
        self._theta: NDArray[np.float64] | None = fixed_theta
        self._means = None
        self._obs: NDArray[np.float32] | None = None
        self._optimal = float("nan")
        self._last_pull = None
        if fixed_features is not None and fixed_theta is not None:
            self._set_instance(fixed_features, fixed_theta)
        self._has_reset = False

    # ------------------------------------------------------------------ instance
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

    @property
    def features(self) -> NDArray[np.float64]:
        """The arm features ``Φ`` of the current instance, shape ``(K, D)`` (a read-only copy)."""
        if self._features is None:
            raise ResetNeeded("the bandit instance is drawn at the first reset(); call reset()")
        return read_only_copy(self._features)

    @property
    def theta(self) -> NDArray[np.float64]:
        """The parameter ``θ*`` of the current instance, shape ``(D,)`` (a read-only copy)."""
        if self._theta is None:
            raise ResetNeeded("the bandit instance is drawn at the first reset(); call reset()")
        return read_only_copy(self._theta)

    def _observation(self) -> NDArray[np.float32]:
        assert self._obs is not None
        return self._obs.copy()

    def _reward(self, expected: float) -> float:
        return expected + self.noise * float(self.np_random.standard_normal())


class LinearBanditVectorEnv(_LinearBanditParameters, OneStepBanditVectorEnv):  # type: ignore[misc]
    """``num_envs`` independent linear bandits, stepped together without subprocesses.

    Sub-env ``i`` behaves exactly like a :class:`LinearBanditEnv` reset with seed ``seed + i``
    (Gymnasium's convention; a list of per-env seeds is accepted too): it owns a generator
    made as ``gymnasium.utils.seeding.np_random(seed_i)`` makes it, draws its features and
    ``θ*`` from it as the single env does (features first), and draws one standard normal per
    step from it. Same seeds and actions therefore give identical instances, observations,
    rewards and infos. ``noise`` is shared by all sub-envs.

    ## Spaces

    ``action_space = MultiDiscrete([K] * num_envs)``; ``observation_space = Box(-F, F,
    shape=(num_envs, K, D), dtype=float32)``: each sub-env's features, as in the single env
    (``F`` the largest finite float32).

    ## Autoreset

    ``metadata["autoreset_mode"] = AutoresetMode.SAME_STEP``: every episode is one pull, and
    each sub-env is reset inside the step that terminates it, so every ``step`` is a pull and
    no step is spent on an autoreset. The autoreset never resamples the instance. As
    ``SAME_STEP`` requires, the step's ``infos`` carry ``final_obs`` (object array of the
    terminal observations, each a ``(K, D)`` float32 array) and ``final_info`` (the terminal
    step's infos, with ``_key`` masks), with masks ``_final_obs`` / ``_final_info`` (all
    True). The observations returned are those of the new episodes (the same features). For
    convenience the pull's infos are also at the top level of ``infos`` (with masks), since a
    reset itself adds no info.

    ## Step

    ``step(actions)`` takes an integer array of shape ``(num_envs,)`` with entries in
    ``[0, K)`` and returns ``obs`` (float32, ``(num_envs, K, D)``), ``rewards`` (float64),
    ``terminated`` (all True), ``truncated`` (all False) and ``infos`` holding float64 arrays
    ``expected_reward``, ``optimal_expected_reward`` and ``regret``. The only per-sub-env
    Python work is the normal draw from each sub-env's own generator.

    ``reset(options={"resample": ...})`` takes a bool (all sub-envs) or a bool array of shape
    ``(num_envs,)`` (those sub-envs).

    Parameters
    ----------
    num_envs : int
        int >= 1.
    num_arms, dim, noise
        as in :class:`LinearBanditEnv`.
    features : ArrayLike | None
        array-like, ``(num_envs, K, D)`` or ``(K, D)`` shared by all, optional.
    theta : ArrayLike | None
        array-like, ``(num_envs, D)`` or ``(D,)`` shared by all, optional.
    render_mode : str | None
        ``None`` or ``"ansi"``: :meth:`render` returns a tuple of strings.

    Examples
    --------
    >>> import numpy as np
    >>> from delight_gym.envs import LinearBanditVectorEnv
    >>> envs = LinearBanditVectorEnv(num_envs=3, num_arms=4, dim=2, noise=0.5)
    >>> obs, infos = envs.reset(seed=42)
    >>> obs.shape, obs.dtype
    ((3, 4, 2), dtype('float32'))
    >>> envs.means.round(3)  # row 0 is LinearBanditEnv(num_arms=4, dim=2) reset with seed 42
    array([[ 0.624, -0.576,  0.809,  0.189],
           [ 0.453, -0.464,  1.946,  0.169],
           [ 0.348, -0.324,  0.01 ,  0.268]])
    >>> obs, rewards, terminated, truncated, infos = envs.step(np.array([2, 0, 3]))
    >>> terminated, truncated
    (array([ True,  True,  True]), array([False, False, False]))
    >>> infos["regret"].round(3)
    array([0.   , 1.493, 0.08 ])
    >>> infos["final_info"]["regret"].round(3)  # SAME_STEP: the terminal step's infos
    array([0.   , 1.493, 0.08 ])
    """

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
        set_vector_spaces(self, spaces.Discrete(k), _obs_space((k, d)))

        self._features = np.zeros((n, k, d)) if fixed_features is None else fixed_features
        self._theta = np.zeros((n, d)) if fixed_theta is None else fixed_theta
        self._means = None
        self._optimal = None
        self._obs: NDArray[np.float32] | None = None
        if self._fixed_features and self._fixed_theta:
            self._means = _arm_means(self._features, self._theta)
            self._optimal = self._means.max(axis=1)
            self._obs = self._features.astype(np.float32)
        self._init_bandit_state(self._fixed_reason())

    # ----------------------------------------------------------------- instance
    @property
    def features(self) -> NDArray[np.float64]:
        """Arm features, shape ``(num_envs, K, D)`` (a read-only copy)."""
        if not self._fixed_features:
            self._require_means()
        return read_only_copy(self._features)

    @property
    def theta(self) -> NDArray[np.float64]:
        """``θ*`` of each sub-env, shape ``(num_envs, D)`` (a read-only copy)."""
        if not self._fixed_theta:
            self._require_means()
        return read_only_copy(self._theta)

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
