"""The paper's figures, drawn from the results tables (``summary.csv`` / ``curves.csv``).

Every drawing function is ``plot(summary, curves, path_stem, *, title, **options)``, writes
``path_stem.png`` and ``.pdf`` and returns their paths, so a
:class:`~delight_gym.experiments.specs.FigureSpec` names its function and options as data and
:func:`make_figure` draws it. The figures show the mean ± 1 standard error over seeds, each
agent in its style (:mod:`delight_gym.experiments.figure_style`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from delight_gym._checks import check_choice
from delight_gym.experiments.families import FAMILIES, Family
from delight_gym.experiments.figure_style import (
    AGENT_COLORS,
    AGENT_LABELS,
    AGENT_LINESTYLES,
    AGENT_MARKERS,
    agent_style,
    figure_legend,
    log_ticks,
)
from delight_gym.experiments.specs import FigureSpec
from delight_gym.plotting import new_figure, save_figure

__all__ = [
    "AGENT_COLORS",
    "AGENT_LABELS",
    "AGENT_LINESTYLES",
    "AGENT_MARKERS",
    "agent_style",
    "make_figure",
    "plot_bsuite_deep_sea",
    "plot_curves",
    "plot_final_regret",
    "plot_regret_curves",
    "plot_regret_panels",
    "plot_tune",
]


def plot_curves(
    curves: pd.DataFrame,
    setting_column: str,
    path_stem: Path,
    *,
    title: str = "",
    panel_label: str | None = None,
    agent_labels: Mapping[str, str] | None = None,
    agent_colors: Mapping[str, str] | None = None,
    xlabel: str = "t",
    agent_linestyles: Mapping[str, str] | None = None,
    metric: str = "regret",
    ylabel: str = "cumulative regret",
) -> list[Path]:
    """One panel per value of ``setting_column``: each agent's curve vs ``t``, mean ± 1 s.e.;
    returns the ``path_stem.png`` and ``path_stem.pdf`` it writes.

    Parameters
    ----------
    curves : pd.DataFrame
        a ``curves.csv`` frame.
    setting_column : str
        the column whose values make the panels.
    path_stem : Path
        output path without extension.
    title, xlabel : str
        figure title; label of the time axis.
    panel_label : str | None
        name in panel titles (default ``setting_column``; ``""``: the values alone).
    agent_labels, agent_colors, agent_linestyles : Mapping[str, str] | None
        per agent name (defaults :data:`AGENT_LABELS`, :data:`AGENT_COLORS`,
        :data:`AGENT_LINESTYLES`).
    metric, ylabel : str
        the curve's columns (``metric_mean``, ``metric_se``) and its axis label.
    """
    mean_col, se_col = f"{metric}_mean", f"{metric}_se"
    labels = AGENT_LABELS if agent_labels is None else agent_labels
    values = sorted(curves[setting_column].unique())
    fig, axes = new_figure(
        1, len(values), figsize=(4.2 * len(values) + 2.2, 3.6), layout="constrained"
    )
    for ax, value in zip(axes[0], values, strict=True):
        panel = curves[curves[setting_column] == value]
        for i, (agent, group) in enumerate(panel.groupby("agent", sort=False)):
            name = str(agent)
            style = agent_style(name, agent_colors, agent_linestyles)
            (line,) = ax.plot(
                group["t"],
                group[mean_col],
                label=labels.get(name, name),
                markevery=(0.03 + 0.025 * i, 0.15),  # staggered: coincident curves stay apart
                **style,
            )
            mean, se = group[mean_col], group[se_col].fillna(0)
            band = {"color": line.get_color(), "alpha": 0.2, "linewidth": 0, "zorder": 1}
            ax.fill_between(group["t"], mean - se, mean + se, **band)
        shown = f"{value:g}" if isinstance(value, (int, float, np.number)) else str(value)
        label = setting_column if panel_label is None else panel_label
        ax.set_title(f"{label} = {shown}" if label else shown)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
    figure_legend(fig, axes[0])
    if title:
        fig.suptitle(title)
    return save_figure(fig, path_stem)


def _horizon_label(summary: pd.DataFrame, unit: str | None = None) -> str:
    horizons = sorted(set(summary["horizon"]))
    if len(horizons) != 1:
        return "regret"
    if unit:
        return f"cumulative regret after {int(horizons[0])} {unit}"
    return f"cumulative regret at T={int(horizons[0])}"


def _agent_band(ax: Any, rows: pd.DataFrame, x: str, name: str) -> None:
    """Agent ``name``'s mean regret vs column ``x`` of ``rows``: ±1 s.e. error bars and band."""
    xs, mean, se = (np.asarray(rows[c], dtype=float) for c in (x, "regret_mean", "regret_se"))
    se = np.nan_to_num(se)
    style = {"marker": "o", "markersize": 5, **agent_style(name)}
    bars = ax.errorbar(xs, mean, yerr=se, capsize=3, label=AGENT_LABELS.get(name, name), **style)
    color = bars[0].get_color()
    ax.fill_between(xs, mean - se, mean + se, color=color, alpha=0.15, linewidth=0, zorder=1)


