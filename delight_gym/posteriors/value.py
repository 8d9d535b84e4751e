"""The tabular Gaussian value posterior (the wrapper's default for Discrete or one-hot
observations), and :func:`default_posterior`, which picks it or the ensemble for other Box
spaces. numpy only; torch is imported only when an ensemble is built."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from delight_gym._checks import (
    check_action_batch,
    check_finite_array,
    check_finite_float,
    check_positive_float,
    check_positive_int,
    check_probability,
)
from delight_gym.de.posterior import check_baseline
from delight_gym.posteriors.encoders import DiscreteEncoder, encoder_for_space, required_encoder
from delight_gym.posteriors.gaussian import gaussian_ei_unchecked

__all__ = ["TabularValuePosterior", "default_posterior"]


class TabularValuePosterior:
    """Independent Gaussian posteriors over ``Q(s, a)`` on a finite state set, fed TD targets.

    Each ``(s, a)`` has ``Q(s, a) ~ N(m, sd²)``; a transition is one observation
    ``y = r + γ(1 − terminated) max_b m(s', b)`` of ``Q(s, a)`` with noise ``σ`` (conjugate
    update; a batch equals its rows fed one by one). EI is exact Gaussian EI.

    Parameters
    ----------
    num_states, num_actions : int
        ``S`` and ``A``.
    encoder : callable, optional
        Observations → state indices in ``[0, S)``; default: the observations are integer
        indices ``(n,)``.
    gamma : float, default 0.99
        Discount ``γ`` in ``[0, 1]`` of the TD targets.
    prior_mean, prior_std : float, default 0.0, 1.0
        Prior mean and standard deviation (> 0) of every ``Q(s, a)``.
    noise_std : float, default 0.5
        ``σ > 0``, the noise of one TD target.

    Attributes
    ----------
    means, counts : numpy.ndarray
        float64 ``(S, A)``: posterior means and visits.
    """

    def __init__(
        self,
        num_states: int,
        num_actions: int,
        *,
        encoder: Callable[..., Any] | None = None,
        gamma: float = 0.99,
        prior_mean: float = 0.0,
        prior_std: float = 1.0,
        noise_std: float = 0.5,
    ) -> None:
        self.num_states = check_positive_int(num_states, "num_states")
        self.num_actions = check_positive_int(num_actions, "num_actions")
        self.gamma = check_probability(gamma, "gamma")
        self.prior_mean: float = check_finite_float(prior_mean, "prior_mean")
        self.prior_std: float = check_positive_float(prior_std, "prior_std")
        self.noise_std: float = check_positive_float(noise_std, "noise_std")
        self.encoder: Callable[..., Any] = (
            encoder if encoder is not None else DiscreteEncoder(self.num_states)
        )
        self.means: np.ndarray = np.full((self.num_states, self.num_actions), self.prior_mean)
        self.counts: np.ndarray = np.zeros((self.num_states, self.num_actions))

    @classmethod
    def from_space(
        cls, observation_space: Any, num_actions: int, **kwargs: Any
    ) -> TabularValuePosterior:
        """The posterior for a ``Discrete`` or one-hot ``Box`` (bounds ``[0, 1]``) observation
        space (``ValueError`` otherwise); ``kwargs`` go to the constructor."""
        encoder = required_encoder(
            observation_space,
            "the default tabular posterior needs a Discrete or one-hot Box observation space, "
            "got {space}; pass posterior= explicitly",
        )
        return cls(encoder.num_states, num_actions, encoder=encoder, **kwargs)

    def std(self, observations: np.ndarray) -> np.ndarray:
        """Posterior standard deviations, float64 ``(n, A)``."""
        s = self.encoder(observations, "observations")
        return self._std(self.counts[s])

    def _std(self, counts: np.ndarray) -> np.ndarray:
        # The prior's precision plus 1/σ² per absorbed TD target.
        precision = 1.0 / self.prior_std**2 + counts / self.noise_std**2
        return np.asarray(1.0 / np.sqrt(precision))

    def mean(self, observations: np.ndarray) -> np.ndarray:
        """Posterior means, float64 ``(n, A)``."""
        return self.means[self.encoder(observations, "observations")]

    def expected_improvement(self, observations: np.ndarray, baseline: np.ndarray) -> np.ndarray:
        """Gaussian EI ``E[(Q(s_i, a) − baseline_i)^+]``, float64 ``(n, A)``."""
        s = self.encoder(observations, "observations")
        base = check_baseline(baseline, s.shape[0])
        ei = gaussian_ei_unchecked(self.means[s], self._std(self.counts[s]), base[:, None])
        return np.asarray(ei, dtype=np.float64)

    def update(
        self,
        observations: np.ndarray,
        actions: np.ndarray,
        rewards: np.ndarray,
        next_observations: np.ndarray,
        terminated: np.ndarray,
        truncated: np.ndarray | None = None,
    ) -> None:
        """Absorb ``n`` transitions in row order, all checked first (``ValueError`` naming the
        argument); ``next_observations`` of terminated rows may be blank (all zeros) and
        ``truncated`` is ignored (a truncated transition bootstraps like any other)."""
        s = self.encoder(observations, "observations")
        n = s.shape[0]
        term = np.asarray(terminated, dtype=bool).reshape(n)
        s_next = self.encoder(next_observations, "next_observations", allow_blank=term)
        act = check_action_batch(actions, n, self.num_actions)
        rew = check_finite_array(rewards, "rewards").reshape(n)
        w = 1.0 / self.noise_std**2
        p0 = 1.0 / self.prior_std**2
        for i in range(n):
            si, ai = int(s[i]), int(act[i])
            target = rew[i]
            if not term[i]:
                target += self.gamma * self.means[s_next[i]].max()
            self.counts[si, ai] += 1.0
            # Conjugate Normal update: the mean moves by the target's share of the precision.
            precision = p0 + self.counts[si, ai] * w
            self.means[si, ai] += (target - self.means[si, ai]) * (w / precision)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(num_states={self.num_states}, num_actions={self.num_actions}"
            f", gamma={self.gamma}, prior_mean={self.prior_mean}, prior_std={self.prior_std}, "
            f"noise_std={self.noise_std})"
        )


def default_posterior(
    observation_space: Any, num_actions: int, *, seed: int | None = None, **kwargs: Any
) -> Any:
    """The default posterior of the wrapper and of ``DelightDQN`` for an observation space: a
    :class:`TabularValuePosterior` for Discrete or one-hot ``Box`` spaces (``seed`` unused),
    an :class:`~delight_gym.posteriors.ensemble.EnsembleQPosterior` seeded with ``seed`` for
    other ``Box`` spaces, ``ValueError`` otherwise; ``kwargs`` go to the chosen posterior."""
    if encoder_for_space(observation_space) is not None:
        return TabularValuePosterior.from_space(observation_space, num_actions, **kwargs)
    from gymnasium import spaces

    if not isinstance(observation_space, spaces.Box):
        raise ValueError(
            "the default posterior needs a Discrete or Box observation space, got "
            f"{observation_space!r}; pass posterior= explicitly"
        )
    from delight_gym.posteriors.ensemble import EnsembleQPosterior

    return EnsembleQPosterior(observation_space, num_actions, seed=seed, **kwargs)
