"""The ``linear`` family: linear-Gaussian bandits, φ(a) ~ N(0, I/D), θ* ~ N(0, I), noise σ.

Its run function is :func:`~delight_gym.experiments.linear.run_linear`; after a ``run`` its
report sets DE's selected-override rounds against the paper's budget.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from delight_gym._checks import check_positive_float, check_positive_int, check_would_fit
from delight_gym.experiments.families.base import (
    ARMS,
    BANDIT_AGENTS,
    Family,
    Parameter,
    SweepOutcome,
)

__all__ = ["LINEAR", "linear_budget_report"]


#: Bytes per arm of the smallest linear run (one seed, ``dim = 1``): the env's arrays
#: (:class:`~delight_gym.envs.linear.LinearBanditVectorEnv` counts ``20 D + 16 + 10 D``).
_LINEAR_MIN_BYTES_PER_ARM = 46


def _check_linear_arms(value: Any, name: str) -> int:
    """``--arms`` of ``linear``: a positive count whose smallest run fits in memory."""
    k = check_positive_int(value, name)
    check_would_fit(k * _LINEAR_MIN_BYTES_PER_ARM, f"{name}={k} (one seed, dim=1)")
    return k


def _check_linear_dim(value: Any, name: str) -> int:
    """``--dim`` of ``linear``: a positive count whose ``D x D`` posterior fits in memory."""
    d = check_positive_int(value, name)
    check_would_fit(8 * d * d, f"{name}={d} (one seed's D x D float64 posterior)")
    return d


def linear_budget_report(result: SweepOutcome) -> list[str]:
    """DE's selected-override rounds (max over seeds) of each linear setting against the
    paper's budget :func:`~delight_gym.theory.budget.linear_override_budget`."""
    from delight_gym.theory.budget import linear_override_budget

    lines = []
    for row in result.rows:
        if row["agent"] != "delight":
            continue
        s = row["setting"]
        bound = linear_override_budget(
            s["dim"],
            result.spec.horizon,
            s["noise"],
            gate_price=s["gate_price"],
            surprisal_cap=s["surprisal_cap"],
        )
        most = int(np.max(row["overrides"]))
        verdict = "OK" if most <= bound else "EXCEEDED"
        lines.append(
            f"  K={s['arms']} D={s['dim']} σ={s['noise']:g}: {most} <= {bound:.1f} {verdict}"
        )
    if lines:
        lines.insert(0, "selected-override rounds of DE (max over seeds) vs the paper's budget:")
    return lines


#: Linear-Gaussian bandits: φ(a) ~ N(0, I/D), θ* ~ N(0, I), reward noise σ.
LINEAR = Family(
    name="linear",
    help="linear-Gaussian bandits: φ(a) ~ N(0, I/D), θ* ~ N(0, I), noise σ",
    cell="delight_gym.experiments.linear:run_linear",
    agents=BANDIT_AGENTS,
    instance=(
        dataclasses.replace(ARMS, check=_check_linear_arms, sweep=(100,)),
        Parameter("dim", int, _check_linear_dim, sweep=(10, 30), symbol="D", help="dimensions D"),
        Parameter("noise", float, check_positive_float, sweep=(1.0,), symbol="σ", help="noise σ"),
    ),
    default_agents=("delight", "thompson", "egreedy", "greedy"),
    title="Linear bandits",
    report=linear_budget_report,
)
