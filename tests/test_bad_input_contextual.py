"""Bad input never poisons a contextual posterior: sizes that cannot fit are refused up front,
overflowing updates are refused before any state changes, EI stays finite on finite input,
and every refusal names the argument."""

from __future__ import annotations

import math
import signal
import subprocess
import sys

import gymnasium as gym
import mpmath
import numpy as np
import pytest
import torch

import delight_gym  # noqa: F401  (registers the envs)
from delight_gym import cli
from delight_gym.agents.contextual import make_contextual_agent
from delight_gym.envs.bandits import BernoulliBanditEnv
from delight_gym.envs.contextual import (
    NeuralBanditEnv,
    NeuralBanditVectorEnv,
    WheelBanditVectorEnv,
    check_neural_arms,
    wheel_means,
)
from delight_gym.envs.linear import LinearBanditEnv
from delight_gym.posteriors.bandit_ensemble import BanditEnsemblePosterior
from delight_gym.posteriors.gaussian import (
    gaussian_expected_improvement,
    log_gaussian_expected_improvement,
)
from delight_gym.posteriors.linfull import LinFullPosterior
from delight_gym.posteriors.neural_linear import NeuralLinearPosterior
from delight_gym.posteriors.student_t import student_t_expected_improvement

HUGE = 10**12


def _gens(batch: int, seed: int = 0) -> list[torch.Generator]:
    return [torch.Generator().manual_seed(seed + i) for i in range(batch)]


# -- sizes that cannot fit ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("build", "name"),
    [
        (lambda: gym.make("BernoulliBandit-v0", num_arms=HUGE), "num_arms"),
        (lambda: BernoulliBanditEnv(num_arms=HUGE), "num_arms"),
        (lambda: gym.make("LinearBandit-v0", num_arms=HUGE), "num_arms"),
        (lambda: LinearBanditEnv(num_arms=10**6, dim=10**6), "num_arms"),
        (lambda: gym.make("NeuralBandit-v0", num_arms=HUGE), "num_arms"),
        (lambda: NeuralBanditEnv(num_arms=10**9), "num_arms"),
        (lambda: NeuralBanditEnv(num_arms=10**6, dim=10**6), "dim"),
        (lambda: NeuralBanditVectorEnv(num_envs=10**6, num_arms=10**4), "num_envs"),
        (lambda: WheelBanditVectorEnv(num_envs=10**9), "num_envs"),
        (lambda: LinFullPosterior(1, 10**9, 10), "num_groups"),
        (lambda: LinFullPosterior(1, 1, 10**6), "input_dim"),
        (
            lambda: BanditEnsemblePosterior(1, 2, 3, generators=_gens(1), num_heads=10**9),
            "num_heads",
        ),
        (
            lambda: NeuralLinearPosterior(1, 10**9, 3, generators=_gens(1), hidden_sizes=(50,)),
            "num_groups",
        ),
        (
            lambda: make_contextual_agent("uniform", 1, 10**10, 20, per_arm=False, seed=0),
            "num_arms",
        ),
        (lambda: check_neural_arms(10**10, "--arms"), "--arms"),
    ],
)
def test_sizes_that_cannot_fit_are_refused_up_front(build, name):
    with pytest.raises(ValueError, match=rf"{name}=\d+.* would need .*iB") as info:
        build()
    assert name in str(info.value)


def test_cli_refuses_arms_that_cannot_fit_without_a_traceback(tmp_path, monkeypatch):
    # The neural-width family's --arms check, as the command line calls it.
    with pytest.raises(ValueError, match=r"--arms=1000000000000 .*would need"):
        check_neural_arms(HUGE, "--arms")
    assert check_neural_arms(1000, "--arms") == 1000


# -- huge finite rewards or inputs --------------------------------------------------------------


def _linfull_state(p: LinFullPosterior) -> dict[str, torch.Tensor]:
    names = ("gram", "moment", "sum_squares", "count", "loc", "whitener", "shape", "rate")
    return {n: getattr(p, n).clone() for n in names}


