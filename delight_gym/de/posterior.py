"""The posterior protocol: what the DE wrapper and the deep-RL algorithms need from a posterior.

A :class:`ValuePosterior` carries ``num_actions`` and gives, for ``n`` observations, means
``(n, A)``, EI ``E[(f(s, a) − v_s)^+]`` over a baseline ``(n,)`` (:func:`host_baseline`) and
an ``update``; :func:`evaluate_posterior` returns means, baseline and EI in one call.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Protocol, runtime_checkable

import numpy as np

from delight_gym._arrays import is_torch
from delight_gym._checks import check_choice, check_finite_array

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
    """Everything one DE decision needs from a posterior for ``n`` rows: float64 ``(n, A)``
    ``mean``, ``(n,)`` ``baseline`` ``v_s`` and ``(n, A)`` ``expected_improvement``
    ``E[(f(s, a) − v_s)^+] >= 0``."""

    mean: np.ndarray
    baseline: np.ndarray
    expected_improvement: np.ndarray


def host_baseline(means: Any, host_probs: Any, kind: str = "host") -> Any:
    """The EI baseline ``v_s`` of every row, ``(...)``, of ``means``' type, dtype and device.

    ``kind="host"``: ``v_s = Σ_b π(b|s) m(s, b)``, the value of following the host (the paper's
    DeepSea baseline); ``"max"``: ``v_s = max_b m(s, b)`` (its bandit ``v_t``; ``host_probs``
    unused). ``means`` and ``host_probs`` are ``(..., A)`` of one type. ``ValueError`` on an
    unknown ``kind`` or, for ``"host"``, shapes that differ.
    """
    check_choice(kind, BASELINES, "kind")
    if kind == "max":
        return means.amax(dim=-1) if is_torch(means) else np.max(means, axis=-1)
    if tuple(means.shape) != tuple(host_probs.shape):
        raise ValueError(
            f"host_probs must have the shape of means {tuple(means.shape)}, got "
            f"{tuple(host_probs.shape)}"
        )
    return (host_probs * means).sum(-1)


def check_baseline(baseline: Any, n: int) -> np.ndarray:
    """The EI baseline of ``n`` rows as float64 ``(n,)``; ValueError unless finite and so shaped."""
    return check_finite_array(baseline, "baseline", shape=(n,))


@runtime_checkable
class ValuePosterior(Protocol):
    """What :class:`~delight_gym.de.wrapper.DelightExplorationWrapper` needs from a posterior.

    Attributes
    ----------
    num_actions : int
        ``A``; must equal the host's number of actions.

    Every method takes a batch of ``n`` observations (leading axis). A posterior may also define
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
    posterior defines it (the Beta, linear and tabular posteriors return their adapter), else
    ``posterior`` unchanged. ``num_actions`` may be ``None`` when unknown."""
    convert = getattr(posterior, "as_value_posterior", None)
    if convert is None:
        return posterior
    return convert(num_actions=num_actions, observation_space=observation_space)


def evaluate_posterior(
    posterior: Any, observations: Any, host_probs: np.ndarray, baseline: str = "host"
) -> PosteriorValues:
    """Means, baseline and EI of ``n`` rows in one call, as float64 :class:`PosteriorValues`.

    Uses ``posterior.evaluate_unchecked`` or ``posterior.evaluate`` when defined (a GPU
    posterior copies to the host once), else ``mean``, :func:`host_baseline` and
    ``expected_improvement``. Only the means' shape is checked here; the caller checks
    ``host_probs`` (float64 ``(n, A)``) and the EI.

    Raises
    ------
    ValueError
        On an unknown ``baseline`` or means whose shape is not ``host_probs``'s.
    """
    check_choice(baseline, BASELINES, "baseline")
    # The caller checked host_probs: a posterior's unchecked evaluate skips a second check.
    evaluate = getattr(posterior, "evaluate_unchecked", None) or getattr(
        posterior, "evaluate", None
    )
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
