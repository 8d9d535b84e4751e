"""``BootstrappedDQN``: bootstrapped DQN with randomized priors as an SB3 algorithm (Osband et
al. 2016, 2018; bsuite's ``boot_dqn``), optionally with Delight-gated exploration (DE) on top.

``K`` Q-heads (:class:`~delight_gym.posteriors.ensemble.EnsembleQPosterior`) learn by Q-learning
from SB3's replay buffer, with bootstrap masks when ``mask_prob < 1``; each env draws a head at
the start of every episode and acts greedily on it (Thompson sampling over heads). With
``delight=`` DE overrides on top of that host with the ensemble's exact EI. All randomness comes
from generators seeded from ``seed``.
"""

from __future__ import annotations

import io
import json
import os
import pathlib
import pickle
import zipfile
from typing import Any, ClassVar

import numpy as np
import torch
from gymnasium import spaces
from stable_baselines3.common.buffers import ReplayBuffer
from stable_baselines3.common.off_policy_algorithm import OffPolicyAlgorithm
from stable_baselines3.common.policies import BasePolicy
from stable_baselines3.common.save_util import load_from_zip_file
from stable_baselines3.common.type_aliases import GymEnv, Schedule

from delight_gym._checks import check_action_batch, check_positive_int, check_seed
from delight_gym.de.engine import act_on_values
from delight_gym.de.options import HOSTS, DelightOptions
from delight_gym.de.posterior import PosteriorValues
from delight_gym.de.rule import epsilon_schedule, greedy_probs
from delight_gym.de.stats import DelightStats
from delight_gym.posteriors.boot_dqn_defaults import BOOT_DQN_DEFAULTS, check_replay_options
from delight_gym.posteriors.ensemble import EnsembleQPosterior, ensemble_values
from delight_gym.posteriors.ensemble_inputs import Transitions
from delight_gym.sb3.base import (
    DelightAlgorithmMixin,
    Prediction,
    PredictState,
    StoredTransition,
)
from delight_gym.sb3.bootstrapped_policy import (
    BootstrappedDQNPolicy,
    BootstrapReplayBuffer,
    BootstrapReplayBufferSamples,
    spawn_rng,
)

__all__ = [
    "BootstrapReplayBuffer",
    "BootstrapReplayBufferSamples",
    "BootstrappedDQN",
    "BootstrappedDQNPolicy",
]

_AUTO_RATE = 0.01


