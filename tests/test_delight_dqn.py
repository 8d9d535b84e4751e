"""DE for deep RL in SB3: the ensemble as the default posterior of the wrapper and of
``DelightDQN`` where the tabular one does not apply, ``evaluate_policy`` on the wrapper and both
algorithms, and ``DelightDQN``'s save/load with the ensemble.

References: SB3's own counters (gradient steps, timesteps), the closed-form ``ε_t = M/(M+t)``,
episode lengths from the environment, and a TD loss recomputed here in torch from the replay
buffer's transitions.
"""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch
from stable_baselines3 import PPO
from stable_baselines3.common.evaluation import evaluate_policy

import delight_gym  # noqa: F401 - registers DeepSea-v0
from delight_gym import DelightExplorationWrapper
from delight_gym.posteriors.ensemble import EnsembleQPosterior
from delight_gym.posteriors.value import TabularValuePosterior
from delight_gym.sb3 import BootstrappedDQN, DelightDQN

SMALL = {"learning_starts": 50, "buffer_size": 2000, "batch_size": 32, "device": "cpu"}


def _ppo_cartpole() -> PPO:
    return PPO("MlpPolicy", "CartPole-v1", n_steps=256, batch_size=64, seed=0, device="cpu").learn(
        256
    )


def test_the_issue_snippets_run_and_train_with_no_posterior_argument() -> None:
    model = _ppo_cartpole()
    wrapper = DelightExplorationWrapper(model, seed=0)
    assert isinstance(wrapper.posterior, EnsembleQPosterior)
    env = gym.make("CartPole-v1")
    obs, _ = env.reset(seed=0)
    for _ in range(150):
        action, _ = wrapper.predict(obs)
        nxt, reward, term, trunc, _ = env.step(int(action))
        wrapper.observe(obs, action, reward, nxt, term, trunc)
        obs = nxt if not (term or trunc) else env.reset()[0]
    # The ensemble trains on its own replay: one gradient step per transition once 128 are in.
    # The clock started where PPO's training stopped.
    assert wrapper.posterior.transitions == wrapper.t - model.num_timesteps == 150
    assert wrapper.posterior.sgd_steps == 150 - 128 + 1

    dqn = DelightDQN("MlpPolicy", "CartPole-v1", seed=0, **SMALL)
    dqn.learn(150)
    assert dqn.delight is not None
    post = dqn.delight.posterior
    assert isinstance(post, EnsembleQPosterior) and dqn.trains_posterior
    # One TD step of the heads per gradient step of the Q-network (SB3's own counter), none
    # from the posterior's own buffer, which stays empty.
    assert dqn._n_updates > 0 and post.sgd_steps == dqn._n_updates
    assert post.transitions == 0
    # DE's clock counts SB3's timesteps (learn rounds 150 up to whole train_freq chunks).
    assert dqn.delight.t == dqn.num_timesteps >= 150
    assert dqn.exploration_rate == pytest.approx(100 / (100 + dqn.num_timesteps))


def test_tabular_posterior_stays_the_default_for_discrete_and_one_hot() -> None:
    deep_sea = DelightDQN("MlpPolicy", gym.make("DeepSea-v0", size=4), seed=0, **SMALL)
    assert deep_sea.delight is not None
    assert isinstance(deep_sea.delight.posterior, TabularValuePosterior)
    assert not deep_sea.trains_posterior
    frozen = DelightDQN("MlpPolicy", gym.make("FrozenLake-v1"), seed=0, **SMALL)
    assert frozen.delight is not None
    assert isinstance(frozen.delight.posterior, TabularValuePosterior)


@pytest.mark.slow
def test_delight_dqn_ensemble_learns_from_the_replay_buffer() -> None:
    model = DelightDQN("MlpPolicy", "CartPole-v1", seed=1, train_freq=1, **SMALL)
    assert model.delight is not None
    post = model.delight.posterior
    assert isinstance(post, EnsembleQPosterior)
    # The initial heads are the ensemble's of the same seed (DelightDQN passes its seed on).
    before = EnsembleQPosterior(model.observation_space, model.action_space, gamma=0.99, seed=1)
    for key, value in before.network.state_dict().items():
        assert torch.equal(value, post.network.state_dict()[key])
    model.learn(250)
    assert model.replay_buffer is not None
    obs = model.replay_buffer.observations[:250, 0]
    k = post.num_heads
    # The priors never change ...
    assert torch.equal(before.network.frozen_weights_0[k:], post.network.frozen_weights_0[k:])
    # ... and with CartPole's +1 per step, TD learning from the replay raises every head's
    # values on the visited states (Q ≈ 0 at the start; Q -> Σ γ^t > 1 as it learns).
    gain = post.head_values(obs).mean(axis=(1, 2)) - before.head_values(obs).mean(axis=(1, 2))
    assert gain.shape == (k,) and np.all(gain > 0.5)


