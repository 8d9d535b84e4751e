"""Names a package imports on first use (PEP 562), written once for every ``__init__``.

A package that keeps heavy imports (torch, SciPy, Stable-Baselines3) out of its own import
passes a table ``{name: module}`` and gets its module-level ``__getattr__``::

    _LAZY = {"LinearGaussianPosterior": "delight_gym.posteriors.linear"}
    __getattr__ = lazy_getattr(__name__, _LAZY)
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Mapping

__all__ = ["lazy_getattr"]


def lazy_getattr(
    package: str, table: Mapping[str, str], *, moved: bool = False
) -> Callable[[str], object]:
    """A module ``__getattr__`` for ``package`` that imports ``table[name]`` on first use.

    Parameters
    ----------
    package : str
        The package's ``__name__`` (used in the ``AttributeError`` message).
    table : mapping of str to str
        Each lazy name and the absolute name of the module that defines it
        (``"module:other"`` when it is defined there as ``other``: a renamed name).
    moved : bool, default False
        The names moved away from ``package``: each access warns (``DeprecationWarning``,
        naming the new home) before it is imported from there.
    """

    def __getattr__(name: str) -> object:
        if name in table:
            module, _, attr = table[name].partition(":")
            attr = attr or name
            if moved:
                warnings.warn(
                    f"{package}.{name} moved to {module}.{attr}; the old path will be removed "
                    "in the next release",
                    DeprecationWarning,
                    stacklevel=2,
                )
            return getattr(importlib.import_module(module), attr)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    __getattr__.__doc__ = f"Import the names of {package} that are loaded on first use (PEP 562)."
    return __getattr__
