"""``ContinuousDelightWrapper``: Delight-gated exploration around a policy on ``Box`` actions.

Each :meth:`~ContinuousDelightWrapper.predict` is one candidate-set DE decision per observation
row (:class:`~delight_gym.candidates.CandidateDelight`, the one home of that decision): the
host's action (:mod:`delight_gym.wrappers.box_hosts`), and with probability ``ε_t = M/(M + t)``
a candidate set of the host's action, ``n_host`` host draws and ``n_posterior`` posterior
proposals, gated with the paper's rule on the posterior's EI and the host's surprisal restricted
to the set. ``deterministic=True`` is the host's own action (SB3's contract). Actions and types
are SB3's: ``predict`` returns the action space's dtype, ``(d,)`` or ``(n, d)``. A guide:
``docs/sb3.md``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from delight_gym._checks import check_nonnegative_int, check_positive_int, check_seed, host_view
from delight_gym.candidates import CandidateDecision, CandidateDelight, HostSamples, PosteriorArgmax
from delight_gym.options import DelightOptions, DelightSettings
from delight_gym.rule import epsilon_schedule
from delight_gym.stats import DelightStats
from delight_gym.wrappers.box_hosts import BoxHost, box_bounds, checked_actions, make_box_host
from delight_gym.wrappers.exploration import observation_batch

__all__ = ["DEFAULT_CANDIDATES", "ContinuousDelightWrapper"]

#: Default candidate budgets: host draws and posterior proposals per exploring decision.
DEFAULT_CANDIDATES = 8


class ContinuousDelightWrapper(DelightSettings):
    """Candidate-set DE around a host policy on a 1-D ``Box``, with SB3's ``predict`` signature.

    Parameters
    ----------
    host : stable_baselines3 model or callable or BoxHost
        SB3 SAC, PPO, A2C (own density), TD3, DDPG (a stated proposal), a callable
        ``observations (n, ...) -> actions (n, d)`` (pass the spaces) or a ``box_hosts`` adapter.
    posterior : object, optional
        With ``expected_improvement(obs, candidates)`` and ``sample_values(obs, actions, rng)``
        (and ``update``, to learn from :meth:`observe`). Default: a ``ContinuousQEnsemble``.
    delight : DelightOptions or dict, optional
        DE's options (``baseline="host"``, a float ``value_scale``; the clock counts steps).
    seed : int, optional
        Seeds the wrapper's generator, its only randomness.
    observation_space, action_space : gymnasium.Space, optional
        For a callable host.
    n_host, n_posterior : int, default 8
        ``≥ 1`` host draws and posterior proposals per candidate set.
    host_std, host_log_density, posterior_kwargs :
        See :func:`~delight_gym.wrappers.box_hosts.make_box_host`; the default posterior's.
    start_step : int, optional
        Where ``t`` starts (default: an SB3 host's ``num_timesteps``, else 0).

    Attributes
    ----------
    delight, host, posterior, t, rng, stats, last_info :
        As for :class:`~delight_gym.wrappers.DelightExplorationWrapper`; ``last_info`` per row:
        ``overridden``, ``explored``, ``gate_size`` (-1: no set drawn), ``delight`` (``χ``
        played, else NaN), ``epsilon``, ``host_actions`` ``(n, d)``.
    """

    def __init__(
        self,
        host: Any,
        posterior: Any = None,
        *,
        delight: DelightOptions | dict[str, Any] | None = None,
        seed: int | None = None,
        observation_space: Any = None,
        action_space: Any = None,
        n_host: int = DEFAULT_CANDIDATES,
        n_posterior: int = DEFAULT_CANDIDATES,
        host_std: float | None = None,
        host_log_density: Callable[[Any, Any], Any] | None = None,
        posterior_kwargs: dict[str, Any] | None = None,
        start_step: int | None = None,
    ) -> None:
        name = type(self).__name__
        if delight is False:
            raise ValueError(f"delight=False: {name} is DE; use the host itself instead")
        options = (DelightOptions.make(delight) or DelightOptions()).resolve(name, clocks=("step",))
        if options.baseline != "host":
            raise ValueError(
                f"{name} measures EI over the posterior mean of the host's action; "
                f"delight.baseline must be 'host', got {options.baseline!r}"
            )
        self.delight = options
        self.n_host = check_positive_int(n_host, "n_host")
        self.n_posterior = check_positive_int(n_posterior, "n_posterior")
        self.host: BoxHost = make_box_host(
            host,
            observation_space=observation_space,
            action_space=action_space,
            host_std=host_std,
            host_log_density=host_log_density,
        )
        self.action_space = self.host.action_space
        self.low, self.high = box_bounds(self.action_space, "action_space")
        self.observation_space = self.host.observation_space
        if self.observation_space is None:
            raise TypeError("observation_space is required for a callable host")
        model = getattr(self.host, "model", None)
        if posterior is None:
            from delight_gym.posteriors.q_ensemble import ContinuousQEnsemble

            kwargs = dict(posterior_kwargs or {})
            if hasattr(model, "gamma"):
                kwargs.setdefault("gamma", float(model.gamma))  # type: ignore[union-attr]
            kwargs.setdefault("seed", seed)
            posterior = ContinuousQEnsemble(self.observation_space, self.action_space, **kwargs)
        elif posterior_kwargs:
            raise TypeError("posterior_kwargs apply only to the default posterior")
        for method in ("expected_improvement", "sample_values"):
            if not callable(getattr(posterior, method, None)):
                raise TypeError(f"posterior must have a callable {method}, got {posterior!r}")
        self.posterior = posterior
        if start_step is None:
            start_step = int(getattr(model, "num_timesteps", 0))
        self.t = check_nonnegative_int(start_step, "start_step")
        self.rng = np.random.default_rng(check_seed(seed))
        self.stats = DelightStats()
        self.last_info: dict[str, Any] = {}
        self._build()

    def _build(self) -> None:
        """The candidate-set decision around this host and posterior (not pickled)."""
        self._seen_ei = np.zeros((0, 0))
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
        self._seen_ei = np.asarray(ei, dtype=np.float64) / float(self.delight.value_scale)
        return self._seen_ei

    @property
    def epsilon(self) -> float:
        """The current override probability ``ε_t``."""
        return float(epsilon_schedule(self.t, self.half_life, validate=False))

    def _batch(self, observation: Any, name: str) -> tuple[np.ndarray, bool]:
        return observation_batch(observation, self.observation_space, name, f" at t = {self.t}")

    def predict(
        self,
        observation: Any,
        state: Any = None,
        episode_start: Any = None,
        deterministic: bool = False,
    ) -> tuple[np.ndarray, Any]:
        """Actions for one observation or a batch ``(n, ...)``, with SB3's signature and types.

        ``deterministic=True``: the host's own action, no exploration. ``False``: DE at the
        current ``ε_t`` and posterior (``t`` does not advance: :meth:`observe` does that).
        ``state`` is passed through. Returns the action space's dtype, ``(d,)`` or ``(n, d)``.
        """
        obs, single = self._batch(observation, "observation")
        n = len(obs)
        if deterministic:
            actions = checked_actions(self.host.act(obs), n, self.low, self.high, "host")
            self.last_info = {
                "overridden": np.zeros(n, dtype=bool),
                "explored": np.zeros(n, dtype=bool),
                "gate_size": np.full(n, -1, dtype=np.int64),
                "epsilon": 0.0,
                "delight": np.full(n, np.nan),
                "host_actions": actions,
            }
        else:
            host_actions = checked_actions(
                self.host.draw(obs, self.rng), n, self.low, self.high, "host"
            )
            decision = self._decision.decide(obs, host_actions, self.t, self.rng)
            actions = decision.actions
            self._record(decision, host_actions)
        out = actions.astype(self.action_space.dtype).reshape((-1, *self.action_space.shape))
        if single:
            self.last_info = {
                k: (v[0] if isinstance(v, np.ndarray) else v) for k, v in self.last_info.items()
            }
            return out.reshape(self.action_space.shape), state  # an array even for shape ()
        return out, state

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

    def observe(
        self,
        obs: Any,
        action: Any,
        reward: Any,
        next_obs: Any,
        terminated: Any,
        truncated: Any,
    ) -> None:
        """Feed one transition (or a batch) to a posterior with ``update`` and advance ``t``.

        The posterior takes one step on
        :class:`~delight_gym.posteriors.q_ensemble.ContinuousTransitions` whose next actions are
        the host's own at ``next_obs`` (a truncation bootstraps: pass the true final
        observation). ``truncated`` is checked only for its shape.
        """
        batch, _ = self._batch(obs, "obs")
        nxt, _ = self._batch(next_obs, "next_obs")
        n = len(batch)
        if len(nxt) != n:
            raise ValueError(f"next_obs holds {len(nxt)} observations, obs holds {n}")
        act = checked_actions(action, n, self.low, self.high, "action")
        for flag_name, flag in (("terminated", terminated), ("truncated", truncated)):
            if np.asarray(flag).size != n:
                raise ValueError(f"{flag_name} must hold one value per observation ({n})")
        update = getattr(self.posterior, "update", None)
        if update is not None:
            from delight_gym.posteriors.q_ensemble import ContinuousTransitions

            rewards = np.asarray(reward, dtype=np.float64).reshape(-1)
            done = np.asarray(terminated).reshape(-1)
            update(ContinuousTransitions(batch, act, rewards, nxt, done, self.host.act(nxt)))
        self.t += n

    def advance(self, n: int) -> None:
        """Advance ``t`` by ``n`` without updating the posterior (an algorithm that trains the
        posterior itself, as :class:`~delight_gym.sb3.DelightSAC` does from its replay buffer)."""
        self.t += check_nonnegative_int(n, "n")

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
