"""``N`` independent ReLU MLPs as one set of tensors (seeds, or seeds × heads), their
observation buffer and the per-model RMSProp step of "Deep Bayesian Bandits Showdown"
(Riquelme, Tucker & Snoek 2018).

A forward pass is one batched matrix product per layer (no Python loop over models); each
model is initialised from its own generator only, so a batch of models equals models built one
by one, and every step is per model, so the rows of a batch stay independent.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import torch
from torch import nn

from delight_gym._checks import check_positive_float, check_positive_int, check_would_fit

__all__ = [
    "INITS",
    "BatchedMLP",
    "ObservationBuffer",
    "check_hidden_sizes",
    "mlp_parameter_count",
    "rmsprop_step",
]


def check_hidden_sizes(
    value: Any, name: str = "hidden_sizes", *, allow_empty: bool = False
) -> tuple[int, ...]:
    """``value`` as a non-empty (unless ``allow_empty``) tuple of positive ints."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise TypeError(
            f"{name} must be a sequence of layer widths such as (50,), got {value!r} "
            f"({type(value).__name__})"
        )
    sizes = tuple(check_positive_int(h, name) for h in value)
    if not sizes and not allow_empty:
        raise ValueError(f"{name} must hold at least one layer")
    return sizes


def mlp_parameter_count(sizes: Sequence[int]) -> int:
    """Weights and biases of one MLP with layer sizes ``sizes``."""
    return sum(a * b + b for a, b in itertools.pairwise(sizes))


#: Weight initialisations: ``"uniform"`` on ``[−init_scale, init_scale]`` (the showdown's), or
#: ``"trunc_normal"`` with std ``1/√fan_in`` cut at two std (haiku's); biases start at 0.
INITS = ("uniform", "trunc_normal")


