"""Adapters: the package's posteriors that do not speak
:class:`~delight_gym.de.posterior.ValuePosterior` themselves, as value posteriors.

Each adapted posterior names its adapter through its ``as_value_posterior`` method, which
:func:`~delight_gym.de.posterior.adapt_posterior` calls (so the wrapper takes the posteriors
as they are): :class:`BetaBernoulliAdapter` (Bernoulli bandits, exact Beta EI; numpy),
:class:`LinearGaussianAdapter` (linear bandits, exact Gaussian EI; torch) and
:class:`TabularMDPAdapter` (finite-horizon tabular MDPs, the paper's mean-surrogate EI;
torch). They share :class:`PosteriorAdapter` (the type check, ``num_actions``, the row map of
batched posteriors, host-to-device conversion). This module imports torch only inside the
torch adapters' methods.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from delight_gym._checks import check_action_batch, check_finite_array, check_positive_int
from delight_gym.de.posterior import (
    PosteriorValues,
    check_baseline,
    host_baseline,
)
from delight_gym.posteriors.beta import BetaBernoulliPosterior, beta_expected_improvement
from delight_gym.posteriors.encoders import DiscreteEncoder, OneHotEncoder, encoder_for_space
from delight_gym.posteriors.gaussian import gaussian_expected_improvement

__all__ = [
    "BanditAdapter",
    "BetaBernoulliAdapter",
    "LinearGaussianAdapter",
    "PosteriorAdapter",
    "TabularMDPAdapter",
    "split_values",
    "to_numpy",
]


def to_numpy(tensor: Any) -> np.ndarray:
    """A tensor (on any device) as a float64 numpy array."""
    return np.asarray(tensor.detach().cpu().numpy(), dtype=np.float64)


def split_values(mean: Any, baseline: Any, expected_improvement: Any) -> PosteriorValues:
    """:class:`PosteriorValues` from device tensors ``(n, A)``, ``(n,)``, ``(n, A)``, copied to
    the host in one transfer."""
    torch = _torch()
    a = mean.shape[-1]
    both = to_numpy(torch.cat([mean, expected_improvement, baseline[:, None]], dim=-1))
    return PosteriorValues(both[:, :a], both[:, 2 * a], both[:, a : 2 * a])


def _torch() -> Any:
    import torch

    return torch


class PosteriorAdapter:
    """Shared base of the adapters: the wrapped posterior, its type check and ``num_actions``.

    Parameters
    ----------
    posterior : object
        The posterior to adapt; must be an instance of ``expected``.
    expected : type
        Its class (``TypeError`` otherwise, naming it).
    num_actions : int
        ``A`` (read from ``posterior`` by the subclasses that know where it is; ``None`` only
        for a posterior of the wrong type, which raises first).

    Attributes
    ----------
    posterior : object
    num_actions : int
    """

    def __init__(self, posterior: Any, expected: type, num_actions: int | None) -> None:
        if not isinstance(posterior, expected):
            raise TypeError(
                f"posterior must be a {expected.__name__}, got {type(posterior).__name__}"
            )
        self.posterior: Any = posterior
        self.num_actions: int = check_positive_int(num_actions, "num_actions")

    def row_map(self, n: int) -> np.ndarray:
        """Which posterior row serves each of ``n`` observation rows, int64 ``(n,)``: all row 0
        when the posterior has one row (one bandit, many observations), row ``i`` when it has
        ``n``; ``ValueError`` otherwise."""
        batch_size = self.posterior.batch_size
        if batch_size == 1:
            return np.zeros(n, dtype=np.int64)
        if batch_size == n:
            return np.arange(n)
        raise ValueError(
            f"posterior has batch_size {batch_size}: it serves either every row (batch_size 1) "
            f"or row i of a batch of exactly {batch_size} observations, got {n}"
        )

    def absorb_rows(self, update: Callable[..., None], *rows: Any) -> None:
        """``update(*rows)`` at once when the posterior has a row per observation, else one
        observation row at a time, in order (rows sharing the posterior's one row)."""
        n = len(rows[0])
        self.row_map(n)
        if self.posterior.batch_size == n:
            update(*rows)
        else:
            for i in range(n):
                update(*(x[i : i + 1] for x in rows))

    def posterior_tensor(self, value: Any, shape: Any, name: str) -> Any:
        """``value`` as a tensor in the posterior's dtype and device, of ``shape``."""
        torch = _torch()
        out = torch.as_tensor(
            np.asarray(value), dtype=self.posterior.dtype, device=self.posterior.device
        )
        if tuple(out.shape) != tuple(shape):
            raise ValueError(f"{name} must have shape {tuple(shape)}, got {tuple(out.shape)}")
        return out

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.posterior!r}, num_actions={self.num_actions})"


