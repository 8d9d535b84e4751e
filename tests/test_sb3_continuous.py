"""Candidate-set DE on ``Box`` actions: ``ContinuousDelightWrapper`` around SB3's continuous
models and callables, and ``DelightSAC`` / ``DelightTD3`` collecting with DE."""

from __future__ import annotations

import csv
import inspect
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
import torch

pytest.importorskip("stable_baselines3")

from gymnasium import spaces
from stable_baselines3 import A2C, DDPG, PPO, SAC, TD3
from stable_baselines3.common.logger import configure
from stable_baselines3.common.off_policy_algorithm import OffPolicyAlgorithm

from delight_gym import ContinuousDelightWrapper, DelightExplorationWrapper
from delight_gym.posteriors.q_ensemble import ContinuousQEnsemble
from delight_gym.sb3 import DelightSAC, DelightTD3
from delight_gym.sb3.hosts import SB3GaussianHost

ENVS = ("Pendulum-v1", "MountainCarContinuous-v0")
MODELS = (SAC, TD3, DDPG, PPO, A2C)
SMALL_POSTERIOR = {"num_heads": 4, "hidden_sizes": (16,)}


def _small() -> dict[str, Any]:
    """Small networks (a fresh dict: SB3 writes into ``policy_kwargs``)."""
    return {"policy_kwargs": {"net_arch": [16, 16]}}


def _model(cls: Any, env_id: str) -> Any:
    return cls("MlpPolicy", env_id, seed=0, device="cpu", **_small())


def _observations(env_id: str, n: int = 5) -> np.ndarray:
    env = gym.make(env_id)
    env.observation_space.seed(0)
    return np.stack([env.observation_space.sample() for _ in range(n)])


class ZeroEI:
    """A posterior whose EI is 0 everywhere: the gate can never open."""

    def expected_improvement(self, observations: Any, candidates: Any) -> np.ndarray:
        return np.zeros(np.asarray(candidates).shape[:2])

    def sample_values(self, observations: Any, actions: Any, rng: Any) -> np.ndarray:
        return rng.random(np.asarray(actions).shape[:2])


# -- the wrapper -----------------------------------------------------------------------------


@pytest.mark.parametrize("env_id", ENVS)
@pytest.mark.parametrize("cls", MODELS, ids=lambda c: c.__name__)
def test_wrapper_predicts_with_sb3_types_and_the_host_when_deterministic(
    cls: Any, env_id: str
) -> None:
    model = _model(cls, env_id)
    de = ContinuousDelightWrapper(model, seed=0, posterior_kwargs=SMALL_POSTERIOR)
    batch = _observations(env_id)
    for obs in (batch[0], batch):
        ours, state = de.predict(obs)
        theirs, their_state = model.predict(obs)
        assert type(ours) is type(theirs) and ours.dtype == theirs.dtype
        assert ours.shape == theirs.shape and state is their_state is None
        assert model.action_space.contains(ours.reshape(-1, 1)[0])
        host, _ = de.predict(obs, deterministic=True)
        own, _ = model.predict(obs, deterministic=True)
        np.testing.assert_array_equal(host, own)  # the host's own action, exactly
    assert de.stats.total_steps == 1 + len(batch)  # deterministic calls are not DE decisions


@pytest.mark.parametrize("cls", MODELS, ids=lambda c: c.__name__)
def test_infinite_gate_price_or_zero_ei_plays_the_host(cls: Any) -> None:
    model = _model(cls, "Pendulum-v1")
    obs = _observations("Pendulum-v1", 16)
    for kwargs in ({"delight": {"gate_price": np.inf}}, {"posterior": ZeroEI()}):
        de = ContinuousDelightWrapper(model, seed=1, **kwargs)  # ε_0 = 1: every row explores
        actions, _ = de.predict(obs)
        info = de.last_info
        assert info["explored"].all() and not info["overridden"].any()
        assert (info["gate_size"] == 0).all()
        np.testing.assert_array_equal(actions, info["host_actions"].astype(np.float32))
        if cls in (TD3, DDPG):  # a deterministic host's action is μ(s)
            np.testing.assert_array_equal(actions, model.predict(obs, deterministic=True)[0])


def test_de_overrides_the_host_with_an_open_gate() -> None:
    de = ContinuousDelightWrapper(_model(TD3, "Pendulum-v1"), seed=0)
    actions, _ = de.predict(_observations("Pendulum-v1", 32))
    info = de.last_info
    over = info["overridden"]
    assert over.any() and (info["gate_size"][over] >= 1).all()
    assert (info["delight"][over] >= de.gate_price).all()  # the override's χ is in the gate
    assert not np.array_equal(actions[over], info["host_actions"][over].astype(np.float32))
    summary = de.stats.summary()
    assert summary["delight/override_rate"] == over.mean()


