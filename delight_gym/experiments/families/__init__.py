"""Experiment families: one record per kind of experiment (bsuite's ``experiments/<name>/``).

A :class:`Family` (:mod:`.base`) holds what the package needs to run, sweep and draw one kind
of experiment: its run function (by path), agents, parameters and command-line defaults. Each
family's module holds its record and agents: :mod:`.bernoulli`, :mod:`.linear`,
:mod:`.deep_sea`, :mod:`.deepsea_bsuite`, :mod:`.contextual` (``wheel``, ``neural-width``),
:mod:`.continuum` and :mod:`.control` (``mountain-car-continuous``, ``pendulum``,
``mountain-car``). The command line, specs, runner and figures read :data:`FAMILIES`; importing
it imports neither torch nor the agents, nor the runner.
"""

from __future__ import annotations

from collections.abc import Mapping

from delight_gym.experiments.families.base import (
    DE_PARAMETERS,
    GATE_PRICE,
    HALF_LIFE,
    SURPRISAL_CAP,
    Agent,
    Family,
    Parameter,
    SettingError,
)
from delight_gym.experiments.families.bernoulli import BERNOULLI
from delight_gym.experiments.families.contextual import NEURAL_WIDTH, WHEEL, uniform_relative_report
from delight_gym.experiments.families.continuum import CONTINUUM, CONTINUUM_BOTORCH
from delight_gym.experiments.families.control import MOUNTAIN_CAR, MOUNTAIN_CAR_CONTINUOUS, PENDULUM
from delight_gym.experiments.families.deep_sea import DEEP_SEA
from delight_gym.experiments.families.deepsea_bsuite import (
    BSUITE_DEEP_SEA,
    BSUITE_DEEP_SEA_STOCHASTIC,
    BSUITE_REPLAY_SIZE,
    BSUITE_SIZES,
    DEEP_SEA_BSUITE,
    bsuite_score_report,
    check_bsuite_size,
)
from delight_gym.experiments.families.linear import LINEAR, linear_budget_report

__all__ = [
    "BERNOULLI",
    "BSUITE_DEEP_SEA",
    "BSUITE_DEEP_SEA_STOCHASTIC",
    "BSUITE_REPLAY_SIZE",
    "BSUITE_SIZES",
    "CONTINUUM",
    "CONTINUUM_BOTORCH",
    "DEEP_SEA",
    "DEEP_SEA_BSUITE",
    "DE_PARAMETERS",
    "FAMILIES",
    "GATE_PRICE",
    "HALF_LIFE",
    "LINEAR",
    "MOUNTAIN_CAR",
    "MOUNTAIN_CAR_CONTINUOUS",
    "NEURAL_WIDTH",
    "PENDULUM",
    "SURPRISAL_CAP",
    "WHEEL",
    "Agent",
    "Family",
    "Parameter",
    "SettingError",
    "bsuite_score_report",
    "check_bsuite_size",
    "linear_budget_report",
    "uniform_relative_report",
]

#: Every family, by name (``delight-gym run NAME``).
FAMILIES: Mapping[str, Family] = {
    f.name: f
    for f in (
        BERNOULLI,
        LINEAR,
        DEEP_SEA,
        DEEP_SEA_BSUITE,
        BSUITE_DEEP_SEA,
        BSUITE_DEEP_SEA_STOCHASTIC,
        WHEEL,
        NEURAL_WIDTH,
        CONTINUUM,
        CONTINUUM_BOTORCH,
        MOUNTAIN_CAR_CONTINUOUS,
        PENDULUM,
        MOUNTAIN_CAR,
    )
}
