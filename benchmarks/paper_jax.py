"""The paper's reference implementation, run as written: JAX, ``jit`` + ``vmap`` over seeds.

The paper's appendix "Reference Implementation" gives ``select_delight``, DE's action
selection for one Bernoulli bandit with exact Beta posteriors, and says that "the remaining
experiment infrastructure (baselines, posterior updates, regret computation) uses standard
components". :func:`select_delight` below is that function character for character (only
the ``\\`` line continuation became parentheses). What the sketch leaves out had to be
filled in, each time with the plainest standard choice, and nothing algorithmic changed:

* ``config``: an object with ``epsilon_half_life`` (M = 100), ``surprisal_cap`` (L = 10),
  ``gate_price`` (λ = 0.1) and ``num_arms`` (K), the paper's defaults (:class:`PaperConfig`);
* ``means``: the posterior means ``α / (α + β)``; ``betainc`` is
  ``jax.scipy.special.betainc`` (the regularized incomplete beta ``I_x(a, b)``, the only
  one JAX has);
* ``t``: the number of completed rounds, ``0 … T − 1`` (so ``ε_0 = 1``);
* the loop: one ``jax.lax.scan`` over the ``T`` rounds of one seed, ``jax.vmap`` over the
  seeds, ``jax.jit`` around both (the "jit + vmap" the paper's speed refers to);
* the instance: arm means i.i.d. ``Uniform(0, 1)`` (appendix "Bernoulli bandits"), drawn
  from the seed's key; rewards ``Bernoulli(μ_a)``; ``Beta(1, 1)`` priors and the conjugate
  update ``α_a += r``, ``β_a += 1 − r`` ("exact Beta-Bernoulli conjugate updates");
* Thompson sampling, the baseline: one ``jax.random.beta(α, β)`` draw per arm, play the
  argmax (:func:`select_thompson`);
* regret: cumulative pseudo-regret ``Σ_t (max_a μ_a − μ_{A_t})``, as the paper defines it;
* keys: seed ``i`` uses ``jax.random.key(seed + i)``, split into an instance key and one key
  per round, which is split again into the acting and the reward keys;
* precision: JAX's default ``float32`` (the sketch does not enable ``x64``).

JAX is an optional dependency (``pip install -e ".[paper]"``); this module is only imported
by ``benchmarks/bench_vs_paper.py`` and its test.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.special import betainc

__all__ = ["AGENTS", "PaperConfig", "compile_run", "select_delight", "select_thompson"]


@dataclass(frozen=True)
class PaperConfig:
    """The ``config`` the paper's ``select_delight`` reads (defaults: the paper's M, L, λ)."""

    num_arms: int
    epsilon_half_life: float = 100.0
    surprisal_cap: float = 10.0
    gate_price: float = 0.1


# ----------------------------------------------------------------------------------------
# The paper's appendix code, verbatim.
def select_delight(means, alphas, betas, key, t, config):
    """Delight-gated exploration with analytic Beta EI."""
    eps = config.epsilon_half_life / (config.epsilon_half_life + t)
    k1, k2 = jax.random.split(key)
    greedy = jnp.argmax(means)
    v_t = means[greedy]

    # Analytic EI for Beta posterior.
    a1 = alphas + 1.0
    ei = means * (1 - betainc(a1, betas, v_t)) - v_t * (1 - betainc(alphas, betas, v_t))
    ei = jnp.maximum(0.0, ei)

    # Surprisal: L for non-greedy, 0 for greedy.
    host = jax.nn.one_hot(greedy, config.num_arms)
    surprisal = config.surprisal_cap * (1.0 - host)

    # Gate: delight >= lambda.
    delight = ei * surprisal
    in_gate = delight >= config.gate_price
    gated = delight * in_gate

    # Override or host.
    probs = gated / (gated.sum() + 1e-10)
    probs = jnp.where(jnp.any(in_gate), probs, host)
    use_override = jax.random.bernoulli(k1, eps)
    override = jax.random.categorical(k2, jnp.log(probs + 1e-10))
    return jnp.where(use_override, override, greedy)


# End of the paper's code.
# ----------------------------------------------------------------------------------------


def select_thompson(means, alphas, betas, key, t, config):
    """Thompson sampling, the paper's baseline: argmax of one posterior draw per arm.

    Same signature as :func:`select_delight` (``means``, ``t`` and ``config`` unused).
    """
    del means, t, config
    return jnp.argmax(jax.random.beta(key, alphas, betas))


#: Agent name (as ``run_bernoulli`` spells it) -> selection function.
AGENTS: dict[str, Callable[..., Any]] = {"delight": select_delight, "thompson": select_thompson}


def _run_one_seed(key, select, config, horizon):
    """Per-round pseudo-regret, shape ``(horizon,)``, of ``select`` on one fresh instance."""
    k_instance, k_rounds = jax.random.split(key)
    true_means = jax.random.uniform(k_instance, (config.num_arms,))
    best = true_means.max()
    prior = jnp.ones(config.num_arms)

    def one_round(carry, inputs):
        alphas, betas = carry
        t, round_key = inputs
        k_act, k_reward = jax.random.split(round_key)
        arm = select(alphas / (alphas + betas), alphas, betas, k_act, t, config)
        reward = jax.random.bernoulli(k_reward, true_means[arm]).astype(alphas.dtype)
        alphas = alphas.at[arm].add(reward)
        betas = betas.at[arm].add(1.0 - reward)
        return (alphas, betas), best - true_means[arm]

    rounds = (jnp.arange(horizon), jax.random.split(k_rounds, horizon))
    _, regret = jax.lax.scan(one_round, (prior, prior), rounds)
    return regret


def compile_run(
    agent: str, num_arms: int, horizon: int, seeds: int, seed: int = 0
) -> tuple[Callable[[], np.ndarray], float]:
    """Compile the paper's experiment for one cell; return the runner and the compile time.

    Args:
        agent: ``"delight"`` or ``"thompson"``.
        num_arms: ``K``.
        horizon: ``T``.
        seeds: independent instances, run as one ``vmap`` batch.
        seed: seed ``i`` of the batch uses ``jax.random.key(seed + i)``.

    Returns:
        ``(run, compile_seconds)``: ``run()`` executes the compiled program and returns the
        per-round pseudo-regret as a numpy array of shape ``(seeds, horizon)`` (it blocks
        until the device is done, so timing ``run()`` times the computation).
    """
    if agent not in AGENTS:
        raise ValueError(f"agent must be one of {sorted(AGENTS)}, got {agent!r}")
    config = PaperConfig(num_arms=num_arms)
    select = AGENTS[agent]
    keys = jax.vmap(jax.random.key)(jnp.arange(seed, seed + seeds))

    def batch(keys):
        return jax.vmap(lambda key: _run_one_seed(key, select, config, horizon))(keys)

    start = time.perf_counter()
    compiled = jax.jit(batch).lower(keys).compile()
    compile_seconds = time.perf_counter() - start

    def run() -> np.ndarray:
        return np.asarray(jax.block_until_ready(compiled(keys)))

    return run, compile_seconds
