"""The ``continuum`` family: continuum-armed bandits (actions in ``[0, 1]^d``), one posterior.

Every agent (:mod:`delight_gym.agents.continuum`) keeps the same random-Fourier-feature
posterior and scores the same candidate budget each round; ``delight`` is the greedy host with
candidate-set DE. The cell runs :func:`~delight_gym.experiments.continuum.run_continuum`.
"""

from __future__ import annotations

from typing import Any

from delight_gym._checks import check_positive_float, check_positive_int
from delight_gym.experiments.families.base import (
    DELIGHT,
    EGREEDY,
    GREEDY,
    THOMPSON,
    UCB,
    Agent,
    Family,
    Parameter,
    one_torch_thread,
)

__all__ = ["CONTINUUM", "continuum_cell"]


def continuum_cell(
    agent: str,
    horizon: int,
    seeds: int,
    *,
    seed: int,
    dim: int,
    needle_width: float,
    **agent_kwargs: Any,
) -> Any:
    """Cell of the ``continuum`` family: :func:`~delight_gym.experiments.continuum.run_continuum`
    (a :class:`~delight_gym.experiments.bandit.BanditResult`); torch on one thread."""
    from delight_gym.experiments import continuum

    with one_torch_thread():
        return continuum.run_continuum(
            agent, dim, horizon, seeds, seed=seed, needle_width=needle_width, **agent_kwargs
        )


UNIFORM = Agent("uniform", "uniform play", "#000000", linestyle=":")

#: Continuum-armed bandits: a narrow needle among broad bumps on ``[0, 1]^d``.
CONTINUUM = Family(
    name="continuum",
    help="continuum-armed bandits on [0,1]^d: a narrow needle among broad bumps",
    cell=continuum_cell,
    agents=(DELIGHT, THOMPSON, UCB, EGREEDY, GREEDY, UNIFORM),
    instance=(
        Parameter(
            "dim", int, check_positive_int, sweep=(1, 2, 5, 10), symbol="d", help="dimensions d"
        ),
        Parameter(
            "needle_width",
            float,
            check_positive_float,
            sweep=(0.03, 0.1),
            symbol="w",
            help="widths of the needle",
        ),
    ),
    default_agents=("delight", "thompson", "ucb", "egreedy", "greedy", "uniform"),
    horizon=500,
    seeds=20,
    batch_size=20,
    title="Continuum bandits",
)
