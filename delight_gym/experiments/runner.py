"""Sweep runner: run an :class:`~delight_gym.experiments.specs.ExperimentSpec`'s cells, store
each finished one atomically, resume, and write ``summary.csv`` and ``curves.csv``.

:func:`run_experiment` loads the cells already stored under ``<cache>/cells`` and runs the
others in this process, on local worker processes (once the work left is worth
``serial_seconds`` of CPU) or on Ray. Only this process writes cell files, so every backend
stores the same files; a sweep killed at any moment recomputes nothing that finished, and a
cell file that cannot be read back is recomputed with a :class:`DamagedCellWarning`.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args

import numpy as np

from delight_gym._checks import check_choice, check_positive_int
from delight_gym._workers import spawn_pool, stop_pool
from delight_gym.experiments.results import (
    OPTIONAL_PER_SEED,
    DamagedCellWarning,
    cell_path,
    curves_frame,
    load_cell,
    save_cell,
    summary_frame,
    write_tables,
)
from delight_gym.experiments.specs import Cell, ExperimentSpec

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["SERIAL_SECONDS", "CellError", "ExperimentResult", "run_experiment"]

Backend = Literal["local", "ray"]
#: Backend names accepted by :func:`run_experiment` (and ``--backend``).
BACKENDS: tuple[str, ...] = get_args(Backend)

#: Estimated CPU seconds of work left from which ``backend="local"`` with ``jobs > 1`` starts
#: worker processes. A worker costs about a second of CPU to start (more with SciPy or torch):
#: on 2 cores a 3 CPU-second sweep ran faster in one process than with a worker.
SERIAL_SECONDS = 10.0

#: ``(cell, output)`` handler called by the backends for each finished cell.
_Finish = Callable[[Cell, dict[str, Any]], None]


class CellError(RuntimeError):
    """A cell function raised; the message names the cell."""


@dataclass
class ExperimentResult:
    """What :func:`run_experiment` returns.

    Attributes
    ----------
    spec, summary, curves
        the spec that was run; the ``summary.csv`` and ``curves.csv`` frames.
    rows
        one dict per (agent, setting): ``experiment``, ``agent``, the setting columns,
        ``setting`` (defaults filled in), ``horizon``, ``seconds``, ``cumulative`` (seeds in
        seed order, ``(seeds, horizon)``), ``final_regret`` and ``overrides`` ``(seeds,)``.
    computed, loaded, seconds
        keys of the cells computed by this call (in completion order) and of those loaded;
        wall-clock time of the call.
    """

    spec: ExperimentSpec
    summary: pd.DataFrame
    curves: pd.DataFrame
    rows: list[dict[str, Any]]
    computed: list[str]
    loaded: list[str]
    seconds: float


def default_jobs() -> int:
    """Number of CPU cores this process may use."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)  # pragma: no cover - non-Linux


def _compute_cell(
    fn: Callable[..., Any],
    agent: str,
    setting: dict[str, Any],
    horizon: int,
    seeds: int,
    seed: int,
    label: str,
) -> dict[str, Any]:
    """Run one cell (in a worker or in-process); ``setting`` holds its family's fixed keywords."""
    # One torch thread: a cell's numbers then do not depend on the cores, OMP_NUM_THREADS or
    # the backend (CPU reductions on several threads sum in another order).
    with one_math_thread():
        try:
            result = fn(agent=agent, horizon=horizon, seeds=seeds, seed=seed, **setting)
            output: dict[str, Any] = {"seconds": float(result.seconds)}
            times = getattr(result, "t", None)
            if times is not None:  # a curve at checkpoints (the control families)
                times = np.asarray(times, dtype=np.int64)
                if times.ndim != 1 or times.size == 0 or np.any(np.diff(times) <= 0):
                    raise ValueError(f"cell function returned t {times}, expected increasing steps")
                output["t"] = times
            output["cumulative"] = np.asarray(result.cumulative, dtype=float)
            for name in ("overrides", *OPTIONAL_PER_SEED):
                value = getattr(result, name, None)
                if value is None and name == "overrides":
                    value = np.zeros(seeds, dtype=np.int64)
                if value is not None:
                    output[name] = np.asarray(value)
            wrong = _wrong_shapes(output, seeds, horizon)
            if wrong:
                raise ValueError(f"cell function returned {', '.join(wrong)} for {seeds} seeds")
            return output
        except Exception as exc:
            raise CellError(f"cell {label} failed: {type(exc).__name__}: {exc}") from exc


