"""Bad input to the continuous-action API: one test per class, several inputs each.

Each input gets a clear ``ValueError``/``TypeError`` naming its argument, or the right
(finite) answer; nothing is allocated or looped over before sizes are checked.
"""

from __future__ import annotations

import warnings
import zipfile

import numpy as np
import pytest
import torch
from gymnasium import spaces
from hypothesis import given, settings
from hypothesis import strategies as st

from delight_gym import DelightExplorationWrapper
from delight_gym._checks import array_bytes, check_would_fit
from delight_gym.de.candidates import (
    CandidateDelight,
    CategoricalHost,
    GaussianProposalHost,
    HostSamples,
    PosteriorArgmax,
    TopK,
    UniformProposals,
    candidate_rule,
)
from delight_gym.de.options import DelightOptions
from delight_gym.de.rule import delight_rule
from delight_gym.posteriors.q_ensemble import ContinuousQEnsemble, ContinuousTransitions

OBS, ACT = spaces.Box(-1.0, 1.0, (3,)), spaces.Box(-1.0, 1.0, (2,))


def _engine(host=None, **kwargs):
    host = host or (lambda obs: np.zeros((len(obs), 2)))
    return DelightExplorationWrapper(
        host, observation_space=OBS, action_space=ACT, seed=0, **kwargs
    )


def _box_delight(host, ei, sample=None, proposals=None):
    """A CandidateDelight on ACT around ``host`` (a CandidateHost) with EI ``ei``."""
    sample = sample or (lambda s, a, rng: np.zeros(a.shape[:2]))
    proposals = proposals or [(HostSamples(host), 3), (PosteriorArgmax(ACT, sample, 4), 2)]
    return CandidateDelight(ACT, host, ei, proposals)


def _ensemble(**kwargs):
    return ContinuousQEnsemble(OBS, ACT, num_heads=2, hidden_sizes=(8,), seed=0, **kwargs)


def _batch(n=4, reward=0.0):
    rng = np.random.default_rng(0)
    return ContinuousTransitions(
        rng.uniform(-1, 1, (n, 3)),
        rng.uniform(-1, 1, (n, 2)),
        np.full(n, reward),
        rng.uniform(-1, 1, (n, 3)),
        np.zeros(n),
        rng.uniform(-1, 1, (n, 2)),
    )


def test_sizes_are_refused_before_anything_is_allocated():
    for kwargs in ({"n_host": 10**9}, {"n_posterior": 10**9}):
        with pytest.raises(ValueError, match=r"n_host=.*n_posterior=.*would need"):
            _engine(**kwargs)
    host = GaussianProposalHost(ACT)
    with pytest.raises(ValueError, match=r"proposals\[0\] n=1000000000.*would need"):
        _box_delight(host, lambda s, c: 0, proposals=[(HostSamples(host), 10**9)])
    # An action dimension of 1e6 with wide layers: every buffer counted (6 copies of the weights).
    with pytest.raises(ValueError, match=r"act_dim=1000000 would need .*weights"):
        ContinuousQEnsemble(OBS, spaces.Box(-1, 1, (10**6,)), hidden_sizes=(4096,))
    # device=None is torch's default device: the estimate is no longer skipped.
    from delight_gym.posteriors.rff import RFFPosterior

    with pytest.raises(ValueError, match="num_features=1000000 would need"):
        RFFPosterior(1, 2, num_features=10**6, device=None)
    # The estimate adds named buffers and names the largest; sizes are exact Python ints.
    assert array_bytes(10**12, 10**12, itemsize=8) == 8 * 10**24
    with pytest.raises(ValueError, match="the largest buffer, replay"):
        check_would_fit({"replay": 10**15, "weights": 10}, "buffer_size=1e15")


