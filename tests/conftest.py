"""Suite-wide pytest hooks.

``DELIGHT_GYM_REQUIRE_OPTIONAL=1`` (set by ``.ci/run``) turns a test that skips because bsuite,
Ray, the docs toolchain (mkdocs, mkdocstrings) or JAX (the paper's own code,
``tests/test_bench_vs_paper.py``) could not be imported into a failure. The bsuite equality test
(``tests/test_envs_deep_sea.py``) and the Ray backend test (``tests/test_runner.py``) are the
only checks of two of the library's promises; without this they would skip silently wherever
``pip install -e ".[dev,ray,bsuite]"`` was not run. Contributors who install only ``.[dev]`` and
leave the variable unset see them skipped, as before.
"""

from __future__ import annotations

import os
from collections.abc import Generator

import pytest

REQUIRE_OPTIONAL_ENV = "DELIGHT_GYM_REQUIRE_OPTIONAL"


def pytest_configure(config: pytest.Config) -> None:
    """Torch on one thread for the whole suite (and, through the environment, for the CLI and
    example subprocesses): on two busy cores torch's default pool made one SB3 training an order
    of magnitude slower. The library itself never changes the thread count."""
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("MKL_NUM_THREADS", "1")
    import torch

    torch.set_num_threads(1)


# The top-level packages whose absence must not skip a test when REQUIRE_OPTIONAL_ENV is "1".
REQUIRED_OPTIONAL_MODULES = ("bsuite", "ray", "mkdocs", "mkdocstrings_handlers", "jax")


def _skip_reason(report: pytest.TestReport) -> str:
    """The text of a skip: ``longrepr`` is ``(path, lineno, "Skipped: ...")`` for skips."""
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2])
    return str(longrepr)


def _missing_required_module(reason: str) -> str | None:
    """The required module named by a ``pytest.importorskip`` skip reason, if any.

    ``importorskip("bsuite.environments.deep_sea")`` skips with
    ``could not import 'bsuite.environments.deep_sea': ...``.
    """
    for module in REQUIRED_OPTIONAL_MODULES:
        if f"could not import '{module}'" in reason or f"could not import '{module}." in reason:
            return module
    return None


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if report.skipped and os.environ.get(REQUIRE_OPTIONAL_ENV) == "1":
        reason = _skip_reason(report)
        module = _missing_required_module(reason)
        if module is not None:
            report.outcome = "failed"
            report.longrepr = (
                f"{item.nodeid} must run, not skip, when {REQUIRE_OPTIONAL_ENV}=1 (as in .ci/run): "
                f'{reason}. Install the extras: pip install -e ".[dev,ray,bsuite,docs,paper]".'
            )
    return report
