"""What every experiment family is made of: :class:`Family`, :class:`Agent`, :class:`Parameter`,
and the records several families share (:data:`DE_PARAMETERS`, :data:`ARMS`, the paper's
agents). A :class:`Parameter`'s ``check`` is the one the agents' constructors call, so whatever
``delight-gym run`` accepts the agents accept. Nothing here imports the runner: a family names
its run function as ``"module:function"`` and its report reads a :class:`SweepOutcome`.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from delight_gym._checks import check_nonnegative_float, check_positive_float, check_positive_int
from delight_gym.de.rule import DEFAULT_GATE_PRICE, DEFAULT_HALF_LIFE, DEFAULT_SURPRISAL_CAP

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "DE_PARAMETERS",
    "Agent",
    "Family",
    "Parameter",
    "SettingError",
    "SweepOutcome",
    "lazy_check",
]


class SettingError(ValueError):
    """A setting value its family refuses; ``key`` is the setting's name (``gate_price``)."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key


@dataclass(frozen=True)
class Parameter:
    """One number of an experiment's setting.

    Attributes
    ----------
    name, kind
        the keyword of the run function and the agents (``gate_price``); ``int``, ``float``
        or ``str`` (how the command line parses it).
    check
        ``check(value, name) -> value as kind``, the check the agents make on the same
        argument; raises ``ValueError``/``TypeError`` naming ``name``.
    default, sweep
        agent parameters: the value of a setting that leaves it out (the CLI's default);
        instance parameters: the values ``delight-gym run`` sweeps by default.
    symbol, help
        short name in labels (``λ``, ``K``; default ``name``); the command line's help text.
    """

    name: str
    kind: type[int] | type[float] | type[str]
    check: Callable[[Any, str], Any]
    default: float | str | None = None
    sweep: tuple[float | str, ...] = ()
    symbol: str = ""
    help: str = ""

    @property
    def option(self) -> str:
        """The command-line option, ``--gate-price`` for ``gate_price``."""
        return "--" + self.name.replace("_", "-")

    @property
    def short(self) -> str:
        """``symbol`` or, if empty, ``name``."""
        return self.symbol or self.name

    def format(self, value: Any) -> str:
        """``symbol=value`` for labels: ints and strings as they are, floats in ``%g``."""
        exact = isinstance(value, (int, np.integer, str))
        shown = str(value) if exact else f"{float(value):g}"
        return f"{self.short}={shown}"


#: ``M`` of ``ε_t = M/(M + t)``: positive and finite, as the agents.
HALF_LIFE = Parameter(
    "half_life",
    float,
    check_positive_float,
    default=DEFAULT_HALF_LIFE,
    symbol="M",
    help="M, the half-life of the override schedule ε_t = M/(M+t) (default %(default)s)",
)
#: ``λ``: non-negative, ``inf`` allowed (the gate is then always empty), as the agents.
GATE_PRICE = Parameter(
    "gate_price",
    float,
    functools.partial(check_nonnegative_float, allow_inf=True),
    default=DEFAULT_GATE_PRICE,
    symbol="λ",
    help="λ, the gate price (default %(default)s; inf: never override)",
)
#: ``L``: positive and finite, as the agents.
SURPRISAL_CAP = Parameter(
    "surprisal_cap",
    float,
    check_positive_float,
    default=DEFAULT_SURPRISAL_CAP,
    symbol="L",
    help="L, the surprisal cap (default %(default)s)",
)
#: The DE rule's three settings (``M``, ``λ``, ``L``), declared once for every family.
DE_PARAMETERS = (HALF_LIFE, GATE_PRICE, SURPRISAL_CAP)


@dataclass(frozen=True)
class Agent:
    """An agent of a family, as the sweeps and the figures see it.

    Attributes
    ----------
    name
        the name the family's run function (and ``--agents``) takes.
    label, color, linestyle
        legend label (default ``name``), line colour (default matplotlib's cycle), style.
    parameters
        the tunable settings the agent takes (its constructor's keywords).
    """

    name: str
    label: str = ""
    color: str | None = None
    linestyle: str = "-"
    parameters: tuple[Parameter, ...] = ()