def test_finite_inputs_give_finite_results():
    host = np.array([[0.7, 0.2, 0.1], [0.5, 0.25, 0.25]])
    for ei in (np.full((2, 3), 1e308), np.array([[1e308, 1e308, 3e307], [0, 1e308, 1e-300]])):
        d = delight_rule(host, ei, 0.5)
        for field in (d.probs, d.override, d.delight):
            assert np.isfinite(field).all()
        np.testing.assert_allclose(d.probs.sum(-1), 1.0)
    # The override keeps the ratio of χ = EI·ℓ even where the product overflows.
    d = delight_rule(host[:1], np.array([[0.0, 1e308, 1e308]]), 1.0)
    ratio = d.override[0, 2] / d.override[0, 1]
    assert ratio == pytest.approx(np.log(7.0) / np.log(3.5))
    # λ = inf keeps the gate empty even where χ overflows; float32 tensors too.
    assert delight_rule(host, np.full((2, 3), 1e308), 0.5, gate_price=np.inf).gate_empty.all()
    dt = delight_rule(torch.tensor(host, dtype=torch.float32), torch.full((2, 3), 3e38), 0.5)
    assert torch.isfinite(dt.probs).all()
    # The proposal host's log-density is finite across its stated host_std range.
    cands = np.random.default_rng(0).uniform(-1, 1, (2, 5, 2))
    for std in (1e-12, 1e-3, 1e3, 1e6):
        lw = GaussianProposalHost(ACT, std).log_weight(None, np.zeros((2, 2)), cands)
        assert np.isfinite(lw).all()
    np.testing.assert_allclose(
        GaussianProposalHost(ACT, 1e6).log_weight(None, np.zeros((2, 2)), cands), np.log(0.25)
    )
    # Rewards the ensemble can train on stay finite; larger ones are refused, not frozen.
    ens = _ensemble()
    for _ in range(3):
        ens.update(_batch(reward=4e9))
    assert torch.isfinite(ens.expected_improvement(np.zeros((1, 3)), np.zeros((1, 2, 2)))).all()
    for reward in (1e20, -1e30, 5e9):
        with pytest.raises(ValueError, match=r"rewards must be at most 4\.29e\+09"):
            _ensemble().update(_batch(reward=reward))
    for lr in (10.0, 1e10):
        with pytest.raises(ValueError, match="learning_rate must lie in"):
            _ensemble(learning_rate=lr)
    with pytest.raises(ValueError, match="prior_scale must be at most"):
        _ensemble(prior_scale=1e20)


def test_accepted_and_wrong_inputs_are_refused():
    host = GaussianProposalHost(ACT)
    zeros_ei = lambda s, c: np.zeros(c.shape[:2])  # noqa: E731
    states, actions, rng = np.zeros((2, 3)), np.zeros((2, 2)), np.random.default_rng(0)
    # NaN candidates from a proposer, NaN posterior samples.
    for bad in (np.nan, np.inf, 5.0):

        class Bad:
            def propose(self, s, a, n, rng, bad=bad):
                return np.full((len(a), n, 2), bad)

        de = _box_delight(host, zeros_ei, proposals=[(Bad(), 2)])
        with pytest.raises(ValueError, match=r"proposals\[0\] must be finite and inside"):
            de.decide(states, actions, 0, rng)
    for bad in (np.nan, np.inf):
        nan_sample = lambda s, a, rng, bad=bad: np.full(a.shape[:2], bad)  # noqa: E731
        de = _box_delight(host, zeros_ei, sample=nan_sample)
        with pytest.raises(ValueError, match="sample_values must return finite"):
            de.decide(states, actions, 0, rng)
    # Unnormalised or negative CategoricalHost probabilities.
    for table in ([[0.5, 0.6, 0.1]], [[2.0, 0.0, 0.0]], [[1.2, -0.2, 0.0]]):
        cat = CategoricalHost(lambda s, table=table: np.array(table))
        de = CandidateDelight(spaces.Discrete(3), cat, zeros_ei, [(TopK(cat), 2)])
        with pytest.raises(ValueError, match=r"probs\(states\) must"):
            de.decide(np.zeros((1, 3)), np.array([0]), 0, rng)
    # An integer Box: refused by every continuous entry point.
    int_box = spaces.Box(-3, 3, (2,), dtype=np.int64)
    for build in (
        lambda: DelightExplorationWrapper(
            lambda o: np.zeros((len(o), 2)), observation_space=OBS, action_space=int_box
        ),
        lambda: ContinuousQEnsemble(OBS, int_box),
        lambda: GaussianProposalHost(int_box),
        lambda: UniformProposals(int_box),
    ):
        with pytest.raises(TypeError, match="floating-point Box"):
            build()
    # A host answering (d, n) or (n·d,) is refused, never reshaped into scrambled actions.
    for out in (np.zeros((2, 4)), np.zeros(8), np.zeros((4, 2, 1))):
        de = _engine(host=lambda obs, out=out: out)
        with pytest.raises(ValueError, match=r"host must give actions of shape \(4, 2\)"):
            de.predict(np.zeros((4, 3)))


