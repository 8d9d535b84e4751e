"""An independent, per-seed implementation of the paper's linear-bandit experiment.

Plain numpy/scipy, one seed and one round at a time, sharing nothing with ``delight_gym``:
its own instances (features ~ N(0, I/D), θ* ~ N(0, I), rewards φᵀθ* + N(0, σ²)), its own
random numbers, and the posterior recomputed from scratch every round
(Σ = (ηI + ΦᵀΦ/σ²)⁻¹, μ = ΣΦᵀy/σ²) rather than updated incrementally. DE follows Algorithm 1
with a greedy host (surprisal L off the host, 0 on it), EI from the Gaussian predictive.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import norm


def gaussian_ei(m, s, v):
    z = (m - v) / s
    return s * (norm.pdf(z) + z * norm.cdf(z))


def run_linear_reference(
    agent, num_arms, dim, noise, horizon, seeds, seed, m=100.0, lam=0.1, cap=10.0
):
    """Final cumulative regret of each of ``seeds`` independent runs."""
    rng = np.random.default_rng([seed, 4242])
    finals = np.zeros(seeds)
    for b in range(seeds):
        phi = rng.normal(size=(num_arms, dim)) / np.sqrt(dim)
        theta = rng.normal(size=dim)
        means = phi @ theta
        best = means.max()
        precision = np.eye(dim)  # η = 1
        xty = np.zeros(dim)
        regret = 0.0
        for t in range(horizon):
            cov = np.linalg.inv(precision)
            mu = cov @ xty
            post_mean = phi @ mu
            post_std = np.sqrt(np.einsum("kd,de,ke->k", phi, cov, phi))
            greedy = int(np.argmax(post_mean))
            eps = m / (m + t)
            if agent == "delight":
                v = post_mean[greedy]
                delight = gaussian_ei(post_mean, post_std, v) * cap
                delight[greedy] = 0.0
                gate = delight >= lam
                a = greedy
                if rng.random() < eps and gate.any():
                    q = np.where(gate, delight, 0.0)
                    a = int(rng.choice(num_arms, p=q / q.sum()))
            elif agent == "thompson":
                sample = rng.multivariate_normal(mu, cov)
                a = int(np.argmax(phi @ sample))
            elif agent == "egreedy":
                a = int(rng.integers(num_arms)) if rng.random() < eps else greedy
            elif agent == "greedy":
                a = greedy
            else:
                raise ValueError(agent)
            r = means[a] + noise * rng.normal()
            precision += np.outer(phi[a], phi[a]) / noise**2
            xty += phi[a] * r / noise**2
            regret += best - means[a]
        finals[b] = regret
    return finals
