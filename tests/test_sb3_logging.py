"""DE's statistics in SB3's logger: ``rollout/exploration_rate`` = ε_t and ``delight/*`` for
``DelightDQN``, ``BootstrappedDQN`` and the wrapper, read back from SB3's CSV output.

The logged values are recomputed here from every decision's ``last_info``, recorded as the
algorithm made it, over the decisions between two dumps (the CSV's ``time/total_timesteps``
tells where each interval ends), and ε from its closed form ``M/(M + t)``.
"""

from __future__ import annotations

from pathlib import Path

import gymnasium as gym
import numpy as np
import pandas as pd
import pytest
from stable_baselines3 import PPO
from stable_baselines3.common.evaluation import evaluate_policy
from stable_baselines3.common.logger import configure
from stable_baselines3.common.vec_env import DummyVecEnv

import delight_gym  # noqa: F401 - registers DeepSea-v0
from delight_gym import DelightExplorationWrapper
from delight_gym.de.stats import LOG_KEYS, DelightStats
from delight_gym.sb3 import BootstrappedDQN, DelightDQN


def test_stats_arithmetic_by_hand() -> None:
    stats = DelightStats()
    assert stats.log(_Sink()) is False  # nothing recorded: nothing logged
    stats.record(
        np.array([True, False, False]),
        np.array([2, -1, 0]),
        np.array([False, False, True]),
        np.array([0.4]),
        0.5,
        evaluated=np.array([True, False, True]),
    )
    stats.record(np.array([True]), np.array([3]), np.array([False]), np.array([0.2]), 0.25)
    s = stats.summary()
    assert s["delight/override_rate"] == 2 / 4
    assert s["delight/gate_size"] == (2 + 0 + 3) / 3  # the unevaluated row does not count
    assert s["delight/gate_empty_rate"] == 1 / 3
    assert s["delight/overridden_ei"] == pytest.approx(0.3)
    assert s["rollout/exploration_rate"] == 0.25
    sink = _Sink()
    assert stats.log(sink) is True and sink.values == s and stats.steps == 0
    # The totals are never reset; a window with no evaluated gate and no override logs no mean
    # over nothing (no NaN, no made-up 0).
    assert (stats.total_steps, stats.total_overridden) == (4, 2)
    assert (stats.total_evaluated, stats.total_gate_empty) == (3, 1)
    stats.record(
        np.array([False]),
        np.array([-1]),
        np.array([False]),
        np.array([]),
        0.2,
        evaluated=np.array([False]),
    )
    assert stats.summary() == {"rollout/exploration_rate": 0.2, "delight/override_rate": 0.0}
    assert (stats.total_steps, stats.total_evaluated) == (5, 3)
    assert DelightStats().summary() == {}
    with pytest.raises(ValueError, match="overridden_ei"):
        stats.record(np.array([True]), np.array([1]), np.array([False]), np.array([]), 0.1)
    with pytest.raises(ValueError, match="evaluated"):
        stats.record(
            np.array([True]),
            np.array([1]),
            np.array([False]),
            np.array([0.1]),
            0.1,
            evaluated=np.array([True, True]),
        )


def test_record_info_reads_a_wrapper_decision() -> None:
    stats = DelightStats()
    info = {  # two rows: the first overridden to action 1 (gate {1}), the second not evaluated
        "overridden": np.array([True, False]),
        "gate_size": np.array([1, -1]),
        "epsilon": 0.4,
        "expected_improvement": np.array([[0.0, 0.7], [np.nan, np.nan]]),
    }
    stats.record_info(info, np.array([1, 0]))
    single = {"overridden": False, "gate_size": 0, "epsilon": 0.3, "expected_improvement": [0, 0]}
    stats.record_info(single, 0)
    assert (stats.steps, stats.overridden, stats.evaluated) == (3, 1, 2)
    assert (stats.gate_size_sum, stats.gate_empty) == (1, 1)
    assert stats.overridden_ei_sum == 0.7 and stats.epsilon == 0.3


class _Sink:
    def __init__(self) -> None:
        self.values: dict[str, float] = {}

    def record(self, key: str, value: float) -> None:
        self.values[key] = value


def _expected(infos: list[dict], actions: list[np.ndarray]) -> dict[str, float]:
    """The five logged values over these decisions, recomputed from their ``last_info``."""
    over = np.concatenate([np.atleast_1d(i["overridden"]) for i in infos])
    gate = np.concatenate([np.atleast_1d(i["gate_size"]) for i in infos])
    ei = [
        np.asarray(i["expected_improvement"]).reshape(len(a), -1)[np.arange(len(a)), a]
        for i, a in zip(infos, actions, strict=True)
    ]
    chosen_ei = np.concatenate(ei)
    return {
        "rollout/exploration_rate": float(infos[-1]["epsilon"]),
        "delight/override_rate": over.mean(),
        "delight/gate_size": gate.mean(),
        "delight/gate_empty_rate": (gate == 0).mean(),
        **({"delight/overridden_ei": chosen_ei[over].mean()} if over.any() else {}),
    }