def plot_regret_curves(
    summary: pd.DataFrame | None,
    curves: pd.DataFrame,
    path_stem: Path,
    *,
    title: str = "",
    panel: str = "arms",
    panel_label: str = "K",
    xlabel: str = "t",
) -> list[Path]:
    """Cumulative regret vs ``t`` (``bernoulli-curves``), one panel per value of ``panel``;
    ``xlabel`` names the time axis."""
    return plot_curves(
        curves, panel, path_stem, title=title, panel_label=panel_label, xlabel=xlabel
    )


def plot_tune(
    summary: pd.DataFrame,
    curves: pd.DataFrame | None,
    path_stem: Path,
    *,
    title: str = "",
    half_life: float = 100.0,
    gate_price: float = 0.1,
    baselines: Sequence[tuple[str, str]] = (("thompson", "--"), ("greedy", ":")),
) -> list[Path]:
    """Sensitivity of DE to ``M`` and ``λ`` (``bernoulli-tune``, ``linear-tune``).

    One row of panels per ``K``: regret vs ``M`` at ``λ = gate_price`` (left) and vs ``λ`` at
    ``M = half_life`` (right), DE mean ± 1 s.e.; each baseline is a line with a ±1 s.e. band.

    Parameters
    ----------
    summary : pd.DataFrame
        a ``summary.csv`` frame with columns ``arms, half_life, gate_price``.
    curves, path_stem, title : pd.DataFrame | None, Path, str
        as :func:`plot_regret_panels`.
    half_life, gate_price : float
        the ``M`` of the ``λ`` sweep, the ``λ`` of the ``M`` sweep.
    baselines : Sequence[tuple[str, str]]
        ``(agent, line style)`` of the horizontal lines.
    """
    arms = sorted(summary["arms"].unique())
    fig, grid = new_figure(
        len(arms), 2, figsize=(11.5, 0.6 + 3.4 * len(arms)), sharey="row", layout="constrained"
    )
    de = summary[summary["agent"] == "delight"]
    for row, k in zip(grid, arms, strict=True):
        panels = (
            (row[0], "half_life", "gate_price", gate_price, "annealing half-life M", "λ"),
            (row[1], "gate_price", "half_life", half_life, "gate price λ", "M"),
        )
        for ax, x, fixed, value, xlabel, fixed_name in panels:
            line = de[(de["arms"] == k) & np.isclose(de[fixed].astype(float), value)].sort_values(x)
            if len(line):
                _agent_band(ax, line, x, "delight")
                log_ticks(ax, line[x])
            for agent, linestyle in baselines:
                base = summary[(summary["agent"] == agent) & (summary["arms"] == k)]
                if not len(base):
                    continue
                mean = float(base["regret_mean"].iloc[0])
                se = float(np.nan_to_num(base["regret_se"].iloc[0]))
                style = agent_style(agent, linestyles={agent: linestyle})
                ax.axhline(
                    mean,
                    color=style.get("color"),
                    linestyle=linestyle,
                    linewidth=1.6,
                    zorder=style["zorder"],
                    label=AGENT_LABELS.get(agent, agent),
                )
                ax.axhspan(mean - se, mean + se, color=style.get("color"), alpha=0.1, linewidth=0)
            ax.set_xlabel(xlabel)
            ax.set_title(f"K = {k:g}, {fixed_name} = {value:g}")
            ax.grid(alpha=0.3, which="both")
        row[0].set_ylabel(_horizon_label(summary))
    figure_legend(fig, grid.ravel())
    if title:
        fig.suptitle(title)
    return save_figure(fig, path_stem)