def test_delight_dqn_with_the_ensemble_saves_and_loads(tmp_path: Path) -> None:
    model = DelightDQN("MlpPolicy", "CartPole-v1", seed=0, **SMALL)
    model.learn(200)
    path = tmp_path / "dqn_ensemble.zip"
    model.save(path)
    loaded = DelightDQN.load(path, env=gym.make("CartPole-v1"), device="cpu")
    a, b = model.delight, loaded.delight
    assert a is not None and b is not None
    assert isinstance(b.posterior, EnsembleQPosterior)
    sa, sb = a.posterior.network.state_dict(), b.posterior.network.state_dict()
    assert sa.keys() == sb.keys()
    for key in sa:  # trainable heads, target heads and priors
        torch.testing.assert_close(sa[key], sb[key], rtol=0, atol=0)
    assert torch.equal(a.posterior.generator.get_state(), b.posterior.generator.get_state())
    assert b.posterior.sgd_steps == a.posterior.sgd_steps
    assert b.t == a.t == 200 and b.epsilon == a.epsilon
    assert a.rng.bit_generator.state == b.rng.bit_generator.state
    # Same state, same DE draws.
    obs = np.random.default_rng(0).normal(size=(64, 4)).astype(np.float32) * 0.05
    np.testing.assert_array_equal(model.predict(obs)[0], loaded.predict(obs)[0])
    loaded.learn(50, reset_num_timesteps=False)
    assert b.t == loaded.num_timesteps >= 250 and b.posterior.sgd_steps > a.posterior.sgd_steps


def _episode_lengths_of_host(model, episodes: int) -> list[int]:
    """Episode lengths of the host's own deterministic choice, stepped here."""
    env = gym.make("CartPole-v1")
    lengths = []
    for e in range(episodes):
        obs, _ = env.reset(seed=123 if e == 0 else None)
        done, n = False, 0
        while not done:
            action, _ = model.predict(obs, deterministic=True)
            obs, _, term, trunc, _ = env.step(int(action))
            n, done = n + 1, term or trunc
        lengths.append(n)
    return lengths


def test_evaluate_policy_on_the_wrapper() -> None:
    model = _ppo_cartpole()
    wrapper = DelightExplorationWrapper(model, seed=0)
    t0 = model.num_timesteps  # the clock starts where PPO's training stopped
    assert wrapper.t == t0 > 0

    def vec_env():
        from stable_baselines3.common.vec_env import DummyVecEnv

        env = DummyVecEnv([lambda: gym.make("CartPole-v1")])
        env.seed(123)
        return env

    # deterministic=True: the host's own choice, the same episodes as PPO alone.
    rewards, lengths = evaluate_policy(
        wrapper, vec_env(), n_eval_episodes=3, deterministic=True, return_episode_rewards=True
    )
    assert lengths == _episode_lengths_of_host(model, 3) and rewards == lengths
    assert wrapper.t == t0 and wrapper.stats.steps == 0
    # deterministic=False: DE frozen at the current ε and posterior (nothing is learned).
    heads = {k: v.clone() for k, v in wrapper.posterior.network.state_dict().items()}
    rewards, lengths = evaluate_policy(
        wrapper, vec_env(), n_eval_episodes=3, deterministic=False, return_episode_rewards=True
    )
    assert wrapper.t == t0 and wrapper.stats.steps >= sum(lengths)
    for key, value in wrapper.posterior.network.state_dict().items():
        assert torch.equal(value, heads[key])
    # With the evaluation callback: online DE, every evaluation transition observed.
    wrapper.stats.reset()
    rewards, lengths = evaluate_policy(
        wrapper,
        vec_env(),
        n_eval_episodes=3,
        deterministic=False,
        return_episode_rewards=True,
        callback=wrapper.evaluation_callback(),
    )
    assert wrapper.t - t0 == sum(lengths) == wrapper.posterior.transitions
    assert wrapper.stats.steps == sum(lengths)
    assert wrapper.epsilon == pytest.approx(100 / (100 + t0 + sum(lengths)))


