"""Batched agents for continuum-armed bandits (actions in ``[0, 1]^d``) on one posterior.

Every agent of :data:`CONTINUUM_AGENTS` keeps a :class:`~delight_gym.posteriors.rff.RFFPosterior`
(one row per seed) and scores the same pool of points each round; the agents differ only in how
they choose from it (:class:`ContinuumAgent`). GP-UCB's ``β_t`` is :func:`srinivas_beta`
("Gaussian Process Optimization in the Bandit Setting", Srinivas, Krause, Kakade & Seeger).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
from gymnasium import spaces

from delight_gym._checks import (
    array_bytes,
    check_choice,
    check_finite_array,
    check_nonnegative_int,
    check_positive_float,
    check_positive_int,
    check_unit_interval_array,
    check_would_fit,
)
from delight_gym.de.candidates import HOST_STD_RANGE, CandidateDelight, GaussianProposalHost
from delight_gym.de.rule import (
    DEFAULT_GATE_PRICE,
    DEFAULT_HALF_LIFE,
    DEFAULT_SURPRISAL_CAP,
    epsilon_schedule,
)
from delight_gym.posteriors.rff import RFFPosterior

__all__ = [
    "AGENT_KEYWORDS",
    "CONTINUUM_AGENTS",
    "ContinuumAgent",
    "srinivas_beta",
    "srinivas_beta_continuous",
]

#: The agents :class:`ContinuumAgent` knows.
CONTINUUM_AGENTS = ("delight", "thompson", "ucb", "egreedy", "greedy", "uniform")
#: The keywords only some agents use, and those agents (any other agent refuses them).
AGENT_KEYWORDS = {
    "half_life": ("delight", "egreedy"),
    "gate_price": ("delight",),
    "surprisal_cap": ("delight",),
    "ucb_delta": ("ucb",),
}
#: GP-UCB's default ``δ``.
DEFAULT_UCB_DELTA = 0.1


def srinivas_beta(t: Any, num_points: int, delta: float = 0.1) -> Any:
    """GP-UCB's ``β_t = 2 log(|D| t² π² / (6δ))`` for a finite decision set ``D`` (Theorem 1
    of Srinivas et al.).

    Parameters
    ----------
    t : int or array_like
        The round, ``t ≥ 1`` (the first decision is ``t = 1``).
    num_points, delta : int, float
        ``|D| ≥ 1`` and ``δ`` in ``(0, 1)``.
    """
    n = check_positive_int(num_points, "num_points")
    d = check_positive_float(delta, "delta", normal=True)
    if d >= 1.0:
        raise ValueError(f"delta must be in (0, 1), got {delta}")
    return _srinivas_beta(_check_rounds(t), n, d)


def _check_rounds(t: Any) -> np.ndarray:
    """``t`` as a float64 array, refused unless every round is ``>= 1``."""
    arr = np.asarray(t, dtype=np.float64)
    if not np.all(arr >= 1):
        raise ValueError(f"t must be >= 1, got {t}")
    return arr


def _srinivas_beta(t: Any, n: int, d: float) -> Any:
    t = np.asarray(t, dtype=np.float64)
    with np.errstate(over="ignore"):
        beta = 2.0 * np.log(n * t**2 * math.pi**2 / (6.0 * d))
    return _in_logs(beta, lambda: 2.0 * (math.log(n) + _LOG_PI2_6 + 2.0 * np.log(t) - math.log(d)))


#: ``log(π²/6)``, and ``log(2π²/3)`` for :func:`srinivas_beta_continuous`.
_LOG_PI2_6, _LOG_2PI2_3 = math.log(math.pi**2 / 6.0), math.log(2.0 * math.pi**2 / 3.0)


def _in_logs(direct: Any, logs: Any) -> Any:
    """``direct``, but ``logs()`` (its formula summed in logs) where ``direct`` overflowed to
    ``+inf``: bitwise the plain formula wherever that is finite."""
    if not np.any(direct == np.inf):
        return direct
    with np.errstate(all="ignore"):
        return np.where(direct == np.inf, logs(), direct)[()]


def srinivas_beta_continuous(
    t: Any, dim: int, *, delta: float = 0.1, a: float = 1.0, b: float = 1.0, r: float = 1.0
) -> Any:
    """GP-UCB's ``β_t`` for a compact ``D ⊂ [0, r]^d`` (Theorem 2 of Srinivas et al.).

    ``β_t = 2 log(2t²π²/(3δ)) + 2d log(t² d b r √(log(4da/δ)))``, where ``a, b`` bound the
    kernel's derivatives (``P(sup |∂f/∂x_j| > L) ≤ a e^{−(L/b)²}``). For reference only.
    """
    dd = check_positive_int(dim, "dim")
    check_positive_float(delta, "delta", normal=True)
    for name, value in (("a", a), ("b", b), ("r", r)):
        check_positive_float(value, name)
    arr = _check_rounds(t)
    with np.errstate(over="ignore"):
        first = 2.0 * np.log(2.0 * arr**2 * math.pi**2 / (3.0 * delta))
        inner = arr**2 * dd * b * r * math.sqrt(math.log(4.0 * dd * a / delta))
        log_inner = np.log(inner)
    first = _in_logs(first, lambda: 2.0 * (_LOG_2PI2_3 + 2.0 * np.log(arr) - math.log(delta)))
    log_dbr = math.log(dd) + math.log(b) + math.log(r)
    log_4da = math.log(4.0 * dd) + math.log(a) - math.log(delta)
    log_inner = _in_logs(log_inner, lambda: 2.0 * np.log(arr) + log_dbr + 0.5 * np.log(log_4da))
    return first + 2.0 * dd * log_inner


class _Pool:
    """The proposer :class:`CandidateDelight` gets: this round's pool, for the exploring rows."""

    def __init__(self) -> None:
        self.points = np.zeros((0, 0, 0))

    def propose(self, states: Any, host_actions: Any, n: int, rng: Any) -> np.ndarray:
        return self.points[np.asarray(states)]