def test_sac_host_density_is_the_squashed_gaussian_in_env_units() -> None:
    """Worked out independently: ``u = atanh(scale(a))``, ``log N(u; μ, σ) − Σ log(1 − tanh²u)
    − Σ log(half)``, for candidates inside MountainCarContinuous's box."""
    model = _model(SAC, "MountainCarContinuous-v0")
    host = SB3GaussianHost(model)
    obs = _observations("MountainCarContinuous-v0", 3)
    cands = np.random.default_rng(0).uniform(-0.99, 0.99, size=(3, 4, 1))
    ours = host.log_weight(obs, None, cands)
    with torch.no_grad():
        mean, log_std, _ = model.actor.get_action_dist_params(torch.as_tensor(obs))
    mu, sd = mean.numpy().astype(float)[:, None], np.exp(log_std.numpy().astype(float))[:, None]
    u = np.arctanh(cands)  # the box is [-1, 1]: scale(a) = a, half = 1
    expected = (-0.5 * ((u - mu) / sd) ** 2 - np.log(sd * np.sqrt(2 * np.pi))).sum(-1)
    expected -= np.log(1 - np.tanh(u) ** 2).sum(-1)
    np.testing.assert_allclose(ours, expected, rtol=1e-4, atol=1e-3)
    draws = host.sample(obs, None, 4000, np.random.default_rng(0))
    assert draws.shape == (3, 4000, 1) and np.abs(draws).max() <= 1.0
    np.testing.assert_allclose(
        np.arctanh(np.clip(draws, -0.999999, 0.999999)).mean(1), mu[:, 0], atol=0.1
    )


def test_ppo_host_density_is_its_gaussian() -> None:
    model = _model(PPO, "Pendulum-v1")
    obs = _observations("Pendulum-v1", 2)
    cands = np.random.default_rng(0).uniform(-2, 2, size=(2, 3, 1))
    ours = SB3GaussianHost(model).log_weight(obs, None, cands)
    with torch.no_grad():
        dist = model.policy.get_distribution(torch.as_tensor(obs)).distribution
        expected = dist.log_prob(torch.as_tensor(cands.transpose(1, 0, 2), dtype=torch.float32))
    np.testing.assert_allclose(ours, expected.sum(-1).numpy().T, rtol=1e-5)


def test_callable_hosts() -> None:
    obs_space = spaces.Box(-1.0, 1.0, (2,), np.float32)
    act_space = spaces.Box(-1.0, 1.0, (1,), np.float32)
    fixed = ContinuousDelightWrapper(
        lambda o: np.full((len(o), 1), 0.5),
        seed=0,
        observation_space=obs_space,
        action_space=act_space,
    )
    assert fixed.predict(np.zeros(2), deterministic=True)[0].tolist() == [0.5]
    rng = np.random.default_rng(0)

    def log_density(o: Any, c: Any) -> np.ndarray:
        return -0.5 * (np.asarray(c)[..., 0] / 0.3) ** 2

    stochastic = ContinuousDelightWrapper(
        lambda o: np.clip(rng.normal(0, 0.3, (len(o), 1)), -1, 1),
        seed=0,
        observation_space=obs_space,
        action_space=act_space,
        host_log_density=log_density,
        posterior=ZeroEI(),
    )
    actions, _ = stochastic.predict(np.zeros((4, 2)))
    np.testing.assert_array_equal(actions, stochastic.last_info["host_actions"].astype(np.float32))


def test_bad_inputs_are_named() -> None:
    obs_space = spaces.Box(-1.0, 1.0, (2,), np.float32)
    box = spaces.Box(-1.0, 1.0, (1,), np.float32)
    half = lambda o: np.full((len(o), 1), 0.5)  # noqa: E731
    spaces_ = {"observation_space": obs_space, "action_space": box}
    for key in ("n_host", "n_posterior"):
        for bad in (0, -1):
            with pytest.raises(ValueError, match=key):
                ContinuousDelightWrapper(half, **spaces_, **{key: bad})
    with pytest.raises(ValueError, match="action_space"):
        ContinuousDelightWrapper(
            half, observation_space=obs_space, action_space=spaces.Box(-np.inf, np.inf, (1,))
        )
    with pytest.raises(ValueError, match="host_std"):
        ContinuousDelightWrapper(half, **spaces_, host_std=0.0)
    with pytest.raises(ValueError, match="host"):
        ContinuousDelightWrapper(lambda o: np.full((len(o), 1), 3.0), **spaces_).predict(
            np.zeros(2)
        )
    nan_density = ContinuousDelightWrapper(
        half, **spaces_, host_log_density=lambda o, c: np.full(np.shape(c)[:2], np.nan)
    )
    with pytest.raises(ValueError, match="host_log_density"):
        nan_density.predict(np.zeros(2))
    with pytest.raises(ValueError, match="baseline"):
        ContinuousDelightWrapper(half, **spaces_, delight={"baseline": "max"})
    with pytest.raises(TypeError, match="host_std"):
        ContinuousDelightWrapper(_model(SAC, "Pendulum-v1"), host_std=0.2)
    with pytest.raises(TypeError, match="host_temperature"):
        DelightExplorationWrapper(_model(SAC, "Pendulum-v1"), host_temperature=1.0)
    with pytest.raises(TypeError, match="n_host"):
        DelightExplorationWrapper(
            half,
            observation_space=spaces_["observation_space"],
            action_space=gym.spaces.Discrete(2),
            n_host=3,
        )
    with pytest.raises(ValueError, match="n_host"):
        DelightSAC("MlpPolicy", "Pendulum-v1", n_host=0)
    with pytest.raises(ValueError, match="use_sde"):
        DelightSAC("MlpPolicy", "Pendulum-v1", use_sde=True)
    with pytest.raises(ValueError, match="n_steps"):
        DelightTD3("MlpPolicy", "Pendulum-v1", n_steps=3)
    with pytest.raises(ValueError, match="host_std"):
        DelightTD3("MlpPolicy", "Pendulum-v1", host_std=-1.0)


