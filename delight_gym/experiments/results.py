"""Results store: cells saved atomically, ``summary.csv`` and ``curves.csv``, and run records.

Each finished cell (agent, setting, seed batch) is written to ``<out>/cells/<key>.npz`` through
a temporary file and an atomic rename, so a sweep killed at any moment leaves only complete
cells; one that cannot be read is recomputed with a :class:`DamagedCellWarning`. Each output
folder's :data:`RUN_RECORD` names the settings of its results (:func:`claim_folder`), so that a
run with other settings does not overwrite them.
"""

from __future__ import annotations

import json
import os
import tempfile
import warnings
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

    from delight_gym.experiments.specs import ExperimentSpec

__all__ = [
    "OPTIONAL_PER_SEED",
    "DamagedCellWarning",
    "OtherSettingsError",
    "claim_folder",
    "mean_se",
]

SUMMARY_TAIL = ["horizon", "seeds", "regret_mean", "regret_se", "seconds"]

#: Per-seed arrays a run function may return besides ``cumulative`` and ``overrides``; when
#: every row of a summary has them, ``summary.csv`` gains columns:
#: ``first_success`` (1-based episode or round of the first success, 0 if none; DeepSea):
#: ``found_fraction`` and ``first_success_median`` (over the seeds with one).
#: ``solve_episode`` and ``solved`` (bsuite's solve episode, for an unsolved run where it
#: stopped): ``solved_fraction``, ``solve_episode_median`` (unsolved counted as never),
#: ``solve_episodes`` (per seed, ``>E`` for a run unsolved after ``E``) and ``overrides_total``.
#: ``eval_return`` and ``first_flag`` (with ``solved``; the control runs' final deterministic
#: return and first step at the goal, 0 if never): ``solved`` (seeds above the threshold),
#: ``steps_to_flag_median``, ``return_mean`` and ``return_se``.
#: ``furthest``: the control runs' furthest position in training (stored, not summarised).
OPTIONAL_PER_SEED = (
    "first_success",
    "solve_episode",
    "solved",
    "eval_return",
    "first_flag",
    "furthest",
)
SUCCESS_COLUMNS = ["found_fraction", "first_success_median"]
CONTROL_COLUMNS = ["solved", "steps_to_flag_median", "return_mean", "return_se"]
SOLVE_COLUMNS = ["solved_fraction", "solve_episode_median", "solve_episodes", "overrides_total"]


def cell_path(out: Path, key: str) -> Path:
    """Where the cell ``key`` is stored: ``out/cells/key.npz``."""
    return Path(out) / "cells" / f"{key}.npz"


def save_cell(
    out: Path, key: str, arrays: Mapping[str, np.ndarray], meta: Mapping[str, Any]
) -> Path:
    """Write one finished cell atomically to ``out/cells/key.npz``."""
    target = cell_path(out, key)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            payload = {"meta": np.array(json.dumps(meta, default=str)), **arrays}
            np.savez(fh, **payload)  # type: ignore[arg-type]
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return target


class DamagedCellWarning(UserWarning):
    """A stored cell file could not be used (it is recomputed); the message names the file."""


def load_cell(out: Path, key: str) -> tuple[dict[str, np.ndarray], dict[str, Any]] | None:
    """Load a finished cell: ``(arrays, meta)``, or ``None`` if it has not been computed yet or
    its file cannot be read (then with a :class:`DamagedCellWarning` naming the file)."""
    path = cell_path(out, key)
    if not path.exists():
        return None
    try:
        with np.load(path) as data:
            arrays = {k: data[k] for k in data.files if k != "meta"}
            meta = json.loads(str(data["meta"]))
        if not isinstance(meta, dict):
            raise ValueError("meta is not a JSON object")
    except (OSError, EOFError, ValueError, KeyError, zipfile.BadZipFile) as exc:
        warnings.warn(
            f"cell file {path} is damaged ({type(exc).__name__}: {exc}); recomputing it",
            DamagedCellWarning,
            stacklevel=2,
        )
        return None
    return arrays, meta


