"""The probe set's bad input to the continuum bandits, their agents, the continuous Q-ensemble
and DelightSAC/TD3's saves: a clear error naming the argument, or the right answer."""

from __future__ import annotations

import math
import re
import warnings
import zipfile
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium import spaces
from gymnasium.wrappers import TransformObservation

from delight_gym import ContinuumBanditEnv, ContinuumBanditVectorEnv
from delight_gym.agents.continuum import ContinuumAgent, srinivas_beta, srinivas_beta_continuous
from delight_gym.envs import continuum
from delight_gym.posteriors.q_ensemble import ContinuousQEnsemble, ContinuousTransitions
from delight_gym.sb3 import DelightSAC, DelightTD3

OBS, ACT = spaces.Box(-1.0, 1.0, (3,)), spaces.Box(-1.0, 1.0, (2,))


def test_vector_placement_work_counts_every_env() -> None:
    for num_envs, bumps in ((20000, 1000), (2, 2500), (10**6, 10)):
        with pytest.raises(ValueError, match=rf"num_envs={num_envs}.*MAX_PLACEMENT_WORK"):
            ContinuumBanditVectorEnv(num_envs, num_bumps=bumps, dim=2)
    ContinuumBanditVectorEnv(2, num_bumps=2500, dim=2, centers=np.full((2501, 2), 0.5),
                             heights=np.ones(2501))  # fmt: skip


def test_mean_reward_refuses_too_many_points_up_front() -> None:
    env = ContinuumBanditEnv(dim=2, num_bumps=300, noise=0.0)
    env.reset(seed=0)
    for shape in ((10**6, 2), (10, 10**5, 2)):
        with pytest.raises(ValueError, match=r"x of shape .*MAX_PLACEMENT_WORK"):
            env.mean_reward(np.zeros(shape))
    assert env.mean_reward(np.zeros((1000, 2))).shape == (1000,)


def test_basin_volume_refuses_an_overflowing_volume() -> None:
    for width, dim in ((1e300, 10), (1e10, 100), (1e3, 200)):
        with pytest.raises(
            ValueError, match=rf"{re.escape(f'width={width}')}, dim={dim}.*overflows"
        ):
            continuum.basin_volume(width, dim, 0.5)
    assert continuum.basin_volume(1.0, 1, math.exp(-0.5)) == pytest.approx(2.0)  # [-1, 1]


@pytest.mark.parametrize(
    ("name", "kwargs", "match"),
    [
        ("greedy", {"num_candidates": 10**6, "num_local": 0, "num_posterior": 0}, "num_candidates"),
        ("thompson", {"num_candidates": 10**7 + 1, "num_posterior": 10**7, "num_local": 0},
         "num_posterior=10000000"),
        ("ucb", {"num_candidates": 10**9}, "num_candidates=1000000000"),
    ],
)  # fmt: skip
def test_agent_pool_sizes_are_checked_at_construction(name: str, kwargs: Any, match: str) -> None:
    with pytest.raises(ValueError, match=rf"{match}.*would need"):
        ContinuumAgent(name, 200, 1, seed=0, **kwargs)


