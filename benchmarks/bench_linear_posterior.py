"""Incremental linear-Gaussian posterior against a from-scratch solve, measured in one run.

Run: ``python benchmarks/bench_linear_posterior.py [--seeds 100] [--dims 10,30,50]
[--steps 1000] [--device cpu] [--dtype float64] [--threads N] [--repeats 3]``

For every ``D`` it feeds the same stream (features ``~ N(0, I/D)``, rewards ``φᵀθ* + N(0, 1)``,
``B`` seeds, ``T`` steps) to

* ``incremental``: :class:`~delight_gym.posteriors.linear.LinearGaussianPosterior` — one
  ``O(B·D²)`` rank-one update of the triangular precision factor per step, then the mean
  (two triangular solves);
* ``scratch``: the Gram matrix ``ΦᵀΦ`` accumulated in place, then every step a Cholesky
  factorisation of ``ηI + ΦᵀΦ/σ²`` (``O(B·D³)``) and a solve for the mean.

Both loops produce the posterior mean at every step. It prints the best-of-``repeats`` wall
time of each loop, their ratio, the largest deviation between the two means over all steps
(relative to the largest mean entry) and between the final covariances (relative to the
largest covariance entry). On a shared machine, small batched kernels can stall badly when
torch uses several intra-op threads on busy cores: compare ``--threads 1`` there.
"""

from __future__ import annotations

import argparse
import math
import time

import torch

from delight_gym.posteriors.linear import LinearGaussianPosterior


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def stream(
    seeds: int, dim: int, steps: int, device: torch.device, dtype: torch.dtype
) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(dim)
    phi = torch.randn(steps, seeds, dim, generator=gen, dtype=torch.float64) / math.sqrt(dim)
    theta = torch.randn(seeds, dim, generator=gen, dtype=torch.float64)
    y = (phi * theta).sum(-1) + torch.randn(steps, seeds, generator=gen, dtype=torch.float64)
    return phi.to(device, dtype), y.to(device, dtype)


def run_incremental(
    phi: torch.Tensor, y: torch.Tensor, eta: float, noise: float
) -> tuple[float, torch.Tensor, torch.Tensor]:
    steps, seeds, dim = phi.shape
    post = LinearGaussianPosterior(
        seeds, dim, noise=noise, prior_precision=eta, device=phi.device, dtype=phi.dtype
    )
    means = torch.empty_like(phi)
    _sync(phi.device)
    start = time.perf_counter()
    for t in range(steps):
        post.update(phi[t], y[t])
        means[t] = post.mean()
    _sync(phi.device)
    return time.perf_counter() - start, means, post.covariance()


def run_scratch(
    phi: torch.Tensor, y: torch.Tensor, eta: float, noise: float
) -> tuple[float, torch.Tensor, torch.Tensor]:
    steps, seeds, dim = phi.shape
    prior = eta * torch.eye(dim, dtype=phi.dtype, device=phi.device)
    gram = torch.zeros(seeds, dim, dim, dtype=phi.dtype, device=phi.device)
    rhs = torch.zeros(seeds, dim, 1, dtype=phi.dtype, device=phi.device)
    means = torch.empty_like(phi)
    factor = torch.empty_like(gram)
    inv_var = 1.0 / noise**2
    _sync(phi.device)
    start = time.perf_counter()
    for t in range(steps):
        x = phi[t].unsqueeze(-1)
        gram.baddbmm_(x, x.mT, alpha=inv_var)
        rhs.add_(x * y[t].view(seeds, 1, 1), alpha=inv_var)
        factor = torch.linalg.cholesky(prior + gram)
        means[t] = torch.cholesky_solve(rhs, factor).squeeze(-1)
    _sync(phi.device)
    return time.perf_counter() - start, means, torch.cholesky_inverse(factor)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--dims", default="10,30,50")
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", default="float64", choices=["float64", "float32"])
    parser.add_argument("--threads", type=int, default=0, help="torch intra-op threads (0: keep)")
    parser.add_argument("--repeats", type=int, default=3, help="best of this many timings")
    parser.add_argument("--noise", type=float, default=1.0)
    parser.add_argument("--prior-precision", type=float, default=1.0)
    args = parser.parse_args()
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    device = torch.empty(0, device=args.device).device
    dtype = getattr(torch, args.dtype)
    eta, noise = args.prior_precision, args.noise
    print(
        f"device={device} dtype={args.dtype} seeds={args.seeds} steps={args.steps} "
        f"threads={torch.get_num_threads()} torch={torch.__version__} best of {args.repeats}"
    )
    print(
        f"{'D':>4}{'incremental s':>15}{'scratch s':>11}{'scratch/incr':>14}"
        f"{'max dev mean':>14}{'max dev cov':>13}"
    )
    for dim in [int(d) for d in args.dims.split(",")]:
        phi, y = stream(args.seeds, dim, args.steps, device, dtype)
        run_incremental(phi[:20], y[:20], eta, noise)  # warm-up (kernels, allocator)
        run_scratch(phi[:20], y[:20], eta, noise)
        t_inc, t_scr = math.inf, math.inf
        for _ in range(args.repeats):
            elapsed, mean_inc, cov_inc = run_incremental(phi, y, eta, noise)
            t_inc = min(t_inc, elapsed)
            elapsed, mean_scr, cov_scr = run_scratch(phi, y, eta, noise)
            t_scr = min(t_scr, elapsed)
        dev_mean = float((mean_inc - mean_scr).abs().max() / mean_scr.abs().max())
        dev_cov = float((cov_inc - cov_scr).abs().max() / cov_scr.abs().max())
        print(
            f"{dim:>4}{t_inc:>15.3f}{t_scr:>11.3f}{t_scr / t_inc:>14.2f}"
            f"{dev_mean:>14.1e}{dev_cov:>13.1e}"
        )


if __name__ == "__main__":
    main()
