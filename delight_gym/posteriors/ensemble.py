"""An ensemble of Q-heads with randomized prior functions: a value posterior for deep RL.

:class:`EnsembleQPosterior` follows Osband, Aslanides & Cassirer 2018, "Randomized prior
functions for deep reinforcement learning" (bsuite's ``boot_dqn``): ``K`` heads
``Q_k = f_k + β p_k``, each trained by Q-learning on the same (optionally bootstrap-masked)
transitions with its own target network. EI is exact for the ensemble's empirical
distribution, ``EI(s, a) = (1/K) Σ_k (Q_k(s, a) − v_s)^+``.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import torch
from gymnasium import spaces

from delight_gym._checks import (
    check_choice,
    check_device,
    check_finite_array,
    check_positive_float,
    check_positive_int,
    check_probabilities,
    check_probability,
    check_seed,
    check_would_fit,
)
from delight_gym.de.posterior import BASELINES, PosteriorValues, check_baseline, host_baseline
from delight_gym.posteriors.arguments import check_fraction, check_head, seeded_generator
from delight_gym.posteriors.boot_dqn_defaults import BOOT_DQN_DEFAULTS, check_replay_options
from delight_gym.posteriors.ensemble_inputs import (
    ENCODINGS,
    Transitions,
    as_device_tensor,
    one_hot_indices,
)
from delight_gym.posteriors.ensemble_network import (
    DEFAULT_HIDDEN_SIZES,
    DEFAULT_NUM_HEADS,
    DEFAULT_PRIOR_SCALE,
    EnsembleQNetwork,
)
from delight_gym.posteriors.ensemble_td import TDStepStats, ensemble_td_step

__all__ = [
    "DEFAULT_HIDDEN_SIZES",
    "DEFAULT_NUM_HEADS",
    "DEFAULT_PRIOR_SCALE",
    "ENCODINGS",
    "EnsembleQNetwork",
    "EnsembleQPosterior",
    "TDStepStats",
    "Transitions",
    "ensemble_expected_improvement",
    "ensemble_values",
    "one_hot_indices",
]


def ensemble_expected_improvement(head_values: Any, baseline: Any) -> Any:
    """Exact EI of an ensemble's empirical posterior, ``(1/K) Σ_k (Q_k(s, a) − v_s)^+``, from
    ``head_values`` ``(K, ..., A)`` and ``baseline`` ``(...)`` (arrays or tensors alike):
    ``(..., A)``, in the type, dtype and device of ``head_values``."""
    gap = head_values - baseline[None, ..., None]
    if isinstance(gap, torch.Tensor):
        return gap.clamp_min(0.0).mean(dim=0)
    return np.maximum(gap, 0.0).mean(axis=0)


def ensemble_values(
    head_values: Any, host_probs: Any, baseline: str = "host"
) -> tuple[Any, Any, Any]:
    """What one DE decision needs from head values ``(K, n, A)`` and ``host_probs`` ``(n, A)``
    of the same type: the heads' mean ``(n, A)``, the baseline ``v_s`` ``(n,)``
    (:func:`~delight_gym.de.posterior.host_baseline`) and the exact EI ``(n, A)``."""
    means = head_values.mean(0)
    base = host_baseline(means, host_probs, baseline)
    return means, base, ensemble_expected_improvement(head_values, base)


class EnsembleQPosterior:
    """``K`` Q-heads with randomized priors, trained by TD: a ``ValuePosterior`` over ``Q(s, ·)``.

    Counters: ``transitions`` (given to :meth:`update`) and ``sgd_steps`` (gradient steps).
    The defaults are :data:`~delight_gym.posteriors.boot_dqn_defaults.BOOT_DQN_DEFAULTS`.

    Parameters
    ----------
    observation_space : gymnasium.spaces.Discrete or gymnasium.spaces.Box
        Box observations of any shape are flattened.
    action_space : gymnasium.spaces.Discrete or int
        The actions, or their number ``A``.
    gamma, learning_rate, batch_size, buffer_size :
        The discount; Adam's step size; transitions per gradient step; replay capacity.
    learning_starts, sgd_period, target_update_period : int
        Transitions before the first gradient step, and per step; steps per target copy.
    mask_prob : float
        A transition's probability of being in a head's bootstrap sample, in ``(0, 1]``.
    device, seed :
        Where the heads live; the seed of the posterior's CPU ``torch.Generator``.
    **network_options
        :class:`EnsembleQNetwork`'s ``num_heads``, ``hidden_sizes``, ``prior_scale``,
        ``encoding``.
    """

    def __init__(
        self,
        observation_space: Any,
        action_space: Any,
        *,
        gamma: float = BOOT_DQN_DEFAULTS.gamma,
        learning_rate: float = BOOT_DQN_DEFAULTS.learning_rate,
        batch_size: int = BOOT_DQN_DEFAULTS.batch_size,
        buffer_size: int = BOOT_DQN_DEFAULTS.buffer_size,
        learning_starts: int = BOOT_DQN_DEFAULTS.learning_starts,
        sgd_period: int = BOOT_DQN_DEFAULTS.sgd_period,
        target_update_period: int = BOOT_DQN_DEFAULTS.target_update_period,
        mask_prob: float = BOOT_DQN_DEFAULTS.mask_prob,
        device: Any = "cpu",
        seed: int | None = None,
        **network_options: Any,
    ) -> None:
        if isinstance(action_space, spaces.Discrete):
            if int(action_space.start) != 0:
                raise ValueError("action_space must start at 0")
            num_actions = int(action_space.n)
        elif isinstance(action_space, numbers.Integral) and not isinstance(action_space, bool):
            num_actions = int(action_space)
        else:
            raise TypeError(
                "action_space must be a gymnasium Discrete space or an int, got "
                f"{type(action_space).__name__}"
            )
        self.num_actions = check_positive_int(num_actions, "action_space")
        self.gamma = check_probability(gamma, "gamma")
        self.learning_rate = check_positive_float(learning_rate, "learning_rate")
        self.batch_size, self.buffer_size, self.learning_starts = check_replay_options(
            batch_size, buffer_size, learning_starts
        )
        self.sgd_period = check_positive_int(sgd_period, "sgd_period")
        self.target_update_period = check_positive_int(target_update_period, "target_update_period")
        self.mask_prob = check_fraction(mask_prob, "mask_prob")
        self.seed = check_seed(seed)
        self.generator = seeded_generator(self.seed)
        dev = check_device(device)
        if "generator" in network_options:
            raise TypeError("generator is the posterior's own (seeded by seed); remove it")
        network = EnsembleQNetwork(
            observation_space, self.num_actions, generator=self.generator, **network_options
        )
        if dev.type != "cpu":  # it was built on the CPU, and checked there
            sizes = (network.input_dim, *network.hidden_sizes, self.num_actions)
            check_would_fit(
                network.training_bytes(sizes, network.num_heads),
                network.size_description(sizes),
                dev,
            )
        self.network = network.to(dev)
        self.num_heads = self.network.num_heads
        self.observation_space = observation_space
        self.optimizer = torch.optim.Adam(
            self.network.parameters(), lr=self.learning_rate, fused=dev.type in ("cpu", "cuda")
        )
        self.transitions = 0
        self.sgd_steps = 0
        self._buffer: dict[str, torch.Tensor] = {}
        self._buffer_pos = 0
        self._buffer_len = 0

    @property
    def device(self) -> torch.device:
        """Where the heads live."""
        return self.network.device

    def head_values_tensor(self, observations: Any) -> torch.Tensor:
        """Every head's values ``(K, n, A)`` as a float32 tensor on :attr:`device` (no graph)."""
        with torch.no_grad():
            return self.network(self.network.encode(observations))

    def head_values(self, observations: Any) -> np.ndarray:
        """Every head's ``Q_k(s, a)``: float64 ``(K, n, A)`` for ``n`` observations.

        Examples
        --------
        >>> from gymnasium import spaces
        >>> post = EnsembleQPosterior(spaces.Discrete(3), 2, num_heads=4, seed=0)
        >>> post.head_values([0, 2]).shape
        (4, 2, 2)
        >>> ei = post.expected_improvement([0], post.mean([0]).max(axis=1))
        >>> bool((ei >= 0).all())
        True
        """
        return self.head_values_tensor(observations).double().cpu().numpy()

    def q_values(self, observations: Any, head: int) -> np.ndarray:
        """Head ``head``'s ``Q_head(s, a)``: float64 ``(n, A)``."""
        return self.head_values(observations)[check_head(head, self.num_heads)]

    def mean(self, observations: Any) -> np.ndarray:
        """The heads' mean ``(1/K) Σ_k Q_k(s, a)``: float64 ``(n, A)``."""
        return self.head_values_tensor(observations).double().mean(dim=0).cpu().numpy()

    def expected_improvement(self, observations: Any, baseline: Any) -> np.ndarray:
        """``(1/K) Σ_k (Q_k(s_i, a) − baseline_i)^+`` for a finite ``(n,)`` baseline: float64
        ``(n, A)``."""
        q = self.head_values_tensor(observations).double()
        base = torch.as_tensor(check_baseline(baseline, q.shape[1]), device=q.device)
        return ensemble_expected_improvement(q, base).cpu().numpy()

    def evaluate(
        self, observations: Any, host_probs: Any, baseline: str = "host"
    ) -> PosteriorValues:
        """Float64 means ``(n, A)``, baseline ``(n,)`` and EI ``(n, A)`` computed on
        :attr:`device`, copied to the host once; ``host_probs`` ``(n, A)`` holds a
        distribution per row (``None`` allowed for ``baseline="max"``)."""
        check_choice(baseline, BASELINES, "baseline")
        q = self.head_values_tensor(observations).double()
        n, a = q.shape[1], q.shape[2]
        if host_probs is None and baseline == "max":
            host_probs = np.full((n, a), 1.0 / a)  # unused by the "max" baseline
        checked = check_finite_array(host_probs, "host_probs", shape=(n, a))
        check_probabilities(checked, "host_probs")
        return self._evaluate(q, checked, baseline)

    def evaluate_unchecked(
        self, observations: Any, host_probs: np.ndarray, baseline: str = "host"
    ) -> PosteriorValues:
        """:meth:`evaluate` for a float64 ``(n, A)`` ``host_probs`` and a ``baseline`` the
        caller has checked (as the Discrete engine does), checking neither again."""
        return self._evaluate(self.head_values_tensor(observations).double(), host_probs, baseline)

    def _evaluate(self, q: torch.Tensor, host_probs: np.ndarray, baseline: str) -> PosteriorValues:
        n, a = q.shape[1], q.shape[2]
        probs = torch.as_tensor(host_probs, device=q.device)
        means, base, ei = ensemble_values(q, probs, baseline)
        out = torch.cat([means, base[:, None], ei], dim=1).cpu().numpy()  # one copy
        return PosteriorValues(out[:, :a], out[:, a], out[:, a + 1 :].reshape(n, a))

    def td_step(self, batch: Transitions) -> TDStepStats:
        """One Adam step of every head on a batch of transitions, checked as
        :meth:`EnsembleQNetwork.check_transitions` checks it: the loss before the step and the
        TD targets' std. The targets are not copied."""
        return self._step(self.network.check_transitions(batch))

    def _step(self, batch: Transitions) -> TDStepStats:
        return ensemble_td_step(self.network, self.optimizer, batch, self.gamma)

    def update_target(self) -> None:
        """Copy the trainable heads into their target networks."""
        self.network.update_target()

    def update(
        self,
        observations: Any,
        actions: Any,
        rewards: Any,
        next_observations: Any,
        terminated: Any,
        truncated: Any = None,
    ) -> None:
        """Store ``n`` transitions and take the gradient steps they are due.

        ``next_observations`` is the real next observation (the final one of an ended
        episode); ``truncated`` is ignored (a truncated transition bootstraps like any other).
        Bad input raises as :meth:`EnsembleQNetwork.check_transitions`, changing nothing.
        """
        dev = self.device
        net = self.network
        checked = net.check_transitions(
            Transitions(observations, next_observations, actions, rewards, terminated)
        )
        n = checked.actions.shape[0]
        shape = (n, *net.obs_shape)  # (n,) for Discrete observations given as (n, 1)
        rows = {
            "observations": as_device_tensor(observations, dev).reshape(shape),
            "next_observations": as_device_tensor(next_observations, dev).reshape(shape),
            "actions": checked.actions,
            "rewards": checked.rewards,
            "terminated": checked.terminated.bool(),
        }
        if self.mask_prob < 1:
            draw = torch.rand((n, self.num_heads), generator=self.generator)
            rows["masks"] = (draw < self.mask_prob).to(dev)
        self._store(rows)
        before = self.transitions
        self.transitions += n
        # One step per sgd_period boundary crossed by this batch.
        due = self.transitions // self.sgd_period - before // self.sgd_period
        if self.transitions < max(self.learning_starts, 1):
            return
        for _ in range(due):
            idx = torch.randint(self._buffer_len, (self.batch_size,), generator=self.generator)
            rows = {k: v[idx.to(v.device)] for k, v in self._buffer.items()}
            batch = Transitions(masks=rows.pop("masks", None), **rows)
            self._step(self.network.inputs.convert(batch, dev))  # checked when stored
            self.sgd_steps += 1
            if self.sgd_steps % self.target_update_period == 0:
                self.update_target()

    def _store(self, rows: dict[str, torch.Tensor]) -> None:
        # A ring buffer, allocated on the first transitions (their dtypes and shapes).
        n = len(rows["actions"])
        if n == 0:
            return
        if not self._buffer:
            row_bytes = sum(v[0].numel() * v.element_size() for v in rows.values())
            check_would_fit(
                self.buffer_size * row_bytes, f"buffer_size={self.buffer_size}", self.device
            )
            self._buffer = {
                k: torch.zeros((self.buffer_size, *v.shape[1:]), dtype=v.dtype, device=v.device)
                for k, v in rows.items()
            }
        for start in range(0, n, self.buffer_size):  # a batch larger than the buffer wraps
            chunk = {k: v[start : start + self.buffer_size] for k, v in rows.items()}
            m = len(chunk["actions"])
            pos = (self._buffer_pos + torch.arange(m)) % self.buffer_size
            for k, v in chunk.items():
                self._buffer[k][pos.to(v.device)] = v.to(self._buffer[k].dtype)
            self._buffer_pos = int((self._buffer_pos + m) % self.buffer_size)
            self._buffer_len = min(self._buffer_len + m, self.buffer_size)

    def state_dict(self) -> dict[str, Any]:
        """Heads, priors, targets, optimizer, generator, replay buffer and counters."""
        return {
            "network": self.network.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "generator": self.generator.get_state(),
            "buffer": {k: v.clone() for k, v in self._buffer.items()},
            "buffer_pos": self._buffer_pos,
            "buffer_len": self._buffer_len,
            "transitions": self.transitions,
            "sgd_steps": self.sgd_steps,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore a :meth:`state_dict` (into a posterior built with the same settings)."""
        self.network.load_state_dict(state["network"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.generator.set_state(state["generator"])
        self._buffer = {k: v.clone().to(self.device) for k, v in state["buffer"].items()}
        self._buffer_pos = int(state["buffer_pos"])
        self._buffer_len = int(state["buffer_len"])
        self.transitions = int(state["transitions"])
        self.sgd_steps = int(state["sgd_steps"])

    def __repr__(self) -> str:
        net = self.network
        return (
            f"{type(self).__name__}(num_heads={net.num_heads}, hidden_sizes={net.hidden_sizes}, "
            f"prior_scale={net.prior_scale}, encoding={net.encoding!r}, device={self.device})"
        )
