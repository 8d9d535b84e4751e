"""Bayesian optimisation as users run it, on the continuum bandits: BoTorch's fitted GP.

Each round a ``SingleTaskGP`` (BoTorch's defaults) is fitted to every reward so far, and the
next action maximises ``UpperConfidenceBound`` (GP-UCB's ``β_t``) or ``LogExpectedImprovement``
with ``optimize_acqf`` over ``[0, 1]^d``; the first ``2(d + 1)`` actions are uniform, as in
BoTorch's tutorials. Needs the ``continuum`` extra (``pip install 'delight-gym[continuum]'``).
"""

from __future__ import annotations

import time
import warnings
from typing import Any

import numpy as np
import torch

from delight_gym._checks import check_choice, check_positive_int
from delight_gym.envs.continuum import (
    DEFAULT_NOISE,
    DEFAULT_NUM_BUMPS,
    GRID_BUMP_WIDTH,
    GRID_NEEDLE_WIDTH,
)

__all__ = ["BOTORCH_AGENTS", "botorch_acquisition", "run_botorch"]

#: The acquisition functions :func:`run_botorch` knows.
BOTORCH_AGENTS = ("botorch-ucb", "botorch-logei")


def fit_gp(x: torch.Tensor, y: torch.Tensor) -> Any:
    """A ``SingleTaskGP`` on ``x`` ``(n, d)`` and ``y`` ``(n, 1)``, fitted by
    ``fit_gpytorch_mll`` (BoTorch's defaults throughout)."""
    from botorch.fit import fit_gpytorch_mll
    from botorch.models import SingleTaskGP
    from gpytorch.mlls import ExactMarginalLogLikelihood

    model = SingleTaskGP(x, y)
    mll = ExactMarginalLogLikelihood(model.likelihood, model)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit_gpytorch_mll(mll)
    return model


def botorch_acquisition(name: str, model: Any, y: torch.Tensor, t: int, pool_size: int) -> Any:
    """The analytic acquisition function of ``name`` (:data:`BOTORCH_AGENTS`) on ``model``:
    UCB with ``β_t = srinivas_beta(t, pool_size)`` or log-EI over ``max y``."""
    from botorch.acquisition.analytic import LogExpectedImprovement, UpperConfidenceBound

    from delight_gym.agents.continuum import srinivas_beta

    if name == "botorch-ucb":
        return UpperConfidenceBound(model, beta=float(srinivas_beta(t, pool_size)))
    if name == "botorch-logei":
        return LogExpectedImprovement(model, best_f=y.max())
    raise ValueError(f"name must be one of {list(BOTORCH_AGENTS)}, got {name!r}")


def run_botorch(
    agent: str,
    dim: int,
    horizon: int,
    seeds: int,
    *,
    seed: int = 0,
    needle_width: float = GRID_NEEDLE_WIDTH,
    bump_width: float = GRID_BUMP_WIDTH,
    num_bumps: int = DEFAULT_NUM_BUMPS,
    noise: float = DEFAULT_NOISE,
    num_restarts: int = 10,
    raw_samples: int = 512,
    pool_size: int = 64,
) -> tuple[np.ndarray, np.ndarray, float]:
    """Per-round pseudo-regret and first action coordinates, each ``(seeds, horizon)``, of a
    BoTorch agent, and the seconds taken.

    Instance ``i`` is the :class:`~delight_gym.envs.continuum.ContinuumBanditEnv` the other
    agents play (seed ``seed + i``, widths scaled by ``√d``). ``num_restarts`` and
    ``raw_samples`` are ``optimize_acqf``'s; ``pool_size`` is the ``|D|`` of UCB's ``β_t``.
    """
    try:
        from botorch.optim import optimize_acqf
    except ImportError:  # pragma: no cover - the extra is installed where this runs
        raise ImportError(
            "the BoTorch baselines need BoTorch: pip install 'delight-gym[continuum]'"
        ) from None

    from delight_gym.envs.continuum import ContinuumBanditEnv

    check_choice(agent, list(BOTORCH_AGENTS), "agent")
    d = check_positive_int(dim, "dim")
    horizon = check_positive_int(horizon, "horizon")
    seeds = check_positive_int(seeds, "seeds")
    root = d**0.5
    bounds = torch.stack([torch.zeros(d), torch.ones(d)]).double()
    n_init = 2 * (d + 1)
    regret = np.zeros((seeds, horizon))
    first = np.zeros((seeds, horizon))
    start = time.perf_counter()
    for i in range(seeds):
        env = ContinuumBanditEnv(
            dim=d,
            num_bumps=num_bumps,
            bump_width=bump_width * root,
            needle_width=needle_width * root,
            noise=noise,
        )
        env.reset(seed=seed + i)
        rng = np.random.default_rng([seed + i, 49])
        torch.manual_seed(seed + i)
        xs: list[np.ndarray] = []
        ys: list[float] = []
        for t in range(horizon):
            if t < n_init:
                x = rng.random(d)
            else:
                tx = torch.as_tensor(np.array(xs), dtype=torch.float64)
                ty = torch.as_tensor(ys, dtype=torch.float64)[:, None]
                model = fit_gp(tx, ty)
                acq = botorch_acquisition(agent, model, ty, t + 1, pool_size)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    cand, _ = optimize_acqf(
                        acq, bounds, q=1, num_restarts=num_restarts, raw_samples=raw_samples
                    )
                x = cand[0].detach().numpy()
            x = np.clip(x, 0.0, 1.0).astype(np.float32)
            _, reward, _, _, info = env.step(x)
            xs.append(x.astype(np.float64))
            ys.append(float(reward))
            regret[i, t] = info["regret"]
            first[i, t] = x[0]
    return regret, first, time.perf_counter() - start
