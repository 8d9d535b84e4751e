"""The posterior protocol of :class:`~delight_gym.wrappers.DelightExplorationWrapper`, its default
tabular value posterior, and adapters for the posteriors of :mod:`delight_gym.posteriors` (Beta
and linear-Gaussian bandits, :class:`TabularMDPAdapter` for the tabular MDP posterior).

A posterior used by the wrapper answers three questions about a batch of ``n`` observations
with ``A`` actions each (:class:`ValuePosterior`):

* ``mean(observations) -> (n, A)``: the posterior mean value ``m(s, a)`` of every action;
* ``expected_improvement(observations, baseline) -> (n, A)``: ``E[(f(s, a) − v_s)^+]`` over the
  baseline ``v_s`` of each row (shape ``(n,)``);
* ``update(observations, actions, rewards, next_observations, terminated)``: absorb ``n``
  transitions.

and carries ``num_actions``. The wrapper computes the baseline from :meth:`mean` and the host's
probabilities (see :mod:`delight_gym.wrappers.exploration`) and calls the one DE rule with the
posterior's EI. No EI is implemented here: Gaussian EI is
:func:`delight_gym.posteriors.linear.gaussian_expected_improvement` and Beta EI is
:meth:`delight_gym.posteriors.beta.BetaBernoulliPosterior.expected_improvement`.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import numpy as np
from gymnasium import spaces

from delight_gym._checks import (
    check_finite_array,
    check_positive_float,
    check_positive_int,
    check_probability,
)

__all__ = [
    "BetaBernoulliAdapter",
    "LinearGaussianAdapter",
    "TabularMDPAdapter",
    "TabularValuePosterior",
    "ValuePosterior",
    "adapt_posterior",
    "default_posterior",
]


def _check_baseline(baseline: Any, n: int) -> np.ndarray:
    """The EI baseline of ``n`` observation rows: finite, shape ``(n,)``."""
    base = check_finite_array(baseline, "baseline")
    if base.shape != (n,):
        raise ValueError(f"baseline must have shape ({n},), got {base.shape}")
    return base


@runtime_checkable
class ValuePosterior(Protocol):
    """What :class:`~delight_gym.wrappers.DelightExplorationWrapper` needs from a posterior.

    Attributes
    ----------
    num_actions : int
        ``A``; must equal the host's number of actions.

    Every method takes a batch of ``n`` observations with a leading batch axis (the
    observation space's shape after it; a Discrete space gives shape ``(n,)``).
    """

    num_actions: int

    def mean(self, observations: np.ndarray) -> np.ndarray:
        """Posterior mean value of every action, float64 ``(n, A)``."""
        ...

    def expected_improvement(self, observations: np.ndarray, baseline: np.ndarray) -> np.ndarray:
        """``E[(f(s_i, a) − baseline_i)^+]``, float64 ``(n, A)``, finite and ``>= 0``."""
        ...

    def update(
        self,
        observations: np.ndarray,
        actions: np.ndarray,
        rewards: np.ndarray,
        next_observations: np.ndarray,
        terminated: np.ndarray,
    ) -> None:
        """Absorb ``n`` transitions (``actions`` int ``(n,)``, ``rewards`` float ``(n,)``,
        ``terminated`` bool ``(n,)``)."""
        ...


def _gaussian_ei(mean: np.ndarray, std: np.ndarray, baseline: np.ndarray) -> np.ndarray:
    from delight_gym.posteriors.linear import gaussian_expected_improvement

    return np.asarray(
        gaussian_expected_improvement(mean, std, baseline[:, None], validate=False),
        dtype=np.float64,
    )


# ---------------------------------------------------------------------------------------------
# State encoders: observation batch -> state indices
# ---------------------------------------------------------------------------------------------


class _DiscreteEncoder:
    """Observations of a ``Discrete(n, start)`` space -> indices ``obs − start``."""

    def __init__(self, num_states: int, start: int = 0) -> None:
        self.num_states = num_states
        self.start = start

    def __call__(self, obs: np.ndarray, name: str, allow_blank: np.ndarray | None = None) -> Any:
        arr = np.asarray(obs)
        if arr.ndim != 1 or not np.issubdtype(arr.dtype, np.integer):
            raise ValueError(
                f"{name} must be a batch of Discrete observations (integers of shape (n,)), "
                f"got dtype {arr.dtype} and shape {arr.shape}"
            )
        idx = arr.astype(np.int64) - self.start
        if np.any(idx < 0) or np.any(idx >= self.num_states):
            raise ValueError(f"{name} must lie in [{self.start}, {self.start + self.num_states})")
        return idx


class _OneHotEncoder:
    """One-hot observations of shape ``obs_shape`` -> the flat index of their single 1.

    ``allow_blank`` marks rows that may be all zeros (e.g. DeepSea's observation after the last
    step); their index is returned as ``-1``.
    """

    def __init__(self, obs_shape: tuple[int, ...]) -> None:
        self.obs_shape = tuple(obs_shape)
        self.num_states = int(np.prod(self.obs_shape))

    def __call__(self, obs: np.ndarray, name: str, allow_blank: np.ndarray | None = None) -> Any:
        arr = np.asarray(obs)
        if arr.shape[1:] != self.obs_shape:
            raise ValueError(
                f"{name} must have shape (n, {', '.join(map(str, self.obs_shape))}), "
                f"got {arr.shape}"
            )
        flat = arr.reshape(arr.shape[0], self.num_states)
        nonzero = np.count_nonzero(flat, axis=1)
        idx = np.argmax(flat != 0, axis=1)
        valid = (nonzero == 1) & (flat[np.arange(flat.shape[0]), idx] == 1)
        if allow_blank is not None:
            valid |= (nonzero == 0) & allow_blank
        if not np.all(valid):
            raise ValueError(
                f"{name} must be one-hot (one entry 1, the rest 0) for the tabular posterior; "
                f"row {int(np.flatnonzero(~valid)[0])} is not"
            )
        return np.where(nonzero == 1, idx, -1)


def _encoder_for(space: Any) -> _DiscreteEncoder | _OneHotEncoder | None:
    """The state encoder of a Discrete or one-hot-shaped Box space, or ``None``."""
    if isinstance(space, spaces.Discrete):
        return _DiscreteEncoder(int(space.n), int(space.start))
    if (
        isinstance(space, spaces.Box)
        and len(space.shape) >= 1
        and np.all(space.low == 0)
        and np.all(space.high == 1)
    ):
        return _OneHotEncoder(space.shape)
    return None


# ---------------------------------------------------------------------------------------------
# The default posterior
# ---------------------------------------------------------------------------------------------


class TabularValuePosterior:
    """Independent Gaussian posteriors over ``Q(s, a)`` on a finite state set, fed TD targets.

    The default posterior of :class:`~delight_gym.wrappers.DelightExplorationWrapper` for
    Discrete or one-hot observations (DeepSea's). Each ``(s, a)`` has
    ``Q(s, a) ~ N(m, sd²)``, starting at the prior ``N(prior_mean, prior_std²)``. A transition
    ``(s, a, r, s', terminated)`` is treated as one noisy observation of ``Q(s, a)``,

    .. math::

        y = r + γ\\,(1 − \\text{terminated})\\,\\max_b m(s', b), \\qquad
        y \\mid Q(s, a) \\sim N(Q(s, a), σ^2),

    absorbed by the conjugate Gaussian update: precision ``1/prior_std² + n(s, a)/σ²`` after
    ``n(s, a)`` visits, mean moved towards ``y`` by ``(1/σ²)/precision``. So the mean is
    Q-learning with step size ``1/(n + σ²/prior_std²)`` and the standard deviation shrinks
    like ``σ/√n``. This is an approximation: the targets bootstrap on the *current* means,
    which drift, and are not independent observations. It is the mean-based surrogate the
    paper uses for DeepSea (sequential EI through the Bellman equation is intractable), with a
    Gaussian spread so that EI is positive while ``(s, a)`` is little visited. EI is exact
    Gaussian EI, :func:`delight_gym.posteriors.linear.gaussian_expected_improvement`.

    Rows of a batch are applied one after the other, so a batch update equals the same
    transitions fed one by one.

    Parameters
    ----------
    num_states : int
        ``S`` (>= 1).
    num_actions : int
        ``A`` (>= 1).
    encoder : callable, optional
        Maps an observation batch to state indices in ``[0, S)`` (see :meth:`from_space`,
        which builds it from a Discrete or one-hot Box space). Default: observations *are*
        integer state indices of shape ``(n,)``.
    gamma : float, default 0.99
        Discount ``γ`` in ``[0, 1]`` of the TD targets.
    prior_mean : float, default 0.0
        Prior mean of every ``Q(s, a)``. ``0`` suits rewards near the unit scale with no
        optimism; a positive value adds optimism that the TD targets propagate.
    prior_std : float, default 1.0
        Prior standard deviation (> 0), on the scale of the returns (DeepSea's lie in
        ``[−0.01, 1]``): a fresh pair then has ``EI = prior_std·φ(0) ≈ 0.40`` at a baseline
        equal to its mean, so with the default ``λ = 0.1``, ``L = 10`` it passes the gate.
    noise_std : float, default 0.5
        ``σ > 0``, the noise of one TD target. With ``prior_std = 1`` and ``σ = 0.5``, an
        action tied with the host's (``m = v``) leaves the gate of a greedy host
        (``L·sd·φ(0) < λ``) after about ``(σ·L·φ(0)/λ)² ≈ 400`` visits.

    Attributes
    ----------
    means : numpy.ndarray
        float64 ``(S, A)``: posterior means.
    counts : numpy.ndarray
        float64 ``(S, A)``: visits.
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
        if isinstance(prior_mean, bool) or not isinstance(prior_mean, numbers.Real):
            raise TypeError(f"prior_mean must be a real number, got {prior_mean!r}")
        if not np.isfinite(prior_mean):
            raise ValueError(f"prior_mean must be finite, got {prior_mean}")
        self.prior_mean: float = float(prior_mean)
        self.prior_std: float = check_positive_float(prior_std, "prior_std")
        self.noise_std: float = check_positive_float(noise_std, "noise_std")
        self.encoder: Callable[..., Any] = (
            encoder if encoder is not None else _DiscreteEncoder(self.num_states)
        )
        self.means: np.ndarray = np.full((self.num_states, self.num_actions), self.prior_mean)
        self.counts: np.ndarray = np.zeros((self.num_states, self.num_actions))

    @classmethod
    def from_space(
        cls, observation_space: Any, num_actions: int, **kwargs: Any
    ) -> TabularValuePosterior:
        """Build the posterior for a ``Discrete`` or one-hot ``Box`` observation space.

        A ``Box`` qualifies when its bounds are ``[0, 1]``; each observation must then be
        one-hot (checked on every call), and ``S`` is the number of its entries (``N²`` for
        DeepSea). ``kwargs`` go to the constructor.

        Raises
        ------
        ValueError
            If the space is neither.
        """
        encoder = _encoder_for(observation_space)
        if encoder is None:
            raise ValueError(
                "the default tabular posterior needs a Discrete or one-hot Box observation "
                f"space, got {observation_space!r}; pass posterior= explicitly"
            )
        return cls(encoder.num_states, num_actions, encoder=encoder, **kwargs)

    def std(self, observations: np.ndarray) -> np.ndarray:
        """Posterior standard deviations, float64 ``(n, A)``."""
        s = self.encoder(observations, "observations")
        return self._std(self.counts[s])

    def _std(self, counts: np.ndarray) -> np.ndarray:
        precision = 1.0 / self.prior_std**2 + counts / self.noise_std**2
        return np.asarray(1.0 / np.sqrt(precision))

    def mean(self, observations: np.ndarray) -> np.ndarray:
        """Posterior means, float64 ``(n, A)``."""
        return self.means[self.encoder(observations, "observations")]

    def expected_improvement(self, observations: np.ndarray, baseline: np.ndarray) -> np.ndarray:
        """Gaussian EI ``E[(Q(s_i, a) − baseline_i)^+]``, float64 ``(n, A)``."""
        s = self.encoder(observations, "observations")
        base = _check_baseline(baseline, s.shape[0])
        return _gaussian_ei(self.means[s], self._std(self.counts[s]), base)

    def update(
        self,
        observations: np.ndarray,
        actions: np.ndarray,
        rewards: np.ndarray,
        next_observations: np.ndarray,
        terminated: np.ndarray,
    ) -> None:
        """Absorb ``n`` transitions in row order (see the class docstring).

        ``next_observations`` of terminated rows are not used and may be blank (all zeros).
        """
        s = self.encoder(observations, "observations")
        n = s.shape[0]
        term = np.asarray(terminated, dtype=bool).reshape(n)
        s_next = self.encoder(next_observations, "next_observations", allow_blank=term)
        act = np.asarray(actions).reshape(n)
        rew = check_finite_array(rewards, "rewards").reshape(n)
        w = 1.0 / self.noise_std**2
        p0 = 1.0 / self.prior_std**2
        for i in range(n):
            si, ai = int(s[i]), int(act[i])
            target = rew[i]
            if not term[i]:
                target += self.gamma * self.means[s_next[i]].max()
            self.counts[si, ai] += 1.0
            precision = p0 + self.counts[si, ai] * w
            self.means[si, ai] += (target - self.means[si, ai]) * (w / precision)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(num_states={self.num_states}, num_actions={self.num_actions}"
            f", gamma={self.gamma}, prior_mean={self.prior_mean}, prior_std={self.prior_std}, "
            f"noise_std={self.noise_std})"
        )


def default_posterior(observation_space: Any, num_actions: int, **kwargs: Any) -> ValuePosterior:
    """The wrapper's default posterior: :meth:`TabularValuePosterior.from_space`."""
    return TabularValuePosterior.from_space(observation_space, num_actions, **kwargs)


def adapt_posterior(posterior: Any, num_actions: int | None, observation_space: Any) -> Any:
    """Wrap the package's own posteriors in their adapter; anything else passes through.

    ``BetaBernoulliPosterior`` → :class:`BetaBernoulliAdapter`, ``LinearGaussianPosterior`` →
    :class:`LinearGaussianAdapter` (the observations are the ``(A, D)`` arm features, as
    ``LinearBandit-v0``'s; pass the adapter yourself for other features),
    ``TabularMDPPosterior`` → :class:`TabularMDPAdapter`. The modules are only consulted when
    already imported, so this never imports torch.
    """
    import sys

    beta = sys.modules.get("delight_gym.posteriors.beta")
    if beta is not None and isinstance(posterior, beta.BetaBernoulliPosterior):
        return BetaBernoulliAdapter(posterior)
    linear = sys.modules.get("delight_gym.posteriors.linear")
    if linear is not None and isinstance(posterior, linear.LinearGaussianPosterior):
        if num_actions is None:
            raise TypeError(
                "a LinearGaussianPosterior needs the number of actions: pass action_space"
            )
        return LinearGaussianAdapter(posterior, num_actions)
    tabular = sys.modules.get("delight_gym.posteriors.tabular")
    if tabular is not None and isinstance(posterior, tabular.TabularMDPPosterior):
        return TabularMDPAdapter(posterior, observation_space=observation_space)
    return posterior


# ---------------------------------------------------------------------------------------------
# Adapters for the bandit posteriors
# ---------------------------------------------------------------------------------------------


def _row_map(batch_size: int, n: int, name: str) -> np.ndarray:
    """Which posterior row serves each of ``n`` observation rows: all row 0 when the posterior
    has one row (one bandit, many observations), row ``i`` when it has ``n``."""
    if batch_size == 1:
        return np.zeros(n, dtype=np.int64)
    if batch_size == n:
        return np.arange(n)
    raise ValueError(
        f"{name} has batch_size {batch_size}: it serves either every row (batch_size 1) or "
        f"row i of a batch of exactly {batch_size} observations, got {n}"
    )


class BetaBernoulliAdapter:
    """A :class:`~delight_gym.posteriors.BetaBernoulliPosterior` as a :class:`ValuePosterior`.

    For bandits (one-step episodes): observations are ignored, each transition is a pull whose
    reward (in ``[0, 1]``) updates the arm's Beta posterior, ``next_observations`` and
    ``terminated`` are ignored (no bootstrapping). With ``batch_size == 1`` every observation
    row shares the one bandit; with ``batch_size == n`` row ``i`` is bandit ``i`` (a vector
    env of independent bandits). EI is the posterior's exact Beta EI.
    """

    def __init__(self, posterior: Any) -> None:
        from delight_gym.posteriors.beta import BetaBernoulliPosterior

        if not isinstance(posterior, BetaBernoulliPosterior):
            raise TypeError(
                f"posterior must be a BetaBernoulliPosterior, got {type(posterior).__name__}"
            )
        self.posterior = posterior
        self.num_actions = posterior.num_arms

    def mean(self, observations: np.ndarray) -> np.ndarray:
        """Beta means of the row's bandit, ``(n, K)``."""
        rows = _row_map(self.posterior.batch_size, len(observations), "posterior")
        return np.asarray(self.posterior.mean()[rows])

    def expected_improvement(self, observations: np.ndarray, baseline: np.ndarray) -> np.ndarray:
        """Exact Beta EI over ``baseline`` (``(n,)``), ``(n, K)``."""
        from delight_gym.posteriors.beta import beta_expected_improvement

        rows = _row_map(self.posterior.batch_size, len(observations), "posterior")
        base = _check_baseline(baseline, rows.shape[0])
        return beta_expected_improvement(
            self.posterior.alpha[rows], self.posterior.beta[rows], base[:, None]
        )

    def update(
        self,
        observations: np.ndarray,
        actions: np.ndarray,
        rewards: np.ndarray,
        next_observations: np.ndarray,
        terminated: np.ndarray,
    ) -> None:
        """One Beta update per row (rows applied in order when they share a bandit)."""
        n = len(observations)
        _row_map(self.posterior.batch_size, n, "posterior")
        act = np.asarray(actions).reshape(n)
        rew = np.asarray(rewards, dtype=np.float64).reshape(n)
        if self.posterior.batch_size == n:
            self.posterior.update(act, rew)
        else:
            for i in range(n):
                self.posterior.update(act[i : i + 1], rew[i : i + 1])

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.posterior!r})"


class LinearGaussianAdapter:
    """A :class:`~delight_gym.posteriors.LinearGaussianPosterior` as a :class:`ValuePosterior`.

    ``f(s, a) = φ(s, a)ᵀθ`` with user features ``φ``: ``features(observations)`` returns
    ``(n, A, D)``; by default the observation itself is the ``(A, D)`` feature matrix (as in
    ``LinearBandit-v0``). Like :class:`BetaBernoulliAdapter` it is for one-step problems: a
    transition updates ``θ`` with ``(φ(s, a), r)`` and does not bootstrap. Row mapping as for
    :class:`BetaBernoulliAdapter`. EI is
    :func:`~delight_gym.posteriors.linear.gaussian_expected_improvement` of the predictive
    mean and standard deviation.

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

        if not isinstance(posterior, LinearGaussianPosterior):
            raise TypeError(
                f"posterior must be a LinearGaussianPosterior, got {type(posterior).__name__}"
            )
        self.posterior = posterior
        self.num_actions = check_positive_int(num_actions, "num_actions")
        self.features = features

    def _phi(self, observations: np.ndarray) -> Any:
        import torch

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

    def _predictive(self, observations: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        n = len(observations)
        _row_map(self.posterior.batch_size, n, "posterior")
        phi = self._phi(observations)
        if self.posterior.batch_size == 1 and n > 1:
            mu, sd = self.posterior.predictive(phi.reshape(1, -1, self.posterior.dim))
            mu, sd = mu.reshape(n, -1), sd.reshape(n, -1)
        else:
            mu, sd = self.posterior.predictive(phi)
        return mu.cpu().numpy().astype(np.float64), sd.cpu().numpy().astype(np.float64)

    def mean(self, observations: np.ndarray) -> np.ndarray:
        """Predictive means ``φ(s, a)ᵀμ``, ``(n, A)``."""
        return self._predictive(observations)[0]

    def expected_improvement(self, observations: np.ndarray, baseline: np.ndarray) -> np.ndarray:
        """Gaussian EI of ``φ(s, a)ᵀθ`` over ``baseline`` (``(n,)``), ``(n, A)``."""
        mu, sd = self._predictive(observations)
        base = _check_baseline(baseline, mu.shape[0])
        return _gaussian_ei(mu, sd, base)

    def update(
        self,
        observations: np.ndarray,
        actions: np.ndarray,
        rewards: np.ndarray,
        next_observations: np.ndarray,
        terminated: np.ndarray,
    ) -> None:
        """Regress each reward on the played action's features (rows in order when shared)."""
        n = len(observations)
        _row_map(self.posterior.batch_size, n, "posterior")
        phi = self._phi(observations)
        act = np.asarray(actions).reshape(n)
        chosen = phi[np.arange(n), act]  # (n, D)
        rew = check_finite_array(rewards, "rewards").reshape(n)
        if self.posterior.batch_size == n:
            self.posterior.update(chosen, rew)
        else:
            for i in range(n):
                self.posterior.update(chosen[i : i + 1], rew[i : i + 1])

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.posterior!r}, num_actions={self.num_actions})"


