"""The fresh probe set's bad input to DE's candidate sets, engines and command line
(benchmarks/probe_bad_input.py): a clear error naming the argument, or the right answer."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from fractions import Fraction

import numpy as np
import pytest
from gymnasium import spaces

from delight_gym import DelightExplorationWrapper
from delight_gym._checks import check_positive_float
from delight_gym.de.candidates import (
    MAX_POSTERIOR_CALLS,
    CandidateDelight,
    CategoricalHost,
    GaussianProposalHost,
    HostSamples,
    PosteriorArgmax,
    UniformProposals,
)
from delight_gym.de.posterior import PosteriorValues
from delight_gym.de.rule import check_gate_settings, epsilon_schedule

OBS, ACT = spaces.Box(-1.0, 1.0, (3,)), spaces.Box(-1.0, 1.0, (2,))
SMALL = {"num_heads": 2, "hidden_sizes": (8,)}


def _values(s, a, r):
    return np.zeros(np.asarray(a).shape[:2])


def _engine(host=lambda o: np.tanh(np.asarray(o, dtype=np.float64)[..., :2]), **kw):
    kw.setdefault("posterior_kwargs", SMALL)
    return DelightExplorationWrapper(host, observation_space=OBS, action_space=ACT, seed=0, **kw)


def test_memory_size_is_the_soft_address_space_limit_when_lower():
    code = (
        "import resource; from delight_gym._checks import memory_size, check_would_fit\n"
        "before = memory_size()\n"
        "hard = resource.getrlimit(resource.RLIMIT_AS)[1]\n"
        "resource.setrlimit(resource.RLIMIT_AS, (2**33, hard))\n"
        "print(before, memory_size())\n"
        "try:\n    check_would_fit(2**33 + 1, 'n=9')\nexcept ValueError as e:\n    print(e)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    before, after = map(int, out.stdout.splitlines()[0].split())
    assert before == os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    assert after == min(before, 2**33)
    assert out.stdout.splitlines()[1].startswith("n=9 would need"), out.stdout + out.stderr


def test_proposers_check_n_and_its_bytes_and_the_box():
    rng, host = np.random.default_rng(0), GaussianProposalHost(ACT)
    for n, error in ((10**10, ValueError), (-1, ValueError), (2.5, TypeError)):
        with pytest.raises(error, match=r"^n\b"):
            host.sample(None, np.zeros((1, 2)), n, rng)
    for n, error in ((10**10, ValueError), (2.5, TypeError)):
        with pytest.raises(error, match=r"^n\b"):
            UniformProposals(ACT).propose(None, np.zeros((1, 2)), n, rng)
    with pytest.raises(ValueError, match="n_random=10000000000 would need"):
        PosteriorArgmax(ACT, _values, n_random=10**10).propose(None, np.zeros((1, 2)), 1, rng)
    cat = CategoricalHost(lambda s: np.full((1, 3), 1 / 3))
    with pytest.raises(ValueError, match=r"^n=10000000000 would need"):
        cat.sample(np.zeros((1, 1)), np.zeros(1, dtype=np.int64), 10**10, rng)
    for k in (-1, 0):
        with pytest.raises(ValueError, match=r"^k must be >= 1"):
            cat.top_actions(np.zeros((1, 1)), k)
    huge = spaces.Box(-1e308, 1e308, (2,), dtype=np.float64)
    for make in (GaussianProposalHost, UniformProposals):
        with pytest.raises(ValueError, match="space must have finite bounds and range"):
            make(huge)
    narrow = GaussianProposalHost(ACT, 0.01)
    for outside in (np.full((1, 2), 5.0), np.array([[0.0, np.nan]])):
        with pytest.raises(ValueError, match="host_actions gave"):
            narrow.log_weight(None, outside, np.zeros((1, 3, 2)))
        with pytest.raises(ValueError, match="host_actions gave"):
            narrow.sample(None, outside, 3, rng)
    # valid input: the same draws as before the checks
    draws = host.sample(None, np.zeros((2, 2)), 3, np.random.default_rng(1))
    assert draws.shape == (2, 3, 2) and np.all(np.abs(draws) <= 1.0)


def test_posterior_calls_per_decision_are_bounded_at_construction():
    host = GaussianProposalHost(ACT)
    zero_ei = lambda s, c: np.zeros(np.asarray(c).shape[:2])  # noqa: E731
    argmax = PosteriorArgmax(ACT, _values, n_random=1)
    with pytest.raises(ValueError, match=r"proposals\[0\] n: 10000000 .*MAX_POSTERIOR_CALLS"):
        CandidateDelight(ACT, host, zero_ei, [(argmax, 10**7)])
    pairs = [(HostSamples(host), 10**6), (argmax, MAX_POSTERIOR_CALLS), (argmax, 1)]
    with pytest.raises(ValueError, match=rf"proposals\[2\] n: {MAX_POSTERIOR_CALLS + 1} "):
        CandidateDelight(ACT, host, zero_ei, pairs)
    CandidateDelight(ACT, host, zero_ei, pairs[:2])  # host draws do not count; the bound does
    with pytest.raises(ValueError, match="n_posterior: 10000000 posterior proposals"):
        _engine(n_posterior=10**7)


def test_epsilon_schedule_of_huge_values_and_normal_settings():
    for m, t in ((1e308, 1e308), (1.7e308, 1e308), (1e308, 1.79e308)):
        exact = float(Fraction(m) / (Fraction(m) + Fraction(t)))
        assert epsilon_schedule(t, m) == pytest.approx(exact, rel=4e-16)  # two roundings
    t = np.array([1e308, 1.0, 12.0])
    out = epsilon_schedule(t, 1e308)
    assert out[0] == 0.5 and out[1] == 1e308 / (1e308 + 1.0) and out[2] == 1e308 / (1e308 + 12.0)
    assert np.array_equal(epsilon_schedule(t[1:], 3.0), 3.0 / (3.0 + t[1:]))  # no overflow
    tiny = float(np.finfo(float).tiny)
    assert check_positive_float(tiny, "x") == tiny
    for bad in (1e-320, 5e-324, tiny / 2):
        with pytest.raises(ValueError, match=r"half_life must be at least 2.23e-308"):
            epsilon_schedule(1, bad)
        with pytest.raises(ValueError, match="surprisal_cap must be at least"):
            check_gate_settings(0.1, bad)
        with pytest.raises(ValueError, match="half_life must be at least"):
            CandidateDelight(ACT, GaussianProposalHost(ACT), _values, [(UniformProposals(ACT), 2)],
                             half_life=bad)  # fmt: skip


def test_predict_refuses_observations_that_are_not_numbers():
    engine = _engine()
    for obs in (np.array(["a", "b", "c"]), np.array([1.0, None, 2.0], dtype=object)):
        with pytest.raises(TypeError, match="observation must be numbers, got dtype"):
            engine.predict(obs)
    with pytest.raises(ValueError, match="observation must have shape"):
        engine.predict(np.zeros(4))
    assert engine.predict(np.zeros(3))[0].shape == (2,)


def _rewrite(src, dst, replace):
    with zipfile.ZipFile(src) as a, zipfile.ZipFile(dst, "w") as b:
        for item in a.namelist():
            b.writestr(item, replace.get(item, a.read(item)))


def test_load_names_the_path_and_the_damaged_part(tmp_path):
    from stable_baselines3 import TD3

    engine = DelightExplorationWrapper(
        np.tanh, observation_space=ACT, action_space=ACT, seed=0, posterior_kwargs=SMALL
    )
    del engine.n_host
    engine.save(tmp_path / "attr.zip")
    with pytest.raises(ValueError, match=r"attr.zip: its engine.pkl cannot be loaded.*n_host"):
        DelightExplorationWrapper.load(tmp_path / "attr.zip")
    engine = DelightExplorationWrapper(
        np.tanh, observation_space=ACT, action_space=ACT, seed=0, posterior_kwargs=SMALL
    )
    engine.save(tmp_path / "e.zip")
    missing = b"\x80\x04\x8c\x0bno_such_mod\x94\x8c\x01X\x94\x93\x94."
    _rewrite(tmp_path / "e.zip", tmp_path / "mod.zip", {"engine.pkl": missing})
    with pytest.raises(ValueError, match=r"mod.zip: its engine.pkl cannot be loaded.*no_such_mod"):
        DelightExplorationWrapper.load(tmp_path / "mod.zip")
    engine.rng = 7
    engine.save(tmp_path / "rng.zip")
    with pytest.raises(ValueError, match=r"rng.zip: its engine's rng"):
        DelightExplorationWrapper.load(tmp_path / "rng.zip")
    model = TD3("MlpPolicy", "Pendulum-v1", policy_kwargs={"net_arch": [8]})
    DelightExplorationWrapper(model, seed=0, posterior_kwargs=SMALL).save(tmp_path / "m.zip")
    for cls in (b"no_such_module:X", b"collections:OrderedDict", b"stable_baselines3:nothing"):
        _rewrite(tmp_path / "m.zip", tmp_path / "cls.zip", {"model_class.txt": cls})
        with pytest.raises(
            ValueError, match=r"cls.zip: its model_class.txt names .*stable_baselines3"
        ):
            DelightExplorationWrapper.load(tmp_path / "cls.zip")
    with zipfile.ZipFile(tmp_path / "m.zip") as z:
        data = z.read("model.zip")
    _rewrite(tmp_path / "m.zip", tmp_path / "cut.zip", {"model.zip": data[: len(data) // 3]})
    with pytest.raises(ValueError, match=r"cut.zip: its model.zip is damaged"):
        DelightExplorationWrapper.load(tmp_path / "cut.zip")
    loaded = DelightExplorationWrapper.load(tmp_path / "m.zip")
    assert type(loaded.host.model) is TD3


CLI = [
    (["neural-width", "--dim", "1000000000"], "--dim"),
    (["neural-width", "--context-dim", "1000000000"], "--context-dim"),
    (["neural-width", "--context-dim", "100000000"], "--context-dim"),
    (["neural-width", "--noise", "1e200"], "--noise"),
    (["continuum", "--needle-width", "1e-200"], "--needle-width"),
    (["continuum", "--needle-width", "1e200"], "--needle-width"),
    (["continuum", "--dim", "2", "--needle-width", "1e150"], "--needle-width"),  # x √2
    (["continuum", "--half-life", "1e-320"], "--half-life"),
    (["continuum", "--dim", "1,,2"], "--dim"),
]


@pytest.mark.parametrize(("argv", "option"), CLI, ids=[" ".join(c[0]) for c in CLI])
def test_cli_refuses_before_running(tmp_path, argv, option):
    out = subprocess.run(
        [sys.executable, "-m", "delight_gym.cli", "run", *argv, "--out", str(tmp_path / "o")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
    last = out.stderr.strip().splitlines()[-1]
    assert "error:" in last and option in last, out.stderr


class _Posterior:
    """A posterior whose checked ``evaluate`` must not run on the engine path."""

    num_actions = 2

    def mean(self, observations):
        return np.zeros((len(observations), 2))

    def expected_improvement(self, observations, baseline):
        return np.ones((len(observations), 2))

    def update(self, *args, **kwargs):
        pass

    def evaluate(self, observations, host_probs, baseline="host"):
        raise AssertionError("the engine checked host_probs: evaluate_unchecked is enough")

    def evaluate_unchecked(self, observations, host_probs, baseline="host"):
        n = len(observations)
        return PosteriorValues(np.zeros((n, 2)), np.zeros(n), np.ones((n, 2)))


def test_discrete_engine_checks_host_probabilities_once():
    engine = DelightExplorationWrapper(
        lambda obs: np.tile([0.9, 0.1], (len(obs), 1)),
        posterior=_Posterior(),
        observation_space=spaces.Discrete(3),
        action_space=spaces.Discrete(2),
        seed=0,
    )
    engine.predict(np.array([0, 1]))
    assert engine.last_info["expected_improvement"].tolist() == [[1.0, 1.0], [1.0, 1.0]]
    with pytest.raises(TypeError, match="observation must be numbers"):
        engine.predict(np.array(["a"]))
