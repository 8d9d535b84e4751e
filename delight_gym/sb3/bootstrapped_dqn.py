"""``BootstrappedDQN``: bsuite's bootstrapped DQN with randomized priors as an SB3 algorithm,
optionally with Delight-gated exploration (DE) on top.

**The agent** (Osband et al. 2016, 2018; bsuite's ``boot_dqn``, the published deep-exploration
anchor): ``K`` Q-heads with randomized priors
(:class:`~delight_gym.posteriors.ensemble.EnsembleQPosterior`, its
:class:`~delight_gym.posteriors.ensemble.EnsembleQNetwork` batched over heads); at the start of
each episode every environment of the VecEnv draws a head uniformly and acts greedily on it for
the whole episode (Thompson sampling over heads — the commitment deep exploration needs). The
heads are trained by Q-learning from SB3's replay buffer: one gradient step per environment step
once ``learning_starts`` transitions are stored, every head on the same batch (with bootstrap
masks when ``mask_prob < 1``), a hard target update every ``target_update_interval`` gradient
steps. Defaults are bsuite's (DESIGN §7) where sensible: Adam ``1e-3``, batch 128, ``γ = 0.99``,
replay 10 000, learning starts at 128, target update every 4 gradient steps, ``mask_prob = 1``,
``K = 10`` heads of ``[64, 64]`` with ``prior_scale = 3``. Like bsuite, actions come from the
heads from the first step (SB3's uniform warm-up before ``learning_starts`` is not used).

**DE on top** (``delight=True`` or a :class:`DelightSettings`/dict): the host is the episode's
head (``host="head"``, greedy) or greedy on the ensemble mean (``host="mean"``); the baseline is
:func:`~delight_gym.posteriors.base.host_baseline` of the ensemble mean under the host
(``v_s = m(s, host's action)`` by default); EI is exact for the ensemble,
``(1/K) Σ_k (Q_k(s, a) − v_s)^+``, divided by ``value_scale`` (below); then the one DE rule,
:func:`~delight_gym.rule.delight_rule`, with the paper's ``λ = 0.1``, ``L = 10``, ``M = 100``
and the two-stage draw :func:`~delight_gym.rule.sample_acting`. The clock ``t`` of
``ε_t = M/(M + t)`` counts completed episodes by default (``clock="episode"``): this agent
explores by committing a head for a whole episode, so the episode is its unit of exploration;
counting steps would make ``ε`` decay ``N`` times faster on a DeepSea of depth ``N`` and
switch DE off before the heads have seen the deep rows. ``clock="step"`` counts environment
steps (the bandits' convention).

**λ has units** (reward × surprisal, DESIGN §7). EI is divided by ``value_scale`` before the
gate: ``1.0`` (default) leaves the paper's rule unchanged, which is right for unit-scale returns
such as DeepSea's; a float fixes the environment's value unit (e.g. ~100 for CartPole);
``"auto"`` uses a running average (exponential, rate 0.01) of the standard deviation of the
TD targets of the training batches (1.0 until the first gradient step).

**Commit** (``commit=True``; an extension *beyond the paper*, DESIGN §7, off by default): an
override to action ``b`` at state ``s`` also switches that environment's head to one drawn with
probability ∝ ``(Q_k(s, b) − v_s)^+``, so an override starts an excursion that the new head
carries on, instead of a single step.

**Statistics** of every DE step live in :attr:`BootstrappedDQN.delight_stats`
(:class:`~delight_gym.wrappers.stats.DelightStats`, the accumulator shared with
:class:`~delight_gym.sb3.DelightDQN` and the wrapper): overridden flag, gate size, gate
empty, EI of the overridden action, ε; they are logged as ``rollout/exploration_rate`` and
``delight/*`` at each SB3 log dump, then reset.

Randomness: the algorithm's own ``numpy.random.Generator`` (:attr:`BootstrappedDQN.rng`: head
draws, DE draws, commits), the replay buffer's own generator (samples, masks) and the
ensemble's ``torch.Generator`` (initial weights), all from ``seed``. SB3 itself still seeds the
global generators in ``set_random_seed``, as it does for every algorithm; nothing here draws from
them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
import torch
from gymnasium import spaces
from stable_baselines3.common.buffers import ReplayBuffer
from stable_baselines3.common.off_policy_algorithm import OffPolicyAlgorithm
from stable_baselines3.common.policies import BasePolicy
from stable_baselines3.common.preprocessing import get_action_dim, get_obs_shape
from stable_baselines3.common.type_aliases import ReplayBufferSamples, Schedule

from delight_gym._checks import (
    check_action_batch,
    check_positive_float,
    check_positive_int,
    check_probability,
    check_seed,
    check_would_fit,
)
from delight_gym.posteriors.base import BASELINES, host_baseline
from delight_gym.posteriors.ensemble import (
    DEFAULT_HIDDEN_SIZES,
    DEFAULT_NUM_HEADS,
    DEFAULT_PRIOR_SCALE,
    EnsembleQPosterior,
    ensemble_expected_improvement,
)
from delight_gym.rule import (
    DEFAULT_GATE_PRICE,
    DEFAULT_HALF_LIFE,
    DEFAULT_SURPRISAL_CAP,
    apply_delight_rule,
    check_gate_settings,
    epsilon_schedule,
    sample_acting,
)
from delight_gym.sb3.base import (
    DelightAlgorithmMixin,
    Prediction,
    PredictState,
    StoredTransition,
)
from delight_gym.wrappers.stats import DelightStats

__all__ = [
    "BootstrapReplayBuffer",
    "BootstrappedDQN",
    "BootstrappedDQNPolicy",
    "DelightSettings",
]

_HOSTS = ("head", "mean")
_CLOCKS = {"episode": "episode", "episodes": "episode", "step": "step", "steps": "step"}
_AUTO_RATE = 0.01


def _spawn_rng(seed: int | None, stream: int) -> np.random.Generator:
    """Independent generator ``stream`` of ``seed`` (fresh entropy for ``None``)."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(stream,)))


