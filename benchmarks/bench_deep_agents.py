"""Environment steps per second of the deep agents against SB3's DQN, measured in one run.

Run: ``python benchmarks/bench_deep_agents.py [--envs cartpole,deepsea] [--size 20]
[--steps 2000] [--heads 10] [--threads 1] [--repeats 3] [--device cpu] [--clock cpu]
[--agents ...] [--smoke]``

Every agent trains on the same environment with equal networks (two hidden layers of 64), one
gradient step of batch 128 per environment step, learning starting at 128 transitions, Adam
``1e-3``, replay 10 000, target update every 4 steps. Each agent first learns
``learning_starts + 100`` steps (so the timed part is all after learning starts), then the
next ``--steps`` environment steps are timed (``model.learn(steps, reset_num_timesteps=False)``:
acting, stepping the env, storing and one gradient step each). It prints the best-of-repeats
steps per second of every agent and its cost per step relative to ``dqn`` (SB3's DQN,
ε-greedy): ``ratio = dqn steps/s ÷ agent steps/s`` (the target for ``bootdqn`` and
``delightdqn`` with ``K = 10`` is ``<= 3``).

``delightdqn`` is a DQN *plus* the ensemble: every step it takes DQN's own gradient step and
then one TD step of the ``K`` heads on another replay sample, so its cost is inherently
``1 + (the ensemble's)``. Its line therefore also prints the ensemble's own cost,
``ensemble = (delightdqn's time per step − dqn's) ÷ dqn's = ratio − 1``, which is what issue
#12's "the K = 10 ensemble costs at most 3× one DQN per step" measures (``bootdqn``'s ratio is
the ensemble alone as an agent).

``bootdqn-notab`` (timed only when named in ``--agents``) is ``bootdqn`` on the ensemble's
generic path: its per-state tables switched off, so the frozen priors and targets run at ``s``
and ``s'`` every step and the TD step goes through autograd. On DeepSea (one-hot rows),
``--agents dqn,bootdqn,bootdqn-notab`` shows what the tables' path saves in one run (target
for ``bootdqn`` at N = 20: ``<= 1.4`` DQN's cost per step).

Agents are factories ``(env, seed, heads, device) -> SB3 algorithm`` in :data:`AGENTS`; add one
with :func:`register_agent` and it is timed the same way. ``delightdqn`` is
:class:`~delight_gym.sb3.DelightDQN` with an ensemble posterior of ``K`` heads of the same
size (a DQN gradient step plus a TD step of the heads per environment step).
On a shared machine small batched kernels stall badly when torch uses several
intra-op threads on busy cores: the default is ``--threads 1``.

**Load.** Other processes on the machine slow the agents unevenly, so the repeats run in turns
(every agent once, then every agent again, ...) rather than one agent's repeats in a row, and
the default clock is the process's own CPU time (``time.process_time``: what this process
computed, not the time it waited for a busy core; with one torch thread it equals the wall
time on an idle machine). ``--clock wall`` times wall-clock seconds instead (the default on a
CUDA device, whose work the CPU clock does not see). The load average is printed.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import torch

import delight_gym  # noqa: F401  (registers DeepSea-v0)
from delight_gym.posteriors.boot_dqn_defaults import BOOT_DQN_DEFAULTS

#: Settings shared by every agent (bsuite's boot_dqn where SB3's DQN has the same knob).
COMMON: dict[str, Any] = {
    "learning_rate": BOOT_DQN_DEFAULTS.learning_rate,
    "buffer_size": BOOT_DQN_DEFAULTS.buffer_size,
    "learning_starts": BOOT_DQN_DEFAULTS.learning_starts,
    "batch_size": BOOT_DQN_DEFAULTS.batch_size,
    "gamma": BOOT_DQN_DEFAULTS.gamma,
    "train_freq": BOOT_DQN_DEFAULTS.sgd_period,
    "gradient_steps": 1,
    "target_update_interval": BOOT_DQN_DEFAULTS.target_update_period,
}
HIDDEN = BOOT_DQN_DEFAULTS.hidden_sizes

AgentFactory = Callable[[gym.Env, int, int, str], Any]


def make_dqn(env: gym.Env, seed: int, heads: int, device: str) -> Any:
    """SB3's DQN with ε-greedy (its default schedule), the same network size."""
    from stable_baselines3 import DQN

    return DQN(
        "MlpPolicy",
        env,
        policy_kwargs={"net_arch": list(HIDDEN)},
        seed=seed,
        device=device,
        **COMMON,
    )


