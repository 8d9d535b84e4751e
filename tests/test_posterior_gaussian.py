"""Tests of ``delight_gym.posteriors.gaussian``: Gaussian expected improvement, plain and
log-space, on numpy (no torch) and on torch tensors.

References:

* EI: ``scipy.integrate.quad`` of ``(x - v)·pdf(x)`` over ``x > v`` (written as
  ``s ∫_0^∞ w φ(w - z) dw`` with ``x = v + s w``; for ``z <= 0`` the constant ``φ(z)`` is
  factored out so the integrand does not underflow); it agrees with the 50-digit mpmath value
  of ``s (φ(z) + zΦ(z))`` to ``~6e-16``;
* log EI: mpmath at 50 digits (plus ``2 log10|z|`` guard digits for the cancellation of
  ``φ(z) + zΦ(z)``), and the asymptotic series ``φ(u)/u² (1 - 3/u² + 15/u⁴ - …)`` for
  ``u = -z >= 1e3``, where mpmath's ``erfc`` overflows.

Tolerances (the promises of the module): EI ``1e-10`` relative where ``EI > 1e-300`` (measured
``1.3e-13``); log EI ``1e-12 · max(1, |log EI|)`` in float64 (measured ``7e-16``) and
``2e-6 · max(1, |log EI|)`` in float32 (measured ``4e-7``). The numpy and torch paths run the
same code and agree to 4 ulps in float64.
"""

from __future__ import annotations

import math
import subprocess
import sys

import mpmath as mp
import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate

from delight_gym.posteriors.gaussian import (
    gaussian_expected_improvement,
    log_gaussian_expected_improvement,
)

DPS = 50
PHI0 = 1.0 / math.sqrt(2.0 * math.pi)


def _h_mp(z: float) -> mp.mpf:
    """``h(z) = φ(z) + zΦ(z)`` to ``DPS`` digits (asymptotic series for ``z <= -1e3``)."""
    with mp.workdps(DPS):
        zz = mp.mpf(z)
        if z <= -1e3:
            inv = 1 / (zz * zz)
            series = 1 - 3 * inv + 15 * inv**2 - 105 * inv**3 + 945 * inv**4 - 10395 * inv**5
            return mp.npdf(zz) * inv * series
    with mp.workdps(DPS + 2 * int(math.log10(abs(z) + 1.0)) + 5):
        zz = mp.mpf(z)
        return +(mp.npdf(zz) + zz * mp.ncdf(zz))


def _log_h_mp(z: float) -> mp.mpf:
    """``log h(z)``; in the deep tail through ``log φ`` so that nothing under/overflows."""
    with mp.workdps(DPS):
        zz = mp.mpf(z)
        if z <= -1e3:
            inv = 1 / (zz * zz)
            series = 1 - 3 * inv + 15 * inv**2 - 105 * inv**3 + 945 * inv**4 - 10395 * inv**5
            return -zz * zz / 2 - mp.log(mp.sqrt(2 * mp.pi)) + mp.log(inv) + mp.log(series)
        return mp.log(_h_mp(z))


def _quad_ei(mean: float, std: float, base: float) -> float:
    """``∫_v^∞ (x - v) pdf(x) dx`` by ``scipy.integrate.quad`` (substituting ``x = v + s w``)."""
    z = (mean - base) / std
    if z <= 0:
        scale = float(mp.npdf(z))  # φ(z), factored out of the integrand

        def f(w: float) -> float:
            return w * math.exp(z * w - 0.5 * w * w)

        top = 60.0 / max(1.0, -z)
        parts = [(0.0, top), (top, np.inf)]
    else:
        scale = PHI0

        def f(w: float) -> float:
            return w * math.exp(-0.5 * (w - z) ** 2)

        parts = [(0.0, z), (z, z + 40.0)]  # beyond z + 40 the integrand is < 1e-340
    total = sum(
        integrate.quad(f, lo, hi, epsabs=0.0, epsrel=1e-13, limit=500)[0] for lo, hi in parts
    )
    return std * scale * total


# ---------------------------------------------------------------------------------------------
# Gaussian EI: accuracy
# ---------------------------------------------------------------------------------------------