class ContinuumAgent:
    """One agent of :data:`CONTINUUM_AGENTS` for ``B`` independent continuum bandits.

    ``greedy`` plays the best posterior mean of this round's :meth:`pool`, ``thompson`` the best
    of one draw, ``ucb`` the best ``mean + √β_t·std``, ``egreedy`` a uniform action with
    probability ``ε_t``, ``uniform`` a uniform action; ``delight`` is greedy with candidate-set
    DE on the pool (surprisal under the local step's Gaussian).

    Parameters
    ----------
    name : str
        One of :data:`CONTINUUM_AGENTS`.
    batch_size, dim, seed : int
        ``B`` seeds, the action dimension ``d``; ``seed`` seeds both generators.
    num_candidates, num_local, num_posterior : int, default 64, 24, 8
        The pool's size (the incumbent included), its local steps around the incumbent and its
        posterior argmaxes; the rest is uniform.
    local_std : float, default 0.05
        Per-coordinate std of a local step (clipped to the box) and of ``delight``'s host density.
    num_features, lengthscale, prior_std, noise :
        The :class:`~delight_gym.posteriors.rff.RFFPosterior`'s.
    half_life, gate_price, surprisal_cap, ucb_delta : float, optional
        ``M`` (``delight``, ``egreedy``), ``λ`` and ``L`` (``delight``), GP-UCB's ``δ`` (``ucb``,
        0.1); the rule's defaults otherwise. Another agent refuses them (``TypeError``).
    """

    def __init__(
        self,
        name: str,
        batch_size: int,
        dim: int,
        *,
        seed: int,
        num_candidates: int = 64,
        num_local: int = 24,
        num_posterior: int = 8,
        local_std: float = 0.05,
        num_features: int = 256,
        lengthscale: float = 0.1,
        prior_std: float = 1.0,
        noise: float = 0.1,
        half_life: float | None = None,
        gate_price: float | None = None,
        surprisal_cap: float | None = None,
        ucb_delta: float | None = None,
    ) -> None:
        check_choice(name, list(CONTINUUM_AGENTS), "name")
        given = {
            "half_life": half_life,
            "gate_price": gate_price,
            "surprisal_cap": surprisal_cap,
            "ucb_delta": ucb_delta,
        }
        unused = [k for k, v in given.items() if v is not None and name not in AGENT_KEYWORDS[k]]
        if unused:
            users = "; ".join(f"{k}: {' and '.join(AGENT_KEYWORDS[k])} only" for k in unused)
            raise TypeError(f"ContinuumAgent({name!r}) does not use {', '.join(unused)} ({users})")
        half_life = DEFAULT_HALF_LIFE if half_life is None else half_life
        gate_price = DEFAULT_GATE_PRICE if gate_price is None else gate_price
        surprisal_cap = DEFAULT_SURPRISAL_CAP if surprisal_cap is None else surprisal_cap
        ucb_delta = DEFAULT_UCB_DELTA if ucb_delta is None else ucb_delta
        self.name = name
        self.num_candidates = check_positive_int(num_candidates, "num_candidates")
        self.num_local = check_nonnegative_int(num_local, "num_local")
        self.num_posterior = check_nonnegative_int(num_posterior, "num_posterior")
        self.num_uniform = self.num_candidates - 1 - self.num_local - self.num_posterior
        if self.num_uniform < 0:
            raise ValueError(
                f"num_candidates={num_candidates} must be at least 1 + num_local + "
                f"num_posterior = {1 + self.num_local + self.num_posterior}"
            )
        self.local_std = check_positive_float(local_std, "local_std")
        low, high = HOST_STD_RANGE
        if name == "delight" and not low <= self.local_std <= high:
            raise ValueError(
                f"local_std must lie in [{low:g}, {high:g}] for delight (its host's std, a "
                f"fraction of the box), got {local_std}"
            )
        self.half_life = check_positive_float(half_life, "half_life")
        self.ucb_delta = check_positive_float(ucb_delta, "ucb_delta", normal=True)
        srinivas_beta(1, self.num_candidates, self.ucb_delta)  # checks δ < 1
        self.posterior = RFFPosterior(
            batch_size,
            dim,
            num_features=num_features,
            lengthscale=lengthscale,
            prior_std=prior_std,
            noise=noise,
            seed=seed,
        )
        # batch_size, dim and seed are checked by the posterior, as the agent's own
        self.batch_size, self.dim = self.posterior.batch_size, self.posterior.dim
        self.rng = np.random.default_rng(self.posterior.seed)
        b, c, s = self.batch_size, self.num_candidates, self.num_posterior
        m = self.posterior.num_features
        check_would_fit(
            {  # what act() holds at once: see pool() and RFFPosterior's buffers
                "pool and its parts": array_bytes(5, b, c, self.dim),
                "pool features": array_bytes(2, b, c, m),
                "posterior draws": array_bytes(3, b, m, s),
                "posterior draws' values": array_bytes(b, s, c),
            },
            f"batch_size={b}, num_candidates={c}, num_posterior={s}, num_features={m}",
            self.posterior.device,
        )
        self.space = spaces.Box(0.0, 1.0, shape=(self.dim,), dtype=np.float64)
        self.incumbent = self.rng.random((self.batch_size, self.dim))
        self.t = 0
        self.override_count = np.zeros(self.batch_size, dtype=np.int64)
        # delight only: per row, rounds explored and overridden; overrides per pool part.
        self.explored_count = np.zeros(self.batch_size, dtype=np.int64)
        self.override_sources = np.zeros(3, dtype=np.int64)
        self.delight: CandidateDelight | None = None
        self._pool = _Pool()
        if name == "delight":
            self.delight = CandidateDelight(
                self.space,
                GaussianProposalHost(self.space, self.local_std),
                self._expected_improvement,
                [(self._pool, self.num_candidates)],
                half_life=half_life,
                gate_price=gate_price,
                surprisal_cap=surprisal_cap,
            )

    def _delight_rule(self, what: str) -> CandidateDelight:
        if self.delight is None:
            raise AttributeError(f"agent {self.name!r} has no {what}")
        return self.delight

    @property
    def gate_price(self) -> float:
        """``λ`` (``delight`` only)."""
        return self._delight_rule("gate price").gate_price

    @property
    def surprisal_cap(self) -> float:
        """``L`` (``delight`` only)."""
        return self._delight_rule("surprisal cap").surprisal_cap

    def _tensor(self, points: np.ndarray) -> torch.Tensor:
        return torch.as_tensor(points, dtype=self.posterior.dtype)

    def _expected_improvement(self, states: Any, candidates: Any) -> np.ndarray:
        """EI of ``candidates`` ``(r, C, d)`` of rows ``states`` over their column 0's mean."""
        rows = np.asarray(states)
        full = np.zeros((self.batch_size, *candidates.shape[1:]))  # the posterior scores all B rows
        full[rows] = candidates
        x = self._tensor(full)
        baseline = self.posterior.mean(x[:, :1])[:, 0]
        ei = self.posterior.expected_improvement(x, baseline)
        return ei.numpy()[rows]

    def pool(self) -> np.ndarray:
        """This round's pool ``(B, num_candidates, d)``: the incumbent (the best posterior mean
        of the last pool), the posterior argmaxes, the local steps, the uniform points."""
        b, d = self.batch_size, self.dim
        steps = self.rng.standard_normal((b, self.num_local, d)) * self.local_std
        local = np.clip(self.incumbent[:, None] + steps, 0.0, 1.0)
        uniform = self.rng.random((b, self.num_uniform, d))
        scored = np.concatenate([local, uniform], axis=1)
        parts = [self.incumbent[:, None]]
        if self.num_posterior:
            if scored.shape[1] == 0:  # no other point to draw over: the incumbent
                scored = self.incumbent[:, None]
            draws = self.posterior.sample_function(self.num_posterior)(self._tensor(scored))
            best = draws.argmax(dim=-1).numpy()  # (B, S)
            parts.append(scored[np.arange(b)[:, None], best])
        return np.concatenate([*parts, local, uniform], axis=1)

    def act(self) -> np.ndarray:
        """float64 ``(B, d)``: this round's actions."""
        b, d = self.batch_size, self.dim
        if self.name == "uniform":
            return self.rng.random((b, d))
        pool = self.pool()
        x = self._tensor(pool)
        rows = np.arange(b)
        if self.name == "ucb":
            mean, std = self.posterior.predictive(x)
            beta = float(_srinivas_beta(self.t + 1, self.num_candidates, self.ucb_delta))
            scores = mean + math.sqrt(beta) * std
        else:
            mean = self.posterior.mean(x)
            scores = self.posterior.thompson(x) if self.name == "thompson" else mean
        self.incumbent = pool[rows, mean.argmax(dim=1).numpy()]
        best = pool[rows, scores.argmax(dim=1).numpy()]
        if self.name == "egreedy":
            explore = self.rng.random(b) < epsilon_schedule(self.t, self.half_life)
            best = np.where(explore[:, None], self.rng.random((b, d)), best)
        if self.delight is not None:
            self._pool.points = pool
            decision = self.delight.decide(rows, best, self.t, self.rng)
            self.override_count += decision.overridden
            self.explored_count += decision.explored
            self._count_sources(decision, pool)
            best = decision.actions
        return best

    def _count_sources(self, decision: Any, pool: np.ndarray) -> None:
        """Count each override's pool part (uniform, local, posterior argmax); one back to the
        host's action counts as none."""
        over = decision.overridden
        if not over.any():
            return
        # The first pool column equal to the played action; columns are ordered incumbent,
        # posterior argmaxes, local steps, uniform points (see pool()).
        played = decision.actions[over][:, None]
        hit = np.all(pool[over] == played, axis=-1)  # (r, C)
        column = np.argmax(hit, axis=1)
        moved = np.any(decision.actions[over] != self.incumbent[over], axis=-1)
        column = column[moved & hit.any(axis=1)]
        posterior_end = 1 + self.num_posterior
        local_end = posterior_end + self.num_local
        self.override_sources[0] += int(np.sum(column >= local_end))
        self.override_sources[1] += int(np.sum((column >= posterior_end) & (column < local_end)))
        self.override_sources[2] += int(np.sum((column >= 1) & (column < posterior_end)))

    def update(self, actions: np.ndarray, rewards: np.ndarray) -> None:
        """Absorb one round: ``actions`` ``(B, d)`` in ``[0, 1]``, ``rewards`` ``(B,)``."""
        x = check_finite_array(actions, "actions", shape=(self.batch_size, self.dim))
        x = check_unit_interval_array(x, "actions")
        self.posterior.update(self._tensor(x)[:, None], self._tensor(rewards)[:, None])
        self.t += 1
