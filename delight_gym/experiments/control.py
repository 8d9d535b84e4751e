"""SB3's SAC and TD3, with and without DE, on ``MountainCarContinuous-v0`` and ``Pendulum-v1``.

One run trains one agent for ``steps`` environment steps on one seed, records the first
training step that reached MountainCar's flag (an episode that terminated rather than
truncated), and evaluates the deterministic policy on ``episodes`` fresh episodes. Runs are
saved one file each under ``--out``, so an interrupted sweep loses only the run in progress;
:func:`summary_table` writes the table that ``docs/results/mountain-car-continuous.csv`` holds::

    python -m delight_gym.experiments.control mountain-car --seeds 5 --out results/control
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from delight_gym._checks import check_nonnegative_int, check_positive_int

__all__ = [
    "AGENTS",
    "TASKS",
    "evaluate_returns",
    "main",
    "make_agent",
    "run_control",
    "summary_table",
]

#: The tasks: gymnasium id, training steps, evaluation episodes, the "solved" return.
TASKS: dict[str, dict[str, Any]] = {
    "mountain-car": {"env": "MountainCarContinuous-v0", "steps": 50_000, "solved": 90.0},
    "pendulum": {"env": "Pendulum-v1", "steps": 20_000, "solved": -200.0},
}

#: The RL Zoo's tuned settings for MountainCarContinuous-v0 (rl-baselines3-zoo,
#: ``hyperparams/sac.yml`` and ``td3.yml``; TD3's budget there is 300 000 steps).
ZOO_SAC: dict[str, Any] = {
    "learning_rate": 3e-4,
    "buffer_size": 50_000,
    "batch_size": 512,
    "ent_coef": 0.1,
    "train_freq": 32,
    "gradient_steps": 32,
    "gamma": 0.9999,
    "tau": 0.01,
    "learning_starts": 0,
    "use_sde": True,
    "policy_kwargs": {"log_std_init": -3.67, "net_arch": [64, 64]},
}

#: Agent name → (algorithm, settings); ``td3_zoo`` adds Ornstein-Uhlenbeck noise σ = 0.5.
AGENTS = ("sac", "sac_de", "td3", "td3_de", "sac_zoo", "td3_zoo")


def make_agent(agent: str, env: Any, seed: int) -> Any:
    """The SB3 model of ``agent`` (one of :data:`AGENTS`) on ``env``, seeded ``seed``."""
    from stable_baselines3 import SAC, TD3
    from stable_baselines3.common.noise import OrnsteinUhlenbeckActionNoise

    from delight_gym.sb3 import DelightSAC, DelightTD3

    common: dict[str, Any] = {"seed": seed, "device": "cpu", "verbose": 0}
    if agent == "sac":
        return SAC("MlpPolicy", env, **common)
    if agent == "sac_de":
        return DelightSAC("MlpPolicy", env, **common)
    if agent == "td3":
        return TD3("MlpPolicy", env, **common)
    if agent == "td3_de":
        return DelightTD3("MlpPolicy", env, **common)
    if agent == "sac_zoo":
        return SAC("MlpPolicy", env, **ZOO_SAC, **common)
    if agent == "td3_zoo":
        d = env.action_space.shape[0]
        noise = OrnsteinUhlenbeckActionNoise(np.zeros(d), 0.5 * np.ones(d))
        return TD3("MlpPolicy", env, action_noise=noise, **common)
    raise ValueError(f"agent must be one of {list(AGENTS)}, got {agent!r}")


def evaluate_returns(model: Any, env_id: str, episodes: int) -> list[float]:
    """The deterministic policy's return on ``episodes`` fresh episodes of ``env_id`` (reset
    seeds ``10**6, 10**6 + 1, …``)."""
    import gymnasium as gym

    env = gym.make(env_id)
    returns = []
    for e in range(episodes):
        obs, _ = env.reset(seed=10**6 + e)
        total, done = 0.0, False
        while not done:
            action, _ = model.predict(obs, deterministic=True)
            obs, reward, terminated, truncated, _ = env.step(action)
            total += float(reward)
            done = terminated or truncated
        returns.append(total)
    return returns


def run_control(
    task: str, agent: str, seed: int, *, steps: int | None = None, episodes: int = 5
) -> dict[str, Any]:
    """Train ``agent`` on ``task`` (a key of :data:`TASKS`) for ``steps`` steps, seed ``seed``.

    Returns
    -------
    dict
        ``task, agent, seed, steps, first_flag_step`` (the first training step whose episode
        terminated at the flag; ``None`` if none), ``eval_returns``, ``seconds``.
    """
    import gymnasium as gym
    import torch
    from stable_baselines3.common.callbacks import BaseCallback

    if task not in TASKS:
        raise ValueError(f"task must be one of {list(TASKS)}, got {task!r}")
    spec = TASKS[task]
    steps = check_positive_int(spec["steps"] if steps is None else steps, "steps")
    seed = check_nonnegative_int(seed, "seed")
    episodes = check_positive_int(episodes, "episodes")

    class FirstFlag(BaseCallback):
        def __init__(self) -> None:
            super().__init__()
            self.step: int | None = None

        def _on_step(self) -> bool:
            if self.step is None:
                for done, info in zip(self.locals["dones"], self.locals["infos"], strict=True):
                    if done and not info.get("TimeLimit.truncated", False):
                        self.step = int(self.num_timesteps)
            return True

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        start = time.perf_counter()
        model = make_agent(agent, gym.make(spec["env"]), seed)
        flag = FirstFlag()
        model.learn(steps, callback=flag)
        returns = evaluate_returns(model, spec["env"], episodes)
        seconds = time.perf_counter() - start
    finally:
        torch.set_num_threads(threads)
    first = flag.step if task == "mountain-car" else None
    return {
        "task": task,
        "agent": agent,
        "seed": seed,
        "steps": steps,
        "first_flag_step": first,
        "eval_returns": returns,
        "seconds": seconds,
    }


def summary_table(runs: Sequence[dict[str, Any]], task: str) -> pd.DataFrame:
    """One row per agent: ``agent, seeds, solved, steps_to_flag_median, return_mean,
    return_se`` (``solved``: seeds whose mean evaluation return exceeds the task's threshold;
    ``steps_to_flag_median``: over the seeds that reached the flag in training, empty if none)."""
    threshold = TASKS[task]["solved"]
    rows = []
    for agent in [a for a in AGENTS if any(r["agent"] == a for r in runs)]:
        mine = [r for r in runs if r["agent"] == agent and r["task"] == task]
        finals = np.array([np.mean(r["eval_returns"]) for r in mine])
        flags = [r["first_flag_step"] for r in mine if r["first_flag_step"] is not None]
        rows.append(
            {
                "agent": agent,
                "seeds": len(mine),
                "solved": int((finals > threshold).sum()),
                "steps_to_flag_median": float(np.median(flags)) if flags else None,
                "return_mean": float(finals.mean()),
                "return_se": float(finals.std(ddof=1) / np.sqrt(len(finals)))
                if len(finals) > 1
                else None,
            }
        )
    return pd.DataFrame(rows)


def _save(path: Path, record: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        json.dump(record, f)
    os.replace(tmp, path)


def main(argv: Sequence[str] | None = None) -> None:
    """Run every agent on every seed (skipping saved runs), then write ``summary.csv``."""
    from tqdm import tqdm

    p = argparse.ArgumentParser(prog="python -m delight_gym.experiments.control")
    p.add_argument("task", choices=sorted(TASKS))
    p.add_argument("--agents", default=",".join(AGENTS), help="comma-separated agents")
    p.add_argument("--seeds", type=int, default=5, help="seeds S..S+N-1 (default 5)")
    p.add_argument("--seed", type=int, default=0, help="first seed S (default 0)")
    p.add_argument("--steps", type=int, default=None, help="training steps (task's default)")
    p.add_argument("--episodes", type=int, default=5, help="evaluation episodes")
    p.add_argument("--out", type=Path, default=Path("results/control"))
    args = p.parse_args(argv)
    agents = args.agents.split(",")
    for a in agents:
        if a not in AGENTS:
            p.error(f"--agents: unknown {a!r}; choose from {', '.join(AGENTS)}")
    steps = TASKS[args.task]["steps"] if args.steps is None else args.steps
    folder = args.out / args.task / f"steps{steps}"
    seeds = range(args.seed, args.seed + args.seeds)
    jobs = [(s, a) for s in seeds for a in agents]  # seed-major: every agent advances together
    for seed, agent in tqdm(jobs, desc=args.task, unit="run", disable=None):
        path = folder / f"{agent}-seed{seed}.json"
        if not path.exists():
            _save(path, run_control(args.task, agent, seed, steps=steps, episodes=args.episodes))
    # The table covers every saved run in the folder (several processes may share it).
    runs = [json.loads(p.read_text()) for p in sorted(folder.glob("*-seed*.json"))]
    table = summary_table(runs, args.task)
    table.to_csv(folder / "summary.csv", index=False)
    print(table.to_string(index=False))


if __name__ == "__main__":  # pragma: no cover
    main()
