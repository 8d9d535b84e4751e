"""Fast Bernoulli-bandit agents, batched over seeds, with cost and memory flat in ``K``.

Untried arms share the prior, so they are one block opened in index order: a row's tried arms
are ``0 … n_tried − 1``, and :meth:`BernoulliAgent.update` takes, per row, a tried arm or the
next untried arm ``n_tried``. The dense agents of :mod:`delight_gym.agents.dense` accept any
arm and are the reference.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from delight_gym._checks import check_action_batch
from delight_gym.agents.base import (
    AnnealedSettings,
    BetaBernoulliAgentBase,
    DelightSettings,
    agent_registry,
    build_agent,
    delight_step_info,
)
from delight_gym.agents.seeding import SeedLike
from delight_gym.de.rule import (
    DelightDecision,
    draw_acting_uniforms,
    epsilon_schedule,
    sample_acting_on_explore_rows,
)
from delight_gym.posteriors.beta import (
    BetaBernoulliPosterior,
    beta_ei_flat,
    prior_expected_improvement,
)

__all__ = [
    "BANDIT_AGENTS",
    "BernoulliAgent",
    "DelightAgent",
    "EpsilonGreedyAgent",
    "GreedyAgent",
    "ThompsonAgent",
    "UCBAgent",
    "make_bandit_agent",
]

_INITIAL_CAPACITY = 64


def _widen(a: np.ndarray, width: int, fill: float) -> np.ndarray:
    out = np.full((a.shape[0], width), fill, dtype=a.dtype)
    out[:, : a.shape[1]] = a
    return out


class BernoulliAgent(BetaBernoulliAgentBase):
    """Base class: Beta posteriors of the tried arms, the untried count, a generator and ``t``.

    The arguments are :class:`~delight_gym.agents.base.BetaBernoulliAgentBase`'s; memory grows
    with the arms tried, not with ``K``.

    Attributes
    ----------
    posterior : BetaBernoulliPosterior
        Over arms ``0 … capacity − 1``; columns at or beyond a row's ``n_tried`` hold the prior.
    n_tried : numpy.ndarray
        Arms tried so far per row, ``(batch_size,)``.
    """

    initial_columns = _INITIAL_CAPACITY  # grown on demand by update()

    def reset(self, seed: SeedLike = None) -> None:
        super().reset(seed)
        self.n_tried = np.zeros(self.batch_size, dtype=np.int64)
        # The greedy host's tried arm and its posterior mean, kept up to date by update():
        # a posterior changes only at the arm just pulled, so the argmax is recomputed only
        # in rows where the best arm's mean went down.
        self._best_arm = np.zeros(self.batch_size, dtype=np.int64)
        self._best_mean = np.full(self.batch_size, -np.inf)

    @property
    def width(self) -> int:
        """Columns in use: the largest ``n_tried`` of the batch."""
        return int(self.n_tried.max())

    @property
    def untried(self) -> np.ndarray:
        """Untried arms per row, ``K − n_tried``, shape ``(batch_size,)``."""
        return self.num_arms - self.n_tried

    def _tried_view(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(alpha, beta, valid)`` of the tried columns, each ``(batch, width)``."""
        w = self.width
        valid = np.arange(w) < self.n_tried[:, None]
        return self.posterior.alpha[:, :w], self.posterior.beta[:, :w], valid

    def _greedy(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Greedy host: ``(arm, baseline v, host_is_untried)`` per row: the best tried arm
        (lowest index on ties) unless the untried block's prior mean is strictly larger."""
        best, best_mean = self._best_arm, self._best_mean
        fresh = (self.untried > 0) & (self.prior_mean > best_mean)
        arm = np.where(fresh, self.n_tried, best)
        baseline = np.where(fresh, self.prior_mean, best_mean)
        return arm, baseline, fresh

    def _grow(self, needed: int) -> None:
        post = self.posterior
        if needed <= post.num_arms:
            return
        capacity = min(self.num_arms, max(needed, 2 * post.num_arms))
        bigger = BetaBernoulliPosterior(
            self.batch_size, capacity, prior_alpha=self.prior_alpha, prior_beta=self.prior_beta
        )
        bigger.alpha[:, : post.num_arms] = post.alpha
        bigger.beta[:, : post.num_arms] = post.beta
        self.posterior, self.pulls = bigger, _widen(self.pulls, capacity, 0)

    def update(self, actions: Any, rewards: Any) -> None:
        """Feed back the arms played, ``(batch_size,)``, each a tried arm or the next untried
        arm ``n_tried`` of its row, and their rewards in ``[0, 1]``."""
        arms = check_action_batch(actions, self.batch_size, self.num_arms)
        if np.any(arms > self.n_tried):
            raise ValueError(
                "actions must be a tried arm or the next untried arm (index n_tried) of each "
                "row: the fast agents introduce untried arms in index order; use "
                "delight_gym.agents.dense for arbitrary arms"
            )
        self._grow(int(arms.max()) + 1)
        self.posterior.update(arms, rewards)
        self.pulls[self._rows, arms] += 1
        self.n_tried += arms == self.n_tried
        self.t += 1
        self._track_best(arms)
        self._arms_updated(arms)

    def _arms_updated(self, arms: np.ndarray) -> None:
        """Hook: the posterior of ``arms`` (one per row) just changed."""

    def _track_best(self, arms: np.ndarray) -> None:
        """Bring the greedy host's ``(_best_arm, _best_mean)`` up to date after ``arms``."""
        rows = self._rows
        a, b = self.posterior.alpha[rows, arms], self.posterior.beta[rows, arms]
        mean = a / (a + b)
        best, best_mean = self._best_arm, self._best_mean
        was_best = arms == best
        # The best arm went down: its row's argmax must be recomputed from scratch.
        stale = np.flatnonzero(was_best & (mean < best_mean))
        # Another arm overtook (or tied with a lower index): it is the new best.
        wins = ~was_best & ((mean > best_mean) | ((mean == best_mean) & (arms < best)))
        best_mean[was_best] = mean[was_best]
        best[wins] = arms[wins]
        best_mean[wins] = mean[wins]
        if stale.size:
            w = int(self.n_tried[stale].max())
            alpha = self.posterior.alpha[stale, :w]
            means = alpha / (alpha + self.posterior.beta[stale, :w])
            means = np.where(np.arange(w) < self.n_tried[stale, None], means, -np.inf)
            arg = np.argmax(means, axis=1)
            best[stale] = arg
            best_mean[stale] = means[np.arange(stale.size), arg]


class GreedyAgent(BernoulliAgent):
    """The host alone: always plays the arm of largest posterior mean (no exploration)."""

    name = "greedy"

    def act(self) -> np.ndarray:
        return self._greedy()[0]


class ThompsonAgent(BernoulliAgent):
    """Thompson sampling with exact Beta–Bernoulli posteriors: argmax of one posterior draw.

    The tried arms are sampled one by one; the best of the ``u`` untried arms is drawn at
    once as ``F⁻¹(U^{1/u})``, the law of the maximum of ``u`` prior draws.
    """

    name = "thompson"

    def act(self) -> np.ndarray:
        alpha, beta, valid = self._tried_view()
        if alpha.shape[1]:
            samples = np.where(valid, self.rng.beta(alpha, beta), -np.inf)
            best = np.argmax(samples, axis=1)
            best_sample = samples[self._rows, best]
        else:
            best = np.zeros(self.batch_size, dtype=np.int64)
            best_sample = np.full(self.batch_size, -np.inf)
        u = self.untried
        power = self.rng.random(self.batch_size) ** (1.0 / np.maximum(u, 1))  # max of u uniforms
        if self.prior_alpha == 1.0 and self.prior_beta == 1.0:
            fresh_max = power
        else:
            from scipy import special  # here: the uniform prior does not need it

            fresh_max = special.betaincinv(self.prior_alpha, self.prior_beta, power)
        fresh_max = np.where(u > 0, fresh_max, -np.inf)
        return np.where(fresh_max > best_sample, self.n_tried, best)


class EpsilonGreedyAgent(AnnealedSettings, BernoulliAgent):
    """Annealed ε-greedy: with probability ``ε_t = M/(M+t)`` (``half_life`` ``M``, default
    100) a uniformly random arm of the ``K``, otherwise the greedy arm."""

    name = "egreedy"

    def act(self) -> np.ndarray:
        eps = epsilon_schedule(self.t, self.half_life)
        explore = self.rng.random(self.batch_size) < eps
        uniform = self.rng.integers(self.num_arms, size=self.batch_size)
        # A uniform draw that lands on an untried arm plays the lowest-index untried arm.
        random_arm = np.minimum(uniform, self.n_tried)
        actions = np.where(explore, random_arm, self._greedy()[0])
        self.last_info = {"epsilon": eps, "explored": explore}
        return actions


class UCBAgent(BernoulliAgent):
    """UCB1 (Auer et al., 2002): play every arm once (lowest index first), then
    ``argmax_a  S_a/n_a + sqrt(2 ln t / n_a)`` with empirical means and ``t`` total pulls.
    The prior is not used for the index."""

    name = "ucb"

    def act(self) -> np.ndarray:
        alpha, _, valid = self._tried_view()
        n = self.pulls[:, : alpha.shape[1]]
        with np.errstate(divide="ignore", invalid="ignore"):  # n = 0 columns are masked below
            index = (alpha - self.prior_alpha) / n + np.sqrt(2.0 * np.log(max(self.t, 1)) / n)
        index = np.where(valid, index, -np.inf)
        best = np.argmax(index, axis=1) if index.shape[1] else np.zeros(self.batch_size, int)
        return np.where(self.untried > 0, self.n_tried, best)


class DelightAgent(DelightSettings, BernoulliAgent):
    """Delight-gated exploration (Algorithm 1) with a greedy host and exact Beta EI.

    Host: the greedy arm (lowest index on ties); baseline ``v = max_a m_a``; every other arm
    has surprisal exactly ``L``. ``last_info`` is
    :func:`~delight_gym.agents.base.delight_step_info`'s (``gate_size`` counts untried arms).

    Other Parameters
    ----------------
    half_life, gate_price, surprisal_cap : float
        ``M``, ``λ`` and ``L`` (defaults 100, 0.1, 10).
    """

    name = "delight"

    def reset(self, seed: SeedLike = None) -> None:
        super().reset(seed)
        # Per tried arm, the largest baseline v at which Scarf's bound still lets it reach
        # the gate (-inf for untried columns), refreshed for the arm each update changes.
        self._reach = np.full(self.posterior.alpha.shape, -np.inf)

    def _arms_updated(self, arms: np.ndarray) -> None:
        if self._reach.shape[1] < self.posterior.num_arms:
            self._reach = _widen(self._reach, self.posterior.num_arms, -np.inf)
        a = self.posterior.alpha[self._rows, arms]
        b = self.posterior.beta[self._rows, arms]
        self._reach[self._rows, arms] = self._scarf_reach(a, b)

    def _scarf_reach(self, alpha: np.ndarray, beta: np.ndarray) -> np.ndarray:
        """The baseline up to which an arm ``Beta(alpha, beta)`` may be in the gate."""
        # Scarf's bound EI <= (sqrt(Var + d²) - d)/2, d = v - m, reaches c = λ/L exactly when
        # d <= Var/(4c) - c. The 1e-9 margin is far above rounding: past it, surely outside.
        if self.gate_price == 0.0:
            return np.full(alpha.shape, np.inf)
        if np.isinf(self.gate_price):
            return np.full(alpha.shape, -np.inf)  # the gate is always empty
        total = alpha + beta
        mean = alpha / total
        var = mean * (beta / total) / (total + 1.0)
        c = self.gate_price / self.surprisal_cap
        reach = mean + np.maximum(var / (4.0 * c) - c, 0.0)
        return reach + 1e-9 * (1.0 + np.abs(reach))

    def _candidates(
        self, rows: np.ndarray, host_arm: np.ndarray, host_fresh: np.ndarray, baseline: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(cols, present, ei)``, each ``(r, c)``: the host's tried arm and the tried arms of
        ``rows`` whose delight may reach λ, compacted (ascending arm per row), whether each
        column is used, and their exact EI (0 for the host, whose surprisal is 0)."""
        # An arm is left out only when a bound puts L·EI below λ: it is outside the gate and
        # the greedy host gives it probability 0, so leaving it out changes nothing.
        w = int(self.n_tried[rows].max()) if rows.size else 0
        keep = self._reach[rows, :w] >= baseline[:, None]
        tried_host = np.flatnonzero(~host_fresh)
        keep[tried_host, host_arm[tried_host]] = True
        r_idx, c_idx = np.nonzero(keep)
        ei = np.zeros(r_idx.size)
        need = np.flatnonzero(host_fresh[r_idx] | (c_idx != host_arm[r_idx]))  # not the host
        if need.size:
            arm_rows, arms = rows[r_idx[need]], c_idx[need]
            ei[need] = beta_ei_flat(
                self.posterior.alpha[arm_rows, arms],
                self.posterior.beta[arm_rows, arms],
                baseline[r_idx[need]],
                skip_below=self.gate_price / self.surprisal_cap,
            )
        # Compact: the j-th kept arm of a row goes to column j (pos) of that row.
        counts = np.bincount(r_idx, minlength=rows.size)
        c = int(counts.max()) if counts.size else 0
        pos = np.arange(r_idx.size) - (np.cumsum(counts) - counts)[r_idx]
        cols = np.zeros((rows.size, c), dtype=np.int64)
        present = np.zeros((rows.size, c), dtype=bool)
        cand_ei = np.zeros((rows.size, c))
        cols[r_idx, pos] = c_idx
        present[r_idx, pos] = True
        cand_ei[r_idx, pos] = ei
        return cols, present, cand_ei

    def act(self) -> np.ndarray:
        host_arm, baseline, host_fresh = self._greedy()
        eps = epsilon_schedule(self.t, self.half_life)
        columns_of: dict[str, np.ndarray] = {}  # the exploring rows' column multiplicities

        def decide(rows: np.ndarray) -> tuple[DelightDecision, np.ndarray]:
            # Columns: candidate tried arms, the first untried arm, the other untried arms
            # (weighted by multiplicity; the last two both play arm n_tried).
            cols, present, cand_ei = self._candidates(
                rows, host_arm[rows], host_fresh[rows], baseline[rows]
            )
            r, c = cols.shape
            u = self.untried[rows]
            fresh = host_fresh[rows]
            multiplicity = np.zeros((r, c + 2))
            multiplicity[:, :c] = present
            multiplicity[:, c] = u > 0
            multiplicity[:, c + 1] = np.maximum(u - 1, 0)
            columns_of["multiplicity"] = multiplicity
            host = np.zeros((r, c + 2))
            host[:, :c] = present & (cols == host_arm[rows, None]) & ~fresh[:, None]
            host[:, c] = fresh
            ei = np.zeros((r, c + 2))
            ei[:, :c] = cand_ei
            ei[:, c] = ei[:, c + 1] = prior_expected_improvement(
                self.prior_alpha, self.prior_beta, baseline[rows]
            )
            decision = self.decide(host, ei, eps, multiplicity=multiplicity)
            untried_arm = np.repeat(self.n_tried[rows, None], 2, axis=1)
            return decision, np.concatenate([cols, untried_arm], axis=1)

        # Algorithm 1's two-stage draw; the greedy host's draw is its arm, and the gate and EI
        # are evaluated only on the rows whose ε coin chose the override.
        draw = sample_acting_on_explore_rows(
            draw_acting_uniforms(self.rng, self.batch_size),
            eps,
            decide,
            host_actions=host_arm,
        )
        gate_size = np.full(self.batch_size, -1, dtype=np.int64)
        gate_empty = np.zeros(self.batch_size, dtype=bool)
        if draw.decision is not None:
            gate = draw.decision.gate * columns_of["multiplicity"]  # every untried arm counts
            gate_size[draw.rows] = gate.sum(axis=1).astype(np.int64)
            gate_empty[draw.rows] = draw.decision.gate_empty
        self.last_info = delight_step_info(eps, draw.explored, gate_empty, gate_size)
        return draw.actions


BANDIT_AGENTS: dict[str, type[BernoulliAgent]] = agent_registry(
    DelightAgent, ThompsonAgent, EpsilonGreedyAgent, GreedyAgent, UCBAgent
)


def make_bandit_agent(
    name: str, batch_size: int, num_arms: int, *, seed: SeedLike = None, **kwargs: Any
) -> BernoulliAgent:
    """Build a fast Bernoulli agent by name: ``delight, thompson, egreedy, greedy, ucb``
    (a keyword the agent does not take is a ``TypeError``)."""
    return build_agent(BANDIT_AGENTS, name, batch_size, num_arms, seed=seed, **kwargs)
