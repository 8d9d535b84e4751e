"""Tests of ``delight_gym.wrappers``: the DE wrapper around a callable host, its posterior
protocol, the default tabular value posterior and the bandit-posterior adapters.

References are independent of ``delight_gym.de.rule``: the acting distribution of one decision is
worked out by hand (surprisal ``log(π_max/π_a)``, delight, gate, ``q``, mixture) and checked
against empirical frequencies (chi-square); Gaussian EI against ``scipy.integrate.quad``; the
tabular posterior's conjugate update against its closed form; the Beta adapter against the
fresh-arm closed form ``(1 − v)²/2``; the linear adapter against the closed-form batch
posterior. Stable-Baselines3 hosts and ``DelightDQN`` are in ``tests/test_wrappers_sb3.py``.
"""

from __future__ import annotations

import math
import subprocess
import sys

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, stats

import delight_gym
from delight_gym import DelightExplorationWrapper, DelightOptions
from delight_gym.de.posterior import ValuePosterior
from delight_gym.posteriors import (
    BetaBernoulliAdapter,
    BetaBernoulliPosterior,
    LinearGaussianAdapter,
)
from delight_gym.posteriors.value import TabularValuePosterior


class MockPosterior:
    """Fixed means and EI for every row; records the baselines it is asked about."""

    def __init__(self, means: list[float], ei: list[float]) -> None:
        self.means_row = np.asarray(means, dtype=np.float64)
        self.ei_row = np.asarray(ei, dtype=np.float64)
        self.num_actions = len(means)
        self.baselines: list[np.ndarray] = []
        self.updates: list[tuple[np.ndarray, ...]] = []

    def mean(self, observations: np.ndarray) -> np.ndarray:
        return np.tile(self.means_row, (len(observations), 1))

    def expected_improvement(self, observations: np.ndarray, baseline: np.ndarray) -> np.ndarray:
        self.baselines.append(np.array(baseline))
        return np.tile(self.ei_row, (len(observations), 1))

    def update(self, observations, actions, rewards, next_observations, terminated) -> None:
        self.updates.append((observations, actions, rewards, next_observations, terminated))


HOST = np.array([0.7, 0.2, 0.1])


def _const_host(probs: np.ndarray):
    return lambda obs: np.tile(probs, (len(obs), 1))


def _wrapper(posterior, probs=HOST, **kwargs) -> DelightExplorationWrapper:
    return DelightExplorationWrapper(
        _const_host(probs),
        posterior,
        observation_space=spaces.Discrete(4),
        action_space=spaces.Discrete(len(probs)),
        **kwargs,
    )


# ---------------------------------------------------------------------------------------------
# The decision: hand-computed acting distribution, info, baseline, determinism
# ---------------------------------------------------------------------------------------------


def test_acting_distribution_matches_hand_computation() -> None:
    # π = (0.7, 0.2, 0.1): ℓ = (0, log 3.5, log 7); EI = (0.05, 0.2, 0.01) gives
    # χ = (0, 0.2506, 0.0195); with λ = 0.1 only action 1 is gated, so q = (0, 1, 0).
    # At t = 100 = M, ε = 1/2 and the acting distribution is (0.35, 0.6, 0.05).
    post = MockPosterior([0.0, 0.0, 0.0], [0.05, 0.2, 0.01])
    de = _wrapper(post, seed=3)
    de.t = 100
    n = 20_000
    actions, _ = de.predict(np.zeros(n, dtype=np.int64))
    assert actions.shape == (n,) and actions.dtype == np.int64
    expected = np.array([0.35, 0.6, 0.05])
    counts = np.bincount(actions, minlength=3)
    assert stats.chisquare(counts, expected * n).pvalue > 1e-4
    info = de.last_info
    assert info["epsilon"] == pytest.approx(0.5)
    np.testing.assert_array_equal(info["gate_size"], np.ones(n))
    # Overridden rows are exactly the explore draws (the gate is never empty here), and an
    # override always plays action 1, the only gated one.
    np.testing.assert_array_equal(info["overridden"], info["explored"])
    assert np.all(actions[info["overridden"]] == 1)
    assert abs(info["overridden"].mean() - 0.5) < 0.02
    chi = np.array([0.0, 0.2 * math.log(3.5), 0.01 * math.log(7.0)])
    np.testing.assert_allclose(info["delight"], chi[actions], rtol=1e-12)
    np.testing.assert_allclose(info["acting_probs"][0], expected, rtol=1e-12)


