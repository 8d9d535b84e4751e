"""PSRL's draws from a :class:`~delight_gym.posteriors.tabular.TabularMDPPosterior`: one MDP
per seed, exact in distribution, by stick-breaking without an ``S × S`` matrix
(:func:`sample_sparse`) or from dense Dirichlet rows (:func:`sample_dense`), each seed from its
own generator."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch

from delight_gym.posteriors.tabular_planning import TabularModel

__all__ = ["GeneratorLike", "generators_per_row", "sample_dense", "sample_sparse", "standard_gamma"]

#: One ``torch.Generator`` for every row, or one per row.
GeneratorLike = torch.Generator | Sequence[torch.Generator]


def generators_per_row(generator: GeneratorLike, rows: Sequence[int]) -> list[torch.Generator]:
    """One generator per row of ``rows``: ``generator`` itself for each, or its own entry."""
    if isinstance(generator, torch.Generator):
        return [generator] * len(rows)
    gens = list(generator)
    if not all(isinstance(g, torch.Generator) for g in gens):
        raise TypeError("generator must be a torch.Generator or a sequence of them")
    if len(gens) != len(rows):
        raise ValueError(
            f"generator must hold one generator per row ({len(rows)}), got {len(gens)}"
        )
    return gens


def standard_gamma(shape: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """Gamma(``shape``, 1) draws from ``gen`` (torch has no public sampler that takes one)."""
    return torch._standard_gamma(shape, generator=gen)


def _beta_reward(posterior: Any, x: torch.Tensor, y: torch.Tensor, a: Any, b: Any) -> Any:
    """A Beta draw ``x/(x + y)`` from Gamma draws, rescaled to the reward range."""
    low, high = posterior.reward_range
    total = x + y
    # Both Gammas can underflow for tiny shapes; the Beta's mean is the right fallback.
    ratio = torch.where(total > 0, x / torch.where(total > 0, total, 1.0), a / (a + b))
    return low + (high - low) * ratio


def _normal_reward(posterior: Any, rows: torch.Tensor, noise: torch.Tensor) -> torch.Tensor:
    """The posterior mean reward of ``rows`` plus standard ``noise`` scaled by its std."""
    s0 = posterior.reward_prior[1]
    prec = 1.0 / s0**2 + posterior.reward_n[rows] / posterior.reward_noise**2
    return posterior.mean_reward(rows) + noise.view_as(prec) / prec.sqrt()


def _sample_reward(posterior: Any, i: int, gen: torch.Generator) -> torch.Tensor:
    if posterior.reward_model == "beta":
        a, b = posterior.reward_a[i], posterior.reward_b[i]
        return _beta_reward(posterior, standard_gamma(a, gen), standard_gamma(b, gen), a, b)
    rows = torch.arange(i, i + 1, device=posterior.device)
    shape = (posterior.num_states, posterior.num_actions)
    noise = torch.randn(shape, generator=gen, dtype=posterior.dtype, device=posterior.device)
    return _normal_reward(posterior, rows, noise)[0]


def _sample_dense_row(
    posterior: Any, i: int, gen: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """Reward means and a dense ``(S, A, S)`` transition draw for seed row ``i``."""
    reward = _sample_reward(posterior, i, gen)
    n_states, n_actions = posterior.num_states, posterior.num_actions
    kw: dict[str, Any] = {"dtype": posterior.dtype, "device": posterior.device}
    alpha = torch.full((n_states, n_actions, n_states), posterior.transition_prior, **kw)
    alpha.scatter_add_(-1, posterior.succ[i], posterior.succ_counts[i])
    g = standard_gamma(alpha, gen)
    total = g.sum(dim=-1, keepdim=True)
    # All S Gammas underflow together only for a minuscule α0 (never for α0 ≥ 1e-6 and
    # S ≤ 10⁴); the row then falls back to the mean.
    weight = torch.where(
        total > 0, g / torch.where(total > 0, total, 1.0), alpha / alpha.sum(-1, keepdim=True)
    )
    return reward, weight


def sample_sparse(
    posterior: Any, rows: list[int], gens: list[torch.Generator], tol: float
) -> TabularModel:
    """The stick-breaking sampler: one MDP per seed row of ``posterior`` in ``rows``, drawn
    from its generator in ``gens``, the series stopped at leftover mass ``tol`` in ``(0, 1)``;
    the arithmetic runs batched over the seeds."""
    n_states, n_actions = posterior.num_states, posterior.num_actions
    pairs = n_states * n_actions
    kw: dict[str, Any] = {"dtype": posterior.dtype, "device": posterior.device}
    idx = torch.tensor(rows, dtype=torch.int64, device=posterior.device)
    b = len(rows)
    counts = posterior.succ_counts[idx]  # (b, S, A, K)
    k_slots = counts.shape[-1]
    c = n_states * posterior.transition_prior
    log_tol = math.log(tol)
    # About c·log(1/tol) sticks leave mass below tol (each keeps a Beta(1, c) share).
    main = max(1, math.ceil(c * -log_tol)) + 1
    beta = posterior.reward_model == "beta"
    gammas, noises, uniforms, atoms = [], [], [], []
    c_shape = torch.full((pairs,), c, **kw)
    for k, (i, g) in enumerate(zip(rows, gens, strict=True)):
        shapes = [counts[k].reshape(-1).clamp(min=1.0), c_shape]
        if beta:
            shapes = [posterior.reward_a[i].reshape(-1), posterior.reward_b[i].reshape(-1), *shapes]
        gammas.append(standard_gamma(torch.cat(shapes), g))
        if not beta:
            noises.append(torch.randn(pairs, generator=g, **kw))
        uniforms.append(torch.rand((pairs, main), generator=g, **kw))
        atoms.append(torch.randint(n_states, (pairs, main), generator=g, device=posterior.device))
    gam = torch.stack(gammas)
    off = 0
    if beta:
        ra, rb = posterior.reward_a[idx].reshape(b, -1), posterior.reward_b[idx].reshape(b, -1)
        x, y = gam[:, :pairs], gam[:, pairs : 2 * pairs]
        reward = _beta_reward(posterior, x, y, ra, rb).view(b, n_states, n_actions)
        off = 2 * pairs
    else:
        reward = _normal_reward(posterior, idx, torch.stack(noises))
    # The posterior Dirichlet splits as (observed counts, prior mass c): Gamma draws of each
    # give the observed successors' weights and the fraction `frac` left to the DP part.
    g_obs = gam[:, off : off + pairs * k_slots].view(b, n_states, n_actions, k_slots)
    g_obs = torch.where(counts > 0, g_obs, 0.0)
    t0 = gam[:, off + pairs * k_slots :].reshape(b * pairs)
    obs_total = g_obs.sum(dim=-1).reshape(b * pairs)
    visited = obs_total > 0
    frac = torch.where(visited, t0 / torch.where(visited, t0 + obs_total, 1.0), 1.0)
    obs_weight = (
        (1.0 - frac).view(b, n_states, n_actions, 1)
        * g_obs
        / torch.where(visited, obs_total, 1.0).view(b, n_states, n_actions, 1)
    )
    # Stick-breaking for D ~ Dirichlet(α0·1_S) = DP(c, uniform): `main` sticks for every
    # pair, then more, in chunks, for the pairs whose leftover mass is still above tol.
    start = torch.zeros((b * pairs,), **kw)
    w_main, log_left = _stick_weights(torch.stack(uniforms).view(b * pairs, main), start, c)
    at_main = torch.stack(atoms).view(b * pairs, main)
    extra_pair: list[torch.Tensor] = []
    extra_w: list[torch.Tensor] = []
    extra_at: list[torch.Tensor] = []
    unfinished = (log_left >= log_tol).view(b, pairs)
    for k in torch.nonzero(unfinished.any(dim=1)).flatten().tolist():
        todo = torch.nonzero(unfinished[k]).flatten() + k * pairs
        while todo.numel() > 0:
            w_more, at_more, left_more = _sticks(posterior, log_left[todo], main, c, gens[k])
            log_left[todo] = left_more
            extra_pair.append(todo[:, None].expand(-1, main).reshape(-1))
            extra_w.append(w_more.reshape(-1))
            extra_at.append((at_more + k * n_states).reshape(-1))
            todo = todo[left_more >= log_tol]
    # Sticks whose weight in P (f·w) is below tol go to the uniform part with the leftover;
    # the heavy main sticks are packed first, so J is the largest number of them.
    w_main = w_main * frac[:, None]
    left = frac * torch.exp(log_left)
    light = w_main < tol
    left = left + (w_main * light).sum(dim=-1)
    order = torch.argsort(light.to(torch.uint8), dim=-1, stable=True)
    width = int((~light).sum(dim=-1).max())
    w_main = torch.where(light, 0.0, w_main).gather(-1, order)[:, :width]
    at_main = at_main.gather(-1, order)[:, :width]
    extra: tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None = None
    if extra_pair:
        pair_e = torch.cat(extra_pair)
        w_e = torch.cat(extra_w) * frac[pair_e]
        at_e = torch.cat(extra_at)
        light_e = w_e < tol
        left.index_add_(0, pair_e[light_e], w_e[light_e])
        heavy = ~light_e
        if bool(heavy.any()):
            extra = (pair_e[heavy], at_e[heavy], w_e[heavy])
    shape = (b, n_states, n_actions, width)
    succ = torch.cat([at_main.view(shape), posterior.succ[idx]], dim=-1)
    weight = torch.cat([w_main.view(shape), obs_weight], dim=-1)
    return TabularModel(reward, succ, weight, left.view(b, n_states, n_actions), extra)


def _sticks(
    posterior: Any, log_left: torch.Tensor, count: int, c: float, gen: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``count`` more sticks of DP(c, uniform) for pairs with leftover ``exp(log_left)``:
    weights and atoms ``(len, count)`` and the new log leftover."""
    shape = (log_left.numel(), count)
    u = torch.rand(shape, generator=gen, dtype=posterior.dtype, device=posterior.device)
    weights, left = _stick_weights(u, log_left, c)
    atoms = torch.randint(posterior.num_states, shape, generator=gen, device=posterior.device)
    return weights, atoms, left


def _stick_weights(
    u: torch.Tensor, log_left: torch.Tensor, c: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """Stick weights from uniforms ``u`` after leftover ``exp(log_left)``, and the new log
    leftover."""
    log_keep = torch.log(u) / c  # log(1 - β_i), β_i ~ Beta(1, c)
    cum = log_left[:, None] + torch.cumsum(log_keep, dim=-1)
    # Stick i takes β_i of what sticks 0..i-1 left: exp(prev_i)·(1 - exp(log_keep_i)).
    prev = torch.cat([log_left[:, None], cum[:, :-1]], dim=-1)
    return torch.exp(prev) * -torch.expm1(log_keep), cum[:, -1]


def sample_dense(posterior: Any, rows: list[int], gens: list[torch.Generator]) -> TabularModel:
    """The dense sampler (arguments as :func:`sample_sparse`'s): per seed row, reward means and
    an ``(S, A, S)`` transition draw from its own generator."""
    parts = [_sample_dense_row(posterior, i, g) for i, g in zip(rows, gens, strict=True)]
    reward = torch.stack([p[0] for p in parts])
    weight = torch.stack([p[1] for p in parts])
    return TabularModel(reward, None, weight, torch.zeros_like(reward))