DELIGHT = Agent("delight", "DE (delight-gated)", "#d62728", parameters=DE_PARAMETERS)
THOMPSON = Agent("thompson", "Thompson sampling", "#1f77b4")
EGREEDY = Agent("egreedy", "annealed ε-greedy", "#2ca02c", parameters=(HALF_LIFE,))
# The greedy ablation is dashed, so that an agent whose curve coincides with its host's (DE on
# DeepSea) stays visible under it.
GREEDY = Agent("greedy", "greedy (host only)", "#7f7f7f", linestyle="--")
UCB = Agent("ucb", "UCB1", "#9467bd")
PSRL = Agent("psrl", "PSRL", "#ff7f0e")
UNIFORM = Agent("uniform", "uniform play", "#000000", linestyle=":")


class _SweepShape(Protocol):
    @property
    def family(self) -> Family: ...
    @property
    def horizon(self) -> int: ...
    @property
    def setting_columns(self) -> tuple[str, ...]: ...


class SweepOutcome(Protocol):
    """What a family's report reads of a finished sweep (an ``ExperimentResult``)."""

    @property
    def spec(self) -> _SweepShape: ...
    @property
    def summary(self) -> pd.DataFrame: ...
    @property
    def rows(self) -> list[dict[str, Any]]: ...


def resolve_function(path: str) -> Callable[..., Any]:
    """The function named ``"package.module:function"`` (imported now)."""
    module, _, name = path.partition(":")
    fn = getattr(importlib.import_module(module), name)
    if not callable(fn):
        raise TypeError(f"{path} is not a function")
    return fn


def _check_by_path(path: str, value: Any, name: str) -> Any:
    return resolve_function(path)(value, name)


def lazy_check(path: str) -> Callable[[Any, str], Any]:
    """A :attr:`Parameter.check` that imports the check ``"module:function"`` when a value is
    checked (so that importing a family imports neither torch nor the environments); a
    ``functools.partial``, so that a family pickles (the figure process gets it)."""
    return functools.partial(_check_by_path, path)


