"""What every environment family shares: argument checks, per-sub-env seeding, and the
instance life cycle.

Every env has an *instance* (arm means, features and ``θ*``, DeepSea's action mapping, ...)
drawn from its own generator at the first ``reset``, kept, and redrawn on
``reset(options={"resample": True})``: :class:`InstanceEnv` holds that ``reset`` for the
single envs and :class:`InstanceVectorEnv` for the native vector envs (sub-env ``i`` seeded
``seed + i``, ``SAME_STEP`` autoreset).
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

ObsT = TypeVar("ObsT")
PartT = TypeVar("PartT")
#: What a native vector env's ``step`` returns: observations, rewards, flags and ``infos``.
VectorStep = tuple[Any, NDArray[np.float64], NDArray[np.bool_], NDArray[np.bool_], dict[str, Any]]


# ------------------------------------------------------------------------------ checks
def check_render_mode(render_mode: Any, modes: Sequence[str]) -> str | None:
    """``render_mode`` if it is None or one of ``modes``, else a ``ValueError``."""
    if render_mode is not None and render_mode not in modes:
        raise ValueError(f"render_mode must be None or one of {list(modes)}, got {render_mode!r}")
    return cast("str | None", render_mode)


def check_reset_options(
    options: dict[str, Any] | None, allowed: frozenset[str] = frozenset({"resample"})
) -> dict[str, Any]:
    """``reset``'s ``options`` as a dict (``{}`` for None); only keys in ``allowed`` (every env
    of the package accepts ``"resample"``)."""
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


def check_agrees(name: str, given: int | None, implied: int | None, source: str) -> None:
    """A ``ValueError`` if ``name`` was given and ``source`` implies another value."""
    if given is not None and implied is not None and given != implied:
        raise ValueError(
            f"{name}={given} disagrees with {source}, which implies {name}={implied}; "
            "pass one of them or make them agree"
        )


def check_num_entries(values: Sequence[Any], name: str, num_envs: int) -> None:
    """A ``ValueError`` naming ``name`` unless ``values`` has one entry per sub-env."""
    if len(values) != num_envs:
        raise ValueError(f"{name} must have num_envs={num_envs} entries, got {len(values)}")


def _refuse_fixed(resample: bool, fixed: str | None) -> None:
    if resample and fixed is not None:
        raise ValueError(f'options["resample"] is not allowed: {fixed}')


def resample_flag(options: dict[str, Any] | None, fixed: str | None) -> bool:
    """A single env's ``options["resample"]`` (default False), checked; ``fixed`` is None
    when the instance may be redrawn, else why not (a True request then raises)."""
    resample = check_flag(
        check_reset_options(options).get("resample", False), 'options["resample"]'
    )
    _refuse_fixed(resample, fixed)
    return resample


def resample_mask(
    options: dict[str, Any] | None, num_envs: int, fixed: str | None
) -> NDArray[np.bool_]:
    """A vector env's ``options["resample"]`` (a bool, or a bool array of shape
    ``(num_envs,)``) as a new bool mask; ``fixed`` as in :func:`resample_flag`."""
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
    _refuse_fixed(bool(mask.any()), fixed)
    return mask


def instance_array(
    arr: NDArray[Any], name: str, core: tuple[str, ...], num_envs: int | None
) -> NDArray[np.float64]:
    """A given, value-checked part of the instance as the env's own float64 copy.

    ``core`` names one instance's axes (``("num_arms", "dim")``). A single env
    (``num_envs`` None) takes shape ``core``; a vector env ``(num_envs, *core)`` or ``core``
    shared by every sub-env. A ``ValueError`` naming ``name`` for a wrong shape or empty axis.
    """
    given = arr.shape
    axes = ", ".join(core)
    expected = f"({axes},)" if len(core) == 1 else f"({axes})"
    if num_envs is None:
        ok = arr.ndim == len(core)
    else:
        if arr.ndim == len(core):  # one part shared by every sub-env
            arr = np.broadcast_to(arr, (num_envs, *arr.shape))
        ok = arr.ndim == len(core) + 1 and arr.shape[0] == num_envs
        expected += f" or (num_envs, {axes}) = ({num_envs}, {axes})"
    if not ok or 0 in arr.shape[arr.ndim - len(core) :]:
        raise ValueError(f"{name} must have shape {expected} with {axes} >= 1, got shape {given}")
    return np.array(arr, dtype=np.float64)


def render_mode_missing(env: Any) -> bool:
    """Whether ``env`` was built without a ``render_mode`` (then ``render()`` returns None
    after Gymnasium's warning)."""
    if env.render_mode is not None:
        return False
    modes = env.metadata.get("render_modes", [])
    hint = f"; use {type(env).__name__}(render_mode={modes[0]!r}) or gym.make(..., render_mode=...)"
    gym.logger.warn(f"You are calling render() without a render_mode{hint if modes else '.'}")
    return True


def require_drawn(part: PartT | None, not_drawn: str) -> PartT:
    """``part`` of the instance once drawn; a ``ResetNeeded`` saying ``not_drawn`` while None."""
    if part is None:
        raise ResetNeeded(not_drawn)
    return part


def read_only_copy(arr: NDArray[Any]) -> NDArray[Any]:
    """A copy of ``arr`` that cannot be written to (what the envs' instance properties return)."""
    out = arr.copy()
    out.flags.writeable = False
    return out


def check_discrete_action(action: Any, space: Any) -> int:
    """``action`` as an int if ``space`` (a ``Discrete``) holds it; else a ``ValueError``."""
    # Bools are refused although Discrete.contains(True) holds: True is not an arm index.
    if isinstance(action, (bool, np.bool_)) or not space.contains(action):
        raise ValueError(
            f"action must be an integer in [0, {space.n - 1}] (the action space {space}), "
            f"got {action!r}"
        )
    return int(action)


def pull_info(expected: Any, optimal: Any) -> dict[str, Any]:
    """A bandit pull's ``info``: ``expected_reward``, ``optimal_expected_reward``, ``regret``."""
    return {
        "expected_reward": expected,
        "optimal_expected_reward": optimal,
        "regret": optimal - expected,
    }


def zero_final_obs(num_envs: int) -> NDArray[np.object_]:
    """``final_obs`` of a vector env whose observation is always ``np.int64(0)``."""
    final_obs = np.empty(num_envs, dtype=object)
    final_obs.fill(np.int64(0))
    return final_obs


# ----------------------------------------------------------------------------- seeding
class PerEnvGenerators:
    """One generator per sub-env, made as a single env's: sub-env ``i`` of ``reset(seed=s)``
    is seeded ``s + i``. Call :meth:`_init_generators` once ``num_envs`` is set."""

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
        # As gymnasium.Env.reset(seed=...): None keeps the generator (or makes a fresh one).
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
            check_num_entries(seed, "seed as a list", self.num_envs)
            return list(seed)
        raise TypeError(f"seed must be None, an int or a list of ints, got {type(seed).__name__}")


def set_vector_spaces(
    env: VectorEnv[Any, Any, Any],
    single_action_space: gym.Space[Any],
    single_observation_space: gym.Space[Any],
) -> None:
    """Set a native vector env's four spaces from one sub-env's, batched as ``SyncVectorEnv``
    batches them (``Discrete(K)`` -> ``MultiDiscrete([K] * num_envs)``)."""
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
    """The ``infos`` of a ``SAME_STEP`` native vector env's step, as ``SyncVectorEnv`` builds
    them: ``step_info`` (every sub-env) and ``episode_info`` (only where ``terminated``) with
    ``_key`` masks and, when some sub-env terminated, ``final_obs`` (object array, needed
    then) and ``final_info`` (the terminal step's infos, zero elsewhere)."""

    def put(target: dict[str, Any], key: str, value: Any, mask: NDArray[np.bool_]) -> None:
        target[key], target[f"_{key}"] = value, mask.copy()  # the value and its _key mask

    every = np.ones(terminated.shape[0], dtype=np.bool_)
    infos: dict[str, Any] = {}
    for key, value in step_info.items():
        put(infos, key, value, every)
    if not terminated.any():
        return infos
    for key, value in (episode_info or {}).items():
        put(infos, key, value, terminated)
    final_info: dict[str, Any] = {}
    for key, value in {**step_info, **(episode_info or {})}.items():
        put(final_info, key, np.where(terminated, value, np.zeros_like(value)), terminated)
    put(infos, "final_obs", final_obs, terminated)
    put(infos, "final_info", final_info, terminated)
    return infos


# -------------------------------------------------------------------- instance life cycle
class InstanceState:
    """What :class:`InstanceEnv` and :class:`InstanceVectorEnv` keep about their instance."""

    #: None when ``resample`` may redraw the instance, else why not (the error's reason).
    _fixed_instance: str | None = None
    _has_reset: bool = False  # set by the first reset

    def _has_instance(self) -> bool:  # given to the constructor, or drawn already
        raise NotImplementedError

    def _require_reset(self) -> None:
        if not self._has_reset:
            raise ResetNeeded("call reset() before step()")


class InstanceEnv(InstanceState, gym.Env[ObsT, np.int64]):
    """A single env whose instance is drawn at the first :meth:`reset` and kept.

    Subclasses set ``_fixed_instance`` (if fixed) and implement :meth:`_has_instance`,
    :meth:`_draw_instance` (from ``self.np_random``) and :meth:`_start_episode` (the first
    observation).
    """

    def _draw_instance(self) -> None:
        raise NotImplementedError

    def _start_episode(self) -> ObsT:
        raise NotImplementedError

    def _frame(self) -> Any:  # the frame of self.render_mode (set)
        raise NotImplementedError

    def render(self) -> Any:
        """The ``render_mode`` frame (``"ansi"``: text, ``"rgb_array"``: an image), else None."""
        return None if render_mode_missing(self) else self._frame()

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[ObsT, dict[str, Any]]:
        """Start an episode; draw the instance on the first call or on
        ``options={"resample": True}`` (refused when the constructor fixed it); returns
        the first observation and an empty ``info``.

        Parameters
        ----------
        seed : int | None
            seeds ``self.np_random`` (the instance, if drawn now, and the episode).
        options : dict[str, Any] | None
            only ``"resample"``.
        """
        resample = resample_flag(options, self._fixed_instance)
        super().reset(seed=seed)
        if not self._has_instance() or resample:
            self._draw_instance()
        self._has_reset = True
        return self._start_episode(), {}


class InstanceVectorEnv(InstanceState, PerEnvGenerators, VectorEnv):  # type: ignore[misc]
    """A native vector env of ``num_envs`` instances, sub-env ``i`` equal to a single env
    reset with seed ``seed + i``, with ``SAME_STEP`` autoreset.

    Subclasses set ``num_envs``, call :meth:`_init_generators`, set ``_fixed_instance`` (if
    fixed), and implement :meth:`_has_instance`, :meth:`_allocate_instances`,
    :meth:`_draw_instances` (sub-env ``j`` from ``self._rng(j)``), :meth:`_start_episodes`
    and :meth:`_observations`.
    """

    metadata: dict[str, Any] = {"autoreset_mode": AutoresetMode.SAME_STEP}  # noqa: RUF012

    def _allocate_instances(self) -> None:
        raise NotImplementedError

    def _draw_instances(self, resample: NDArray[np.bool_]) -> None:
        raise NotImplementedError

    def _start_episodes(self) -> None:  # every sub-env at a new episode's start (no draws)
        pass

    def _observations(self) -> Any:
        raise NotImplementedError

    def _frames(self) -> tuple[Any, ...]:  # a frame of self.render_mode (set) per sub-env
        raise NotImplementedError

    def render(self) -> tuple[Any, ...] | None:
        """One ``render_mode`` frame per sub-env (``"ansi"``: text), else None."""
        return None if render_mode_missing(self) else self._frames()

    def reset(
        self,
        *,
        seed: int | list[int | None] | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[Any, dict[str, Any]]:
        """Reset every sub-env; returns the observations and an empty ``infos``.

        Parameters
        ----------
        seed : int | list[int | None] | None
            None (keep the generators), an int ``s`` (sub-env ``i`` gets ``s + i``) or
            a list of ``num_envs`` ints or Nones.
        options : dict[str, Any] | None
            ``{"resample": mask}`` (a bool or a ``(num_envs,)`` bool array): those sub-envs
            draw a new instance.
        """
        seeds = self._per_env_seeds(seed)
        resample = resample_mask(options, self.num_envs, self._fixed_instance)
        self._apply_seeds(seeds)
        if not self._has_instance():  # the first reset draws every sub-env
            resample[:] = True
            self._allocate_instances()
        if resample.any():
            self._draw_instances(resample)
        self._start_episodes()
        self._has_reset = True
        return self._observations(), {}
