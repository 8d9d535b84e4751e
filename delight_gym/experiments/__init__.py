"""The paper's experiments: family records, specs as data, the sweep runner, results store and
figures.

The names below are imported on first use (PEP 562), so that importing one module of this
package (the command line imports :mod:`.families`, :mod:`.specs` and :mod:`.results` for
``--help``; a pool worker imports :mod:`.runner` and the cell function's runner) does not
import all the others, with pandas, scipy and the agents."""

from __future__ import annotations

from typing import TYPE_CHECKING

from delight_gym._lazy_import import lazy_getattr

if TYPE_CHECKING:
    from delight_gym.experiments.bandit import BanditResult, run_bernoulli
    from delight_gym.experiments.families import FAMILIES, Family
    from delight_gym.experiments.runner import ExperimentResult, run_experiment
    from delight_gym.experiments.specs import FIGURES, ExperimentSpec

__all__ = [
    "FAMILIES",
    "FIGURES",
    "BanditResult",
    "ExperimentResult",
    "ExperimentSpec",
    "Family",
    "run_bernoulli",
    "run_experiment",
]

_MODULES = {
    "families": ("FAMILIES", "Family"),
    "specs": ("FIGURES", "ExperimentSpec"),
    "bandit": ("BanditResult", "run_bernoulli"),
    "runner": ("ExperimentResult", "run_experiment"),
}
__getattr__ = lazy_getattr(
    __name__, {name: f"{__name__}.{m}" for m, names in _MODULES.items() for name in names}
)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
