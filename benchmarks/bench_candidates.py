"""Candidate-set DE: cost of one decision as K grows, and of the gate beside a host's predict.

Run: ``python benchmarks/bench_candidates.py [--batch 64] [--arms 1000,1000000] [--sac-batch
256] [--repeats 50] [--steps 50000] [--smoke]``

(a) A ``Discrete(K)`` decision on ``batch`` rows, every row exploring (``t = 0``): ``C`` = the
host's action, its top 8, 8 host draws and 4 posterior proposals (best of 32 random actions)
under a retrieval-style host (``π(a|s) ∝ (1 + (a − s) mod K)^(−1.1)``, answered in O(|C|))
and a cheap EI. It prints the time per decision at each K, the ratio to the smallest K
(target ≤ 3×) and the number of entries scored per row (the same at every K). (b) The gate on
``sac-batch`` rows of ``|C| = 64`` ``Box`` candidates (:func:`candidate_rule`: merging
duplicates, renormalising the host, the rule), and the full :meth:`decide` (truncated-Gaussian
host proposals and uniform ones), against an SB3 SAC ``predict`` on the same batch of
``Pendulum-v1`` observations (target ≤ 5×). (c) A run's acting time: ``steps`` stochastic
single-observation ``predict`` calls of that SAC against :class:`ContinuousDelightWrapper`
around it (default posterior and options, ``t`` advancing one per step; target ≤ 1.5×), each
timed once after a warm-up run. Times in (a) and (b) are the best of ``repeats`` calls after a
warm-up; the load average is printed beside the ratios. One intra-op thread (the house setting
on shared machines).
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from gymnasium import spaces

from delight_gym.de.candidates import (
    CandidateDelight,
    GaussianProposalHost,
    HostSamples,
    PosteriorArgmax,
    TopK,
    UniformProposals,
    candidate_rule,
)


class RotatedZipfHost:
    """``π(a|s) ∝ (1 + (a − s) mod K)^(−1.1)``: a ranking rotated by the state ``s``; after an
    O(K) setup, log-probabilities, draws (binary search) and top-k cost O(1)–O(log K) each."""

    def __init__(self, k: int) -> None:
        w = np.arange(1, k + 1, dtype=np.float64) ** -1.1
        self.k, self.log_z, self.cdf = k, np.log(w.sum()), np.cumsum(w) / w.sum()

    def log_weight(self, states: Any, host_actions: Any, candidates: Any) -> Any:
        return -1.1 * np.log1p((candidates - states[:, None]) % self.k) - self.log_z

    def sample(self, states: Any, host_actions: Any, n: int, rng: np.random.Generator) -> Any:
        rank = np.searchsorted(self.cdf, rng.random((len(states), n)), side="right")
        return (np.minimum(rank, self.k - 1) + states[:, None]) % self.k

    def top_actions(self, states: Any, k: int) -> Any:
        return (states[:, None] + np.arange(k)) % self.k


def best_time(fn: Callable[[], Any], repeats: int) -> float:
    """Seconds of the fastest of ``repeats`` calls, after one warm-up call."""
    fn()
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return float(best)


def load() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def bench_discrete(arms: list[int], batch: int, repeats: int) -> None:
    times, scored = {}, {}
    for k in arms:
        space, host = spaces.Discrete(k), RotatedZipfHost(k)
        counts: list[int] = []

        def ei(states: Any, cands: Any, counts: list[int] = counts) -> Any:
            counts.append(cands.shape[1])
            return 0.02 * ((cands * 2654435761) % 1000) / 1000

        def values(states: Any, actions: Any, rng: Any, counts: list[int] = counts) -> Any:
            counts.append(actions.shape[1])
            return np.sin(actions.astype(np.float64))

        proposals = [
            (TopK(host), 8),
            (HostSamples(host), 8),
            (PosteriorArgmax(space, values, 32), 4),
        ]
        de = CandidateDelight(space, host, ei, proposals)
        rng = np.random.default_rng(0)
        states = rng.integers(0, k, batch)
        times[k] = best_time(lambda de=de, s=states, g=rng: de.decide(s, s, 0.0, g), repeats)
        counts.clear()
        de.decide(states, states, 0.0, rng)
        scored[k] = sum(counts)
        print(f"K={k:>9,}  {1e3 * times[k]:8.3f} ms per decision of {batch} rows", flush=True)
    base = arms[0]
    for k in arms[1:]:
        print(f"(a) ratio K={k:,} / K={base:,}: {times[k] / times[base]:.2f}x  ({load()})")
    same = len(set(scored.values())) == 1
    print(f"entries scored per row: {scored[base]} at every K: {same}")


def bench_box(batch: int, repeats: int, smoke: bool) -> None:
    from stable_baselines3 import SAC

    model = SAC("MlpPolicy", "Pendulum-v1", buffer_size=1000, device="cpu", seed=0)
    box = model.action_space
    rng = np.random.default_rng(0)
    obs = rng.uniform(-1.0, 1.0, (batch, 3)).astype(np.float32)
    host_actions = model.predict(obs, deterministic=True)[0].astype(np.float64)
    host = GaussianProposalHost(box, host_std=0.1)
    ei = lambda s, c: 0.1 * np.abs(c - c[:, :1]).sum(-1)  # noqa: E731 (a cheap stand-in)
    de = CandidateDelight(box, host, ei, [(HostSamples(host), 39), (UniformProposals(box), 24)])
    cands = de.candidates(obs, host_actions, rng)
    log_w = host.log_weight(obs, host_actions, cands)
    ei_values = ei(obs, cands)
    predict = best_time(lambda: model.predict(obs, deterministic=True), repeats)
    gate = best_time(lambda: candidate_rule(cands, log_w, ei_values, 1.0), repeats)
    full = best_time(lambda: de.decide(obs, host_actions, 0.0, rng), repeats)
    print(f"SAC predict on {batch} observations: {1e3 * predict:.3f} ms")
    print(
        f"gate on {batch} x |C|={cands.shape[1]}: {1e3 * gate:.3f} ms; full decide: "
        f"{1e3 * full:.3f} ms"
    )
    print(
        f"(b) ratio gate / SAC predict: {gate / predict:.2f}x; decide / SAC predict: "
        f"{full / predict:.2f}x  ({load()})"
    )
    if smoke:
        print(f"candidates per row: {cands.shape[1]}")


def bench_run(steps: int) -> None:
    from stable_baselines3 import SAC

    from delight_gym import ContinuousDelightWrapper

    model = SAC("MlpPolicy", "Pendulum-v1", buffer_size=1000, device="cpu", seed=0)
    de = ContinuousDelightWrapper(model, seed=0)
    obs = np.random.default_rng(1).uniform(-1.0, 1.0, (steps, 3)).astype(np.float32)

    def host_run() -> None:
        for o in obs:
            model.predict(o, deterministic=False)

    def de_run() -> None:
        de.t, de.stats = 0, type(de.stats)()
        for o in obs:
            de.predict(o, deterministic=False)
            de.advance(1)

    host = best_time(host_run, 1)
    full = best_time(de_run, 1)
    print(f"{steps:,} steps: SAC acting {host:.2f} s; DE around it {full:.2f} s")
    stats = de.stats
    print(f"gate evaluated on {stats.total_evaluated} steps, overrode {stats.total_overridden}")
    print(f"(c) ratio DE / SAC acting time over {steps:,} steps: {full / host:.2f}x  ({load()})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--arms", default="1000,1000000")
    parser.add_argument("--sac-batch", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--steps", type=int, default=50_000, help="steps of the acting run (c)")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, a few repeats")
    args = parser.parse_args()
    torch.set_num_threads(1)
    if args.smoke:
        args.batch, args.arms, args.sac_batch, args.repeats = 4, "1000,20000", 8, 2
        args.steps = 200
    print(load())
    bench_discrete([int(x) for x in args.arms.split(",")], args.batch, args.repeats)
    bench_box(args.sac_batch, args.repeats, args.smoke)
    bench_run(args.steps)


if __name__ == "__main__":
    main()
