"""The ``continuum`` family: continuum-armed bandits (actions in ``[0, 1]^d``), one posterior.

Every agent (:mod:`delight_gym.agents.continuum`) keeps the same random-Fourier-feature
posterior and scores the same candidate budget each round; ``delight`` is the greedy host with
candidate-set DE. The cell runs :func:`~delight_gym.experiments.continuum.run_continuum`.
"""

from __future__ import annotations

from typing import Any

from delight_gym._checks import check_positive_float, check_positive_int, check_would_fit
from delight_gym.experiments.families.base import (
    DELIGHT,
    EGREEDY,
    GREEDY,
    THOMPSON,
    UCB,
    UNIFORM,
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


#: Bytes per dimension of the smallest continuum run (one seed), a lower bound: the agents'
#: random-Fourier-feature frequencies (``num_features = 256`` rows) and a round's uniform
#: candidates (``num_candidates = 64``), float64: the defaults of
#: :class:`~delight_gym.agents.continuum.ContinuumAgent`, which the family's cell uses.
_CONTINUUM_MIN_BYTES_PER_DIM = 8 * (256 + 64)


def _check_continuum_dim(value: Any, name: str) -> int:
    """``--dim`` of ``continuum``: a positive count whose smallest run (one seed) fits in
    memory (:data:`_CONTINUUM_MIN_BYTES_PER_DIM` bytes per dimension)."""
    d = check_positive_int(value, name)
    check_would_fit(d * _CONTINUUM_MIN_BYTES_PER_DIM, f"{name}={d} (one seed)")
    return d


#: Continuum-armed bandits: a narrow needle among broad bumps on ``[0, 1]^d``.
CONTINUUM = Family(
    name="continuum",
    help="continuum-armed bandits on [0,1]^d: a narrow needle among broad bumps",
    cell=continuum_cell,
    agents=(DELIGHT, THOMPSON, UCB, EGREEDY, GREEDY, UNIFORM),
    instance=(
        Parameter(
            "dim", int, _check_continuum_dim, sweep=(1, 2, 5, 10), symbol="d", help="dimensions d"
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
