"""``DelightExplorationWrapper``: Delight-gated exploration around any host policy.

Each :meth:`~DelightExplorationWrapper.predict` is one DE decision per observation row (paper
§2.1, Algorithm 1): the host's probabilities (:mod:`delight_gym.wrappers.hosts`), the
posterior's means, baseline and EI (:func:`~delight_gym.posteriors.base.evaluate_posterior`),
then the one rule and draw (:func:`~delight_gym.options.decide_on_values`,
:func:`delight_gym.rule.sample_acting`)
at ``ε_t = M/(M + t)``, ``t`` counting the transitions given to
:meth:`~DelightExplorationWrapper.observe`. ``deterministic=True`` is the host's own choice
(SB3's contract); ``deterministic=False`` is DE frozen at the current ``ε_t`` and posterior.
The decision step by step, the default posteriors, evaluation with SB3's ``evaluate_policy``
and the clock of a wrapped trained model: ``docs/sb3.md``.
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
from gymnasium import spaces

from delight_gym._checks import (
    check_all_finite,
    check_binary,
    check_nonnegative_int,
    check_probabilities,
    check_seed,
)
from delight_gym.options import DelightOptions, DelightSettings, decide_on_values
from delight_gym.posteriors.base import (
    BASELINES,
    ValuePosterior,
    adapt_posterior,
    evaluate_posterior,
)
from delight_gym.posteriors.value import default_posterior
from delight_gym.rule import (
    DelightDecision,
    draw_acting_uniforms,
    epsilon_schedule,
    sample_acting,
    sample_acting_on_explore_rows,
)
from delight_gym.stats import DelightStats
from delight_gym.wrappers.hosts import Host, make_host

__all__ = ["BASELINES", "DelightExplorationWrapper", "observation_batch", "unpack_vec_env_step"]


def unpack_vec_env_step(
    new_observations: Any, dones: Any, infos: list[dict[str, Any]]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What a posterior learns from one step of an SB3 ``VecEnv`` of ``n`` envs.

    SB3 returns a finished episode's next *first* observation; its final one is
    ``infos[i]["terminal_observation"]``, and ``infos[i]["TimeLimit.truncated"]`` marks a
    time-limit truncation, which bootstraps like any other step. Used by
    :meth:`DelightExplorationWrapper.evaluation_callback` and :class:`~delight_gym.sb3.DelightDQN`.

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


class DelightExplorationWrapper(DelightSettings):
    """Delight-gated exploration around a host policy, with SB3's ``predict`` signature.

    Its state: the options in use ``delight``, ``host``, ``posterior``, the clock ``t``
    (``start_step`` plus the transitions observed), ``rng``, ``stats``
    (:class:`~delight_gym.stats.DelightStats`) and ``last_info`` (see :meth:`predict`).

    Parameters
    ----------
    host : callable or stable_baselines3 model or Host
        Observations ``(n, ...)`` → probabilities ``(n, A)``; an SB3 PPO, A2C or DQN; or a
        host adapter (:mod:`~delight_gym.wrappers.hosts`).
    posterior : ValuePosterior, optional
        Means and EI; default :func:`~delight_gym.posteriors.value.default_posterior`.
    delight : DelightOptions or dict, optional
        DE's options (:class:`~delight_gym.options.DelightOptions`; the clock counts steps).
    seed : int, optional
        Seed of the wrapper's own ``numpy.random.Generator``, its only randomness.
    host_temperature : float, optional
        DQN hosts: ``None`` greedy, ``τ > 0`` Boltzmann.
    observation_space, action_space : gymnasium.Space, optional
        Required for a callable host (SB3 models carry their own).
    posterior_kwargs : dict, optional
        The default posterior's arguments (``gamma``: the host model's; ``seed``: ``seed``).
    lazy_gate : bool, default False
        Evaluate the posterior and the gate only on rows whose ``ε`` coin chose the override.
    start_step : int, optional
        Where ``t`` starts (default: an SB3 host's ``num_timesteps``, else 0).
    """

    def __init__(
        self,
        host: Any,
        posterior: ValuePosterior | None = None,
        *,
        delight: DelightOptions | dict[str, Any] | None = None,
        seed: int | None = None,
        host_temperature: float | None = None,
        observation_space: Any = None,
        action_space: Any = None,
        posterior_kwargs: dict[str, Any] | None = None,
        lazy_gate: bool = False,
        start_step: int | None = None,
    ) -> None:
        if not isinstance(lazy_gate, bool):
            raise TypeError(f"lazy_gate must be a bool, got {lazy_gate!r}")
        self.lazy_gate = lazy_gate
        if delight is False:
            raise ValueError("delight=False: the wrapper is DE; use the host itself instead")
        options = DelightOptions.make(delight)
        self.delight = (options or DelightOptions()).resolve(type(self).__name__, clocks=("step",))
        self.host: Host = make_host(
            host,
            temperature=host_temperature,
            observation_space=observation_space,
            action_space=action_space,
        )
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
        if posterior is None:
            if self.num_actions is None:
                raise TypeError(
                    "the default posterior needs the number of actions: pass action_space"
                )
            kwargs = dict(posterior_kwargs or {})
            host_model = getattr(self.host, "model", None)
            if "gamma" not in kwargs and hasattr(host_model, "gamma"):
                kwargs["gamma"] = float(host_model.gamma)  # type: ignore[union-attr]
            kwargs.setdefault("seed", seed)
            posterior = default_posterior(obs_space, self.num_actions, **kwargs)
        elif posterior_kwargs:
            raise TypeError("posterior_kwargs apply only to the default posterior")
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
        if start_step is None:  # an SB3 host model's clock, where its training stopped
            start_step = int(getattr(getattr(self.host, "model", None), "num_timesteps", 0))
        self.t = check_nonnegative_int(start_step, "start_step")
        self.rng = np.random.default_rng(check_seed(seed))
        self.last_info: dict[str, Any] = {}
        self.stats = DelightStats()

    @property
    def epsilon(self) -> float:
        """The current override probability ``ε_t``."""
        return float(epsilon_schedule(self.t, self.half_life, validate=False))

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

    def predict(
        self,
        observation: Any,
        state: Any = None,
        episode_start: Any = None,
        deterministic: bool = False,
    ) -> tuple[np.ndarray, Any]:
        """Actions for one observation or a batch, with Stable-Baselines3's signature.

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
            frozen DE unless given ``callback=self.evaluation_callback()``.

        Returns
        -------
        (numpy.ndarray, state)
            int64 actions of shape ``()`` for one observation, ``(n,)`` for a batch.

        Notes
        -----
        :attr:`last_info` holds, one entry per row: ``overridden`` (bool: the action was drawn
        from a non-empty override ``q`` rather than the host), ``explored`` (bool: the ``ε``
        coin chose ``q``, even when the gate was empty and ``q = π``), ``gate_size`` (int
        ``|G|``; ``-1`` where ``lazy_gate`` evaluated no gate), ``epsilon``, ``delight`` (``χ``
        of the chosen action), ``baseline`` (``v_s``), and ``host_probs``, ``acting_probs``,
        ``expected_improvement`` of shape ``(n, A)`` (``delight``, ``baseline``, ``acting_probs``
        and ``expected_improvement`` are NaN on rows a lazy gate skipped). One observation gives
        scalars and ``(A,)`` arrays. ``deterministic=True`` evaluates no gate: ``overridden``
        False, ``gate_size`` 0, ``epsilon`` 0.0, ``delight`` 0.0.

        Examples
        --------
        >>> import numpy as np
        >>> from gymnasium import spaces
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
        obs, single = observation_batch(
            observation, self.observation_space, "observation", f" at t = {self.t}"
        )
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
            info = {
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
        if not deterministic:
            self.stats.record_info(info, actions)
        if single:
            info = {k: (v[0] if isinstance(v, np.ndarray) else v) for k, v in info.items()}
            self.last_info = info
            return actions.reshape(()), state  # a 0-d array, as SB3's predict
        self.last_info = info
        return actions, state

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
        one. ``truncated`` is passed on to posteriors whose ``update`` takes a ``truncated``
        keyword (episode-aware ones such as
        :class:`~delight_gym.posteriors.adapters.TabularMDPAdapter`); others ignore it.
        """
        where = f" at t = {self.t}"
        batch, _ = observation_batch(obs, self.observation_space, "obs", where)
        nxt, _ = observation_batch(next_obs, self.observation_space, "next_obs", where)
        n = len(batch)
        if len(nxt) != n:
            raise ValueError(f"next_obs holds {len(nxt)} observations, obs holds {n}")
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
        self.t += n

    def advance(self, n: int) -> None:
        """Advance the clock ``t`` by ``n`` transitions without updating the posterior (for an
        algorithm that trains the posterior itself, as :class:`~delight_gym.sb3.DelightDQN`
        does an ensemble from its replay buffer)."""
        self.t += check_nonnegative_int(n, "n")

    def evaluation_callback(self, logger: Any = None) -> Any:
        """A ``callback`` for SB3's ``evaluate_policy`` that makes the evaluation online DE.

        ``evaluate_policy(wrapper, env, deterministic=False,
        callback=wrapper.evaluation_callback())`` feeds every evaluation transition to
        :meth:`observe` (the real final observation of finished episodes, ``terminated``
        without time-limit truncation), so the posterior learns and ``ε_t`` decays during the
        evaluation. Without it, evaluation is frozen DE (see the module docstring).

        Parameters
        ----------
        logger : stable_baselines3.common.logger.Logger, optional
            When given, :attr:`stats` is logged (:meth:`DelightStats.log
            <delight_gym.stats.DelightStats.log>`) and dumped at step ``t`` at the end
            of every evaluation episode.

        Returns
        -------
        callable
            ``callback(locals_, globals_)``, SB3's evaluation-callback signature.
        """

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

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(host={self.host!r}, posterior={self.posterior!r}, "
            f"gate_price={self.gate_price}, surprisal_cap={self.surprisal_cap}, "
            f"half_life={self.half_life}, baseline={self.baseline!r}, t={self.t})"
        )