#: Labels of the tabular reference agents in :func:`plot_bsuite_deep_sea`.
BSUITE_TABULAR_LABELS: Mapping[str, str] = {
    "psrl": "PSRL (tabular reference)",
    "delight": "DE, tabular (planner host; reference)",
}


def plot_bsuite_deep_sea(
    summary: pd.DataFrame,
    curves: pd.DataFrame | None,
    path_stem: Path,
    *,
    title: str = "",
    agent_labels: Mapping[str, str] | None = None,
) -> list[Path]:
    """``deepsea-bsuite``: episodes to solve vs DeepSea size, and each agent's bsuite score.

    Left, against ``N``: each run's solve episode (unsolved: an ``x`` where it stopped), the
    median over seeds, ``2^N`` (dithering) and the ``N³`` trend of "Randomized Prior Functions
    for Deep Reinforcement Learning" (Fig. 6) anchored at BootDQN's smallest median.

    Parameters
    ----------
    summary : pd.DataFrame
        a ``summary.csv`` frame with the solve columns (``size``, ``solve_episodes``,
        ``solve_episode_median``).
    curves, path_stem, title : pd.DataFrame | None, Path, str
        as :func:`plot_regret_panels`.
    agent_labels : Mapping[str, str] | None
        legend labels (default :data:`AGENT_LABELS` with :data:`BSUITE_TABULAR_LABELS`).
    """
    from delight_gym.experiments.results import parse_solve_episodes
    from delight_gym.experiments.scores import DeepSeaSolve, deep_sea_score

    labels = {**AGENT_LABELS, **BSUITE_TABULAR_LABELS, **(agent_labels or {})}
    fig, grid = new_figure(1, 2, figsize=(11.5, 4.6), gridspec_kw={"width_ratios": [1.6, 1]})
    ax, bars = grid[0]
    sizes = sorted(int(n) for n in summary["size"].unique())
    agents = list(dict.fromkeys(str(a) for a in summary["agent"]))
    scores: list[float] = []
    for k, agent in enumerate(agents):
        rows = summary[summary["agent"] == agent].sort_values("size")
        style = {"color": AGENT_COLORS[agent]} if agent in AGENT_COLORS else {}
        offset = 0.12 * (k - (len(agents) - 1) / 2)  # spread the agents along N
        pairs = []
        for n, text in zip(rows["size"], rows["solve_episodes"], strict=True):
            episodes, solved = parse_solve_episodes(str(text))
            x = np.full(episodes.shape, float(n) + offset)
            ax.scatter(x[solved], episodes[solved], s=9, alpha=0.45, **style)
            ax.scatter(x[~solved], episodes[~solved], s=14, marker="x", alpha=0.45, **style)
            pairs += [
                (int(n), DeepSeaSolve(bool(s), int(e), True))
                for e, s in zip(episodes, solved, strict=True)
            ]
        median = rows["solve_episode_median"].astype(float).to_numpy()
        finite = np.isfinite(median)
        ax.plot(
            rows["size"].to_numpy(dtype=float)[finite] + offset,
            median[finite],
            marker="o",
            linestyle=AGENT_LINESTYLES.get(agent, "-"),
            **style,
        )
        scores.append(deep_sea_score(pairs))
    grid_n = np.linspace(min(sizes), max(sizes), 50)
    label = "$2^N$ (dithering; bsuite passes < $2^N$+100)"
    ax.plot(grid_n, 2.0**grid_n, "k--", linewidth=1, label=label)
    boot = summary[summary["agent"] == "boot_dqn"].sort_values("size")
    boot = boot[np.isfinite(boot["solve_episode_median"].astype(float))]
    if len(boot):
        anchor_n = float(boot["size"].iloc[0])
        anchor = float(boot["solve_episode_median"].iloc[0])
        ax.plot(
            grid_n,
            anchor * (grid_n / anchor_n) ** 3,
            color="#1f77b4",
            linestyle=":",
            linewidth=1.2,
            label="$\\propto N^3$: BootDQN+prior trend, Osband et al. 2018 Fig. 6\n"
            "(anchored at our BootDQN median, smallest N solved)",
        )
    ax.set_yscale("log")
    ax.set_ylim(top=3e4)  # bsuite's budget caps every run at 10 000 episodes
    ax.set_xticks(sizes)
    ax.set_xlabel("DeepSea size N")
    ax.set_ylabel("episodes until bad fraction < 0.8 (bsuite's rule)")
    ax.grid(alpha=0.3, which="both")
    ax.legend(frameon=False, fontsize=7, loc="upper left")  # agents: the colours of the bars
    y = np.arange(len(agents))
    bars.barh(y, scores, color=[AGENT_COLORS.get(a, "#7f7f7f") for a in agents])
    for yi, score in zip(y, scores, strict=True):
        bars.text(min(score + 0.02, 0.9), yi, f"{score:.2f}", va="center", fontsize=8)
    bars.set_yticks(y, [labels.get(a, a) for a in agents], fontsize=7)
    bars.invert_yaxis()
    bars.set_xlim(0, 1.05)
    bars.set_xlabel(f"bsuite score over N = {', '.join(map(str, sizes))}")
    bars.grid(alpha=0.3, axis="x")
    if title:
        # make_figure's second line speaks of means ± s.e.; this figure shows medians and runs.
        head = title.split("\nmean ± 1 s.e.")[0]
        shown = "/".join(map(str, sorted({int(s) for s in summary["seeds"]})))
        fig.suptitle(
            f"{head}\nmedian over {shown} seeds (one seed = one mapping_seed) and every run"
        )
    fig.tight_layout()
    return save_figure(fig, path_stem)


