"""The lazily drawn Bernoulli bandits against the eager ones, in distribution."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from delight_gym.envs.lazy import LazyBernoulliBanditVectorEnv
from delight_gym.experiments.bandit import run_bernoulli


def test_revealed_means_are_iid_uniform_with_the_right_maximum():
    """Pull all K arms: the K revealed means are i.i.d. U(0,1) and μ* is their maximum."""
    k, n = 6, 4000
    env = LazyBernoulliBanditVectorEnv(n, num_arms=k)
    env.reset(seed=0)
    for arm in range(k):
        env.step(np.full(n, arm))
    means = np.array([[env.revealed_means(i)[a] for a in range(k)] for i in range(n)])
    np.testing.assert_array_equal(means.max(axis=1), env.optimal_expected_reward)
    # Each arm's mean, and the maximum (Beta(K, 1)), against their exact laws.
    for arm in range(k):
        assert stats.kstest(means[:, arm], "uniform").pvalue > 1e-3
    assert stats.kstest(means.max(axis=1), stats.beta(k, 1).cdf).pvalue > 1e-3
    # Independence: the correlation of two arms' means is ~0 (s.e. 1/√n).
    assert abs(np.corrcoef(means[:, 0], means[:, 1])[0, 1]) < 4 / np.sqrt(n)


def test_lazy_memory_holds_only_pulled_arms_and_same_seed_same_draws():
    env = LazyBernoulliBanditVectorEnv(3, num_arms=10**12)
    env.reset(seed=5)
    out = [env.step(np.array([0, 7, 10**11]))[1] for _ in range(4)]
    assert [len(env.revealed_means(i)) for i in range(3)] == [1, 1, 1]
    again = LazyBernoulliBanditVectorEnv(3, num_arms=10**12)
    again.reset(seed=5)
    np.testing.assert_array_equal(out, [again.step(np.array([0, 7, 10**11]))[1] for _ in range(4)])


@pytest.mark.parametrize("agent", ["greedy", "delight"])
def test_lazy_and_eager_instances_give_the_same_regret_distribution(agent):
    lazy = run_bernoulli(agent, 50, 200, 150, seed=0, env="lazy").cumulative[:, -1]
    eager = run_bernoulli(agent, 50, 200, 150, seed=1000, env="eager").cumulative[:, -1]
    se = np.sqrt(lazy.var(ddof=1) / lazy.size + eager.var(ddof=1) / eager.size)
    assert abs(lazy.mean() - eager.mean()) < 4 * se


def test_lazy_env_bad_input():
    env = LazyBernoulliBanditVectorEnv(2, num_arms=3)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(np.array([0, 0]))
    env.reset(seed=0)
    with pytest.raises(ValueError, match="actions"):
        env.step(np.array([0, 3]))
    with pytest.raises(ValueError, match="actions"):
        env.step(np.array([0.0, 1.0]))
    with pytest.raises(ValueError, match="num_arms"):
        LazyBernoulliBanditVectorEnv(2, num_arms=0)
    with pytest.raises(ValueError, match="env"):
        run_bernoulli("greedy", 3, 5, 2, env="huge")


def test_lazy_seeding_and_same_step_infos_follow_the_vector_convention():
    """Seed ``s`` is the list ``[s, s+1, ...]``; infos carry SAME_STEP's final_info/final_obs."""
    actions = np.array([0, 3, 3])
    a = LazyBernoulliBanditVectorEnv(3, num_arms=4)
    b = LazyBernoulliBanditVectorEnv(3, num_arms=4)
    a.reset(seed=5)
    b.reset(seed=[5, 6, 7])
    np.testing.assert_array_equal(a.optimal_expected_reward, b.optimal_expected_reward)
    for _ in range(5):
        _, rewards_a, done, _, infos = a.step(actions)
        _, rewards_b, *_ = b.step(actions)
        np.testing.assert_array_equal(rewards_a, rewards_b)
        assert done.all() and infos["_final_info"].all() and infos["_regret"].all()
        np.testing.assert_array_equal(infos["final_info"]["regret"], infos["regret"])
        assert list(infos["final_obs"]) == [0, 0, 0]
    # A sub-env's draws depend only on its own seed.
    c = LazyBernoulliBanditVectorEnv(1, num_arms=4)
    c.reset(seed=6)
    np.testing.assert_array_equal(c.optimal_expected_reward, a.optimal_expected_reward[1:2])
    with pytest.raises(ValueError, match="seed"):
        a.reset(seed=[1, 2])
    with pytest.raises(ValueError, match="options"):
        a.reset(options={"resample": True})
