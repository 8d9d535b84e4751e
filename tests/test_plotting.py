"""The package's one matplotlib setup: figures on their own Agg canvas, the user's backend and
pyplot state left alone, and ``save_figure`` writing the whole figure."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from matplotlib.image import imread

from delight_gym.plotting import FIGURE_DPI, FigureProcess, new_figure, save_figure

PACKAGE = Path(__file__).resolve().parents[1] / "delight_gym"


def test_new_figure_draws_and_saves_the_whole_figure(tmp_path):
    fig, axes = new_figure(2, 3, figsize=(6.0, 2.0), sharey=True)
    assert axes.shape == (2, 3)
    axes[1][2].plot([1, 2, 3], [3, 1, 2], color="#ff0000", linewidth=8)
    paths = save_figure(fig, tmp_path / "sub" / "grid")
    assert [p.name for p in paths] == ["grid.png", "grid.pdf"]
    image = imread(paths[0])
    assert image.shape[:2] == (2 * FIGURE_DPI, 6 * FIGURE_DPI)
    # The red line is in the bottom-right panel only.
    red = (image[..., 0] > 0.9) & (image[..., 1] < 0.2) & (image[..., 2] < 0.2)
    rows, cols = np.nonzero(red)
    assert rows.size and rows.min() > image.shape[0] / 2 and cols.min() > 2 * image.shape[1] / 3
    assert paths[1].read_bytes().startswith(b"%PDF")


def test_figures_leave_the_users_backend_and_pyplot_alone():
    """Drawing every kind of figure the package makes neither imports pyplot nor selects a
    backend, and a backend the user chose stays chosen (the old ``matplotlib.use("Agg")``
    switched it)."""
    code = """
import sys, tempfile
from pathlib import Path
import matplotlib
matplotlib.use("svg")
import numpy as np, pandas as pd
from delight_gym.experiments import figures
from delight_gym.theory.report import plot_reservoir_rates
from delight_gym.theory.reservoir import reservoir_rates
out = Path(tempfile.mkdtemp())
curves = pd.DataFrame({"experiment": "e", "agent": ["delight"] * 3, "arms": 5, "t": [1, 2, 3],
                       "regret_mean": [1.0, 2.0, 3.0], "regret_se": 0.1})
figures.plot_regret_curves(None, curves, out / "c")
summary = curves.assign(horizon=3, seeds=2, seconds=0.0).iloc[[0]]
figures.plot_final_regret(summary, None, out / "f")
plot_reservoir_rates(reservoir_rates(1.0, (10, 100), seeds=3), out / "r")
print(matplotlib.get_backend(), "matplotlib.pyplot" in sys.modules, len(list(out.iterdir())))
"""
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.split() == ["svg", "False", "6"]


def test_save_figure_closes_a_pyplot_figure(tmp_path):
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(2, 1))
    number = fig.number
    save_figure(fig, tmp_path / "p")
    assert number not in plt.get_fignums()
    assert (tmp_path / "p.png").exists() and (tmp_path / "p.pdf").exists()


def test_no_module_of_the_package_selects_a_backend():
    offenders = [
        str(p.relative_to(PACKAGE))
        for p in PACKAGE.rglob("*.py")
        if "matplotlib.use(" in p.read_text() or "pyplot.switch_backend" in p.read_text()
    ]
    assert offenders == []


def _where(value: int) -> tuple[int, int, bool]:
    """``(pid, value, the figures module imported)``: where a figure function ran, and what it
    found there (this test module does not import the figures module at its top)."""
    return os.getpid(), value, "delight_gym.experiments.figures" in sys.modules


def _raise(message: str) -> None:
    raise ValueError(message)


def _die_unless(pid: int) -> str:
    """Kill the process it runs in unless that is ``pid``."""
    if os.getpid() != pid:
        os._exit(3)
    return "drawn here"


def test_figure_process_draws_in_a_warmed_up_process_of_its_own(tmp_path):
    """``draw`` runs the function in another process, which imported matplotlib at start
    (before any figure was asked for), and returns its value; the figure files are the ones
    drawn in this process; a disabled one draws here."""
    from delight_gym.experiments.figures import plot_curves

    with FigureProcess(["delight_gym.experiments.figures"]) as process:
        assert process.ready(timeout=120)  # started and warmed up before any figure
        pid, value, warm = process.draw(_where, 7)
        assert (pid != os.getpid(), value, warm) == (True, 7, True)
        assert process.draw(_where, 8)[0] == pid  # one process, kept for every figure
        curves = pd.DataFrame(
            {"agent": "delight", "panel": "x", "t": [1, 2], "regret_mean": [0.0, 1.0]}
        ).assign(regret_se=0.1)
        there = process.draw(plot_curves, curves, "panel", tmp_path / "there" / "c")
    here = plot_curves(curves, "panel", tmp_path / "here" / "c")
    assert [p.name for p in there] == [p.name for p in here] == ["c.png", "c.pdf"]
    assert all(p.stat().st_size > 1000 for p in there)
    with FigureProcess(enabled=False) as process:
        assert not process.ready()
        assert process.draw(_where, 9)[:2] == (os.getpid(), 9)


def test_figure_process_raises_the_functions_error_and_survives_its_own_death():
    """An exception of the figure function is raised by ``draw``; a figure process that dies
    is replaced by drawing in this process, with a warning."""
    with FigureProcess() as process:
        with pytest.raises(ValueError, match="bad figure"):
            process.draw(_raise, "bad figure")
        with pytest.warns(RuntimeWarning, match="figure process died"):
            assert process.draw(_die_unless, os.getpid()) == "drawn here"
        assert process.draw(_where, 1)[0] == os.getpid()  # no new process after a death
