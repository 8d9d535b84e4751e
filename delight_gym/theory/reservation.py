"""Reservation values: the delight gate as Pandora's rule (paper §2.2 and §4.4).

For a prior ``X ~ F`` and the *partial expectation* ``g(z) = E[(X − z)^+]``: the delight
reservation index ``z^λ = sup{z : ℓ·g(z) ≥ λ}``, the fresh-arm threshold ``v_λ``, and for an
infinite reservoir the threshold ``y_T`` and horizon price ``λ_T``. Closed forms where they
exist; else Newton's method from the left, with ``g`` by quadrature where it has no closed form.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import integrate, optimize

from delight_gym._checks import check_all_finite, check_positive_float
from delight_gym.de.rule import DEFAULT_GATE_PRICE, DEFAULT_SURPRISAL_CAP
from delight_gym.posteriors.beta import beta_expected_improvement

__all__ = [
    "fresh_arm_threshold",
    "horizon_price",
    "horizon_threshold",
    "partial_expectation",
    "reservation_index",
    "tail_probability",
    "threshold_regret_bound",
]

_CLOSED_FORM = frozenset({"uniform", "norm", "expon", "beta"})
_NEWTON_MAX_ITER = 200


def _check_prior(prior: Any) -> tuple[str, tuple[Any, ...], Any, Any]:
    """``(name, shape_args, loc, scale)`` of a frozen continuous scipy.stats prior, checked."""
    dist = getattr(prior, "dist", None)
    if dist is None or not hasattr(prior, "sf") or not hasattr(dist, "_parse_args"):
        raise TypeError(
            f"prior must be a frozen scipy.stats distribution, got {type(prior).__name__}"
        )
    if not hasattr(dist, "pdf"):
        raise TypeError(f"prior must be a continuous distribution, got {dist.name!r} (discrete)")
    shapes, loc, scale = dist._parse_args(*prior.args, **prior.kwds)
    name = str(dist.name)
    if name not in _CLOSED_FORM and any(np.ndim(p) > 0 for p in (*shapes, loc, scale)):
        raise ValueError(
            f"prior parameters must be scalars for {name!r}: array parameters are supported "
            f"for the closed-form families {sorted(_CLOSED_FORM)}"
        )
    return name, tuple(shapes), loc, scale


def _nonnegative_array(value: Any, name: str) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be array-like of numbers: {exc}") from None
    if np.any(np.isnan(arr)) or np.any(arr < 0):
        raise ValueError(f"{name} must be >= 0 (no NaN)")
    return arr


def _out(arr: np.ndarray) -> Any:
    return float(arr) if arr.ndim == 0 else arr


def partial_expectation(prior: Any, z: Any) -> Any:
    """``g(z) = E[(X − z)^+]`` for ``X ~ prior``.

    Parameters
    ----------
    prior : frozen scipy.stats continuous distribution
        Parameters may be arrays; they broadcast with ``z``.
    z : array_like
        Finite thresholds.

    Returns
    -------
    float or numpy.ndarray
        Of the broadcast shape.

    Examples
    --------
    >>> from scipy import stats
    >>> partial_expectation(stats.uniform(), 0.5)  # (1 - z)^2 / 2
    0.125
    """
    name, shapes, loc, scale = _check_prior(prior)
    zz = np.asarray(z, dtype=np.float64)
    check_all_finite(zz, "z")
    return _out(np.asarray(_g(prior, name, shapes, loc, scale, zz), dtype=np.float64))


def _g(prior: Any, name: str, shapes: tuple[Any, ...], loc: Any, scale: Any, z: Any) -> Any:
    u = (np.asarray(z, dtype=np.float64) - loc) / scale
    if name == "uniform":
        inside = np.clip(u, 0.0, 1.0)
        return scale * ((1.0 - inside) ** 2 / 2.0 + (inside - u))  # = 1/2 − u for u < 0
    if name == "expon":
        return scale * (np.exp(-np.maximum(u, 0.0)) + np.maximum(-u, 0.0))
    if name == "beta":
        return scale * beta_expected_improvement(shapes[0], shapes[1], u)
    if name == "norm":
        from delight_gym.posteriors.gaussian import gaussian_expected_improvement

        return scale * gaussian_expected_improvement(0.0, 1.0, u)
    return _g_quad(prior, z)


def _g_quad(prior: Any, z: np.ndarray) -> np.ndarray:
    """``g(z) = (lb − z)^+ + ∫_{max(z, lb)}^{ub} P(X > x) dx`` by quadrature (any prior)."""
    lb, ub = (np.broadcast_to(np.asarray(s, dtype=np.float64), z.shape) for s in prior.support())
    out = np.empty(z.shape)
    for i in np.ndindex(z.shape):
        start = max(float(z[i]), float(lb[i]))
        tail = 0.0
        if start < ub[i]:
            tail = integrate.quad(prior.sf, start, float(ub[i]), limit=200, epsabs=1e-14)[0]
        out[i] = max(float(lb[i]) - float(z[i]), 0.0) + tail
    return out


def reservation_index(prior: Any, surprisal: Any, gate_price: Any) -> Any:
    """The delight reservation index ``z^λ = sup{z : ℓ·E[(X − z)^+] ≥ λ}``.

    An action passes the delight gate at baseline ``v`` iff ``v ≤ z^λ``; with ``ℓ = 1``,
    ``λ = c`` it is Weitzman's reservation value of a box with inspection cost ``c``.

    Parameters
    ----------
    prior : frozen scipy.stats continuous distribution
        Parameters may be arrays (one prior per element).
    surprisal, gate_price : array_like
        ``ℓ ≥ 0`` and ``λ ≥ 0`` (``inf`` allowed), broadcast with the prior's parameters.

    Returns
    -------
    float or numpy.ndarray
        ``z^λ``: ``+inf`` where ``λ/ℓ = 0``, ``−inf`` where the set is empty (``ℓ = 0 < λ``,
        or ``λ = inf``), otherwise the unique root of ``g(z) = λ/ℓ``.

    Raises
    ------
    TypeError
        If ``prior`` is not a frozen continuous scipy.stats distribution.
    ValueError
        If ``surprisal`` or ``gate_price`` is negative or NaN, or ``prior`` has no finite mean.

    Examples
    --------
    >>> from scipy import stats
    >>> round(reservation_index(stats.uniform(), 10.0, 0.1), 12)  # 1 - sqrt(2λ/ℓ)
    0.858578643763
    """
    name, shapes, loc, scale = _check_prior(prior)
    ell = _nonnegative_array(surprisal, "surprisal")
    lam = _nonnegative_array(gate_price, "gate_price")
    with np.errstate(divide="ignore", invalid="ignore"):
        cost = np.where(lam == 0, 0.0, lam / ell)  # λ/ℓ; ℓ = 0 < λ gives inf
    params = [np.asarray(p, dtype=np.float64) for p in (*shapes, loc, scale)]
    shape = np.broadcast_shapes(cost.shape, *(p.shape for p in params))
    cost = np.broadcast_to(cost, shape)
    out = np.where(cost == 0, np.inf, -np.inf)
    solve = np.isfinite(cost) & (cost > 0)
    if not solve.any():
        return _out(out)
    broadcast = [np.broadcast_to(p, shape) for p in params]  # the shapes, loc and scale
    loc_b, scale_b = broadcast[-2:]
    c = cost / scale_b  # the equation in standard units u = (z − loc)/scale: g_std(u) = c
    if name == "uniform":  # g_std(u) = (1 − u)²/2 on [0, 1] and 1/2 − u below 0
        u = np.where(c >= 0.5, 0.5 - c, 1.0 - np.sqrt(2.0 * np.minimum(c, 0.5)))
        return _out(np.where(solve, loc_b + scale_b * u, out))
    if name == "expon":  # g_std(u) = exp(−u) for u ≥ 0 and 1 − u below 0
        with np.errstate(divide="ignore"):
            u = np.where(c >= 1.0, 1.0 - c, -np.log(np.minimum(c, 1.0)))
        return _out(np.where(solve, loc_b + scale_b * u, out))
    mean = np.broadcast_to(np.asarray(prior.mean(), dtype=np.float64), shape)
    if not np.all(np.isfinite(mean[solve])):
        raise ValueError("prior must have a finite mean")
    lower = np.broadcast_to(np.asarray(prior.support()[0], dtype=np.float64), shape)
    idx = np.flatnonzero(solve.ravel())
    z = np.empty(idx.size)
    z_flat = out.ravel().copy()
    sub_prior = _element_prior(prior, name, [p.ravel() for p in broadcast], idx)
    cost_i = cost.ravel()[idx]
    lower_i = lower.ravel()[idx]
    mean_i = mean.ravel()[idx]
    # Left of the support, g(z) = E[X] − z: the root is there when c >= g(lower) = E[X] − lower.
    below = cost_i >= mean_i - lower_i
    z[below] = mean_i[below] - cost_i[below]
    rest = np.flatnonzero(~below)
    if rest.size:
        start = np.where(np.isfinite(lower_i[rest]), lower_i[rest], mean_i[rest] - cost_i[rest])
        if name in _CLOSED_FORM:
            z[rest] = _newton_from_left(lambda rows: sub_prior(rest[rows]), cost_i[rest], start)
        else:
            pairs = zip(cost_i[rest], start, strict=True)
            z[rest] = [_brent(prior, float(ci), float(s)) for ci, s in pairs]
    z_flat[idx] = z
    return _out(z_flat.reshape(shape))


def _element_prior(prior: Any, name: str, flat: list[np.ndarray], idx: Any) -> Any:
    """A function ``rows -> (g, sf)`` of the elements ``idx[rows]`` (``flat``: the shapes, loc
    and scale, broadcast and flattened)."""

    def select(rows: np.ndarray) -> tuple[Any, Any]:
        *sh, lo, sc = (p[idx[rows]] for p in flat)

        def g(z: np.ndarray) -> np.ndarray:
            return np.asarray(_g(prior, name, tuple(sh), lo, sc, z), dtype=np.float64)

        def sf(z: np.ndarray) -> np.ndarray:
            return np.asarray(prior.dist.sf(z, *sh, loc=lo, scale=sc), dtype=np.float64)

        return g, sf

    return select


def _newton_from_left(funcs: Any, cost: np.ndarray, start: np.ndarray) -> np.ndarray:
    """Root of the convex, decreasing ``g(z) = cost`` by Newton's method from ``g(start) ≥ cost``
    (``funcs(rows)`` gives ``(g, sf)`` of those elements)."""
    # z ← z + (g(z) − cost)/P(X > z): a convex function lies above its tangents, so every
    # iterate stays left of the root and increases monotonically (quadratically near it).
    z = start.astype(np.float64).copy()
    active = np.ones(z.size, dtype=bool)
    for _ in range(_NEWTON_MAX_ITER):
        rows = np.flatnonzero(active)
        if rows.size == 0:
            break
        zr = z[rows]
        g, sf = funcs(rows)
        gr, sr = g(zr), sf(zr)
        step = np.where(sr > 0, (gr - cost[rows]) / np.where(sr > 0, sr, 1.0), 0.0)
        step = np.maximum(step, 0.0)  # rounding at the root must not push left
        z[rows] = zr + step
        active[rows] = step > 4.0 * np.finfo(np.float64).eps * np.maximum(np.abs(zr), 1.0)
    else:
        raise RuntimeError(  # pragma: no cover - quadratic convergence takes < 60 steps
            f"reservation_index: Newton's method did not converge for {active.sum()} element(s)"
        )
    return z


def _brent(prior: Any, cost: float, start: float) -> float:
    """Root of ``g(z) = cost`` for a prior without closed forms (quadrature + Brent)."""

    def f(z: float) -> float:
        return float(_g_quad(prior, np.asarray(z))) - cost

    hi = float(prior.support()[1])
    if not np.isfinite(hi):
        hi = float(prior.mean()) + 1.0
        width = 1.0
        while f(hi) >= 0:
            width *= 2.0
            hi = float(prior.mean()) + width
    return float(optimize.brentq(f, start, hi, xtol=1e-15, rtol=4 * np.finfo(float).eps))


def fresh_arm_threshold(
    prior: Any,
    gate_price: float = DEFAULT_GATE_PRICE,
    surprisal_cap: float = DEFAULT_SURPRISAL_CAP,
) -> float:
    """The fresh-arm threshold ``v_λ = sup{v : E[(X − v)^+] ≥ λ/L}``: under a greedy host an
    untried arm (surprisal ``L``) is gated iff ``v_t ≤ v_λ`` (``1 − sqrt(2λ/L)`` for ``U(0, 1)``).

    Examples
    --------
    >>> from scipy import stats
    >>> round(fresh_arm_threshold(stats.beta(1, 1), 0.1, 10.0), 12)
    0.858578643763
    """
    cap = check_positive_float(surprisal_cap, "surprisal_cap", allow_inf=True)
    return float(reservation_index(prior, cap, gate_price))


def _upper_end(prior: Any) -> tuple[float, float]:
    lo, hi = (float(np.asarray(s)) for s in prior.support())
    if not np.isfinite(hi):
        raise ValueError("prior must have a bounded support (a finite upper endpoint)")
    return lo, hi


def tail_probability(prior: Any, y: Any) -> Any:
    """``p(y) = P(X ≥ b − y)`` with ``b`` the prior's upper endpoint (continuous prior)."""
    _check_prior(prior)
    _, hi = _upper_end(prior)
    return _out(np.asarray(prior.sf(hi - np.asarray(y, dtype=np.float64)), dtype=np.float64))