class BootstrappedDQN(DelightAlgorithmMixin, OffPolicyAlgorithm):
    """Bootstrapped DQN with randomized priors, optionally with DE.

    Parameters
    ----------
    policy, env :
        ``"MlpPolicy"`` (:class:`BootstrappedDQNPolicy`); an env with Discrete actions.
    learning_rate, buffer_size, learning_starts, batch_size, gamma, train_freq, gradient_steps :
        As for SB3; the defaults (as every default here) are
        :data:`~delight_gym.posteriors.boot_dqn_defaults.BOOT_DQN_DEFAULTS`.
    target_update_interval : int
        Gradient steps between hard target updates.
    num_heads, prior_scale : int, float
        ``K``; each head has a randomized prior of scale ``prior_scale``.
    mask_prob, replay_buffer_class :
        Bootstrap mask probability (``< 1`` keeps masks); a :class:`BootstrapReplayBuffer`.
    delight : None, bool, dict or DelightOptions, default None
        ``None``/``False``: plain bootstrapped DQN; else DE's options (default clock ``"episode"``).
    policy_kwargs : dict, optional
        ``net_arch`` (default ``[64, 64]``) and ``encoding`` (:class:`BootstrappedDQNPolicy`).
    replay_buffer_kwargs, stats_window_size, tensorboard_log, verbose, device, _init_setup_model :
        As for SB3 algorithms.
    seed : int, optional
        Seeds the initial weights, :attr:`rng` (head and DE draws) and the replay buffer.

    Attributes
    ----------
    delight, delight_stats, rng, episode_heads, episodes, steps :
        Options (or ``None``); DE's statistics; the generator; each env's head; DE's clocks.
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
        learning_rate: float | Schedule = BOOT_DQN_DEFAULTS.learning_rate,
        buffer_size: int = BOOT_DQN_DEFAULTS.buffer_size,
        learning_starts: int = BOOT_DQN_DEFAULTS.learning_starts,
        batch_size: int = BOOT_DQN_DEFAULTS.batch_size,
        gamma: float = BOOT_DQN_DEFAULTS.gamma,
        train_freq: int | tuple[int, str] = BOOT_DQN_DEFAULTS.sgd_period,
        gradient_steps: int = 1,
        target_update_interval: int = BOOT_DQN_DEFAULTS.target_update_period,
        num_heads: int = BOOT_DQN_DEFAULTS.num_heads,
        prior_scale: float = BOOT_DQN_DEFAULTS.prior_scale,
        mask_prob: float = BOOT_DQN_DEFAULTS.mask_prob,
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
        check_replay_options(batch_size, buffer_size, learning_starts)
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
        self.rng = spawn_rng(seed, 0)
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
        """The policy's ensemble posterior."""
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
        if self.ensemble.network.encoding == "one_hot":  # sampled batches come encoded
            self.replay_buffer.keep_one_hot_codes()
        if (
            self.n_envs > 1
            and self.episode_heads is not None
            and len(self.episode_heads) != self.n_envs
        ):
            self.episode_heads = None

    @classmethod
    def load(
        cls,
        path: str | pathlib.Path | io.BufferedIOBase,
        env: GymEnv | None = None,
        device: torch.device | str = "auto",
        custom_objects: dict[str, Any] | None = None,
        print_system_info: bool = False,
        force_reset: bool = True,
        **kwargs: Any,
    ) -> Any:
        """SB3's ``load``, after checking that ``path`` holds a whole, readable saved model.

        Raises
        ------
        FileNotFoundError
            If ``path`` (or ``path`` + ``.zip``) does not exist.
        ValueError
            For a truncated or damaged file (naming it), and as SB3's for an ``env`` whose
            spaces differ from the saved ones.
        """
        if isinstance(path, (str, os.PathLike)):
            name = os.fspath(path)
            if not (os.path.exists(name) or os.path.exists(name + ".zip")):
                raise FileNotFoundError(f"no saved {cls.__name__} at {name!r}")
        damaged = f"{path} is a damaged saved {cls.__name__}"
        try:
            data, params, _ = load_from_zip_file(path, device=device, custom_objects=custom_objects)
        except (
            zipfile.BadZipFile,
            EOFError,
            KeyError,
            OSError,
            ValueError,  # SB3's "wasn't a zip-file", json's JSONDecodeError
            RuntimeError,
            pickle.UnpicklingError,
        ) as exc:
            raise ValueError(f"{damaged} (truncated or corrupted: {exc})") from None
        missing = [key for key in ("policy", "policy.optimizer") if key not in (params or {})]
        if not data:
            missing.insert(0, "data")
        if missing:
            raise ValueError(f"{damaged}: it has no {', '.join(map(repr, missing))} entry")
        if isinstance(path, io.BufferedIOBase):
            path.seek(0)
        try:
            return super().load(
                path, env, device, custom_objects, print_system_info, force_reset, **kwargs
            )
        except (KeyError, RuntimeError, json.JSONDecodeError) as exc:  # tampered contents
            raise ValueError(f"{damaged}: {type(exc).__name__}: {exc}") from None

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
        """What EI is divided by before the gate (1 with ``value_scale="spread"``, where each
        state has its own)."""
        options = self.delight
        if options is None or options.value_scale == "spread":
            return 1.0
        if options.value_scale != "auto":
            return float(options.value_scale)
        return 1.0 if self.value_scale_estimate is None else self.value_scale_estimate

    def _gate_values(self, q: np.ndarray, values: PosteriorValues) -> PosteriorValues:
        """``values`` with the EI DE's gate sees under ``value_scale="spread"`` and
        ``agreement`` (docs/sb3.md), from the heads' float64 ``(K, n, A)`` values ``q``."""
        options = self.delight
        assert options is not None
        ei = values.expected_improvement
        if options.value_scale == "spread":
            # RMS over actions of the heads' std; a state where every head agrees keeps EI 0
            spread = np.sqrt(q.var(axis=0).mean(axis=1))[:, None]  # (n, 1)
            ei = np.divide(ei, spread, out=np.zeros_like(ei), where=spread > 0)
        if options.agreement is not None:  # close the gate where a share >= τ of heads agree
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
        rows = np.arange(q.shape[1])
        options = self.delight
        if options is None:
            return q[heads, rows].argmax(axis=1), heads
        host_probs = greedy_probs(q[heads, rows] if options.host == "head" else q.mean(axis=0))
        values = self._gate_values(
            q, PosteriorValues(*ensemble_values(q, host_probs, options.baseline))
        )
        act = act_on_values(
            options,
            host_probs,
            values,
            self.epsilon,
            self.rng,
            self.delight_stats if record else None,
            value_scale=self.value_scale,
        )
        actions = act.actions
        if options.commit and act.overridden.any():
            # Switch an overridden row to a head drawn by how much it values the override.
            heads = heads.copy()
            for i in np.flatnonzero(act.overridden):
                weights = np.maximum(q[:, i, actions[i]] - values.baseline[i], 0.0)
                total = weights.sum()
                if total > 0:
                    heads[i] = self.rng.choice(self.num_heads, p=weights / total)
        return actions, heads

    def _delight_stats(self) -> DelightStats | None:
        return None if self.delight is None else self.delight_stats

    def _predict_exploring(
        self, observation: Any, state: PredictState, episode_start: np.ndarray | None
    ) -> Prediction:
        # Greedy on each row's head, with DE on top. The heads travel in ``state`` as
        # ``(heads,)``: rows without one or with ``episode_start`` set draw a new head.
        # a tensor: _setup_model refused the other observation spaces (Dict)
        obs, vectorized = self.policy.obs_to_tensor(observation)
        n = len(obs)
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
        # SB3 DQN's types: a 0-d array for one observation
        return (actions if vectorized else actions.reshape(())), (heads,)

    # -- SB3 hooks -------------------------------------------------------------------------------

    def _learning_set_up(self, envs_reset: bool) -> None:
        if envs_reset or self.episode_heads is None:
            self.episode_heads = self._draw_heads(self.n_envs)

    def _sample_action(
        self, learning_starts: int, action_noise: Any = None, n_envs: int = 1
    ) -> tuple[np.ndarray, np.ndarray]:
        # every env's action from its head (with DE on top); no uniform warm-up
        assert self._last_obs is not None, "self._last_obs was not set"
        if self.episode_heads is None:
            self.episode_heads = self._draw_heads(n_envs)
        obs = np.asarray(self._last_obs)
        actions, self.episode_heads = self._act(obs, self.episode_heads, record=True)
        actions = actions.reshape(n_envs)
        return actions, actions

    def _transition_stored(self, transition: StoredTransition) -> None:
        done = np.asarray(transition.dones, dtype=bool)
        self.steps += len(done)
        if done.any():
            self.episodes += int(done.sum())
            assert self.episode_heads is not None
            self.episode_heads[done] = self._draw_heads(int(done.sum()))

    def _replay_batch(self, ensemble: EnsembleQPosterior, batch: Any) -> Transitions:
        # The sample's one-hot columns when the buffer kept them (they are the rows'
        # encoding, so encoding is skipped).
        x, xn = batch.observation_indices, batch.next_observation_indices
        if x is None or xn is None:
            return super()._replay_batch(ensemble, batch)
        dev, b, masks = ensemble.device, len(batch.actions), batch.masks
        return Transitions(
            x.to(dev),
            xn.to(dev),
            batch.actions.to(dev).reshape(b).long(),
            batch.rewards.to(dev).reshape(b).float(),
            batch.dones.to(dev).reshape(b).float(),
            None if masks is None else masks.to(dev).float(),
        )

    def train(self, gradient_steps: int, batch_size: int = 128) -> None:
        """``gradient_steps`` Adam steps of every head, with hard target updates."""
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
            if auto:  # value_scale="auto": a running average of the TD targets' std
                std = float(stats.target_std)
                old = self.value_scale_estimate
                est = std if old is None else (1 - _AUTO_RATE) * old + _AUTO_RATE * std
                self.value_scale_estimate = max(est, 1e-8)
        self.logger.record("train/n_updates", self._n_updates, exclude="tensorboard")
        self.logger.record("train/loss", float(torch.stack(losses).mean()))
