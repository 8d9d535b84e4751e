"""The half both DE engines share: :class:`DelightEngine`, and the batching helpers.

An engine keeps a host, a posterior, DE's options, a clock ``t`` and one generator; ``predict``
has SB3's signature, ``observe`` feeds the posterior and advances ``t``. The engines:
:class:`~delight_gym.de.engine_discrete.DiscreteDelightWrapper` (``Discrete``) and
:class:`~delight_gym.de.engine_box.ContinuousDelightWrapper` (``Box``).
"""

from __future__ import annotations

import abc
import importlib
import io
import os
import pickle
import zipfile
import zlib
from typing import Any, ClassVar, NamedTuple

import numpy as np
from gymnasium import spaces

from delight_gym._checks import check_all_finite, check_nonnegative_int, check_seed
from delight_gym.de.decide import ScaledGateSettings, decide_on_values
from delight_gym.de.options import DelightOptions, DelightOptionsView
from delight_gym.de.posterior import PosteriorValues
from delight_gym.de.rule import DelightDecision, epsilon_schedule, sample_acting
from delight_gym.de.stats import DelightStats

__all__ = [
    "DelightEngine",
    "ObservedTransition",
    "ValueAct",
    "act_on_values",
    "observation_batch",
    "row_vector",
    "unpack_vec_env_step",
]

_ENGINE_FILE, _MODEL_FILE, _MODEL_CLASS_FILE = "engine.pkl", "model.zip", "model_class.txt"
_PARTS = (_ENGINE_FILE, _MODEL_FILE, _MODEL_CLASS_FILE)
_UNREADABLE = (zipfile.BadZipFile, EOFError, zlib.error)
#: What a damaged or foreign save raises while unpickled or loaded (never OSError or MemoryError).
_DAMAGED: tuple[type[Exception], ...] = (*_UNREADABLE, pickle.UnpicklingError, ImportError)
_DAMAGED += (AttributeError, LookupError, TypeError, ValueError, RuntimeError)


class ValueAct(NamedTuple):
    """One value-based act of ``n`` rows (:func:`act_on_values`)."""

    actions: np.ndarray  #: int64 ``(n,)``
    explored: np.ndarray  #: bool ``(n,)``: the ``ε`` coin chose the override ``q``
    overridden: np.ndarray  #: bool ``(n,)``: ``explored`` and the gate was not empty
    decision: DelightDecision  #: the rule's decision
    expected_improvement: np.ndarray  #: float64 ``(n, A)``: the EI the gate saw


def act_on_values(
    options: ScaledGateSettings,
    host_probs: np.ndarray,
    values: PosteriorValues,
    epsilon: float,
    rng: np.random.Generator,
    stats: DelightStats | None = None,
    *,
    value_scale: float | None = None,
) -> ValueAct:
    """DE's act from the host's checked float64 ``(n, A)`` probabilities and a posterior's
    values: :func:`~delight_gym.de.decide.decide_on_values`, then
    :func:`~delight_gym.de.rule.sample_acting`, recorded in ``stats`` when given. The one act
    of the ``Discrete`` engine (so of ``DelightDQN``) and of ``BootstrappedDQN``;
    ``value_scale`` defaults to ``options.value_scale``."""
    decision, ei = decide_on_values(options, host_probs, values, epsilon, value_scale=value_scale)
    actions, explored = sample_acting(decision, rng)
    actions = np.asarray(actions, dtype=np.int64)
    overridden = explored & ~decision.gate_empty
    if stats is not None:
        chosen_ei = ei[np.arange(len(actions)), actions][overridden]
        stats.record(overridden, decision.gate.sum(axis=1), decision.gate_empty, chosen_ei, epsilon)
    return ValueAct(actions, explored, overridden, decision, ei)