def test_empty_gate_plays_the_host_and_is_not_an_override() -> None:
    # L·max EI = 10·0.005 < λ = 0.1: the gate is empty, q = π.
    post = MockPosterior([0.0, 0.0, 0.0], [0.005, 0.005, 0.005])
    de = _wrapper(post, seed=0)
    n = 20_000
    actions, _ = de.predict(np.zeros(n, dtype=np.int64))
    assert de.last_info["explored"].mean() == pytest.approx(1.0)  # ε_0 = 1
    assert not de.last_info["overridden"].any()
    assert stats.chisquare(np.bincount(actions, minlength=3), HOST * n).pvalue > 1e-4


@pytest.mark.parametrize(
    ("baseline", "expected"), [("host", 0.7 * 0.3 + 0.2 * 0.9 + 0.1 * 0.5), ("max", 0.9)]
)
def test_baseline_conventions(baseline: str, expected: float) -> None:
    post = MockPosterior([0.3, 0.9, 0.5], [0.1, 0.1, 0.1])
    de = _wrapper(post, delight={"baseline": baseline})
    de.predict(np.array([0, 1]))
    np.testing.assert_allclose(post.baselines[-1], [expected, expected], rtol=1e-15)


def test_single_observation_gives_a_single_action_and_deterministic_is_the_host() -> None:
    probs = np.array([0.1, 0.6, 0.3])
    de = _wrapper(MockPosterior([0.0] * 3, [1.0] * 3), probs=probs, seed=0)
    action, state = de.predict(2, state="s")
    assert np.ndim(action) == 0 and state == "s"
    assert np.ndim(de.last_info["gate_size"]) == 0 and de.last_info["host_probs"].shape == (3,)
    for _ in range(20):
        a, _ = de.predict(np.array([0, 1, 2]), deterministic=True)
        np.testing.assert_array_equal(a, [1, 1, 1])
    assert int(de.predict(3, deterministic=True)[0]) == 1
    assert not de.last_info["overridden"]


def test_same_seed_same_actions() -> None:
    post = MockPosterior([0.0] * 3, [0.05, 0.2, 0.01])
    a1 = _wrapper(post, seed=11).predict(np.zeros(50, dtype=np.int64))[0]
    a2 = _wrapper(post, seed=11).predict(np.zeros(50, dtype=np.int64))[0]
    np.testing.assert_array_equal(a1, a2)


@pytest.mark.parametrize("t", [0, 30, 100, 2000])
def test_lazy_gate_gives_the_same_actions(t: int) -> None:
    # lazy_gate evaluates the gate only where the ε coin chose the override; with the same
    # seed the actions must be identical to the full evaluation, and so must the info on the
    # rows it evaluated.
    rng = np.random.default_rng(5)
    table = rng.dirichlet(np.full(3, 0.3), size=6)
    host = lambda obs: table[obs]  # noqa: E731
    post = TabularValuePosterior(6, 3, prior_std=0.3)
    post.means[:] = rng.normal(0, 0.3, (6, 3))
    post.counts[:] = rng.integers(0, 20, (6, 3))
    obs = rng.integers(0, 6, 500)
    runs = {}
    for lazy in (False, True):
        de = DelightExplorationWrapper(
            host, post, observation_space=spaces.Discrete(6), seed=9, lazy_gate=lazy
        )
        de.t = t
        runs[lazy] = (de.predict(obs)[0], de.last_info)
    (a_full, full), (a_lazy, lazy_info) = runs[False], runs[True]
    np.testing.assert_array_equal(a_lazy, a_full)
    rows = lazy_info["explored"]
    np.testing.assert_array_equal(rows, full["explored"])
    np.testing.assert_array_equal(lazy_info["overridden"], full["overridden"])
    for key in ("gate_size", "delight", "baseline", "acting_probs", "expected_improvement"):
        np.testing.assert_array_equal(lazy_info[key][rows], full[key][rows])
    assert np.all(lazy_info["gate_size"][~rows] == -1)
    assert 0 < rows.sum() < 500 or t == 0