# ---------------------------------------------------------------------------------------------
# Bandit posteriors
# ---------------------------------------------------------------------------------------------


class BanditAdapter(PosteriorAdapter):
    """Base of the bandit adapters: one-step problems, where a transition is one pull.

    :meth:`update` checks the batch and hands ``(observations, actions, rewards)`` to the
    subclass's ``absorb``; ``next_observations``, ``terminated`` and ``truncated`` are ignored
    (nothing bootstraps).
    """

    def absorb(self, observations: Any, actions: np.ndarray, rewards: np.ndarray) -> None:
        """Absorb ``n`` pulls (``actions`` int64 ``(n,)``, ``rewards`` float64 ``(n,)``)."""
        raise NotImplementedError

    def update(
        self,
        observations: Any,
        actions: np.ndarray,
        rewards: np.ndarray,
        next_observations: Any,
        terminated: np.ndarray,
        truncated: np.ndarray | None = None,
    ) -> None:
        """Absorb ``n`` pulls; ``ValueError`` on a batch the posterior's rows cannot serve, or
        on actions or rewards that are not one per row (rewards must be finite)."""
        n = len(observations)
        self.row_map(n)
        act = np.asarray(actions)
        if act.size != n or not np.issubdtype(act.dtype, np.integer):
            raise ValueError(f"actions must be {n} integers, got {act.dtype} of shape {act.shape}")
        rew = check_finite_array(rewards, "rewards")
        if rew.size != n:
            raise ValueError(f"rewards must hold {n} values, got shape {rew.shape}")
        self.absorb(observations, act.reshape(n).astype(np.int64), rew.reshape(n))


class BetaBernoulliAdapter(BanditAdapter):
    """A :class:`~delight_gym.posteriors.BetaBernoulliPosterior` as a value posterior.

    For bandits (one-step episodes): observations are ignored, each transition is a pull whose
    reward (in ``[0, 1]``) updates the arm's Beta posterior, ``next_observations``,
    ``terminated`` and ``truncated`` are ignored (no bootstrapping). With ``batch_size == 1``
    every observation row shares the one bandit; with ``batch_size == n`` row ``i`` is bandit
    ``i`` (a vector env of independent bandits). EI is the posterior's exact Beta EI.
    """

    def __init__(self, posterior: Any) -> None:
        super().__init__(posterior, BetaBernoulliPosterior, getattr(posterior, "num_arms", None))

    def mean(self, observations: Any) -> np.ndarray:
        """Beta means of the row's bandit, ``(n, K)``."""
        return np.asarray(self.posterior.mean()[self.row_map(len(observations))])

    def expected_improvement(self, observations: Any, baseline: np.ndarray) -> np.ndarray:
        """Exact Beta EI over ``baseline`` (``(n,)``), ``(n, K)``."""
        rows = self.row_map(len(observations))
        base = check_baseline(baseline, rows.shape[0])
        return beta_expected_improvement(
            self.posterior.alpha[rows], self.posterior.beta[rows], base[:, None]
        )

    def absorb(self, observations: Any, actions: np.ndarray, rewards: np.ndarray) -> None:
        """One Beta update per row (rows applied in order when they share a bandit)."""
        self.absorb_rows(self.posterior.update, actions, rewards)


