"""DE's engine around a host that gives action probabilities: :class:`DelightExplorer`.

Each :meth:`~DelightExplorer.predict` is one DE decision per observation row (paper §2.1,
Algorithm 1): the host's probabilities (a :class:`Host`), the posterior's means, baseline and EI
(:func:`~delight_gym.de.posterior.evaluate_posterior`), then the one rule and draw
(:func:`~delight_gym.de.options.decide_on_values`, :func:`delight_gym.de.rule.sample_acting`) at
``ε_t = M/(M + t)``, ``t`` counting the transitions given to :meth:`~DelightExplorer.observe`.
:class:`ExplorerBase` is what it shares with the candidate-set engine
(:mod:`delight_gym.de.engine_box`); :func:`observation_batch` and
:func:`unpack_vec_env_step` batch what they are given. Both the wrappers
(:mod:`delight_gym.wrappers`) and the SB3 algorithms (:mod:`delight_gym.sb3`) act through them.
"""

from __future__ import annotations

import inspect
from typing import Any, NamedTuple, Protocol, runtime_checkable

import numpy as np
from gymnasium import spaces

from delight_gym._checks import (
    check_all_finite,
    check_binary,
    check_nonnegative_int,
    check_probabilities,
    check_seed,
)
from delight_gym.de.options import DelightOptions, DelightSettings, decide_on_values
from delight_gym.de.posterior import ValuePosterior, adapt_posterior, evaluate_posterior
from delight_gym.de.rule import (
    DelightDecision,
    draw_acting_uniforms,
    epsilon_schedule,
    sample_acting,
    sample_acting_on_explore_rows,
)
from delight_gym.de.stats import DelightStats
from delight_gym.posteriors.value import default_posterior

__all__ = [
    "DelightExplorer",
    "ExplorerBase",
    "Host",
    "ObservedTransition",
    "observation_batch",
    "unpack_vec_env_step",
]


