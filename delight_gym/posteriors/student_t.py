r"""Expected improvement ``E[(X − v)^+]`` of a Student-t variable ``X = m + s·T``, ``T ~ t_ν``.

With ``d = m − v``, ``u = |d|/s``: ``EI = d^+ + s·g(u)``, ``g(u) = E[(T − u)^+] =
(ν + u²)/(ν − 1)·f_ν(u) − u·S_ν(u)`` (density ``f_ν``, survival ``S_ν`` from SciPy's incomplete
beta; finite for ``ν > 1``). Computed on the host in float64; tensors come back as tensors.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import special

from delight_gym._arrays import is_torch
from delight_gym._checks import broadcast_named, check_finite_array
from delight_gym.posteriors.gaussian import check_ei_values, torch_ei_inputs

__all__ = ["student_t_expected_improvement"]

#: ``ν·u²`` above which ``S_ν(u)`` for ``u² < ν`` comes from the slower ``betaincc``
#: (``betainc``'s error ``~3.5e-17·ν``, amplified by ``u²``, stays ``<= 4e-11`` below it).
_COMPLEMENT_PRODUCT = 1e6
#: ``ν`` from which the log-gamma ratio comes from Stirling's series (error < 3e-16 there).
_STIRLING_DOF = 40.0
#: ``u²/ν`` from which ``g`` comes from the far-tail series (``x = ν/(ν + u²) <= 1/16``).
_FAR_TAIL = 15.0
#: Terms of the far-tail series (``x^k <= 16^-16 = 5e-20`` of the first).
_FAR_TERMS = 16
#: Largest ``u`` the near-tail formula takes (``u²`` finite); beyond it ``ν > 1.5e299``.
_NEAR_MAX = 1e150


def _log_gamma_ratio(a: np.ndarray) -> np.ndarray:
    """``log Γ(a + ½) − log Γ(a)`` for ``a > 0``, accurate to ulps of the result."""
    big = a >= 0.5 * _STIRLING_DOF
    safe = np.where(big, a, 0.5 * _STIRLING_DOF)
    inv = 1.0 / safe
    inv2 = inv * inv
    series = 0.5 * np.log(safe) - inv * (
        0.125 - inv2 * (1.0 / 192.0 - inv2 * (1.0 / 640.0 - inv2 * 17.0 / 14336.0))
    )
    small = np.where(big, 1.0, a)
    return np.where(big, series, special.gammaln(small + 0.5) - special.gammaln(small))


def _upper_tail_ei(u: np.ndarray, log_u: np.ndarray, nu: np.ndarray) -> np.ndarray:
    """``g(u) = E[(T − u)^+]`` for ``u ≥ 0`` (or ``inf``), given ``log u`` too (so the far tail
    never forms ``u²``)."""
    u, log_u, nu = np.broadcast_arrays(u, log_u, nu)
    far = 2.0 * log_u >= np.log(_FAR_TAIL * nu)
    out = np.zeros(u.shape)
    if far.any():
        out[far] = _far_tail_ei(log_u[far], nu[far])
    near = ~far & (u <= _NEAR_MAX)  # beyond: only for ν > 1e299, where g underflows to 0
    if near.any():
        out[near] = _near_tail_ei(u[near], nu[near])
    return out


def _near_tail_ei(u: np.ndarray, nu: np.ndarray) -> np.ndarray:
    """``g(u) = (ν + u²)/(ν − 1)·f_ν(u) − u·S_ν(u)`` for ``u² < 15ν`` (``u² `` finite)."""
    u2 = u * u
    denom = nu + u2
    x = nu / denom
    y = u2 / denom
    survival = np.empty(x.shape)
    direct = (x < 0.5) | (nu * u2 <= _COMPLEMENT_PRODUCT)  # each branch on its own entries
    survival[direct] = 0.5 * special.betainc(0.5 * nu[direct], 0.5, x[direct])
    rest = ~direct
    survival[rest] = 0.5 * special.betaincc(0.5, 0.5 * nu[rest], y[rest])
    log_density = (
        _log_gamma_ratio(0.5 * nu)
        - 0.5 * np.log(nu * math.pi)
        - 0.5 * (nu + 1.0) * np.log1p(u2 / nu)
    )
    out = denom / (nu - 1.0) * np.exp(log_density) - u * survival
    return np.maximum(out, 0.0)


def _far_tail_ei(log_u: np.ndarray, nu: np.ndarray) -> np.ndarray:
    """``g(u)`` for ``u² ≥ 15ν`` from ``log u``, without cancellation or overflow."""
    # With x = ν/(ν + u²) <= 1/16, I_x(ν/2, ½)'s hypergeometric series gives
    # g = √ν·x^((ν−1)/2)/(ν·B(ν/2, ½))·[1/(ν − 1) + Σ_{k≥1} c_{k−1} x^k/(ν + 2k)],
    # c_0 = 1, c_j = c_{j−1}(ν/2 + j − ½)/(ν/2 + j): positive terms, prefactor from logs.
    log_w2 = np.log(nu) - 2.0 * log_u  # log(ν/u²) <= log(1/15)
    log_x = log_w2 - np.log1p(np.exp(log_w2))
    x = np.exp(log_x)
    series = 1.0 / (nu - 1.0)
    coef = np.ones_like(nu)
    power = np.ones_like(nu)
    for k in range(1, _FAR_TERMS + 1):
        power = power * x
        series = series + coef * power / (nu + 2.0 * k)
        coef = coef * (0.5 * nu + k - 0.5) / (0.5 * nu + k)
    log_g = (
        _log_gamma_ratio(0.5 * nu)
        - 0.5 * np.log(nu * math.pi)
        + 0.5 * (nu - 1.0) * log_x
        + np.log(series)
    )
    return np.exp(log_g)


def student_t_expected_improvement(mean: Any, scale: Any, dof: Any, baseline: Any) -> Any:
    """Expected improvement ``E[(X − v)^+]`` of ``X = mean + scale·T``, ``T ~ t_dof``.

    ``scale = 0`` gives ``(mean − v)^+`` exactly; always ``EI ≥ (mean − v)^+``.

    Parameters
    ----------
    mean, scale, dof, baseline : torch.Tensor, numpy.ndarray or float
        Broadcastable, finite, ``scale >= 0``, ``dof > 1``; tensors on one device.

    Returns
    -------
    torch.Tensor or numpy.ndarray
        The broadcast shape: a tensor (promoted float dtype, else float64) if any input is
        one, else a float64 array.

    Raises
    ------
    ValueError, TypeError
        A non-finite or non-numeric input, ``scale < 0``, ``dof <= 1``, shapes that do not
        broadcast, or tensors on different devices.

    Examples
    --------
    >>> round(float(student_t_expected_improvement(0.0, 1.0, 3.0, 0.0)), 12)  # √3/π
    0.551328895422
    >>> float(student_t_expected_improvement(2.0, 0.0, 5.0, 0.5))
    1.5
    """
    args = {"mean": mean, "scale": scale, "dof": dof, "baseline": baseline}
    for name, value in args.items():
        if not is_torch(value):
            args[name] = check_finite_array(value, name)
    like, arrays = _to_host(args)
    check_ei_values(arrays, "scale")
    if np.any(arrays["dof"] <= 1):
        raise ValueError(f"dof must be > 1, got a minimum of {arrays['dof'].min()}")
    return _evaluate(like, arrays)


def student_t_ei_unchecked(mean: Any, scale: Any, dof: Any, baseline: Any) -> Any:
    """:func:`student_t_expected_improvement` of a posterior's own predictive: no finiteness,
    ``scale >= 0`` or ``dof > 1`` checks."""
    args = {"mean": mean, "scale": scale, "dof": dof, "baseline": baseline}
    return _evaluate(*_to_host(args))


def _to_host(args: dict[str, Any]) -> tuple[Any, dict[str, np.ndarray]]:
    """``(like, arrays)``: the inputs as float64 host arrays, and ``(torch, device, dtype)`` of
    the tensors among them (``None`` if there are none), checked real and on one device."""
    like: Any = torch_ei_inputs(args) if any(is_torch(x) for x in args.values()) else None
    arrays = {
        name: value.detach().to("cpu", like[0].float64).numpy()
        if is_torch(value)
        else np.asarray(value, dtype=np.float64)
        for name, value in args.items()
    }
    return like, arrays


def _evaluate(like: Any, arrays: dict[str, np.ndarray]) -> Any:
    """The EI of the broadcast host arrays, as a tensor of ``like`` (unless ``None``)."""
    m, s, nu, v = broadcast_named(arrays)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore", under="ignore"):
        d = m - v  # ±inf only where |m − v| exceeds the largest float: then so does EI
        positive = s > 0
        s_safe = np.where(positive, s, 1.0)
        gap = np.abs(d)
        # log|m − v| even where m − v overflows (from the halves, which never do).
        log_gap = np.where(
            np.isfinite(gap), np.log(gap), np.log(np.abs(0.5 * m - 0.5 * v)) + math.log(2.0)
        )
        tail = s_safe * _upper_tail_ei(gap / s_safe, log_gap - np.log(s_safe), nu)
        out = np.where(positive, np.maximum(d, 0.0) + tail, np.maximum(d, 0.0))
    if like is None:
        return np.asarray(out)
    torch, device, dtype = like
    return torch.as_tensor(out, dtype=dtype).to(device)
