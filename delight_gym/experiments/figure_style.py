"""How the agents look in every figure: label, colour and line style from each agent's family
record, marker from its place among every family's agents (:func:`agent_style`); one legend
beside the axes (:func:`figure_legend`); log axes in plain numbers (:func:`log_ticks`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from delight_gym.experiments.families import FAMILIES, Agent

__all__ = [
    "AGENT_COLORS",
    "AGENT_LABELS",
    "AGENT_LINESTYLES",
    "AGENT_MARKERS",
    "agent_style",
    "figure_legend",
    "log_ticks",
]

# The first family that names an agent gives its style (``dqn`` is the bsuite families' first;
# a figure of another family passes that family's own labels).
_AGENTS: dict[str, Agent] = {}
for _family in FAMILIES.values():
    for _agent in _family.agents:
        _AGENTS.setdefault(_agent.name, _agent)
#: Legend label of each agent (from the family records).
AGENT_LABELS: Mapping[str, str] = {name: a.label or name for name, a in _AGENTS.items()}
#: Line colour of each agent, the same in every figure (from the family records).
AGENT_COLORS: Mapping[str, str] = {n: a.color for n, a in _AGENTS.items() if a.color}
#: Line style of each agent where it is not solid (the greedy ablation is dashed).
AGENT_LINESTYLES: Mapping[str, str] = {
    n: a.linestyle for n, a in _AGENTS.items() if a.linestyle != "-"
}
_MARKERS = (
    *("o", "s", "^", "x", "D", "v", "P", "*", "<", ">", "h", "p", "d", "X", "H", "8"),
    *("1", "2", "3", "4", "+", "|", "_", "."),
    *(r"$\clubsuit$", r"$\spadesuit$", r"$\heartsuit$", r"$\diamondsuit$", r"$\star$"),
    *(r"$\bowtie$", r"$\triangleleft$", r"$\triangleright$", r"$\oplus$", r"$\otimes$"),
    *(r"$\ominus$", r"$\odot$", r"$\dagger$", r"$\ddagger$", r"$\S$", r"$\P$", r"$\flat$"),
)
#: Marker of each agent, the same in every figure (by the agent's place among every family's).
AGENT_MARKERS: Mapping[str, str] = {n: _MARKERS[i % len(_MARKERS)] for i, n in enumerate(_AGENTS)}
#: Where the legend goes: beside the axes, right of them (constrained layout makes room).
_LEGEND = {"loc": "outside right upper", "frameon": False}


def agent_style(
    name: str, colors: Mapping[str, str] | None = None, linestyles: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """Matplotlib line keywords of agent ``name``: ``color``, ``linestyle``, ``marker``,
    ``linewidth``, ``markersize`` and ``zorder``, from ``colors`` and ``linestyles`` (defaults
    :data:`AGENT_COLORS`, :data:`AGENT_LINESTYLES`; else matplotlib's cycle, solid) and
    :data:`AGENT_MARKERS`.
    """
    # A solid line is wide and below, a dashed one (the host-only ablation) narrow and on top:
    # two agents with the same numbers show as a wide line with a narrow one inside it.
    colors = AGENT_COLORS if colors is None else colors
    linestyles = AGENT_LINESTYLES if linestyles is None else linestyles
    linestyle = linestyles.get(name, "-")
    solid = linestyle in ("-", "solid")
    style: dict[str, Any] = {
        "linestyle": linestyle,
        "marker": AGENT_MARKERS.get(name, "o"),
        "linewidth": 2.6 if solid else 1.3,
        "markersize": 7.0 if solid else 4.5,
        "zorder": 2.0 if solid else 3.0,
    }
    if name in colors:
        style["color"] = colors[name]
    return style


def figure_legend(fig: Any, axes: Iterable[Any]) -> None:
    """One legend right of the axes: each label once, agents in record order, others after."""
    entries: dict[str, Any] = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            entries.setdefault(label, handle)
    rank = {label: i for i, label in enumerate(AGENT_LABELS.values())}
    labels = sorted(entries, key=lambda label: rank.get(label, len(rank)))
    if labels:
        fig.legend([entries[label] for label in labels], labels, **_LEGEND)


def log_ticks(ax: Any, values: Iterable[float]) -> None:
    """A log x axis labelled at the data's values in plain numbers (``10``, ``0.01``), without
    minor labels (matplotlib's ``2×10⁰ 3×10⁰ ...`` overlap on a short decade)."""
    ticks = sorted({float(v) for v in values})
    ax.set_xscale("log")
    ax.set_xticks(ticks, labels=[f"{v:g}" for v in ticks])
    ax.set_xticks([], minor=True)
