"""SB3 hosts on classic control: the run function of the control families.

:func:`run_control` trains one agent per seed for ``horizon`` steps, records the first training
step that reached the goal (an episode that terminated rather than truncated) and evaluates the
deterministic policy every ``eval_every`` steps on ``eval_episodes`` fresh episodes (reset
seeds ``10**6, 10**6 + 1, …``), the last time after training. A seed is *solved* at a
checkpoint when its mean return there exceeds the task's threshold
(:data:`~delight_gym.experiments.families.control.TASKS`). The evaluations do not change
training: a deterministic ``predict`` draws no random numbers.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from delight_gym._checks import check_choice, check_nonnegative_int, check_positive_int
from delight_gym.experiments.families.control import CONTINUOUS_AGENTS, DISCRETE_AGENTS, TASKS

__all__ = [
    "AGENTS",
    "COMMITTED_DE",
    "ControlResult",
    "evaluate_returns",
    "make_agent",
    "run_control",
]

#: Every agent name (the ``Box`` tasks' then ``MountainCar-v0``'s).
AGENTS = (*CONTINUOUS_AGENTS, *DISCRETE_AGENTS)

#: The RL Zoo's tuned settings for MountainCarContinuous-v0 (rl-baselines3-zoo,
#: ``hyperparams/sac.yml``; its ``td3.yml`` adds OU noise σ = 0.5 to SB3's defaults).
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
#: σ of ``td3_pink``'s ``PinkActionNoise`` (pink-noise-rl's TD3 example).
PINK_TD3_SIGMA = 0.3

#: Committed DE: options of up to 64 steps (``delight.durations``), the episode clock and EI in
#: units of the posterior's spread. Fixed from the design before any run (no tuning run fitted
#: this project's compute; nothing was tuned on the reported seeds).
COMMITTED_DE: dict[str, Any] = {
    "durations": (1, 2, 4, 8, 16, 32, 64),
    "clock": "episode",
    "value_scale": "spread",
}


def _pink() -> Any:
    try:
        import pink
    except ImportError as exc:
        raise ImportError(
            "the pink-noise agents need pink-noise-rl: pip install 'delight-gym[control]' "
            "(or 'pink-noise-rl>=2')"
        ) from exc
    return pink


def make_agent(agent: str, env: Any, seed: int) -> Any:
    """The SB3 model of ``agent`` (one of :data:`AGENTS`) on ``env``, seeded ``seed``.

    ``sac_pink`` and ``td3_pink`` are pink-noise-rl as its README uses it: SAC's actor
    distribution replaced by ``PinkNoiseDist``, TD3 with ``PinkActionNoise(σ = 0.3)``, the
    sequence as long as an episode; their generator is seeded with ``seed``.
    """
    from stable_baselines3 import DQN, SAC, TD3
    from stable_baselines3.common.noise import OrnsteinUhlenbeckActionNoise

    import delight_gym.sb3 as ours  # each name imported on first use

    common: dict[str, Any] = {"seed": seed, "device": "cpu", "verbose": 0}
    # The Discrete engine has no heads' spread: dqn_dec's λ is in reward units.
    discrete_de = {k: v for k, v in COMMITTED_DE.items() if k != "value_scale"}
    plain: dict[str, tuple[Any, dict[str, Any]]] = {  # agent: (algorithm or its name, keywords)
        "sac": (SAC, {}),
        "sac_de": ("DelightSAC", {}),
        "sac_dec": ("DelightSAC", {"delight": COMMITTED_DE}),
        "td3": (TD3, {}),
        "td3_de": ("DelightTD3", {}),
        "td3_dec": ("DelightTD3", {"delight": COMMITTED_DE}),
        "sac_zoo": (SAC, ZOO_SAC),
        "dqn": (DQN, {}),
        "bootdqn": ("BootstrappedDQN", {}),
        "dqn_de": ("DelightDQN", {}),
        "dqn_dec": ("DelightDQN", {"delight": discrete_de}),
    }
    if agent in plain:
        algorithm, options = plain[agent]
        if isinstance(algorithm, str):
            algorithm = getattr(ours, algorithm)
        return algorithm("MlpPolicy", env, **options, **common)
    if agent in CONTINUOUS_AGENTS:
        d = env.action_space.shape[0]
        seq_len = env.spec.max_episode_steps
    if agent == "td3_zoo":
        noise = OrnsteinUhlenbeckActionNoise(np.zeros(d), 0.5 * np.ones(d))
        return TD3("MlpPolicy", env, action_noise=noise, **common)
    if agent == "sac_pink":
        pink = _pink()
        model = SAC("MlpPolicy", env, **common)
        model.actor.action_dist = pink.PinkNoiseDist(seq_len, d, rng=np.random.default_rng(seed))
        return model
    if agent == "td3_pink":
        rng = np.random.default_rng(seed)
        noise = _pink().PinkActionNoise(PINK_TD3_SIGMA, seq_len, d, rng=rng)
        return TD3("MlpPolicy", env, action_noise=noise, **common)
    if agent == "dqn_ez":
        try:
            from delight_gym.sb3.ez_greedy import EZGreedyDQN
        except ImportError as exc:
            raise ImportError(f"dqn_ez needs delight_gym.sb3.ez_greedy.EZGreedyDQN: {exc}") from exc
        return EZGreedyDQN("MlpPolicy", env, ez_mu=2.0, **common)
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
    env.close()
    return returns


@dataclass
class ControlRun:
    """One seed's training run (:func:`train_and_evaluate`).

    Attributes
    ----------
    t, returns, overridden
        the checkpoints (training steps, the last one ``steps``), the mean deterministic
        return at each and DE's overrides so far there (0 for agents without DE).
    first_flag, eval_returns
        first training step whose episode terminated (the goal), 0 if none; the final
        evaluation's returns, one per episode.
    seconds, furthest
        wall-clock time; the largest first observation coordinate seen in training (a
        MountainCar's position).
    """

    t: np.ndarray
    returns: np.ndarray
    first_flag: int
    eval_returns: list[float]
    seconds: float
    furthest: float
    overridden: np.ndarray


def train_and_evaluate(
    task: str, agent: str, seed: int, *, steps: int, eval_every: int, eval_episodes: int
) -> ControlRun:
    """Train ``agent`` on ``task`` for ``steps`` steps (seed ``seed``), evaluating at
    ``eval_every, 2·eval_every, …`` and after training."""
    import gymnasium as gym
    from stable_baselines3.common.callbacks import BaseCallback

    env_id = TASKS[task]["env"]
    checkpoints = [int(c) for c in range(eval_every, steps, eval_every)]
    returns: list[float] = []

    class Monitor(BaseCallback):
        def __init__(self) -> None:
            super().__init__()
            self.flag = 0
            self.furthest = -np.inf
            self.overridden: list[int] = []

        def _on_step(self) -> bool:
            if self.flag == 0:
                for done, info in zip(self.locals["dones"], self.locals["infos"], strict=True):
                    if done and not info.get("TimeLimit.truncated", False):
                        self.flag = int(self.num_timesteps)
            self.furthest = max(self.furthest, float(np.max(self.locals["new_obs"][..., 0])))
            if self.num_timesteps in checkpoints:
                returns.append(float(np.mean(evaluate_returns(self.model, env_id, eval_episodes))))
                self.overridden.append(_overridden(self.model))
            return True

    start = time.perf_counter()
    model = make_agent(agent, gym.make(env_id), seed)
    monitor = Monitor()
    model.learn(steps, callback=monitor)
    final = evaluate_returns(model, env_id, eval_episodes)
    returns.append(float(np.mean(final)))
    t = np.array([*checkpoints, steps], dtype=np.int64)
    overridden = np.array([*monitor.overridden, _overridden(model)], dtype=np.int64)
    seconds = time.perf_counter() - start
    return ControlRun(
        t, np.array(returns), monitor.flag, final, seconds, monitor.furthest, overridden
    )


def _overridden(model: Any) -> int:
    """DE's overrides so far (its statistics' total), 0 for a model without DE."""
    stats = getattr(getattr(model, "delight", None), "stats", None)
    return 0 if stats is None else int(stats.total_overridden)


@dataclass
class ControlResult:
    """What :func:`run_control` returns (the runner's cell protocol).

    Attributes
    ----------
    t
        the checkpoints (training steps).
    cumulative, returns, overridden
        ``(seeds, len(t))``: 1.0 where a seed is solved at a checkpoint; the mean
        deterministic return there; DE's overrides so far.
    eval_return, first_flag, solved, furthest, overrides
        per seed: the final mean return, the first goal step (0 if none), whether the final
        return beats the threshold, the furthest position in training, DE's overrides.
    seconds
        wall-clock time of the runs.
    """

    t: np.ndarray
    cumulative: np.ndarray
    returns: np.ndarray
    eval_return: np.ndarray
    first_flag: np.ndarray
    solved: np.ndarray
    seconds: float
    furthest: np.ndarray
    overrides: np.ndarray
    overridden: np.ndarray


def run_control(
    agent: str,
    horizon: int | None,
    seeds: int,
    *,
    seed: int,
    task: str,
    eval_every: int = 5000,
    eval_episodes: int = 5,
) -> ControlResult:
    """Train ``agent`` on ``task`` for ``horizon`` steps (the task's default if ``None``) on
    seeds ``seed, …, seed + seeds − 1``, one run each (:func:`train_and_evaluate`)."""
    check_choice(task, list(TASKS), "task")
    spec = TASKS[task]
    steps = check_positive_int(spec["steps"] if horizon is None else horizon, "horizon")
    seeds = check_positive_int(seeds, "seeds")
    seed = check_nonnegative_int(seed, "seed")
    every = check_positive_int(eval_every, "eval_every")
    episodes = check_positive_int(eval_episodes, "eval_episodes")
    runs = [
        train_and_evaluate(
            task, agent, seed + i, steps=steps, eval_every=every, eval_episodes=episodes
        )
        for i in range(seeds)
    ]
    returns = np.stack([r.returns for r in runs])
    final = returns[:, -1]
    return ControlResult(
        t=runs[0].t,
        cumulative=(returns > spec["solved"]).astype(float),
        returns=returns,
        eval_return=final,
        first_flag=np.array([r.first_flag for r in runs], dtype=np.int64),
        solved=final > spec["solved"],
        seconds=float(sum(r.seconds for r in runs)),
        furthest=np.array([r.furthest for r in runs]),
        overrides=np.array([r.overridden[-1] for r in runs], dtype=np.int64),
        overridden=np.stack([r.overridden for r in runs]),
    )
