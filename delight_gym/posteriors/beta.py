"""Beta posteriors of a batch of Bernoulli bandits (numpy) and their value-posterior adapter;
re-exports the Beta EI of :mod:`~delight_gym.posteriors.beta_ei`."""

from __future__ import annotations

from typing import Any

import numpy as np

from delight_gym._checks import (
    check_action_batch,
    check_instance,
    check_positive_float,
    check_positive_int,
    check_shape,
    check_unit_interval_array,
)
from delight_gym.de.posterior import check_baseline
from delight_gym.posteriors.adapters import BanditAdapter
from delight_gym.posteriors.beta_ei import (
    R_SWITCH,
    Z_PRESCREEN,
    beta_ei_flat,
    beta_ei_upper_bound,
    beta_expected_improvement,
    prior_expected_improvement,
)

__all__ = [
    "R_SWITCH",
    "Z_PRESCREEN",
    "BetaBernoulliAdapter",
    "BetaBernoulliPosterior",
    "beta_ei_flat",
    "beta_ei_upper_bound",
    "beta_expected_improvement",
    "prior_expected_improvement",
]


class BetaBernoulliPosterior:
    """Independent ``Beta(alpha, beta)`` posteriors of a batch of K-armed Bernoulli bandits; a
    reward ``r`` in ``[0, 1]`` counts as ``r`` successes and ``1 - r`` failures.

    Parameters
    ----------
    batch_size, num_arms : int
        Independent bandits ``B`` and arms ``K``.
    prior_alpha, prior_beta : float, default 1.0
        Every arm's prior, ``> 0``.

    Attributes
    ----------
    alpha, beta : numpy.ndarray
        float64 ``(B, K)``: the priors plus each arm's summed ``r`` and ``1 - r``.

    Examples
    --------
    >>> post = BetaBernoulliPosterior(2, 3)
    >>> post.update(np.array([0, 2]), np.array([1.0, 0.0]))
    >>> post.mean()
    array([[0.66666667, 0.5       , 0.5       ],
           [0.5       , 0.5       , 0.33333333]])
    """

    def __init__(
        self, batch_size: int, num_arms: int, *, prior_alpha: float = 1.0, prior_beta: float = 1.0
    ) -> None:
        self.batch_size = check_positive_int(batch_size, "batch_size")
        self.num_arms = check_positive_int(num_arms, "num_arms")
        self.prior_alpha = check_positive_float(prior_alpha, "prior_alpha")
        self.prior_beta = check_positive_float(prior_beta, "prior_beta")
        self._rows = np.arange(self.batch_size)
        self.alpha = np.empty((self.batch_size, self.num_arms), dtype=np.float64)
        self.beta = np.empty((self.batch_size, self.num_arms), dtype=np.float64)
        self.reset()

    def reset(self) -> None:
        """Return every arm to the prior ``Beta(prior_alpha, prior_beta)`` (in place)."""
        self.alpha.fill(self.prior_alpha)
        self.beta.fill(self.prior_beta)

    def update(self, actions: Any, rewards: Any) -> None:
        """Conjugate update with integer ``actions`` ``(B,)`` in ``[0, K)`` and ``rewards``
        ``(B,)`` in ``[0, 1]`` (else ``TypeError``/``ValueError`` naming the argument)."""
        act = np.asarray(actions)
        if act.dtype == np.bool_ or not np.issubdtype(act.dtype, np.integer):
            raise TypeError(f"actions must be an integer array, got dtype {act.dtype}")
        act = check_action_batch(act, self.batch_size, self.num_arms)
        rew = check_shape(
            check_unit_interval_array(rewards, "rewards"), (self.batch_size,), "rewards"
        )
        # One arm per row, so the (row, action) pairs are distinct and += is exact.
        self.alpha[self._rows, act] += rew
        self.beta[self._rows, act] += 1.0 - rew

    def mean(self) -> np.ndarray:
        """Posterior means ``alpha / (alpha + beta)``, shape ``(B, K)``."""
        return self.alpha / (self.alpha + self.beta)

    def variance(self) -> np.ndarray:
        """Posterior variances, ``(B, K)``."""
        total = self.alpha + self.beta
        return self.alpha * self.beta / (total * total * (total + 1.0))

    def sample(self, rng: np.random.Generator) -> np.ndarray:
        """One posterior draw per arm from a ``numpy.random.Generator``, float64 ``(B, K)``."""
        check_instance(rng, np.random.Generator, "rng", "a numpy.random.Generator")
        return rng.beta(self.alpha, self.beta)

    def expected_improvement(self, baseline: Any) -> np.ndarray:
        """``E[(X_{ik} - baseline_i)^+]`` for a finite ``(B,)`` baseline, float64 ``(B, K)``."""
        base = check_baseline(baseline, self.batch_size)
        return beta_expected_improvement(self.alpha, self.beta, base[:, None])

    def as_value_posterior(
        self, *, num_actions: int | None = None, observation_space: Any = None
    ) -> Any:
        """A :class:`BetaBernoulliAdapter` (the arguments are unused)."""
        return BetaBernoulliAdapter(self)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(batch_size={self.batch_size}, num_arms={self.num_arms}, "
            f"prior_alpha={self.prior_alpha}, prior_beta={self.prior_beta})"
        )


class BetaBernoulliAdapter(BanditAdapter):
    """A :class:`~delight_gym.posteriors.BetaBernoulliPosterior` as a value posterior: observations
    are ignored, each transition is a pull (reward in ``[0, 1]``); ``batch_size`` 1 shares one
    bandit across rows, else row ``i`` is bandit ``i``. EI is the exact Beta EI."""

    def __init__(self, posterior: Any) -> None:
        super().__init__(posterior, BetaBernoulliPosterior, getattr(posterior, "num_arms", None))

    def mean(self, observations: Any) -> np.ndarray:
        """Beta means of each row's bandit, ``(n, K)``."""
        return np.asarray(self.posterior.mean()[self.row_map(len(observations))])

    def expected_improvement(self, observations: Any, baseline: np.ndarray) -> np.ndarray:
        """Exact Beta EI over ``baseline`` (``(n,)``), ``(n, K)``."""
        rows = self.row_map(len(observations))
        base = check_baseline(baseline, rows.shape[0])
        return beta_expected_improvement(
            self.posterior.alpha[rows], self.posterior.beta[rows], base[:, None]
        )

    def absorb(self, observations: Any, actions: np.ndarray, rewards: np.ndarray) -> None:
        self.absorb_rows(self.posterior.update, actions, rewards)
