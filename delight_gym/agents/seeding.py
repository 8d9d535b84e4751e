"""Seeds of the agents' own generators: the one ``SeedLike`` type and its torch conversions.

Every agent owns its generators (no global RNG): a ``numpy.random.Generator`` built by
``numpy.random.default_rng(seed)``, or ``torch.Generator`` objects seeded by
:func:`torch_seed` / :func:`seed_generators` from the same kind of seed. Importing this module
does not import torch.
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
    """A 63-bit integer seed for ``torch.Generator.manual_seed`` from a numpy seed.

    ``seed`` goes through ``numpy.random.SeedSequence`` (``None``: fresh OS entropy), so nearby
    integer seeds give unrelated torch streams.
    """
    seq = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
    return int(seq.generate_state(1, np.uint64)[0] >> np.uint64(1))


def seed_generators(seed: SeedLike, batch_size: int, device: Any = "cpu") -> list[Any]:
    """``batch_size`` independent ``torch.Generator`` objects on ``device`` from one seed.

    Generator ``i`` is seeded from the ``i``-th child of ``SeedSequence(seed)``, so row ``i``
    of a batch draws the same numbers whatever the batch size.
    """
    import torch

    children = np.random.SeedSequence(seed).spawn(check_positive_int(batch_size, "batch_size"))
    gens = []
    for child in children:
        g = torch.Generator(device=device)
        g.manual_seed(torch_seed(child))
        gens.append(g)
    return gens
