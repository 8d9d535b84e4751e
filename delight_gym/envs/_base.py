"""What every environment family shares: argument checks, per-sub-env seeding, and the
instance life cycle.

Every env has an *instance* (arm means, features and ``θ*``, DeepSea's action mapping, ...)
drawn from its own generator at the first ``reset``, kept, and redrawn on
``reset(options={"resample": True})``: :class:`InstanceEnv` holds that ``reset`` for the
single envs and :class:`InstanceVectorEnv` for the native vector envs (sub-env ``i`` seeded
``seed + i``, ``SAME_STEP`` autoreset). The one-step bandit bases are in
:mod:`delight_gym.envs._bandit`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar, cast

import gymnasium as gym
import numpy as np
from gymnasium.error import ResetNeeded
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space
from numpy.typing import NDArray

from delight_gym._checks import check_flag

__all__ = [
    "RESET_OPTIONS",
    "InstanceEnv",
    "InstanceState",
    "InstanceVectorEnv",
    "ObsT",
    "PerEnvGenerators",
    "check_render_mode",
    "check_reset_options",
    "instance_array",
    "read_only_copy",
    "resample_flag",
    "resample_mask",
    "set_vector_spaces",
    "vector_step_infos",
    "warn_no_render_mode",
]

ObsT = TypeVar("ObsT")

#: The ``reset(options=...)`` keys every env of the package accepts.
RESET_OPTIONS = frozenset({"resample"})


# ------------------------------------------------------------------------------ checks
def check_render_mode(render_mode: Any, modes: Sequence[str]) -> str | None:
    """Return ``render_mode`` if it is None or one of ``modes``; raise a ``ValueError``
    naming ``render_mode`` otherwise."""
    if render_mode is not None and render_mode not in modes:
        raise ValueError(f"render_mode must be None or one of {list(modes)}, got {render_mode!r}")
    return cast("str | None", render_mode)


def check_reset_options(
    options: dict[str, Any] | None, allowed: frozenset[str] = RESET_OPTIONS
) -> dict[str, Any]:
    """Return ``reset``'s ``options`` as a dict (``{}`` for None); raise a ``TypeError`` for a
    non-dict and a ``ValueError`` listing any key outside ``allowed``."""
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise TypeError(f"options must be a dict or None, got {type(options).__name__}")
    unknown = set(options) - allowed
    if unknown:
        raise ValueError(
            f"options has unknown keys {sorted(unknown)}; supported keys: {sorted(allowed)}"
        )
    return options


def resample_flag(options: dict[str, Any] | None, fixed: str | None) -> bool:
    """A single env's ``options["resample"]`` (default False), checked.

    Parameters
    ----------
    options : dict[str, Any] | None
        ``reset``'s options (only ``"resample"`` is accepted).
    fixed : str | None
        None when the instance may be redrawn, else why it may not (e.g. ``"this env
        was built with fixed means"``): a True request then raises a ``ValueError``.
    """
    resample = check_flag(
        check_reset_options(options).get("resample", False), 'options["resample"]'
    )
    if resample and fixed is not None:
        raise ValueError(f'options["resample"]=True is not allowed: {fixed}')
    return resample


def resample_mask(
    options: dict[str, Any] | None, num_envs: int, fixed: str | None
) -> NDArray[np.bool_]:
    """A vector env's ``options["resample"]`` as a new bool mask of shape ``(num_envs,)``.

    ``options["resample"]`` may be a bool (every sub-env) or a bool array of shape
    ``(num_envs,)`` (those sub-envs); ``fixed`` is as in :func:`resample_flag`.
    """
    value = check_reset_options(options).get("resample", False)
    if isinstance(value, (bool, np.bool_)):
        mask = np.full(num_envs, bool(value))
    else:
        mask = np.asarray(value)
        if mask.dtype != np.bool_ or mask.shape != (num_envs,):
            raise ValueError(
                'options["resample"] must be a bool or a bool array of shape '
                f"(num_envs,) = ({num_envs},), got {value!r}"
            )
        mask = mask.copy()
    if mask.any() and fixed is not None:
        raise ValueError(f'options["resample"] is not allowed: {fixed}')
    return mask


def instance_array(
    arr: NDArray[Any], name: str, core: tuple[str, ...], num_envs: int | None
) -> NDArray[np.float64]:
    """A given part of the instance (``means``, ``features``, ``theta``), its values already
    checked, as the env's own float64 copy.

    Parameters
    ----------
    arr : NDArray[Any]
        the given array.
    name : str
        the argument's name, for the error.
    core : tuple[str, ...]
        names of the axes of one instance's part (``("num_arms", "dim")``).
    num_envs : int | None
        None for a single env (``arr`` must have shape ``core``); else the vector
        env's size (``arr`` of shape ``(num_envs, *core)``, or of shape ``core`` shared by
        every sub-env).

    Returns
    -------
    NDArray[np.float64]
        A new, writable, C-contiguous float64 array of shape ``core`` or ``(num_envs, *core)``;
        a ``ValueError`` naming ``name`` if the shape is wrong or an axis of ``core`` is empty.
    """
    given = arr.shape
    axes = ", ".join(core)
    expected = f"({axes},)" if len(core) == 1 else f"({axes})"
    if num_envs is None:
        ok = arr.ndim == len(core)
    else:
        if arr.ndim == len(core):
            arr = np.broadcast_to(arr, (num_envs, *arr.shape))
        ok = arr.ndim == len(core) + 1 and arr.shape[0] == num_envs
        expected += f" or (num_envs, {axes}) = ({num_envs}, {axes})"
    if not ok or 0 in arr.shape[arr.ndim - len(core) :]:
        raise ValueError(f"{name} must have shape {expected} with {axes} >= 1, got shape {given}")
    return np.array(arr, dtype=np.float64)


def warn_no_render_mode(env: Any) -> None:
    """Gymnasium's warning for ``render()`` on an env (or vector env) built without a
    ``render_mode``, naming the modes ``env.metadata`` lists."""
    modes = env.metadata.get("render_modes", [])
    name = type(env).__name__
    hint = f"; use {name}(render_mode={modes[0]!r}) or gym.make(..., render_mode=...)"
    gym.logger.warn(f"You are calling render() without a render_mode{hint if modes else '.'}")


def read_only_copy(arr: NDArray[Any]) -> NDArray[Any]:
    """A copy of ``arr`` that cannot be written to (what the envs' instance properties return)."""
    out = arr.copy()
    out.flags.writeable = False
    return out


# ----------------------------------------------------------------------------- seeding
class PerEnvGenerators:
    """Seeding of native vector envs: one generator per sub-env, made as a single env's.

    Sub-env ``i`` of ``reset(seed=s)`` is seeded ``s + i`` (Gymnasium's vector convention),
    so a vector env equals ``num_envs`` single envs seed for seed. Call
    :meth:`_init_generators` once ``num_envs`` is set.
    """

    num_envs: int
    _rngs: list[np.random.Generator | None]
    _seeds: list[int | None]

    def _init_generators(self) -> None:
        self._rngs = [None] * self.num_envs
        self._seeds = [None] * self.num_envs

    def _rng(self, i: int) -> np.random.Generator:
        rng = self._rngs[i]
        if rng is None:  # as gymnasium.Env.np_random does lazily
            rng, self._seeds[i] = seeding.np_random()
            self._rngs[i] = rng
        return rng

    def _generators(self) -> list[np.random.Generator]:
        """Every sub-env's generator (made from fresh entropy where none is yet)."""
        return [self._rng(i) for i in range(self.num_envs)]

    @property
    def np_random(self) -> tuple[np.random.Generator, ...]:
        """The sub-envs' generators (as ``SyncVectorEnv.np_random`` returns them)."""
        return tuple(self._generators())

    @property
    def np_random_seed(self) -> tuple[int | None, ...]:
        """The seeds the sub-envs' generators were made from (as in ``SyncVectorEnv``)."""
        self._generators()
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


def set_vector_spaces(
    env: VectorEnv[Any, Any, Any],
    single_action_space: gym.Space[Any],
    single_observation_space: gym.Space[Any],
) -> None:
    """Set a native vector env's four spaces from one sub-env's.

    The batched spaces are ``gymnasium.vector.utils.batch_space`` of the single ones over
    ``env.num_envs``, as ``SyncVectorEnv`` makes them: ``Discrete(K)`` gives
    ``MultiDiscrete([K] * num_envs)`` and a ``Box`` of shape ``s`` gives the same bounds over
    shape ``(num_envs, *s)``.
    """
    env.single_action_space = single_action_space
    env.single_observation_space = single_observation_space
    env.action_space = batch_space(single_action_space, env.num_envs)
    env.observation_space = batch_space(single_observation_space, env.num_envs)


def vector_step_infos(
    step_info: Mapping[str, NDArray[Any]],
    terminated: NDArray[np.bool_],
    final_obs: NDArray[np.object_] | None,
    episode_info: Mapping[str, NDArray[Any]] | None = None,
) -> dict[str, Any]:
    """The ``infos`` of a ``SAME_STEP`` native vector env's step.

    Parameters
    ----------
    step_info : Mapping[str, NDArray[Any]]
        per-step values, each of shape ``(num_envs,)``; at the top level for every
        sub-env (masks all True).
    terminated : NDArray[np.bool_]
        ``(num_envs,)``, the sub-envs whose episode ended (and were reset) in
        this step.
    final_obs : NDArray[np.object_] | None
        ``(num_envs,)`` object array of the terminal observations (``None``
        elsewhere); needed when ``terminated.any()``.
    episode_info : Mapping[str, NDArray[Any]] | None
        values that exist only at an episode's end, each ``(num_envs,)``: at
        the top level with mask ``terminated``.

    Returns
    -------
    dict[str, Any]
        ``step_info`` and ``episode_info`` with ``_key`` masks, and, when some sub-env
        terminated, ``final_obs`` / ``final_info`` as ``SyncVectorEnv`` gives them (the
        terminal step's infos, zero where not terminated, masks ``terminated``) with masks
        ``_final_obs`` / ``_final_info``.
    """
    every = np.ones(terminated.shape[0], dtype=np.bool_)
    infos: dict[str, Any] = {}
    for key, value in step_info.items():
        infos[key] = value
        infos[f"_{key}"] = every.copy()
    if not terminated.any():
        return infos
    ended = {**step_info, **(episode_info or {})}
    for key, value in (episode_info or {}).items():
        infos[key] = value
        infos[f"_{key}"] = terminated.copy()
    final_info: dict[str, Any] = {}
    for key, value in ended.items():
        final_info[key] = np.where(terminated, value, np.zeros_like(value))
        final_info[f"_{key}"] = terminated.copy()
    infos["final_obs"] = final_obs
    infos["_final_obs"] = terminated.copy()
    infos["final_info"] = final_info
    infos["_final_info"] = terminated.copy()
    return infos


# -------------------------------------------------------------------- instance life cycle
class InstanceState:
    """What :class:`InstanceEnv` and :class:`InstanceVectorEnv` keep about their instance."""

    #: None when ``resample`` may redraw the instance, else why not (the error's reason).
    _fixed_instance: str | None
    _has_reset: bool

    def _has_instance(self) -> bool:
        """Whether the instance exists (given to the constructor, or drawn already)."""
        raise NotImplementedError

    def _require_reset(self) -> None:
        if not self._has_reset:
            raise ResetNeeded("call reset() before step()")


class InstanceEnv(InstanceState, gym.Env[ObsT, np.int64]):
    """A single env whose instance is drawn at the first :meth:`reset` and kept.

    Subclasses set ``_fixed_instance`` and ``_has_reset = False`` in ``__init__``, and
    implement :meth:`_has_instance`, :meth:`_draw_instance` (from ``self.np_random``) and
    :meth:`_start_episode`.
    """

    def _draw_instance(self) -> None:
        raise NotImplementedError

    def _start_episode(self) -> ObsT:
        """Set up a new episode on the current instance; return its first observation."""
        raise NotImplementedError

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[ObsT, dict[str, Any]]:
        """Start an episode; draw the instance on the first call or on ``resample``.

        Parameters
        ----------
        seed : int | None
            seeds ``self.np_random``, which draws the instance (if it is drawn now)
            and the episode's randomness.
        options : dict[str, Any] | None
            ``{"resample": True}`` draws a new instance (an error when the instance
            was fixed by the constructor's arguments). No other keys are accepted.

        Returns
        -------
        tuple[ObsT, dict[str, Any]]
            The first observation and an empty ``info``.
        """
        resample = resample_flag(options, self._fixed_instance)
        super().reset(seed=seed)
        if not self._has_instance() or resample:
            self._draw_instance()
        self._has_reset = True
        return self._start_episode(), {}


class InstanceVectorEnv(InstanceState, PerEnvGenerators, VectorEnv):  # type: ignore[misc]
    """A native vector env of ``num_envs`` instances, sub-env ``i`` equal to a single env
    reset with seed ``seed + i``, with Gymnasium's ``SAME_STEP`` autoreset.

    Subclasses set ``num_envs``, call :meth:`_init_generators`, set ``_fixed_instance`` and
    ``_has_reset = False`` in ``__init__``, and implement :meth:`_has_instance`,
    :meth:`_allocate_instances`, :meth:`_draw_instances`, :meth:`_start_episodes` and
    :meth:`_observations`.
    """

    metadata: dict[str, Any] = {"autoreset_mode": AutoresetMode.SAME_STEP}  # noqa: RUF012

    def _allocate_instances(self) -> None:
        """Make the arrays the instances are drawn into (before the first draw)."""
        raise NotImplementedError

    def _draw_instances(self, resample: NDArray[np.bool_]) -> None:
        """Draw new instances for the sub-envs in ``resample`` (each from ``self._rng(j)``)."""
        raise NotImplementedError

    def _start_episodes(self) -> None:
        """Set every sub-env at the start of a new episode (no random draws)."""

    def _observations(self) -> Any:
        raise NotImplementedError

    def reset(
        self,
        *,
        seed: int | list[int | None] | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[Any, dict[str, Any]]:
        """Reset every sub-env; ``seed`` int ``s`` seeds sub-env ``i`` with ``s + i``.

        Parameters
        ----------
        seed : int | list[int | None] | None
            None (keep the generators), an int ``s`` (sub-env ``i`` gets ``s + i``) or
            a list of ``num_envs`` ints or Nones.
        options : dict[str, Any] | None
            ``{"resample": mask}`` with a bool or a bool array of shape
            ``(num_envs,)``: those sub-envs draw a new instance.

        Returns
        -------
        tuple[Any, dict[str, Any]]
            The observations and an empty ``infos``.
        """
        seeds = self._per_env_seeds(seed)
        resample = resample_mask(options, self.num_envs, self._fixed_instance)
        self._apply_seeds(seeds)
        if not self._has_instance():
            resample[:] = True
            self._allocate_instances()
        if resample.any():
            self._draw_instances(resample)
        self._start_episodes()
        self._has_reset = True
        return self._observations(), {}
