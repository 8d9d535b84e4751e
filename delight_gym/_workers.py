"""Worker processes of the package: one setup for every process it starts.

The sweep runner's pool (:mod:`delight_gym.experiments.runner`) and the figure process
(:class:`delight_gym.plotting.FigureProcess`) both start ``spawn``ed processes through
:func:`spawn_pool`: each worker leaves Ctrl-C to the process that started it, exits by itself
when that process is gone (even after ``SIGKILL``), and runs one math thread.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any

__all__ = ["spawn_pool", "stop_pool"]


def _watch_parent(parent: int) -> None:
    while True:
        if os.getppid() != parent:
            os._exit(1)
        time.sleep(0.5)


def _init_worker(parent: int, warm_up: Callable[[], Any] | None) -> None:
    """Leave Ctrl-C to the driver, exit when it is gone, use one math thread (a pool already
    has a worker per core: two threads each slow torch's small kernels ~4×), then
    ``warm_up()``."""
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ.setdefault(var, "1")
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    if warm_up is not None:
        warm_up()


def spawn_pool(workers: int, warm_up: Callable[[], Any] | None = None) -> ProcessPoolExecutor:
    """A pool of ``workers`` ``spawn``ed processes set up as the module docstring says.

    Parameters
    ----------
    workers : int
        number of processes (>= 1).
    warm_up : Callable[[], Any] | None
        a module-level function each worker calls once at start (e.g. its imports).
    """
    return ProcessPoolExecutor(
        workers,
        mp_context=mp.get_context("spawn"),
        initializer=_init_worker,
        initargs=(os.getpid(), warm_up),
    )


def stop_pool(executor: ProcessPoolExecutor) -> None:
    """Stop ``executor`` at once: end its running tasks (their work is lost) and its workers."""
    # The executor has no public way to end a running task; its processes are terminated.
    for process in list(getattr(executor, "_processes", {}).values()):
        process.terminate()
    executor.shutdown(wait=True, cancel_futures=True)