def make_bootdqn(env: gym.Env, seed: int, heads: int, device: str) -> Any:
    """BootstrappedDQN with ``heads`` heads and randomized priors."""
    from delight_gym.sb3.bootstrapped_dqn import BootstrappedDQN

    return BootstrappedDQN(
        "MlpPolicy",
        env,
        num_heads=heads,
        policy_kwargs={"net_arch": list(HIDDEN)},
        seed=seed,
        device=device,
        **COMMON,
    )


def make_bootdqn_generic(env: gym.Env, seed: int, heads: int, device: str) -> Any:
    """``bootdqn`` with its per-state tables switched off (the frozen priors and targets run
    at ``s`` and ``s'`` every step, the TD step through autograd): what the tables' path saves
    on look-up observations."""
    model = make_bootdqn(env, seed, heads, device)
    model.ensemble.network.tables = None
    return model


def make_bootdqn_de(env: gym.Env, seed: int, heads: int, device: str) -> Any:
    """BootstrappedDQN with DE on top (default settings)."""
    from delight_gym.sb3.bootstrapped_dqn import BootstrappedDQN

    return BootstrappedDQN(
        "MlpPolicy",
        env,
        num_heads=heads,
        policy_kwargs={"net_arch": list(HIDDEN)},
        delight=True,
        seed=seed,
        device=device,
        **COMMON,
    )


def make_delight_dqn(env: gym.Env, seed: int, heads: int, device: str) -> Any:
    """DelightDQN (greedy Q-network host) with an ensemble posterior of ``heads`` heads of the
    same size, trained from the replay buffer (one TD step per DQN gradient step). Passed
    explicitly: on DeepSea's one-hot observations the default would be the tabular posterior."""
    from delight_gym.posteriors.ensemble import EnsembleQPosterior
    from delight_gym.sb3.delight_dqn import DelightDQN

    posterior = EnsembleQPosterior(
        env.observation_space,
        env.action_space,
        num_heads=heads,
        hidden_sizes=HIDDEN,
        gamma=COMMON["gamma"],
        learning_rate=COMMON["learning_rate"],
        seed=seed,
        device=device,
    )
    return DelightDQN(
        "MlpPolicy",
        env,
        posterior=posterior,
        policy_kwargs={"net_arch": list(HIDDEN)},
        seed=seed,
        device=device,
        **COMMON,
    )


#: name -> factory; ``dqn`` is the reference every ratio is taken against.
AGENTS: dict[str, AgentFactory] = {
    "dqn": make_dqn,
    "bootdqn": make_bootdqn,
    "bootdqn+de": make_bootdqn_de,
    "delightdqn": make_delight_dqn,
    "bootdqn-notab": make_bootdqn_generic,
}
#: Timed without ``--agents``.
DEFAULT_AGENTS = ("dqn", "bootdqn", "bootdqn+de", "delightdqn")


def register_agent(name: str, factory: AgentFactory) -> None:
    """Add an agent to time (the slot for e.g. ``DelightDQN`` with an ensemble posterior)."""
    AGENTS[name] = factory


#: What a step is timed by (see the module docstring).
CLOCKS: dict[str, Callable[[], float]] = {"wall": time.perf_counter, "cpu": time.process_time}

