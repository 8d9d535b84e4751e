"""What the SB3 algorithms with DE share: :class:`DelightAlgorithmMixin` (all four) and
:class:`DelightExplorerMixin` (DelightDQN, DelightSAC, DelightTD3: DE's engine in ``delight``).
Both override SB3's hooks with SB3's exact signatures."""

from __future__ import annotations

from typing import Any, Generic, NamedTuple, TypeVar

import numpy as np
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.off_policy_algorithm import OffPolicyAlgorithm
from stable_baselines3.common.type_aliases import MaybeCallback

from delight_gym._checks import check_all_finite
from delight_gym.de.engine_box import ContinuousDelightWrapper
from delight_gym.de.engine_discrete import DiscreteDelightWrapper
from delight_gym.de.options import DelightOptions
from delight_gym.de.stats import DelightStats
from delight_gym.posteriors.ensemble import EnsembleQPosterior, TDStepStats
from delight_gym.posteriors.ensemble_inputs import Transitions
from delight_gym.posteriors.ensemble_td import ensemble_td_step

__all__ = [
    "DelightAlgorithmMixin",
    "DelightExplorerMixin",
    "PredictState",
    "Prediction",
    "StoredTransition",
]

SelfAlgorithm = TypeVar("SelfAlgorithm", bound="DelightAlgorithmMixin")
#: The DE engine an algorithm of :class:`DelightExplorerMixin` keeps in ``delight``.
EngineT = TypeVar("EngineT", DiscreteDelightWrapper, ContinuousDelightWrapper)

#: The ``state`` of SB3's ``predict`` (BootstrappedDQN's heads), and ``predict``'s return.
PredictState = tuple[np.ndarray, ...] | None
Prediction = tuple[np.ndarray, PredictState]


class StoredTransition(NamedTuple):
    """One step of every env of the VecEnv, as SB3's ``_store_transition`` receives it, plus
    ``observations`` (the ``_last_obs`` the actions were chosen for). Where an episode ended,
    ``new_observations`` holds the next episode's start (the final one is in ``infos``)."""

    observations: Any
    actions: np.ndarray
    new_observations: Any
    rewards: np.ndarray
    dones: np.ndarray
    infos: list[dict[str, Any]]


