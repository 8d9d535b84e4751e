"""The linear selected-override budget (paper §4, Proposition "Linear selected-override budget")."""

from __future__ import annotations

import math

from delight_gym._checks import check_positive_float, check_positive_int
from delight_gym.de.rule import DEFAULT_GATE_PRICE, DEFAULT_SURPRISAL_CAP, check_gate_settings

__all__ = ["linear_override_budget"]


def linear_override_budget(
    dim: int,
    horizon: int,
    noise: float,
    *,
    gate_price: float = DEFAULT_GATE_PRICE,
    surprisal_cap: float = DEFAULT_SURPRISAL_CAP,
    prior_precision: float = 1.0,
) -> float:
    """The paper's bound on selected-override rounds in a linear–Gaussian bandit (features
    ``‖x_a‖ ≤ 1``, greedy host): ``2 γ_T / min(1, λ² / (L² σ²))``, ``γ_T = D·log(1 + T/(ησ²D))``,
    whatever the number of arms.

    Parameters
    ----------
    dim, horizon : int
        ``D ≥ 1`` and ``T ≥ 1``.
    noise : float
        ``σ > 0``.
    gate_price, surprisal_cap : float
        ``λ ≥ 0`` (``λ = 0`` gives ``inf``) and ``L > 0``.
    prior_precision : float
        ``η > 0`` of the prior ``θ ~ N(0, I/η)``.

    Returns
    -------
    float
        The bound, possibly ``inf``.

    Examples
    --------
    >>> round(linear_override_budget(10, 1000, 0.1, gate_price=1.0), 1)  # 2·10·log(1 + 1000/0.1)
    184.2
    """
    d = check_positive_int(dim, "dim")
    t = check_positive_int(horizon, "horizon")
    sigma = check_positive_float(noise, "noise")
    lam, cap = check_gate_settings(gate_price, surprisal_cap)
    eta = check_positive_float(prior_precision, "prior_precision")
    # A gate-open action has EI ≥ λ/L, and Gaussian EI ≤ the posterior sd; the elliptical
    # potential lemma bounds the sum of min(1, s_t²/σ²) by 2γ_T.
    gamma = d * math.log1p(t / (eta * sigma**2 * d))
    potential = min(1.0, lam**2 / (cap**2 * sigma**2))
    return math.inf if potential == 0.0 else 2.0 * gamma / potential