class LinearGaussianAdapter(BanditAdapter):
    """A :class:`~delight_gym.posteriors.LinearGaussianPosterior` as a value posterior.

    ``f(s, a) = φ(s, a)ᵀθ`` with user features ``φ``: ``features(observations)`` returns
    ``(n, A, D)``; by default the observation itself is the ``(A, D)`` feature matrix (as in
    ``LinearBandit-v0``). Like :class:`BetaBernoulliAdapter` it is for one-step problems: a
    transition updates ``θ`` with ``(φ(s, a), r)`` and does not bootstrap. Row mapping as for
    :class:`BetaBernoulliAdapter`. EI is
    :func:`~delight_gym.posteriors.gaussian.gaussian_expected_improvement` of the predictive
    mean and standard deviation; :meth:`evaluate` computes means, baseline and EI on the
    posterior's device and copies them to the host once.

    Parameters
    ----------
    posterior : LinearGaussianPosterior
    num_actions : int
        ``A``.
    features : callable, optional
        ``observations (n, ...) -> (n, A, D)`` array or tensor.
    """

    def __init__(
        self,
        posterior: Any,
        num_actions: int,
        features: Callable[[np.ndarray], Any] | None = None,
    ) -> None:
        from delight_gym.posteriors.linear import LinearGaussianPosterior

        super().__init__(posterior, LinearGaussianPosterior, num_actions)
        self.features = features

    def _phi(self, observations: Any) -> Any:
        torch = _torch()
        raw = observations if self.features is None else self.features(observations)
        phi = torch.as_tensor(
            np.asarray(raw) if not isinstance(raw, torch.Tensor) else raw,
            dtype=self.posterior.dtype,
            device=self.posterior.device,
        )
        n = len(observations)
        expected = (n, self.num_actions, self.posterior.dim)
        if tuple(phi.shape) != expected:
            raise ValueError(f"features must have shape {expected}, got {tuple(phi.shape)}")
        return phi

    def _predictive(self, observations: Any) -> tuple[Any, Any]:
        """Predictive mean and standard deviation, ``(n, A)`` tensors on the device."""
        n = len(observations)
        self.row_map(n)
        phi = self._phi(observations)
        if self.posterior.batch_size == 1 and n > 1:
            mu, sd = self.posterior.predictive(phi.reshape(1, -1, self.posterior.dim))
            return mu.reshape(n, -1), sd.reshape(n, -1)
        return self.posterior.predictive(phi)

    def mean(self, observations: Any) -> np.ndarray:
        """Predictive means ``φ(s, a)ᵀμ``, ``(n, A)``."""
        return to_numpy(self._predictive(observations)[0])

    def expected_improvement(self, observations: Any, baseline: np.ndarray) -> np.ndarray:
        """Gaussian EI of ``φ(s, a)ᵀθ`` over ``baseline`` (``(n,)``), ``(n, A)``."""
        mu, sd = self._predictive(observations)
        base = check_baseline(baseline, mu.shape[0])
        ei = gaussian_expected_improvement(
            to_numpy(mu), to_numpy(sd), base[:, None], validate=False
        )
        return np.asarray(ei, dtype=np.float64)

    def evaluate(
        self, observations: Any, host_probs: np.ndarray, baseline: str = "host"
    ) -> PosteriorValues:
        """Means, baseline and Gaussian EI in one call, on the posterior's device, copied to the
        host once (see :func:`~delight_gym.de.posterior.evaluate_posterior`)."""
        mu, sd = self._predictive(observations)
        probs = self.posterior_tensor(host_probs, mu.shape, "host_probs")
        base = host_baseline(mu, probs, baseline)
        ei = gaussian_expected_improvement(mu, sd, base[:, None], validate=False)
        return split_values(mu, base, ei)

    def absorb(self, observations: Any, actions: np.ndarray, rewards: np.ndarray) -> None:
        """Regress each reward on the played action's features (rows in order when shared)."""
        phi = self._phi(observations)
        chosen = phi[np.arange(len(observations)), actions]  # (n, D)
        self.absorb_rows(self.posterior.update, chosen, rewards)


# ---------------------------------------------------------------------------------------------
# Tabular MDP posterior
# ---------------------------------------------------------------------------------------------