def mean_se(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard error (``std(ddof=1)/√n``; NaN for one seed) over the first axis
    (seeds) of ``values``, e.g. cumulative regret curves ``(seeds, T)`` -> two ``(T,)``."""
    values = np.asarray(values, dtype=float)
    n = values.shape[0]
    mean = values.mean(axis=0)
    se = values.std(axis=0, ddof=1) / np.sqrt(n) if n > 1 else np.full_like(mean, np.nan)
    return mean, se


def summary_frame(
    rows: Sequence[Mapping[str, Any]], setting_columns: Sequence[str], *, metric: str = "regret"
) -> pd.DataFrame:
    """Build ``summary.csv``: ``experiment, agent, <settings>, horizon, seeds, ...``.

    Each row holds ``experiment``, ``agent``, the settings, ``horizon``, ``seconds`` and
    ``final_regret`` (per-seed cumulative regret at the horizon), and maybe the arrays of
    :data:`OPTIONAL_PER_SEED`. ``metric`` names the curve's value (``regret_mean``,
    ``regret_se``; the control families: ``solved``).
    """
    import pandas as pd  # here, not at the top: a pool worker imports this module, not pandas

    records = []
    with_success = bool(rows) and all("first_success" in row for row in rows)
    with_solve = bool(rows) and all("solve_episode" in r and "solved" in r for r in rows)
    with_control = bool(rows) and all("eval_return" in r for r in rows)
    for row in rows:
        final = np.asarray(row["final_regret"], dtype=float)
        mean, se = mean_se(final[:, None])
        rec = {"experiment": row["experiment"], "agent": row["agent"]}
        rec.update({c: row[c] for c in setting_columns})
        rec.update(
            horizon=row["horizon"],
            seeds=final.shape[0],
            **{f"{metric}_mean": float(mean[0]), f"{metric}_se": float(se[0])},
            seconds=float(row["seconds"]),
        )
        if with_success:
            first = np.asarray(row["first_success"])
            found = first[first > 0]
            rec["found_fraction"] = float(found.size / first.size)
            rec["first_success_median"] = float(np.median(found)) if found.size else np.nan
        if with_solve:
            episode = np.asarray(row["solve_episode"], dtype=np.int64)
            solved = np.asarray(row["solved"], dtype=bool)
            rec["solved_fraction"] = float(solved.mean())
            rec["solve_episode_median"] = float(np.median(np.where(solved, episode, np.inf)))
            rec["solve_episodes"] = " ".join(
                str(e) if ok else f">{e}" for e, ok in zip(episode, solved, strict=True)
            )
            rec["overrides_total"] = int(np.sum(row.get("overrides", 0)))
        if with_control:
            returns = np.asarray(row["eval_return"], dtype=float)
            flags = np.asarray(row["first_flag"], dtype=np.int64)
            flags = flags[flags > 0]
            rec["solved"] = int(np.sum(row["solved"]))
            rec["steps_to_flag_median"] = float(np.median(flags)) if flags.size else np.nan
            rec["return_mean"] = float(returns.mean())
            rec["return_se"] = float(mean_se(returns[:, None])[1][0])
        records.append(rec)
    tail = [c.replace("regret", metric) for c in SUMMARY_TAIL]
    columns = ["experiment", "agent", *setting_columns, *tail]
    columns += (SUCCESS_COLUMNS if with_success else []) + (SOLVE_COLUMNS if with_solve else [])
    columns += CONTROL_COLUMNS if with_control else []
    return pd.DataFrame.from_records(records, columns=columns)


def parse_solve_episodes(text: str) -> tuple[np.ndarray, np.ndarray]:
    """Read back a ``solve_episodes`` cell of ``summary.csv``: the per-seed episodes (int64) and
    solved flags. ``parse_solve_episodes("20 >1124")`` is ``([20, 1124], [True, False])``."""
    if not isinstance(text, str) or not text.split():
        raise ValueError(f"text must hold space-separated solve episodes, got {text!r}")
    parts = text.split()
    solved = np.array([not p.startswith(">") for p in parts], dtype=bool)
    episodes = np.array([int(p.removeprefix(">")) for p in parts], dtype=np.int64)
    return episodes, solved


def curves_frame(
    rows: Sequence[Mapping[str, Any]], setting_columns: Sequence[str], *, metric: str = "regret"
) -> pd.DataFrame:
    """Build ``curves.csv``: one row per (agent, setting, t), the curve's mean ± s.e.
    (``regret_mean``, ``regret_se``, named after ``metric``), from rows holding
    ``experiment``, ``agent``, the settings and ``cumulative`` ``(seeds, T)``; ``t`` runs from 1
    to ``T`` or is the row's ``t`` (checkpoints)."""
    import pandas as pd

    frames = []
    for row in rows:
        mean, se = mean_se(np.asarray(row["cumulative"], dtype=float))
        t = np.arange(1, mean.shape[0] + 1) if row.get("t") is None else np.asarray(row["t"])
        columns = {c: row[c] for c in ["experiment", "agent", *setting_columns]}
        frames.append(pd.DataFrame({**columns, "t": t, f"{metric}_mean": mean, f"{metric}_se": se}))
    return pd.concat(frames, ignore_index=True)


