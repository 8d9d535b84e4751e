"""``delight-gym reproduce theory``: run the claim checks, write the tables and the figure."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from delight_gym.plotting import new_figure, save_figure
from delight_gym.theory.claims import ClaimCheck, run_checks
from delight_gym.theory.reservoir import ReservoirRates

__all__ = ["plot_reservoir_rates", "run_theory", "write_tables"]

_COLORS = {
    "reservation": "#1f77b4",
    "delight ε=1": "#d62728",
    "delight ε=0.1": "#ff7f0e",
    "delight annealed": "#7f7f7f",
}
_MARKERS = {"marker": "o", "markersize": 3, "capsize": 2}


def plot_reservoir_rates(rates: Sequence[ReservoirRates], path_stem: Path) -> list[Path]:
    """Regret vs ``T`` on log–log axes, one panel per tail exponent ``α``: mean ± 1 s.e. per
    agent, its fitted top-decade slope in the legend, and a dashed reference line of slope
    ``α/(α+1)``. Writes ``path_stem.png`` and ``.pdf`` and returns their paths."""
    alphas = sorted({r.tail_exponent for r in rates})
    fig, axes = new_figure(1, len(alphas), figsize=(4.6 * len(alphas), 3.8))
    for ax, alpha in zip(axes[0], alphas, strict=True):
        panel = [r for r in rates if r.tail_exponent == alpha]
        for r in panel:
            t = np.asarray(r.horizons, dtype=float)
            mean, se = np.asarray(r.regret_mean), np.asarray(r.regret_se)
            label = f"{r.agent} (slope {r.slope_top:.2f})"
            ax.errorbar(t, mean, yerr=se, color=_COLORS.get(r.agent), label=label, **_MARKERS)
        pred = panel[0].predicted
        t = np.asarray(panel[0].horizons, dtype=float)
        anchor = panel[0].regret_mean[-1]
        ax.plot(t, anchor * (t / t[-1]) ** pred, "k--", lw=1, label=f"slope α/(α+1) = {pred:.2f}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(f"reservoir Beta(1, {alpha:g}): α = {alpha:g}")
        ax.set_xlabel("horizon T")
        ax.set_ylabel("regret R_T (vs upper endpoint)")
        ax.grid(alpha=0.3, which="both")
        ax.legend(frameon=False, fontsize=8)
    fig.suptitle("Horizon-priced reservation search in a reservoir: regret ~ T^(α/(α+1))")
    fig.tight_layout()
    return save_figure(fig, path_stem)


def write_tables(
    checks: Sequence[ClaimCheck], rates: Sequence[ReservoirRates], out: Path
) -> list[Path]:
    """``claims.csv`` (claim, where, verdict, measured) and ``reservoir.csv`` (agent, alpha,
    horizon, regret_mean, regret_se, slope_top, predicted) in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    claims, reservoir = out / "claims.csv", out / "reservoir.csv"
    with claims.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["claim", "where", "verdict", "measured"])
        w.writerows([c.claim, c.where, "PASS" if c.passed else "FAIL", c.measured] for c in checks)
    with reservoir.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(
            ["agent", "alpha", "horizon", "regret_mean", "regret_se", "slope_top", "predicted"]
        )
        for r in rates:
            for t, m, s in zip(r.horizons, r.regret_mean, r.regret_se, strict=True):
                w.writerow([r.agent, r.tail_exponent, t, m, s, r.slope_top, r.predicted])
    return [claims, reservoir]


def run_theory(
    out: Path, *, quick: bool = False, seed: int = 0, plot: bool = True
) -> tuple[list[ClaimCheck], list[Path]]:
    """Run every check, write the tables (and the reservoir figure) into ``out``."""
    checks, rates = run_checks(quick=quick, seed=seed)
    files = write_tables(checks, rates, out)
    if plot:
        files += plot_reservoir_rates(rates, out / "reservoir_rates")
    return checks, files