@settings(max_examples=50, deadline=None)
@given(
    host=st.lists(st.floats(0.01, 1.0), min_size=2, max_size=6),
    ei_scale=st.floats(0.0, 0.0099),
    t=st.integers(0, 1000),
    seed=st.integers(0, 2**31),
)
def test_no_override_when_delight_is_below_the_price(host, ei_scale, t, seed) -> None:
    # L·EI < λ for every action: the gate is empty, so actions follow the host exactly; with a
    # one-hot host that is its argmax, every time.
    a = len(host)
    probs = np.zeros(a)
    probs[int(np.argmax(host))] = 1.0
    de = _wrapper(MockPosterior([0.0] * a, [ei_scale] * a), probs=probs, seed=seed)
    de.t = t
    actions, _ = de.predict(np.zeros(64, dtype=np.int64))
    assert np.all(actions == np.argmax(probs))
    assert not de.last_info["overridden"].any()


def test_observe_feeds_the_posterior_and_advances_epsilon() -> None:
    post = MockPosterior([0.0] * 3, [0.1] * 3)
    de = _wrapper(post, delight=DelightOptions(half_life=10.0))
    assert de.epsilon == 1.0
    de.observe(0, 2, 1.0, 1, False, False)
    de.observe(
        np.array([0, 1, 2]),
        np.array([0, 1, 2]),
        np.zeros(3),
        np.array([1, 2, 3]),
        np.array([False, False, True]),
        np.zeros(3, dtype=bool),
    )
    assert de.t == 4 and de.epsilon == pytest.approx(10.0 / 14.0)
    _, act, _, _, term = post.updates[1]
    np.testing.assert_array_equal(act, [0, 1, 2])
    np.testing.assert_array_equal(term, [False, False, True])
    with pytest.raises(ValueError, match="action"):
        de.observe(0, 3, 1.0, 1, False, False)
    with pytest.raises(ValueError, match="reward"):
        de.observe(
            np.array([0, 1]),
            np.array([0, 1]),
            np.zeros(3),
            np.array([1, 2]),
            np.zeros(2, bool),
            np.zeros(2, bool),
        )


# ---------------------------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("host", "match"),
    [
        (lambda obs: np.full((len(obs), 2), 0.5), r"shape \(\d+, 2\), expected"),
        (lambda obs: np.array([0.7, 0.2, 0.1]), "shape"),
        (lambda obs: np.tile([0.5, 0.4, 0.3], (len(obs), 1)), "sum to 1"),
        (lambda obs: np.tile([1.2, -0.1, -0.1], (len(obs), 1)), "non-negative"),
        (lambda obs: np.tile([np.nan, 0.5, 0.5], (len(obs), 1)), "finite"),
    ],
)
def test_bad_host_raises(host, match: str) -> None:
    de = DelightExplorationWrapper(
        host, MockPosterior([0.0] * 3, [0.1] * 3), observation_space=spaces.Discrete(4)
    )
    with pytest.raises(ValueError, match=match):
        de.predict(np.array([0, 1]))