@dataclasses.dataclass(frozen=True)
class DelightSettings:
    """DE's settings in :class:`BootstrappedDQN` (see the module docstring).

    Attributes
    ----------
    gate_price, surprisal_cap, half_life : float
        ``λ >= 0``, ``L > 0``, ``M > 0`` (defaults 0.1, 10, 100).
    host : {"head", "mean"}
        Greedy on the episode's head, or on the ensemble mean.
    baseline : {"host", "max"}
        :func:`~delight_gym.posteriors.base.host_baseline`'s ``kind``.
    clock : {"episode", "step"}
        What ``t`` of ``ε_t = M/(M + t)`` counts (``"episodes"``/``"steps"`` accepted).
    commit : bool
        Beyond the paper: an override also switches the head (module docstring).
    value_scale : float or "auto"
        EI is divided by it before the gate (``1.0``: the paper's rule).
    """

    gate_price: float = DEFAULT_GATE_PRICE
    surprisal_cap: float = DEFAULT_SURPRISAL_CAP
    half_life: float = DEFAULT_HALF_LIFE
    host: str = "head"
    baseline: str = "host"
    clock: str = "episode"
    commit: bool = False
    value_scale: float | str = 1.0

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        gate_price, surprisal_cap = check_gate_settings(self.gate_price, self.surprisal_cap)
        set_(self, "gate_price", gate_price)
        set_(self, "surprisal_cap", surprisal_cap)
        set_(self, "half_life", check_positive_float(self.half_life, "half_life"))
        if self.host not in _HOSTS:
            raise ValueError(f"host must be one of {_HOSTS}, got {self.host!r}")
        if self.baseline not in BASELINES:
            raise ValueError(f"baseline must be one of {BASELINES}, got {self.baseline!r}")
        if self.clock not in _CLOCKS:
            raise ValueError(f"clock must be 'episode' or 'step', got {self.clock!r}")
        set_(self, "clock", _CLOCKS[self.clock])
        if not isinstance(self.commit, bool):
            raise TypeError(f"commit must be a bool, got {self.commit!r}")
        if self.commit and self.host != "head":
            raise ValueError("commit switches the episode's head: it needs host='head'")
        if self.value_scale != "auto":
            if isinstance(self.value_scale, str):
                raise ValueError(
                    f"value_scale must be a positive float or 'auto', got {self.value_scale!r}"
                )
            set_(self, "value_scale", check_positive_float(self.value_scale, "value_scale"))

    @classmethod
    def make(cls, value: Any) -> DelightSettings | None:
        """``None``/``False`` → no DE; ``True`` → defaults; a dict or settings as given."""
        if value is None or value is False:
            return None
        if value is True:
            return cls()
        if isinstance(value, cls):
            return value
        if isinstance(value, dict):
            try:
                return cls(**value)
            except TypeError as exc:
                raise TypeError(f"delight: {exc}") from None
        raise TypeError(
            f"delight must be None, a bool, a dict or DelightSettings, got {type(value).__name__}"
        )


