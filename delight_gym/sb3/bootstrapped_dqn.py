"""``BootstrappedDQN``: bootstrapped DQN with randomized priors as an SB3 algorithm (Osband et
al. 2016, 2018; bsuite's ``boot_dqn``), optionally with Delight-gated exploration (DE) on top.

``K`` Q-heads with randomized priors (:class:`~delight_gym.posteriors.ensemble.EnsembleQPosterior`)
are trained by Q-learning from SB3's replay buffer (:class:`BootstrapReplayBuffer`, with
bootstrap masks when ``mask_prob < 1``); each environment of the VecEnv draws a head at the start
of every episode and acts greedily on it for the whole episode (Thompson sampling over heads).
With ``delight=`` (:class:`~delight_gym.options.DelightOptions`) DE overrides on top of
that host, with the ensemble's exact EI (:func:`~delight_gym.posteriors.ensemble.ensemble_values`,
then :func:`~delight_gym.options.decide_on_values`, the path the wrapper uses).
Randomness comes from the algorithm's own generators, all seeded from ``seed``. Defaults, the
episode clock, ``value_scale`` and ``commit``: ``docs/sb3.md``.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any, ClassVar, NamedTuple, TypeVar

import numpy as np
import torch
from gymnasium import spaces
from stable_baselines3.common.buffers import ReplayBuffer
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.off_policy_algorithm import OffPolicyAlgorithm
from stable_baselines3.common.policies import BasePolicy
from stable_baselines3.common.preprocessing import get_action_dim, get_obs_shape
from stable_baselines3.common.type_aliases import GymEnv, MaybeCallback, Schedule
from stable_baselines3.common.vec_env import VecNormalize

from delight_gym._checks import (
    check_action_batch,
    check_positive_int,
    check_probability,
    check_seed,
    check_would_fit,
)
from delight_gym.options import HOSTS, DelightOptions, decide_on_values, greedy_probs
from delight_gym.posteriors.base import PosteriorValues
from delight_gym.posteriors.ensemble import (
    DEFAULT_HIDDEN_SIZES,
    DEFAULT_NUM_HEADS,
    DEFAULT_PRIOR_SCALE,
    EnsembleQPosterior,
    ensemble_values,
)
from delight_gym.rule import epsilon_schedule, sample_acting
from delight_gym.sb3.base import (
    DelightAlgorithmMixin,
    Prediction,
    PredictState,
    StoredTransition,
)
from delight_gym.stats import DelightStats

__all__ = [
    "BootstrapReplayBuffer",
    "BootstrapReplayBufferSamples",
    "BootstrappedDQN",
    "BootstrappedDQNPolicy",
]

SelfBootstrappedDQN = TypeVar("SelfBootstrappedDQN", bound="BootstrappedDQN")

_AUTO_RATE = 0.01


def _spawn_rng(seed: int | None, stream: int) -> np.random.Generator:
    """Independent generator ``stream`` of ``seed`` (fresh entropy for ``None``)."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(stream,)))


class BootstrapReplayBufferSamples(NamedTuple):
    """SB3's ``ReplayBufferSamples`` with the sampled transitions' bootstrap masks.

    Attributes
    ----------
    observations, actions, next_observations, dones, rewards : torch.Tensor
        As in SB3's ``ReplayBufferSamples`` (``B`` rows).
    discounts : None
        SB3's n-step field (unused).
    masks : torch.Tensor or None
        bool ``(B, K)``: which heads train on each transition (``None`` without masking).
    """

    observations: torch.Tensor
    actions: torch.Tensor
    next_observations: torch.Tensor
    dones: torch.Tensor
    rewards: torch.Tensor
    discounts: torch.Tensor | None = None
    masks: torch.Tensor | None = None


