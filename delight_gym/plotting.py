"""Figures: the package's one matplotlib setup (:func:`new_figure`) and :func:`save_figure`.

Every figure the package draws — the paper's figures (:mod:`delight_gym.experiments.figures`),
the learning curves of ``delight-gym run`` and the theory's reservoir rates
(:mod:`delight_gym.theory.report`) — is made by :func:`new_figure` and written by
:func:`save_figure`, as ``.png`` and ``.pdf``.

:func:`new_figure` draws on a :class:`matplotlib.figure.Figure` with its own Agg canvas, not
through ``pyplot``: our figures are rendered headless whatever the machine, and the package
never selects a backend for the process (no ``matplotlib.use``), so importing or using it leaves
a user's matplotlib as it was (a notebook keeps its inline backend, a desktop session its GUI
one) and needs no display on a server. matplotlib is imported on the first figure only.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["FIGURE_DPI", "FIGURE_FORMATS", "new_figure", "save_figure"]

#: Resolution of the ``.png`` files.
FIGURE_DPI = 130
#: The formats :func:`save_figure` writes.
FIGURE_FORMATS = ("png", "pdf")


def new_figure(
    nrows: int = 1,
    ncols: int = 1,
    *,
    figsize: tuple[float, float],
    layout: Literal["constrained", "compressed", "tight"] | None = None,
    **subplots: Any,
) -> tuple[Figure, np.ndarray]:
    """A figure on its own Agg canvas (no ``pyplot``, no process-wide backend) and its axes.

    Args:
        nrows, ncols: grid of axes.
        figsize: ``(width, height)`` in inches.
        layout: the figure's layout engine (``"constrained"``: axes, titles and a legend placed
            ``loc="outside right upper"`` share the figure without overlapping; default none:
            call ``fig.tight_layout()`` yourself).
        **subplots: passed to :meth:`matplotlib.figure.Figure.subplots` (``sharey=True``, ...).

    Returns:
        ``(figure, axes)`` with ``axes`` an object array of shape ``(nrows, ncols)``.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, layout=layout)
    FigureCanvasAgg(fig)
    axes = fig.subplots(nrows, ncols, squeeze=False, **subplots)
    return fig, axes


def save_figure(fig: Any, path_stem: Path | str) -> list[Path]:
    """Save ``fig`` as ``path_stem.png`` and ``path_stem.pdf`` (creating the folder) and return
    the paths. A figure made through ``pyplot`` is closed afterwards (the ones of
    :func:`new_figure` need no closing)."""
    Path(path_stem).parent.mkdir(parents=True, exist_ok=True)
    paths = []
    for ext in FIGURE_FORMATS:
        p = Path(f"{path_stem}.{ext}")
        fig.savefig(p, dpi=FIGURE_DPI)
        paths.append(p)
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None:
        pyplot.close(fig)
    return paths
