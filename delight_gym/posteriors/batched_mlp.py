"""``N`` independent ReLU MLPs as one set of tensors (seeds, or seeds × heads), and the
per-model optimizer step of the Deep Bayesian Bandits Showdown's networks.

Layer ``l`` of model ``j`` is ``weights[l][j]`` ``(in, out)`` and ``biases[l][j]`` ``(1, out)``;
a forward pass is one batched matrix product per layer (no Python loop over models). The last
layer has one output per model group ``g`` (per arm, or 1 shared): :meth:`BatchedMLP.forward`
returns, for each input, the output column it asks for. Model ``j`` is initialised from
``generators[j // models_per_generator]`` only, so a batch of models equals models built one by
one. :class:`ObservationBuffer` keeps every row's observations for retraining.
:func:`rmsprop_step` is TensorFlow 1's RMSProp (``ms`` starts at 1, ``ε = 1e-10``) after a
per-model global-norm clip, both per model, so the rows of a batch stay independent.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import torch
from torch import nn

from delight_gym._checks import check_positive_float, check_positive_int

__all__ = ["INITS", "BatchedMLP", "ObservationBuffer", "rmsprop_step"]

#: Weight initialisations: ``"uniform"`` on ``[−init_scale, init_scale]`` (the showdown's), or
#: ``"trunc_normal"`` with std ``1/√fan_in`` cut at two std (haiku's ``Linear``, bsuite's);
#: biases start at 0 either way.
INITS = ("uniform", "trunc_normal")


class BatchedMLP(nn.Module):
    """``N`` ReLU MLPs with layer sizes ``sizes = (in, hidden..., groups)``.

    Parameters
    ----------
    num_models : int
        ``N``.
    sizes : sequence of int
        Input size, hidden sizes, number of outputs ``G``.
    generators : sequence of torch.Generator
        CPU generators; model ``j`` draws its weights from
        ``generators[j // (N / len(generators))]`` (``len(generators)`` must divide ``N``).
    init : str, default "uniform"
        One of :data:`INITS`.
    init_scale : float, default 0.3
        Half-width of the uniform initialisation.
    device : torch.device, optional
    dtype : torch.dtype, default torch.float32
    """

    def __init__(
        self,
        num_models: int,
        sizes: Sequence[int],
        *,
        generators: Sequence[torch.Generator],
        init: str = "uniform",
        init_scale: float = 0.3,
        device: Any = None,
        dtype: torch.dtype = torch.float32,
    ) -> None:
        super().__init__()
        self.num_models = check_positive_int(num_models, "num_models")
        self.sizes = tuple(check_positive_int(s, "sizes") for s in sizes)
        if len(self.sizes) < 3:
            raise ValueError(f"sizes must hold an input, >= 1 hidden and an output size: {sizes}")
        if init not in INITS:
            raise ValueError(f"init must be one of {INITS}, got {init!r}")
        scale = check_positive_float(init_scale, "init_scale")
        gens = list(generators)
        if not gens or self.num_models % len(gens):
            raise ValueError(f"len(generators) must divide num_models = {self.num_models}")
        per = self.num_models // len(gens)
        layers: list[list[torch.Tensor]] = [[] for _ in range(len(self.sizes) - 1)]
        for j in range(self.num_models):
            gen = gens[j // per]
            for layer, (fan_in, fan_out) in enumerate(itertools.pairwise(self.sizes)):
                w = torch.empty(fan_in, fan_out)
                if init == "uniform":
                    w.uniform_(-scale, scale, generator=gen)
                else:
                    std = 1.0 / math.sqrt(fan_in)
                    nn.init.trunc_normal_(w, 0.0, std, -2 * std, 2 * std, generator=gen)
                layers[layer].append(w)
        self.weights = nn.ParameterList(
            nn.Parameter(torch.stack(ws).to(device=device, dtype=dtype)) for ws in layers
        )
        self.biases = nn.ParameterList(
            nn.Parameter(torch.zeros(self.num_models, 1, fan_out, device=device, dtype=dtype))
            for fan_out in self.sizes[1:]
        )

    @property
    def num_outputs(self) -> int:
        """``G``, the last layer's width."""
        return self.sizes[-1]

    def _layers(self, models: torch.Tensor | None) -> list[tuple[torch.Tensor, torch.Tensor]]:
        pairs = list(zip(self.weights, self.biases, strict=True))
        if models is None:
            return pairs
        return [(w[models], b[models]) for w, b in pairs]

    def hidden(self, inputs: torch.Tensor, models: torch.Tensor | None = None) -> torch.Tensor:
        """The last hidden layer (after its ReLU): ``(N, n, hidden[-1])``.

        Parameters
        ----------
        inputs : torch.Tensor
            ``(N, n, in)`` (or ``(M, n, in)`` for ``M`` selected ``models``).
        models : torch.Tensor, optional
            int64 ``(M,)``: use only these models.
        """
        h = inputs
        for w, b in self._layers(models)[:-1]:
            h = torch.relu(torch.baddbmm(b, h, w))
        return h

    def head(
        self, hidden: torch.Tensor, columns: torch.Tensor, models: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Output ``columns[j, i]`` of the last layer for each hidden row: ``(N, n)``.

        Parameters
        ----------
        hidden : torch.Tensor
            ``(N, n, h)`` from :meth:`hidden`.
        columns : torch.Tensor
            int64 ``(N, n)`` in ``[0, G)`` (broadcastable, e.g. ``(1, n)``).
        models : torch.Tensor, optional
            As for :meth:`hidden`.
        """
        w, b = self._layers(models)[-1]
        if self.num_outputs == 1:
            return torch.baddbmm(b, hidden, w)[..., 0]
        cols = columns.expand(hidden.shape[0], hidden.shape[1])
        w_sel = w.mT.gather(1, cols[..., None].expand(*cols.shape, hidden.shape[2]))
        return (hidden * w_sel).sum(-1) + b[:, 0].gather(1, cols)

    def forward(
        self, inputs: torch.Tensor, columns: torch.Tensor, models: torch.Tensor | None = None
    ) -> torch.Tensor:
        """``head(hidden(inputs), columns)``: ``(N, n)``."""
        return self.head(self.hidden(inputs, models), columns, models)


def rmsprop_step(
    params: Sequence[torch.Tensor],
    mean_squares: Sequence[torch.Tensor],
    learning_rate: float,
    *,
    max_grad_norm: float,
    decay: float = 0.9,
    eps: float = 1e-10,
) -> None:
    """One TensorFlow-1 RMSProp step per model after clipping each model's global gradient norm.

    For each model ``j`` (the leading axis of every parameter): ``g ← g · c/max(‖g‖, c)`` with
    ``‖g‖`` over all of model ``j``'s gradients and ``c = max_grad_norm``; then
    ``ms ← decay·ms + (1 − decay)·g²``, ``p ← p − lr·g/√(ms + eps)``.

    Parameters
    ----------
    params : sequence of torch.Tensor
        ``(N, ...)`` parameters with ``.grad`` set.
    mean_squares : sequence of torch.Tensor
        Their RMSProp accumulators (same shapes; start them at 1, as TensorFlow 1 does).
    learning_rate, max_grad_norm, decay, eps : float
    """
    grads = [p.grad for p in params]
    if any(g is None for g in grads):
        raise ValueError("every parameter needs a gradient")
    n = params[0].shape[0]
    sq = sum(g.reshape(n, -1).square().sum(1) for g in grads if g is not None)
    norm = torch.as_tensor(sq).sqrt()
    factor = max_grad_norm / torch.clamp(norm, min=max_grad_norm)
    with torch.no_grad():
        for p, g, ms in zip(params, grads, mean_squares, strict=True):
            assert g is not None
            g = g * factor.reshape(n, *([1] * (g.ndim - 1)))
            ms.mul_(decay).addcmul_(g, g, value=1.0 - decay)
            p.sub_(learning_rate * g / (ms + eps).sqrt())


class ObservationBuffer:
    """Every observation so far of ``B`` rows, one per row per :meth:`add` (capacity doubles).

    Parameters
    ----------
    batch_size, input_dim : int
    device : torch.device
    dtype : torch.dtype
        Of the inputs and targets.
    """

    def __init__(self, batch_size: int, input_dim: int, *, device: Any, dtype: torch.dtype) -> None:
        self.size = 0
        self._inputs = torch.empty(batch_size, 64, input_dim, dtype=dtype, device=device)
        self._groups = torch.empty(batch_size, 64, dtype=torch.int64, device=device)
        self._targets = torch.empty(batch_size, 64, dtype=dtype, device=device)

    def add(self, inputs: torch.Tensor, groups: torch.Tensor, targets: torch.Tensor) -> None:
        """Append ``(B, d)`` inputs, int64 ``(B,)`` groups and ``(B,)`` targets."""
        if self.size == self._targets.shape[1]:
            self._inputs = torch.cat([self._inputs, self._inputs], dim=1)
            self._groups = torch.cat([self._groups, self._groups], dim=1)
            self._targets = torch.cat([self._targets, self._targets], dim=1)
        self._inputs[:, self.size] = inputs
        self._groups[:, self.size] = groups
        self._targets[:, self.size] = targets
        self.size += 1

    @property
    def inputs(self) -> torch.Tensor:
        """``(B, n, d)`` (a view)."""
        return self._inputs[:, : self.size]

    @property
    def groups(self) -> torch.Tensor:
        """int64 ``(B, n)`` (a view)."""
        return self._groups[:, : self.size]

    @property
    def targets(self) -> torch.Tensor:
        """``(B, n)`` (a view)."""
        return self._targets[:, : self.size]

    def sample(self, generators: Sequence[torch.Generator], steps: int, size: int) -> torch.Tensor:
        """int64 ``(B, steps, size)`` indices drawn with replacement, row ``i`` from
        ``generators[i]``."""
        draws = [torch.randint(self.size, (steps, size), generator=g) for g in generators]
        return torch.stack(draws).to(self._groups.device)

    def batch(self, idx: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Inputs ``(B, m, d)``, groups and targets ``(B, m)`` at indices ``idx`` ``(B, m)``."""
        x = self._inputs.gather(1, idx[..., None].expand(-1, -1, self._inputs.shape[2]))
        return x, self._groups.gather(1, idx), self._targets.gather(1, idx)