def test_srinivas_betas_stay_finite_and_refuse_subnormal_delta() -> None:
    ln10 = math.log(10.0)
    want = 2 * (320 * ln10 + math.log(math.pi**2 / 6) + ln10)  # β = 2 log(t²π²/(6·0.1))
    assert float(srinivas_beta(1e160, 1)) == pytest.approx(want, rel=1e-14)
    both = srinivas_beta(np.array([1.0, 1e160]), 1)
    assert both[0] == srinivas_beta(1, 1) and both[1] == pytest.approx(want, rel=1e-14)
    # Theorem 2 at t = 1e300, d = 3 (a = b = r = 1, δ = 0.1), summed in logs by hand
    log_t = 300 * ln10
    first = 2 * (math.log(2 * math.pi**2 / 3) + 2 * log_t + ln10)
    inner = 2 * log_t + math.log(3) + 0.5 * math.log(math.log(12) + ln10)
    assert float(srinivas_beta_continuous(1e300, 3)) == pytest.approx(first + 6 * inner)
    out = srinivas_beta_continuous(1, 1, a=1e308, delta=1e-300)
    log4da = math.log(4) + 608 * ln10  # log(4·1e308 / 1e-300)
    want2 = 2 * math.log(2 * math.pi**2 / 3e-300) + 2 * 0.5 * math.log(log4da)
    assert float(out) == pytest.approx(want2, rel=1e-12)
    for call in (
        lambda: srinivas_beta(1, 1, delta=1e-320),
        lambda: srinivas_beta_continuous(1, 1, delta=4e-310),
    ):
        with pytest.raises(ValueError, match=r"\bdelta must be at least"):
            call()
    with pytest.raises(ValueError, match="ucb_delta must be at least"):
        ContinuumAgent("ucb", 1, 1, seed=0, ucb_delta=1e-320)


def test_agent_update_refuses_actions_outside_the_box_or_of_wrong_shape() -> None:
    agent = ContinuumAgent("greedy", 2, 1, seed=0)
    for actions, match in (
        (np.full((2, 1), 7.0), r"actions must lie in \[0, 1\]"),
        (np.full((2, 1), -1e-9), r"actions must lie in \[0, 1\]"),
        (np.full((3, 1), 0.5), r"actions must have shape \(2, 1\)"),
        (np.full(2, 0.5), r"actions must have shape \(2, 1\)"),
        (np.array([[np.nan], [0.5]]), "actions must be finite"),
    ):
        with pytest.raises(ValueError, match=match):
            agent.update(actions, np.zeros(2))
    assert agent.t == 0  # nothing absorbed


def test_agent_names_local_std_out_of_the_hosts_range() -> None:
    for std in (1e7, 1e-13, 1e300):
        with pytest.raises(ValueError, match="local_std must lie in"):
            ContinuumAgent("delight", 1, 1, seed=0, local_std=std)
    assert ContinuumAgent("greedy", 1, 1, seed=0, local_std=1e7).local_std == 1e7  # clipped


def test_q_ensemble_query_size_is_checked() -> None:
    q = ContinuousQEnsemble(OBS, ACT, seed=0)
    big = torch.zeros((1, 10**7, 2))  # 10 heads of width 64: 51 GB of hidden layers
    for call in (
        lambda: q.values(np.zeros((1, 3)), big),
        lambda: q.expected_improvement(np.zeros((1, 3)), big),
        lambda: ContinuousQEnsemble(OBS, ACT, hidden_sizes=(10**4,)).head_values(
            np.zeros((1, 3)), torch.zeros((1, 10**6, 2)), 0
        ),
    ):
        with pytest.raises(ValueError, match=r"actions of shape .* would need"):
            call()


def test_q_ensemble_refuses_action_ranges_infinite_in_its_dtype() -> None:
    for box, dtype in (
        (spaces.Box(-3e38, 3e38, (2,), dtype=np.float32), torch.float32),
        (spaces.Box(-1e300, 1e300, (2,), dtype=np.float64), torch.float32),
        (spaces.Box(1e308, 1.7e308, (1,), dtype=np.float64), torch.float64),  # high + low
    ):
        with pytest.raises(ValueError, match=rf"action_space.*finite in {dtype}"):
            ContinuousQEnsemble(OBS, box, dtype=dtype)
    box = spaces.Box(-1e300, 1e300, (2,), dtype=np.float64)
    assert ContinuousQEnsemble(OBS, box, dtype=torch.float64, seed=0).act_dim == 2