def test_messages_name_the_cause():
    host = GaussianProposalHost(ACT)
    zeros_ei = lambda s, c: np.zeros(c.shape[:2])  # noqa: E731
    for proposals, kind in ((5, "int"), ("ab", "str"), (None, "NoneType")):
        with pytest.raises(TypeError, match=f"proposals must be a sequence.*got {kind}"):
            CandidateDelight(ACT, host, zeros_ei, proposals)
    with pytest.raises(ValueError, match="at least one"):
        CandidateDelight(ACT, host, zeros_ei, [])
    for std in (1e20, 1e-300, 1e7):
        with pytest.raises(ValueError, match="host_std must lie in"):
            GaussianProposalHost(ACT, std)
    for scale in (1e-320, 5e-324):
        with pytest.raises(ValueError, match="value_scale must be at least"):
            DelightOptions(value_scale=scale)
    for ei in (np.ones((2, 3)), np.ones((1, 4)), np.ones(2)):
        with pytest.raises(ValueError, match="expected_improvement must broadcast"):
            delight_rule(np.array([[0.5, 0.25, 0.25]]), ei, 0.5)
    de = _box_delight(host, lambda s, c: np.zeros((1, 1)))
    with pytest.raises(ValueError, match="expected_improvement must have shape"):
        de.decide(np.zeros((2, 3)), np.zeros((2, 2)), 0, np.random.default_rng(0))
    # Empty batches and sets.
    with pytest.raises(ValueError, match="empty batch"):
        de.decide(np.zeros((0, 3)), np.zeros((0, 2)), 0, np.random.default_rng(0))
    for cands in (np.zeros((1, 0), dtype=np.int64), np.zeros((0, 2), dtype=np.int64)):
        with pytest.raises(ValueError, match="b, C >= 1"):
            candidate_rule(cands, np.zeros(cands.shape), np.zeros(cands.shape), 0.5)
    with pytest.raises(ValueError, match="empty batch"):
        _ensemble().update(_batch(n=0))
    engine = _engine()
    with pytest.raises(ValueError, match="empty batch"):
        engine.predict(np.zeros((0, 3)))
    # observe's reward and flags name themselves.
    for reward, error in (("a", TypeError), ([1.0, 2.0], ValueError), (np.nan, ValueError)):
        with pytest.raises(error, match="reward"):
            engine.observe(np.zeros(3), np.zeros(2), reward, np.zeros(3), False, False)
    with pytest.raises(ValueError, match="terminated"):
        engine.observe(np.zeros(3), np.zeros(2), 0.0, np.zeros(3), 0.5, False)


def test_dict_observations_are_refused_at_construction():
    dict_space = spaces.Dict({"a": OBS, "b": spaces.Discrete(2)})
    with pytest.raises(TypeError, match=r"not Dict.*FlattenObservation"):
        DelightExplorationWrapper(
            lambda o: np.zeros((1, 2)), observation_space=dict_space, action_space=ACT
        )
    for space in (dict_space, spaces.Tuple((OBS, OBS))):
        with pytest.raises(TypeError, match="does not support composite observations"):
            ContinuousQEnsemble(space, ACT)


class _DictPendulum:
    """Pendulum with its observation in a Dict (what MultiInputPolicy takes)."""

    @staticmethod
    def make():
        import gymnasium as gym
        from gymnasium.wrappers import TransformObservation

        env = gym.make("Pendulum-v1")
        space = spaces.Dict({"x": env.observation_space})
        return TransformObservation(env, lambda o: {"x": o}, space)