def test_ei_against_quadrature() -> None:
    zs = np.concatenate([np.linspace(-37.0, 37.0, 75), [-4.0, -4.0001, -3.9999, 1e-8, -1e-8]])
    worst = 0.0
    for std in (1e-3, 1.0, 7.5):
        for base in (0.0, -2.0):
            means = base + zs * std
            got = gaussian_expected_improvement(means, std, base)
            for m, g in zip(means, got, strict=True):
                ref = _quad_ei(float(m), std, base)
                if ref > 1e-300:
                    worst = max(worst, abs(g / ref - 1.0))
    assert worst <= 1e-10


@pytest.mark.parametrize(
    ("dtype", "tiny", "rtol"), [(torch.float64, 1e-300, 1e-12), (torch.float32, 1e-36, 2e-5)]
)
def test_ei_against_mpmath(dtype: torch.dtype, tiny: float, rtol: float) -> None:
    # float32: exp(-z²/2) of a rounded z² alone costs ~z²/2 ulps (measured 5e-6 at z = -12.5).
    zs = torch.linspace(-38.0, 40.0, 1561, dtype=torch.float64).to(dtype)
    got = gaussian_expected_improvement(zs, 1.0, 0.0)
    assert got.dtype == dtype
    errs = [
        abs(g / float(ref) - 1.0)
        for z, g in zip(zs.tolist(), got.tolist(), strict=True)
        if (ref := _h_mp(z)) > tiny
    ]
    assert max(errs) <= rtol


_DEEP_TAIL_64 = [-1e3, -3e4, -1e6, -1e10, -1e50, -1e100, -1e150]
_DEEP_TAIL_32 = [-1e3, -3e4, -1e6, -1e10, -1e15, -1e19]


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_log_ei_against_mpmath(dtype: torch.dtype) -> None:
    tail = _DEEP_TAIL_64 if dtype == torch.float64 else _DEEP_TAIL_32
    zs = torch.tensor(np.concatenate([np.linspace(-40.0, 40.0, 1601), tail, [1e3, 1e10]]))
    zs = zs.to(dtype)
    got = log_gaussian_expected_improvement(zs, 1.0, 0.0)
    assert got.dtype == dtype
    assert bool(torch.isfinite(got).all())
    rtol = 1e-12 if dtype == torch.float64 else 2e-6
    worst = 0.0
    for z, g in zip(zs.tolist(), got.tolist(), strict=True):
        ref = _log_h_mp(z)
        worst = max(worst, float(abs(g - ref) / max(1, abs(ref))))
    assert worst <= rtol


def test_log_ei_scale_and_overflow() -> None:
    # log EI = log s + log h(z): scales and shifts are exact up to rounding.
    z = torch.linspace(-30.0, 30.0, 61, dtype=torch.float64)
    base = log_gaussian_expected_improvement(z, 1.0, 0.0)
    for s in (1e-200, 1e-5, 3.0, 1e200):
        scaled = log_gaussian_expected_improvement((z + 5.0) * s, s, 5.0 * s)
        assert torch.allclose(scaled, base + math.log(s), rtol=1e-13, atol=1e-12)
    # where z^2 overflows the result is -inf (the true value is below -1e308)
    assert log_gaussian_expected_improvement(-1e160, 1.0, 0.0).item() == -math.inf
    assert log_gaussian_expected_improvement(np.float32(-1e20), np.float32(1.0), 0.0) == -np.inf


def test_log_ei_decides_the_gate_where_float32_ei_underflows() -> None:
    # DE gate L·EI >= λ  <=>  log EI >= log(λ/L). At z = -20 float32 EI is 0 (true ~1e-90).
    z = torch.tensor([-20.0, -20.5, -60.0], dtype=torch.float32)
    ei = gaussian_expected_improvement(z, torch.ones(3), torch.zeros(3))
    log_ei = log_gaussian_expected_improvement(z, torch.ones(3), torch.zeros(3))
    assert ei.dtype == log_ei.dtype == torch.float32
    assert bool((ei == 0).all())
    refs = [float(_log_h_mp(float(v))) for v in z.tolist()]
    assert refs[0] == pytest.approx(-206.9178385, abs=1e-6)
    for got, ref in zip(log_ei.tolist(), refs, strict=True):
        assert abs(got - ref) <= 1e-6 * abs(ref)
        # thresholds log(λ/L) just below / above the true log EI are decided correctly
        assert got >= ref - 1e-3 * abs(ref) and not got >= ref + 1e-3 * abs(ref)
    # the arms are still ranked correctly
    assert log_ei[0] > log_ei[1] > log_ei[2]