def plot_regret_panels(
    summary: pd.DataFrame,
    curves: pd.DataFrame | None,
    path_stem: Path,
    *,
    title: str = "",
    x: str = "arms",
    xlabel: str = "number of arms K",
    panel: str | None = None,
    log_x: bool = True,
    log_y: bool = False,
    relative_to: str | None = None,
    horizon_unit: str | None = None,
) -> list[Path]:
    """Final regret vs a setting, one line per agent (mean ± 1 s.e.), one panel per value of
    ``panel``, optionally as a ratio to one agent's regret on the same setting (``wheel``:
    relative to ``uniform``, the Deep Bayesian Bandits Showdown's metric).

    Parameters
    ----------
    summary : pd.DataFrame
        a ``summary.csv`` frame with columns ``x`` and ``panel``; its setting columns are
        those between ``agent`` and ``horizon``.
    curves, path_stem, title : pd.DataFrame | None, Path, str
        unused; output path without extension; figure title.
    x, xlabel : str
        the setting column on the horizontal axis, and its label.
    panel : str | None
        the setting column whose values make the panels (default: one panel).
    log_x, log_y : bool
        logarithmic horizontal, vertical axis.
    relative_to : str | None
        an agent whose mean on the same setting divides every agent's mean and s.e.
    horizon_unit : str | None
        what the horizon counts, for the axis label (default rounds, labelled ``T``).
    """
    ylabel = _horizon_label(summary, horizon_unit)
    if relative_to is not None:
        from delight_gym.experiments.contextual import relative_to_uniform

        columns = list(summary.columns)
        settings = columns[columns.index("agent") + 1 : columns.index("horizon")]
        ratios = relative_to_uniform(summary, settings, baseline=relative_to)
        summary = ratios.rename(
            columns={"relative_regret": "regret_mean", "relative_se": "regret_se"}
        )
        ylabel += f" / {AGENT_LABELS.get(relative_to, relative_to)}'s"
    values = [None] if panel is None else sorted(summary[panel].unique())
    fig, axes = new_figure(
        1, len(values), figsize=(4.2 * len(values) + 3.0, 4.0), layout="constrained"
    )
    for ax, value in zip(axes[0], values, strict=True):
        rows = summary if panel is None else summary[summary[panel] == value]
        for agent, group in rows.groupby("agent", sort=False):
            _agent_band(ax, group.sort_values(x), x, str(agent))
        if log_x:
            log_ticks(ax, rows[x])
        if log_y:
            ax.set_yscale("log")
        if panel is not None:
            ax.set_title(f"{panel} = {value}")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3, which="both")
    figure_legend(fig, axes[0])
    if title and panel is None:
        axes[0][0].set_title(title, fontsize=10)  # over the axes, clear of the legend beside them
    elif title:
        fig.suptitle(title, fontsize=10)
    return save_figure(fig, path_stem)


