"""DE's engine around a policy on ``Box`` actions: :class:`ContinuousDelightWrapper`.

Each :meth:`~ContinuousDelightWrapper.predict` is one candidate-set decision per row
(:class:`~delight_gym.de.candidates.CandidateDelight`): the host's action, and with probability
``ε_t`` a set of it, ``n_host`` host draws and ``n_posterior`` posterior proposals, gated with
the paper's rule on the posterior's EI and the host's surprisal restricted to the set.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from gymnasium import spaces

from delight_gym._checks import (
    check_all_finite,
    check_binary,
    check_box_bounds,
    check_positive_int,
    check_would_fit,
    host_view,
)
from delight_gym.de.candidates import (
    CandidateDecision,
    CandidateDelight,
    HostSamples,
    PosteriorArgmax,
    candidate_row_bytes,
)
from delight_gym.de.commitment import apply_option_rule
from delight_gym.de.decide import scaled_expected_improvement
from delight_gym.de.engine import DelightEngine, ObservedTransition, row_vector
from delight_gym.de.hosts import BoxHost, checked_actions, make_host
from delight_gym.de.options import DelightOptions
from delight_gym.de.proposers import check_posterior_calls
from delight_gym.de.rule import Gate, sample_categorical

__all__ = ["DEFAULT_CANDIDATES", "ContinuousDelightWrapper", "check_observation_space"]

#: Default candidate budgets: host draws and posterior proposals per exploring decision.
DEFAULT_CANDIDATES = 8


class _Scored:
    """Stands for a :class:`PosteriorArgmax` of default ``n_random`` in the memory estimate."""

    n_random = 64


def check_observation_space(space: Any, owner: str) -> None:
    """A ``TypeError`` for observation spaces the ``Box`` engine cannot batch (``Dict``, ``Tuple``
    and other composite spaces); ``None`` passes."""
    if space is None or isinstance(space, spaces.Box | spaces.Discrete):
        return
    raise TypeError(
        f"{owner} supports Box and Discrete observation spaces, not {type(space).__name__} "
        f"({space}); flatten it first (gymnasium.wrappers.FlattenObservation)"
    )


class ContinuousDelightWrapper(DelightEngine):
    """Candidate-set DE around a :class:`BoxHost` on a 1-D ``Box``, with SB3's ``predict``.

    With ``delight.durations`` other than ``(1,)`` an exploring row holds an option ``(c, k)``
    of its set for ``k`` steps or until its episode ends.

    Parameters
    ----------
    host : stable_baselines3 model or callable or BoxHost
        SB3 SAC, PPO, A2C (own density), TD3, DDPG (a stated proposal), a callable
        ``observations (n, ...) -> actions (n, d)`` (pass the spaces) or a host adapter
        (:func:`~delight_gym.de.hosts.make_host` picks it).
    posterior : object, optional
        With ``expected_improvement(obs, candidates)`` and ``sample_values(obs, actions, rng)``
        (and ``update``, to learn from :meth:`observe`). Default: a ``ContinuousQEnsemble``.
    delight : DelightOptions or dict, optional
        DE's options (``baseline="host"``, a float ``value_scale`` or ``"spread"``).
    n_host, n_posterior : int, default 8
        ``≥ 1`` host draws and posterior proposals per candidate set.
    seed, posterior_kwargs, start_step, observation_space, action_space :
        As for :class:`~delight_gym.de.wrapper.DelightExplorationWrapper`.
    host_std, host_log_density :
        See :func:`~delight_gym.de.hosts.make_host`.

    Attributes
    ----------
    delight, host, posterior, t, rng, stats, last_info :
        As for :class:`~delight_gym.de.engine.DelightEngine`.
    """

    spread_scale = True

    def __init__(
        self,
        host: Any,
        posterior: Any = None,
        *,
        delight: DelightOptions | dict[str, Any] | None = None,
        seed: int | None = None,
        n_host: int = DEFAULT_CANDIDATES,
        n_posterior: int = DEFAULT_CANDIDATES,
        posterior_kwargs: dict[str, Any] | None = None,
        start_step: int | None = None,
        observation_space: Any = None,
        action_space: Any = None,
        host_std: float | None = None,
        host_log_density: Callable[[Any, Any], Any] | None = None,
    ) -> None:
        options = self._resolve_options(delight)
        if options.baseline != "host":
            raise ValueError(
                f"{type(self).__name__} measures EI over the posterior mean of the host's "
                f"action; delight.baseline must be 'host', got {options.baseline!r}"
            )
        self.delight = options
        self.n_host = check_positive_int(n_host, "n_host")
        self.n_posterior = check_positive_int(n_posterior, "n_posterior")
        check_observation_space(observation_space, type(self).__name__)
        self.host: BoxHost = make_host(
            host,
            observation_space=observation_space,
            action_space=action_space,
            host_std=host_std,
            host_log_density=host_log_density,
        )
        self.action_space = self.host.action_space
        self.low, self.high = check_box_bounds(self.action_space, "action_space")
        self.observation_space = self._host_observation_space()
        check_observation_space(self.observation_space, type(self).__name__)
        proposers = [(None, self.n_host), (_Scored(), self.n_posterior)]
        check_would_fit(
            candidate_row_bytes(1 + n_host + n_posterior, self.low.size, proposers),
            f"n_host={n_host}, n_posterior={n_posterior}",
        )
        check_posterior_calls(n_posterior, "n_posterior")
        kwargs = self._default_posterior_kwargs(posterior, posterior_kwargs, seed)
        if kwargs is not None:
            from delight_gym.posteriors.q_ensemble import ContinuousQEnsemble

            posterior = ContinuousQEnsemble(self.observation_space, self.action_space, **kwargs)
        needed: tuple[str, ...] = ("expected_improvement", "sample_values")
        if self.delight.value_scale == "spread":
            needed = (*needed, "values")  # every head's values, for the spread
        for method in needed:
            if not callable(getattr(posterior, method, None)):
                raise TypeError(f"posterior must have a callable {method}, got {posterior!r}")
        self.posterior = posterior
        self._start(seed, start_step)
        self._build()

    def _build(self) -> None:
        """The candidate-set decision (not pickled), and no override held."""
        self._seen_ei = np.zeros((0, 0))
        self._held_action = np.zeros((0, self.low.size))
        self._remaining = np.zeros(0, dtype=np.int64)
        self._decision = CandidateDelight(
            self.action_space,
            self.host,
            self._expected_improvement,
            [
                (HostSamples(self.host), self.n_host),
                (
                    PosteriorArgmax(self.action_space, self.posterior.sample_values),
                    self.n_posterior,
                ),
            ],
            half_life=self.half_life,
            gate_price=self.gate_price,
            surprisal_cap=self.surprisal_cap,
        )

    def _expected_improvement(self, states: Any, candidates: Any) -> np.ndarray:
        """The posterior's EI divided by ``value_scale`` (what the gate sees; kept for stats)."""
        ei = host_view(self.posterior.expected_improvement(states, candidates))
        if self.delight.value_scale == "spread":  # per state: the heads' spread over the set
            values = np.asarray(host_view(self.posterior.values(states, candidates)), np.float64)
            spread = np.sqrt(values.var(axis=0).mean(axis=-1))[:, None]  # (b, 1)
            ei = np.asarray(ei, dtype=np.float64)
            self._seen_ei = np.divide(ei, spread, out=np.zeros_like(ei), where=spread > 0)
            return self._seen_ei
        scale = float(self.delight.value_scale)
        self._seen_ei = ei if scale == 1.0 else scaled_expected_improvement(ei, scale)
        return self._seen_ei

    def _batch(self, observation: Any, name: str) -> tuple[np.ndarray, bool]:
        """As the base class's, refusing an empty batch (a candidate set needs a row)."""
        batch, single = super()._batch(observation, name)
        if len(batch) == 0:
            raise ValueError(f"{name} must hold at least one observation (an empty batch)")
        return batch, single

    def _act(self, obs: np.ndarray, deterministic: bool) -> np.ndarray:
        n = len(obs)
        if deterministic:
            actions = checked_actions(self.host.act(obs), n, self.low, self.high, "host")
            self.last_info = _no_decision_info(actions, 0.0)
        else:
            host_actions = checked_actions(
                self.host.draw(obs, self.rng), n, self.low, self.high, "host"
            )
            held = self._held_rows(n)
            if held.all():  # every row continues its committed override: nothing to decide
                actions = self._held_action.copy()
                self._remaining -= 1
                self.last_info = _no_decision_info(host_actions, self.epsilon)
                self.last_info["held"] = np.ones(n, dtype=bool)
            else:
                # host_actions are checked: the decision's private half skips its re-check
                decision = self._decision._decide(obs, host_actions, self.clock, self.rng)
                if self.delight.durations != (1,):
                    decision = self._commit(decision, held)
                actions = decision.actions
                self._record(decision, host_actions)
                if held.any():  # held rows play their action; their fresh draw is discarded
                    actions[held] = self._held_action[held]
                    self._remaining[held] -= 1
                    self.last_info["explored"] = self.last_info["explored"] & ~held
                    self.last_info["overridden"] = self.last_info["overridden"] & ~held
                self.last_info["held"] = held
                if self.delight.durations != (1,):
                    self.last_info["duration"] = self._started
        return actions.astype(self.action_space.dtype).reshape((-1, *self.action_space.shape))

    def _held_rows(self, n: int) -> np.ndarray:
        """bool ``(n,)``: rows still holding an override (a new batch size ends all holds)."""
        if self._remaining.shape != (n,):
            self._held_action = np.zeros((n, self.low.size))
            self._remaining = np.zeros(n, dtype=np.int64)
        return self._remaining > 0

    def _release(self, ended: np.ndarray) -> None:
        if self._remaining.shape == ended.shape:
            self._remaining[ended] = 0

    def _commit(self, decision: CandidateDecision, held: np.ndarray) -> CandidateDecision:
        """The exploring rows' draw redone over options ``(c, k)`` of their set (the host
        restricted to it), and the chosen holds started on rows not already held."""
        rows, inner = decision.rows, decision.decision
        if inner is None:
            return decision
        durations = np.asarray(self.delight.durations)
        ei = np.where(decision.unique, self._seen_ei, 0.0)
        gate = Gate(self.gate_price, self.surprisal_cap)  # checked by DelightOptions
        options = apply_option_rule(gate, inner.host, ei, inner.epsilon, durations)
        flat = sample_categorical(
            options.override.reshape(rows.size, -1), self.rng.random(rows.size)
        )
        empty = options.gate_empty
        column = np.where(empty, 0, flat // durations.size)
        hold = np.where(empty, 1, durations[flat % durations.size])
        actions, overridden = decision.actions.copy(), decision.overridden.copy()
        actions[rows] = decision.candidates[np.arange(rows.size), column]
        overridden[rows] = ~empty
        steps = np.ones(len(actions), dtype=np.int64)
        steps[rows] = hold
        start = overridden & (steps > 1) & ~held
        self._held_action[start] = actions[start]
        self._remaining[start] = steps[start] - 1
        self._started = np.where(start, steps, 0)
        return decision._replace(actions=actions, overridden=overridden)

    def _record(self, decision: CandidateDecision, host_actions: np.ndarray) -> None:
        """``last_info`` and :attr:`stats` from one decision."""
        n, rows = len(host_actions), decision.rows
        gate_size = np.full(n, -1, dtype=np.int64)
        gate_empty = np.zeros(n, dtype=bool)
        delight = np.full(n, np.nan)
        overridden_ei = np.zeros(0)
        if decision.decision is not None:
            gate_size[rows] = decision.gate.sum(axis=1)
            gate_empty[rows] = decision.decision.gate_empty
            # The column played on each exploring row: its first occurrence in the set.
            match = (decision.candidates == decision.actions[rows][:, None, :]).all(-1)
            col = (match & decision.unique).argmax(axis=1)
            delight[rows] = decision.delight[np.arange(rows.size), col]
            over = decision.overridden[rows]
            overridden_ei = self._seen_ei[np.flatnonzero(over), col[over]]
        eps = self.epsilon
        self.stats.record(
            decision.overridden, gate_size, gate_empty, overridden_ei, eps, decision.explored
        )
        self.last_info = {
            "overridden": decision.overridden,
            "explored": decision.explored,
            "gate_size": gate_size,
            "epsilon": eps,
            "delight": delight,
            "host_actions": host_actions,
        }

    def _learn(self, transition: ObservedTransition) -> None:
        """An ``update`` on ``ContinuousTransitions`` whose next actions are the host's own;
        ``truncated`` is checked, not used."""
        batch, action, reward, nxt, terminated, truncated = transition
        n = len(batch)  # >= 1: _batch refused an empty one
        act = checked_actions(action, n, self.low, self.high, "action")
        rewards = row_vector(reward, n, "reward", np.float64)
        check_all_finite(rewards, "reward")
        done = row_vector(terminated, n, "terminated", np.float64)
        check_binary(done, "terminated")
        check_binary(row_vector(truncated, n, "truncated", np.float64), "truncated")
        update = getattr(self.posterior, "update", None)
        if update is not None:
            from delight_gym.posteriors.q_ensemble import ContinuousTransitions

            update(ContinuousTransitions(batch, act, rewards, nxt, done, self.host.act(nxt)))

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        del state["_decision"], state["_seen_ei"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._build()

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(host={self.host!r}, posterior={self.posterior!r}, "
            f"gate_price={self.gate_price}, surprisal_cap={self.surprisal_cap}, "
            f"half_life={self.half_life}, n_host={self.n_host}, n_posterior={self.n_posterior}, "
            f"t={self.t})"
        )


def _no_decision_info(host_actions: np.ndarray, epsilon: float) -> dict[str, Any]:
    """``last_info`` of a step that decided nothing (deterministic, or every row held)."""
    n = len(host_actions)
    return {
        "overridden": np.zeros(n, dtype=bool),
        "explored": np.zeros(n, dtype=bool),
        "gate_size": np.full(n, -1, dtype=np.int64),
        "epsilon": epsilon,
        "delight": np.full(n, np.nan),
        "host_actions": host_actions,
    }