@pytest.mark.parametrize("name", ["DelightSAC", "DelightTD3"])
def test_sb3_algorithms_refuse_bad_input_naming_it(name, tmp_path):
    import gymnasium as gym

    from delight_gym import sb3

    cls = getattr(sb3, name)
    with pytest.raises(TypeError, match=f"{name} supports Box observations, not Dict"):
        cls("MultiInputPolicy", _DictPendulum.make())
    for size in (0, -1):
        with pytest.raises(ValueError, match="batch_size must be >= 1"):
            cls("MlpPolicy", "Pendulum-v1", batch_size=size)
    with pytest.raises(ValueError, match="posterior_epsilon must lie in"):
        cls("MlpPolicy", "Pendulum-v1", posterior_epsilon=2.0)
    model = cls("MlpPolicy", "Pendulum-v1", seed=0, learning_starts=5, batch_size=8)
    for bad in (np.array([np.nan, 0.0]), np.array([np.inf])):
        with pytest.raises(ValueError, match="observation must be finite"):
            model.predict(np.append(bad, 0.0)[:3], deterministic=True)

    from stable_baselines3.common.noise import ActionNoise

    class Fixed(ActionNoise):
        def __init__(self, value):
            super().__init__()
            self.value = value

        def __call__(self):
            return self.value

    wrong = (np.zeros(3), "shape"), (np.zeros((2, 1)), "shape"), (np.array([np.nan]), "finite")
    for noise, match in wrong:
        model.action_noise = Fixed(noise)
        with pytest.raises(ValueError, match=f"action_noise.*{match}"):
            model.learn(3)
    model.action_noise = None
    model.learn(10)
    # Tampered and truncated saves: one error naming the file and what is missing.
    whole = tmp_path / "whole.zip"
    model.save(whole)
    assert cls.load(whole).delight.t == model.delight.t
    cases = {}
    model.save(tmp_path / "no_delight.zip", exclude=["delight"])
    cases["no_delight.zip"] = "no 'delight' entry"
    engine = model.delight
    model.delight = 5
    model.save(tmp_path / "five.zip")
    cases["five.zip"] = "'delight' entry is a int"
    model.delight = engine
    rng, engine.rng = engine.rng, None
    model.save(tmp_path / "rng.zip")
    cases["rng.zip"] = "engine's 'rng' is None"
    engine.rng = rng
    data = whole.read_bytes()
    (tmp_path / "cut.zip").write_bytes(data[: len(data) // 2])
    cases["cut.zip"] = "not a readable saved"
    with zipfile.ZipFile(whole) as src, zipfile.ZipFile(tmp_path / "nodata.zip", "w") as dst:
        for item in src.namelist():
            if item != "data":
                dst.writestr(item, src.read(item))
    cases["nodata.zip"] = "truncated"
    for file, match in cases.items():
        with pytest.raises(ValueError, match=f"{file}.*{match}"):
            cls.load(tmp_path / file)
    del gym


_probs = st.lists(st.floats(0.0, 1.0), min_size=1, max_size=6).filter(lambda p: sum(p) > 0)
_ei = st.floats(0.0, float(np.finfo(np.float64).max))


@settings(max_examples=200, deadline=None)
@given(
    weights=_probs,
    ei=st.lists(_ei, min_size=6, max_size=6),
    eps=st.floats(0.0, 1.0),
    lam=st.one_of(st.floats(0.0, 1e300), st.just(np.inf)),
    cap=st.floats(1e-3, 1e3),
)
def test_rule_output_is_a_finite_distribution_for_any_finite_input(weights, ei, eps, lam, cap):
    host = np.array(weights) / np.sum(weights)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow warnings either
        d = delight_rule(
            host[None], np.array(ei[: host.size])[None], eps, gate_price=lam, surprisal_cap=cap
        )
    for field in (d.probs, d.override, d.delight, d.surprisal):
        assert np.isfinite(field).all()
    assert (d.probs >= 0).all() and (d.override >= 0).all()
    np.testing.assert_allclose(d.probs.sum(-1), 1.0, rtol=0, atol=1e-9)
    np.testing.assert_allclose(d.override.sum(-1), 1.0, rtol=0, atol=1e-9)
    assert not (d.gate & (host[None] == 0) & (d.delight == 0)).any()


# -- the older API: predictives' rows, checks once ----------------------------------------------


def test_predictive_expected_improvement_refuses_rows_out_of_range() -> None:
    from delight_gym.posteriors.bandit_ensemble import EnsemblePredictive
    from delight_gym.posteriors.linfull import StudentTPredictive

    def spread(rows):
        n = 3 if rows is None else len(rows)
        return torch.ones(n, 4), torch.full((n, 4), 3.0)

    for pred in (
        EnsemblePredictive(torch.randn(5, 3, 4)),
        StudentTPredictive(torch.zeros(3, 4), spread),
    ):
        assert pred.expected_improvement(0.0, torch.tensor([2, 0])).shape == (2, 4)
        for rows in (torch.tensor([3]), torch.tensor([-1]), [0, 7]):
            with pytest.raises(ValueError, match=r"rows must lie in \[0, 2\]"):
                pred.expected_improvement(0.0, rows)
        with pytest.raises(TypeError, match="rows must be integer"):
            pred.expected_improvement(0.0, torch.tensor([0.5]))
        with pytest.raises(ValueError, match="rows must be 1-D"):
            pred.expected_improvement(0.0, torch.tensor([[0]]))


def test_option_rule_checks_at_its_boundary_and_apply_option_rule_matches() -> None:
    from delight_gym.de.commitment import apply_option_rule, option_rule
    from delight_gym.de.rule import Gate

    host = np.array([[0.7, 0.2, 0.1]])
    ei = np.array([[0.0, 0.3, 0.5]])
    checked = option_rule(host, ei, 0.5, durations=(1, 2, 4), gate_price=0.1)
    fast = apply_option_rule(Gate(0.1, 10.0), host, ei, 0.5, np.array([1, 2, 4]))
    for a, b in zip(checked, fast, strict=True):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="does not broadcast to host_probs"):
        option_rule(host, np.zeros((1, 2)), 0.5)
    with pytest.raises(ValueError, match="host_probs"):
        option_rule(np.array([[0.5, 0.6]]), np.zeros((1, 2)), 0.5)
    with pytest.raises(ValueError, match="durations"):
        option_rule(host, ei, 0.5, durations=(2, 4))


def test_ensemble_evaluate_checks_host_probs_once_at_its_boundary() -> None:
    from delight_gym.posteriors.ensemble import EnsembleQPosterior

    post = EnsembleQPosterior(spaces.Discrete(3), 2, num_heads=4, seed=0)
    obs = np.array([0, 2])
    with pytest.raises(TypeError, match="host_probs must be array-like"):
        post.evaluate(obs, [["a", "b"], ["c", "d"]])
    with pytest.raises(ValueError, match=r"host_probs must have shape \(2, 2\)"):
        post.evaluate(obs, np.full((2, 3), 1 / 3))
    with pytest.raises(ValueError, match="host_probs must be finite"):
        post.evaluate(obs, np.full((2, 2), np.nan))
    values = post.evaluate(obs, np.full((2, 2), 0.5))
    np.testing.assert_allclose(values.baseline, post.mean(obs).mean(axis=1))


# -- the continuum files: RFFPosterior, ContinuumBandit, ContinuumAgent -------------------------


def test_continuum_sizes_are_refused_before_anything_is_allocated():
    from delight_gym.envs.continuum import ContinuumBanditEnv, ContinuumBanditVectorEnv
    from delight_gym.posteriors.rff import RFFPosterior

    # Every buffer counted: the frequencies (B·M·d), the float64 statistics (B·M²).
    with pytest.raises(ValueError, match=r"dim=1000000000.*the largest buffer, frequencies"):
        RFFPosterior(2, 10**9)
    for kwargs in ({"device": None}, {"device": None, "dtype": torch.float32}, {"device": "cpu"}):
        with pytest.raises(ValueError, match=r"num_features=1000000 would need.*precision_factor"):
            RFFPosterior(1, 2, num_features=10**6, **kwargs)
    with pytest.raises(ValueError, match="batch_size=10000000, dim=1, num_features=512"):
        RFFPosterior(10**7, 1)
    # The env's centres, spaces and placement candidates, and the vector env's sub-envs.
    for build, match in (
        (lambda: ContinuumBanditEnv(dim=10**12), r"dim=1000000000000, num_bumps=5 would need"),
        (lambda: ContinuumBanditEnv(num_bumps=10**9), "placement candidates"),
        (lambda: ContinuumBanditVectorEnv(10**9), r"num_envs=1000000000, .*sub-envs"),
        (lambda: ContinuumBanditVectorEnv(10**6, dim=10**4), "a step's distances"),
    ):
        with pytest.raises(ValueError, match=match):
            build()
    # The placement is quadratic in num_bumps: refused, not a hang.
    for kwargs in ({"num_bumps": 10**5}, {"num_bumps": 4000}, {"num_bumps": 400, "dim": 1000}):
        with pytest.raises(ValueError, match=r"placing the bumps .* MAX_PLACEMENT_WORK"):
            ContinuumBanditEnv(**kwargs)


def test_continuum_finite_inputs_give_finite_results():
    from delight_gym._checks import magnitude_limit
    from delight_gym.envs.continuum import MAX_NOISE, WIDTH_RANGE, ContinuumBanditEnv
    from delight_gym.posteriors.rff import RFFPosterior

    # Out of the stated ranges: refused, naming the argument.
    for kwargs, match in (
        ({"noise": 1e-300}, "noise must lie in"),
        ({"prior_std": 1e300}, "prior_std must lie in"),
        ({"noise": 1e-11, "dtype": torch.float32}, "noise must lie in"),
        ({"prior_std": 1e60, "noise": 1e-60}, "prior_std / noise"),
    ):
        with pytest.raises(ValueError, match=match):
            RFFPosterior(2, 2, **kwargs)
    # At the ends of the ranges, with rewards as large as accepted: every output finite.
    for dtype, prior_std in ((torch.float64, 0.5), (torch.float32, 4e9)):
        limit = magnitude_limit(dtype, 4)
        post = RFFPosterior(
            2, 2, num_features=32, noise=1.01 / limit, prior_std=prior_std, seed=0, dtype=dtype
        )
        x = torch.rand(2, 300, 2, dtype=torch.float64)
        for reward in (limit, -limit):
            post.update(x[:, :1], torch.full((2, 1), reward, dtype=torch.float64))
        post.update(x, torch.full((2, 300), limit, dtype=torch.float64))  # the refactor path
        biggest = float(torch.finfo(dtype).max)
        outs = [*post.predictive(x[:, :5]), post.ucb(x[:, :5], 4.0), post.thompson(x[:, :5])]
        for base in (0.0, biggest, -biggest):
            outs.append(
                post.expected_improvement(x[:, :5], torch.full((2,), base, dtype=torch.float64))
            )
        assert all(bool(torch.isfinite(o).all()) for o in outs)
    # float32: 500 updates at one point stay at the exact float64 posterior (float64 statistics).
    post32 = RFFPosterior(1, 1, num_features=64, seed=0, dtype=torch.float32)
    post64 = RFFPosterior(1, 1, num_features=64, seed=0)
    post64.frequencies, post64.phases = post32.frequencies.double(), post32.phases.double()
    point = torch.full((1, 1, 1), 0.5)
    for _ in range(500):
        post32.update(point, torch.ones(1, 1))
    post64.update(point.double().expand(1, 500, 1), torch.ones(1, 500))
    grid = torch.linspace(0, 1, 11).reshape(1, 11, 1)
    torch.testing.assert_close(post32.mean(grid).double(), post64.mean(grid), atol=1e-4, rtol=0)
    # The env: widths whose square underflowed, noise that overflowed: refused; the ends finite.
    for kwargs, match in (
        ({"needle_width": 1e-200}, "needle_width must lie in"),
        ({"bump_width": 5e-324}, "bump_width must lie in"),
        ({"noise": 1.7e308}, "noise must be at most"),
    ):
        with pytest.raises(ValueError, match=match):
            ContinuumBanditEnv(**kwargs)
    env = ContinuumBanditEnv(
        needle_width=WIDTH_RANGE[0], bump_width=WIDTH_RANGE[1], noise=MAX_NOISE
    )
    env.reset(seed=0)
    for action in (env.optimal_action, np.zeros(2), np.ones(2)):
        _, reward, _, _, info = env.step(action.astype(np.float32))
        assert np.isfinite([reward, info["expected_reward"], info["regret"]]).all()


def test_continuum_agents_refuse_keywords_they_do_not_use():
    from delight_gym.agents.continuum import ContinuumAgent

    for name, kwargs in (
        ("thompson", {"gate_price": -1}),
        ("ucb", {"surprisal_cap": 2.0}),
        ("greedy", {"half_life": 10.0}),
        ("uniform", {"ucb_delta": 0.2}),
        ("delight", {"ucb_delta": 0.2}),
        ("egreedy", {"gate_price": 0.5, "half_life": 3.0}),
    ):
        unused = [k for k in kwargs if not (name == "egreedy" and k == "half_life")]
        with pytest.raises(
            TypeError, match=f"ContinuumAgent\\('{name}'\\) does not use {unused[0]}"
        ):
            ContinuumAgent(name, 1, 1, seed=0, **kwargs)
    with pytest.raises(TypeError, match="host_std"):
        ContinuumAgent("ucb", 1, 1, seed=0, host_std=0)
    # The agents that use them take them.
    assert ContinuumAgent("delight", 1, 1, seed=0, gate_price=0.5).gate_price == 0.5
    assert ContinuumAgent("egreedy", 1, 1, seed=0, half_life=3.0).half_life == 3.0
    assert ContinuumAgent("ucb", 1, 1, seed=0, ucb_delta=0.2).ucb_delta == 0.2