def test_posterior_must_match_the_action_space() -> None:
    with pytest.raises(ValueError, match="posterior has 2 actions"):
        _wrapper(MockPosterior([0.0] * 2, [0.1] * 2))
    # Without an action space, a mismatch is caught at the first predict.
    de = DelightExplorationWrapper(
        _const_host(HOST), MockPosterior([0.0] * 2, [0.1] * 2), observation_space=spaces.Discrete(4)
    )
    with pytest.raises(ValueError, match="host returned probabilities of shape"):
        de.predict(0)


def test_bad_posterior_output_raises() -> None:
    class Wrong(MockPosterior):
        def expected_improvement(self, observations, baseline):
            return np.ones((len(observations), 2))

    with pytest.raises(ValueError, match="posterior expected_improvement has shape"):
        _wrapper(Wrong([0.0] * 3, [0.1] * 3)).predict(0)


def test_bad_arguments_raise() -> None:
    post = MockPosterior([0.0] * 3, [0.1] * 3)
    with pytest.raises(TypeError, match="ValuePosterior"):
        _wrapper(object())
    with pytest.raises(TypeError, match="observation_space"):
        DelightExplorationWrapper(_const_host(HOST), post)
    with pytest.raises(TypeError, match="host must be"):
        DelightExplorationWrapper(42, post, observation_space=spaces.Discrete(2))
    with pytest.raises(ValueError, match="gate_price"):
        _wrapper(post, delight={"gate_price": -1.0})
    with pytest.raises(ValueError, match="surprisal_cap"):
        _wrapper(post, delight={"surprisal_cap": 0.0})
    with pytest.raises(ValueError, match="half_life"):
        _wrapper(post, delight={"half_life": 0.0})
    with pytest.raises(ValueError, match="baseline"):
        _wrapper(post, delight={"baseline": "mean"})
    with pytest.raises(TypeError, match=r"delight: .*nope"):
        _wrapper(post, delight={"nope": 1})
    with pytest.raises(ValueError, match="clock"):
        _wrapper(post, delight={"clock": "hours"})
    with pytest.raises(ValueError, match="commit"):
        _wrapper(post, delight={"commit": True})
    with pytest.raises(ValueError, match="value_scale"):
        _wrapper(post, delight={"value_scale": "auto"})
    with pytest.raises(TypeError, match="unexpected keyword"):
        _wrapper(post, gate_prices=0.1)
    with pytest.raises(TypeError, match="host_temperature"):
        _wrapper(post, host_temperature=0.1)
    with pytest.raises(ValueError, match="observation must have shape"):
        DelightExplorationWrapper(
            _const_host(HOST), post, observation_space=spaces.Box(0, 1, (2, 2))
        ).predict(np.zeros(3))
    # A Box that is not one-hot gets the ensemble (tests/test_delight_dqn.py); a Dict space
    # has no default posterior.
    with pytest.raises(ValueError, match="Discrete or Box"):
        DelightExplorationWrapper(
            _const_host(np.array([0.5, 0.5])),
            observation_space=spaces.Dict({"x": spaces.Discrete(2)}),
            action_space=spaces.Discrete(2),
        )


# ---------------------------------------------------------------------------------------------
# Tabular value posterior
# ---------------------------------------------------------------------------------------------


def test_tabular_posterior_conjugate_update_closed_form() -> None:
    post = TabularValuePosterior(3, 2, gamma=0.5, prior_mean=0.2, prior_std=2.0, noise_std=0.5)
    for _ in range(5):  # five terminal transitions with reward 1 from (0, 1)
        post.update(np.array([0]), np.array([1]), np.array([1.0]), np.array([2]), np.array([True]))
    precision = 1 / 2.0**2 + 5 / 0.5**2
    mean = (0.2 / 2.0**2 + 5 * 1.0 / 0.5**2) / precision
    np.testing.assert_allclose(post.mean(np.array([0]))[0], [0.2, mean], rtol=1e-13)
    np.testing.assert_allclose(post.std(np.array([0]))[0], [2.0, precision**-0.5], rtol=1e-13)
    # A non-terminal transition from state 1 bootstraps on max_b m(0, b) = mean.
    post.update(np.array([1]), np.array([0]), np.array([0.5]), np.array([0]), np.array([False]))
    target = 0.5 + 0.5 * mean
    w = (1 / 0.5**2) / (1 / 2.0**2 + 1 / 0.5**2)
    assert post.means[1, 0] == pytest.approx(0.2 + w * (target - 0.2), rel=1e-13)


