"""Experiment families: the records agree with the agents, the command line is built from them,
and a new family is one record plus its cell function plus one registration line."""

from __future__ import annotations

import math
import pickle
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from delight_gym import cli
from delight_gym._checks import check_positive_int
from delight_gym.agents.bandits import make_bandit_agent
from delight_gym.agents.continuum import ContinuumAgent
from delight_gym.agents.linear import make_linear_agent
from delight_gym.agents.mdp import make_mdp_agent
from delight_gym.experiments import families
from delight_gym.experiments.families import (
    DE_PARAMETERS,
    FAMILIES,
    Agent,
    Family,
    Parameter,
    SettingError,
)
from delight_gym.experiments.specs import ExperimentSpec, setting_grid, tune_settings


#: How to build each family's agents (the smallest instance), by family name.
def _bsuite_agent(name: str, **kw: object) -> object:
    """What holds a ``deepsea-bsuite`` agent's settings once it is built."""
    if name in ("psrl", "delight"):  # the tabular reference rows
        return make_mdp_agent(name, 1, 4, 2, 2, **kw)
    if name == "delight_dqn":
        import gymnasium as gym

        from delight_gym.sb3 import DelightDQN

        return DelightDQN("MlpPolicy", gym.make("DeepSea-v0", size=4), delight=kw).delight
    if name.startswith("boot_dqn_de"):
        from delight_gym import DelightOptions

        return DelightOptions(**kw)  # type: ignore[arg-type]
    if name == "boot_dqn":  # the bsuite families' boot_dqn takes ``device`` (a batched run)
        device = kw.pop("device", "none")
        assert not kw, f"{name} takes only device"
        return SimpleNamespace(device=device)
    assert not kw, f"{name} takes no tunable parameters"
    return None


def _contextual_agent(name: str, **kw: object) -> object:
    """A ``wheel`` / ``neural-width`` agent by name (``delight``: ``delight-linfull``)."""
    from delight_gym.agents.contextual import make_contextual_agent

    agent = "delight-linfull" if name == "delight" else name
    return make_contextual_agent(agent, 1, 3, 2, per_arm=True, seed=0, **kw)


def _control_agent(task):
    def build(name, **kw):
        import gymnasium as gym

        from delight_gym.experiments.control import TASKS, make_agent

        return make_agent(name, gym.make(TASKS[task]["env"]), 0, **kw)

    return build


BUILD = {
    "bernoulli": lambda name, **kw: make_bandit_agent(name, 1, 2, **kw),
    "linear": lambda name, **kw: make_linear_agent(name, 1, 2, 2, noise=1.0, **kw),
    "deepsea": lambda name, **kw: make_mdp_agent(name, 1, 4, 2, 2, **kw),
    "deepsea-bsuite": _bsuite_agent,
    "bsuite-deep-sea": _bsuite_agent,
    "bsuite-deep-sea-stochastic": _bsuite_agent,
    "wheel": _contextual_agent,
    "neural-width": _contextual_agent,
    "continuum": lambda name, **kw: ContinuumAgent(name, 1, 1, seed=0, **kw),
    "continuum-botorch": lambda name, **kw: SimpleNamespace(name=name, **kw),
    "mountain-car-continuous": _control_agent("mountain-car-continuous"),
    "pendulum": _control_agent("pendulum"),
    "mountain-car": _control_agent("mountain-car"),
}
#: The families with the paper's ``delight`` agent.
DELIGHT_FAMILIES = [n for n, f in FAMILIES.items() if "delight" in f.agent_names]


#: A valid value other than the agent's default, for each parameter that takes a name.
OTHER_CHOICE = {"nl_settings": "paper", "device": "cpu"}
#: A family's default that differs from the agent's own on purpose: the wheel runs NeuralLinear
#: with the Showdown paper's settings, which reproduce its published wheel results.
FAMILY_DEFAULTS = {("wheel", "nl_settings"): "paper"}


def test_every_family_is_registered_and_its_run_function_pickles_by_reference():
    assert set(FAMILIES) == set(BUILD)
    for name, family in FAMILIES.items():
        assert family.name == name
        fn = family.cell_function()
        assert callable(fn)
        assert pickle.loads(pickle.dumps(fn)) is fn
        assert set(family.default_agents) <= set(family.agent_names)


@pytest.mark.parametrize("family", list(FAMILIES))
def test_agent_records_name_the_agents_parameters_with_their_defaults(family):
    """Every parameter an agent's record lists is a keyword of that agent, with the record's
    default as the agent's own default (read back from the constructed agent)."""
    for agent in FAMILIES[family].agents:
        built = BUILD[family](agent.name)
        for p in agent.parameters:
            if (family, p.name) in FAMILY_DEFAULTS:
                assert p.default == FAMILY_DEFAULTS[family, p.name] != getattr(built, p.name)
            else:
                assert getattr(built, p.name) == p.default, (agent.name, p.name)
            other = OTHER_CHOICE[p.name] if p.kind is str else 2 * p.default
            custom = BUILD[family](agent.name, **{p.name: other})
            assert getattr(custom, p.name) == other