def unpack_vec_env_step(
    new_observations: Any, dones: Any, infos: list[dict[str, Any]]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What a posterior learns from one step of an SB3 ``VecEnv``: the true next observations
    ``(n, ...)`` (a copy), ``terminated`` and ``truncated`` (bool ``(n,)``).

    SB3 returns a finished episode's next *first* observation; the final one is
    ``infos[i]["terminal_observation"]``, and ``infos[i]["TimeLimit.truncated"]`` marks a
    truncation (which bootstraps like any other step).
    """
    next_obs = np.array(new_observations, copy=True)
    done = np.asarray(dones, dtype=bool).reshape(-1)
    truncated = np.array([bool(info.get("TimeLimit.truncated", False)) for info in infos])
    for i in np.flatnonzero(done):
        final = infos[i].get("terminal_observation")
        if final is not None:
            next_obs[i] = final
    return next_obs, done & ~truncated, truncated


def observation_batch(
    observation: Any, space: Any, name: str, where: str
) -> tuple[np.ndarray, bool]:
    """``(batch (n, ...), single)``; TypeError naming ``name`` on a dtype that is not numeric,
    ValueError (naming ``where`` too, e.g. ``" at t = 7"``) on a wrong shape or a non-finite
    value."""
    obs = np.asarray(observation)
    if obs.dtype.kind not in "biuf":  # strings or objects would fail inside the host
        raise TypeError(f"{name} must be numbers, got dtype {obs.dtype}")
    check_all_finite(obs, name, where=where)
    if isinstance(space, spaces.Discrete):
        if obs.ndim == 0:
            return obs.reshape(1), True
        if obs.ndim == 1:
            return obs, False
        raise ValueError(
            f"{name} must be a Discrete observation or a batch of them (shape () or (n,)), "
            f"got shape {obs.shape}"
        )
    shape = tuple(space.shape)
    if obs.shape == shape:
        return obs.reshape((1, *shape)), True
    if obs.ndim == len(shape) + 1 and obs.shape[1:] == shape:
        return obs, False
    raise ValueError(
        f"{name} must have shape {shape} (one observation) or (n, {', '.join(map(str, shape))})"
        f" (a batch), got {obs.shape}"
    )


def row_vector(value: Any, n: int, name: str, dtype: Any) -> np.ndarray:
    """``value`` as ``(n,)`` of ``dtype``; an error naming ``name`` otherwise."""
    arr = np.asarray(value)
    if arr.size != n or arr.ndim > 1:
        raise ValueError(f"{name} must hold one value per observation ({n}), got shape {arr.shape}")
    try:
        return arr.reshape(n).astype(dtype)
    except (TypeError, ValueError):  # "could not convert string to float" names nothing
        raise TypeError(f"{name} must be numbers, got {arr.dtype} values") from None


class ObservedTransition(NamedTuple):
    """A transition batch as :meth:`DelightEngine.observe` hands it to ``_learn``: ``obs`` and
    ``next_obs`` checked ``(n, ...)``, the rest as given."""

    obs: np.ndarray
    action: Any
    reward: Any
    next_obs: np.ndarray
    terminated: Any
    truncated: Any


class DelightEngine(DelightOptionsView, metaclass=abc.ABCMeta):
    """The shared half of both DE engines (:class:`~delight_gym.DelightExplorationWrapper`).

    A subclass sets :attr:`host` and :attr:`observation_space`, calls :meth:`_start` and
    implements ``_act`` and ``_learn``.

    Attributes
    ----------
    delight, host : DelightOptions, object
        The options in use; the host adapter (its ``model``, if any, an SB3 model).
    t, episodes : int
        ``start_step`` plus the transitions observed or advanced; the episodes finished.
    rng, stats : numpy.random.Generator, DelightStats
        The engine's only randomness; the decisions made.
    last_info : dict
        What the last ``predict`` decided, per row.
    """

    delight: DelightOptions
    host: Any
    observation_space: Any
    t: int
    episodes: int
    rng: np.random.Generator
    stats: DelightStats
    last_info: dict[str, Any]

    #: Whether the engine can divide EI by its posterior's spread (``value_scale="spread"``).
    spread_scale: ClassVar[bool] = False

    def _resolve_options(self, delight: DelightOptions | dict[str, Any] | None) -> DelightOptions:
        """``delight=`` as this engine uses it (default: the step clock; ``False`` refused)."""
        name = type(self).__name__
        if delight is False:
            raise ValueError(f"delight=False: {name} is DE; use the host itself instead")
        return (DelightOptions.make(delight) or DelightOptions()).resolve(
            name, clocks=("step", "episode"), spread_scale=self.spread_scale, commits=True
        )

    def _host_observation_space(self) -> Any:
        """The host's observation space; a ``TypeError`` if it has none (a callable host given
        none)."""
        space = self.host.observation_space
        if space is None:
            raise TypeError(
                "observation_space is required for a callable host (it tells one observation "
                "from a batch)"
            )
        return space

    def _default_posterior_kwargs(
        self, posterior: Any, posterior_kwargs: dict[str, Any] | None, seed: int | None
    ) -> dict[str, Any] | None:
        """The default posterior's arguments (``posterior_kwargs``, then the host model's
        ``gamma`` and ``seed``), or ``None`` when a ``posterior`` is given."""
        if posterior is not None:
            if posterior_kwargs:
                raise TypeError("posterior_kwargs apply only to the default posterior")
            return None
        kwargs = dict(posterior_kwargs or {})
        model = getattr(self.host, "model", None)
        if hasattr(model, "gamma"):
            kwargs.setdefault("gamma", float(model.gamma))  # type: ignore[union-attr]
        kwargs.setdefault("seed", seed)
        return kwargs

    def _start(self, seed: int | None, start_step: int | None) -> None:
        if start_step is None:  # an SB3 host model's clock, where its training stopped
            start_step = int(getattr(getattr(self.host, "model", None), "num_timesteps", 0))
        self.t = check_nonnegative_int(start_step, "start_step")
        self.episodes = 0
        self.rng = np.random.default_rng(check_seed(seed))
        self.stats = DelightStats()
        self.last_info = {}

    @property
    def clock(self) -> int:
        """``ε_t``'s ``t``: transitions seen, or episodes finished (``delight.clock="episode"``)."""
        return self.episodes if self.delight.clock == "episode" else self.t

    @property
    def epsilon(self) -> float:
        """The current ``ε_t = M/(M + t)``, ``t`` on :attr:`clock`."""
        return float(epsilon_schedule(self.clock, self.half_life))

    def advance(self, n: int, done: Any = None) -> None:
        """Advance ``t`` by ``n`` transitions without updating the posterior (an algorithm that
        trains it itself, as ``DelightDQN`` and ``DelightSAC``); ``done`` (bool ``(n,)``)
        marks the rows whose episode ended (a ``ValueError`` unless it holds ``n`` flags)."""
        n = check_nonnegative_int(n, "n")
        if done is not None:
            ended = np.asarray(done, dtype=bool).reshape(-1)
            if ended.size != n:
                raise ValueError(f"done must hold {n} flags, got {ended.size}")
            self._end_episodes(ended)
        self.t += n

    def _end_episodes(self, ended: np.ndarray) -> None:
        self.episodes += int(ended.sum())
        self._release(ended)

    def _release(self, ended: np.ndarray) -> None:
        """End the held overrides of the rows ``ended`` (for engines that hold)."""
        return None

    def _batch(self, observation: Any, name: str) -> tuple[np.ndarray, bool]:
        return observation_batch(observation, self.observation_space, name, f" at t = {self.t}")

    def predict(
        self,
        observation: Any,
        state: Any = None,
        episode_start: Any = None,
        deterministic: bool = False,
    ) -> tuple[np.ndarray, Any]:
        """Actions for one observation or a batch, with Stable-Baselines3's signature and types.

        Parameters
        ----------
        observation : array_like
            One observation or a batch ``(n, ...)``.
        state, episode_start :
            Passed through (hosts here are not recurrent).
        deterministic : bool, default False
            ``True``: the host's own choice, no exploration. ``False``: DE at the current
            ``ε_t``; ``predict`` never advances ``t`` nor trains the posterior (:meth:`observe`
            does), so SB3's ``evaluate_policy`` is frozen DE without
            :meth:`evaluation_callback`.

        Returns
        -------
        (numpy.ndarray, state)
            ``Discrete``: int64, ``()`` or ``(n,)``; ``Box``: the space's dtype, ``(d,)`` or
            ``(n, d)``.

        Notes
        -----
        :attr:`last_info` holds one entry per row (no row axis for one observation).
        ``Discrete``: ``overridden`` (drawn from a non-empty ``q``), ``explored`` (the ``ε``
        coin chose ``q``, even if ``q = π``), ``gate_size`` (``|G|``; ``-1``: no gate
        evaluated), ``epsilon``, ``delight`` (``χ`` of the action), ``baseline`` (``v_s``),
        ``host_probs``, ``acting_probs`` and ``expected_improvement`` ``(n, A)`` (NaN on rows
        a lazy gate skipped); ``deterministic=True`` gives ``gate_size`` 0, ``epsilon`` and
        ``delight`` 0. ``Box``: ``overridden``, ``explored``, ``gate_size`` (-1: no set
        drawn), ``delight`` (``χ`` played, else NaN), ``epsilon``, ``host_actions``
        ``(n, d)``.

        Examples
        --------
        >>> import numpy as np
        >>> from gymnasium import spaces
        >>> from delight_gym import DelightExplorationWrapper
        >>> host = lambda obs: np.tile([0.9, 0.1], (len(obs), 1))
        >>> de = DelightExplorationWrapper(
        ...     host, observation_space=spaces.Discrete(3), action_space=spaces.Discrete(2), seed=0
        ... )
        >>> action, _ = de.predict(0)  # ε_0 = 1 and the fresh prior's EI opens the gate
        >>> int(action), bool(de.last_info["overridden"]), int(de.last_info["gate_size"])
        (1, True, 1)
        >>> int(de.predict(0, deterministic=True)[0])
        0
        >>> de.observe(0, action, 1.0, 1, False, False)
        >>> de.t, de.epsilon
        (1, 0.9900990099009901)
        """
        obs, single = self._batch(observation, "observation")
        actions = self._act(obs, deterministic)
        if single:  # SB3's types: an array without the row axis (0-d for a Discrete action)
            info = self.last_info
            self.last_info = {
                k: (v[0] if isinstance(v, np.ndarray) else v) for k, v in info.items()
            }
            return actions.reshape(actions.shape[1:]), state
        return actions, state

    @abc.abstractmethod
    def _act(self, obs: np.ndarray, deterministic: bool) -> np.ndarray:
        """Actions ``(n, ...)`` for the batch ``obs``; sets :attr:`last_info`, records
        :attr:`stats`."""
        ...

    def observe(
        self,
        obs: Any,
        action: Any,
        reward: Any,
        next_obs: Any,
        terminated: Any,
        truncated: Any,
    ) -> None:
        """Feed one transition (or a batch) to the posterior and advance ``t`` by its rows.

        A truncated transition bootstraps from ``next_obs``: pass the real final observation
        (SB3's ``terminal_observation``). The ``Discrete`` engine passes ``truncated`` to an
        ``update`` that takes it; the ``Box`` engine only checks it.
        """
        batch, nxt = self._batch(obs, "obs")[0], self._batch(next_obs, "next_obs")[0]
        if len(nxt) != len(batch):
            raise ValueError(f"next_obs holds {len(nxt)} observations, obs holds {len(batch)}")
        self._learn(ObservedTransition(batch, action, reward, nxt, terminated, truncated))
        # _learn checked the flags (one 0/1 or bool per row): no second check here
        ended = np.asarray(terminated, dtype=bool).reshape(-1) | np.asarray(
            truncated, dtype=bool
        ).reshape(-1)
        self._end_episodes(ended)
        self.t += len(batch)

    @abc.abstractmethod
    def _learn(self, transition: ObservedTransition) -> None: ...

    def evaluation_callback(self, logger: Any = None) -> Any:
        """A ``callback`` for SB3's ``evaluate_policy`` that feeds every evaluation transition
        to :meth:`observe`, so the evaluation is online DE; :attr:`stats` is logged to and
        dumped on ``logger`` (an SB3 ``Logger``, optional) at the end of every episode."""

        def callback(locals_: dict[str, Any], globals_: dict[str, Any]) -> None:
            i = int(locals_["i"])
            done = bool(locals_["done"])
            next_obs, terminated, truncated = unpack_vec_env_step(
                locals_["new_observations"][i : i + 1], [done], [locals_["info"]]
            )
            self.observe(
                locals_["observations"][i],
                locals_["actions"][i],
                locals_["reward"],
                next_obs[0],
                terminated[0],
                truncated[0],
            )
            if done and logger is not None and self.stats.log(logger):
                logger.dump(step=self.t)

        return callback

    def save(self, path: str | os.PathLike[str]) -> None:
        """Save the engine, and its host's SB3 model (through its own ``save``), to the zip
        file ``path`` (``.zip`` is not appended)."""
        model = getattr(self.host, "model", None)
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr(_ENGINE_FILE, pickle.dumps(self))  # hosts drop their model
            if model is not None:
                buffer = io.BytesIO()
                model.save(buffer)
                archive.writestr(_MODEL_FILE, buffer.getvalue())
                cls = type(model)
                archive.writestr(_MODEL_CLASS_FILE, f"{cls.__module__}:{cls.__qualname__}")

    @classmethod
    def load(cls, path: str | os.PathLike[str], device: Any = "auto") -> DelightEngine:
        """An engine saved by :meth:`save`, with its host's SB3 model loaded on ``device``.

        Raises
        ------
        ValueError
            Naming ``path`` and the part that is missing, damaged or refers to what cannot be
            imported (the model's class must be a stable_baselines3 ``BaseAlgorithm``).
        """
        try:
            with zipfile.ZipFile(path) as archive:
                parts = {n: archive.read(n) for n in _PARTS if n in archive.namelist()}
        except _UNREADABLE as exc:
            raise ValueError(f"{path} is not a readable saved DE engine: {exc}") from None
        if _ENGINE_FILE not in parts:
            raise ValueError(f"{path} is not a saved DE engine: no {_ENGINE_FILE}")
        try:
            engine = pickle.loads(parts[_ENGINE_FILE])
        except _DAMAGED as exc:  # a missing module, class or field, or damaged bytes
            raise ValueError(f"{path}: its {_ENGINE_FILE} cannot be loaded: {exc!r}") from None
        if not isinstance(engine, DelightEngine):
            raise ValueError(f"{path} holds a {type(engine).__name__}, not a DE engine")
        if not isinstance(getattr(engine, "rng", None), np.random.Generator):
            raise ValueError(f"{path}: its engine's rng is not a numpy Generator")
        if _MODEL_FILE in parts:
            name = parts.get(_MODEL_CLASS_FILE, b"").decode(errors="replace")
            module, _, qualname = name.partition(":")
            try:
                algorithm = getattr(importlib.import_module(module), qualname)
            except (ImportError, AttributeError, ValueError, TypeError):
                algorithm = None
            from stable_baselines3.common.base_class import BaseAlgorithm

            if not (isinstance(algorithm, type) and issubclass(algorithm, BaseAlgorithm)):
                raise ValueError(
                    f"{path}: its {_MODEL_CLASS_FILE} names {name!r}, not an importable "
                    "stable_baselines3 algorithm"
                )
            try:
                engine.host.model = algorithm.load(io.BytesIO(parts[_MODEL_FILE]), device=device)
            except _DAMAGED as exc:
                raise ValueError(f"{path}: its {_MODEL_FILE} is damaged: {exc!r}") from None
        return engine