# -- DelightSAC and DelightTD3 -----------------------------------------------------------------


class ActionRecorder(gym.Wrapper):
    """Records every (observation, executed action) pair."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        self.steps: list[tuple[np.ndarray, np.ndarray]] = []
        self._obs: Any = None

    def reset(self, **kwargs: Any) -> Any:
        self._obs, info = self.env.reset(**kwargs)
        return self._obs, info

    def step(self, action: Any) -> Any:
        self.steps.append((np.array(self._obs), np.array(action)))
        out = self.env.step(action)
        self._obs = out[0]
        return out


def _algorithm(cls: Any, env: Any, **kwargs: Any) -> Any:
    kwargs.setdefault("learning_starts", 40)
    return cls(
        "MlpPolicy",
        env,
        batch_size=16,
        seed=0,
        device="cpu",
        posterior_kwargs=SMALL_POSTERIOR,
        **_small(),
        **kwargs,
    )


def _parameters(fn: Any) -> list[tuple[str, Any, Any]]:
    """Names, kinds and defaults (SB3 passes its hooks' arguments by position)."""
    return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]


@pytest.mark.parametrize(("cls", "base"), [(DelightSAC, SAC), (DelightTD3, TD3)])
def test_hooks_keep_sb3_signatures(cls: Any, base: Any) -> None:
    assert _parameters(cls._sample_action) == _parameters(OffPolicyAlgorithm._sample_action)
    assert _parameters(cls.train) == _parameters(base.train)
    parameters = inspect.signature(cls.__init__).parameters
    assert [n for n in inspect.signature(base.__init__).parameters] == list(parameters)[
        : len(inspect.signature(base.__init__).parameters)
    ]
    assert {"delight", "posterior", "n_host", "n_posterior"} <= set(parameters)


@pytest.mark.parametrize("cls", [DelightSAC, DelightTD3], ids=lambda c: c.__name__)
def test_buffer_stores_exactly_the_executed_actions(cls: Any) -> None:
    env = ActionRecorder(gym.make("MountainCarContinuous-v0"))
    model = _algorithm(cls, env).learn(120)
    executed = np.array([a for _, a in env.steps]).reshape(120, -1)
    stored = model.replay_buffer.actions[:120, 0]
    np.testing.assert_array_equal(model.policy.unscale_action(stored), executed)
    assert model.delight_stats.total_overridden > 0  # DE did decide some of them
    assert model.delight.t == 120 and model.delight.posterior.num_updates == 80


def test_td3_with_an_infinite_gate_price_collects_the_host_action() -> None:
    env = ActionRecorder(gym.make("Pendulum-v1"))
    model = _algorithm(DelightTD3, env, delight={"gate_price": np.inf}, learning_starts=1000)
    model.learn(60)  # no gradient step: μ is the same network throughout
    obs = np.array([o for o, _ in env.steps])
    executed = np.array([a for _, a in env.steps]).reshape(60, -1)
    own, _ = model.predict(obs, deterministic=True)
    np.testing.assert_allclose(executed, own, rtol=0, atol=1e-6)
    assert model.delight_stats.total_overridden == 0


