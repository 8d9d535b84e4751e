"""Figures: the package's one matplotlib setup (:func:`new_figure`) and :func:`save_figure`.

Figures are drawn on their own Agg canvas, not through ``pyplot``: they render headless and
the package never selects a backend for the process. matplotlib is imported on the first
figure only; a :class:`FigureProcess` imports it in a process of its own while a command
computes.
"""

from __future__ import annotations

import importlib
import io
import sys
import warnings
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal, ParamSpec, TypeVar

import numpy as np

from delight_gym._workers import spawn_pool, stop_pool

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["FIGURE_DPI", "FIGURE_FORMATS", "FigureProcess", "new_figure", "save_figure"]

_P = ParamSpec("_P")
_T = TypeVar("_T")

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

    Parameters
    ----------
    nrows, ncols : int
        grid of axes.
    figsize : tuple[float, float]
        ``(width, height)`` in inches.
    layout : Literal["constrained", "compressed", "tight"] | None
        the layout engine (default none: call ``fig.tight_layout()`` yourself).
    **subplots
        passed to :meth:`matplotlib.figure.Figure.subplots`.

    Returns
    -------
    tuple[Figure, np.ndarray]
        ``(figure, axes)``, ``axes`` an object array ``(nrows, ncols)``.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, layout=layout)
    FigureCanvasAgg(fig)
    return fig, fig.subplots(nrows, ncols, squeeze=False, **subplots)


def save_figure(fig: Any, path_stem: Path | str) -> list[Path]:
    """Save ``fig`` as ``path_stem.png`` and ``path_stem.pdf`` (creating the folder) and return
    the paths. A figure made through ``pyplot`` is closed afterwards (the ones of
    :func:`new_figure` need no closing)."""
    Path(path_stem).parent.mkdir(parents=True, exist_ok=True)
    paths = [Path(f"{path_stem}.{ext}") for ext in FIGURE_FORMATS]
    for path in paths:
        fig.savefig(path, dpi=FIGURE_DPI)
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None:
        pyplot.close(fig)
    return paths


def _warm_up(modules: Sequence[str]) -> None:
    """Import ``modules`` and render a tiny figure in every format (fonts, backends)."""
    for name in modules:
        importlib.import_module(name)
    fig, axes = new_figure(figsize=(1.0, 1.0))
    axes[0, 0].plot([0.0, 1.0], label="x")
    axes[0, 0].legend()
    for ext in FIGURE_FORMATS:
        fig.savefig(io.BytesIO(), format=ext, dpi=FIGURE_DPI)


class FigureProcess:
    """Draw figures in a process of their own, started now and warmed up (matplotlib's import
    and first rendering, about a second) while the caller computes the data.

    ``draw(fn, *args, **kwargs)`` runs a module-level ``fn`` there and returns its result (or
    raises its exception); if the process died the figure is drawn here, with a
    :class:`RuntimeWarning`. A context manager (or call :meth:`close`).

    Parameters
    ----------
    imports : Sequence[str]
        modules the process imports at start (those of the functions it will be given).
    enabled : bool
        start the process (``False``: draw in this process).

    Examples
    --------
    >>> from delight_gym.experiments import figures
    >>> with FigureProcess(["delight_gym.experiments.figures"]) as process:
    ...     pass  # compute the data here, then: process.draw(figures.plot_curves, ...)
    """

    def __init__(self, imports: Sequence[str] = (), *, enabled: bool = True) -> None:
        self._executor = spawn_pool(1) if enabled else None
        # A pool starts its process on the first task: the warm-up, submitted now.
        self._warm_up: Future[None] | None = (
            self._executor.submit(_warm_up, tuple(imports)) if self._executor else None
        )

    def ready(self, timeout: float | None = None) -> bool:
        """Wait (at most ``timeout`` seconds) for the process to be started and warmed up;
        whether it is. ``False`` when disabled or closed."""
        if self._warm_up is None or self._executor is None:
            return False
        try:
            self._warm_up.result(timeout)
        except Exception:  # a failed warm-up or a dead process: draw() will say so
            return False
        return True

    def draw(self, fn: Callable[_P, _T], /, *args: _P.args, **kwargs: _P.kwargs) -> _T:
        """``fn(*args, **kwargs)``, run in the figure process (see the class docstring)."""
        if self._executor is not None:
            try:
                return self._executor.submit(fn, *args, **kwargs).result()
            except BrokenProcessPool as exc:
                self.close()
                warnings.warn(
                    f"the figure process died ({exc}); drawing in this process",
                    RuntimeWarning,
                    stacklevel=2,
                )
        return fn(*args, **kwargs)

    def close(self) -> None:
        """End the process. Nothing is left to wait for once :meth:`draw` returned, so it is
        stopped rather than left to tear its interpreter down (most of a second)."""
        if self._executor is not None:
            stop_pool(self._executor)
            self._executor = None

    def __enter__(self) -> FigureProcess:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