def test_tabular_posterior_batch_equals_sequential() -> None:
    rng = np.random.default_rng(0)
    n = 40
    s, a = rng.integers(0, 4, n), rng.integers(0, 2, n)
    r, s2, term = rng.normal(size=n), rng.integers(0, 4, n), rng.random(n) < 0.3
    batch = TabularValuePosterior(4, 2)
    batch.update(s, a, r, s2, term)
    seq = TabularValuePosterior(4, 2)
    for i in range(n):
        seq.update(s[i : i + 1], a[i : i + 1], r[i : i + 1], s2[i : i + 1], term[i : i + 1])
    np.testing.assert_array_equal(batch.means, seq.means)
    np.testing.assert_array_equal(batch.counts, seq.counts)


def test_tabular_expected_improvement_matches_integration() -> None:
    post = TabularValuePosterior(2, 3, prior_std=0.7)
    post.means[1] = [0.1, -0.3, 0.4]
    post.counts[1] = [0, 3, 10]
    base = np.array([0.2])
    ei = post.expected_improvement(np.array([1]), base)[0]
    sd = post.std(np.array([1]))[0]
    for k in range(3):
        ref, _ = integrate.quad(
            lambda x, k=k: (x - 0.2) * stats.norm.pdf(x, post.means[1, k], sd[k]), 0.2, np.inf
        )
        assert ei[k] == pytest.approx(ref, rel=1e-8, abs=1e-14)


