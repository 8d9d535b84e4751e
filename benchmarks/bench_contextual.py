"""One width cell of a contextual agent, batched over seeds against a per-seed loop, in one run.

Run: ``python benchmarks/bench_contextual.py [--agent delight-neurallinear] [--arms 1000]
[--seeds 10] [--rounds 200] [--dim 5] [--per-arm] [--threads 1] [--device cpu] [--skip-loop]
[--smoke]``

The cell: ``K`` fixed arms with features on the unit sphere in ``R^dim``, a parameter ``θ`` per
seed on the sphere, mean reward ``cos(3 xᵀθ)`` (Zhang et al. 2021's synthetic function), noise
``N(0, 0.1²)``; the shared model (``per_arm=False``) unless ``--per-arm``. ``batched`` is one
agent of ``batch = seeds`` rows; ``loop`` is ``seeds`` agents of batch 1 with the row seeds
``seed + i`` (the same numbers: the script checks the actions agree), each round stepped one
after the other. Both time ``act`` + ``update`` over all rounds (the reward computation is
outside the clock). It prints the wall time of each, their ratio ``loop / batched``, the time
per round of the batched agent and the load average. ``--skip-loop`` times the batched agent
only (for ``K = 10⁴``, 20 seeds). On a shared machine small batched kernels stall when torch
uses several intra-op threads on busy cores: the default is ``--threads 1``.
"""

from __future__ import annotations

import argparse
import math
import os
import time
from typing import Any

import torch

from delight_gym.agents.contextual import (
    CONTEXTUAL_AGENTS,
    ContextualAgent,
    make_contextual_agent,
)


def make_cell(seeds: int, arms: int, dim: int, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Arm features ``(seeds, K, dim)`` (one set for all seeds) and means ``(seeds, K)``."""
    gen = torch.Generator().manual_seed(seed)
    feats = torch.randn(arms, dim, generator=gen, dtype=torch.float64)
    feats = feats / feats.norm(dim=-1, keepdim=True)
    theta = torch.randn(seeds, dim, generator=gen, dtype=torch.float64)
    theta = theta / theta.norm(dim=-1, keepdim=True)
    means = torch.cos(3.0 * feats[None] @ theta[:, :, None])[..., 0]
    return feats[None].expand(seeds, arms, dim).contiguous(), means


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def run(
    agents: list[ContextualAgent], feats: torch.Tensor, means: torch.Tensor, rounds: int
) -> tuple[float, torch.Tensor]:
    """Step ``agents`` (each owning consecutive rows) ``rounds`` rounds; (seconds, actions)."""
    seeds = feats.shape[0]
    gen = torch.Generator().manual_seed(1)
    sizes = [a.batch for a in agents]
    starts = [sum(sizes[:i]) for i in range(len(sizes))]
    rows = torch.arange(seeds)
    played = []
    spent = 0.0
    for _ in range(rounds):
        noise = 0.1 * torch.randn(seeds, generator=gen, dtype=torch.float64).to(means.device)
        clock = time.perf_counter()
        acts = torch.cat(
            [a.act(feats[s : s + n]) for a, s, n in zip(agents, starts, sizes, strict=True)]
        )
        _sync(acts.device)
        spent += time.perf_counter() - clock
        rewards = means[rows.to(acts.device), acts] + noise
        clock = time.perf_counter()
        for a, s, n in zip(agents, starts, sizes, strict=True):
            a.update(feats[s : s + n], acts[s : s + n], rewards[s : s + n])
        _sync(acts.device)
        spent += time.perf_counter() - clock
        played.append(acts.cpu())
    return spent, torch.stack(played)


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agent", default="delight-neurallinear", choices=CONTEXTUAL_AGENTS)
    parser.add_argument("--arms", type=int, default=1000)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--dim", type=int, default=5)
    parser.add_argument("--per-arm", action="store_true")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--skip-loop", action="store_true", help="time the batched agent only")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes (for the tests)")
    args = parser.parse_args(argv)
    if args.smoke:
        args.arms, args.seeds, args.rounds = 20, 2, 12
    torch.set_num_threads(args.threads)
    options: dict[str, Any] = {}
    if args.smoke and "neurallinear" in args.agent:
        options = {"train_every": 5, "train_steps": 2, "hidden_sizes": (8,)}
    feats, means = make_cell(args.seeds, args.arms, args.dim)
    feats, means = feats.to(args.device), means.to(args.device)

    def build(batch: int, seed: int) -> ContextualAgent:
        return make_contextual_agent(
            args.agent,
            batch,
            args.arms,
            args.dim,
            per_arm=args.per_arm,
            seed=seed,
            device=args.device,
            **options,
        )

    print(
        f"{args.agent}: K = {args.arms}, {args.seeds} seeds, {args.rounds} rounds, "
        f"dim {args.dim}, per_arm={args.per_arm}, threads {args.threads}, device {args.device}"
    )
    batched_s, batched_actions = run([build(args.seeds, 0)], feats, means, args.rounds)
    out = {"batched_s": batched_s, "per_round_ms": 1e3 * batched_s / args.rounds}
    print(f"  batched  {batched_s:8.2f} s   ({out['per_round_ms']:.1f} ms per round)")
    if not args.skip_loop:
        loop_s, loop_actions = run(
            [build(1, i) for i in range(args.seeds)], feats, means, args.rounds
        )
        out["loop_s"] = loop_s
        out["ratio"] = loop_s / batched_s
        same = torch.equal(loop_actions, batched_actions)
        print(f"  loop     {loop_s:8.2f} s   (seeds stepped one by one; same actions: {same})")
        print(f"  ratio    {out['ratio']:8.2f}x  (loop / batched)")
    host_means = means.cpu()
    gap = host_means.max(-1).values[:, None] - host_means.gather(1, batched_actions.T)
    regret = gap.sum(1)
    print(f"  regret   {float(regret.mean()):8.2f}   (batched agent, mean over seeds)")
    print("  load average " + " ".join(f"{x:.2f}" for x in os.getloadavg()))
    if not math.isfinite(batched_s):
        raise RuntimeError("timing failed")
    return out


if __name__ == "__main__":
    main()
