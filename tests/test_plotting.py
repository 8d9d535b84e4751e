"""The package's one matplotlib setup: figures on their own Agg canvas, the user's backend and
pyplot state left alone, and ``save_figure`` writing the whole figure."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
from matplotlib.image import imread

from delight_gym.plotting import FIGURE_DPI, new_figure, save_figure

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
