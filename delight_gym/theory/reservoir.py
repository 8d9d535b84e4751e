"""Horizon-priced search in an infinite reservoir of fresh arms (paper §4.4, Theorem
``tail_rate``).

Fresh arms have revealed values ``X ~ Beta(1, α)``; regret is ``R_T = E Σ_t (1 − X_{A_t})``.
Two agents batched over seeds, numbering arms as
:class:`~delight_gym.envs.reservoir.ReservoirEnv` does: :class:`ReservationAgent` and
:class:`ReservoirDelightAgent` (DE with a greedy host and the horizon price ``λ_T``).
:func:`reservoir_rates` fits the log–log slope of regret in ``T``, predicted ``α/(α+1)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from delight_gym._checks import (
    check_action_batch,
    check_finite_array,
    check_positive_float,
    check_positive_int,
    check_probability,
)
from delight_gym.agents.base import AnnealedSettings
from delight_gym.de.rule import (
    DEFAULT_SURPRISAL_CAP,
    apply_delight_rule,
    epsilon_schedule,
    sample_acting,
)
from delight_gym.posteriors.beta import beta_expected_improvement
from delight_gym.theory.reservation import horizon_price, horizon_threshold

__all__ = [
    "ReservationAgent",
    "ReservoirDelightAgent",
    "ReservoirRates",
    "fit_slope",
    "reservoir_rates",
    "simulate_reservoir",
]


class _ReservoirAgent:
    """State shared by the reservoir agents: arms tried, best revealed value and its arm."""

    def __init__(
        self, batch_size: int, tail_exponent: float, horizon: int, *, seed: Any = None
    ) -> None:
        self.batch_size = check_positive_int(batch_size, "batch_size")
        self.tail_exponent = check_positive_float(tail_exponent, "tail_exponent")
        self.horizon = check_positive_int(horizon, "horizon")
        self.prior = stats.beta(1.0, self.tail_exponent)
        self.prior_mean = 1.0 / (1.0 + self.tail_exponent)
        self.reset(seed)

    def reset(self, seed: Any = None) -> None:
        """Forget everything (``t = 0``, nothing tried) and reseed the agent's generator."""
        self.rng = np.random.default_rng(seed)
        self.t = 0
        self.n_tried = np.zeros(self.batch_size, dtype=np.int64)
        self.best = np.full(self.batch_size, -np.inf)
        self.best_arm = np.zeros(self.batch_size, dtype=np.int64)

    def fresh(self) -> np.ndarray:
        """Boolean ``(batch,)``: which rows play a fresh arm this round."""
        raise NotImplementedError

    def settled(self) -> np.ndarray:
        """Rows that will exploit their best arm on every later round."""
        raise NotImplementedError

    def act(self) -> np.ndarray:
        """Arm per row: the next untried index (fresh) or the best revealed arm."""
        return np.where(self.fresh(), self.n_tried, self.best_arm)

    def update(self, actions: Any, values: Any) -> None:
        """Feed back the arms played, shape ``(batch,)``, and their revealed values."""
        arms = check_action_batch(actions, self.batch_size, np.iinfo(np.int64).max)
        x = check_finite_array(values, "values", shape=(self.batch_size,))
        new = arms == self.n_tried
        if np.any(~new & (arms != self.best_arm)):
            raise ValueError("actions must be a fresh arm (n_tried) or the best revealed arm")
        better = new & (x > self.best)
        self.best = np.where(better, x, self.best)
        self.best_arm = np.where(better, arms, self.best_arm)
        self.n_tried = self.n_tried + new
        self.t += 1