class BootstrapReplayBuffer(ReplayBuffer):
    """SB3's replay buffer with bootstrap masks and its own random generators.

    It extends :class:`stable_baselines3.common.buffers.ReplayBuffer` as SB3's
    ``NStepReplayBuffer`` does, in ``_get_samples`` (which also returns the masks), plus
    ``sample``, which draws the indices from the buffer's generator instead of numpy's global
    one. Each slot of the buffer holds a fixed mask drawn at construction: the transition stored
    in a slot gets its mask, independently of its content, which is what a bootstrap needs.

    Parameters
    ----------
    buffer_size, observation_space, action_space, device, n_envs, handle_timeout_termination :
        As for :class:`stable_baselines3.common.buffers.ReplayBuffer`
        (``optimize_memory_usage`` is refused).
    num_heads : int, default 10
    mask_prob : float, default 1.0
        Each stored transition is in head ``k``'s bootstrap sample with this probability
        (masks are kept only when it is below 1).
    seed : int, optional
        Seed of the buffer's generators (samples, masks; independent streams; never the global
        one).
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
        mask = check_probability(mask_prob, "mask_prob")
        if mask == 0:
            raise ValueError("mask_prob must be > 0")
        masked = mask < 1
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
        self.num_heads = heads
        self.mask_prob = mask
        self.rng = _spawn_rng(seed, 1)
        self.masks: np.ndarray | None = None
        if self.mask_prob < 1:
            shape = (self.buffer_size, self.n_envs, self.num_heads)
            self.masks = _spawn_rng(seed, 2).random(shape) < self.mask_prob

    def sample(  # type: ignore[override]
        self, batch_size: int, env: VecNormalize | None = None
    ) -> BootstrapReplayBufferSamples:
        """``batch_size`` transitions drawn uniformly with replacement by the buffer's own
        generator, with their masks."""
        upper = self.buffer_size if self.full else self.pos
        if upper == 0:
            raise RuntimeError("the replay buffer is empty")
        return self._get_samples(self.rng.integers(0, upper, size=batch_size), env=env)

    def _get_samples(  # type: ignore[override]
        self, batch_inds: np.ndarray, env: VecNormalize | None = None
    ) -> BootstrapReplayBufferSamples:
        env_inds = self.rng.integers(0, self.n_envs, size=len(batch_inds))
        done = self.dones[batch_inds, env_inds] * (1 - self.timeouts[batch_inds, env_inds])
        data = (
            self._normalize_obs(self.observations[batch_inds, env_inds], env),
            self.actions[batch_inds, env_inds],
            self._normalize_obs(self.next_observations[batch_inds, env_inds], env),
            done.reshape(-1, 1),  # a time-limit truncation is not a terminal state
            self._normalize_reward(self.rewards[batch_inds, env_inds].reshape(-1, 1), env),
        )
        obs, actions, next_obs, dones, rewards = map(self.to_torch, data)
        masks = None if self.masks is None else self.to_torch(self.masks[batch_inds, env_inds])
        return BootstrapReplayBufferSamples(obs, actions, next_obs, dones, rewards, masks=masks)


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
    net_arch : sequence of int, optional
        Deprecated alias of ``policy_kwargs=dict(net_arch=...)`` (warns; removed in the next
        release).
    mask_prob : float, default 1.0
        Bootstrap mask probability (``< 1`` keeps masks in the replay buffer).
    delight : None, bool, dict or DelightOptions, default None
        ``None``/``False``: plain bootstrapped DQN; ``True``, a dict or
        :class:`~delight_gym.options.DelightOptions`: DE on top (its clock counts
        episodes unless ``clock="step"``; its host is the episode's head unless
        ``host="mean"``).
    replay_buffer_class : type, optional
        A subclass of :class:`BootstrapReplayBuffer` (the default).
    policy_kwargs : dict, optional
        As for SB3: the heads' hidden layers ``net_arch`` (default ``[64, 64]``, for the
        trainable and the prior network alike) and ``encoding`` (see
        :class:`BootstrappedDQNPolicy`). ``num_heads``, ``prior_scale``, ``gamma`` and ``seed``
        are this algorithm's own keywords.
    replay_buffer_kwargs, stats_window_size, tensorboard_log, verbose, device, _init_setup_model :
        As for SB3 algorithms.
    seed : int, optional
        Seeds the ensemble's initial weights, the algorithm's :attr:`rng` and the replay
        buffer's generator (independent streams).

    Attributes
    ----------
    delight : DelightOptions or None
        The options in use (``clock`` and ``host`` filled in).
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
        env: GymEnv | str,
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
        net_arch: Sequence[int] | None = None,
        mask_prob: float = 1.0,
        delight: DelightOptions | dict[str, Any] | bool | None = None,
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
        options = DelightOptions.make(delight)
        self.delight = None
        if options is not None:
            self.delight = options.resolve(
                "BootstrappedDQN", clocks=("episode", "step"), hosts=HOSTS, auto_scale=True
            )
        self.target_update_interval = check_positive_int(
            target_update_interval, "target_update_interval"
        )
        check_positive_int(batch_size, "batch_size")
        check_positive_int(buffer_size, "buffer_size")
        if replay_buffer_class is None:
            replay_buffer_class = BootstrapReplayBuffer
        elif not (
            isinstance(replay_buffer_class, type)
            and issubclass(replay_buffer_class, BootstrapReplayBuffer)
        ):
            raise TypeError("replay_buffer_class must be a subclass of BootstrapReplayBuffer")
        # num_heads and mask_prob are checked once, by the buffer (built by _setup_model).
        buffer_kwargs = {"num_heads": num_heads, "mask_prob": mask_prob, "seed": seed}
        buffer_kwargs.update(replay_buffer_kwargs or {})
        pol_kwargs = dict(policy_kwargs or {})
        own = sorted({"num_heads", "prior_scale", "gamma", "seed"} & set(pol_kwargs))
        if own:
            raise ValueError(f"pass {own} to BootstrappedDQN itself, not in policy_kwargs")
        if net_arch is not None:
            if "net_arch" in pol_kwargs:
                raise ValueError("net_arch given twice: as net_arch= and in policy_kwargs")
            warnings.warn(
                "BootstrappedDQN(net_arch=...) is deprecated: pass "
                "policy_kwargs=dict(net_arch=...) as for any SB3 algorithm; net_arch= will be "
                "removed in the next release",
                DeprecationWarning,
                stacklevel=2,
            )
            pol_kwargs["net_arch"] = list(net_arch)
        pol_kwargs.update(num_heads=num_heads, prior_scale=prior_scale, gamma=gamma, seed=seed)
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
        self.num_heads = num_heads
        self.mask_prob = mask_prob
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
        # Checked here, not in __init__: load() builds the model without an env and sets the
        # spaces before it calls _setup_model.
        if not isinstance(self.observation_space, (spaces.Box, spaces.Discrete)):
            raise TypeError(
                "BootstrappedDQN needs a Box or Discrete observation space, got "
                f"{type(self.observation_space).__name__}"
            )
        super()._setup_model()
        self.num_heads, self.mask_prob = self.replay_buffer.num_heads, self.replay_buffer.mask_prob
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
        """What EI is divided by before the gate (see the module docstring); 1 with
        ``value_scale="spread"``, where each state has its own (:meth:`_gate_values`)."""
        options = self.delight
        if options is None or options.value_scale == "spread":
            return 1.0
        if options.value_scale != "auto":
            return float(options.value_scale)
        return 1.0 if self.value_scale_estimate is None else self.value_scale_estimate

    def _gate_values(self, q: np.ndarray, values: PosteriorValues) -> PosteriorValues:
        """``values`` with the EI that DE's gate sees under the options on the heads (beyond the
        paper; unchanged without them).

        * ``value_scale="spread"``: EI divided by each state's spread of the heads' values, the
          root mean square over actions of the heads' standard deviation, so ``λ`` is in units
          of it (a state where every head has the same values has EI 0 and keeps it);
        * ``agreement=τ``: EI 0, so the gate is closed, at each state where at least a
          fraction ``τ`` of the heads share their greedy action.

        Parameters
        ----------
        q : numpy.ndarray
            float64 ``(K, n, A)``: every head's values of the ``n`` states.
        values : PosteriorValues
            Their :func:`~delight_gym.posteriors.ensemble.ensemble_values`.
        """
        options = self.delight
        assert options is not None
        ei = values.expected_improvement
        if options.value_scale == "spread":
            spread = np.sqrt(q.var(axis=0).mean(axis=1))[:, None]  # (n, 1)
            ei = np.divide(ei, spread, out=np.zeros_like(ei), where=spread > 0)
        if options.agreement is not None:
            greedy = q.argmax(axis=2)  # (K, n)
            votes = (greedy[:, :, None] == np.arange(q.shape[2])).sum(axis=0)  # (n, A)
            agree = votes.max(axis=1) / q.shape[0] >= options.agreement
            ei = np.where(agree[:, None], 0.0, ei)
        return values._replace(expected_improvement=ei)

    def _draw_heads(self, n: int) -> np.ndarray:
        return self.rng.integers(0, self.num_heads, size=n)

    def _act(self, obs: Any, heads: np.ndarray, record: bool) -> tuple[np.ndarray, np.ndarray]:
        """Actions for ``n`` observations with their heads ``(n,)``; returns the actions and
        the heads afterwards (changed only by a commit)."""
        q = self.ensemble.head_values_tensor(obs).double().cpu().numpy()  # (K, n, A), one copy
        n = q.shape[1]
        rows = np.arange(n)
        options = self.delight
        if options is None:
            return q[heads, rows].argmax(axis=1), heads
        host_probs = greedy_probs(q[heads, rows] if options.host == "head" else q.mean(axis=0))
        values = self._gate_values(
            q, PosteriorValues(*ensemble_values(q, host_probs, options.baseline))
        )
        eps = self.epsilon
        decision, ei = decide_on_values(
            options, host_probs, values, eps, value_scale=self.value_scale
        )
        actions, explored = sample_acting(decision, self.rng)
        actions = np.asarray(actions, dtype=np.int64)
        overridden = explored & ~decision.gate_empty
        if options.commit and overridden.any():
            heads = heads.copy()
            for i in np.flatnonzero(overridden):
                weights = np.maximum(q[:, i, actions[i]] - values.baseline[i], 0.0)
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

    def _setup_learn(
        self,
        total_timesteps: int,
        callback: MaybeCallback = None,
        reset_num_timesteps: bool = True,
        tb_log_name: str = "run",
        progress_bar: bool = False,
    ) -> tuple[int, BaseCallback]:
        """SB3's setup; every env draws a new head when SB3 resets the envs (a fresh start or
        ``reset_num_timesteps=True``), and keeps its episode's head otherwise."""
        fresh = self._last_obs is None
        out = super()._setup_learn(
            total_timesteps, callback, reset_num_timesteps, tb_log_name, progress_bar
        )
        if fresh or reset_num_timesteps or self.episode_heads is None:
            self.episode_heads = self._draw_heads(self.n_envs)  # the envs were reset
        return out

    def learn(
        self: SelfBootstrappedDQN,
        total_timesteps: int,
        callback: MaybeCallback = None,
        log_interval: int = 4,
        tb_log_name: str = "BootstrappedDQN",
        reset_num_timesteps: bool = True,
        progress_bar: bool = False,
    ) -> SelfBootstrappedDQN:
        """As SB3's ``learn``; TensorBoard runs are named ``BootstrappedDQN_<i>``."""
        return super().learn(
            total_timesteps=total_timesteps,
            callback=callback,
            log_interval=log_interval,
            tb_log_name=tb_log_name,
            reset_num_timesteps=reset_num_timesteps,
            progress_bar=progress_bar,
        )

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
            step = self._n_updates + 1
            stats = self._ensemble_td_step(ensemble, batch_size, step, self.target_update_interval)
            self._n_updates = step
            losses.append(stats.loss)
            if auto:
                std = float(stats.target_std)
                old = self.value_scale_estimate
                est = std if old is None else (1 - _AUTO_RATE) * old + _AUTO_RATE * std
                self.value_scale_estimate = max(est, 1e-8)
        self.logger.record("train/n_updates", self._n_updates, exclude="tensorboard")
        self.logger.record("train/loss", float(torch.stack(losses).mean()))