class DelightAlgorithmMixin(OffPolicyAlgorithm):
    """The SB3 hooks of the DE algorithms, mixed in before their SB3 base class
    (``class DelightDQN(DelightAlgorithmMixin, DQN)``).

    ``predict(deterministic=True)`` is the policy's greedy choice, ``deterministic=False`` the
    algorithm's exploring one; every stored step goes to :meth:`_transition_stored`; while DE
    is on, ``exploration_rate`` is ``ε_t`` and DE's statistics are logged at each dump. A
    subclass provides :attr:`epsilon`, :meth:`_delight_stats`, :meth:`_predict_exploring` and
    :meth:`_transition_stored`.

    Attributes
    ----------
    exploration_rate : float
        ``ε_t`` after the last training step while DE is on (``0.0`` before).
    """

    exploration_rate: float = 0.0

    @property
    def epsilon(self) -> float:
        """DE's current override probability ``ε_t``."""
        raise NotImplementedError

    def _delight_stats(self) -> DelightStats | None:
        """Where DE's decisions are recorded; ``None`` while DE is off."""
        raise NotImplementedError

    def _predict_exploring(
        self, observation: Any, state: PredictState, episode_start: np.ndarray | None
    ) -> Prediction:
        """``predict(deterministic=False)``: the algorithm's exploring action(s)."""
        raise NotImplementedError

    def _transition_stored(self, transition: StoredTransition) -> None:
        """Called after every step is stored in the replay buffer (during ``learn``)."""
        raise NotImplementedError

    def _store_transition(
        self,
        replay_buffer: Any,
        buffer_action: np.ndarray,
        new_obs: Any,
        reward: np.ndarray,
        dones: np.ndarray,
        infos: list[dict[str, Any]],
    ) -> None:
        # Refuse a non-finite step before SB3 stores it; later code trusts the buffer.
        when = f"at timestep {self.num_timesteps}"
        self._check_from_env(reward, "reward", when)
        self._check_from_env(new_obs, "observation", when)
        for i, info in enumerate(infos):
            if dones[i] and info.get("terminal_observation") is not None:
                self._check_from_env(info["terminal_observation"], "terminal observation", when)
        observations = self._last_obs
        super()._store_transition(replay_buffer, buffer_action, new_obs, reward, dones, infos)
        self._transition_stored(
            StoredTransition(observations, buffer_action, new_obs, reward, dones, infos)
        )

    def _setup_learn(
        self,
        total_timesteps: int,
        callback: MaybeCallback = None,
        reset_num_timesteps: bool = True,
        tb_log_name: str = "run",
        progress_bar: bool = False,
    ) -> tuple[int, BaseCallback]:
        envs_reset = self._last_obs is None or reset_num_timesteps  # SB3 resets the envs then
        out = super()._setup_learn(
            total_timesteps, callback, reset_num_timesteps, tb_log_name, progress_bar
        )
        when = f"at reset (timestep {self.num_timesteps})"
        self._check_from_env(self._last_obs, "observation", when)
        self._learning_set_up(envs_reset)
        return out

    def _learning_set_up(self, envs_reset: bool) -> None:
        """Called at the end of ``_setup_learn``; ``envs_reset``: SB3 reset the envs."""

    def learn(
        self: SelfAlgorithm,
        total_timesteps: int,
        callback: MaybeCallback = None,
        log_interval: int = 4,
        tb_log_name: str | None = None,
        reset_num_timesteps: bool = True,
        progress_bar: bool = False,
    ) -> SelfAlgorithm:
        """As SB3's ``learn``; ``tb_log_name`` defaults to the class name."""
        return super().learn(
            total_timesteps=total_timesteps,
            callback=callback,
            log_interval=log_interval,
            tb_log_name=type(self).__name__ if tb_log_name is None else tb_log_name,
            reset_num_timesteps=reset_num_timesteps,
            progress_bar=progress_bar,
        )

    def _check_from_env(self, value: Any, name: str, when: str) -> None:
        """``ValueError`` on a non-finite ``value`` from the env (as SB3's ``VecCheckNan``),
        before it is stored and trains every network to NaN."""
        for part in value.values() if isinstance(value, dict) else (value,):
            try:
                check_all_finite(part, f"the environment's {name}")
            except ValueError as exc:
                raise ValueError(
                    f"{type(self).__name__} stopped {when}: {exc} (the first index is the "
                    "env's). Nothing from this step was stored or trained on."
                ) from None

    def _ensemble_td_step(
        self, ensemble: EnsembleQPosterior, batch_size: int, step: int, period: int
    ) -> TDStepStats:
        """One TD step of every head on its own replay-buffer sample (with its bootstrap masks
        if kept), then a target update when ``step`` is a multiple of ``period``."""
        batch = self.replay_buffer.sample(batch_size, env=self._vec_normalize_env)  # type: ignore[union-attr]
        encoded = self._replay_batch(ensemble, batch)
        stats = ensemble_td_step(ensemble.network, ensemble.optimizer, encoded, ensemble.gamma)
        if step % period == 0:
            ensemble.update_target()
        return stats

    def _replay_batch(self, ensemble: EnsembleQPosterior, batch: Any) -> Transitions:
        """A replay sample as ``ensemble`` trains on it."""
        # Converted, not checked: every observation and reward was checked as the env
        # handed it over, so the public (checking) ``td_step`` is not used.
        given = Transitions(
            batch.observations,
            batch.next_observations,
            batch.actions,
            batch.rewards,
            batch.dones,
            getattr(batch, "masks", None),
        )
        return ensemble.network.inputs.convert(given, ensemble.device)

    def predict(
        self,
        observation: Any,
        state: PredictState = None,
        episode_start: np.ndarray | None = None,
        deterministic: bool = False,
    ) -> Prediction:
        """The policy's greedy action(s) (``deterministic=True``) or the exploring ones."""
        if deterministic:
            return self.policy.predict(observation, state, episode_start, deterministic=True)
        return self._predict_exploring(observation, state, episode_start)

    def _on_step(self) -> None:
        super()._on_step()
        if self._delight_stats() is not None:
            self.exploration_rate = self.epsilon
            self.logger.record("rollout/exploration_rate", self.exploration_rate)

    def dump_logs(self) -> None:
        stats = self._delight_stats()
        if stats is not None:
            stats.log(self.logger)
        super().dump_logs()


