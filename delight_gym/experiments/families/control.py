"""The control families (beyond the paper): SB3 hosts on gymnasium's classic control tasks.

``mountain-car-continuous`` and ``pendulum`` run SAC and TD3 with and without DE against the
published anchors (the RL Zoo's tuned SAC and OU-noise TD3, pink noise); ``mountain-car`` runs
DQN hosts. One cell is one seed's training run, "solved" at a checkpoint when its deterministic
return beats the task's threshold. The run function is
:func:`~delight_gym.experiments.control.run_control`.
"""

from __future__ import annotations

from typing import Any

from delight_gym._checks import check_positive_int
from delight_gym.experiments.families.base import Agent, Family, Parameter

__all__ = ["MOUNTAIN_CAR", "MOUNTAIN_CAR_CONTINUOUS", "PENDULUM", "TASKS"]

#: The tasks by family name: gymnasium id, training steps, the "solved" return, the agents.
TASKS: dict[str, dict[str, Any]] = {
    "mountain-car-continuous": {"env": "MountainCarContinuous-v0", "steps": 50_000, "solved": 90.0},
    "pendulum": {"env": "Pendulum-v1", "steps": 20_000, "solved": -200.0},
    # gymnasium's reward_threshold for MountainCar-v0.
    "mountain-car": {"env": "MountainCar-v0", "steps": 50_000, "solved": -110.0},
}

_CONTINUOUS = (
    Agent("sac", "SAC (defaults)", "#1f77b4"),
    Agent("sac_de", "DelightSAC", "#d62728"),
    Agent("td3", "TD3 (defaults)", "#2ca02c"),
    Agent("td3_de", "DelightTD3", "#ff7f0e"),
    Agent("sac_zoo", "SAC, RL Zoo (gSDE)", "#9467bd", "--"),
    Agent("td3_zoo", "TD3, RL Zoo (OU σ = 0.5)", "#8c564b", "--"),
    Agent("sac_dec", "DelightSAC, committed", "#bcbd22", "-."),
    Agent("td3_dec", "DelightTD3, committed", "#17becf", "-."),
    Agent("sac_pink", "SAC + pink noise", "#e377c2", ":"),
    Agent("td3_pink", "TD3 + pink noise σ = 0.3", "#7f7f7f", ":"),
)
_DISCRETE = (
    Agent("dqn", "DQN (defaults)", "#2ca02c"),
    Agent("bootdqn", "BootstrappedDQN", "#1f77b4"),
    Agent("dqn_de", "DelightDQN", "#d62728"),
    Agent("dqn_ez", "ez-greedy DQN (μ = 2)", "#8c564b", "--"),
    Agent("dqn_dec", "DelightDQN, committed", "#ff7f0e", "-."),
)
#: The agents of the ``Box`` tasks and of ``MountainCar-v0``.
CONTINUOUS_AGENTS = tuple(a.name for a in _CONTINUOUS)
DISCRETE_AGENTS = tuple(a.name for a in _DISCRETE)

#: Training steps between two evaluations of the deterministic policy (the curve's points).
EVAL_EVERY = Parameter(
    "eval_every",
    int,
    check_positive_int,
    sweep=(5000,),
    help="training steps between evaluations of the deterministic policy",
)
#: Evaluation episodes at each checkpoint (reset seeds 10**6, 10**6 + 1, ...).
EVAL_EPISODES = Parameter(
    "eval_episodes",
    int,
    check_positive_int,
    sweep=(5,),
    help="evaluation episodes at each checkpoint",
)


def _control_family(name: str, agents: tuple[Agent, ...], default: tuple[str, ...]) -> Family:
    task = TASKS[name]
    return Family(
        name=name,
        help=f"SB3 hosts on {task['env']}: solved (return > {task['solved']:g}) vs steps",
        cell="delight_gym.experiments.control:run_control",
        agents=agents,
        instance=(EVAL_EVERY, EVAL_EPISODES),
        default_agents=default,
        horizon=task["steps"],
        horizon_option="--steps",
        time_label="training steps",
        seeds=5,
        batch_size=1,
        title=task["env"],
        fixed={"task": name},
        metric="solved",
        metric_label="fraction of seeds solved",
    )


#: ``MountainCarContinuous-v0``; by default the six agents of the committed table.
MOUNTAIN_CAR_CONTINUOUS = _control_family(
    "mountain-car-continuous", _CONTINUOUS, CONTINUOUS_AGENTS[:6]
)
#: ``Pendulum-v1`` (dense reward: DE should cost nothing); by default SAC and TD3 ± DE.
PENDULUM = _control_family("pendulum", _CONTINUOUS, CONTINUOUS_AGENTS[:4])
#: ``MountainCar-v0`` with DQN hosts.
MOUNTAIN_CAR = _control_family("mountain-car", _DISCRETE, DISCRETE_AGENTS)
