"""The posterior protocol: what the DE wrapper and the deep-RL algorithms need from a posterior.

A :class:`ValuePosterior` carries ``num_actions`` and answers, for ``n`` observations with
``A`` actions each: ``mean(observations) -> (n, A)``;
``expected_improvement(observations, baseline) -> (n, A)``, ``E[(f(s, a) − v_s)^+]`` over a
baseline ``(n,)``; and ``update(observations, actions, rewards, next_observations,
terminated, truncated=None)``. The baseline comes from the means and the host's probabilities
(:func:`host_baseline`); :func:`evaluate_posterior` returns means, baseline and EI in one
call, through the posterior's own ``evaluate`` when it defines one.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Protocol, runtime_checkable

import numpy as np

from delight_gym._arrays import is_torch
from delight_gym._checks import check_finite_array

__all__ = [
    "BASELINES",
    "PosteriorValues",
    "ValuePosterior",
    "adapt_posterior",
    "check_baseline",
    "evaluate_posterior",
    "host_baseline",
]

#: Baseline conventions: ``"host"`` (``Σ_b π(b|s) m(s, b)``) and ``"max"`` (``max_b m(s, b)``).
BASELINES = ("host", "max")


class PosteriorValues(NamedTuple):
    """Everything one DE decision needs from a posterior, for ``n`` rows and ``A`` actions.

    Attributes
    ----------
    mean : numpy.ndarray
        float64 ``(n, A)``: posterior mean value of every action.
    baseline : numpy.ndarray
        float64 ``(n,)``: the EI baseline ``v_s`` used.
    expected_improvement : numpy.ndarray
        float64 ``(n, A)``: ``E[(f(s, a) − v_s)^+] >= 0``.
    """

    mean: np.ndarray
    baseline: np.ndarray
    expected_improvement: np.ndarray


def host_baseline(means: Any, host_probs: Any, kind: str = "host") -> Any:
    """The EI baseline ``v_s`` of every row.

    Parameters
    ----------
    means : numpy.ndarray or torch.Tensor
        ``(..., A)``: posterior means ``m(s, ·)``.
    host_probs : numpy.ndarray or torch.Tensor
        ``(..., A)``: the host's probabilities ``π(·|s)`` (same type as ``means``; unused for
        ``kind="max"``).
    kind : {"host", "max"}, default "host"
        ``"host"``: ``v_s = Σ_b π(b|s) m(s, b)``, the posterior value of following the host (the
        paper's DeepSea baseline; ``m(s, host's action)`` for a greedy host). ``"max"``:
        ``v_s = max_b m(s, b)`` (the paper's bandit ``v_t``; equal to ``"host"`` when the host is
        greedy on the posterior means).

    Returns
    -------
    numpy.ndarray or torch.Tensor
        ``(...)``, the type, dtype and device of ``means``.

    Raises
    ------
    ValueError
        If ``kind`` is not one of :data:`BASELINES`, or the shapes differ for ``"host"``.
    """
    if kind not in BASELINES:
        raise ValueError(f"kind must be one of {BASELINES}, got {kind!r}")
    if kind == "max":
        return means.amax(dim=-1) if is_torch(means) else np.max(means, axis=-1)
    if tuple(means.shape) != tuple(host_probs.shape):
        raise ValueError(
            f"host_probs must have the shape of means {tuple(means.shape)}, got "
            f"{tuple(host_probs.shape)}"
        )
    return (host_probs * means).sum(-1)


def check_baseline(baseline: Any, n: int) -> np.ndarray:
    """The EI baseline of ``n`` observation rows as float64 ``(n,)``; ``ValueError`` unless it is
    finite and of that shape."""
    return check_finite_array(baseline, "baseline", shape=(n,))


@runtime_checkable
class ValuePosterior(Protocol):
    """What :class:`~delight_gym.de.wrapper.DelightExplorationWrapper` needs from a posterior.

    Attributes
    ----------
    num_actions : int
        ``A``; must equal the host's number of actions.

    Every method takes a batch of ``n`` observations with a leading batch axis (the observation
    space's shape after it; a Discrete space gives shape ``(n,)``). A posterior may also define
    ``evaluate(observations, host_probs, baseline="host") -> PosteriorValues`` (see
    :func:`evaluate_posterior`).
    """

    num_actions: int

    def mean(self, observations: Any) -> np.ndarray:
        """Posterior mean value of every action, float64 ``(n, A)``."""
        ...

    def expected_improvement(self, observations: Any, baseline: np.ndarray) -> np.ndarray:
        """``E[(f(s_i, a) − baseline_i)^+]``, float64 ``(n, A)``, finite and ``>= 0``."""
        ...

    def update(
        self,
        observations: Any,
        actions: np.ndarray,
        rewards: np.ndarray,
        next_observations: Any,
        terminated: np.ndarray,
        truncated: np.ndarray | None = None,
    ) -> None:
        """Absorb ``n`` transitions (``actions`` int ``(n,)``, ``rewards`` float ``(n,)``,
        ``terminated`` and ``truncated`` bool ``(n,)``)."""
        ...


def adapt_posterior(posterior: Any, num_actions: int | None, observation_space: Any) -> Any:
    """``posterior.as_value_posterior(num_actions=..., observation_space=...)`` when the
    posterior defines that method, else ``posterior`` unchanged.

    The package's posteriors that do not speak :class:`ValuePosterior` themselves
    (:class:`~delight_gym.posteriors.BetaBernoulliPosterior`,
    :class:`~delight_gym.posteriors.LinearGaussianPosterior`,
    :class:`~delight_gym.posteriors.TabularMDPPosterior`) define it and return their adapter
    from :mod:`delight_gym.posteriors.adapters`. Only the posterior's own method runs, so this
    never imports torch for a numpy posterior.

    Parameters
    ----------
    posterior : object
    num_actions : int or None
        The host's number of actions, when known (a linear posterior needs it).
    observation_space : gymnasium.Space or None
        The observations' space (a tabular MDP posterior maps it to state indices).
    """
    convert = getattr(posterior, "as_value_posterior", None)
    if convert is None:
        return posterior
    return convert(num_actions=num_actions, observation_space=observation_space)


def evaluate_posterior(
    posterior: Any, observations: Any, host_probs: np.ndarray, baseline: str = "host"
) -> PosteriorValues:
    """Means, baseline and EI of ``n`` rows in one call.

    Uses ``posterior.evaluate(observations, host_probs, baseline)`` when the posterior defines
    it (a GPU posterior computes all three on its device and copies to the host once per
    decision), else :meth:`~ValuePosterior.mean`, then :func:`host_baseline`, then
    :meth:`~ValuePosterior.expected_improvement`.

    Parameters
    ----------
    posterior : ValuePosterior
    observations : array_like
        ``(n, ...)``.
    host_probs : numpy.ndarray
        float64 ``(n, A)``.
    baseline : {"host", "max"}, default "host"
        See :func:`host_baseline`.

    Returns
    -------
    PosteriorValues
        float64 arrays. Only the means' shape is checked here (the baseline needs it); the
        caller checks finiteness and the other shapes.

    Raises
    ------
    ValueError
        On an unknown ``baseline`` or means whose shape is not ``host_probs``'s.
    """
    if baseline not in BASELINES:
        raise ValueError(f"baseline must be one of {BASELINES}, got {baseline!r}")
    evaluate = getattr(posterior, "evaluate", None)
    if callable(evaluate):
        out = evaluate(observations, host_probs, baseline)
        return PosteriorValues(
            np.asarray(out.mean, dtype=np.float64),
            np.asarray(out.baseline, dtype=np.float64),
            np.asarray(out.expected_improvement, dtype=np.float64),
        )
    probs = np.asarray(host_probs)
    means = np.asarray(posterior.mean(observations), dtype=np.float64)
    if means.shape != probs.shape:
        raise ValueError(f"posterior mean has shape {means.shape}, expected {probs.shape}")
    base = np.asarray(host_baseline(means, probs, baseline), dtype=np.float64)
    ei = np.asarray(posterior.expected_improvement(observations, base), dtype=np.float64)
    return PosteriorValues(means, base, ei)
