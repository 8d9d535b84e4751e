"""A slow, per-seed implementation of the paper's Bernoulli experiment, line by line.

This is the independent reference the batched agents are tested against. It follows
Algorithm 1 and the paper's appendix code (``select_delight``) literally, one seed and one
round at a time, with the paper's own EI formula
``m·(1 − I_v(α+1, β)) − v·(1 − I_v(α, β))`` clipped at 0 and its ``1e-10`` normalisers. It
shares nothing with ``delight_gym`` except the random numbers it is handed, so that where the
draws can be shared the two must choose the same arms, and elsewhere agree in distribution.

Each policy consumes its randomness in the order the batched agents do (documented per
function), through a ``draws`` callable returning the next batch-wide uniform or Beta draw;
``seed_index`` picks this seed's entry of each batch-wide draw.
"""

from __future__ import annotations

import numpy as np
from scipy.special import betainc


def paper_select_delight(
    means, alphas, betas, u_override, u_categorical, t, m=100.0, lam=0.1, cap=10.0
):
    """The paper's ``select_delight`` (appendix), in numpy, for one seed and one round."""
    num_arms = len(means)
    eps = m / (m + t)
    greedy = int(np.argmax(means))
    v_t = means[greedy]
    a1 = alphas + 1.0
    ei = means * (1 - betainc(a1, betas, v_t)) - v_t * (1 - betainc(alphas, betas, v_t))
    ei = np.maximum(0.0, ei)
    host = np.zeros(num_arms)
    host[greedy] = 1.0
    surprisal = cap * (1.0 - host)
    delight = ei * surprisal
    in_gate = delight >= lam
    gated = delight * in_gate
    probs = gated / (gated.sum() + 1e-10)
    probs = probs if in_gate.any() else host
    use_override = u_override < eps
    # Inverse-CDF draw (the paper uses jax.random.categorical: same law).
    cum = np.cumsum(probs)
    override = int(min(np.searchsorted(cum, u_categorical * cum[-1], side="right"), num_arms - 1))
    return override if use_override else greedy


def run_reference(agent, means, horizon, draw, reward_fn, m=100.0, lam=0.1, cap=10.0):
    """Play every seed for ``horizon`` rounds in lockstep, each seed with its own plain loop.

    Args:
        agent: ``delight``, ``thompson``, ``egreedy``, ``greedy`` or ``ucb``.
        means: true arm means, shape ``(seeds, K)`` (only used for regret).
        draw: ``draw(kind, alphas, betas)`` returns the next batch-wide random draw: ``u``
            (uniforms, shape ``(seeds,)``), ``int`` (arms, shape ``(seeds,)``) or ``beta``
            (posterior samples, shape ``(seeds, K)``). Called in the batched agents' order.
        reward_fn: ``reward_fn(actions)`` returns the rewards of the arms played, ``(seeds,)``.

    Returns:
        ``(actions, regret)``, both of shape ``(seeds, horizon)``.
    """
    seeds, k = means.shape
    alphas, betas = np.ones((seeds, k)), np.ones((seeds, k))
    pulls, succ = np.zeros((seeds, k)), np.zeros((seeds, k))
    actions = np.zeros((seeds, horizon), dtype=np.int64)
    for t in range(horizon):
        u1 = draw("u", alphas, betas) if agent in ("delight", "egreedy") else None
        u2 = draw("u", alphas, betas) if agent == "delight" else None
        ints = draw("int", alphas, betas) if agent == "egreedy" else None
        samples = draw("beta", alphas, betas) if agent == "thompson" else None
        for b in range(seeds):
            post_means = alphas[b] / (alphas[b] + betas[b])
            if agent == "delight":
                a = paper_select_delight(
                    post_means, alphas[b], betas[b], u1[b], u2[b], t, m, lam, cap
                )
            elif agent == "greedy":
                a = int(np.argmax(post_means))
            elif agent == "egreedy":
                a = int(ints[b]) if u1[b] < m / (m + t) else int(np.argmax(post_means))
            elif agent == "thompson":
                a = int(np.argmax(samples[b]))
            elif agent == "ucb":
                if (pulls[b] == 0).any():
                    a = int(np.argmax(pulls[b] == 0))
                else:
                    a = int(np.argmax(succ[b] / pulls[b] + np.sqrt(2 * np.log(t) / pulls[b])))
            else:
                raise ValueError(agent)
            actions[b, t] = a
        rewards = reward_fn(actions[:, t])
        for b in range(seeds):
            a, r = actions[b, t], rewards[b]
            alphas[b, a] += r
            betas[b, a] += 1 - r
            pulls[b, a] += 1
            succ[b, a] += r
    rows = np.arange(seeds)[:, None]
    regret = means.max(axis=1, keepdims=True) - means[rows, actions]
    return actions, regret