@pytest.mark.parametrize(
    ("dtype", "bad_target", "bad_input"),
    [(torch.float64, 1e200, 1e155), (torch.float32, 1e20, 1e20)],
)
def test_linfull_refuses_overflowing_updates_and_stays_unchanged(dtype, bad_target, bad_input):
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(2, 3, generator=gen, dtype=dtype)
    g = torch.tensor([0, 1])
    y = torch.randn(2, generator=gen, dtype=dtype)
    p, ref = LinFullPosterior(2, 2, 3, dtype=dtype), LinFullPosterior(2, 2, 3, dtype=dtype)
    p.update(x, g, y)
    ref.update(x, g, y)
    before = _linfull_state(p)
    for inputs, targets, name in (
        (x, torch.tensor([bad_target, 0.0], dtype=dtype), "targets"),
        (torch.full_like(x, bad_input), y, "inputs"),
    ):
        with pytest.raises(ValueError, match=name):
            p.update(inputs, g, targets)
        after = _linfull_state(p)
        assert all(torch.equal(before[k], after[k]) for k in before)
    # A refit that fails restores the posterior too.
    with pytest.raises(ValueError, match="targets"):
        p.refit(x[:, None], g[:, None], torch.tensor([[bad_target], [0.0]], dtype=dtype))
    assert all(torch.equal(before[k], v) for k, v in _linfull_state(p).items())
    p.update(x, g, 2 * y)
    ref.update(x, g, 2 * y)
    assert all(
        torch.equal(a, b)
        for a, b in zip(_linfull_state(p).values(), _linfull_state(ref).values(), strict=True)
    )


def test_linfull_accumulated_overflow_is_refused_unchanged():
    p = LinFullPosterior(1, 1, 1)
    x = torch.ones(1, 1, dtype=torch.float64)
    g = torch.zeros(1, dtype=torch.int64)
    p.update(x, g, torch.tensor([1.3e154], dtype=torch.float64))
    before = _linfull_state(p)
    with pytest.raises(ValueError, match="targets"):
        p.update(x, g, torch.tensor([1.3e154], dtype=torch.float64))  # the sum overflows
    assert all(torch.equal(before[k], v) for k, v in _linfull_state(p).items())


def _nl_state(p: NeuralLinearPosterior) -> list[torch.Tensor]:
    return [
        *(t.detach().clone() for t in p.network.parameters()),
        *_linfull_state(p.regression).values(),
        p.data.inputs.clone(),
        p.data.targets.clone(),
        torch.tensor([p.num_updates, p.trainings, p.sgd_steps]),
        *(g.get_state() for g in p.generators),
    ]


def test_neural_linear_refuses_huge_rewards_unchanged():
    kw = {"hidden_sizes": (4,), "train_every": 2, "train_steps": 2, "train_batch_size": 4}
    p = NeuralLinearPosterior(2, 2, 3, generators=_gens(2), **kw)
    ref = NeuralLinearPosterior(2, 2, 3, generators=_gens(2), **kw)
    gen = torch.Generator().manual_seed(1)
    x = torch.randn(2, 3, generator=gen, dtype=torch.float64)
    g = torch.tensor([0, 1])
    y = torch.randn(2, generator=gen, dtype=torch.float64)
    p.update(x, g, y)
    ref.update(x, g, y)
    before = _nl_state(p)
    for inputs, targets, name in (
        (x, torch.tensor([1e200, 0.0], dtype=torch.float64), "targets"),
        (torch.full_like(x, 1e155), y, "inputs"),
    ):
        with pytest.raises(ValueError, match=name):  # the next update retrains
            p.update(inputs, g, targets)
        assert all(torch.equal(a, b) for a, b in zip(before, _nl_state(p), strict=True))
    for _ in range(2):  # a retraining, then a plain update
        p.update(x, g, y)
        ref.update(x, g, y)
    assert all(torch.equal(a, b) for a, b in zip(_nl_state(p), _nl_state(ref), strict=True))


def _ens_state(p: BanditEnsemblePosterior) -> list[torch.Tensor]:
    return [
        *(t.detach().clone() for t in p.network.parameters()),
        p.data.inputs.clone(),
        p.data.targets.clone(),
        *(g.get_state() for g in p.generators),
    ]


def test_bandit_ensemble_refuses_huge_rewards_unchanged():
    p = BanditEnsemblePosterior(2, 2, 3, generators=_gens(2), num_heads=3, hidden_sizes=(4,))
    ref = BanditEnsemblePosterior(2, 2, 3, generators=_gens(2), num_heads=3, hidden_sizes=(4,))
    x = torch.randn(2, 3, generator=torch.Generator().manual_seed(2))
    g = torch.tensor([0, 1])
    y = torch.tensor([0.5, -0.5])
    p.update(x, g, y)
    ref.update(x, g, y)
    before = _ens_state(p)
    with pytest.raises(ValueError, match="targets"):
        p.update(x, g, torch.tensor([3e38, 0.0]))
    assert all(torch.equal(a, b) for a, b in zip(before, _ens_state(p), strict=True))
    p.update(x, g, y)
    ref.update(x, g, y)
    assert all(torch.equal(a, b) for a, b in zip(_ens_state(p), _ens_state(ref), strict=True))
    assert all(bool(torch.isfinite(t).all()) for t in p.network.parameters())


