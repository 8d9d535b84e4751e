"""PSRL vs DE vs annealed ε-greedy on DeepSea-v0 (the paper's §3.3 agents), batched over seeds.

All three agents keep the same tabular MDP posterior
(:class:`delight_gym.posteriors.tabular.TabularMDPPosterior`, its documented default priors:
Dirichlet transitions over all ``N²`` states with total prior mass 0.1, i.e. ``α0 = 0.1/N²``
(1e-3 at N = 10), Beta(1, 1) rewards rescaled from ``[−0.01/N, 1]``) and do not use
DeepSea's layered structure:

* ``psrl``: one posterior sample per episode, planned, then greedy;
* ``delight``: the paper's DeepSea DE — frozen posterior-mean plan, Boltzmann host
  (``τ = 0.01``), ``EI = (Q_post − V_plan)_+``, ``M = 100``, ``λ = 0.1``, ``L = 10``;
* ``egreedy``: uniform with probability ``ε_t = M/(M + t)``, else the plan's argmax.

Seed ``i`` plays the DeepSea instance ``mapping_seed = i`` (one vector env of ``--seeds``
sub-envs). Printed per agent: seeds that found the treasure, the median episode of the first
treasure, and the cumulative regret after the last episode (mean ± s.e.). ``--smoke`` runs in
seconds.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import numpy as np
import torch

from delight_gym.agents.mdp import make_mdp_agent
from delight_gym.envs import DeepSeaVectorEnv

AGENTS = ("psrl", "delight", "egreedy")


@dataclass
class Args:
    size: int = 10
    episodes: int = 500
    seeds: int = 5
    smoke: bool = False


def run(agent_name: str, args: Args) -> tuple[np.ndarray, np.ndarray]:
    """Returns per seed: the first treasure episode (``inf`` if never) and the final regret."""
    n, b = args.size, args.seeds
    envs = DeepSeaVectorEnv(num_envs=b, size=n, mapping_seed=list(range(b)))
    agent = make_mdp_agent(agent_name, b, n * n, 2, n, reward_range=(-0.01 / n, 1.0), seed=0)
    obs, _ = envs.reset(seed=0)
    first = np.full(b, np.inf)
    regret = np.zeros(b)
    for episode in range(args.episodes):
        agent.begin_episode()
        ret = np.zeros(b)
        optimal = np.zeros(b)
        for h in range(n):
            states = obs.reshape(b, -1).argmax(axis=1)
            actions = agent.act(states, h).cpu().numpy()
            obs, rewards, _, _, infos = envs.step(actions)
            agent.observe(states, actions, rewards, obs.reshape(b, -1).argmax(axis=1), h)
            ret += rewards
            optimal = np.asarray(infos["optimal_return"], dtype=float)
        regret += optimal - ret
        newly = (ret > 0.5) & ~np.isfinite(first)
        first[newly] = episode + 1
    return first, regret


def main(argv: list[str] | None = None) -> dict[str, dict[str, float]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=Args.size, help="N (default %(default)s)")
    parser.add_argument(
        "--episodes",
        type=int,
        default=Args.episodes,
        help="episodes per seed (default %(default)s)",
    )
    parser.add_argument(
        "--seeds",
        type=int,
        default=Args.seeds,
        help="seeds; seed i plays mapping_seed i (default %(default)s)",
    )
    parser.add_argument(
        "--smoke", action="store_true", help="tiny run (seconds): N = 4, 20 episodes, 2 seeds"
    )
    ns = parser.parse_args(argv)
    args = Args(ns.size, ns.episodes, ns.seeds, ns.smoke)
    if args.smoke:
        args.size, args.episodes, args.seeds = 4, 20, 2
    torch.set_num_threads(1)
    print(f"DeepSea-v0 size {args.size}, {args.episodes} episodes, {args.seeds} seeds")
    header = f"{'agent':<8} {'found':>7} {'first treasure (median)':>24} {'final regret':>20}"
    print(header)
    print("-" * len(header))
    summary: dict[str, dict[str, float]] = {}
    for name in AGENTS:
        t0 = time.perf_counter()
        first, regret = run(name, args)
        found = int(np.isfinite(first).sum())
        median = float(np.median(first))
        median_txt = f"{median:.0f}" if np.isfinite(median) else f"> {args.episodes}"
        se = regret.std(ddof=1) / np.sqrt(len(regret)) if len(regret) > 1 else None
        se_txt = "n/a" if se is None else f"{se:.1f}"  # one seed: no s.e.
        print(
            f"{name:<8} {found:>3}/{args.seeds:<3} {median_txt:>24} {regret.mean():>11.1f} ± "
            f"{se_txt:<6}  ({time.perf_counter() - t0:.0f} s)",
            flush=True,
        )
        summary[name] = {"found": found, "median_first": median, "regret_mean": regret.mean()}
    return summary


if __name__ == "__main__":
    main()