class BootstrapReplayBuffer(ReplayBuffer):
    """SB3's replay buffer with bootstrap masks and its own random generator.

    Parameters
    ----------
    buffer_size, observation_space, action_space, device, n_envs, handle_timeout_termination :
        As for :class:`stable_baselines3.common.buffers.ReplayBuffer`
        (``optimize_memory_usage`` is refused).
    num_heads : int, default 10
    mask_prob : float, default 1.0
        Each stored transition is in head ``k``'s bootstrap sample with this probability
        (masks are stored only when it is below 1).
    seed : int, optional
        Seed of the buffer's generator (samples and masks; never the global one).
    """

    def __init__(
        self,
        buffer_size: int,
        observation_space: spaces.Space,
        action_space: spaces.Space,
        device: Any = "auto",
        n_envs: int = 1,
        optimize_memory_usage: bool = False,
        handle_timeout_termination: bool = True,
        *,
        num_heads: int = DEFAULT_NUM_HEADS,
        mask_prob: float = 1.0,
        seed: int | None = None,
    ) -> None:
        if optimize_memory_usage:
            raise ValueError("optimize_memory_usage is not supported by BootstrapReplayBuffer")
        size = check_positive_int(buffer_size, "buffer_size")
        heads = check_positive_int(num_heads, "num_heads")
        masked = check_probability(mask_prob, "mask_prob") < 1
        obs_bytes = int(np.prod(get_obs_shape(observation_space)))  # type: ignore[arg-type]
        obs_bytes *= np.dtype(observation_space.dtype).itemsize
        # Per stored step of each env: observation and next one, int64 actions, float32 reward,
        # done and timeout flags, and the masks' bools.
        row = 2 * obs_bytes + 8 * get_action_dim(action_space) + 12 + (heads if masked else 0)
        what = f"buffer_size={size} with n_envs={n_envs}" + (
            f", num_heads={heads}" if masked else ""
        )
        check_would_fit(size * n_envs * row, what)
        super().__init__(
            buffer_size,
            observation_space,
            action_space,
            device=device,
            n_envs=n_envs,
            optimize_memory_usage=False,
            handle_timeout_termination=handle_timeout_termination,
        )
        self.num_heads = check_positive_int(num_heads, "num_heads")
        self.mask_prob = check_probability(mask_prob, "mask_prob")
        if self.mask_prob == 0:
            raise ValueError("mask_prob must be > 0")
        self.rng = _spawn_rng(seed, 1)
        self.masks: np.ndarray | None = None
        if self.mask_prob < 1:
            self.masks = np.ones((self.buffer_size, self.n_envs, self.num_heads), dtype=bool)

    def add(self, *args: Any, **kwargs: Any) -> None:
        """Store a transition (as SB3 does) and draw its masks."""
        if self.masks is not None:
            self.masks[self.pos] = self.rng.random((self.n_envs, self.num_heads)) < self.mask_prob
        super().add(*args, **kwargs)

    def sample_with_masks(
        self, batch_size: int, env: Any = None
    ) -> tuple[ReplayBufferSamples, torch.Tensor | None]:
        """``batch_size`` transitions drawn uniformly with replacement, and their ``(B, K)``
        masks (``None`` without masking)."""
        upper = self.buffer_size if self.full else self.pos
        if upper == 0:
            raise RuntimeError("the replay buffer is empty")
        batch_inds = self.rng.integers(0, upper, size=batch_size)
        env_inds = self.rng.integers(0, self.n_envs, size=batch_size)
        data = (
            self._normalize_obs(self.observations[batch_inds, env_inds], env),
            self.actions[batch_inds, env_inds],
            self._normalize_obs(self.next_observations[batch_inds, env_inds], env),
            (self.dones[batch_inds, env_inds] * (1 - self.timeouts[batch_inds, env_inds])).reshape(
                -1, 1
            ),
            self._normalize_reward(self.rewards[batch_inds, env_inds].reshape(-1, 1), env),
        )
        samples = ReplayBufferSamples(*tuple(map(self.to_torch, data)))
        masks = None if self.masks is None else self.to_torch(self.masks[batch_inds, env_inds])
        return samples, masks

    def sample(self, batch_size: int, env: Any = None) -> ReplayBufferSamples:
        """``batch_size`` transitions (the buffer's own generator, not the global one)."""
        return self.sample_with_masks(batch_size, env)[0]