@pytest.mark.parametrize("family", DELIGHT_FAMILIES)
@pytest.mark.parametrize("parameter", DE_PARAMETERS, ids=lambda p: p.name)
@pytest.mark.parametrize("value", [-1.0, 0.0, 1e-12, 0.5, 100.0, math.inf, math.nan, True, "1"])
def test_a_parameter_refuses_exactly_what_the_agents_refuse(family, parameter, value):
    """``Parameter.check`` is the agents' check: the same values pass, the same fail, with the
    same error type and message."""
    try:
        BUILD[family]("delight", **{parameter.name: value})
        expected = None
    except (TypeError, ValueError) as exc:
        expected = (type(exc), str(exc))
    try:
        checked = parameter.check(value, parameter.name)
        got = None
    except (TypeError, ValueError) as exc:
        got = (type(exc), str(exc))
    assert got == expected
    if got is None:
        assert isinstance(checked, float)


def test_check_setting_names_the_key_and_normalises_values():
    linear = FAMILIES["linear"]
    assert linear.check_setting({"arms": 3, "dim": 2, "noise": 1, "gate_price": 1}) == {
        "arms": 3,
        "dim": 2,
        "noise": 1.0,
        "gate_price": 1.0,
    }
    with pytest.raises(SettingError, match="noise must be finite") as exc:
        linear.check_setting({"arms": 3, "dim": 2, "noise": math.inf})
    assert exc.value.key == "noise"
    with pytest.raises(ValueError, match="every setting needs"):
        linear.check_setting({"arms": 3, "noise": 1.0})
    with pytest.raises(ValueError, match="unknown key"):
        linear.check_setting({"arms": 3, "dim": 2, "noise": 1.0, "size": 4})
    with pytest.raises(TypeError, match="arms must be an integer"):
        linear.check_setting({"arms": 2.5, "dim": 2, "noise": 1.0})


@pytest.mark.parametrize("name", list(FAMILIES))
def test_the_run_command_is_built_from_the_record(name, capsys):
    family = FAMILIES[name]
    parser = cli.build_parser()
    args = parser.parse_args(["run", name])
    assert args.agents == list(family.default_agents)
    assert (args.horizon, args.seeds, args.batch_size) == (
        family.horizon,
        family.seeds,
        family.batch_size,
    )
    for p in family.instance:
        assert getattr(args, p.name) == list(p.sweep)
    for p in family.agent_parameters:
        assert getattr(args, p.name) == p.default
    assert str(args.out) == f"results/{name}"
    with pytest.raises(SystemExit):
        parser.parse_args(["run", name, "--agents", "nobody"])
    assert f"choose from {','.join(family.agent_names)}" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        parser.parse_args(["run", name, "-h"])
    help_text = capsys.readouterr().out
    options = [p.option for p in (*family.instance, *family.agent_parameters)]
    for option in (*options, family.horizon_option, "--seeds", "--batch-size", "--out"):
        assert option in help_text


def test_setting_grid_and_tune_settings():
    assert setting_grid(arms=(1, 2, 1), dim=(3,)) == ({"arms": 1, "dim": 3}, {"arms": 2, "dim": 3})
    tuned = tune_settings([{"arms": 5}], (10, 100), (0.1, 1.0))
    assert tuned == (
        {"arms": 5, "half_life": 10.0, "gate_price": 0.1},
        {"arms": 5, "half_life": 100.0, "gate_price": 0.1},
        {"arms": 5, "half_life": 100.0, "gate_price": 1.0},  # (100, 0.1) is listed once
    )


# -- a new family: one record, its cell function, one registration line ---------------------


@dataclass
class ToyResult:
    cumulative: np.ndarray
    seconds: float
    overrides: np.ndarray


def toy_cell(agent, horizon, seeds, *, seed, width, **params):
    """Cumulative regret ``(seed + i) · width · scale · t / T`` for instance ``i``
    (``scale`` 1 unless the agent takes it)."""
    final = (seed + np.arange(seeds)) * width * params.get("scale", 1.0)
    t = np.arange(1, horizon + 1) / horizon
    return ToyResult(final[:, None] * t[None, :], 0.0, np.arange(seeds))


SCALE = Parameter("scale", float, lambda v, n: float(check_positive_int(int(v), n)), default=1.0)
TOY = Family(
    name="toy",
    help="a toy family",
    cell=toy_cell,
    agents=(Agent("plain"), Agent("scaled", parameters=(SCALE,))),
    instance=(Parameter("width", int, check_positive_int, sweep=(1, 2), symbol="W"),),
    default_agents=("plain", "scaled"),
    horizon=4,
    seeds=3,
    batch_size=2,
)