def test_one_hot_encoding_of_deep_sea_observations() -> None:
    env = gym.make("DeepSea-v0", size=4, mapping_seed=0)
    post = TabularValuePosterior.from_space(env.observation_space, 2)
    assert post.num_states == 16
    obs = np.zeros((2, 4, 4), dtype=np.float32)
    obs[0, 1, 2] = 1.0
    obs[1, 3, 0] = 1.0
    post.means[[6, 12]] = [[1.0, 2.0], [3.0, 4.0]]
    np.testing.assert_array_equal(post.mean(obs), [[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(ValueError, match="one-hot"):
        post.mean(np.full((1, 4, 4), 0.5, dtype=np.float32))
    blank = np.zeros((1, 4, 4), dtype=np.float32)
    with pytest.raises(ValueError, match="one-hot"):
        post.mean(blank)
    # A blank next observation is accepted where the episode terminated (DeepSea's last step).
    post.update(obs[:1], np.array([0]), np.array([1.0]), blank, np.array([True]))
    with pytest.raises(ValueError, match="next_observations must be one-hot"):
        post.update(obs[:1], np.array([0]), np.array([1.0]), blank, np.array([False]))


def test_default_posterior_on_deep_sea_runs_an_episode() -> None:
    env = gym.make("DeepSea-v0", size=5, mapping_seed=3)
    de = DelightExplorationWrapper(
        lambda obs: np.tile([0.9, 0.1], (len(obs), 1)),
        observation_space=env.observation_space,
        action_space=env.action_space,
        seed=0,
    )
    assert isinstance(de.posterior, TabularValuePosterior)
    assert isinstance(de.posterior, ValuePosterior)
    obs, _ = env.reset(seed=0)
    steps = 0
    done = False
    while not done:
        action, _ = de.predict(obs)
        nxt, reward, term, trunc, _ = env.step(action)
        de.observe(obs, action, reward, nxt, term, trunc)
        obs, done, steps = nxt, term or trunc, steps + 1
    assert steps == 5 and de.t == 5 and de.posterior.counts.sum() == 5


# ---------------------------------------------------------------------------------------------
# Adapters for the bandit posteriors
# ---------------------------------------------------------------------------------------------


def test_beta_adapter_on_bernoulli_bandit() -> None:
    env = gym.make("BernoulliBandit-v0", num_arms=5)
    adapter = BetaBernoulliAdapter(BetaBernoulliPosterior(1, 5))
    host = lambda obs: np.tile(np.eye(5)[2], (len(obs), 1))  # noqa: E731 - plays arm 2
    de = DelightExplorationWrapper(
        host, adapter, observation_space=env.observation_space, action_space=env.action_space
    )
    obs = np.zeros(3, dtype=np.int64)
    de.predict(obs)
    # Fresh Beta(1, 1) arms, baseline v = m(arm 2) = 1/2: EI = (1 − v)²/2 = 1/8 for every arm.
    np.testing.assert_allclose(de.last_info["expected_improvement"], 0.125, rtol=1e-12)
    de.observe(
        obs,
        np.array([2, 2, 0]),
        np.array([1.0, 1.0, 0.0]),
        obs,
        np.ones(3, bool),
        np.zeros(3, bool),
    )
    np.testing.assert_array_equal(adapter.posterior.alpha[0], [1, 1, 3, 1, 1])
    np.testing.assert_array_equal(adapter.posterior.beta[0], [2, 1, 1, 1, 1])
    with pytest.raises(ValueError, match="batch_size"):
        BetaBernoulliAdapter(BetaBernoulliPosterior(2, 5)).mean(obs)
    with pytest.raises(TypeError, match="BetaBernoulliPosterior"):
        BetaBernoulliAdapter(object())


def test_linear_adapter_on_linear_bandit() -> None:
    import torch

    from delight_gym.posteriors import LinearGaussianPosterior

    env = gym.make("LinearBandit-v0", num_arms=4, dim=3)
    obs, _ = env.reset(seed=0)
    adapter = LinearGaussianAdapter(LinearGaussianPosterior(1, 3, noise=0.5), 4)
    de = DelightExplorationWrapper(
        lambda o: np.tile(np.eye(4)[0], (len(o), 1)),
        adapter,
        observation_space=env.observation_space,
        action_space=env.action_space,
    )
    rewards = []
    for a in [1, 2, 3, 1]:
        _, r, _, _, _ = env.step(a)
        rewards.append(r)
        de.observe(obs, a, r, obs, True, False)
        env.reset()
    phi = np.asarray(obs, dtype=np.float64)
    x = phi[[1, 2, 3, 1]]
    precision = np.eye(3) + x.T @ x / 0.25
    mu = np.linalg.solve(precision, x.T @ np.array(rewards) / 0.25)
    sd = np.sqrt(np.einsum("kd,de,ke->k", phi, np.linalg.inv(precision), phi))
    batch = np.stack([obs, obs])
    np.testing.assert_allclose(adapter.mean(batch), np.tile(phi @ mu, (2, 1)), rtol=1e-10)
    v = np.array([0.1, -0.2])
    ei = adapter.expected_improvement(batch, v)
    for i in range(2):
        for k in range(4):
            ref, _ = integrate.quad(
                lambda f, i=i, k=k: (f - v[i]) * stats.norm.pdf(f, phi[k] @ mu, sd[k]),
                v[i],
                np.inf,
            )
            assert ei[i, k] == pytest.approx(ref, rel=1e-7)
    with pytest.raises(ValueError, match="features must have shape"):
        LinearGaussianAdapter(adapter.posterior, 5).mean(batch)
    assert isinstance(adapter.posterior.mean(), torch.Tensor)


def test_import_does_not_pull_in_torch_or_sb3() -> None:
    code = (
        "import sys, delight_gym\n"
        "w = delight_gym.DelightExplorationWrapper\n"
        "from delight_gym.posteriors.value import TabularValuePosterior\n"
        "print('torch' in sys.modules, 'stable_baselines3' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
    assert "DelightExplorationWrapper" in delight_gym.__all__


def test_package_posteriors_are_adapted_automatically() -> None:
    """Passing BetaBernoulliPosterior / LinearGaussianPosterior / TabularMDPPosterior directly
    gives the same decisions as passing their adapters."""
    import torch

    from delight_gym.posteriors import (
        LinearGaussianAdapter,
        LinearGaussianPosterior,
        TabularMDPAdapter,
        TabularMDPPosterior,
    )

    bandit = gym.make("BernoulliBandit-v0", num_arms=5)
    host = lambda obs: np.tile(np.eye(5)[2], (len(obs), 1))  # noqa: E731
    spaces_kw = {
        "observation_space": bandit.observation_space,
        "action_space": bandit.action_space,
    }
    raw = DelightExplorationWrapper(host, BetaBernoulliPosterior(1, 5), seed=3, **spaces_kw)
    assert isinstance(raw.posterior, BetaBernoulliAdapter)
    wrapped = DelightExplorationWrapper(
        host, BetaBernoulliAdapter(BetaBernoulliPosterior(1, 5)), seed=3, **spaces_kw
    )
    obs = np.zeros(50, dtype=np.int64)
    np.testing.assert_array_equal(raw.predict(obs)[0], wrapped.predict(obs)[0])

    linear = gym.make("LinearBandit-v0", num_arms=4, dim=3)
    lin_host = lambda obs: np.tile(np.eye(4)[0], (len(obs), 1))  # noqa: E731
    de = DelightExplorationWrapper(
        lin_host,
        LinearGaussianPosterior(1, 3, dtype=torch.float64),
        observation_space=linear.observation_space,
        action_space=linear.action_space,
    )
    assert isinstance(de.posterior, LinearGaussianAdapter)

    sea = gym.make("DeepSea-v0", size=3)
    sea_host = lambda obs: np.tile([0.5, 0.5], (len(obs), 1))  # noqa: E731
    de = DelightExplorationWrapper(
        sea_host,
        TabularMDPPosterior(1, 9, 2, 3),
        observation_space=sea.observation_space,
        action_space=sea.action_space,
    )
    assert isinstance(de.posterior, TabularMDPAdapter)
    obs, _ = sea.reset(seed=0)
    action, _ = de.predict(obs)
    assert action in (0, 1)


# ---------------------------------------------------------------------------------------------
# DE's options: delight=, value_scale; where the clock starts
# ---------------------------------------------------------------------------------------------


def test_value_scale_divides_ei_before_the_gate() -> None:
    # EI (0.05, 0.2, 0.01) with value_scale 4 is (0.0125, 0.05, 0.0025): χ(1) = 0.05 log 3.5
    # = 0.0626 < λ = 0.1, so nothing is gated, where value_scale 1 gates action 1.
    post = MockPosterior([0.0, 0.0, 0.0], [0.05, 0.2, 0.01])
    scaled = _wrapper(post, delight={"value_scale": 4.0}, seed=0)
    scaled.predict(0)
    np.testing.assert_allclose(
        scaled.last_info["expected_improvement"], [0.0125, 0.05, 0.0025], rtol=1e-15
    )
    assert scaled.last_info["gate_size"] == 0
    plain = _wrapper(post, seed=0)
    plain.predict(0)
    assert plain.last_info["gate_size"] == 1


def test_clock_starts_at_start_step_for_a_callable() -> None:
    post = MockPosterior([0.0] * 3, [0.1] * 3)
    de = _wrapper(post, delight={"half_life": 10.0}, start_step=30)
    assert (de.t, de.epsilon) == (30, 0.25)  # 10 / (10 + 30)
    de.observe(0, 1, 0.0, 1, False, False)
    assert de.t == 31
    assert _wrapper(post).t == 0
    with pytest.raises(ValueError, match="start_step"):
        _wrapper(post, start_step=-1)
