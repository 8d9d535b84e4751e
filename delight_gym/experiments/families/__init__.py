"""Experiment families: one record per kind of experiment (bsuite's ``experiments/<name>/``).

A :class:`Family` (:mod:`.base`) says everything the package needs to run, sweep and draw one
kind of experiment: its cell function, its agents and the parameters they take, its instance
parameters and the command line's defaults. Each family's module holds its record, its agents
and its cell function: :mod:`.bernoulli`, :mod:`.linear`, :mod:`.deep_sea`,
:mod:`.deepsea_bsuite` (one run: :mod:`.deepsea_bsuite_run`), :mod:`.contextual` (``wheel``,
``neural-width``) and :mod:`.continuum`. The command line, the figure specs, the runner and the
figures all read :data:`FAMILIES`; importing it imports neither torch nor the environments'
agents. Validation, override counts and how to add a family: the documentation's "Results
files, resume, Ray" page.
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
from delight_gym.experiments.families.bernoulli import BERNOULLI, bernoulli_cell
from delight_gym.experiments.families.contextual import (
    NEURAL_WIDTH,
    WHEEL,
    neural_cell,
    uniform_relative_report,
    wheel_cell,
)
from delight_gym.experiments.families.continuum import CONTINUUM, continuum_cell
from delight_gym.experiments.families.deep_sea import DEEP_SEA, DeepSeaCellResult, deep_sea_cell
from delight_gym.experiments.families.deepsea_bsuite import (
    BSUITE_DEEP_SEA,
    BSUITE_DEEP_SEA_STOCHASTIC,
    BSUITE_REPLAY_SIZE,
    BSUITE_SIZES,
    DEEP_SEA_BSUITE,
    BsuiteCellResult,
    bsuite_deep_sea_cell,
    bsuite_deep_sea_stochastic_cell,
    bsuite_score_report,
    check_bsuite_size,
    deep_sea_bsuite_cell,
)
from delight_gym.experiments.families.linear import LINEAR, linear_budget_report, linear_cell

__all__ = [
    "BERNOULLI",
    "BSUITE_DEEP_SEA",
    "BSUITE_DEEP_SEA_STOCHASTIC",
    "BSUITE_REPLAY_SIZE",
    "BSUITE_SIZES",
    "CONTINUUM",
    "DEEP_SEA",
    "DEEP_SEA_BSUITE",
    "DE_PARAMETERS",
    "FAMILIES",
    "GATE_PRICE",
    "HALF_LIFE",
    "LINEAR",
    "NEURAL_WIDTH",
    "SURPRISAL_CAP",
    "WHEEL",
    "Agent",
    "BsuiteCellResult",
    "DeepSeaCellResult",
    "Family",
    "Parameter",
    "SettingError",
    "bernoulli_cell",
    "bsuite_deep_sea_cell",
    "bsuite_deep_sea_stochastic_cell",
    "bsuite_score_report",
    "check_bsuite_size",
    "continuum_cell",
    "deep_sea_bsuite_cell",
    "deep_sea_cell",
    "linear_budget_report",
    "linear_cell",
    "neural_cell",
    "uniform_relative_report",
    "wheel_cell",
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
    )
}