def test_agent_update_with_huge_reward_is_refused_unchanged():
    agent = make_contextual_agent("delight-linfull", 2, 3, 2, per_arm=True, seed=0)
    x = torch.randn(2, 3, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    a = agent.act(x)
    before = _linfull_state(agent.posterior)
    with pytest.raises(ValueError, match="targets"):
        agent.update(x, a, torch.tensor([1e200, 0.0], dtype=torch.float64))
    assert all(torch.equal(before[k], v) for k, v in _linfull_state(agent.posterior).items())
    assert agent.t == 0


# -- EI on extreme finite input -----------------------------------------------------------------


def _g_reference(u: float, nu: float) -> mpmath.mpf:
    """``E[(T − u)^+]``, ``T ~ t_ν``, in 60-digit mpmath from the closed form (incomplete beta
    on the side that does not cancel)."""
    with mpmath.workdps(60):
        u, nu = mpmath.mpf(u), mpmath.mpf(nu)
        log_c = (
            mpmath.loggamma((nu + 1) / 2) - mpmath.loggamma(nu / 2) - mpmath.log(nu * mpmath.pi) / 2
        )
        density = mpmath.exp(log_c - (nu + 1) / 2 * mpmath.log1p(u * u / nu))
        x = nu / (nu + u * u)
        survival = mpmath.betainc(nu / 2, mpmath.mpf(1) / 2, 0, x, regularized=True) / 2
        return (nu + u * u) / (nu - 1) * density - u * survival


@pytest.mark.parametrize("nu", [1 + 1e-12, 1 + 1e-6, 1.01, 1.5, 3.0, 30.0, 1e3, 1e6, 1e12])
def test_student_t_ei_matches_mpmath_up_to_the_largest_floats(nu):
    for u in (4 * math.sqrt(nu), 1e3 * math.sqrt(nu), 1e20, 1e100, 1e154, 1e200, 1e300, 1.7e308):
        if u * u / nu < 15:
            continue
        ref = _g_reference(u, nu)
        got = float(student_t_expected_improvement(-u, 1.0, nu, 0.0))
        assert math.isfinite(got)
        if ref < mpmath.mpf("1e-300"):
            assert got <= 1e-290
        else:
            assert abs(got - ref) <= 1e-12 * ref, (nu, u, got, ref)


@pytest.mark.parametrize(("nu", "u"), [(1.5, 1e6), (3.0, 10.0), (7.3, 40.0), (30.0, 30.0)])
def test_student_t_ei_matches_quadrature(nu, u):
    with mpmath.workdps(30):
        log_c = (
            mpmath.loggamma((nu + 1) / 2) - mpmath.loggamma(nu / 2) - mpmath.log(nu * mpmath.pi) / 2
        )

        def density(t):
            return mpmath.exp(log_c - (nu + 1) / 2 * mpmath.log1p(t * t / nu))

        points = [0] + [mpmath.mpf(10) ** k for k in range(-12, 61)] + [mpmath.inf]
        ref = u * u * mpmath.quad(lambda s: s * density(u * (1 + s)), points)
    got = float(student_t_expected_improvement(-u, 1.0, nu, 0.0))
    assert abs(got - ref) <= 1e-6 * ref


@pytest.mark.parametrize("nu", [1 + 1e-9, 3.0, 1e12])
@pytest.mark.parametrize(
    ("mean", "scale", "baseline"),
    [
        (1.0, 1e-300, 0.0),
        (-1.0, 1e-300, 0.0),
        (1e308, 1.0, 0.0),
        (-1e308, 1.0, 1e308),
        (1e308, 1e-10, -1e308),
        (1e300, 1e-300, 0.0),
    ],
)
def test_ei_at_extreme_ratios_is_its_limit(nu, mean, scale, baseline):
    limit = max(mean - baseline, 0.0)  # inf where mean − baseline itself overflows
    t = float(student_t_expected_improvement(mean, scale, nu, baseline))
    gauss = float(gaussian_expected_improvement(mean, scale, baseline))
    for got in (t, gauss):
        assert not math.isnan(got)
        assert got >= limit
        if math.isfinite(limit) and limit > 0:
            assert got == pytest.approx(limit, rel=1e-12)
    # Below the baseline the Student-t tail is tiny but exact: s·g(u) with no NaN.
    assert not math.isnan(float(log_gaussian_expected_improvement(mean, scale, baseline)))


def test_student_t_ei_far_below_the_baseline_near_one_dof():
    # d = −1, s = 1e-300: EI = s·g(1e300) with g(u) ≈ u^(1−ν)/(ν(ν−1))·c, far from 0 at ν ≈ 1.
    got = float(student_t_expected_improvement(-1.0, 1e-300, 1 + 1e-6, 0.0))
    ref = mpmath.mpf(1e-300) * _g_reference(1e300, 1 + 1e-6)
    assert abs(got - ref) <= 1e-12 * ref


# -- the predictives' baseline ------------------------------------------------------------------


def _predictives():
    x = torch.randn(2, 3, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(4))
    linfull = LinFullPosterior(2, 3, 2).predictive(x)
    ens = BanditEnsemblePosterior(2, 3, 2, generators=_gens(2), num_heads=3, hidden_sizes=(4,))
    nl = NeuralLinearPosterior(2, 3, 2, generators=_gens(2), hidden_sizes=(4,))
    return [linfull, ens.predictive(x.float()), nl.predictive(x)]


@pytest.mark.parametrize("index", [0, 1, 2])
def test_predictive_ei_checks_its_baseline(index):
    pred = _predictives()[index]
    for bad in (torch.tensor([math.nan, 0.0]), torch.tensor([0.0, math.inf])):
        with pytest.raises(ValueError, match="baseline"):
            pred.expected_improvement(bad)
    with pytest.raises(ValueError, match="baseline must have shape"):
        pred.expected_improvement(torch.zeros(3))
    rows = torch.tensor([1])
    with pytest.raises(ValueError, match="baseline must have shape"):
        pred.expected_improvement(torch.zeros(2), rows)
    full = pred.expected_improvement(torch.zeros(2))
    for same in (0.0, torch.tensor(0.0), torch.zeros(2, 1)):
        assert torch.equal(pred.expected_improvement(same), full)
    assert torch.equal(pred.expected_improvement(torch.zeros(1), rows), full[1:])


# -- arguments accepted silently ----------------------------------------------------------------


def test_a0_below_one_half_is_refused():
    for build in (
        lambda a0: LinFullPosterior(1, 1, 1, a0=a0),
        lambda a0: NeuralLinearPosterior(1, 1, 1, generators=_gens(1), a0=a0),
        lambda a0: make_contextual_agent("delight-linfull", 1, 2, 1, per_arm=True, seed=0, a0=a0),
    ):
        for a0 in (0.5, 0.4, 1e-3):
            with pytest.raises(ValueError, match=r"a0 must be > 0\.5 .*degrees of freedom"):
                build(a0)
    LinFullPosterior(1, 1, 1, a0=0.51)


def test_wheel_means_checks_its_arguments():
    with pytest.raises(ValueError, match="contexts"):
        wheel_means(np.array([[math.nan, 0.0]]), 0.5)
    with pytest.raises(ValueError, match="contexts"):
        wheel_means(np.zeros((2, 3)), 0.5)
    with pytest.raises(ValueError, match="delta"):
        wheel_means(np.zeros((1, 2)), 2)
    with pytest.raises(ValueError, match="mean_large"):
        wheel_means(np.zeros((1, 2)), 0.5, mean_large=math.inf)


def test_agents_refuse_keywords_of_another_posterior():
    with pytest.raises(TypeError, match="lambda_prior"):
        make_contextual_agent("uniform", 1, 2, 1, per_arm=True, seed=0, lambda_prior=0.5)
    with pytest.raises(TypeError, match="hidden_sizes"):
        make_contextual_agent("delight-linfull", 1, 2, 1, per_arm=True, seed=0, hidden_sizes=(8,))
    with pytest.raises(TypeError, match="lambda_prior"):
        make_contextual_agent("thompson-ensemble", 1, 2, 1, per_arm=True, seed=0, lambda_prior=1.0)


@pytest.mark.parametrize("name", ["delight-neurallinear", "thompson-ensemble"])
def test_hidden_sizes_as_one_int_names_the_argument(name):
    with pytest.raises(TypeError, match="hidden_sizes must be a sequence"):
        make_contextual_agent(name, 1, 2, 1, per_arm=True, seed=0, hidden_sizes=8)


# -- Ctrl-C -------------------------------------------------------------------------------------


def test_ctrl_c_prints_one_line_and_exits_130(tmp_path, monkeypatch, capsys):
    from delight_gym.experiments import runner

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(runner, "run_experiment", interrupted)
    code = cli.main(
        [
            "run",
            "bernoulli",
            "--arms",
            "5",
            "--horizon",
            "3",
            "--seeds",
            "2",
            "--no-plot",
            "--no-progress",
            "--out",
            str(tmp_path),
        ]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 130
    assert len(err) == 1
    assert "0 of " in err[0] and "run the same command again to resume" in err[0]


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_ctrl_c_in_a_real_run_has_no_traceback(tmp_path):
    command = [
        sys.executable,
        "-m",
        "delight_gym.cli",
        "run",
        "bernoulli",
        "--arms",
        "10",
        "--horizon",
        "100000000",
        "--seeds",
        "2",
        "--jobs",
        "1",
        "--no-plot",
        "--no-progress",
        "--out",
        str(tmp_path),
    ]
    proc = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    try:
        proc.wait(timeout=8)  # imports, then the long cell starts
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert "run the same command again to resume" in err
