"""DE's engine around a policy on ``Box`` actions: :class:`ContinuousDelightExplorer`.

Each :meth:`~ContinuousDelightExplorer.predict` is one candidate-set DE decision per observation
row (:class:`~delight_gym.de.candidates.CandidateDelight`, the one home of that decision): the
host's action (a :class:`BoxHost`), and with probability ``ε_t = M/(M + t)`` a candidate set of
the host's action, ``n_host`` host draws and ``n_posterior`` posterior proposals, gated with the
paper's rule on the posterior's EI and the host's surprisal restricted to the set.
``deterministic=True`` is the host's own action (SB3's contract). Actions and types are SB3's:
``predict`` returns the action space's dtype, ``(d,)`` or ``(n, d)``. The wrapper around a
user-given host: :class:`~delight_gym.wrappers.ContinuousDelightWrapper`; SB3's algorithms:
:class:`~delight_gym.sb3.DelightSAC`, :class:`~delight_gym.sb3.DelightTD3`.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np

from delight_gym._checks import check_box_bounds, check_positive_int, host_view
from delight_gym.de.candidates import (
    CandidateDecision,
    CandidateDelight,
    HostSamples,
    PosteriorArgmax,
)
from delight_gym.de.engine import ExplorerBase, ObservedTransition
from delight_gym.de.options import DelightOptions

__all__ = ["DEFAULT_CANDIDATES", "BoxHost", "ContinuousDelightExplorer", "checked_actions"]

#: Default candidate budgets: host draws and posterior proposals per exploring decision.
DEFAULT_CANDIDATES = 8


def checked_actions(value: Any, n: int, low: np.ndarray, high: np.ndarray, name: str) -> Any:
    """``value`` as float64 ``(n, d)`` actions, finite and inside ``[low, high]``; a
    ``ValueError`` naming ``name`` otherwise (``TypeError`` for non-numbers)."""
    try:
        arr = np.asarray(host_view(value), dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must return numeric actions") from None
    arr = arr.reshape(n, -1) if arr.size == n * low.size else arr
    if arr.shape != (n, low.size):
        raise ValueError(f"{name} must give actions of shape ({n}, {low.size}), got {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} gave non-finite actions")
    if (arr < low).any() or (arr > high).any():
        raise ValueError(f"{name} gave actions outside the action space [{low}, {high}]")
    return arr


@runtime_checkable
class BoxHost(Protocol):
    """A continuous policy DE can wrap (``observation_space`` may be ``None`` for a callable)."""

    observation_space: Any
    action_space: Any

    def act(self, observations: Any) -> np.ndarray:
        """The host's own deterministic actions, float64 ``(n, d)``."""
        ...

    def draw(self, observations: Any, rng: np.random.Generator) -> np.ndarray:
        """The host's action to decide on, float64 ``(n, d)``: a draw if it is stochastic."""
        ...

    def log_weight(self, states: Any, host_actions: Any, candidates: Any) -> Any:
        """Log-densities ``(b, C)`` of candidates ``(b, C, d)`` (finite inside the box)."""
        ...

    def sample(self, states: Any, host_actions: Any, n: int, rng: np.random.Generator) -> Any:
        """``n`` independent draws per row, ``(b, n, d)``."""
        ...


class ContinuousDelightExplorer(ExplorerBase):
    """Candidate-set DE around a :class:`BoxHost` on a 1-D ``Box``, with SB3's ``predict``.

    Parameters
    ----------
    host : BoxHost
        The host adapter (:mod:`delight_gym.wrappers.box_hosts`, :mod:`delight_gym.sb3.hosts`).
    posterior : object, optional
        With ``expected_improvement(obs, candidates)`` and ``sample_values(obs, actions, rng)``
        (and ``update``, to learn from :meth:`observe`). Default: a ``ContinuousQEnsemble``.
    delight : DelightOptions or dict, optional
        DE's options (``baseline="host"``, a float ``value_scale``; the clock counts steps).
    seed : int, optional
        Seeds the engine's generator, its only randomness.
    n_host, n_posterior : int, default 8
        ``≥ 1`` host draws and posterior proposals per candidate set.
    posterior_kwargs : dict, optional
        The default posterior's arguments (``gamma``: the host model's; ``seed``: ``seed``).
    start_step : int, optional
        Where ``t`` starts (default: an SB3 host's ``num_timesteps``, else 0).

    Attributes
    ----------
    delight, host, posterior, t, rng, stats, last_info :
        As for :class:`~delight_gym.de.engine.ExplorerBase`; ``last_info`` per row:
        ``overridden``, ``explored``, ``gate_size`` (-1: no set drawn), ``delight`` (``χ``
        played, else NaN), ``epsilon``, ``host_actions`` ``(n, d)``.
    """

    def __init__(
        self,
        host: BoxHost,
        posterior: Any = None,
        *,
        delight: DelightOptions | dict[str, Any] | None = None,
        seed: int | None = None,
        n_host: int = DEFAULT_CANDIDATES,
        n_posterior: int = DEFAULT_CANDIDATES,
        posterior_kwargs: dict[str, Any] | None = None,
        start_step: int | None = None,
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
        self.host = host
        self.action_space = self.host.action_space
        self.low, self.high = check_box_bounds(self.action_space, "action_space")
        self.observation_space = self.host.observation_space
        if self.observation_space is None:
            raise TypeError("observation_space is required for a callable host")
        kwargs = self._default_posterior_kwargs(posterior, posterior_kwargs, seed)
        if kwargs is not None:
            from delight_gym.posteriors.q_ensemble import ContinuousQEnsemble

            posterior = ContinuousQEnsemble(self.observation_space, self.action_space, **kwargs)
        for method in ("expected_improvement", "sample_values"):
            if not callable(getattr(posterior, method, None)):
                raise TypeError(f"posterior must have a callable {method}, got {posterior!r}")
        self.posterior = posterior
        self._start(seed, start_step)
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

    def _act(self, obs: np.ndarray, deterministic: bool) -> np.ndarray:
        """Actions ``(n, d)`` in the action space's dtype for a batch: the host's own
        (``deterministic=True``) or DE's at the current ``ε_t``; sets :attr:`last_info`."""
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
        return actions.astype(self.action_space.dtype).reshape((-1, *self.action_space.shape))

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
        """A posterior with ``update`` takes one step on
        :class:`~delight_gym.posteriors.q_ensemble.ContinuousTransitions` whose next actions are
        the host's own at the next observations. ``truncated`` is checked only for its shape."""
        batch, action, reward, nxt, terminated, truncated = transition
        n = len(batch)
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