# ---------------------------------------------------------------------------------------------
# Gaussian EI: exact special cases, types, broadcasting
# ---------------------------------------------------------------------------------------------


def test_ei_zero_std_and_known_values() -> None:
    m = torch.tensor([2.0, -1.0, 0.5], dtype=torch.float64)
    v = torch.tensor([0.5, 0.0, 0.5], dtype=torch.float64)
    ei = gaussian_expected_improvement(m, torch.zeros(3), v)
    assert ei.dtype == torch.float64 and ei.tolist() == [1.5, 0.0, 0.0]
    log_ei = log_gaussian_expected_improvement(m, torch.zeros(3), v)
    assert log_ei[0].item() == pytest.approx(math.log(1.5), rel=1e-15)
    assert log_ei[1].item() == log_ei[2].item() == -math.inf
    assert gaussian_expected_improvement(0.0, 1.0, 0.0) == pytest.approx(PHI0, rel=1e-15)
    assert gaussian_expected_improvement(1.0, 2.0, 1.0) == pytest.approx(2 * PHI0, rel=1e-15)
    # std far below the gap: EI = m - v to the last bit; tiny std: z overflows to inf
    assert gaussian_expected_improvement(3.0, 1e-12, 1.0) == 2.0
    assert gaussian_expected_improvement(3.0, 1e-320, 1.0) == 2.0
    assert log_gaussian_expected_improvement(3.0, 1e-320, 1.0) == pytest.approx(math.log(2.0))


def test_ei_types_and_broadcasting() -> None:
    out = gaussian_expected_improvement(np.zeros((3, 1)), np.ones((1, 4)), 0.0)
    assert isinstance(out, np.ndarray) and out.shape == (3, 4) and out.dtype == np.float64
    out32 = gaussian_expected_improvement(np.zeros(3, np.float32), np.float32(1.0), 0.0)
    assert out32.dtype == np.float32
    scalar = log_gaussian_expected_improvement(0.0, 1.0, 0.0)
    assert isinstance(scalar, np.ndarray) and scalar.shape == ()
    t = gaussian_expected_improvement(torch.zeros(2, 1, dtype=torch.float32), 1.0, torch.zeros(5))
    assert isinstance(t, torch.Tensor) and t.shape == (2, 5) and t.dtype == torch.float32
    t64 = gaussian_expected_improvement(torch.zeros(2), torch.ones(2, dtype=torch.float64), 0.0)
    assert t64.dtype == torch.float64  # promoted
    ti = gaussian_expected_improvement(torch.zeros(2, dtype=torch.int64), 1.0, 0.0)
    assert ti.dtype == torch.float64
    mixed = gaussian_expected_improvement(torch.zeros(3), np.ones(3, np.float32), [0.0, 1.0, 2.0])
    assert isinstance(mixed, torch.Tensor) and mixed.shape == (3,)


# ---------------------------------------------------------------------------------------------
# Gaussian EI: laws (hypothesis)
# ---------------------------------------------------------------------------------------------

_reals = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)
_stds = st.one_of(st.just(0.0), st.floats(1e-300, 1e-6), st.floats(1e-6, 1e3, allow_nan=False))


def _ei(m: float, s: float, v: float) -> float:
    return float(gaussian_expected_improvement(m, s, v))


def _log_ei(m: float, s: float, v: float) -> float:
    return float(log_gaussian_expected_improvement(m, s, v))


@settings(max_examples=300, deadline=None)
@given(m=_reals, s=_stds, v=_reals)
def test_ei_bounds(m: float, s: float, v: float) -> None:
    ei = _ei(m, s, v)
    gap = max(m - v, 0.0)
    assert ei >= gap  # exact in floating point
    assert ei <= s * PHI0 + gap  # exact in floating point
    if v >= m:
        assert ei <= s * PHI0 <= s  # the paper's "Gaussian EI <= s"