#: Final regret vs a setting in one panel (``bernoulli-arms``, ``linear-dim``,
#: ``deepsea-regret``): :func:`plot_regret_panels` with its defaults.
plot_final_regret = plot_regret_panels


def family_curve_options(family: Family) -> dict[str, Any]:
    """:func:`plot_curves`' keywords for the curves of ``family``: its time axis, its metric
    and its agents' labels and styles."""
    return {
        "xlabel": family.time_label,
        "metric": family.metric,
        "ylabel": family.metric_label,
        "agent_labels": {a.name: a.label or a.name for a in family.agents},
        "agent_colors": {a.name: a.color for a in family.agents if a.color},
        "agent_linestyles": {a.name: a.linestyle for a in family.agents},
    }


def plot_solved_curves(
    summary: pd.DataFrame,
    curves: pd.DataFrame,
    path_stem: Path,
    *,
    title: str = "",
    agents_of: str = "",
) -> list[Path]:
    """The control families' figure: fraction of seeds solved vs training steps, per agent
    (labels and styles of the agents of the family named ``agents_of``)."""
    del summary
    options = family_curve_options(FAMILIES[agents_of])
    return plot_curves(
        curves.assign(panel=""), "panel", path_stem, title=title, panel_label="", **options
    )


_PLOTTERS: dict[str, Callable[..., list[Path]]] = {
    "plot_bsuite_deep_sea": plot_bsuite_deep_sea,
    "plot_final_regret": plot_final_regret,
    "plot_regret_curves": plot_regret_curves,
    "plot_regret_panels": plot_regret_panels,
    "plot_solved_curves": plot_solved_curves,
    "plot_tune": plot_tune,
}


def make_figure(
    figure: FigureSpec, summary: pd.DataFrame, curves: pd.DataFrame, out: Path | str
) -> list[Path]:
    """Draw ``figure`` into ``out/<figure.name>.png`` and ``.pdf``; returns the paths. A second
    title line gives the number of seeds (when all rows share one)."""
    check_choice(figure.plot, sorted(_PLOTTERS), "figure.plot")
    plot = _PLOTTERS[figure.plot]
    seeds = sorted(set(summary["seeds"]))
    title = figure.title
    if len(seeds) == 1:
        title += f"\nmean ± 1 s.e. over {int(seeds[0])} seeds"
    return plot(summary, curves, Path(out) / figure.name, title=title, **figure.plot_options)
