"""The sweep runner: cells, batching, tables, resume after SIGKILL, backends and figures."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from delight_gym import cli, plotting
from delight_gym._checks import check_positive_float, check_positive_int
from delight_gym.experiments import bandit, figures
from delight_gym.experiments.families import FAMILIES, Agent, Family, Parameter
from delight_gym.experiments.runner import CellError, run_experiment
from delight_gym.experiments.specs import FIGURES, ExperimentSpec

ROOT = Path(__file__).resolve().parents[1]

# -- fake cell functions (module level: importable by worker processes) ---------------------


@dataclass
class FakeResult:
    cumulative: np.ndarray
    seconds: float
    overrides: np.ndarray


def seed_cell(agent, horizon, seeds, *, seed, arms, **params):
    """Final regret of instance ``i`` = its environment seed ``seed + i`` (+1000 for agent b),
    growing linearly in t; ``seconds`` = 0.5 per batch."""
    final = seed + np.arange(seeds) + (1000.0 if agent == "b" else 0.0) + 0 * arms
    cumulative = final[:, None] * np.arange(1, horizon + 1)[None, :] / horizon
    return FakeResult(cumulative, 0.5, np.full(seeds, params.get("half_life", -1.0)))


def logged_slow_cell(agent, horizon, seeds, *, seed, arms, **params):
    """Appends ``pid agent arms seed`` to $FAKE_CELL_LOG, sleeps a little ($FAKE_CELL_SLEEP
    seconds, default 0.2), computes for $FAKE_CELL_CPU CPU seconds (default 0), returns zeros."""
    with open(os.environ["FAKE_CELL_LOG"], "a") as fh:
        fh.write(f"{os.getpid()} {agent} {arms} {seed}\n")
    time.sleep(float(os.environ.get("FAKE_CELL_SLEEP", "0.2")))
    busy = time.process_time() + float(os.environ.get("FAKE_CELL_CPU", "0"))
    while time.process_time() < busy:
        pass
    return FakeResult(np.zeros((seeds, horizon)), 0.0, np.zeros(seeds))


def threads_cell(agent, horizon, seeds, *, seed, arms, **params):
    """Zeros; ``overrides`` = the torch threads the cell ran with."""
    import torch

    return FakeResult(np.zeros((seeds, horizon)), 0.0, np.full(seeds, torch.get_num_threads()))


@dataclass
class SuccessResult(FakeResult):
    first_success: np.ndarray


def success_cell(agent, horizon, seeds, *, seed, arms, **params):
    """As ``seed_cell``, plus first success at episode ``seed + i`` for even seeds, none for
    odd ones."""
    base = seed_cell(agent, horizon, seeds, seed=seed, arms=arms, **params)
    env_seeds = seed + np.arange(seeds)
    first = np.where(env_seeds % 2 == 0, env_seeds, 0)
    return SuccessResult(base.cumulative, base.seconds, base.overrides, first)


def failing_cell(agent, horizon, seeds, *, seed, arms, **params):
    if arms == 3:
        raise ValueError("boom at arms=3")
    return seed_cell(agent, horizon, seeds, seed=seed, arms=arms)


def fake_family(cell) -> Family:
    """Agents ``a`` (no parameters) and ``b`` (``half_life``, default 7), instance key ``arms``."""
    half_life = Parameter("half_life", float, check_positive_float, default=7.0, symbol="M")
    return Family(
        name="fake",
        help="a fake family",
        cell=cell,
        agents=(Agent("a"), Agent("b", parameters=(half_life,))),
        instance=(Parameter("arms", int, check_positive_int),),
        default_agents=("a", "b"),
    )


def fake_spec(cell, **changes) -> ExperimentSpec:
    spec = ExperimentSpec(
        name="fake",
        agents=("a", "b"),
        settings=({"arms": 2}, {"arms": 3}),
        setting_columns=("arms", "half_life"),
        horizon=4,
        seeds=7,
        seed=10,
        batch_size=3,
        family=fake_family(cell),
    )
    return spec.replace(**changes)


def _no_seconds(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.drop(columns=["seconds"], errors="ignore").reset_index(drop=True)


# -- specs --------------------------------------------------------------------------------


def test_spec_expands_to_agent_setting_batch_cells():
    spec = ExperimentSpec(
        name="x",
        agents=("delight", "thompson", "egreedy"),
        settings=(
            {"arms": 10, "half_life": 10, "gate_price": 0.1},
            {"arms": 10, "half_life": 100, "gate_price": 0.1},
            {"arms": 10, "half_life": 100, "gate_price": 1},
        ),
        setting_columns=("arms", "half_life", "gate_price"),
        seeds=7,
        seed=5,
        batch_size=3,
    )
    groups = spec.groups()
    # delight sees 3 settings, thompson 1 (it takes neither M nor λ), egreedy 2 (M only).
    assert [a for a, _ in groups].count("delight") == 3
    assert [s for a, s in groups if a == "thompson"] == [{"arms": 10}]
    assert [s for a, s in groups if a == "egreedy"] == [
        {"arms": 10, "half_life": 10.0},
        {"arms": 10, "half_life": 100.0},
    ]
    # Defaults are filled in and numbers normalised, so equal values give equal keys.
    assert groups[0][1] == {"arms": 10, "half_life": 10.0, "gate_price": 0.1, "surprisal_cap": 10.0}
    assert all(type(s["half_life"]) is float for a, s in groups if a != "thompson")
    cells = spec.cells()
    assert len(cells) == len(groups) * 3 == 18
    assert len({c.key for c in cells}) == 18
    first = [c for c in cells if c.agent == "thompson"]
    assert [(c.batch, c.seeds, c.seed) for c in first] == [(0, 3, 5), (1, 3, 8), (2, 1, 11)]
    assert first[2].label() == "thompson K=10 seeds 11-11"
    assert cells[0].label() == "delight K=10 M=10 λ=0.1 L=10 seeds 5-7"
    # The key ignores the experiment name (figures share cells) but not the seeds of a batch.
    assert spec.replace(name="y").cells()[0].key == cells[0].key
    assert spec.replace(seed=6).cells()[0].key != cells[0].key


def test_paper_figure_specs_match_the_issue():
    arms = FIGURES["bernoulli-arms"].full
    assert [s["arms"] for s in arms.settings] == [10, 30, 100, 300, 1000, 3000, 10000]
    assert arms.agents == ("delight", "thompson", "egreedy", "greedy")
    assert (arms.horizon, arms.seeds, arms.batch_size) == (1000, 100, 25)
    assert len(arms.cells()) == 7 * 4 * 4
    curves = FIGURES["bernoulli-curves"].full
    assert [s["arms"] for s in curves.settings] == [10, 100, 1000]
    tune = FIGURES["bernoulli-tune"].full
    assert tune.setting_columns == ("arms", "half_life", "gate_price")
    de = {(s["arms"], s["half_life"], s["gate_price"]) for a, s in tune.groups() if a == "delight"}
    expected = {(k, m, 0.1) for k in (100, 1000) for m in (10.0, 30.0, 100.0, 300.0, 1000.0)}
    expected |= {(k, 100.0, g) for k in (100, 1000) for g in (0.01, 0.03, 0.1, 0.3, 1.0)}
    assert de == expected
    assert [s for a, s in tune.groups() if a != "delight"] == [
        {"arms": 100},
        {"arms": 100},
        {"arms": 1000},
        {"arms": 1000},
    ]
    sea = FIGURES["deepsea-regret"].full
    assert [s["size"] for s in sea.settings] == [2, 4, 6, 8, 10, 15, 20, 30, 40, 50]
    assert sea.agents == ("delight", "psrl", "egreedy", "greedy")
    assert (sea.horizon, sea.seeds) == (1000, 30)
    assert [s["size"] for s in FIGURES["deepsea-curves"].full.settings] == [5, 10, 20]

    def work(spec):
        return sum(c.seeds * c.horizon * c.setting.get("size", 1) ** 3 for c in spec.cells())

    for name, figure in FIGURES.items():
        assert work(figure.quick) <= work(figure.full) / 4
        if figure.full.family.metric != "regret":  # control: one seed, a minute
            assert (figure.quick.seeds, figure.quick.horizon) == (1, 1000)
        elif name != "deepsea-bsuite":  # beyond the paper, with its own protocol
            assert figure.quick.seeds == 10


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"agents": ("delight", "psrl")}, "agents"),
        ({"agents": ()}, "agents"),
        ({"settings": ({"arms": 5, "dim": 3},)}, "unknown key"),
        ({"settings": ({"half_life": 5},)}, "arms"),
        ({"settings": ({"arms": "many"},)}, "arms"),
        ({"setting_columns": ("noise",)}, "setting_columns"),
        ({"batch_size": 0}, "batch_size"),
        ({"seeds": 0}, "seeds"),
        ({"horizon": 2.5}, "horizon"),
        ({"family": "linear"}, "family"),
        ({"settings": ({"arms": 5, "gate_price": -0.1},)}, "gate_price must be >= 0"),
        ({"settings": ({"arms": 5, "half_life": float("inf")},)}, "half_life must be finite"),
        ({"settings": ({"arms": 0},)}, "arms must be >= 1"),
        ({"settings": ({"arms": 5, "half_life": 1}, {"arms": 5, "half_life": 2})}, "differ only"),
    ],
)
def test_spec_rejects_bad_fields(changes, message):
    base = ExperimentSpec("x", ("delight",), ({"arms": 5},), ("arms",))
    with pytest.raises((ValueError, TypeError), match=message):
        base.replace(**changes)


# -- tables and batching ------------------------------------------------------------------


def test_tables_from_a_known_cell_function(tmp_path):
    spec = fake_spec(seed_cell)
    res = run_experiment(spec, tmp_path, jobs=1, progress=False)
    assert len(res.computed) == 2 * 2 * 3 and not res.loaded
    summary = pd.read_csv(tmp_path / "summary.csv")
    curves = pd.read_csv(tmp_path / "curves.csv")
    assert list(summary.columns) == [
        "experiment",
        "agent",
        "arms",
        "half_life",
        "horizon",
        "seeds",
        "regret_mean",
        "regret_se",
        "seconds",
    ]
    assert list(curves.columns) == [
        "experiment",
        "agent",
        "arms",
        "half_life",
        "t",
        "regret_mean",
        "regret_se",
    ]
    seeds = np.arange(10, 17, dtype=float)  # environment seeds of the 7 instances
    se = seeds.std(ddof=1) / np.sqrt(7)
    for row in res.rows:  # batches concatenated in seed order
        offset = 1000.0 if row["agent"] == "b" else 0.0
        np.testing.assert_array_equal(row["final_regret"], seeds + offset)
    b = summary[(summary.agent == "b") & (summary.arms == 3)].iloc[0]
    assert b.regret_mean == pytest.approx(1013.0)
    assert b.regret_se == pytest.approx(se)
    assert b.seeds == 7 and b.horizon == 4 and b.half_life == 7.0
    assert b.seconds == pytest.approx(1.5)  # three batches of 0.5 s
    a = summary[(summary.agent == "a") & (summary.arms == 2)].iloc[0]
    assert a.regret_mean == pytest.approx(13.0) and np.isnan(a.half_life)
    curve = curves[(curves.agent == "a") & (curves.arms == 2)]
    np.testing.assert_allclose(curve.t, [1, 2, 3, 4])
    np.testing.assert_allclose(curve.regret_mean, 13.0 * np.arange(1, 5) / 4)
    np.testing.assert_allclose(curve.regret_se, se * np.arange(1, 5) / 4)
    assert len(curves) == 4 * 4


def test_first_success_is_stored_and_summarised(tmp_path):
    """Per-seed first-success episodes survive batching and the cell files (a re-run loads
    them) and give found_fraction / first_success_median in summary.csv."""
    spec = fake_spec(success_cell)
    for _ in range(2):  # computed, then loaded from the cell files
        run_experiment(spec, tmp_path, jobs=1, progress=False)
        summary = pd.read_csv(tmp_path / "summary.csv")
        assert list(summary.columns[-2:]) == ["found_fraction", "first_success_median"]
        # Seeds 10..16: successes at 10, 12, 14, 16.
        assert summary.found_fraction.tolist() == [4 / 7] * 4
        assert summary.first_success_median.tolist() == [13.0] * 4
    assert (
        "found_fraction"
        not in pd.read_csv(
            run_experiment(fake_spec(seed_cell), tmp_path / "plain", jobs=1, progress=False)
            and tmp_path / "plain" / "summary.csv"
        ).columns
    )


def test_batching_keeps_environment_seeds(tmp_path):
    base = ExperimentSpec(
        "b", ("greedy", "thompson"), ({"arms": 5}, {"arms": 20}), ("arms",), horizon=40, seeds=6
    )
    one = run_experiment(base.replace(batch_size=6), tmp_path / "one", jobs=1, progress=False)
    two = run_experiment(base.replace(batch_size=3), tmp_path / "two", jobs=1, progress=False)
    odd = run_experiment(base.replace(batch_size=4), tmp_path / "odd", jobs=1, progress=False)
    assert (len(one.computed), len(two.computed), len(odd.computed)) == (4, 8, 8)
    for r1, r2, r3 in zip(one.rows, two.rows, odd.rows, strict=True):
        if r1["agent"] == "greedy":  # deterministic agent: the batching changes nothing
            np.testing.assert_array_equal(r1["cumulative"], r2["cumulative"])
            np.testing.assert_array_equal(r1["cumulative"], r3["cumulative"])
    # A randomised agent: batch j is exactly run_bernoulli(seeds=3, seed=3j).
    ts = next(r for r in two.rows if r["agent"] == "thompson" and r["arms"] == 20)
    direct = [bandit.run_bernoulli("thompson", 20, 40, 3, seed=s).cumulative for s in (0, 3)]
    np.testing.assert_array_equal(ts["cumulative"], np.concatenate(direct))


def test_process_pool_equals_in_process(tmp_path):
    spec = ExperimentSpec(
        "p",
        ("delight", "thompson", "egreedy"),
        ({"arms": 5}, {"arms": 30}),
        ("arms",),
        horizon=60,
        seeds=5,
        batch_size=2,
    )
    serial = run_experiment(spec, tmp_path / "serial", jobs=1, progress=False)
    pooled = run_experiment(spec, tmp_path / "pool", jobs=2, progress=False, serial_seconds=0)
    assert len(pooled.computed) == len(serial.computed) == 18
    assert sorted(pooled.computed) == sorted(serial.computed)
    pd.testing.assert_frame_equal(_no_seconds(pooled.summary), _no_seconds(serial.summary))
    pd.testing.assert_frame_equal(pooled.curves, serial.curves)


def test_small_sweeps_run_in_process_and_long_ones_switch_to_a_pool(tmp_path, monkeypatch):
    """``jobs > 1``: cells run in this process, cheapest first; as soon as the work left is
    estimated at ``serial_seconds`` of CPU or more (the CPU time of the cells done, scaled to
    the cells left by their relative costs), ``jobs - 1`` workers take the longest cells left
    while this process goes on; a sweep whose work left is estimated below it starts no
    worker. The numbers are the same whichever process computed a cell (the tables equal a
    jobs=1 run's)."""
    log = tmp_path / "calls.log"
    monkeypatch.setenv("FAKE_CELL_LOG", str(log))
    monkeypatch.setenv("FAKE_CELL_SLEEP", "0")
    monkeypatch.setenv("FAKE_CELL_CPU", "0.4")
    spec = fake_spec(logged_slow_cell, batch_size=4, seeds=4)  # 4 cells: (a, b) × arms (2, 3)

    def pids(out: Path, **options) -> list[int]:
        log.write_text("")
        run_experiment(spec, out, jobs=2, progress=False, **options)
        return [int(line.split()[0]) for line in log.read_text().splitlines()]

    me = os.getpid()
    assert pids(tmp_path / "serial", serial_seconds=float("inf")) == [me] * 4
    # Costs 2, 2, 3, 3 (the arms). After the first cell (0.4 CPU s at cost 2) the work left is
    # estimated at 0.4 * (2 + 3 + 3) / 2 = 1.6 s, after the second at 0.8 * 6 / 4 = 1.2 s.
    # Above 1.6 s: no worker ever starts.
    assert pids(tmp_path / "small", serial_seconds=2.5) == [me] * 4
    # 1.6 >= 1.4: after the first cell one worker takes the longest cell left and this process
    # the two others.
    mixed = pids(tmp_path / "mixed", serial_seconds=1.4)
    assert mixed[0] == me and sorted(p == me for p in mixed[1:]) == [False, True, True]
    at_once = pids(tmp_path / "pool", serial_seconds=0)
    assert len(at_once) == 4 and me in at_once and len(set(at_once)) == 2
    with pytest.raises(ValueError, match="serial_seconds"):
        run_experiment(spec, tmp_path / "x", serial_seconds=-1.0)

    # Identical numbers whatever computed the cells.
    seeded = fake_spec(seed_cell, batch_size=2)
    one = run_experiment(seeded, tmp_path / "one", jobs=1, progress=False)
    for seconds in (0.0, float("inf")):
        other = run_experiment(
            seeded, tmp_path / f"two-{seconds}", jobs=2, progress=False, serial_seconds=seconds
        )
        pd.testing.assert_frame_equal(other.summary, one.summary)
        pd.testing.assert_frame_equal(other.curves, one.curves)


def test_every_cell_runs_on_one_torch_thread_and_the_count_comes_back(tmp_path):
    """The runner sets torch's thread limit around every cell (jobs=1 too, workers beside it
    too) and puts the caller's thread count back."""
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        spec = fake_spec(threads_cell, batch_size=7)  # 4 cells, all in this process
        inf = float("inf")
        beside = run_experiment(spec, tmp_path / "a", jobs=2, progress=False, serial_seconds=inf)
        assert all((row["overrides"] == 1).all() for row in beside.rows)
        assert torch.get_num_threads() == 2
        alone = run_experiment(spec, tmp_path / "b", jobs=1, progress=False)
        assert all((row["overrides"] == 1).all() for row in alone.rows)
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_failing_cell_names_the_cell_and_keeps_finished_ones(tmp_path):
    spec = fake_spec(failing_cell, agents=("a",))
    with pytest.raises(CellError, match=r"a arms=3 seeds 10-12 failed: ValueError: boom"):
        run_experiment(spec, tmp_path, jobs=1, progress=False)
    assert len(list((tmp_path / "cells").glob("*.npz"))) == 3  # the arms=2 batches


def test_run_experiment_rejects_bad_arguments(tmp_path):
    spec = fake_spec(seed_cell)
    with pytest.raises(ValueError, match="backend"):
        run_experiment(spec, tmp_path, backend="spark")
    with pytest.raises(ValueError, match="jobs"):
        run_experiment(spec, tmp_path, jobs=0)


# -- kill and resume ----------------------------------------------------------------------


def _cell_files(folder: Path) -> dict[str, tuple[int, int]]:
    return {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in folder.glob("*.npz")}


def _wait_for(predicate, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.005)


def test_cli_killed_with_sigkill_resumes_without_recomputing(tmp_path, monkeypatch, capsys):
    out = tmp_path / "killed"
    args = [
        "reproduce",
        "bernoulli-curves",
        "--quick",
        "--seeds",
        "2",
        "--batch-size",
        "1",
        "--horizon",
        "60",
        "--jobs",
        "1",
        "--no-progress",
        "--no-plot",
    ]
    total = 3 * 4 * 2  # K values × agents × batches
    proc = subprocess.Popen(
        [sys.executable, "-m", "delight_gym.cli", *args, "--out", str(out)],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for(lambda: (out / "cells").is_dir() and any((out / "cells").glob("*.npz")))
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    before = _cell_files(out / "cells")
    assert 1 <= len(before) < total
    assert not (out / "summary.csv").exists()

    real = bandit.run_bernoulli
    calls = []
    monkeypatch.setattr(
        bandit, "run_bernoulli", lambda *a, **k: (calls.append(a), real(*a, **k))[1]
    )
    assert cli.main([*args, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"cells: {total - len(before)} computed, {len(before)} loaded" in printed
    assert len(calls) == total - len(before)  # only the unfinished cells ran
    after = _cell_files(out / "cells")
    assert len(after) == total
    assert {k: after[k] for k in before} == before  # finished files untouched

    clean = tmp_path / "clean"
    assert cli.main([*args, "--out", str(clean)]) == 0
    resumed = pd.read_csv(out / "summary.csv")
    uninterrupted = pd.read_csv(clean / "summary.csv")
    pd.testing.assert_frame_equal(_no_seconds(resumed), _no_seconds(uninterrupted))
    pd.testing.assert_frame_equal(
        pd.read_csv(out / "curves.csv"), pd.read_csv(clean / "curves.csv")
    )


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_pool_run_killed_with_sigkill_leaves_no_workers_and_resumes(tmp_path, monkeypatch):
    log = tmp_path / "calls.log"
    log.touch()
    monkeypatch.setenv("FAKE_CELL_LOG", str(log))
    monkeypatch.setenv("FAKE_CELL_SLEEP", "0.5")  # 16 cells: a worker starts well before the end
    out = tmp_path / "out"
    script = (
        "import sys; from tests.test_runner import fake_spec, logged_slow_cell;"
        "from delight_gym.experiments.runner import run_experiment;"
        "run_experiment(fake_spec(logged_slow_cell, batch_size=1, seeds=4),"
        " sys.argv[1], jobs=2, progress=False, serial_seconds=0)"
    )
    proc = subprocess.Popen([sys.executable, "-c", script, str(out)], cwd=ROOT)

    def worker_running() -> bool:  # two cells finished and a worker (not proc) at work
        pids = {int(line.split()[0]) for line in log.read_text().splitlines()}
        return len(pids - {proc.pid}) > 0 and len(list((out / "cells").glob("*.npz"))) >= 2

    try:
        _wait_for(worker_running)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    finished = set(_cell_files(out / "cells"))
    assert 2 <= len(finished) < 16
    # jobs=2: one worker and the killed process itself computed cells.
    workers = {int(line.split()[0]) for line in log.read_text().splitlines()} - {proc.pid}
    assert len(workers) == 1
    _wait_for(lambda: not any(_alive(pid) for pid in workers), timeout=10)  # orphans exit

    n_before = len(log.read_text().splitlines())
    monkeypatch.setenv("FAKE_CELL_SLEEP", "0")
    res = run_experiment(fake_spec(logged_slow_cell, batch_size=1, seeds=4), out, jobs=1)
    assert set(res.loaded) == {name.removesuffix(".npz") for name in finished}
    assert len(res.computed) == 16 - len(finished)
    calls = log.read_text().splitlines()
    assert len(calls) == n_before + len(res.computed)  # no finished cell ran again
    ran = [tuple(line.split()[1:]) for line in calls]
    assert len(set(ran)) == len(ran) - (n_before - len(finished))  # only cut-off cells twice


# -- Ray ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def local_ray():
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def test_ray_backend_equals_local(tmp_path, local_ray):
    spec = ExperimentSpec(
        "r", ("delight", "thompson"), ({"arms": 5}, {"arms": 20}), ("arms",), horizon=50, seeds=4
    ).replace(batch_size=2)
    local = run_experiment(spec, tmp_path / "local", jobs=1, progress=False)
    on_ray = run_experiment(spec, tmp_path / "ray", backend="ray", progress=False)
    assert local_ray.is_initialized()  # the runner leaves the caller's Ray running
    assert sorted(on_ray.computed) == sorted(local.computed) and len(on_ray.computed) == 8
    assert set(_cell_files(tmp_path / "ray" / "cells")) == set(
        _cell_files(tmp_path / "local" / "cells")
    )
    pd.testing.assert_frame_equal(_no_seconds(on_ray.summary), _no_seconds(local.summary))
    pd.testing.assert_frame_equal(on_ray.curves, local.curves)
    again = run_experiment(spec, tmp_path / "ray", backend="ray", jobs=1, progress=False)
    assert not again.computed and len(again.loaded) == 8


# -- figures and the reproduce command ----------------------------------------------------


def _synthetic_summary() -> pd.DataFrame:
    rows = []
    for k in (100, 1000):
        for m in (10.0, 100.0, 1000.0):
            rows.append(("delight", k, m, 0.1, 50.0 + m / 100, 2.0))
        for g in (0.01, 1.0):
            rows.append(("delight", k, 100.0, g, 40.0 + g, 2.0))
        rows.append(("thompson", k, np.nan, np.nan, 100.0 + k / 100, 1.0))
        rows.append(("greedy", k, np.nan, np.nan, 80.0, 5.0))
    frame = pd.DataFrame(
        rows, columns=["agent", "arms", "half_life", "gate_price", "regret_mean", "regret_se"]
    )
    frame.insert(0, "experiment", "bernoulli-tune")
    frame["horizon"], frame["seeds"], frame["seconds"] = 1000, 3, 1.0
    return frame


def _capture_figure(monkeypatch):
    saved = []
    real = plotting.save_figure

    def capture(fig, stem):
        saved.append(fig)
        return real(fig, stem)

    monkeypatch.setattr(figures, "save_figure", capture)
    return saved


def _legend_beside_the_axes(fig) -> list[str]:
    """The figure's one legend: right of every axes (not over the data); its labels."""
    (legend,) = fig.legends
    fig.canvas.draw()
    box = legend.get_window_extent()
    assert all(box.x0 >= ax.get_window_extent().x1 for ax in fig.axes)
    assert box.x1 <= fig.bbox.x1 + 1  # inside the figure
    return [t.get_text() for t in legend.get_texts()]


def test_plot_tune_draws_de_lines_and_baselines_per_k(tmp_path, monkeypatch):
    """One row of panels per K (M sweep left, λ sweep right), DE's line and the Thompson
    (dashed) and greedy (dotted) levels of that K, each agent in its own colour."""
    saved = _capture_figure(monkeypatch)
    paths = figures.plot_tune(_synthetic_summary(), None, tmp_path / "tune")
    assert [p.name for p in paths] == ["tune.png", "tune.pdf"]
    assert all(p.stat().st_size > 1000 for p in paths)
    axes = saved[0].axes
    assert len(axes) == 4
    colors = figures.AGENT_COLORS
    assert len({colors["delight"], colors["thompson"], colors["greedy"]}) == 3
    for row, k in enumerate((100, 1000)):
        left, right = axes[2 * row], axes[2 * row + 1]
        assert left.get_title() == f"K = {k}, λ = 0.1" and right.get_title() == f"K = {k}, M = 100"
        for ax, xs in ((left, [10.0, 100.0, 1000.0]), (right, [0.01, 0.1, 1.0])):
            assert ax.get_xscale() == "log"
            (de,) = [c.lines[0] for c in ax.containers]  # DE's errorbar line
            np.testing.assert_allclose(de.get_xdata(), xs)
            assert de.get_color() == colors["delight"]
            levels = {ln.get_linestyle(): ln for ln in ax.lines if ln.get_linestyle() != "None"}
            assert sorted(levels) == ["-", "--", ":"] and levels["-"] is de  # caps: "None"
            assert levels["--"].get_ydata()[0] == 100.0 + k / 100  # Thompson's regret at K
            assert levels["--"].get_color() == colors["thompson"]
            assert levels[":"].get_ydata()[0] == 80.0  # greedy's
            assert levels[":"].get_color() == colors["greedy"]
    labels = _legend_beside_the_axes(saved[0])
    assert labels == [figures.AGENT_LABELS[a] for a in ("delight", "thompson", "greedy")]


def test_plot_final_regret_and_curves_write_files(tmp_path, monkeypatch):
    saved = _capture_figure(monkeypatch)
    summary = pd.DataFrame(
        {
            "experiment": "e",
            "agent": ["delight", "delight", "thompson", "thompson"],
            "arms": [10, 1000, 10, 1000],
            "horizon": 100,
            "seeds": 3,
            "regret_mean": [1.0, 2.0, 3.0, 9.0],
            "regret_se": [0.1, 0.2, 0.3, np.nan],
            "seconds": 0.0,
        }
    )
    paths = figures.plot_final_regret(summary, None, tmp_path / "arms")
    assert all(p.exists() and p.stat().st_size > 1000 for p in paths)
    ax = saved[0].axes[0]
    assert ax.get_xscale() == "log"
    assert ax.get_ylabel() == "cumulative regret at T=100"
    assert len(ax.containers) == 2
    np.testing.assert_allclose(ax.containers[1].lines[0].get_ydata(), [3.0, 9.0])
    curves = pd.DataFrame(
        {
            "experiment": "e",
            "agent": np.repeat(["delight", "thompson"], 6),
            "arms": np.tile(np.repeat([10, 100], 3), 2),
            "t": np.tile([1, 2, 3], 4),
            "regret_mean": np.arange(12.0),
            "regret_se": 0.5,
        }
    )
    paths = figures.plot_regret_curves(None, curves, tmp_path / "curves")
    assert all(p.exists() and p.stat().st_size > 1000 for p in paths)
    assert [a.get_title() for a in saved[1].axes] == ["K = 10", "K = 100"]
    for fig in saved:
        labels = _legend_beside_the_axes(fig)
        assert labels == [figures.AGENT_LABELS[a] for a in ("delight", "thompson")]
    # Log axes are labelled at the data's values, in plain numbers.
    assert [t.get_text() for t in saved[0].axes[0].get_xticklabels()] == ["10", "1000"]


def test_coincident_lines_stay_visible(tmp_path, monkeypatch):
    """DE and the host-only ablation with the same numbers (DeepSea): the ablation's line is
    narrower, dashed and on top, and the markers differ, so both stay in the picture."""
    saved = _capture_figure(monkeypatch)
    t = np.arange(1, 51)
    curves = pd.DataFrame(
        {
            "experiment": "e",
            "agent": np.repeat(["delight", "greedy"], 50),
            "size": 5,
            "t": np.tile(t, 2),
            "regret_mean": np.tile(np.sqrt(t), 2),
            "regret_se": 0.1,
        }
    )
    figures.plot_regret_curves(None, curves, tmp_path / "c", panel="size", panel_label="N")
    de, host = saved[0].axes[0].lines
    np.testing.assert_array_equal(de.get_ydata(), host.get_ydata())
    assert host.get_zorder() > de.get_zorder() and host.get_linewidth() < de.get_linewidth()
    assert host.get_linestyle() == "--" and de.get_linestyle() == "-"
    assert host.get_marker() != de.get_marker() and host.get_color() != de.get_color()
    assert de.get_markevery() != host.get_markevery()  # staggered markers
    # Every agent: its own marker; within a family (the agents a figure shows), its own colour.
    assert len(set(figures.AGENT_MARKERS.values())) == len(figures.AGENT_MARKERS)
    for family in FAMILIES.values():
        colors = [figures.AGENT_COLORS[a.name] for a in family.agents]
        assert len(set(colors)) == len(colors), family.name


def test_reproduce_all_quick_writes_every_figure(tmp_path, capsys):
    argv = ["reproduce", "all", "--quick", "--seeds", "2", "--horizon", "20"]
    argv += ["--jobs", "1", "--no-progress", "--out", str(tmp_path)]
    assert cli.main(argv) == 0
    printed = capsys.readouterr().out
    names = ("bernoulli-arms", "bernoulli-curves", "bernoulli-tune")
    for name in (*names, "linear-dim", "linear-noise", "linear-tune"):
        assert f"== {name} (quick) ==" in printed
        assert (tmp_path / name / f"{name}.png").exists()
    for name in names:
        for f in ("summary.csv", "curves.csv", f"{name}.png", f"{name}.pdf"):
            assert (tmp_path / name / f).exists(), f
        summary = pd.read_csv(tmp_path / name / "summary.csv")
        assert (summary.seeds == 2).all() and (summary.horizon == 20).all()
        assert (summary.experiment == name).all()
    tune = pd.read_csv(tmp_path / "bernoulli-tune" / "summary.csv")
    assert list(tune.columns[:5]) == ["experiment", "agent", "arms", "half_life", "gate_price"]
    assert len(tune) == 2 * 5 + 2 * 2  # DE at 5 (M, λ) pairs per K, TS and greedy per K
    # bernoulli-curves' cells are all among bernoulli-arms' (a shared cells/ folder).
    assert "cells: 0 computed, 12 loaded" in printed.split("== bernoulli-curves")[1]


@pytest.mark.parametrize(
    ("figure", "message"),
    [("bernoulli-nope", "unknown figure"), ("deepsea", "unknown figure")],
)
def test_reproduce_rejects_unknown_figures(figure, message, capsys, tmp_path):
    with pytest.raises(SystemExit) as exc:
        cli.main(["reproduce", figure, "--out", str(tmp_path)])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert message in err
    assert "bernoulli-arms, bernoulli-curves, bernoulli-tune, linear-dim, linear-noise, " in err
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("extra", [["--jobs", "0"], ["--seeds", "0"], ["--batch-size", "0"]])
def test_reproduce_rejects_bad_numbers(extra, capsys, tmp_path):
    with pytest.raises(SystemExit) as exc:
        cli.main(["reproduce", "bernoulli-arms", "--out", str(tmp_path), *extra])
    assert exc.value.code == 2
    assert extra[0] in capsys.readouterr().err