class BootstrappedDQNPolicy(BasePolicy):
    """The SB3 policy of :class:`BootstrappedDQN`: an
    :class:`~delight_gym.posteriors.ensemble.EnsembleQPosterior` (its network is the policy's
    ``q_net`` module, its Adam optimizer the policy's ``optimizer``).

    ``predict``/``forward`` are greedy on the ensemble mean (what ``deterministic=True`` means
    for :class:`BootstrappedDQN`).

    Parameters
    ----------
    observation_space, action_space, lr_schedule :
        As for SB3 policies.
    net_arch : sequence of int, default (64, 64)
        Hidden layers of every head (trainable and prior).
    num_heads : int, default 10
    prior_scale : float, default 3.0
    gamma : float, default 0.99
    encoding : str, default "auto"
        See :data:`~delight_gym.posteriors.ensemble.ENCODINGS`.
    seed : int, optional
        Seed of the ensemble's generator (initial weights).
    """

    def __init__(
        self,
        observation_space: spaces.Space,
        action_space: spaces.Space,
        lr_schedule: Schedule,
        net_arch: Sequence[int] = DEFAULT_HIDDEN_SIZES,
        num_heads: int = DEFAULT_NUM_HEADS,
        prior_scale: float = DEFAULT_PRIOR_SCALE,
        gamma: float = 0.99,
        encoding: str = "auto",
        seed: int | None = None,
    ) -> None:
        super().__init__(observation_space, action_space)
        self.net_arch = tuple(net_arch)
        self.ensemble = EnsembleQPosterior(
            observation_space,
            action_space,
            num_heads=num_heads,
            hidden_sizes=net_arch,
            prior_scale=prior_scale,
            gamma=gamma,
            learning_rate=float(lr_schedule(1.0)),
            encoding=encoding,
            seed=seed,
        )
        self.q_net = self.ensemble.network
        self.optimizer = self.ensemble.optimizer

    def forward(self, obs: torch.Tensor, deterministic: bool = True) -> torch.Tensor:
        """Greedy actions on the ensemble mean, int64 ``(n,)``."""
        return self._predict(obs, deterministic)

    def _predict(self, observation: Any, deterministic: bool = True) -> torch.Tensor:
        return self.ensemble.head_values_tensor(observation).mean(dim=0).argmax(dim=1)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        data = super()._get_constructor_parameters()
        net = self.ensemble.network
        data.update(
            net_arch=self.net_arch,
            num_heads=net.num_heads,
            prior_scale=net.prior_scale,
            gamma=self.ensemble.gamma,
            encoding=net.encoding,
            seed=self.ensemble.seed,
        )
        return data


