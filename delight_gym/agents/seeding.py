"""Seeds of the agents' own generators (no global RNG): ``SeedLike`` and its torch conversions.

Importing this module does not import torch.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from delight_gym._checks import check_positive_int

__all__ = ["SeedLike", "seed_generators", "torch_seed"]

#: Anything ``numpy.random.default_rng`` and ``numpy.random.SeedSequence`` accept as a seed.
SeedLike = int | Sequence[int] | None


def torch_seed(seed: SeedLike | np.random.SeedSequence) -> int:
    """A 63-bit seed for ``torch.Generator.manual_seed`` from a numpy seed, through
    ``SeedSequence`` (``None``: OS entropy), so nearby seeds give unrelated streams."""
    seq = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    return int(seq.generate_state(1, np.uint64)[0] >> np.uint64(1))


def seed_generators(seed: SeedLike, batch_size: int, device: Any = "cpu") -> list[Any]:
    """``batch_size`` ``torch.Generator`` objects on ``device``, ``i`` seeded from the ``i``-th
    child of ``SeedSequence(seed)``: row ``i`` draws the same numbers whatever the batch size."""
    import torch

    children = np.random.SeedSequence(seed).spawn(check_positive_int(batch_size, "batch_size"))
    return [torch.Generator(device=device).manual_seed(torch_seed(c)) for c in children]
