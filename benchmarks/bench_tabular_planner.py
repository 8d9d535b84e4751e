"""Sparse tabular planner against a dense ``O(S²A)`` planner, measured in one run.

Run: ``python benchmarks/bench_tabular_planner.py [--size 50] [--seeds 30] [--episodes 200]
[--dense-seeds 30] [--threads 1] [--device cpu]``

The posterior (:class:`~delight_gym.posteriors.tabular.TabularMDPPosterior`, default priors)
is fed ``episodes`` episodes of uniformly random play on ``seeds`` DeepSea instances of size
``N`` (``S = N²`` states, realistic sparse counts). Then, on the same posterior:

* ``sparse mean plan``: :meth:`~TabularMDPPosterior.plan_mean`, all seeds in one batch
  (rank-one prior term + ``K`` observed successor slots per pair, ``O(S·A·K)`` per backup);
* ``dense mean plan``: :func:`dense_value_iteration` (this script's own slow reference:
  ``Q_h = r + P V_{h+1}`` with a dense ``P``, ``O(S²A)`` per backup) on the dense ``(S, A, S)``
  posterior-mean transition tensor, one seed at a time (``S²A`` doubles,
  100 MB per seed at ``N = 50``; the batch would need 3 GB), for the first ``dense-seeds`` seeds
  and scaled to the full batch;
* ``sparse sample + plan``: one PSRL posterior sample per seed (exact stick-breaking sampler)
  and its plan, for reference.

It prints the times, the ratio dense/sparse and the largest difference between the two plans.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from delight_gym.envs.deep_sea import DeepSeaVectorEnv
from delight_gym.posteriors.tabular import TabularMDPPosterior, value_iteration


def dense_value_iteration(
    rewards: torch.Tensor, transitions: torch.Tensor, horizon: int
) -> torch.Tensor:
    """``Q_h = r + P V_{h+1}`` with a dense ``P`` (``O(S²A)`` per backup), ``V_H = 0``:
    ``rewards`` ``(B, S, A)``, ``transitions`` ``(B, S, A, S)``; returns ``Q`` ``(H, B, S, A)``."""
    q = torch.empty((horizon, *rewards.shape), dtype=rewards.dtype, device=rewards.device)
    v = torch.zeros(rewards.shape[:2], dtype=rewards.dtype, device=rewards.device)
    for h in range(horizon - 1, -1, -1):
        q[h] = rewards + torch.einsum("bsat,bt->bsa", transitions, v)
        v = q[h].amax(dim=-1)
    return q


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def random_play_posterior(
    size: int, seeds: int, episodes: int, device: torch.device
) -> TabularMDPPosterior:
    envs = DeepSeaVectorEnv(num_envs=seeds, size=size)
    obs, _ = envs.reset(seed=0)
    post = TabularMDPPosterior(
        seeds, size * size, 2, size, reward_range=(-envs.move_cost, 1.0), device=device
    )
    rng = np.random.default_rng(0)
    for _ in range(episodes):
        for h in range(size):
            states = obs.reshape(seeds, -1).argmax(axis=1)
            actions = rng.integers(2, size=seeds)
            obs, rewards, _, _, _ = envs.step(actions)
            nxt = obs.reshape(seeds, -1).argmax(axis=1) if h < size - 1 else None
            post.update(
                torch.as_tensor(states, device=device),
                torch.as_tensor(actions, device=device),
                torch.as_tensor(rewards, device=device),
                None if nxt is None else torch.as_tensor(nxt, device=device),
            )
    return post


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=50)
    parser.add_argument("--seeds", type=int, default=30)
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--dense-seeds", type=int, default=30)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    n, b = args.size, args.seeds
    t0 = time.perf_counter()
    post = random_play_posterior(n, b, args.episodes, device)
    visited = int((post.visits.sum(-1) > 0).sum()) / b
    print(
        f"DeepSea N={n}: S={n * n}, A=2, H={n}, B={b} seeds, {args.episodes} episodes of random "
        f"play ({time.perf_counter() - t0:.1f} s); visited states per seed {visited:.0f}, "
        f"successor slots K={post.num_slots}, alpha0={post.transition_prior:.2e}"
    )

    post.plan_mean()  # warm-up
    _sync(device)
    t0 = time.perf_counter()
    q_fast = post.plan_mean()
    _sync(device)
    t_fast = time.perf_counter() - t0

    m = min(args.dense_seeds, b)
    t_dense = 0.0
    worst = 0.0
    reward = post.mean_reward()
    for i in range(m):
        alpha = torch.full(
            (n * n, 2, n * n), post.transition_prior, dtype=post.dtype, device=device
        )
        alpha.scatter_add_(-1, post.succ[i], post.succ_counts[i])
        p_dense = alpha / alpha.sum(dim=-1, keepdim=True)
        _sync(device)
        t0 = time.perf_counter()
        q_dense = dense_value_iteration(reward[i : i + 1], p_dense[None], n)
        _sync(device)
        t_dense += time.perf_counter() - t0
        worst = max(worst, float((q_dense[:, 0] - q_fast[:, i]).abs().max()))
        del alpha, p_dense
    t_dense_batch = t_dense * b / m

    gens = [torch.Generator(device=device).manual_seed(i) for i in range(b)]
    _sync(device)
    t0 = time.perf_counter()
    model = post.sample_model(gens)
    _sync(device)
    t_sample = time.perf_counter() - t0
    t0 = time.perf_counter()
    value_iteration(model, n)
    _sync(device)
    t_sample_plan = time.perf_counter() - t0

    print(f"sparse mean plan (all {b} seeds)      {t_fast:8.3f} s")
    print(
        f"dense mean plan  ({m} seeds, x{b / m:.1f})   {t_dense_batch:8.3f} s   "
        f"ratio dense/sparse {t_dense_batch / t_fast:6.1f}x   max |ΔQ| {worst:.1e}"
    )
    print(
        f"PSRL sample + plan (all {b} seeds)    {t_sample:8.3f} s + {t_sample_plan:.3f} s "
        f"(slots per pair incl. sticks: {model.weight.shape[-1]})"
    )


if __name__ == "__main__":
    main()