class BootstrappedDQN(DelightAlgorithmMixin, OffPolicyAlgorithm):
    """Bootstrapped DQN with randomized priors, optionally with DE (see the module docstring).

    Parameters
    ----------
    policy : str or type
        ``"MlpPolicy"`` (:class:`BootstrappedDQNPolicy`).
    env : gymnasium.Env or VecEnv or str
        Discrete actions; Discrete or Box observations.
    learning_rate : float or callable, default 1e-3
    buffer_size : int, default 10_000
    learning_starts : int, default 128
        Environment steps before the first gradient step.
    batch_size : int, default 128
    gamma : float, default 0.99
    train_freq : int or tuple, default 1
        As for SB3 (one gradient step per environment step by default).
    gradient_steps : int, default 1
    target_update_interval : int, default 4
        Gradient steps between hard target updates.
    num_heads : int, default 10
        ``K``.
    prior_scale : float, default 3.0
    net_arch : sequence of int, default (64, 64)
    mask_prob : float, default 1.0
        Bootstrap mask probability (``< 1`` stores masks in the replay buffer).
    delight : None, bool, dict or DelightSettings, default None
        ``None``/``False``: plain bootstrapped DQN; ``True`` or settings: DE on top.
    replay_buffer_class : type, optional
        A subclass of :class:`BootstrapReplayBuffer` (the default).
    replay_buffer_kwargs, policy_kwargs, stats_window_size, tensorboard_log, verbose, device,
    _init_setup_model :
        As for SB3 algorithms.
    seed : int, optional
        Seeds the ensemble's initial weights, the algorithm's :attr:`rng` and the replay
        buffer's generator (independent streams).

    Attributes
    ----------
    delight : DelightSettings or None
    delight_stats : DelightStats
    rng : numpy.random.Generator
        Head draws and DE draws.
    episode_heads : numpy.ndarray or None
        int ``(n_envs,)``: every environment's current head.
    episodes, steps : int
        Completed episodes and environment steps (over every env) seen in training; DE's
        clocks, kept across ``learn`` calls.
    """

    policy_aliases: ClassVar[dict[str, type[BasePolicy]]] = {
        "MlpPolicy": BootstrappedDQNPolicy,
    }
    policy: BootstrappedDQNPolicy
    replay_buffer: BootstrapReplayBuffer

    def __init__(
        self,
        policy: str | type[BootstrappedDQNPolicy],
        env: Any,
        learning_rate: float | Schedule = 1e-3,
        buffer_size: int = 10_000,
        learning_starts: int = 128,
        batch_size: int = 128,
        gamma: float = 0.99,
        train_freq: int | tuple[int, str] = 1,
        gradient_steps: int = 1,
        target_update_interval: int = 4,
        num_heads: int = DEFAULT_NUM_HEADS,
        prior_scale: float = DEFAULT_PRIOR_SCALE,
        net_arch: Sequence[int] = DEFAULT_HIDDEN_SIZES,
        mask_prob: float = 1.0,
        delight: Any = None,
        replay_buffer_class: type[ReplayBuffer] | None = None,
        replay_buffer_kwargs: dict[str, Any] | None = None,
        stats_window_size: int = 100,
        tensorboard_log: str | None = None,
        policy_kwargs: dict[str, Any] | None = None,
        verbose: int = 0,
        seed: int | None = None,
        device: torch.device | str = "auto",
        _init_setup_model: bool = True,
    ) -> None:
        check_seed(seed)
        self.delight = DelightSettings.make(delight)
        self.target_update_interval = check_positive_int(
            target_update_interval, "target_update_interval"
        )
        check_positive_int(num_heads, "num_heads")
        check_positive_int(batch_size, "batch_size")
        check_positive_int(buffer_size, "buffer_size")
        mask = check_probability(mask_prob, "mask_prob")
        if mask == 0:
            raise ValueError("mask_prob must be > 0")
        if replay_buffer_class is None:
            replay_buffer_class = BootstrapReplayBuffer
        elif not (
            isinstance(replay_buffer_class, type)
            and issubclass(replay_buffer_class, BootstrapReplayBuffer)
        ):
            raise TypeError("replay_buffer_class must be a subclass of BootstrapReplayBuffer")
        buffer_kwargs = {"num_heads": num_heads, "mask_prob": mask, "seed": seed}
        buffer_kwargs.update(replay_buffer_kwargs or {})
        pol_kwargs = {
            "net_arch": tuple(net_arch),
            "num_heads": num_heads,
            "prior_scale": prior_scale,
            "gamma": gamma,
            "seed": seed,
        }
        pol_kwargs.update(policy_kwargs or {})
        super().__init__(
            policy,
            env,
            learning_rate,
            buffer_size,
            learning_starts,
            batch_size,
            1.0,  # tau: hard target updates, counted in gradient steps (train)
            gamma,
            train_freq,
            gradient_steps,
            action_noise=None,
            replay_buffer_class=replay_buffer_class,
            replay_buffer_kwargs=buffer_kwargs,
            optimize_memory_usage=False,
            policy_kwargs=pol_kwargs,
            stats_window_size=stats_window_size,
            tensorboard_log=tensorboard_log,
            verbose=verbose,
            device=device,
            seed=seed,
            sde_support=False,
            supported_action_spaces=(spaces.Discrete,),
            support_multi_env=True,
        )
        if not isinstance(self.observation_space, (spaces.Box, spaces.Discrete)):
            raise TypeError(
                "BootstrappedDQN needs a Box or Discrete observation space, got "
                f"{type(self.observation_space).__name__}"
            )
        self.num_heads = int(num_heads)
        self.mask_prob = mask
        self.rng = _spawn_rng(seed, 0)
        self.delight_stats = DelightStats()
        self.episode_heads: np.ndarray | None = None
        self.episodes = 0
        self.steps = 0
        self.value_scale_estimate: float | None = None
        if _init_setup_model:
            self._setup_model()

    # -- model -----------------------------------------------------------------------------------

    @property
    def ensemble(self) -> EnsembleQPosterior:
        """The ensemble posterior (lives in the policy)."""
        return self.policy.ensemble

    def _setup_model(self) -> None:
        super()._setup_model()
        if (
            self.n_envs > 1
            and self.episode_heads is not None
            and len(self.episode_heads) != self.n_envs
        ):
            self.episode_heads = None

    def _excluded_save_params(self) -> list[str]:
        return [*super()._excluded_save_params(), "q_net"]

    def _get_torch_save_params(self) -> tuple[list[str], list[str]]:
        return ["policy", "policy.optimizer"], []

    # -- heads and DE ----------------------------------------------------------------------------

    @property
    def epsilon(self) -> float:
        """DE's current ``ε_t`` (0 without DE)."""
        if self.delight is None:
            return 0.0
        t = self.episodes if self.delight.clock == "episode" else self.steps
        return float(epsilon_schedule(t, self.delight.half_life))

    @property
    def value_scale(self) -> float:
        """What EI is divided by before the gate (see the module docstring)."""
        if self.delight is None or self.delight.value_scale != "auto":
            return 1.0 if self.delight is None else float(self.delight.value_scale)
        return 1.0 if self.value_scale_estimate is None else self.value_scale_estimate

    def _draw_heads(self, n: int) -> np.ndarray:
        return self.rng.integers(0, self.num_heads, size=n)

    def _act(self, obs: Any, heads: np.ndarray, record: bool) -> tuple[np.ndarray, np.ndarray]:
        """Actions for ``n`` observations with their heads ``(n,)``; returns the actions and
        the heads afterwards (changed only by a commit)."""
        q = self.ensemble.head_values_tensor(obs).double().cpu().numpy()  # (K, n, A), one copy
        n = q.shape[1]
        rows = np.arange(n)
        settings = self.delight
        if settings is None:
            return q[heads, rows].argmax(axis=1), heads
        means = q.mean(axis=0)
        host_q = q[heads, rows] if settings.host == "head" else means
        host_probs = np.zeros_like(means)
        host_probs[rows, host_q.argmax(axis=1)] = 1.0
        base = host_baseline(means, host_probs, settings.baseline)
        ei = ensemble_expected_improvement(q, base) / self.value_scale
        eps = self.epsilon
        decision = apply_delight_rule(settings, host_probs, ei, eps)
        actions, explored = sample_acting(decision, self.rng)
        actions = np.asarray(actions, dtype=np.int64)
        overridden = explored & ~decision.gate_empty
        if settings.commit and overridden.any():
            heads = heads.copy()
            for i in np.flatnonzero(overridden):
                weights = np.maximum(q[:, i, actions[i]] - base[i], 0.0)
                total = weights.sum()
                if total > 0:
                    heads[i] = self.rng.choice(self.num_heads, p=weights / total)
        if record:
            self.delight_stats.record(
                overridden,
                decision.gate.sum(axis=1),
                decision.gate_empty,
                ei[rows, actions][overridden],
                eps,
            )
        return actions, heads

    def _delight_stats(self) -> DelightStats | None:
        return None if self.delight is None else self.delight_stats

    def _predict_exploring(
        self, observation: Any, state: PredictState, episode_start: np.ndarray | None
    ) -> Prediction:
        """``predict(deterministic=False)``: greedy on each row's head, with DE on top when
        configured (ε at the current clock, which ``predict`` does not advance).
        (``deterministic=True`` is greedy on the ensemble mean, ``state`` passed through.)

        The heads travel in ``state`` as ``(heads,)`` (int ``(n,)``), like a recurrent policy's
        state: rows with no state yet or with ``episode_start`` set draw a new head from
        :attr:`rng`, so :func:`~stable_baselines3.common.evaluation.evaluate_policy` gets one
        head per evaluation episode.
        """
        obs, vectorized = self.policy.obs_to_tensor(observation)
        if not isinstance(obs, torch.Tensor):  # pragma: no cover - Dict spaces are refused
            raise TypeError("BootstrappedDQN needs a Box or Discrete observation")
        n = int(obs.shape[0])
        if state is None:
            heads = self._draw_heads(n)
        else:
            given = np.asarray(state[0])
            if given.size != n:
                raise ValueError(
                    f"state must hold one head per observation ({n}), got {given.shape}"
                )
            heads = check_action_batch(given.reshape(n), n, self.num_heads, "state (the heads)")
            if episode_start is not None:
                start = np.asarray(episode_start).reshape(-1)
                if start.shape != (n,):
                    raise ValueError(
                        f"episode_start must hold one flag per observation ({n}), got "
                        f"{np.shape(episode_start)}"
                    )
                start = start.astype(bool)
                if start.any():
                    heads[start] = self._draw_heads(int(start.sum()))
        actions, heads = self._act(obs, heads, record=False)
        if not vectorized:
            return actions[0], (heads,)
        return actions, (heads,)

    # -- SB3 hooks -------------------------------------------------------------------------------

    def _setup_learn(self, total_timesteps: int, *args: Any, **kwargs: Any) -> Any:
        fresh = self._last_obs is None
        reset = kwargs.get("reset_num_timesteps", args[2] if len(args) > 2 else True)
        out = super()._setup_learn(total_timesteps, *args, **kwargs)
        if fresh or reset or self.episode_heads is None:
            self.episode_heads = self._draw_heads(self.n_envs)  # the env was reset
        return out

    def _sample_action(
        self, learning_starts: int, action_noise: Any = None, n_envs: int = 1
    ) -> tuple[np.ndarray, np.ndarray]:
        """Every env's action from its head (with DE on top); no uniform warm-up."""
        assert self._last_obs is not None, "self._last_obs was not set"
        if self.episode_heads is None:
            self.episode_heads = self._draw_heads(n_envs)
        obs = np.asarray(self._last_obs)
        actions, self.episode_heads = self._act(obs, self.episode_heads, record=True)
        actions = actions.reshape(n_envs)
        return actions, actions

    def _transition_stored(self, transition: StoredTransition) -> None:
        """After SB3 stored the step: advance the clocks and draw new heads for finished
        episodes."""
        done = np.asarray(transition.dones, dtype=bool)
        self.steps += len(done)
        if done.any():
            self.episodes += int(done.sum())
            assert self.episode_heads is not None
            self.episode_heads[done] = self._draw_heads(int(done.sum()))

    def train(self, gradient_steps: int, batch_size: int = 128) -> None:
        """``gradient_steps`` Adam steps of every head; hard target updates every
        ``target_update_interval`` of them."""
        self.policy.set_training_mode(True)
        self._update_learning_rate(self.policy.optimizer)
        ensemble = self.ensemble
        auto = self.delight is not None and self.delight.value_scale == "auto"
        losses = []
        for _ in range(gradient_steps):
            samples, masks = self.replay_buffer.sample_with_masks(
                batch_size, env=self._vec_normalize_env
            )
            stats = ensemble.td_step(
                samples.observations,
                samples.actions,
                samples.rewards,
                samples.next_observations,
                samples.dones,
                masks,
            )
            losses.append(stats.loss)
            self._n_updates += 1
            if self._n_updates % self.target_update_interval == 0:
                ensemble.update_target()
            if auto:
                std = float(stats.target_std)
                old = self.value_scale_estimate
                est = std if old is None else (1 - _AUTO_RATE) * old + _AUTO_RATE * std
                self.value_scale_estimate = max(est, 1e-8)
        self.logger.record("train/n_updates", self._n_updates, exclude="tensorboard")
        self.logger.record("train/loss", float(torch.stack(losses).mean()))
