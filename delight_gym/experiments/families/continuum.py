"""The ``continuum`` family: continuum-armed bandits (actions in ``[0, 1]^d``), one posterior.

Every agent (:mod:`delight_gym.agents.continuum`) keeps the same random-Fourier-feature
posterior and scores the same pool of 64 points each round (uniform points, local steps around
the incumbent, posterior argmaxes); ``delight`` is the greedy host with candidate-set DE and
``ucb`` is GP-UCB with Srinivas et al.'s ``β_t``. Widths are given at ``d = 1`` and scaled by
``√d``. The run function is :func:`~delight_gym.experiments.continuum.run_continuum`.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from delight_gym._checks import check_positive_float, check_positive_int, check_would_fit
from delight_gym.experiments.families.base import (
    DELIGHT,
    EGREEDY,
    GREEDY,
    THOMPSON,
    UNIFORM,
    Agent,
    Family,
    Parameter,
)

__all__ = ["CONTINUUM", "CONTINUUM_BOTORCH", "GP_UCB", "needle_report"]

#: GP-UCB with the ``β_t`` schedule of "Gaussian Process Optimization in the Bandit Setting".
GP_UCB = Agent("ucb", "GP-UCB (Srinivas β_t)", "#9467bd")
#: BoTorch as users run it: a fitted ``SingleTaskGP``, analytic UCB (the same ``β_t``) or log-EI.
BOTORCH_UCB = Agent("botorch-ucb", "BoTorch UCB", "#8c564b")
BOTORCH_LOGEI = Agent("botorch-logei", "BoTorch log-EI", "#e377c2")


def needle_report(result: Any) -> list[str]:
    """For each (agent, setting): the seeds that ended in the needle's basin (mean regret of
    the last tenth of rounds below 0.4), from the rows' cumulative regret."""
    import numpy as np

    from delight_gym.experiments.continuum import needle_found

    lines = ["seeds that ended in the needle's basin (last 10% of rounds, regret < 0.4):"]
    columns = list(result.spec.setting_columns)
    for row in result.rows:
        cumulative = np.asarray(row["cumulative"])
        regret = np.diff(cumulative, axis=1, prepend=0.0)
        found = needle_found(regret)
        setting = " ".join(f"{c}={row[c]}" for c in columns)
        lines.append(f"  {setting} {row['agent']}: {int(found.sum())}/{found.size}")
    return lines


#: Bytes per dimension of the smallest continuum run (one seed), a lower bound: the default
#: ContinuumAgent's 256 random-Fourier-feature rows and 64-point pool, float64.
_CONTINUUM_MIN_BYTES_PER_DIM = 8 * (256 + 64)


def _check_continuum_dim(value: Any, name: str) -> int:
    """``--dim`` of ``continuum``: a positive count whose smallest run fits in memory."""
    d = check_positive_int(value, name)
    check_would_fit(d * _CONTINUUM_MIN_BYTES_PER_DIM, f"{name}={d} (one seed)")
    return d


#: Continuum-armed bandits: a narrow needle among broad bumps on ``[0, 1]^d``, widths ∝ √d.
CONTINUUM = Family(
    name="continuum",
    help="continuum-armed bandits on [0,1]^d: a needle among broad bumps, widths scaled by √d",
    cell="delight_gym.experiments.continuum:run_continuum",
    agents=(DELIGHT, THOMPSON, GP_UCB, EGREEDY, GREEDY, UNIFORM),
    instance=(
        Parameter(
            "dim",
            int,
            _check_continuum_dim,
            sweep=(1, 2, 5, 10, 20),
            symbol="d",
            help="dimensions d",
        ),
        Parameter(
            "needle_width",
            float,
            check_positive_float,
            sweep=(0.15,),
            symbol="w",
            help="width of the needle at d = 1 (times √d at dimension d; bumps 0.3·√d)",
        ),
    ),
    default_agents=("delight", "thompson", "ucb", "egreedy", "greedy", "uniform"),
    horizon=1500,
    seeds=20,
    batch_size=20,
    title="Continuum bandits (widths ∝ √d)",
    report=needle_report,
)


#: The BoTorch anchor (needs the ``continuum`` extra): the continuum grid at the scale a fitted
#: GP affords here, one seed per cell so that a stopped sweep keeps every finished seed.
CONTINUUM_BOTORCH = Family(
    name="continuum-botorch",
    help="the continuum grid against BoTorch (fitted SingleTaskGP, UCB and log-EI)",
    cell="delight_gym.experiments.continuum:run_continuum",
    agents=(BOTORCH_UCB, BOTORCH_LOGEI),
    instance=(
        dataclasses.replace(CONTINUUM.instance[0], sweep=(2, 5, 10)),
        CONTINUUM.instance[1],
    ),
    default_agents=("botorch-ucb", "botorch-logei"),
    horizon=200,
    seeds=10,
    batch_size=1,
    title="Continuum bandits against BoTorch (widths ∝ √d)",
)