def test_a_new_family_runs_from_the_command_line_once_registered(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(FAMILIES, "toy", TOY)  # the registration line
    out = tmp_path / "toy"
    argv = ["run", "toy", "--width", "1,3", "--scale", "2", "--out", str(out)]
    assert cli.main([*argv, "--jobs", "1", "--no-progress"]) == 0
    summary = pd.read_csv(out / "summary.csv")
    assert list(summary.columns[:3]) == ["experiment", "agent", "width"]
    env_seeds = np.arange(3.0)  # seeds 0, 1, 2 in batches of 2 and 1
    for row in summary.itertuples():
        scale = 2.0 if row.agent == "scaled" else 1.0
        expected = env_seeds * row.width * scale
        assert row.regret_mean == pytest.approx(expected.mean())
        assert row.regret_se == pytest.approx(expected.std(ddof=1) / math.sqrt(3))
    assert len(summary) == 4 and (out / "regret_curves.png").exists()
    assert "cells: 8 computed" in capsys.readouterr().out
    # The record's check guards the new parameter at the boundary, under its option's name.
    with pytest.raises(SystemExit):
        cli.main(["run", "toy", "--scale", "0", "--out", str(tmp_path / "bad")])
    assert "--scale: scale must be >= 1, got 0" in capsys.readouterr().err


def test_a_spec_of_a_new_family_takes_its_defaults():
    spec = ExperimentSpec.for_family(TOY, "toy-sweep", setting_grid(width=(2,)))
    assert (spec.agents, spec.setting_columns, spec.horizon, spec.seeds, spec.batch_size) == (
        ("plain", "scaled"),
        ("width",),
        4,
        3,
        2,
    )
    assert [c.label() for c in spec.cells()][:2] == ["plain W=2 seeds 0-1", "plain W=2 seeds 2-2"]
    assert spec.groups()[1] == ("scaled", {"width": 2, "scale": 1.0})
    with pytest.raises(ValueError, match="unknown"):
        spec.replace(agents=("delight",))


def test_cells_are_keyed_by_the_run_functions_path_and_the_fixed_keywords():
    """A cell's key names its run function ``module:function`` and the family's fixed
    keywords: two families on one run function (the bsuite ones) never share cells."""
    keys = {}
    for name, family in FAMILIES.items():
        setting = {p.name: p.sweep[0] for p in family.instance}
        cell = ExperimentSpec.for_family(family, name, [setting]).cells()[0]
        assert cell.key_spec()["cell"] == family.cell_path
        assert cell.key_spec().get("fixed", {}) == dict(family.fixed)
        keys[name] = cell.key
    assert len(set(keys.values())) == len(keys)
    toy = ExperimentSpec.for_family(TOY, "toy", [{"width": 1}]).cells()[0]
    assert toy.key_spec()["cell"] == f"{__name__}:toy_cell"


def test_the_families_import_no_runner_and_no_circle():
    """Counting every import (``TYPE_CHECKING`` and function-local ones too), no module of
    ``delight_gym.experiments`` is on an import circle."""
    import ast
    from pathlib import Path

    import delight_gym

    root = Path(delight_gym.__file__).parent
    mods = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        mods[".".join(parts)] = path
    graph: dict[str, set[str]] = {}
    for name, path in mods.items():
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package[: len(package) - (node.level - 1)]
                    base = ".".join([*up, *([node.module] if node.module else [])])
                targets = [
                    f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names
                ]
            else:
                continue
            found |= {t for t in targets if t in mods and t != name}
        graph[name] = found

    def reach(start: str) -> set[str]:
        seen, todo = set(), [start]
        while todo:
            for nxt in graph[todo.pop()]:
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return seen

    circles = [m for m in graph if m.startswith("delight_gym.experiments") and m in reach(m)]
    assert circles == []
    runner = "delight_gym.experiments.runner"
    assert not any(runner in reach(m) for m in graph if ".experiments.families" in m)


# -- override counts: one name in every family's cells -----------------------------------------


@pytest.mark.parametrize(
    ("family", "setting", "decisions"),
    [
        ("bernoulli", {"arms": 20}, 40),
        ("linear", {"arms": 20, "dim": 3, "noise": 1.0}, 40),
        # DE on DeepSea with the frozen Boltzmann host almost never finds a gated action (its
        # EI is 0 at h = 0 and for every action below the plan's value): no lower bound here.
        ("deepsea", {"size": 4}, 0),
    ],
)
def test_every_cell_reports_overrides_per_seed(family, setting, decisions):
    """``overrides``: DE's gated overrides per seed, at most one per decision (none with
    ``λ = inf``, whose gate is always empty); zeros for agents without an override."""
    cell = FAMILIES[family].cell_function()
    run = {"horizon": 40, "seeds": 3, "seed": 0, **setting}
    de = cell(agent="delight", **run, gate_price=0.0)
    shut = cell(agent="delight", **run, gate_price=math.inf)
    other = cell(agent=FAMILIES[family].agent_names[1], **run)
    assert np.asarray(de.overrides).shape == (3,)
    if decisions:
        assert 0 < np.asarray(de.overrides).sum()
        assert np.all(np.asarray(de.overrides) <= decisions)
    np.testing.assert_array_equal(shut.overrides, 0)
    np.testing.assert_array_equal(other.overrides, 0)


def test_families_module_imports_neither_torch_nor_matplotlib():
    import subprocess
    import sys

    code = (
        "import sys, delight_gym.experiments.families, delight_gym.cli\n"
        "print('torch' in sys.modules, 'matplotlib' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
    assert families.__name__ == "delight_gym.experiments.families"