def test_delight_dqn_logs_epsilon_and_delight_stats_to_csv(tmp_path: Path) -> None:
    # No gradient step (learning_starts beyond the run): the logging alone, on the ensemble.
    model = DelightDQN(
        "MlpPolicy", "CartPole-v1", seed=0, learning_starts=10_000, lazy_gate=False, device="cpu"
    )
    model.set_logger(configure(str(tmp_path), ["csv"]))
    assert model.delight is not None
    de = model.delight
    predict = de.predict
    infos: list[dict] = []
    actions: list[np.ndarray] = []

    def recording_predict(*args, **kwargs):
        out = predict(*args, **kwargs)
        infos.append(dict(de.last_info, t=de.t))
        actions.append(np.atleast_1d(out[0]))
        return out

    de.predict = recording_predict  # type: ignore[method-assign]
    model.learn(400, log_interval=1)
    log = pd.read_csv(tmp_path / "progress.csv")
    assert set(LOG_KEYS) <= set(log.columns)
    assert len(log) >= 5
    start = 0
    for _, row in log.iterrows():
        end = int(row["time/total_timesteps"])
        window = [k for k, i in enumerate(infos) if start <= i["t"] < end]
        assert len(window) == end - start
        want = _expected([infos[k] for k in window], [actions[k] for k in window])
        # ε of the interval's last decision, M/(M + t) at t = end - 1: never SB3's 0.
        assert row["rollout/exploration_rate"] == pytest.approx(100 / (100 + end - 1))
        assert row["rollout/exploration_rate"] > 0
        for key in LOG_KEYS:
            if key in want:
                assert row[key] == pytest.approx(want[key], rel=1e-6), key
            else:
                assert np.isnan(row[key]), key  # left blank: nothing to average
        start = end


def test_bootstrapped_dqn_logs_the_same_keys_to_csv(tmp_path: Path) -> None:
    model = BootstrappedDQN(
        "MlpPolicy", "CartPole-v1", seed=0, delight=True, learning_starts=10_000, device="cpu"
    )
    model.set_logger(configure(str(tmp_path), ["csv"]))
    model.learn(200, log_interval=1)
    log = pd.read_csv(tmp_path / "progress.csv")
    assert set(LOG_KEYS) <= set(log.columns)
    # The episode clock: ε at a dump is M/(M + episodes so far) with M = 100.
    episodes = log["time/episodes"].to_numpy()
    np.testing.assert_allclose(log["rollout/exploration_rate"], 100 / (100 + episodes - 1))
    # exploration_rate holds ε_t after the last step, as DQN's (M/(M + episodes completed)).
    assert model.exploration_rate == model.epsilon == pytest.approx(100 / (100 + model.episodes))


def test_plain_bootstrapped_dqn_logs_no_delight_keys(tmp_path: Path) -> None:
    model = BootstrappedDQN(
        "MlpPolicy", "CartPole-v1", seed=0, learning_starts=10_000, device="cpu"
    )
    model.set_logger(configure(str(tmp_path), ["csv"]))
    model.learn(200, log_interval=1)
    log = pd.read_csv(tmp_path / "progress.csv")
    assert len(log) >= 1 and not set(LOG_KEYS) & set(log.columns)
    assert model.exploration_rate == 0.0 and model.delight_stats.steps == 0


def test_wrapper_logs_each_evaluation_episode(tmp_path: Path) -> None:
    ppo = PPO("MlpPolicy", "CartPole-v1", n_steps=128, batch_size=64, seed=0, device="cpu")
    wrapper = DelightExplorationWrapper(ppo, seed=0)
    logger = configure(str(tmp_path), ["csv"])
    env = DummyVecEnv([lambda: gym.make("CartPole-v1")])
    env.seed(0)
    _, lengths = evaluate_policy(
        wrapper,
        env,
        n_eval_episodes=3,
        deterministic=False,
        return_episode_rewards=True,
        callback=wrapper.evaluation_callback(logger),
    )
    log = pd.read_csv(tmp_path / "progress.csv")
    logged = set(LOG_KEYS) & set(log.columns)
    assert len(log) == 3 and set(LOG_KEYS) - logged <= {"delight/overridden_ei"}
    # The overridden EI is a mean over the overridden decisions: logged only if there were some.
    assert ("delight/overridden_ei" in logged) == (wrapper.stats.total_overridden > 0)
    ends = np.cumsum(lengths)
    # One row per episode, at the step count so far; ε of its last decision, t = end - 1.
    np.testing.assert_allclose(log["rollout/exploration_rate"], 100 / (100 + ends - 1))
    assert (log["delight/override_rate"] >= 0).all()


def test_no_nan_reaches_the_logger_when_no_decision_explored() -> None:
    """With the lazy gate and ε_t tiny, whole log windows have no evaluated gate: their gate
    statistics are left out (they used to be logged as NaN)."""
    model = DelightDQN(
        "MlpPolicy",
        "CartPole-v1",
        delight={"half_life": 1e-3},
        seed=0,
        learning_starts=10_000,
        device="cpu",
    )
    recorded: list[tuple[str, float]] = []
    model.set_logger(configure(None, []))
    record = model.logger.record

    def spy(key: str, value: object, exclude: object = None) -> None:
        recorded.append((key, value))  # type: ignore[arg-type]
        record(key, value, exclude)

    model.logger.record = spy  # type: ignore[method-assign]
    model.learn(300, log_interval=1)
    stats = model.delight_stats
    assert stats.total_steps == model.num_timesteps == 300
    assert stats.total_evaluated < 300  # some windows evaluated no gate at all
    de_values = [v for k, v in recorded if k.startswith("delight/")]
    assert de_values and all(np.isfinite(v) for v in de_values)
    gate_logged = sum(k == "delight/gate_size" for k, _ in recorded)
    rate_logged = sum(k == "delight/override_rate" for k, _ in recorded)
    assert gate_logged < rate_logged