class DelightExplorerMixin(DelightAlgorithmMixin, Generic[EngineT]):
    """The DE algorithms whose DE state is an engine in :attr:`delight`, built by
    :meth:`_make_delight` in ``_setup_model``. A subclass's constructor keeps DE's arguments
    with :meth:`_keep_delight_config` and passes SB3's on to the SB3 class.

    Attributes
    ----------
    delight : DiscreteDelightWrapper or ContinuousDelightWrapper
        DE's state (saved and loaded with the model).
    """

    delight: EngineT | None
    _delight_config: dict[str, Any]

    @classmethod
    def _sb3_class(cls) -> type:
        return next(c for c in cls.__mro__ if c.__module__.startswith("stable_baselines3"))

    def _keep_delight_config(self, **config: Any) -> None:
        """Keep DE's settings until ``_setup_model``; ``delight`` becomes resolved ``options``."""
        name = type(self).__name__
        if config["delight"] is False:
            raise ValueError(
                f"delight=False: {name} is DE; use stable_baselines3."
                f"{self._sb3_class().__name__} instead"
            )
        options = DelightOptions.make(config.pop("delight")) or DelightOptions()
        # the engine built from these options refuses what it cannot do (spread on Discrete)
        config["options"] = options.resolve(
            name, clocks=("step", "episode"), commits=True, spread_scale=True
        )
        self.delight = None
        self._delight_config = config

    def _posterior_kwargs(self, **defaults: Any) -> dict[str, Any] | None:
        """The constructor's ``posterior_kwargs``, over ``defaults`` for the default posterior."""
        cfg = self._delight_config
        if cfg["posterior"] is not None:
            return cfg["posterior_kwargs"]
        return {**defaults, **(cfg["posterior_kwargs"] or {})}

    def _make_delight(self) -> EngineT:
        raise NotImplementedError

    def _setup_model(self) -> None:
        super()._setup_model()
        if self.delight is None:
            self.delight = self._make_delight()
            self._delight_config = {}  # the engine holds it now (and is what gets saved)
        else:  # loaded: the host's link to the model was dropped when it was saved
            host: Any = self.delight.host
            host.model = self
            host.observation_space = self.observation_space
            host.action_space = self.action_space

    def _de(self) -> EngineT:
        if self.delight is None:  # pragma: no cover - only before _setup_model
            raise RuntimeError(f"{type(self).__name__} is not set up yet")
        return self.delight

    @property
    def epsilon(self) -> float:
        """DE's current ``ε_t``."""
        return self._de().epsilon

    @property
    def delight_stats(self) -> DelightStats:
        """DE's decisions since the last log dump (the engine's ``stats``)."""
        return self._de().stats

    def _delight_stats(self) -> DelightStats:
        return self.delight_stats

    def _predict_exploring(
        self, observation: Any, state: PredictState, episode_start: np.ndarray | None
    ) -> Prediction:
        return self._de().predict(observation, state, episode_start, deterministic=False)


#: Its former name (kept for subclasses written against it).
DelightWrapperMixin = DelightExplorerMixin