@dataclass(frozen=True)
class Family:
    """One kind of experiment: its run function, agents, parameters and command-line defaults.

    Attributes
    ----------
    name, help
        ``delight-gym run NAME`` and the default experiment name; one line for the command line.
    cell
        the run function or its ``"package.module:function"`` (imported when a cell runs, so
        that importing a family imports neither torch nor the agents), called with the
        keywords ``agent, horizon, seeds, seed``, the cell's setting and ``fixed``; it returns
        ``cumulative`` ``(seeds, horizon)``, ``seconds`` and optionally ``overrides`` and the
        columns of :data:`~delight_gym.experiments.results.OPTIONAL_PER_SEED`.
    agents, instance, default_agents
        the agents the run function runs; the setting keys every agent gets (``arms``), in
        order; what ``run`` runs without ``--agents``.
    horizon, horizon_option
        default horizon (rounds or episodes) and its option (``--horizon``, ``--episodes``).
    time_label, title
        what a time step is, for the curves' axis (``t``, ``episode``); the ``run`` figure's title.
    seeds, batch_size
        default number of seeds, and of seeds per cell.
    report, fixed
        optional ``report(result) -> lines`` printed after a ``run``; keywords the run
        function always gets in this family (part of each cell's key).
    metric, metric_label
        the curve's name in the tables (``regret``: ``regret_mean``, ``regret_se``), its axis.
    """

    name: str
    help: str
    cell: Callable[..., Any] | str
    agents: tuple[Agent, ...]
    instance: tuple[Parameter, ...]
    default_agents: tuple[str, ...]
    horizon: int = 1000
    horizon_option: str = "--horizon"
    time_label: str = "t"
    seeds: int = 100
    batch_size: int = 25
    title: str = ""
    report: Callable[[SweepOutcome], list[str]] | None = None
    fixed: Mapping[str, Any] = field(default_factory=dict)
    metric: str = "regret"
    metric_label: str = "cumulative regret"
    _parameters: dict[str, Parameter] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if isinstance(self.cell, str):
            if self.cell.count(":") != 1:
                raise ValueError(f"cell must be 'package.module:function', got {self.cell!r}")
        elif not callable(self.cell):
            raise TypeError(f"cell must be a function or its path, got {self.cell!r}")
        names = [a.name for a in self.agents]
        if not names or len(set(names)) != len(names):
            raise ValueError(f"agents must be non-empty and distinct, got {names}")
        unknown = [a for a in self.default_agents if a not in names]
        if unknown:
            raise ValueError(f"default_agents: unknown {unknown}; choose from {names}")
        params: dict[str, Parameter] = {}
        for p in (*self.instance, *(p for a in self.agents for p in a.parameters)):
            if params.setdefault(p.name, p) != p:
                raise ValueError(f"two different parameters are named {p.name!r}")
        object.__setattr__(self, "_parameters", params)

    @property
    def cell_path(self) -> str:
        """``package.module:function`` of the run function (part of every cell's key)."""
        if isinstance(self.cell, str):
            return self.cell
        return f"{self.cell.__module__}:{self.cell.__qualname__}"

    def cell_function(self) -> Callable[..., Any]:
        """The run function (imported now if the record names it by path)."""
        return resolve_function(self.cell) if isinstance(self.cell, str) else self.cell

    @property
    def agent_names(self) -> tuple[str, ...]:
        """The agents' names, in record order."""
        return tuple(a.name for a in self.agents)

    @property
    def instance_keys(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.instance)

    @property
    def parameters(self) -> Mapping[str, Parameter]:
        """Every setting key of the family: instance parameters, then the agents' parameters."""
        return self._parameters

    @property
    def agent_parameters(self) -> tuple[Parameter, ...]:
        """The agents' tunable parameters (each once), in record order."""
        instance = set(self.instance_keys)
        return tuple(p for name, p in self._parameters.items() if name not in instance)

    def agent(self, name: str) -> Agent:
        """The agent record called ``name``."""
        for a in self.agents:
            if a.name == name:
                return a
        raise ValueError(f"agents: unknown {name!r}; choose from {list(self.agent_names)}")

    def check_setting(self, setting: Mapping[str, Any]) -> dict[str, Any]:
        """A setting checked (every instance key present, every value valid), each value as
        its parameter's ``kind``.

        Raises
        ------
        SettingError
            a value its parameter refuses (the check's message, naming the key); a
            ``ValueError`` for an unknown or missing key, a ``TypeError`` for a wrong kind.
        """
        bad = sorted(set(setting) - set(self._parameters))
        if bad:
            raise ValueError(
                f"settings: unknown key(s) {bad} for the {self.name!r} family; choose from "
                f"{sorted(self._parameters)}"
            )
        missing = [k for k in self.instance_keys if k not in setting]
        if missing:
            raise ValueError(f"settings: every setting needs {missing}, got {dict(setting)}")
        out: dict[str, Any] = {}
        for key, value in setting.items():
            try:
                out[key] = self._parameters[key].check(value, key)
            except ValueError as exc:
                raise SettingError(key, str(exc)) from None
        return out

    def restrict(self, agent: str, setting: Mapping[str, Any]) -> dict[str, Any]:
        """The run-function keywords of a checked ``setting`` for ``agent``: the instance keys,
        then the agent's parameters with defaults filled in (so a cell's key names them all)."""
        out = {k: setting[k] for k in self.instance_keys}
        for p in self.agent(agent).parameters:
            out[p.name] = setting.get(p.name, p.default)
        return out


#: ``K``, the number of arms: a positive integer (the bandit families' instance key).
ARMS = Parameter(
    "arms", int, check_positive_int, sweep=(10, 100, 1000), symbol="K", help="numbers of arms K"
)
#: The paper's bandit agents (the ``bernoulli`` and ``linear`` families').
BANDIT_AGENTS = (DELIGHT, THOMPSON, EGREEDY, GREEDY, UCB)
