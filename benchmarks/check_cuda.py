"""The torch posteriors on an accelerator: correctness against the CPU and a speed ratio.

Run: ``python benchmarks/check_cuda.py [--device cuda] [--repeats 5] [--quick]``

This is the one script to run when a GPU is available (CI never depends on it). It
builds the same posterior state on the CPU and on ``--device`` from the same data, in
float64, and checks that every output agrees to ``1e-9`` relative:

* ``LinearGaussianPosterior`` (B = 100 seeds, D = 30, K = 100 arms, 1000 rank-one updates):
  posterior mean, predictive mean and sd, and Gaussian EI;
* ``TabularMDPPosterior`` (B = 30 seeds, DeepSea N = 50, i.e. S = 2500, 200 random episodes):
  the posterior-mean plan ``Q_h``;
* ``EnsembleQPosterior`` (K = 10 heads, MLP [64, 64], float32, CartPole-sized Box input and a
  one-hot DeepSea N = 20 input): the heads' values, mean and ensemble EI at initialisation and
  after one TD step (to ``1e-5``) and after 200 TD steps on the same batches (float32 Adam
  drifts apart slowly: to ``1e-2``), and
  the time of one TD step + one 128-row decision at bsuite's size and at a larger one
  (K = 20, [256, 256], batch 512).

It then times the same work on both devices in the same run and prints the ratio
(CPU time / device time). The exit status is 1 if any check fails. With ``--device cpu`` it
checks itself, and the ratio is about 1. Without CUDA it says so and exits 0.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from delight_gym.envs.deep_sea import DeepSeaVectorEnv
from delight_gym.posteriors.ensemble import EnsembleQPosterior, Transitions
from delight_gym.posteriors.linear import LinearGaussianPosterior
from delight_gym.posteriors.tabular import TabularMDPPosterior

RTOL = 1e-9


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _best_time(fn: Callable[[], object], device: torch.device, repeats: int) -> float:
    fn()  # warm-up (kernels, allocations)
    _sync(device)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        _sync(device)
        best = min(best, time.perf_counter() - start)
    return best


def _close(name: str, cpu: Any, dev: Any, rtol: float = RTOL) -> bool:
    a, b = torch.as_tensor(cpu).double(), torch.as_tensor(dev).detach().cpu().double()
    scale = a.abs().max().clamp_min(1e-300)
    err = float((a - b).abs().max() / scale)
    ok = err <= rtol and bool(torch.isfinite(b).all())
    print(f"  {'PASS' if ok else 'FAIL'}  {name}: max relative difference {err:.2e}")
    return ok


def linear_check(device: torch.device, repeats: int, quick: bool = False) -> bool:
    b, d, k, steps = (8, 5, 10, 50) if quick else (100, 30, 100, 1000)
    print(f"LinearGaussianPosterior (B={b}, D={d}, K={k}, {steps} updates)")
    rng = np.random.default_rng(0)
    feats = torch.as_tensor(rng.normal(size=(steps, b, d)) / np.sqrt(d))
    rewards = torch.as_tensor(rng.normal(size=(steps, b)))
    arms = torch.as_tensor(rng.normal(size=(b, k, d)) / np.sqrt(d))
    baseline = torch.as_tensor(rng.normal(size=b))

    def run(dev: torch.device) -> tuple[LinearGaussianPosterior, tuple[torch.Tensor, ...]]:
        post = LinearGaussianPosterior(b, d, device=dev)
        f, r, x, v = (t.to(dev) for t in (feats, rewards, arms, baseline))
        for t in range(steps):
            post.update(f[t], r[t])
        mu, sd = post.predictive(x)
        return post, (post.mean(), mu, sd, post.expected_improvement(x, v))

    _, cpu_out = run(torch.device("cpu"))
    _, dev_out = run(device)
    names = ("posterior mean", "predictive mean", "predictive sd", "expected improvement")
    ok = all(_close(n, c, g) for n, c, g in zip(names, cpu_out, dev_out, strict=True))
    cpu_s = _best_time(lambda: run(torch.device("cpu")), torch.device("cpu"), repeats)
    dev_s = _best_time(lambda: run(device), device, repeats)
    print(f"  time: cpu {cpu_s:.3f} s, {device} {dev_s:.3f} s, ratio {cpu_s / dev_s:.2f}x")
    return ok


def tabular_check(device: torch.device, repeats: int, quick: bool = False) -> bool:
    n, b, episodes = (6, 4, 10) if quick else (50, 30, 200)
    print(f"TabularMDPPosterior (B={b}, DeepSea N={n}, S={n * n}, {episodes} random episodes)")
    envs = DeepSeaVectorEnv(b, size=n)
    obs, _ = envs.reset(seed=0)
    rng = np.random.default_rng(0)
    record = []
    for _ in range(episodes):
        states = obs.reshape(b, -1).argmax(axis=1)
        for h in range(n):
            actions = rng.integers(0, 2, size=b)
            obs, rewards, _, _, _ = envs.step(actions)
            nxt = obs.reshape(b, -1).argmax(axis=1) if h < n - 1 else None
            record.append((states, actions, rewards, nxt))
            states = nxt if nxt is not None else states

    def build(dev: torch.device) -> TabularMDPPosterior:
        post = TabularMDPPosterior(b, n * n, 2, n, reward_range=(-envs.move_cost, 1.0), device=dev)
        for s, a, r, nx in record:
            post.update(
                torch.as_tensor(s, device=dev),
                torch.as_tensor(a, device=dev),
                torch.as_tensor(r, device=dev),
                None if nx is None else torch.as_tensor(nx, device=dev),
            )
        return post

    cpu_post, dev_post = build(torch.device("cpu")), build(device)
    ok = _close("posterior-mean plan Q_h", cpu_post.plan_mean(), dev_post.plan_mean())
    cpu_s = _best_time(cpu_post.plan_mean, torch.device("cpu"), repeats)
    dev_s = _best_time(dev_post.plan_mean, device, repeats)
    print(f"  plan: cpu {cpu_s:.3f} s, {device} {dev_s:.3f} s, ratio {cpu_s / dev_s:.2f}x")
    return ok


def ensemble_check(device: torch.device, repeats: int, quick: bool = False) -> bool:
    from gymnasium import spaces

    steps = 20 if quick else 200
    ok = True
    cases = [
        ("CartPole-sized Box(4)", spaces.Box(-5.0, 5.0, (4,), dtype=np.float32), 2),
        ("one-hot DeepSea N=20", spaces.Box(0.0, 1.0, (20, 20), dtype=np.float32), 2),
    ]
    for label, space, actions in cases:
        print(f"EnsembleQPosterior ({label}, K=10, [64, 64], {steps} TD steps, batch 128)")
        rng = np.random.default_rng(0)
        if space.shape == (20, 20):
            cells = rng.integers(0, 400, size=(steps + 1, 128))
            obs_all = np.zeros((steps + 1, 128, 400), dtype=np.float32)
            np.put_along_axis(obs_all, cells[..., None], 1.0, axis=2)
            obs_all = obs_all.reshape(steps + 1, 128, 20, 20)
        else:
            obs_all = rng.normal(size=(steps + 1, 128, 4)).astype(np.float32)
        acts = rng.integers(0, actions, size=(steps, 128))
        rews = rng.normal(size=(steps, 128)).astype(np.float32)
        terms = rng.random((steps, 128)) < 0.05
        probe = obs_all[-1]
        host = np.full((128, actions), 1.0 / actions)

        data = (obs_all, acts, rews, terms)

        def train(post: EnsembleQPosterior, n: int, data: tuple[np.ndarray, ...] = data) -> None:
            o, a, r, d = data
            for t in range(n):
                post.td_step(Transitions(o[t], o[t + 1], a[t], r[t], d[t]))
                if (t + 1) % 4 == 0:
                    post.update_target()

        cpu_post, dev_post = (
            EnsembleQPosterior(space, actions, num_heads=10, seed=0, device=dev)
            for dev in (torch.device("cpu"), device)
        )
        # Float32 Adam amplifies the last-bit differences of CPU and GPU reductions step by
        # step, so one TD step is held to 1e-5 and 200 steps to a looser drift bound.
        for stage, done, rtol in (
            ("init", 0, 1e-6),
            ("1 TD step", 1, 1e-5),
            ("200 TD steps", steps, 1e-2),
        ):
            if done:
                cpu_post, dev_post = (
                    EnsembleQPosterior(space, actions, num_heads=10, seed=0, device=dev)
                    for dev in (torch.device("cpu"), device)
                )
                train(cpu_post, done)
                train(dev_post, done)
            c, g = cpu_post.evaluate(probe, host), dev_post.evaluate(probe, host)
            ok &= _close(
                f"{stage}: head values",
                torch.as_tensor(cpu_post.head_values(probe)),
                torch.as_tensor(dev_post.head_values(probe)),
                rtol,
            )
            ok &= _close(f"{stage}: mean", c.mean, g.mean, rtol)
            ok &= _close(
                f"{stage}: ensemble EI", c.expected_improvement, g.expected_improvement, rtol
            )
    for k, hidden, batch in ((10, (64, 64), 128), (20, (256, 256), 512)):
        space = spaces.Box(-5.0, 5.0, (4,), dtype=np.float32)
        rng = np.random.default_rng(1)
        o = rng.normal(size=(batch, 4)).astype(np.float32)
        a = rng.integers(0, 2, size=batch)
        r = rng.normal(size=batch).astype(np.float32)
        d = np.zeros(batch, dtype=bool)

        def step(post: EnsembleQPosterior, batch: tuple[np.ndarray, ...] = (o, a, r, d)) -> None:
            obs, act, rew, done = batch
            for _ in range(10):
                post.td_step(Transitions(obs, obs, act, rew, done))
                post.evaluate(obs[:1], np.full((1, 2), 0.5))

        times = []
        for dev in (torch.device("cpu"), device):
            post = EnsembleQPosterior(
                space, 2, num_heads=k, hidden_sizes=hidden, seed=0, device=dev
            )
            times.append(_best_time(lambda post=post: step(post), dev, repeats) / 10)
        print(
            f"  TD step + one decision (K={k}, {list(hidden)}, batch {batch}): "
            f"cpu {times[0] * 1e3:.2f} ms, {device} {times[1] * 1e3:.2f} ms, "
            f"ratio {times[0] / times[1]:.2f}x"
        )
    return bool(ok)


def contextual_check(device: torch.device, repeats: int, quick: bool = False) -> bool:
    """The contextual-bandit posteriors fed the same data on both devices (CPU generators, so
    the same initial weights and minibatches)."""
    from delight_gym.posteriors.bandit_ensemble import BanditEnsemblePosterior
    from delight_gym.posteriors.linfull import LinFullPosterior
    from delight_gym.posteriors.neural_linear import NeuralLinearPosterior

    b, k, d, steps = (3, 20, 4, 60) if quick else (20, 1000, 5, 200)
    rng = np.random.default_rng(0)
    arms = rng.normal(size=(k, d))
    arms /= np.linalg.norm(arms, axis=1, keepdims=True)
    theta = rng.normal(size=(b, d))
    theta /= np.linalg.norm(theta, axis=1, keepdims=True)
    pulls = rng.integers(0, k, size=(steps, b))
    means = np.cos(3.0 * arms @ theta.T).T  # (b, k)
    rewards = means[np.arange(b), pulls] + 0.1 * rng.normal(size=(steps, b))
    inputs = torch.as_tensor(np.broadcast_to(arms, (b, k, d)).copy())

    def gens() -> list[torch.Generator]:
        return [torch.Generator().manual_seed(100 + i) for i in range(b)]

    makers: dict[str, Callable[[torch.device], Any]] = {
        "LinFullPosterior": lambda dev: LinFullPosterior(b, 1, d, device=dev),
        "NeuralLinearPosterior": lambda dev: NeuralLinearPosterior(
            b, 1, d, generators=gens(), device=dev, **({"train_steps": 5} if quick else {})
        ),
        "BanditEnsemblePosterior": lambda dev: BanditEnsemblePosterior(
            b, 1, d, generators=gens(), device=dev
        ),
    }
    ok = True
    for name, make in makers.items():
        print(f"{name} (B={b} seeds, K={k} shared-model arms, d={d}, {steps} updates)")

        dtype = torch.float64 if name == "LinFullPosterior" else torch.float32

        def run(
            dev: torch.device, make: Any = make, dtype: torch.dtype = dtype, upto: int = steps
        ) -> tuple[torch.Tensor, torch.Tensor]:
            post = make(dev)
            x = inputs.to(dev, dtype)
            zeros = torch.zeros(b, dtype=torch.int64, device=dev)
            for t in range(upto):
                rows = x[torch.arange(b, device=dev), torch.as_tensor(pulls[t], device=dev)]
                post.update(rows, zeros, torch.as_tensor(rewards[t], device=dev).to(x.dtype))
            pred = post.predictive(x)
            baseline = pred.mean.max(dim=1).values
            return pred.mean, pred.expected_improvement(baseline)

        # float64 regression: 1e-9. The float32 networks: before the first retraining (49
        # updates) and after one (50); many retrainings amplify last-bit differences.
        stages = [(steps, RTOL)] if name == "LinFullPosterior" else [(49, 1e-5), (50, 1e-3)]
        for upto, rtol in stages:
            c_mean, c_ei = run(torch.device("cpu"), upto=upto)
            g_mean, g_ei = run(device, upto=upto)
            ok &= _close(f"{upto} updates: predictive mean", c_mean, g_mean, rtol)
            ok &= _close(f"{upto} updates: expected improvement", c_ei, g_ei, rtol)
        cpu_s = _best_time(lambda: run(torch.device("cpu")), torch.device("cpu"), repeats)
        dev_s = _best_time(lambda: run(device), device, repeats)
        print(f"  time: cpu {cpu_s:.3f} s, {device} {dev_s:.3f} s, ratio {cpu_s / dev_s:.2f}x")
    return bool(ok)


def seed_batched_check(device: torch.device, repeats: int, quick: bool = False) -> bool:
    """SeedBatchedBootDQN (S seeds x 10 heads in one network) on DeepSea: the same TD steps on
    both devices, then env steps per second over S seeds at once."""
    from delight_gym.agents.boot_dqn import SeedBatchedBootDQN

    n = 6 if quick else 20
    seeds_list = (2,) if quick else (5, 25)
    print(f"SeedBatchedBootDQN (DeepSea N={n}, K=10, [64, 64], batch 128 per seed)")
    s = seeds_list[0]
    rng = np.random.default_rng(0)
    agents = [
        SeedBatchedBootDQN(s, n * n, 2, seed=0, learning_starts=10**9, device=dev)
        for dev in (torch.device("cpu"), device)
    ]
    for _ in range(300):
        batch = (
            rng.integers(0, n * n, size=s),
            rng.integers(0, 2, size=s),
            rng.normal(size=s),
            rng.integers(-1, n * n, size=s),
            rng.random(s) < 0.05,
        )
        for agent in agents:
            agent.observe(*batch)
    probe = rng.integers(0, n * n, size=s)
    ok = True
    done = 0
    for stage, steps, rtol in (("1 TD step", 1, 1e-5), ("50 TD steps", 49, 1e-2)):
        for _ in range(steps):
            for agent in agents:
                agent.td_step()
        done += steps
        ok &= _close(
            f"{stage}: head values",
            agents[0].head_values(probe),
            agents[1].head_values(probe),
            rtol,
        )
    episodes = 4 if quick else 20
    for seeds in seeds_list:
        rates = []
        for dev in (torch.device("cpu"), device):
            agent = SeedBatchedBootDQN(seeds, n * n, 2, seed=0, device=dev)
            env = DeepSeaVectorEnv(seeds, size=n)
            agent.play(env, 8, seed=0)  # warm-up: past learning_starts (128 steps)
            _sync(dev)
            start = time.perf_counter()
            agent.play(env, episodes, seed=1)
            _sync(dev)
            rates.append(seeds * episodes * n / (time.perf_counter() - start))
        print(
            f"  S={seeds} seeds: cpu {rates[0]:.0f} env steps/s "
            f"({torch.get_num_threads()} threads), {device} {rates[1]:.0f} env steps/s, "
            f"ratio {rates[1] / rates[0]:.2f}x"
        )
    return bool(ok)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="tiny sizes (a self-test)")
    args = parser.parse_args()
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        print("no CUDA device: nothing to check (run with --device cpu to self-check)")
        return 0
    if device.type == "cuda":
        print(f"device: {torch.cuda.get_device_name(device)}; torch {torch.__version__}")
    results = [
        linear_check(device, args.repeats, args.quick),
        tabular_check(device, args.repeats, args.quick),
        ensemble_check(device, args.repeats, args.quick),
        contextual_check(device, args.repeats, args.quick),
        seed_batched_check(device, args.repeats, args.quick),
    ]
    print("ALL PASS" if all(results) else "SOME CHECKS FAILED")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