def _wrong_shapes(arrays: dict[str, np.ndarray], seeds: int, horizon: int) -> list[str]:
    """``name shape`` of each of a cell's arrays that is missing or not of the cell's shape."""
    # Checkpointed curves (the control families) have len(t) columns, the others one per step.
    columns = arrays["t"].shape[0] if "t" in arrays else horizon
    shapes = {"cumulative": (seeds, columns), "overrides": (seeds,)}
    shapes.update({name: (seeds,) for name in OPTIONAL_PER_SEED if name in arrays})
    return [
        f"{name} {arrays[name].shape if name in arrays else 'missing'}"
        for name, shape in shapes.items()
        if name not in arrays or arrays[name].shape != shape
    ]


def _call_args(cell: Cell) -> tuple[Any, ...]:
    fn = cell.family.cell_function()
    setting = {**cell.family.fixed, **cell.setting}
    return (fn, cell.agent, setting, cell.horizon, cell.seeds, cell.seed, cell.label())


def _cost(cell: Cell) -> float:
    """Rough relative cost, to start the longest cells first (DeepSea: ~N³ per episode)."""
    size = int(cell.setting.get("size", 1))
    return float(cell.horizon * cell.seeds * max(1, int(cell.setting.get("arms", 1))) * size**3)


def _run_local(
    pending: Sequence[Cell], jobs: int, finish: _Finish, bar: Any, serial_seconds: float
) -> None:
    """Run the cells in this process, cheapest first; once the work left is estimated at
    ``serial_seconds`` of CPU or more (the CPU time of the cells done here scaled by
    :func:`_cost`) and two or more cells are left, ``jobs - 1`` workers start and take the
    longest cells left, one each at a time, their start-up overlapping this process's work."""
    # This process takes from the front, workers from the back; jobs=1: the spec's order.
    queue = sorted(pending, key=_cost) if jobs > 1 else list(pending)
    start = time.process_time()
    done_cost = 0.0
    executor: ProcessPoolExecutor | None = None
    workers = 0
    in_flight: dict[Future[dict[str, Any]], Cell] = {}
    try:
        while queue or in_flight:
            for future in [f for f in in_flight if f.done()]:
                finish(in_flight.pop(future), _pool_result(future))
            if executor is None and jobs > 1 and len(queue) > 1:
                spent = time.process_time() - start  # NaN until one cell is done: no estimate
                left = spent * sum(map(_cost, queue)) / done_cost if done_cost > 0 else float("nan")
                if serial_seconds == 0 or left >= serial_seconds:
                    workers = min(jobs - 1, len(queue) - 1)
                    executor = spawn_pool(workers)
            while executor is not None and len(queue) > 1 and len(in_flight) < workers:
                cell = queue.pop()  # the longest left
                in_flight[executor.submit(_compute_cell, *_call_args(cell))] = cell
            if queue:
                cell = queue.pop(0)
                bar.set_postfix_str(cell.label(), refresh=True)
                finish(cell, _compute_cell(*_call_args(cell)))
                done_cost += _cost(cell)
            elif in_flight:
                wait(list(in_flight), return_when=FIRST_COMPLETED)
    except BaseException:
        if executor is not None:
            stop_pool(executor)  # at once: the running cells' work is lost
        raise
    if executor is not None:
        executor.shutdown(wait=True)


@contextlib.contextmanager
def one_math_thread() -> Iterator[None]:
    """Torch on one thread for one cell, as in the pool's workers; if torch is not imported
    yet, ``OMP_NUM_THREADS=1`` for its import, so that a cell without torch does not import
    it."""
    torch = sys.modules.get("torch")
    threads = env = None
    if torch is not None:
        threads = int(torch.get_num_threads())
        torch.set_num_threads(1)
    else:
        env = os.environ.get("OMP_NUM_THREADS")
        os.environ["OMP_NUM_THREADS"] = "1"
    try:
        yield
    finally:
        if threads is None:  # torch was not imported: OMP_NUM_THREADS was set
            if env is None:
                os.environ.pop("OMP_NUM_THREADS", None)
            else:
                os.environ["OMP_NUM_THREADS"] = env
        torch = sys.modules.get("torch")
        if torch is not None:
            if threads is not None:
                torch.set_num_threads(threads)
            else:  # imported by the cell: give it the cores this process may use
                text = env or ""
                torch.set_num_threads(
                    int(text) if text.isdigit() and int(text) > 0 else default_jobs()
                )