ENVS: dict[str, Callable[[int], tuple[str, dict[str, Any]]]] = {
    "cartpole": lambda size: ("CartPole-v1", {}),
    "deepsea": lambda size: ("DeepSea-v0", {"size": size, "mapping_seed": 0}),
}


def steps_per_second(
    factory: AgentFactory,
    env_id: str,
    env_kwargs: dict[str, Any],
    steps: int,
    *,
    seed: int = 0,
    heads: int = 10,
    device: str = "cpu",
    clock: str = "wall",
) -> float:
    """Environment steps per second of one agent after learning starts (see the module doc);
    ``clock`` ``"wall"`` (``time.perf_counter``) or ``"cpu"`` (``time.process_time``)."""
    timer = CLOCKS[clock]
    env = gym.make(env_id, **env_kwargs)
    model = factory(env, seed, heads, device)
    model.learn(int(COMMON["learning_starts"]) + 100)
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    start = timer()
    model.learn(steps, reset_num_timesteps=False)
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    return steps / (timer() - start)


def main(argv: list[str] | None = None) -> dict[tuple[str, str], float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", default="cartpole,deepsea")
    parser.add_argument("--size", type=int, default=20, help="DeepSea size N")
    parser.add_argument("--steps", type=int, default=2000, help="timed environment steps")
    parser.add_argument("--heads", type=int, default=10)
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--device", default="cpu")
    parser.add_argument(
        "--clock",
        choices=sorted(CLOCKS),
        default=None,
        help="cpu: this process's CPU time (default on a CPU device); wall: wall-clock time",
    )
    parser.add_argument("--agents", default=",".join(DEFAULT_AGENTS))
    parser.add_argument("--smoke", action="store_true", help="tiny run (CI)")
    args = parser.parse_args(argv)
    if args.smoke:
        args.steps, args.repeats, args.size = 50, 1, 5
    if args.clock is None:
        args.clock = "wall" if args.device.startswith("cuda") else "cpu"
    torch.set_num_threads(args.threads)
    agents = [a.strip() for a in args.agents.split(",") if a.strip()]
    unknown = [a for a in agents if a not in AGENTS]
    if unknown:
        parser.error(f"unknown agents {unknown}; known: {sorted(AGENTS)}")
    if "dqn" not in agents:
        agents.insert(0, "dqn")
    print(
        f"torch {torch.__version__}, {args.threads} thread(s), device {args.device}, "
        f"K = {args.heads}, hidden {HIDDEN}, batch {COMMON['batch_size']}, "
        f"{args.steps} timed steps, best of {args.repeats} (in turns), {args.clock} clock, "
        f"load average {_load()}"
    )
    results: dict[tuple[str, str], float] = {}
    for env_name in args.envs.split(","):
        env_id, env_kwargs = ENVS[env_name.strip()](args.size)
        label = env_id + (f" N={args.size}" if "size" in env_kwargs else "")
        for r in range(args.repeats):  # in turns: a burst of load hits every agent alike
            for agent in agents:
                sps = steps_per_second(
                    AGENTS[agent],
                    env_id,
                    env_kwargs,
                    args.steps,
                    seed=r,
                    heads=args.heads,
                    device=args.device,
                    clock=args.clock,
                )
                results[(label, agent)] = max(sps, results.get((label, agent), 0.0))
        ref = results[(label, "dqn")]
        for agent in agents:
            sps = results[(label, agent)]
            line = f"{label:<18} {agent:<12} {sps:8.1f} steps/s   cost x{ref / sps:5.2f} of dqn"
            if agent == "delightdqn":  # DQN's step + the ensemble's: the ensemble's own cost
                line += f"   (ensemble x{ref / sps - 1:5.2f})"
            print(line)
    print(f"load average at the end {_load()}")
    return results


def _load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:  # pragma: no cover - platforms without it
        return "n/a"


if __name__ == "__main__":
    main()
