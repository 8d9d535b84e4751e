"""Batched agents for continuum-armed bandits (actions in ``[0, 1]^d``) on one posterior.

Every agent keeps a :class:`~delight_gym.posteriors.rff.RFFPosterior` (one row per seed) and
scores the same candidate budget each round: ``num_candidates`` uniform points plus its
incumbent (the last host action). ``greedy`` plays the best posterior mean among them,
``thompson`` the best of one posterior draw, ``ucb`` the best upper bound, ``egreedy`` a uniform
action with probability ``ε_t = M/(M + t)``, ``uniform`` a uniform action. ``delight`` is the
greedy host with candidate-set DE (:class:`~delight_gym.de.candidates.CandidateDelight`): the host's
action, ``n_host`` truncated-Gaussian draws around it (the host's stated proposal density) and
``n_posterior`` posterior proposals (each the best of ``num_candidates`` uniform points under a
fresh posterior draw), scored by exact Gaussian EI over the posterior mean of the host's action.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from gymnasium import spaces

from delight_gym._checks import check_positive_float, check_positive_int
from delight_gym.de.candidates import (
    CandidateDelight,
    GaussianProposalHost,
    HostSamples,
    PosteriorArgmax,
)
from delight_gym.de.rule import (
    DEFAULT_GATE_PRICE,
    DEFAULT_HALF_LIFE,
    DEFAULT_SURPRISAL_CAP,
    epsilon_schedule,
)
from delight_gym.posteriors.rff import RFFPosterior

__all__ = ["CONTINUUM_AGENTS", "ContinuumAgent"]

#: The agents :class:`ContinuumAgent` knows.
CONTINUUM_AGENTS = ("delight", "thompson", "ucb", "egreedy", "greedy", "uniform")


class ContinuumAgent:
    """One agent of :data:`CONTINUUM_AGENTS` for ``B`` independent continuum bandits.

    Parameters
    ----------
    name : str
        One of :data:`CONTINUUM_AGENTS`.
    batch_size, dim : int
        ``B`` seeds and the action dimension ``d``.
    seed : int
        Seeds the agent's numpy generator and its posterior's torch generator.
    num_candidates : int, default 64
        Uniform points scored per round (every agent's budget).
    num_features, lengthscale, prior_std, noise :
        The posterior's (:class:`~delight_gym.posteriors.rff.RFFPosterior`).
    half_life, gate_price, surprisal_cap : float
        ``M``, ``λ``, ``L`` (``egreedy`` uses ``M`` only).
    n_host, n_posterior : int, default 8, 8
        ``delight``'s host draws and posterior proposals per candidate set.
    host_std : float, default 0.1
        ``delight``'s proposal density around the greedy host: a Gaussian of this standard
        deviation (in units of the box's side), truncated to the box.
    ucb_beta : float, default 4.0
        ``ucb`` plays the best ``mean + √β · std``.
    """

    def __init__(
        self,
        name: str,
        batch_size: int,
        dim: int,
        *,
        seed: int,
        num_candidates: int = 64,
        num_features: int = 256,
        lengthscale: float = 0.1,
        prior_std: float = 1.0,
        noise: float = 0.1,
        half_life: float = DEFAULT_HALF_LIFE,
        gate_price: float = DEFAULT_GATE_PRICE,
        surprisal_cap: float = DEFAULT_SURPRISAL_CAP,
        n_host: int = 8,
        n_posterior: int = 8,
        host_std: float = 0.1,
        ucb_beta: float = 4.0,
    ) -> None:
        if name not in CONTINUUM_AGENTS:
            raise ValueError(f"name must be one of {list(CONTINUUM_AGENTS)}, got {name!r}")
        self.name = name
        self.batch_size = check_positive_int(batch_size, "batch_size")
        self.dim = check_positive_int(dim, "dim")
        self.num_candidates = check_positive_int(num_candidates, "num_candidates")
        self.half_life = check_positive_float(half_life, "half_life")
        self.ucb_beta = check_positive_float(ucb_beta, "ucb_beta")
        self.rng = np.random.default_rng(seed)
        self.posterior = RFFPosterior(
            self.batch_size,
            self.dim,
            num_features=num_features,
            lengthscale=lengthscale,
            prior_std=prior_std,
            noise=noise,
            seed=seed,
        )
        self.space = spaces.Box(0.0, 1.0, shape=(self.dim,), dtype=np.float64)
        self.incumbent = self.rng.random((self.batch_size, self.dim))
        self.t = 0
        self.override_count = np.zeros(self.batch_size, dtype=np.int64)
        self.delight: CandidateDelight | None = None
        if name == "delight":
            host = GaussianProposalHost(self.space, host_std)
            self.delight = CandidateDelight(
                self.space,
                host,
                self._expected_improvement,
                [
                    (HostSamples(host), check_positive_int(n_host, "n_host")),
                    (
                        PosteriorArgmax(self.space, self._sampled_values, num_candidates),
                        check_positive_int(n_posterior, "n_posterior"),
                    ),
                ],
                half_life=half_life,
                gate_price=gate_price,
                surprisal_cap=surprisal_cap,
            )

    @property
    def gate_price(self) -> float:
        """``λ`` (``delight`` only)."""
        if self.delight is None:
            raise AttributeError(f"agent {self.name!r} has no gate price")
        return self.delight.gate_price

    @property
    def surprisal_cap(self) -> float:
        """``L`` (``delight`` only)."""
        if self.delight is None:
            raise AttributeError(f"agent {self.name!r} has no surprisal cap")
        return self.delight.surprisal_cap

    def _padded(self, rows: np.ndarray, points: np.ndarray) -> torch.Tensor:
        """``points`` ``(r, m, d)`` of ``rows`` as a ``(B, m, d)`` tensor (zeros elsewhere)."""
        full = np.zeros((self.batch_size, *points.shape[1:]))
        full[rows] = points
        return torch.as_tensor(full, dtype=self.posterior.dtype)

    def _expected_improvement(self, states: Any, candidates: Any) -> np.ndarray:
        """EI of ``candidates`` ``(r, C, d)`` over the posterior mean of column 0 (the host's);
        ``states`` are the rows' indices."""
        rows = np.asarray(states)
        x = self._padded(rows, candidates)
        baseline = self.posterior.mean(x[:, :1], validate=False)[:, 0]
        ei = self.posterior.expected_improvement(x, baseline, validate=False)
        return ei.numpy()[rows]

    def _sampled_values(self, rows: np.ndarray, actions: np.ndarray, rng: Any) -> np.ndarray:
        """Values of ``actions`` ``(r, N, d)`` under one fresh posterior draw per row."""
        return self.posterior.thompson(self._padded(rows, actions), validate=False).numpy()[rows]

    def act(self) -> np.ndarray:
        """float64 ``(B, d)``: this round's actions."""
        b, d = self.batch_size, self.dim
        if self.name == "uniform":
            return self.rng.random((b, d))
        pool = np.concatenate(
            [self.incumbent[:, None], self.rng.random((b, self.num_candidates, d))], axis=1
        )
        x = torch.as_tensor(pool, dtype=self.posterior.dtype)
        if self.name == "thompson":
            scores = self.posterior.thompson(x, validate=False)
        elif self.name == "ucb":
            mean, std = self.posterior.predictive(x, validate=False)
            scores = mean + self.ucb_beta**0.5 * std
        else:
            scores = self.posterior.mean(x, validate=False)
        best = pool[np.arange(b), scores.argmax(dim=1).numpy()]
        if self.name in ("greedy", "delight", "egreedy"):
            self.incumbent = best
        if self.name == "egreedy":
            explore = self.rng.random(b) < epsilon_schedule(self.t, self.half_life)
            best = np.where(explore[:, None], self.rng.random((b, d)), best)
        if self.delight is not None:
            decision = self.delight.decide(np.arange(b), best, self.t, self.rng)
            self.override_count += decision.overridden
            best = decision.actions
        return best

    def update(self, actions: np.ndarray, rewards: np.ndarray) -> None:
        """Absorb one round: ``actions`` ``(B, d)``, ``rewards`` ``(B,)``."""
        self.posterior.update(
            torch.as_tensor(actions, dtype=self.posterior.dtype)[:, None],
            torch.as_tensor(rewards, dtype=self.posterior.dtype)[:, None],
        )
        self.t += 1