@settings(max_examples=300, deadline=None)
@given(m=_reals, s=_stds, v1=_reals, v2=_reals)
def test_ei_monotone_in_baseline(m: float, s: float, v1: float, v2: float) -> None:
    lo, hi = min(v1, v2), max(v1, v2)
    assert _ei(m, s, lo) >= _ei(m, s, hi) * (1.0 - 1e-13)
    assert _log_ei(m, s, lo) >= _log_ei(m, s, hi) - 1e-13 * max(1.0, abs(_log_ei(m, s, hi)))


@settings(max_examples=300, deadline=None)
@given(m=_reals, s=_stds, v=_reals)
def test_log_ei_is_log_of_ei(m: float, s: float, v: float) -> None:
    ei, log_ei = _ei(m, s, v), _log_ei(m, s, v)
    if ei > 1e-290:
        assert log_ei == pytest.approx(math.log(ei), rel=1e-12, abs=1e-12)
    elif ei == 0.0 and s > 0 and abs(m - v) / s < 1e150:  # beyond, z² overflows: -inf
        assert math.isfinite(log_ei) and log_ei < math.log(1e-290)


@pytest.mark.parametrize("fn", [gaussian_expected_improvement, log_gaussian_expected_improvement])
def test_ei_validation(fn) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match="mean"):
        fn(math.nan, 1.0, 0.0)
    with pytest.raises(ValueError, match="mean"):
        fn(torch.tensor([0.0, math.inf]), 1.0, 0.0)
    with pytest.raises(ValueError, match="std"):
        fn(0.0, -1.0, 0.0)
    with pytest.raises(ValueError, match="std"):
        fn(0.0, torch.tensor([1.0, -1e-30]), 0.0)
    with pytest.raises(ValueError, match="std"):
        fn(0.0, math.inf, 0.0)
    with pytest.raises(ValueError, match="baseline"):
        fn(0.0, 1.0, np.array([0.0, math.nan]))
    with pytest.raises(ValueError, match=r"mean, std and baseline must broadcast.*\(3,\), \(4,\)"):
        fn(np.zeros(3), np.ones(4), 0.0)
    with pytest.raises(ValueError, match=r"mean, std and baseline must broadcast.*\(3,\), \(4,\)"):
        fn(torch.zeros(3), torch.ones(4), 0.0)
    with pytest.raises(TypeError, match="mean"):
        fn("a", 1.0, 0.0)
    with pytest.raises(TypeError, match="std"):
        fn(0.0, torch.tensor([1 + 1j]), 0.0)


# ---------------------------------------------------------------------------------------------
# numpy without torch, torch on tensors
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fn", [gaussian_expected_improvement, log_gaussian_expected_improvement])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_numpy_and_torch_paths_agree(fn, dtype) -> None:  # type: ignore[no-untyped-def]
    z = np.concatenate([np.linspace(-40.0, 40.0, 801), [-4.0, 4.0, 0.0, -1e3, 1e3]]).astype(dtype)
    std = np.array([0.0, 1e-3, 1.0, 7.5], dtype=dtype)[:, None]
    got_np = fn(z * std, std, np.zeros((), dtype))
    got_t = fn(torch.as_tensor(z) * torch.as_tensor(std), torch.as_tensor(std), 0.0)
    assert isinstance(got_np, np.ndarray) and got_np.dtype == dtype
    assert got_t.dtype == torch.from_numpy(np.zeros(1, dtype)).dtype
    ref = got_t.numpy()
    np.testing.assert_array_equal(np.isfinite(got_np), np.isfinite(ref))
    fin = np.isfinite(ref)
    if dtype == np.float64:  # the same operations: a few ulps (erfcx of SciPy vs torch)
        ulp = np.spacing(np.abs(ref[fin]))
        assert np.all(np.abs(got_np[fin] - ref[fin]) <= 4 * ulp + np.finfo(dtype).tiny)
    else:  # SciPy's float32 erfcx runs in double: both within the documented 5e-6 of the truth
        big = fin & (np.abs(ref) > 1e-30)
        np.testing.assert_allclose(got_np[big], ref[big], rtol=1e-5)


def test_numpy_path_does_not_import_torch() -> None:
    code = (
        "import sys\n"
        "from delight_gym.posteriors.gaussian import gaussian_expected_improvement as g\n"
        "from delight_gym.posteriors import TabularValuePosterior\n"
        "assert abs(float(g(0.0, 1.0, 0.0)) - 0.3989422804014327) < 1e-15\n"
        "assert 'torch' not in sys.modules, 'torch was imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