def threshold_regret_bound(prior: Any, horizon: Any, y: Any, override_rate: float = 1.0) -> Any:
    """The reservation-policy regret bound ``1/(ε p(y)) + T y`` (eq. ``threshold_regret``)."""
    eps = check_positive_float(override_rate, "override_rate")
    p = np.asarray(tail_probability(prior, y), dtype=np.float64)
    with np.errstate(divide="ignore"):
        return _out(1.0 / (eps * p) + np.asarray(horizon, dtype=np.float64) * np.asarray(y))


def horizon_threshold(prior: Any, horizon: float, override_rate: float = 1.0) -> float:
    """``y_T``: the minimiser over ``y ∈ (0, b − a]`` of ``1/(ε p(y)) + T y``
    (``(α/(εT))^{1/(α+1)}`` for ``Beta(1, α)``).

    Parameters
    ----------
    prior : frozen scipy.stats continuous distribution on a bounded interval ``[a, b]``
        A fresh arm's value; the objective should be unimodal (true for polynomial tails).
    horizon : float
        ``T > 0``.
    override_rate : float, default 1.0
        Constant override probability ``ε ∈ (0, 1]``.
    """
    _check_prior(prior)
    t = check_positive_float(horizon, "horizon")
    eps = check_positive_float(override_rate, "override_rate")
    if eps > 1:
        raise ValueError(f"override_rate must lie in (0, 1], got {override_rate}")
    lo, hi = _upper_end(prior)
    width = hi - lo if np.isfinite(lo) else np.inf

    # Brent's method on log y for the stationarity condition f(b − y) = εT p(y)², f the density.
    def stationarity(log_y: float) -> float:
        y = float(np.exp(log_y))
        p = float(prior.sf(hi - y))
        return float(np.log(prior.pdf(hi - y))) - float(np.log(eps * t)) - 2.0 * np.log(p)

    top = np.log(width) if np.isfinite(width) else np.log(1e300)
    with np.errstate(divide="ignore"):
        if stationarity(top) >= 0:  # derivative −f/(εp²) + T ≤ 0 everywhere: take the end
            return float(width)
        bottom = top - 1.0
        while stationarity(bottom) <= 0:
            bottom -= 1.0
            if bottom < -700:
                raise ValueError("horizon_threshold: no interior minimum (tail too thin)")
        return float(np.exp(optimize.brentq(stationarity, bottom, top, xtol=1e-15, rtol=1e-15)))


def horizon_price(
    prior: Any,
    horizon: float,
    surprisal_cap: float = DEFAULT_SURPRISAL_CAP,
    override_rate: float = 1.0,
) -> float:
    """The horizon price ``λ_T = L·E[(X − (b − y_T))^+]``, with which the fresh-arm threshold
    is ``v_{λ_T} = b − y_T`` (``L/(2εT)`` for a uniform prior).

    Examples
    --------
    >>> from scipy import stats
    >>> round(horizon_price(stats.uniform(), 1000, surprisal_cap=10.0), 12)  # L / (2T)
    0.005
    """
    cap = check_positive_float(surprisal_cap, "surprisal_cap")
    y = horizon_threshold(prior, horizon, override_rate)
    _, hi = _upper_end(prior)
    return float(cap * partial_expectation(prior, hi - y))