@pytest.mark.parametrize("cls", [DelightDQN, BootstrappedDQN])
def test_evaluate_policy_on_both_algorithms(cls) -> None:
    kwargs = dict(SMALL) if cls is DelightDQN else {"learning_starts": 50, "device": "cpu"}
    model = cls("MlpPolicy", "CartPole-v1", seed=0, **kwargs)
    model.learn(100)
    t_before = model.delight.t if cls is DelightDQN else model.steps
    for deterministic in (True, False):
        rewards, lengths = evaluate_policy(
            model,
            model.get_env(),
            n_eval_episodes=2,
            deterministic=deterministic,
            return_episode_rewards=True,
        )
        assert len(lengths) == 2 and rewards == [float(n) for n in lengths]
    # Evaluation never trains: DE's clock is where training left it.
    assert (model.delight.t if cls is DelightDQN else model.steps) == t_before


def _checksums(module: torch.nn.Module) -> list[float]:
    """The sum and the sum of squares of every parameter (float64)."""
    params = [p.detach().double() for p in module.parameters()]
    return [float(sum(p.sum() for p in params)), float(sum((p**2).sum() for p in params))]


# Recorded by running the same code on commit 480e03e (before the speed-ups of issue #12:
# numpy one-hot checks, index_select look-ups, in-place blank rows, no per-step copies in
# _store_transition): the executed actions (np.packbits, hex) and checksums of the ensemble's
# and the Q-network's parameters after 300 steps, one torch thread.
_PINNED_RUNS = {
    "DeepSea-v0": (
        "00041020019550f52d0329ead79ef973f57fb6fee79fadd5ff07fdef7aaaffd3bbebffdcedf0",
        [19.68205787557963, 117.90251462068582],
        [1.3259243895008694, 12.031972680541427],
    ),
    "CartPole-v1": (
        "a004b020559550f52d0329ead78ef973f57eb6eee69badd5ff07fdef7aaaffd3bffffffffff0",
        [161.36379485251382, 173.69475395405667],
        [1.0762615657877177, 13.413021836329026],
    ),
}


@pytest.mark.parametrize("env_id", list(_PINNED_RUNS))
def test_seeded_run_matches_the_run_recorded_before_the_speed_ups(env_id: str) -> None:
    """Same seed, same actions and same learned parameters as the code before issue #12's
    speed-ups (DeepSea: one-hot look-ups with all-zero final observations; CartPole: dense)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        kw = {"size": 6, "mapping_seed": 0} if env_id == "DeepSea-v0" else {}
        env = gym.make(env_id, **kw)
        post = EnsembleQPosterior(
            env.observation_space, env.action_space, num_heads=4, hidden_sizes=(16, 16), seed=0
        )
        model = DelightDQN(
            "MlpPolicy",
            env,
            posterior=post,
            policy_kwargs={"net_arch": [16, 16]},
            seed=0,
            target_update_interval=4,
            train_freq=1,
            **SMALL,
        )
        model.learn(300)
    finally:
        torch.set_num_threads(threads)
    assert model.replay_buffer is not None
    actions = model.replay_buffer.actions[:300, 0, 0].astype(np.uint8)
    pinned_actions, pinned_heads, pinned_q = _PINNED_RUNS[env_id]
    assert np.packbits(actions).tobytes().hex() == pinned_actions
    np.testing.assert_allclose(_checksums(post.network), pinned_heads, rtol=1e-6)
    np.testing.assert_allclose(_checksums(model.q_net), pinned_q, rtol=1e-6)


@pytest.mark.parametrize(
    "env_id, kwargs", [("CartPole-v1", {}), ("FrozenLake-v1", {"is_slippery": False})]
)
def test_loaded_predict_has_sb3_dqn_types(env_id: str, kwargs: dict, tmp_path: Path) -> None:
    from stable_baselines3 import DQN
    from stable_baselines3.common.env_util import make_vec_env

    env = gym.make(env_id, **kwargs)
    env.observation_space.seed(0)
    observations = {
        "one": env.observation_space.sample(),
        "batch": np.stack([env.observation_space.sample() for _ in range(5)]),
        "vec_env": make_vec_env(env_id, n_envs=3, seed=0, env_kwargs=kwargs).reset(),
    }
    dqn = DQN("MlpPolicy", env, seed=0, device="cpu", policy_kwargs={"net_arch": [16]})
    DelightDQN("MlpPolicy", env, seed=0, policy_kwargs={"net_arch": [16]}, **SMALL).save(
        tmp_path / "ddqn"
    )
    model = DelightDQN.load(tmp_path / "ddqn", device="cpu")
    for name, obs in observations.items():
        for deterministic in (True, False):
            theirs, their_state = dqn.predict(obs, deterministic=deterministic)
            ours, state = model.predict(obs, deterministic=deterministic)
            assert type(ours) is type(theirs) is np.ndarray, (name, deterministic)
            assert (ours.dtype, ours.shape) == (theirs.dtype, theirs.shape), (name, deterministic)
            assert state is their_state is None
