"""Names a package imports on first use (PEP 562), written once for every ``__init__``.

A package that keeps heavy imports (torch, SciPy, Stable-Baselines3) out of its own import
passes a table ``{name: module}`` and gets its module-level ``__getattr__``::

    _LAZY = {"LinearGaussianPosterior": "delight_gym.posteriors.linear"}
    __getattr__ = lazy_getattr(__name__, _LAZY)
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping

__all__ = ["lazy_getattr"]


def lazy_getattr(package: str, table: Mapping[str, str]) -> Callable[[str], object]:
    """A module ``__getattr__`` for ``package`` that imports ``table[name]`` on first use.

    Parameters
    ----------
    package : str
        The package's ``__name__`` (for the ``AttributeError`` message).
    table : mapping of str to str
        Each lazy name and the module that defines it.
    """

    def __getattr__(name: str) -> object:
        if name in table:
            return getattr(importlib.import_module(table[name]), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    __getattr__.__doc__ = f"Import the names of {package} that are loaded on first use (PEP 562)."
    return __getattr__