def test_q_ensemble_refuses_observations_beyond_its_magnitude() -> None:
    q = ContinuousQEnsemble(OBS, ACT, num_heads=2, hidden_sizes=(8,), seed=0)
    r = np.random.default_rng(1)
    batch = ContinuousTransitions(
        r.uniform(-1, 1, (4, 3)), r.uniform(-1, 1, (4, 2)), np.zeros(4),
        r.uniform(-1, 1, (4, 3)), np.zeros(4), r.uniform(-1, 1, (4, 2)),
    )  # fmt: skip
    before = [p.clone() for p in q.online.parameters()]
    for field in ("observations", "next_observations"):
        with pytest.raises(ValueError, match=rf"{field} must be at most 4.29e\+09"):
            q.update(batch._replace(**{field: np.full((4, 3), 1e30)}))
    with pytest.raises(ValueError, match="observations must be at most"):
        q.values(np.full((1, 3), 3e38), np.zeros((1, 2, 2)))
    assert all(torch.equal(a, b) for a, b in zip(before, q.online.parameters(), strict=True))
    wide = ContinuousQEnsemble(OBS, ACT, num_heads=2, hidden_sizes=(8,), dtype=torch.float64)
    with pytest.raises(ValueError, match=r"observations must be at most 1.16e\+77"):
        wide.values(np.full((1, 3), 1e300), np.zeros((1, 2, 2)))


def _saved(tmp_path: Path, cls: Any = DelightSAC, env: str = "Pendulum-v1") -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = cls(
            "MlpPolicy", env, seed=0, learning_starts=5, batch_size=8,
            posterior_kwargs={"num_heads": 2, "hidden_sizes": (8,)},
            policy_kwargs={"net_arch": [8]},
        )  # fmt: skip
        model.learn(8)
    model.save(tmp_path / f"{cls.__name__}-{env}.zip")
    return model, tmp_path / f"{cls.__name__}-{env}.zip"


def _rewrite(src: Path, dst: Path, drop: str = "", replace: dict[str, bytes] | None = None) -> Path:
    with zipfile.ZipFile(src) as a, zipfile.ZipFile(dst, "w") as b:
        for item in a.namelist():
            if item != drop:
                b.writestr(item, (replace or {}).get(item, a.read(item)))
    return dst


def test_tampered_saves_give_one_error_naming_the_file(tmp_path: Path) -> None:
    sac, path = _saved(tmp_path)
    with zipfile.ZipFile(path) as z:
        policy = z.read("policy.pth")
    cases = {
        _rewrite(path, tmp_path / "nopol.zip", drop="policy.pth"): "no policy.pth",
        _rewrite(path, tmp_path / "novar.zip", drop="pytorch_variables.pth"): "pytorch_variables",
        _rewrite(path, tmp_path / "cutpol.zip", replace={"policy.pth": policy[:500]}): "readable",
    }
    for file, match in cases.items():
        with pytest.raises(ValueError, match=rf"{file.name}.*{match}"):
            DelightSAC.load(file)
    with pytest.raises(ValueError, match=r"DelightSAC-Pendulum-v1.zip .*DelightTD3.*SACPolicy"):
        DelightTD3.load(path)
    td3, td3_path = _saved(tmp_path, DelightTD3)
    with pytest.raises(ValueError, match=r"DelightTD3-Pendulum-v1.zip .*TD3Policy"):
        DelightSAC.load(td3_path)
    other, _ = _saved(tmp_path, env="MountainCarContinuous-v0")
    sac.delight = other.delight
    sac.save(tmp_path / "mixed.zip")
    with pytest.raises(ValueError, match=r"mixed.zip .*engine's observation_space"):
        DelightSAC.load(tmp_path / "mixed.zip")
    assert DelightTD3.load(td3_path).delight.t == td3.delight.t


@pytest.mark.parametrize("cls", [DelightSAC, DelightTD3], ids=lambda c: c.__name__)
@pytest.mark.parametrize("policy", ["MlpPolicy", "MultiInputPolicy"])
def test_dict_observations_are_refused_before_sb3_does(cls: Any, policy: str) -> None:
    env = gym.make("Pendulum-v1")
    dict_env = TransformObservation(
        env, lambda o: {"x": o}, spaces.Dict({"x": env.observation_space})
    )
    with pytest.raises(TypeError, match=rf"{cls.__name__} supports Box observations, not Dict"):
        cls(policy, dict_env)