def write_tables(out: Path, summary: pd.DataFrame, curves: pd.DataFrame) -> None:
    """Write ``summary.csv`` and ``curves.csv`` into ``out`` (atomically, file by file)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for name, frame in (("summary.csv", summary), ("curves.csv", curves)):
        tmp = out / f".{name}.tmp"
        frame.to_csv(tmp, index=False)
        os.replace(tmp, out / name)


def format_summary(summary: pd.DataFrame) -> str:
    """The summary table as printed at the end of a run (two decimals, ``-`` for n/a)."""
    return summary.to_string(index=False, float_format=lambda x: f"{x:.2f}", na_rep="-")


# -- run records: which settings an output folder's results are of ----------------------------

#: The file in each output folder that records the settings of its results.
RUN_RECORD = "run.json"


class OtherSettingsError(ValueError):
    """An output folder holds the results of other settings; ``folder`` is it, ``differences``
    names each field that differs (``arms 10,100 → 1000``, :func:`record_differences`)."""

    def __init__(self, folder: Path, differences: list[str]) -> None:
        super().__init__(
            f"{str(folder)!r} holds the results of other settings ({'; '.join(differences)})"
        )
        self.folder = folder
        self.differences = differences


def prepare_folder(folder: Path) -> None:
    """Create ``folder`` and check that a file can be written into it; an ``OSError`` if not."""
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryFile(dir=folder):
        pass


def run_record(spec: ExperimentSpec) -> dict[str, object]:
    """What determines the results a folder holds (as JSON would read it back)."""
    record = {
        "experiment": spec.name,
        "family": spec.family.name,
        "agents": list(spec.agents),
        "settings": [dict(s) for s in spec.settings],
        "horizon": spec.horizon,
        "seeds": spec.seeds,
        "seed": spec.seed,
        "batch_size": spec.batch_size,
    }
    return json.loads(json.dumps(record, default=str))


def record_differences(old: Mapping[str, object], new: Mapping[str, object]) -> list[str]:
    """``key old → new`` for each field of two run records that differs; the settings field by
    setting key, as the sorted values each takes (``arms 10,100 → 1000``)."""

    def values(record: Mapping[str, object]) -> dict[str, str]:
        out: dict[str, str] = {}
        for key, value in record.items():
            if key != "settings":
                out[key] = ",".join(map(str, value)) if isinstance(value, list) else str(value)
                continue
            settings = [s for s in value if isinstance(s, dict)] if isinstance(value, list) else []
            for name in dict.fromkeys(k for s in settings for k in s):
                taken = {s.get(name) for s in settings}
                ordered = sorted(taken, key=lambda v: (not isinstance(v, (int, float)), str(v)))
                # All numbers: numeric order (9,10,100), not text order (10,100,9).
                numbers = sorted(v for v in taken if isinstance(v, (int, float)))
                if len(numbers) == len(taken):
                    ordered = list(numbers)
                out[name] = ",".join(map(str, ordered))
        return out

    before, after = values(old), values(new)
    return [
        f"{key} {before.get(key, '-')} → {after.get(key, '-')}"
        for key in dict.fromkeys([*after, *before])
        if before.get(key) != after.get(key)
    ]


def claim_folder(folder: Path, spec: ExperimentSpec, *, overwrite: bool = False) -> None:
    """Record ``spec``'s settings in ``folder/run.json`` (:data:`RUN_RECORD`); the same settings
    resume. A folder that holds the results of other settings raises
    :class:`OtherSettingsError` (before anything is written), unless ``overwrite``."""
    record = run_record(spec)
    path = Path(folder) / RUN_RECORD
    try:
        old = json.loads(path.read_text())
    except (OSError, ValueError):
        old = None  # a new folder (or an unreadable record): nothing to protect
    if isinstance(old, dict) and old != record and not overwrite:
        raise OtherSettingsError(Path(folder), record_differences(old, record))
    tmp = path.with_name(f".{RUN_RECORD}.tmp")
    tmp.write_text(json.dumps(record, indent=1) + "\n")
    tmp.replace(path)