# ---------------------------------------------------------------------------------------------
# Adapter for the tabular MDP posterior
# ---------------------------------------------------------------------------------------------


class TabularMDPAdapter:
    """A :class:`~delight_gym.posteriors.TabularMDPPosterior` as a :class:`ValuePosterior`.

    For finite-horizon tabular MDPs such as DeepSea. The posterior models episodes of exactly
    ``H`` steps with time-indexed values ``Q_h``; the adapter keeps the step ``h`` of each row's
    current episode (:attr:`steps`) and answers with the posterior-mean plan at that step:

    * :meth:`mean` is ``Q_h(s, ·)`` of the posterior-mean MDP
      (:meth:`~delight_gym.posteriors.TabularMDPPosterior.plan_mean`, the package's planner),
      planned once after each update and cached until the next;
    * :meth:`expected_improvement` is the paper's mean-based surrogate (§3.3)
      ``(Q_h(s, a) − v_s)^+``, **not** exact Bayesian EI: exact sequential EI would propagate
      the posterior's variance through the Bellman equation, which is intractable. With the
      wrapper's default ``baseline="host"``, ``v_s = Σ_b π(b|s) Q_h(s, b)`` is the current
      posterior mean's value of the host (the paper's agent,
      :class:`~delight_gym.agents.mdp.MDPDelightAgent`, measures it on a plan frozen at the
      episode start instead), so EI is positive exactly for the actions the current posterior
      mean rates above the host;
    * :meth:`update` records one transition per row and advances its step; the step goes back
      to 0 where the transition ``terminated`` (or ``truncated``, when passed).

    Rows. Row ``i`` of every batch is environment ``i`` and posterior seed ``i`` (the
    posterior's ``B`` MDPs are independent), so every call must pass exactly ``B``
    observations: ``B = 1`` for one environment (single observations to the wrapper), ``B =
    n`` for a vector of ``n`` environments, each learning its own posterior. A batch of another
    size raises ``ValueError``; hence the wrapper's ``lazy_gate=True``, which asks about the
    exploring rows only, works only with ``B = 1``.

    Episode end. The posterior's last step ``h = H − 1`` records no successor (``V_H = 0``),
    and so does any terminated step (DeepSea's observation after the last step is all zeros, not
    a state). After ``H`` steps without termination a row's episode is over by the known
    horizon (its step is ``H``); a further step of that row, i.e. episodes longer than ``H``,
    raises ``ValueError`` at the next :meth:`mean`, :meth:`expected_improvement` or
    :meth:`update`, unless :meth:`reset_steps` started a new episode. An episode that
    terminates before ``H`` steps is recorded as ending there (its last pair gets no
    successor); the planner still values that pair's continuation by its prior, so the model
    is exact for episodes of exactly ``H`` steps (DeepSea: ``H = N``). The wrapper's
    :meth:`~delight_gym.wrappers.DelightExplorationWrapper.observe` passes ``truncated`` on
    (it does so for every posterior whose ``update`` takes a ``truncated`` keyword), so a
    truncation by the environment starts a new episode too.

    Parameters
    ----------
    posterior : TabularMDPPosterior
        ``B`` MDPs with ``S`` states, ``A`` actions and horizon ``H``. Its reward model must
        accept the environment's rewards (DeepSea: ``reward_range=(-move_cost, 1)``).
    observation_space : gymnasium.spaces.Discrete or gymnasium.spaces.Box, optional
        Maps observations to state indices: a ``Discrete(S, start)`` space gives ``obs −
        start``, a one-hot ``Box`` (bounds ``[0, 1]``, ``S`` entries) the index of its 1.
        Default: inferred from each batch: integers of shape ``(n,)`` are state indices in
        ``[0, S)``, any other shape ``(n, ...)`` with ``S`` entries per row is one-hot.

    Attributes
    ----------
    posterior : TabularMDPPosterior
    num_actions : int
        ``A``.
    steps : numpy.ndarray
        int64 ``(B,)``: the step ``h`` of each row's current episode (``H``: over by the
        horizon, waiting for :meth:`reset_steps`).
    """

    def __init__(self, posterior: Any, observation_space: Any = None) -> None:
        from delight_gym.posteriors.tabular import TabularMDPPosterior

        if not isinstance(posterior, TabularMDPPosterior):
            raise TypeError(
                f"posterior must be a TabularMDPPosterior, got {type(posterior).__name__}"
            )
        self.posterior = posterior
        self.num_actions: int = posterior.num_actions
        self.encoder: _DiscreteEncoder | _OneHotEncoder | None = None
        if observation_space is not None:
            self.encoder = _encoder_for(observation_space)
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
                encoder = _DiscreteEncoder(n_states)
            elif int(np.prod(arr.shape[1:])) == n_states:
                encoder = _OneHotEncoder(arr.shape[1:])
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

    def _q(self, states: np.ndarray) -> np.ndarray:
        """``Q_{h_i}(s_i, ·)`` of the posterior-mean plan for every row, float64 ``(B, A)``."""
        self._check_steps()
        first = int(self.steps.min())
        if self._plan is None or self._plan_first > first:
            self._plan = self.posterior.plan_mean(first_step=first)
            self._plan_first = first
        import torch

        def index(x: np.ndarray) -> Any:
            return torch.as_tensor(x, dtype=torch.int64, device=self._plan.device)

        rows = np.arange(self.posterior.batch_size)
        q = self._plan[index(self.steps - self._plan_first), index(rows), index(states)]
        return np.asarray(q.cpu().numpy(), dtype=np.float64)

    def mean(self, observations: np.ndarray) -> np.ndarray:
        """Posterior-mean ``Q_h(s, ·)`` at each row's current step, float64 ``(B, A)``."""
        return self._q(self._states(observations, "observations"))

    def expected_improvement(self, observations: np.ndarray, baseline: np.ndarray) -> np.ndarray:
        """The mean surrogate ``(Q_h(s_i, a) − baseline_i)^+`` (paper §3.3), float64 ``(B, A)``."""
        means = self.mean(observations)
        base = _check_baseline(baseline, means.shape[0])
        return np.asarray(np.maximum(means - base[:, None], 0.0))

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
        act = np.asarray(actions)
        if act.shape != (b,) or not np.issubdtype(act.dtype, np.integer):
            raise ValueError(
                f"actions must be integers of shape ({b},), got dtype {act.dtype} and shape "
                f"{act.shape}"
            )
        if np.any(act < 0) or np.any(act >= self.num_actions):
            raise ValueError(f"actions must lie in [0, {self.num_actions})")
        rew = check_finite_array(rewards, "rewards")
        if rew.shape != (b,):
            raise ValueError(f"rewards must have shape ({b},), got {rew.shape}")
        device = self.posterior.device
        self.posterior.update(
            torch.as_tensor(s, device=device),
            torch.as_tensor(act.astype(np.int64), device=device),
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