class TabularMDPAdapter(PosteriorAdapter):
    """A :class:`~delight_gym.posteriors.TabularMDPPosterior` as a
    :class:`~delight_gym.de.posterior.ValuePosterior`, for finite-horizon MDPs (DeepSea).

    It keeps each row's step ``h`` in its episode (:attr:`steps`) and answers at that step:
    :meth:`mean` is ``Q_h(s, ·)`` of the posterior-mean plan (replanned after each update),
    :meth:`expected_improvement` the paper's mean surrogate ``(Q_h(s, a) − v_s)^+`` (§3.3, not
    exact Bayesian EI), and :meth:`update` records one transition per row, its step back to 0
    where it ``terminated`` or was ``truncated``. Every call passes exactly ``B`` rows (row
    ``i``: environment and posterior seed ``i``); an episode longer than ``H`` is a
    ``ValueError``. Episode ends, rows and ``lazy_gate``: ``docs/posteriors.md``.

    Parameters
    ----------
    posterior : TabularMDPPosterior
        ``B`` MDPs with ``S`` states, ``A`` actions and horizon ``H``; its reward model must
        accept the environment's rewards (DeepSea: ``reward_range=(-move_cost, 1)``).
    observation_space : gymnasium.spaces.Discrete or gymnasium.spaces.Box, optional
        ``Discrete(S, start)``: index ``obs − start``; one-hot ``Box`` (``S`` entries in
        ``[0, 1]``): the index of its 1. Default: inferred from each batch (integers ``(n,)``
        are indices, rows of ``S`` entries one-hot).

    Attributes
    ----------
    num_actions : int
        ``A``.
    steps : numpy.ndarray
        int64 ``(B,)``: each row's step ``h`` (``H``: over by the horizon; see
        :meth:`reset_steps`).
    """

    def __init__(self, posterior: Any, observation_space: Any = None) -> None:
        from delight_gym.posteriors.tabular import TabularMDPPosterior

        super().__init__(posterior, TabularMDPPosterior, getattr(posterior, "num_actions", None))
        self.encoder: DiscreteEncoder | OneHotEncoder | None = None
        if observation_space is not None:
            self.encoder = encoder_for_space(observation_space)
            if self.encoder is None:
                raise ValueError(
                    "observation_space must be Discrete or a one-hot Box (bounds [0, 1]), got "
                    f"{observation_space!r}"
                )
            if self.encoder.num_states != posterior.num_states:
                raise ValueError(
                    f"observation_space encodes {self.encoder.num_states} states but the "
                    f"posterior has num_states={posterior.num_states}"
                )
        self.steps: np.ndarray = np.zeros(posterior.batch_size, dtype=np.int64)
        self._plan: Any = None  # cached plan_mean(first_step=self._plan_first), torch
        self._plan_first = 0

    # -- validation ----------------------------------------------------------------------------

    def _rows(self, observations: Any, name: str) -> np.ndarray:
        arr = np.asarray(observations)
        b = self.posterior.batch_size
        if arr.ndim == 0 or arr.shape[0] != b:
            got = "a scalar" if arr.ndim == 0 else f"{arr.shape[0]}"
            raise ValueError(
                f"{name} must hold one observation per posterior row (batch_size {b}: row i "
                f"is environment i), got {got}; with the wrapper's lazy_gate=True use "
                "batch_size 1"
            )
        return arr

    def _states(self, observations: Any, name: str, allow_blank: Any = None) -> np.ndarray:
        """State indices ``(B,)`` of a batch (``-1`` for blank rows where allowed)."""
        arr = self._rows(observations, name)
        encoder = self.encoder
        if encoder is None:
            n_states = self.posterior.num_states
            if arr.ndim == 1 and np.issubdtype(arr.dtype, np.integer):
                encoder = DiscreteEncoder(n_states)
            elif int(np.prod(arr.shape[1:])) == n_states:
                encoder = OneHotEncoder(arr.shape[1:])
            else:
                raise ValueError(
                    f"{name} must encode the posterior's num_states={n_states} states: integer "
                    f"indices of shape (n,) or one-hot rows of {n_states} entries, got dtype "
                    f"{arr.dtype} and shape {arr.shape}"
                )
        return np.asarray(encoder(arr, name, allow_blank), dtype=np.int64)

    def _check_steps(self) -> None:
        over = self.steps >= self.posterior.horizon
        if np.any(over):
            i = int(np.flatnonzero(over)[0])
            raise ValueError(
                f"observations: row {i} has already taken horizon={self.posterior.horizon} "
                "steps without terminating; episodes must last at most the posterior's horizon "
                "(after a truncation, call reset_steps)"
            )

    # -- protocol -------------------------------------------------------------------------------

    def _q(self, states: np.ndarray) -> Any:
        """``Q_{h_i}(s_i, ·)`` of the posterior-mean plan for every row, a ``(B, A)`` tensor on
        the posterior's device."""
        self._check_steps()
        first = int(self.steps.min())
        if self._plan is None or self._plan_first > first:
            self._plan = self.posterior.plan_mean(first_step=first)
            self._plan_first = first
        import torch

        def index(x: np.ndarray) -> Any:
            return torch.as_tensor(x, dtype=torch.int64, device=self._plan.device)

        rows = np.arange(self.posterior.batch_size)
        return self._plan[index(self.steps - self._plan_first), index(rows), index(states)]

    def mean(self, observations: np.ndarray) -> np.ndarray:
        """Posterior-mean ``Q_h(s, ·)`` at each row's current step, float64 ``(B, A)``."""
        return to_numpy(self._q(self._states(observations, "observations")))

    def expected_improvement(self, observations: np.ndarray, baseline: np.ndarray) -> np.ndarray:
        """The mean surrogate ``(Q_h(s_i, a) − baseline_i)^+`` (paper §3.3), float64 ``(B, A)``."""
        means = self.mean(observations)
        base = check_baseline(baseline, means.shape[0])
        return np.asarray(np.maximum(means - base[:, None], 0.0))

    def evaluate(
        self, observations: np.ndarray, host_probs: np.ndarray, baseline: str = "host"
    ) -> PosteriorValues:
        """Means, baseline and the mean-surrogate EI in one call, computed on the posterior's
        device and copied to the host once (see
        :func:`~delight_gym.de.posterior.evaluate_posterior`)."""
        q = self._q(self._states(observations, "observations"))
        probs = self.posterior_tensor(host_probs, q.shape, "host_probs")
        base = host_baseline(q, probs, baseline)
        ei = (q - base[:, None]).clamp(min=0.0)
        return split_values(q, base, ei)

    def update(
        self,
        observations: np.ndarray,
        actions: np.ndarray,
        rewards: np.ndarray,
        next_observations: np.ndarray,
        terminated: np.ndarray,
        truncated: np.ndarray | None = None,
    ) -> None:
        """Record one transition per row at its current step, then advance the steps.

        ``next_observations`` of terminated rows and of rows at the last step ``H − 1`` are
        not recorded and may be blank (all zeros). A row's step goes back to 0 where it
        terminated or was truncated; after ``H − 1`` without either it becomes ``H`` (see the
        class docstring). Everything is checked before anything is recorded.

        Raises
        ------
        ValueError
            On a batch of the wrong size, observations that are not states, actions outside
            ``[0, A)``, rewards the posterior refuses, or a row whose episode already took
            ``H`` steps (episodes longer than the posterior's horizon).
        """
        import torch

        s = self._states(observations, "observations")
        b = self.posterior.batch_size
        self._check_steps()
        term = self._flags(terminated, "terminated")
        trunc = (
            np.zeros(b, dtype=bool) if truncated is None else self._flags(truncated, "truncated")
        )
        no_successor = term | (self.steps == self.posterior.horizon - 1)
        nxt = self._states(next_observations, "next_observations", allow_blank=no_successor)
        nxt = np.where(no_successor, -1, nxt)
        act = check_action_batch(actions, b, self.num_actions)
        rew = check_finite_array(rewards, "rewards", shape=(b,))
        device = self.posterior.device
        self.posterior.update(
            torch.as_tensor(s, device=device),
            torch.as_tensor(act, device=device),
            torch.as_tensor(rew, dtype=self.posterior.dtype, device=device),
            torch.as_tensor(nxt, device=device),
        )
        self._plan = None
        self.steps = np.where(term | trunc, 0, self.steps + 1)

    def _flags(self, value: Any, name: str) -> np.ndarray:
        arr = np.asarray(value)
        b = self.posterior.batch_size
        if arr.size != b or arr.ndim > 1:
            raise ValueError(f"{name} must hold one flag per row ({b}), got shape {arr.shape}")
        return arr.reshape(b).astype(bool)

    def reset_steps(self, rows: Any = None) -> None:
        """Start a new episode (step 0) on the given rows (default: all), e.g. after a
        truncation that the wrapper did not pass on. The posterior is unchanged."""
        idx = np.arange(self.posterior.batch_size) if rows is None else np.asarray(rows)
        self.steps[idx] = 0

    def __repr__(self) -> str:
        p = self.posterior
        return (
            f"{type(self).__name__}(batch_size={p.batch_size}, num_states={p.num_states}, "
            f"num_actions={p.num_actions}, horizon={p.horizon})"
        )