def _pool_result(future: Future[dict[str, Any]]) -> dict[str, Any]:
    """A worker's output; a dead worker is an error that says what usually kills it."""
    try:
        return future.result()
    except BrokenProcessPool as exc:
        raise RuntimeError(
            "a worker process died. With jobs > 1 the cells run in 'spawn'ed "
            "processes: a script that calls run_experiment must be a file whose "
            "top level is guarded by `if __name__ == '__main__':`; or use jobs=1"
        ) from exc


@contextlib.contextmanager
def ray_session(jobs: int | None = None) -> Iterator[Any]:
    """Yield the ``ray`` module with Ray initialised; shut it down after if this started it.

    A Ray already initialised is used as is; otherwise ``ray.init()`` connects to
    ``RAY_ADDRESS`` or starts a local instance with ``jobs`` CPUs (all cores if ``None``).
    """
    try:
        import ray
    except ImportError as exc:
        raise ImportError(
            "backend='ray' needs Ray: pip install 'delight-gym[ray]' (or 'ray>=2.9')"
        ) from exc
    started = not ray.is_initialized()
    if started:
        options: dict[str, Any] = {}
        if not os.environ.get("RAY_ADDRESS"):
            options = {"include_dashboard": False}
            if jobs is not None:
                options["num_cpus"] = jobs
        ray.init(**options)
    try:
        yield ray
    finally:
        if started:
            ray.shutdown()


def _run_ray(pending: Sequence[Cell], jobs: int | None, finish: _Finish) -> None:
    with ray_session(jobs) as ray:
        remote = ray.remote(num_cpus=1)(_compute_cell)
        queue = sorted(pending, key=lambda c: -_cost(c))  # longest first
        limit = len(queue) if jobs is None else jobs
        in_flight: dict[Any, Cell] = {}
        try:
            while queue or in_flight:
                while queue and len(in_flight) < limit:
                    cell = queue.pop(0)
                    in_flight[remote.remote(*_call_args(cell))] = cell
                done, _ = ray.wait(list(in_flight), num_returns=1)
                for ref in done:
                    cell = in_flight.pop(ref)
                    finish(cell, ray.get(ref))
        except BaseException:
            for ref in in_flight:
                ray.cancel(ref, force=True)
            raise


def _load_checked(store: Path, cell: Cell) -> tuple[dict[str, np.ndarray], dict[str, Any]] | None:
    """The stored cell, or ``None`` if missing or damaged (then with a warning)."""
    found = load_cell(store, cell.key)
    if found is None:
        return None
    arrays, meta = found
    wrong = _wrong_shapes(arrays, cell.seeds, cell.horizon)
    if "seconds" not in meta:
        wrong.append("seconds missing")
    if wrong:
        warnings.warn(
            f"cell file {cell_path(store, cell.key)} is damaged ({', '.join(wrong)}; "
            f"expected {cell.seeds} seeds × {cell.horizon} steps); recomputing it",
            DamagedCellWarning,
            stacklevel=3,
        )
        return None
    return found


def _combine(
    spec: ExperimentSpec, stored: dict[str, tuple[dict[str, np.ndarray], dict[str, Any]]]
) -> list[dict[str, Any]]:
    by_group: dict[tuple[str, str], list[Cell]] = {}
    for cell in spec.cells():  # a setting is a dict: group by its sorted items' repr
        by_group.setdefault((cell.agent, repr(sorted(cell.setting.items()))), []).append(cell)
    rows = []
    for cells in by_group.values():
        first = cells[0]  # spec.cells() lists each group's cells in seed order
        parts = [stored[c.key] for c in cells]
        joined = {  # every cell has cumulative and overrides (checked when stored or loaded)
            name: np.concatenate([arrays[name] for arrays, _ in parts], axis=0)
            for name in ("cumulative", "overrides", *OPTIONAL_PER_SEED)
            if all(name in arrays for arrays, _ in parts)
        }
        cumulative = joined.pop("cumulative")
        row: dict[str, Any] = {"experiment": spec.name, "agent": first.agent}
        row.update({c: first.setting.get(c, np.nan) for c in spec.setting_columns})
        row.update(
            setting=dict(first.setting),
            horizon=spec.horizon,
            seconds=float(sum(meta["seconds"] for _, meta in parts)),
            cumulative=cumulative,
            final_regret=cumulative[:, -1],
            t=parts[0][0].get("t"),
            overrides=joined.pop("overrides"),
            **joined,
        )
        rows.append(row)
    return rows