class ReservationAgent(_ReservoirAgent):
    """Inspect fresh arms until one has value ``≥ 1 − y_T``, then exploit the best one.

    Parameters
    ----------
    threshold_gap : float | None
        ``y``; default ``y_T`` (:func:`~delight_gym.theory.reservation.horizon_threshold`).

    Other Parameters
    ----------------
    batch_size, tail_exponent, horizon : int, float, int
        Seeds acted on at once, ``α`` of the ``Beta(1, α)`` reservoir and ``T``.
    seed : int or None
        unused (a uniform agent interface).
    """

    def __init__(self, *args: Any, threshold_gap: float | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.threshold_gap = (
            horizon_threshold(self.prior, self.horizon)
            if threshold_gap is None
            else check_probability(threshold_gap, "threshold_gap")
        )

    def fresh(self) -> np.ndarray:
        return self.best < 1.0 - self.threshold_gap

    def settled(self) -> np.ndarray:
        return ~self.fresh()


class ReservoirDelightAgent(AnnealedSettings, _ReservoirAgent):
    """DE on the reservoir with a greedy host and the horizon price.

    Parameters
    ----------
    override_rate : float | None
        constant ``ε ∈ (0, 1]``, or ``None`` for the annealed ``M/(M + t)``.
    gate_price : float | None
        ``λ``; default the horizon price ``λ_T`` (with ``ε = override_rate``, or 1 if annealed).
    surprisal_cap : float
        ``L``.

    Other Parameters
    ----------------
    batch_size, tail_exponent, horizon, seed : int, float, int, int or None
        As for :class:`ReservationAgent`; ``seed`` seeds the override draws.
    half_life : float
        ``M`` of the annealed schedule (default 100).
    """

    def __init__(
        self,
        *args: Any,
        override_rate: float | None = 1.0,
        gate_price: float | None = None,
        surprisal_cap: float = DEFAULT_SURPRISAL_CAP,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        if override_rate is not None:
            override_rate = check_probability(override_rate, "override_rate")
            if override_rate == 0:
                raise ValueError("override_rate must be > 0 (or None for the annealed schedule)")
        self.override_rate = override_rate
        self.surprisal_cap = check_positive_float(surprisal_cap, "surprisal_cap")
        self.gate_price = (
            horizon_price(self.prior, self.horizon, self.surprisal_cap, override_rate or 1.0)
            if gate_price is None
            else check_positive_float(gate_price, "gate_price")
        )
        self._ei = np.zeros(self.batch_size)
        self._ei_at = np.full(self.batch_size, np.nan)

    def _fresh_ei(self, rows: np.ndarray) -> np.ndarray:
        """``E[(X − best)^+]`` for ``rows`` (cached: it changes only when ``best`` does)."""
        stale = rows[self._ei_at[rows] != self.best[rows]]
        if stale.size:
            self._ei[stale] = beta_expected_improvement(1.0, self.tail_exponent, self.best[stale])
            self._ei_at[stale] = self.best[stale]
        return self._ei[rows]

    def _host_fresh(self) -> np.ndarray:
        # Greedy host: a fresh arm's mean E[X] beats the best revealed value (ties: exploit).
        return self.best < self.prior_mean

    def fresh(self) -> np.ndarray:
        out = self._host_fresh()
        rows = np.flatnonzero(~out)
        if rows.size:
            eps = self.override_rate
            if eps is None:
                eps = epsilon_schedule(self.t, self.half_life)
            host = np.zeros((rows.size, 2))
            host[:, 0] = 1.0  # column 0: the best revealed arm (EI 0); column 1: a fresh arm
            ei = np.zeros((rows.size, 2))
            ei[:, 1] = self._fresh_ei(rows)
            decision = apply_delight_rule(self, host, ei, eps)
            column, _ = sample_acting(decision, self.rng)
            out[rows] = column == 1
        return out

    def settled(self) -> np.ndarray:
        out = ~self._host_fresh()
        rows = np.flatnonzero(out)
        out[rows] = ~(self.surprisal_cap * self._fresh_ei(rows) >= self.gate_price)  # gate shut
        return out


def simulate_reservoir(agent: _ReservoirAgent, seed: Any = None) -> np.ndarray:
    """Play ``agent`` for its horizon on i.i.d. ``Beta(1, α)`` values drawn (from a generator
    seeded ``seed``) at an arm's first pull; the regret ``Σ_t (1 − X_{A_t})`` per seed."""
    rng = np.random.default_rng(seed)
    regret = np.zeros(agent.batch_size)
    horizon = agent.horizon
    for t in range(horizon):
        # Settled rows exploit for good (the best value only grows, so a closed gate stays
        # closed): add the remaining rounds' regret at once.
        if t > 0 and agent.settled().all():
            regret += (horizon - t) * (1.0 - agent.best)
            break
        arms = agent.act()
        fresh = arms == agent.n_tried
        played = agent.best.copy()
        if fresh.any():
            draw = rng.beta(1.0, agent.tail_exponent, agent.batch_size)
            played = np.where(fresh, draw, played)
        regret += 1.0 - played
        agent.update(arms, played)
    return regret


def fit_slope(horizons: Sequence[float], regrets: Sequence[float]) -> float:
    """Least-squares slope of ``log(regret)`` against ``log(T)``."""
    x = np.log(np.asarray(horizons, dtype=np.float64))
    y = np.log(np.asarray(regrets, dtype=np.float64))
    if x.size < 2:
        raise ValueError("fit_slope needs at least two horizons")
    return float(np.polyfit(x, y, 1)[0])


@dataclass(frozen=True)
class ReservoirRates:
    """Regret against the horizon for one agent and tail exponent ``α``: mean and standard
    error over seeds at each ``T``, the log–log slope over the whole grid and over its top
    decade (``T ≥ T_max/10``), and the predicted ``α/(α+1)``."""

    agent: str
    tail_exponent: float
    horizons: tuple[int, ...]
    regret_mean: tuple[float, ...]
    regret_se: tuple[float, ...]
    slope: float
    slope_top: float
    predicted: float


#: The agents of the rate experiment: label -> (class, keyword arguments).
RATE_AGENTS: dict[str, tuple[type[_ReservoirAgent], dict[str, Any]]] = {
    "reservation": (ReservationAgent, {}),
    "delight ε=1": (ReservoirDelightAgent, {"override_rate": 1.0}),
    "delight ε=0.1": (ReservoirDelightAgent, {"override_rate": 0.1}),
    "delight annealed": (ReservoirDelightAgent, {"override_rate": None}),
}


def reservoir_rates(
    tail_exponent: float,
    horizons: Sequence[int],
    *,
    seeds: int = 200,
    seed: int = 0,
    agents: Sequence[str] = tuple(RATE_AGENTS),
) -> list[ReservoirRates]:
    """Mean regret of each agent at each horizon (``seeds`` runs each, seeded ``(seed, i, T)``
    for agent ``i``) and its log–log slope."""
    grid = tuple(sorted(check_positive_int(int(t), "horizons") for t in horizons))
    n = check_positive_int(seeds, "seeds")
    predicted = tail_exponent / (tail_exponent + 1.0)
    out = []
    for i, label in enumerate(agents):
        cls, kwargs = RATE_AGENTS[label]
        means, ses = [], []
        for t in grid:
            agent = cls(n, tail_exponent, t, seed=[seed, i, t, 0], **kwargs)
            r = simulate_reservoir(agent, seed=[seed, i, t, 1])
            means.append(float(r.mean()))
            ses.append(float(r.std(ddof=1) / np.sqrt(n)) if n > 1 else 0.0)
        top = [j for j, t in enumerate(grid) if t >= grid[-1] / 10]
        slope_top = (
            fit_slope([grid[j] for j in top], [means[j] for j in top]) if len(top) > 1 else np.nan
        )
        slope = fit_slope(grid, means)
        row = (tuple(means), tuple(ses), slope, slope_top, predicted)
        out.append(ReservoirRates(label, float(tail_exponent), grid, *row))
    return out