def unpack_vec_env_step(
    new_observations: Any, dones: Any, infos: list[dict[str, Any]]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What a posterior learns from one step of an SB3 ``VecEnv`` of ``n`` envs.

    SB3 returns a finished episode's next *first* observation; its final one is
    ``infos[i]["terminal_observation"]``, and ``infos[i]["TimeLimit.truncated"]`` marks a
    time-limit truncation, which bootstraps like any other step. Used by
    :meth:`DelightExplorationWrapper.evaluation_callback
    <delight_gym.wrappers.DelightExplorationWrapper.evaluation_callback>` and
    :class:`~delight_gym.sb3.DelightDQN`.

    Parameters
    ----------
    new_observations : array_like
        ``(n, ...)``: what the VecEnv returned.
    dones : array_like
        bool ``(n,)``.
    infos : list of dict
        The VecEnv's ``n`` infos.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray, numpy.ndarray)
        The true next observations ``(n, ...)`` (a copy), ``terminated`` and ``truncated``,
        bool ``(n,)``.
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
    """``(batch, single)``: the observation as a batch ``(n, ...)`` and whether it was one;
    a ``ValueError`` naming ``name`` (and ``where``, e.g. ``" at t = 7"``) on a wrong shape or a
    non-finite value."""
    obs = np.asarray(observation)
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


def _row_vector(value: Any, n: int, name: str, dtype: Any) -> np.ndarray:
    arr = np.asarray(value)
    if arr.size != n or arr.ndim > 1:
        raise ValueError(f"{name} must hold one value per observation ({n}), got shape {arr.shape}")
    try:
        return arr.reshape(n).astype(dtype)
    except (TypeError, ValueError):  # "could not convert string to float" names nothing
        raise TypeError(f"{name} must be numbers, got {arr.dtype} values") from None


class ObservedTransition(NamedTuple):
    """A transition (or a batch of ``n``) as :meth:`ExplorerBase.observe` hands it to an
    engine's ``_learn``: ``obs`` and ``next_obs`` checked batches ``(n, ...)``, the rest as
    given to ``observe``."""

    obs: np.ndarray
    action: Any
    reward: Any
    next_obs: np.ndarray
    terminated: Any
    truncated: Any


@runtime_checkable
class Host(Protocol):
    """A policy DE can wrap. ``observation_space`` / ``action_space`` may be ``None``."""

    observation_space: Any
    action_space: Any

    def probs(self, observations: np.ndarray) -> np.ndarray:
        """Action probabilities ``(n, A)`` for a batch of ``n`` observations."""
        ...

    def act(self, observations: np.ndarray, probs: np.ndarray) -> np.ndarray:
        """The host's own deterministic actions ``(n,)`` (``probs`` are :meth:`probs`' output)."""
        ...


class ExplorerBase(DelightSettings):
    """What both DE engines keep around their host and posterior.

    A subclass sets :attr:`host` and :attr:`observation_space` and calls :meth:`_start` in its
    constructor; it gets the options (:meth:`_resolve_options`), the default posterior's
    arguments (:meth:`_default_posterior_kwargs`), the clock, :attr:`epsilon`, :meth:`advance`
    and the batching of observations and transitions.

    Attributes
    ----------
    delight : DelightOptions
        The options in use (the clock counts steps).
    host : object
        The host adapter (its ``model``, when it has one, is an SB3 model).
    t : int
        The clock: ``start_step`` plus the transitions observed or advanced.
    rng : numpy.random.Generator
        The engine's only randomness.
    stats : DelightStats
        The decisions made (:class:`~delight_gym.de.stats.DelightStats`).
    last_info : dict
        What the last ``predict`` decided, per row.
    """

    host: Any
    observation_space: Any
    t: int
    rng: np.random.Generator
    stats: DelightStats
    last_info: dict[str, Any]

    def _resolve_options(self, delight: DelightOptions | dict[str, Any] | None) -> DelightOptions:
        """``delight=`` as this engine uses it (step clock); ``delight=False`` is refused."""
        name = type(self).__name__
        if delight is False:
            raise ValueError(f"delight=False: {name} is DE; use the host itself instead")
        return (DelightOptions.make(delight) or DelightOptions()).resolve(name, clocks=("step",))

    def _default_posterior_kwargs(
        self, posterior: Any, posterior_kwargs: dict[str, Any] | None, seed: int | None
    ) -> dict[str, Any] | None:
        """The default posterior's arguments (``gamma``: the host model's; ``seed``: ``seed``;
        ``posterior_kwargs`` first), or ``None`` when a ``posterior`` is given (then
        ``posterior_kwargs`` must be empty)."""
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
        """The clock (default: an SB3 host model's ``num_timesteps``, else 0), the generator
        and empty statistics."""
        if start_step is None:  # an SB3 host model's clock, where its training stopped
            start_step = int(getattr(getattr(self.host, "model", None), "num_timesteps", 0))
        self.t = check_nonnegative_int(start_step, "start_step")
        self.rng = np.random.default_rng(check_seed(seed))
        self.stats = DelightStats()
        self.last_info = {}

    @property
    def epsilon(self) -> float:
        """The current override probability ``ε_t``."""
        return float(epsilon_schedule(self.t, self.half_life, validate=False))

    def advance(self, n: int) -> None:
        """Advance the clock ``t`` by ``n`` transitions without updating the posterior (for an
        algorithm that trains the posterior itself, as :class:`~delight_gym.sb3.DelightDQN` an
        ensemble and :class:`~delight_gym.sb3.DelightSAC` a Q-ensemble from its replay
        buffer)."""
        self.t += check_nonnegative_int(n, "n")

    def _batch(self, observation: Any, name: str) -> tuple[np.ndarray, bool]:
        """:func:`observation_batch` in this engine's observation space, at ``t``."""
        return observation_batch(observation, self.observation_space, name, f" at t = {self.t}")

    def _transition_batch(self, obs: Any, next_obs: Any) -> tuple[np.ndarray, np.ndarray]:
        """A transition's observations and next observations as batches of the same length."""
        batch, _ = self._batch(obs, "obs")
        nxt, _ = self._batch(next_obs, "next_obs")
        if len(nxt) != len(batch):
            raise ValueError(f"next_obs holds {len(nxt)} observations, obs holds {len(batch)}")
        return batch, nxt

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
            One observation (the observation space's shape) or a batch ``(n, ...)``.
        state, episode_start :
            Recurrent state, passed through unchanged (hosts here are not recurrent).
        deterministic : bool, default False
            ``True``: the host's own choice (argmax of a callable's probabilities; an SB3
            model's ``policy.predict(deterministic=True)``), no exploration. ``False``: DE at
            the current ``ε_t`` and posterior; ``predict`` never advances ``t`` nor trains the
            posterior (that is :meth:`observe`'s job), so SB3's ``evaluate_policy`` evaluates
            frozen DE unless given a wrapper's ``evaluation_callback()``.

        Returns
        -------
        (numpy.ndarray, state)
            :class:`DelightExplorer`: int64 actions of shape ``()`` for one observation,
            ``(n,)`` for a batch; the candidate-set engine: the action space's dtype, ``(d,)``
            or ``(n, d)``.

        Notes
        -----
        :attr:`last_info` holds, one entry per row (one observation gives scalars and arrays
        without the row axis). :class:`DelightExplorer`: ``overridden`` (bool: the action was drawn
        from a non-empty override ``q`` rather than the host), ``explored`` (bool: the ``ε``
        coin chose ``q``, even when the gate was empty and ``q = π``), ``gate_size`` (int
        ``|G|``; ``-1`` where ``lazy_gate`` evaluated no gate), ``epsilon``, ``delight`` (``χ``
        of the chosen action), ``baseline`` (``v_s``), and ``host_probs``, ``acting_probs``,
        ``expected_improvement`` of shape ``(n, A)`` (``delight``, ``baseline``, ``acting_probs``
        and ``expected_improvement`` are NaN on rows a lazy gate skipped);
        ``deterministic=True`` evaluates no gate: ``overridden`` False, ``gate_size`` 0,
        ``epsilon`` 0.0, ``delight`` 0.0. The candidate-set engine: ``overridden``,
        ``explored``, ``gate_size`` (-1: no set drawn), ``delight`` (``χ`` played, else NaN),
        ``epsilon`` and ``host_actions`` ``(n, d)``.

        Examples
        --------
        >>> import numpy as np
        >>> from gymnasium import spaces
        >>> from delight_gym.wrappers import DelightExplorationWrapper
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

    def _act(self, obs: np.ndarray, deterministic: bool) -> np.ndarray:
        """Actions for the batch ``obs`` in the action space's dtype, ``(n, ...)``; sets
        :attr:`last_info` per row and records the decisions in :attr:`stats`."""
        raise NotImplementedError

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

        A truncated (not terminated) transition bootstraps from ``next_obs`` like any other,
        so pass the real final observation (SB3's ``terminal_observation``), not the reset
        one. :class:`DelightExplorer` passes ``truncated`` on to posteriors whose ``update``
        takes a ``truncated`` keyword (episode-aware ones such as
        :class:`~delight_gym.posteriors.adapters.TabularMDPAdapter`); the candidate-set engine
        steps a posterior that has an ``update`` on
        :class:`~delight_gym.posteriors.q_ensemble.ContinuousTransitions` whose next actions are
        the host's own at ``next_obs``, and checks ``truncated`` only for its shape.
        """
        batch, nxt = self._transition_batch(obs, next_obs)
        self._learn(ObservedTransition(batch, action, reward, nxt, terminated, truncated))
        self.t += len(batch)

    def _learn(self, transition: ObservedTransition) -> None:
        """Check the rest of the transition and update the posterior."""
        raise NotImplementedError


class DelightExplorer(ExplorerBase):
    """DE around a host adapter that gives action probabilities, with SB3's ``predict``.

    Parameters
    ----------
    host : Host
        The host adapter (:class:`Host`; :mod:`delight_gym.wrappers.hosts`,
        :mod:`delight_gym.sb3.hosts`).
    posterior : ValuePosterior, optional
        Means and EI; default :func:`~delight_gym.posteriors.value.default_posterior`.
    delight : DelightOptions or dict, optional
        DE's options (:class:`~delight_gym.de.options.DelightOptions`; the clock counts steps).
    seed : int, optional
        Seed of the engine's own ``numpy.random.Generator``, its only randomness.
    posterior_kwargs : dict, optional
        The default posterior's arguments (``gamma``: the host model's; ``seed``: ``seed``).
    lazy_gate : bool, default False
        Evaluate the posterior and the gate only on rows whose ``ε`` coin chose the override.
    start_step : int, optional
        Where ``t`` starts (default: an SB3 host's ``num_timesteps``, else 0).

    Attributes
    ----------
    delight, host, posterior, t, rng, stats, last_info :
        As for :class:`ExplorerBase`; ``last_info``: see :meth:`predict`.
    """

    def __init__(
        self,
        host: Host,
        posterior: ValuePosterior | None = None,
        *,
        delight: DelightOptions | dict[str, Any] | None = None,
        seed: int | None = None,
        posterior_kwargs: dict[str, Any] | None = None,
        lazy_gate: bool = False,
        start_step: int | None = None,
    ) -> None:
        if not isinstance(lazy_gate, bool):
            raise TypeError(f"lazy_gate must be a bool, got {lazy_gate!r}")
        self.lazy_gate = lazy_gate
        self.delight = self._resolve_options(delight)
        self.host = host
        obs_space = self.host.observation_space
        if obs_space is None:
            raise TypeError(
                "observation_space is required for a callable host (it tells one observation "
                "from a batch)"
            )
        if not isinstance(obs_space, spaces.Space):
            raise TypeError(
                f"observation_space must be a gymnasium Space, got {type(obs_space).__name__}"
            )
        self.observation_space = obs_space
        act_space = self.host.action_space
        if act_space is not None and not isinstance(act_space, spaces.Discrete):
            raise ValueError(
                f"action_space must be Discrete, got {act_space!r}; for Box actions use "
                "ContinuousDelightWrapper"
            )
        self.num_actions: int | None = None if act_space is None else int(act_space.n)
        kwargs = self._default_posterior_kwargs(posterior, posterior_kwargs, seed)
        if kwargs is not None:
            if self.num_actions is None:
                raise TypeError(
                    "the default posterior needs the number of actions: pass action_space"
                )
            posterior = default_posterior(obs_space, self.num_actions, **kwargs)
        else:
            posterior = adapt_posterior(posterior, self.num_actions, obs_space)
        if not isinstance(posterior, ValuePosterior):
            raise TypeError(
                "posterior must follow delight_gym.posteriors.ValuePosterior (num_actions, mean, "
                f"expected_improvement, update), got {type(posterior).__name__}"
            )
        if self.num_actions is not None and posterior.num_actions != self.num_actions:
            raise ValueError(
                f"posterior has {posterior.num_actions} actions but the host's action space has "
                f"{self.num_actions}"
            )
        self.posterior = posterior
        try:
            params = inspect.signature(posterior.update).parameters
        except (TypeError, ValueError):  # pragma: no cover - builtins without a signature
            params = {}  # type: ignore[assignment]
        self._update_takes_truncated = "truncated" in params
        self._start(seed, start_step)

    def host_probs(self, observations: np.ndarray) -> np.ndarray:
        """The host's probabilities for a batch ``(n, ...)``, validated, float64 ``(n, A)``."""
        n = len(observations)
        probs = self.host.probs(observations)
        a = self.num_actions if self.num_actions is not None else self.posterior.num_actions
        if probs.shape != (n, a):
            raise ValueError(
                f"host returned probabilities of shape {probs.shape}, expected (n, A) = ({n}, {a})"
            )
        check_probabilities(probs, "host probabilities")
        return probs

    @property
    def baseline(self) -> str:
        """The EI baseline, ``"host"`` or ``"max"`` (``delight.baseline``)."""
        return self.delight.baseline

    def _decide(
        self, obs: np.ndarray, probs: np.ndarray, eps: float
    ) -> tuple[DelightDecision, np.ndarray, np.ndarray]:
        """The rule's decision for ``obs`` (``(n, ...)``), with the baseline and EI used."""
        values = evaluate_posterior(self.posterior, obs, probs, self.baseline)
        decision, ei = decide_on_values(self.delight, probs, values, eps)
        return decision, values.baseline, ei

    def _act(self, obs: np.ndarray, deterministic: bool) -> np.ndarray:
        """int64 actions ``(n,)`` for a batch; sets :attr:`last_info` (see :meth:`predict`)."""
        n = len(obs)
        probs = self.host_probs(obs)
        if deterministic:
            actions = np.asarray(self.host.act(obs, probs), dtype=np.int64).reshape(n)
            zeros = np.zeros(n)
            info: dict[str, Any] = {
                "overridden": np.zeros(n, dtype=bool),
                "explored": np.zeros(n, dtype=bool),
                "gate_size": np.zeros(n, dtype=np.int64),
                "epsilon": 0.0,
                "delight": zeros,
                "baseline": np.full(n, np.nan),
                "host_probs": probs,
                "acting_probs": probs,
                "expected_improvement": np.zeros_like(probs),
            }
        elif not self.lazy_gate:
            eps = self.epsilon
            decision, base, ei = self._decide(obs, probs, eps)
            actions, explored = sample_acting(decision, self.rng)
            actions = np.asarray(actions, dtype=np.int64)
            info = {
                "overridden": explored & ~decision.gate_empty,
                "explored": explored,
                "gate_size": decision.gate.sum(axis=1),
                "epsilon": eps,
                "delight": decision.delight[np.arange(n), actions],
                "baseline": base,
                "host_probs": probs,
                "acting_probs": decision.probs,
                "expected_improvement": ei,
            }
        else:
            actions, info = self._predict_lazy(obs, probs)
        if not deterministic:
            self.stats.record_info(info, actions)
        self.last_info = info
        return actions

    def _predict_lazy(self, obs: np.ndarray, probs: np.ndarray) -> tuple[np.ndarray, dict]:
        """``predict``'s actions and info with ``lazy_gate``: the posterior and the gate only on
        the rows whose ``ε`` coin chose the override."""
        n = len(obs)
        eps = self.epsilon
        used: dict[str, np.ndarray] = {}  # baseline and EI of the exploring rows

        def decide(rows: np.ndarray) -> DelightDecision:
            decision, used["baseline"], used["ei"] = self._decide(obs[rows], probs[rows], eps)
            return decision

        draw = sample_acting_on_explore_rows(
            draw_acting_uniforms(self.rng, (n,)), eps, decide, host_probs=probs
        )
        actions = np.asarray(draw.actions, dtype=np.int64)
        nan = np.full(n, np.nan)
        info: dict[str, Any] = {
            "overridden": np.zeros(n, dtype=bool),
            "explored": draw.explored,
            "gate_size": np.full(n, -1, dtype=np.int64),
            "epsilon": eps,
            "delight": nan.copy(),
            "baseline": nan.copy(),
            "host_probs": probs,
            "acting_probs": np.full_like(probs, np.nan),
            "expected_improvement": np.full_like(probs, np.nan),
        }
        if draw.decision is not None:
            rows, decision = draw.rows, draw.decision
            info["overridden"][rows] = ~decision.gate_empty
            info["gate_size"][rows] = decision.gate.sum(axis=1)
            info["delight"][rows] = decision.delight[np.arange(rows.size), draw.chosen]
            info["baseline"][rows] = used["baseline"]
            info["acting_probs"][rows] = decision.probs
            info["expected_improvement"][rows] = used["ei"]
        return actions, info

    def _learn(self, transition: ObservedTransition) -> None:
        """The posterior's ``update`` on the checked transition. ``truncated`` is passed on to
        posteriors whose ``update`` takes a ``truncated`` keyword (episode-aware ones such as
        :class:`~delight_gym.posteriors.adapters.TabularMDPAdapter`); others ignore it."""
        batch, action, reward, nxt, terminated, truncated = transition
        where = f" at t = {self.t}"
        n = len(batch)
        act = _row_vector(action, n, "action", np.float64)
        a = self.posterior.num_actions
        if np.any(act != np.round(act)) or np.any(act < 0) or np.any(act >= a):
            raise ValueError(f"action must be integers in [0, {a})")
        rew = _row_vector(reward, n, "reward", np.float64)
        check_all_finite(rew, "reward", where=where)
        flags = {}
        for name, value in (("terminated", terminated), ("truncated", truncated)):
            flag = _row_vector(value, n, name, np.asarray(value).dtype)
            check_binary(flag, name)  # 0.3 is not a flag: never rounded to True
            flags[name] = flag.astype(bool)
        term, trunc = flags["terminated"], flags["truncated"]
        update: Any = self.posterior.update  # the protocol's update, maybe with `truncated`
        if self._update_takes_truncated:
            update(batch, act.astype(np.int64), rew, nxt, term, truncated=trunc)
        else:
            update(batch, act.astype(np.int64), rew, nxt, term)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(host={self.host!r}, posterior={self.posterior!r}, "
            f"gate_price={self.gate_price}, surprisal_cap={self.surprisal_cap}, "
            f"half_life={self.half_life}, baseline={self.baseline!r}, t={self.t})"
        )