def run_experiment(
    spec: ExperimentSpec,
    out: Path | str,
    *,
    jobs: int | None = None,
    backend: Backend | str = "local",
    progress: bool = True,
    cache: Path | str | None = None,
    write: bool = True,
    serial_seconds: float = SERIAL_SECONDS,
) -> ExperimentResult:
    """Run (or resume) every cell of ``spec`` and write the results tables.

    Parameters
    ----------
    spec : ExperimentSpec
        the sweep.
    out : Path | str
        folder for ``summary.csv`` and ``curves.csv``.
    jobs : int | None
        processes computing at once, this one included (default: all cores for ``local``;
        no limit for ``ray``); ``1``: every cell in this process. Whatever runs them, the
        same cells give the same numbers.
    backend : Backend | str
        ``"local"`` (this process or a process pool) or ``"ray"``.
    progress, write : bool
        show a tqdm bar (one step per cell); write ``summary.csv`` and ``curves.csv``
        (otherwise only return them).
    cache : Path | str | None
        folder whose ``cells/`` holds the cell files (default ``out``); sweeps that share
        cells can share it.
    serial_seconds : float
        ``local`` with ``jobs > 1``: estimated CPU seconds of work left from which
        ``jobs - 1`` workers start (``0``: at once; ``inf``: never).

    Returns
    -------
    ExperimentResult

    Raises
    ------
    CellError
        a cell function raised (cells finished before it are kept).
    """
    from tqdm.auto import tqdm

    check_choice(backend, list(BACKENDS), "backend")
    if jobs is not None:
        jobs = check_positive_int(jobs, "jobs")
    if not serial_seconds >= 0:  # NaN too
        raise ValueError(f"serial_seconds must be >= 0, got {serial_seconds!r}")
    start = time.perf_counter()
    out = Path(out)
    store = Path(cache) if cache is not None else out
    cells = spec.cells()
    stored: dict[str, tuple[dict[str, np.ndarray], dict[str, Any]]] = {}
    pending: list[Cell] = []
    loaded: list[str] = []
    for cell in cells:
        found = _load_checked(store, cell)
        if found is None:
            pending.append(cell)
        else:
            stored[cell.key] = found
            loaded.append(cell.key)
    computed: list[str] = []

    with tqdm(
        total=len(cells),
        initial=len(loaded),
        desc=spec.name,
        unit="cell",
        disable=not progress,
        file=sys.stderr,
        dynamic_ncols=True,
    ) as bar:

        def finish(cell: Cell, output: dict[str, Any]) -> None:
            names = ("cumulative", "t", "overrides", *OPTIONAL_PER_SEED)
            arrays = {k: np.array(output[k]) for k in names if k in output}
            meta = {**cell.key_spec(), "batch": cell.batch, "seconds": float(output["seconds"])}
            save_cell(store, cell.key, arrays, meta)
            stored[cell.key] = (arrays, meta)
            computed.append(cell.key)
            bar.set_postfix_str(cell.label(), refresh=False)
            bar.update(1)

        if pending:
            if backend == "ray":
                _run_ray(pending, jobs, finish)
            else:
                workers = jobs if jobs is not None else default_jobs()
                _run_local(pending, workers, finish, bar, serial_seconds)

    rows = _combine(spec, stored)
    metric = spec.family.metric
    summary = summary_frame(rows, spec.setting_columns, metric=metric)
    curves = curves_frame(rows, spec.setting_columns, metric=metric)
    if write:
        write_tables(out, summary, curves)
    return ExperimentResult(
        spec, summary, curves, rows, computed, loaded, time.perf_counter() - start
    )