@pytest.mark.parametrize("cls", [DelightSAC, DelightTD3], ids=lambda c: c.__name__)
def test_save_load_without_env_round_trips(cls: Any, tmp_path: Path) -> None:
    model = _algorithm(cls, "Pendulum-v1").learn(80)
    path = tmp_path / "model.zip"
    model.save(path)
    loaded = cls.load(path, device="cpu")  # no env
    obs = _observations("Pendulum-v1", 4)
    np.testing.assert_array_equal(
        model.predict(obs, deterministic=True)[0], loaded.predict(obs, deterministic=True)[0]
    )
    np.testing.assert_array_equal(model.predict(obs)[0], loaded.predict(obs)[0])  # same rng
    a, b = model.delight, loaded.delight
    assert isinstance(b.posterior, ContinuousQEnsemble) and b.t == a.t == 80
    assert b.stats.total_steps == a.stats.total_steps
    for p, q in zip(a.posterior.online.parameters(), b.posterior.online.parameters(), strict=True):
        torch.testing.assert_close(p, q)
    assert b.host.model is loaded


@pytest.mark.parametrize("cls", [DelightSAC, DelightTD3], ids=lambda c: c.__name__)
def test_continued_learning_continues_the_clock_and_logs(cls: Any, tmp_path: Path) -> None:
    model = _algorithm(cls, "Pendulum-v1", delight={"half_life": 20})
    model.set_logger(configure(str(tmp_path), ["csv"]))
    model.learn(200, log_interval=1)
    model.learn(60, reset_num_timesteps=False, log_interval=1)
    assert model.delight.t == model.num_timesteps == 260
    assert model.epsilon == pytest.approx(20 / (20 + 260))
    with open(tmp_path / "progress.csv") as f:
        rows = list(csv.DictReader(f))
    assert float(rows[-1]["rollout/exploration_rate"]) == pytest.approx(20 / (20 + 199))
    assert {"delight/override_rate", "delight/gate_size"} <= set(rows[-1])


def test_wrapper_and_delight_sac_predict_have_sac_types_on_vec_env_observations() -> None:
    from stable_baselines3.common.env_util import make_vec_env

    model = _model(SAC, "Pendulum-v1")
    observations = {
        "one": _observations("Pendulum-v1", 1)[0],
        "batch": _observations("Pendulum-v1"),
        "vec_env": make_vec_env("Pendulum-v1", n_envs=3, seed=0).reset(),
    }
    ours_models = {
        "wrapper": ContinuousDelightWrapper(model, seed=0, posterior_kwargs=SMALL_POSTERIOR),
        "DelightSAC": DelightSAC("MlpPolicy", "Pendulum-v1", seed=0, device="cpu", **_small()),
    }
    for name, obs in observations.items():
        for deterministic in (True, False):
            theirs, their_state = model.predict(obs, deterministic=deterministic)
            for label, ours_model in ours_models.items():
                ours, state = ours_model.predict(obs, deterministic=deterministic)
                where = (label, name, deterministic)
                assert type(ours) is type(theirs) is np.ndarray, where
                assert (ours.dtype, ours.shape) == (theirs.dtype, theirs.shape), where
                assert state is their_state is None, where


@pytest.mark.parametrize("algorithm", [SAC, TD3])
def test_one_wrapper_dispatches_on_the_action_space(algorithm, tmp_path):
    """``DelightExplorationWrapper`` on a Box model is the Box engine, with the discrete one's
    interface: the same seeded actions as ``ContinuousDelightWrapper``, an evaluation callback,
    and save / load with the model (the loaded engine acts exactly as the saved one)."""
    from stable_baselines3.common.evaluation import evaluate_policy
    from stable_baselines3.common.monitor import Monitor

    from delight_gym.de.engine import DelightEngine

    model = _model(algorithm, "Pendulum-v1")
    wrapped = DelightExplorationWrapper(model, seed=3)
    direct = ContinuousDelightWrapper(model, seed=3)
    assert isinstance(wrapped, ContinuousDelightWrapper)
    assert isinstance(wrapped, DelightExplorationWrapper)
    obs = np.stack([model.observation_space.sample() for _ in range(4)])
    np.testing.assert_array_equal(wrapped.predict(obs)[0], direct.predict(obs)[0])
    env = Monitor(gym.make("Pendulum-v1", max_episode_steps=20))
    evaluate_policy(wrapped, env, n_eval_episodes=1, callback=wrapped.evaluation_callback())
    assert wrapped.t == 20
    path = tmp_path / "engine.zip"
    wrapped.save(path)
    loaded = DelightEngine.load(path)
    assert type(loaded) is type(wrapped) and loaded.t == wrapped.t
    assert type(loaded.host.model) is type(model)
    np.testing.assert_array_equal(loaded.predict(obs)[0], wrapped.predict(obs)[0])
    np.testing.assert_array_equal(
        loaded.predict(obs, deterministic=True)[0], model.predict(obs, deterministic=True)[0]
    )


def test_a_damaged_save_names_the_file(tmp_path):
    from delight_gym.de.engine import DelightEngine

    bad = tmp_path / "bad.zip"
    bad.write_bytes(b"not a zip")
    with pytest.raises(ValueError, match=r"bad\.zip"):
        DelightEngine.load(bad)
