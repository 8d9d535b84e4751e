"""DE's engine around a host that gives action probabilities (``Discrete`` actions).

Each :meth:`~DiscreteDelightWrapper.predict` is one DE decision per observation row (paper
§2.1, Algorithm 1): the host's probabilities, the posterior's means, baseline and EI, then the
rule and the two-stage draw at ``ε_t = M/(M + t)``.
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
from gymnasium import spaces

from delight_gym._checks import (
    check_all_finite,
    check_binary,
    check_flag,
    check_instance,
    check_probabilities,
)
from delight_gym.de.commitment import Commitment
from delight_gym.de.decide import decide_on_values
from delight_gym.de.engine import DelightEngine, ObservedTransition, act_on_values, row_vector
from delight_gym.de.hosts import Host, make_host
from delight_gym.de.options import DelightOptions
from delight_gym.de.posterior import ValuePosterior, adapt_posterior, evaluate_posterior
from delight_gym.de.rule import (
    DelightDecision,
    draw_acting_uniforms,
    sample_acting_on_explore_rows,
)

__all__ = ["DiscreteDelightWrapper"]


class DiscreteDelightWrapper(DelightEngine):
    """DE around a host adapter that gives action probabilities, with SB3's ``predict``.

    Parameters
    ----------
    host : callable or stable_baselines3 model or Host
        Observations ``(n, ...)`` → probabilities ``(n, A)``; an SB3 PPO, A2C or DQN; or a
        host adapter (:func:`~delight_gym.de.hosts.make_host` picks it).
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
    host_temperature : float, optional
        DQN hosts: ``None`` greedy, ``τ > 0`` Boltzmann.
    observation_space, action_space : gymnasium.Space, optional
        Required for a callable host (SB3 models carry their own).

    Attributes
    ----------
    delight, host, posterior, t, rng, stats, last_info :
        As for :class:`DelightEngine`.
    """

    def __init__(
        self,
        host: Any,
        posterior: ValuePosterior | None = None,
        *,
        delight: DelightOptions | dict[str, Any] | None = None,
        seed: int | None = None,
        posterior_kwargs: dict[str, Any] | None = None,
        lazy_gate: bool = False,
        start_step: int | None = None,
        host_temperature: float | None = None,
        observation_space: Any = None,
        action_space: Any = None,
    ) -> None:
        self.lazy_gate = check_flag(lazy_gate, "lazy_gate")
        self.delight = self._resolve_options(delight)
        self.host: Host = make_host(
            host,
            temperature=host_temperature,
            observation_space=observation_space,
            action_space=action_space,
        )
        obs_space = self._host_observation_space()
        self.observation_space = check_instance(
            obs_space, spaces.Space, "observation_space", "a gymnasium Space"
        )
        act_space = self.host.action_space
        if act_space is not None and not isinstance(act_space, spaces.Discrete):
            raise ValueError(
                f"action_space must be Discrete, got {act_space!r}; for Box actions use "
                "DelightExplorationWrapper, which dispatches to the Box engine"
            )
        self.num_actions: int | None = None if act_space is None else int(act_space.n)
        kwargs = self._default_posterior_kwargs(posterior, posterior_kwargs, seed)
        if kwargs is not None:
            if self.num_actions is None:
                raise TypeError(
                    "the default posterior needs the number of actions: pass action_space"
                )
            from delight_gym.posteriors.value import default_posterior  # the engine's default

            posterior = default_posterior(obs_space, self.num_actions, **kwargs)
        else:
            posterior = adapt_posterior(posterior, self.num_actions, obs_space)
        check_instance(
            posterior,
            ValuePosterior,
            "posterior",
            "a delight_gym.posteriors.ValuePosterior (num_actions, mean, expected_improvement, "
            "update)",
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
        self._commitment: Commitment | None = None  # built for the first batch size seen

    def host_probs(self, observations: np.ndarray) -> np.ndarray:
        """The host's probabilities for a batch ``(n, ...)``, checked, float64 ``(n, A)``."""
        n = len(observations)
        probs = self.host.probs(observations)
        a = self.num_actions if self.num_actions is not None else self.posterior.num_actions
        if probs.shape != (n, a):
            raise ValueError(
                f"host returned probabilities of shape {probs.shape}, expected (n, A) = ({n}, {a})"
            )
        check_probabilities(probs, "host probabilities")
        return probs

    def _decide(
        self, obs: np.ndarray, probs: np.ndarray, eps: float
    ) -> tuple[DelightDecision, np.ndarray, np.ndarray]:
        values = evaluate_posterior(self.posterior, obs, probs, self.baseline)
        decision, ei = decide_on_values(self.delight, probs, values, eps)
        return decision, values.baseline, ei

    def _act(self, obs: np.ndarray, deterministic: bool) -> np.ndarray:
        n = len(obs)
        probs = self.host_probs(obs)
        if deterministic:
            actions = np.asarray(self.host.act(obs, probs), dtype=np.int64).reshape(n)
            info = _rows_info(probs, 0.0, np.zeros(n, dtype=bool))  # the host's act: no gate
            info.update(gate_size=np.zeros(n, dtype=np.int64), delight=np.zeros(n))
            info.update(acting_probs=probs, expected_improvement=np.zeros_like(probs))
        elif self.delight.durations != (1,):
            actions, info = self._act_committed(obs, probs)
        elif not self.lazy_gate:
            eps = self.epsilon
            values = evaluate_posterior(self.posterior, obs, probs, self.baseline)
            act = act_on_values(self.delight, probs, values, eps, self.rng, self.stats)
            actions, decision = act.actions, act.decision
            info = {
                "overridden": act.overridden,
                "explored": act.explored,
                "gate_size": decision.gate.sum(axis=1),
                "epsilon": eps,
                "delight": decision.delight[np.arange(n), actions],
                "baseline": values.baseline,
                "host_probs": probs,
                "acting_probs": decision.probs,
                "expected_improvement": act.expected_improvement,
            }
        else:
            actions, info = self._predict_lazy(obs, probs)
            self.stats.record_info(info, actions)
        if "held" in info:  # a committed act: recorded here, held rows are no decision
            self.stats.record_info(info, actions)
        self.last_info = info
        return actions

    def _act_committed(self, obs: np.ndarray, probs: np.ndarray) -> tuple[np.ndarray, dict]:
        """Committed overrides: each row (a VecEnv's env) holds its option's action for its
        duration; the posterior is evaluated only on rows that explore afresh."""
        n = len(obs)
        if self._commitment is None or self._commitment.n_envs != n:
            self._commitment = Commitment(
                n,
                self.delight.durations,
                gate_price=self.gate_price,
                surprisal_cap=self.surprisal_cap,
            )
        eps = self.epsilon
        used: dict[str, np.ndarray] = {}

        def expected_improvement(rows: np.ndarray) -> np.ndarray:  # keeps what info reports
            values = evaluate_posterior(self.posterior, obs[rows], probs[rows], self.baseline)
            ei = decide_on_values(self.delight, probs[rows], values, eps)[1]
            used["baseline"], used["ei"] = values.baseline, ei
            return ei

        out = self._commitment.decide(probs, expected_improvement, eps, self.rng)
        info = _rows_info(probs, eps, out.explored)
        info.update(held=out.held, duration=out.durations)
        if out.decision is not None:
            od = out.decision  # (r, A, D): an action's χ and gate over its durations
            chosen = od.delight.max(axis=-1)[np.arange(out.rows.size), out.actions[out.rows]]
            gate_size = od.gate.any(axis=-1).sum(axis=-1)
            _fill_rows(info, out.rows, od.gate_empty, gate_size, chosen, od.probs, used)
        return out.actions, info

    def _release(self, ended: np.ndarray) -> None:
        if self._commitment is not None and self._commitment.n_envs == ended.size:
            self._commitment.release(ended)

    def _predict_lazy(self, obs: np.ndarray, probs: np.ndarray) -> tuple[np.ndarray, dict]:
        """``lazy_gate``: the posterior and the gate only on rows whose ``ε`` coin explores."""
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
        info = _rows_info(probs, eps, draw.explored)
        if draw.decision is not None:
            rows, decision = draw.rows, draw.decision
            chosen = decision.delight[np.arange(rows.size), draw.chosen]
            gate_size = decision.gate.sum(axis=1)
            _fill_rows(info, rows, decision.gate_empty, gate_size, chosen, decision.probs, used)
        return actions, info

    def _learn(self, transition: ObservedTransition) -> None:
        batch, action, reward, nxt, terminated, truncated = transition
        where = f" at t = {self.t}"
        n = len(batch)
        act = row_vector(action, n, "action", np.float64)
        a = self.posterior.num_actions
        if np.any(act != np.round(act)) or np.any(act < 0) or np.any(act >= a):
            raise ValueError(f"action must be integers in [0, {a})")
        rew = row_vector(reward, n, "reward", np.float64)
        check_all_finite(rew, "reward", where=where)
        flags = {}
        for name, value in (("terminated", terminated), ("truncated", truncated)):
            flag = row_vector(value, n, name, np.asarray(value).dtype)
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


def _rows_info(probs: np.ndarray, eps: float, explored: np.ndarray) -> dict[str, Any]:
    """``last_info`` of a decision evaluated on some rows: NaN (``gate_size`` -1) until
    :func:`_fill_rows`."""
    n = len(probs)
    return {
        "overridden": np.zeros(n, dtype=bool),
        "explored": explored,
        "gate_size": np.full(n, -1, dtype=np.int64),
        "epsilon": eps,
        "delight": np.full(n, np.nan),
        "baseline": np.full(n, np.nan),
        "host_probs": probs,
        "acting_probs": np.full_like(probs, np.nan),
        "expected_improvement": np.full_like(probs, np.nan),
    }


def _fill_rows(
    info: dict[str, Any],
    rows: np.ndarray,
    gate_empty: np.ndarray,
    gate_size: np.ndarray,
    delight: np.ndarray,
    acting_probs: np.ndarray,
    used: dict[str, np.ndarray],
) -> None:
    info["overridden"][rows] = ~gate_empty
    info["gate_size"][rows] = gate_size
    info["delight"][rows] = delight
    info["baseline"][rows] = used["baseline"]
    info["acting_probs"][rows] = acting_probs
    info["expected_improvement"][rows] = used["ei"]
