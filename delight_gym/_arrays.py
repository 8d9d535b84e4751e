"""numpy or torch: the one test the package uses to tell a tensor from an array.

torch is never imported here: a value can only be a tensor if torch was imported already.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

__all__ = ["array_namespace", "is_torch"]


def is_torch(x: Any) -> bool:
    """Whether ``x`` is a ``torch.Tensor`` (``False`` whenever torch is not imported)."""
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.Tensor)


def array_namespace(x: Any) -> Any:
    """The array functions for ``x``: the ``torch`` module for a tensor, ``numpy`` otherwise."""
    return sys.modules["torch"] if is_torch(x) else np