class BatchedMLP(nn.Module):
    """``N`` ReLU MLPs with layer sizes ``(in, hidden..., G)``, ``G`` outputs (one per group).

    The posteriors build it from their checked settings: only ``init_scale`` and the memory
    needed are checked here.

    Parameters
    ----------
    num_models : int
        ``N >= 1``.
    sizes : sequence of int
        Positive: an input, at least one hidden and an output size.
    generators : sequence of torch.Generator
        CPU generators, as many as divide ``N``; model ``j`` draws from
        ``generators[j // (N / len(generators))]``.
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
        self.num_models = num_models
        self.sizes = tuple(sizes)
        scale = check_positive_float(init_scale, "init_scale")
        itemsize = torch.empty(0, dtype=dtype).element_size()
        check_would_fit(
            self.num_models * mlp_parameter_count(self.sizes) * itemsize,
            f"num_models={self.num_models} (MLPs of sizes {self.sizes})",
            device if device is not None else "cpu",
        )
        gens = list(generators)
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
        # The ParameterLists' dicts: iterating a ParameterList costs more than the small MLPs.
        w, b = self.weights._parameters.values(), self.biases._parameters.values()
        pairs: list[tuple[torch.Tensor, torch.Tensor]] = list(zip(w, b, strict=True))  # type: ignore[arg-type]
        if models is None:
            return pairs
        return [(w[models], b[models]) for w, b in pairs]

    def hidden(
        self,
        inputs: torch.Tensor,
        models: torch.Tensor | None = None,
        *,
        out: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """The last hidden layer (after its ReLU) of ``(N, n, in)`` inputs: ``(N, n, h)``.

        ``models`` (int64 ``(M,)``) runs only those; ``out`` receives the result (no graph: a
        buffer kept across calls saves a large tensor's first-touch page faults).
        """
        h = inputs
        layers = self._layers(models)[:-1]
        for layer, (w, b) in enumerate(layers):
            dest = out if layer == len(layers) - 1 else None
            h = torch.baddbmm(b, h, w, out=dest).relu_()  # in place: one pass fewer
        return h

    def head(
        self, hidden: torch.Tensor, columns: torch.Tensor, models: torch.Tensor | None = None
    ) -> torch.Tensor:
        """Output ``columns[j, i]`` (int64, broadcastable to ``(N, n)``) of the last layer for
        each ``(N, n, h)`` hidden row: ``(N, n)``."""
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

    def squared_error_gradients(
        self,
        inputs: torch.Tensor,
        columns: torch.Tensor,
        targets: torch.Tensor,
        *,
        scale: float,
        offset: torch.Tensor | None = None,
    ) -> list[torch.Tensor]:
        """Every model's gradients of ``scale · Σ_i (f_j(x_ji)[c_ji] + offset_ji − y_ji)²``,
        without an autograd graph but with autograd's operations (so its numbers).

        Parameters
        ----------
        inputs : torch.Tensor
            ``(N, n, in)``.
        columns : torch.Tensor
            int64 ``(N, n)`` in ``[0, G)``.
        targets : torch.Tensor
            ``(N, n)``.
        scale : float
            The loss's factor (``1/n`` for a mean over the batch).
        offset : torch.Tensor, optional
            ``(N, n)`` added to the outputs, held fixed (a prior function's values).

        Returns
        -------
        list of torch.Tensor
            The gradients of ``parameters()`` in their order.
        """
        num, n = targets.shape
        if num != self.num_models or inputs.shape != (num, n, self.sizes[0]):
            raise ValueError(
                f"inputs must have shape ({self.num_models}, n, {self.sizes[0]}) and targets "
                f"({self.num_models}, n), got {tuple(inputs.shape)} and {tuple(targets.shape)}"
            )
        if offset is not None and offset.shape != targets.shape:
            raise ValueError(f"offset must have shape {tuple(targets.shape)}")
        weights = [w.detach() for w in self.weights]
        biases = [b.detach() for b in self.biases]
        grad_w = [torch.empty_like(w) for w in weights]
        grad_b = [torch.empty_like(b) for b in biases]
        groups = self.num_outputs
        out_grad = torch.empty_like(targets)
        if groups > 1:
            # Model j's output column c is row j·G + c of the (N·G, h) transposed last weights.
            models = torch.arange(num, device=columns.device)[:, None]
            rows = (columns.expand(num, n) + groups * models).reshape(-1)
            w_rows = weights[-1].mT.reshape(num * groups, -1)
            b_sel = biases[-1].reshape(num * groups).index_select(0, rows).reshape(num, n)
            grad_wt = weights[-1].new_zeros(num * groups, weights[-1].shape[1])
        # On the CPU a few models at a time, so that their activations stay in the cache.
        width = max(self.sizes[1:-1]) * n * targets.element_size()
        step = num if inputs.device.type != "cpu" else max(1, _CHUNK_BYTES // width)
        for start in range(0, num, step):
            m = slice(start, start + step)
            acts = [inputs[m]]
            for w, b in zip(weights[:-1], biases[:-1], strict=True):
                acts.append(torch.baddbmm(b[m], acts[-1], w[m]).relu_())
            hidden = acts[-1]
            if groups == 1:
                pred = torch.baddbmm(biases[-1][m], hidden, weights[-1][m])[..., 0]
            else:
                rows_m = rows[start * n : (start + step) * n]
                w_sel = w_rows.index_select(0, rows_m).reshape(hidden.shape)
                pred = (hidden * w_sel).sum(-1) + b_sel[m]
            if offset is not None:
                pred = pred + offset[m]
            # Backward through the layers, each product autograd's own for forward().
            grad = torch.mul(2.0 * (pred - targets[m]), scale, out=out_grad[m])
            if groups == 1:
                grad_full = grad[..., None]
                torch.bmm(hidden.mT, grad_full, out=grad_w[-1][m])
                torch.sum(grad_full, 1, keepdim=True, out=grad_b[-1][m])
                grad_h = grad_full.bmm(weights[-1][m].mT)
            else:  # the column look-up's backward: rows added into the transposed weights
                grad_wt.index_add_(0, rows_m, (grad[..., None] * hidden).flatten(0, 1))
                grad_h = grad[..., None] * w_sel
            for layer in range(len(acts) - 2, -1, -1):
                grad_pre = torch.ops.aten.threshold_backward(grad_h, acts[layer + 1], 0)
                torch.bmm(acts[layer].mT, grad_pre, out=grad_w[layer][m])
                torch.sum(grad_pre, 1, keepdim=True, out=grad_b[layer][m])
                if layer:
                    grad_h = grad_pre.bmm(weights[layer][m].mT)
        if groups > 1:
            grad_w[-1] = grad_wt.reshape(num, groups, -1).mT.contiguous()
            grad_bt = biases[-1].new_zeros(num * groups)
            grad_b[-1] = grad_bt.index_add_(0, rows, out_grad.reshape(-1)).reshape(num, 1, groups)
        return grad_w + grad_b


#: Bytes of one activation tensor of a chunk of models in squared_error_gradients on the CPU
#: (the best measured of 128 KiB to 4 MiB, on a 1 MiB L2 cache).
_CHUNK_BYTES = 512 * 1024


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

    For each model ``j`` (the leading axis): ``g ← g · c/max(‖g‖, c)`` with ``c =
    max_grad_norm``; then ``ms ← decay·ms + (1 − decay)·g²``, ``p ← p − lr·g/√(ms + eps)``.

    Parameters
    ----------
    params : sequence of torch.Tensor
        ``(N, ...)`` parameters with ``.grad`` set.
    mean_squares : sequence of torch.Tensor
        Their accumulators (start them at 1, as TensorFlow 1 does).
    learning_rate, max_grad_norm, decay, eps : float
    """
    grads = [p.grad for p in params]
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
        """``(B, n, d)``, a view."""
        return self._inputs[:, : self.size]

    @property
    def groups(self) -> torch.Tensor:
        """int64 ``(B, n)``, a view."""
        return self._groups[:, : self.size]

    @property
    def targets(self) -> torch.Tensor:
        """``(B, n)``, a view."""
        return self._targets[:, : self.size]

    def sample(self, generators: Sequence[torch.Generator], steps: int, size: int) -> torch.Tensor:
        """``(B, steps, size)`` indices with replacement, row ``i``'s from ``generators[i]``."""
        draws = [torch.randint(self.size, (steps, size), generator=g) for g in generators]
        return torch.stack(draws).to(self._groups.device)

    def batch(self, idx: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Inputs ``(B, m, d)``, groups and targets ``(B, m)`` at indices ``idx`` ``(B, m)``."""
        x = self._inputs.gather(1, idx[..., None].expand(-1, -1, self._inputs.shape[2]))
        return x, self._groups.gather(1, idx), self._targets.gather(1, idx)
