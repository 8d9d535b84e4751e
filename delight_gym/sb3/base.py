"""What the SB3 algorithms with DE share: :class:`DelightAlgorithmMixin` (all four) and
:class:`DelightExplorerMixin` (DelightDQN, DelightSAC, DelightTD3: DE's engine in ``delight``).

:class:`DelightAlgorithmMixin` is mixed in before the SB3 base class and overrides SB3's hooks
with SB3's exact signatures: ``predict`` (``deterministic=True`` is the policy's own greedy
choice), ``_store_transition`` (then :meth:`DelightAlgorithmMixin._transition_stored`),
``_on_step`` (``exploration_rate = ε_t``) and ``dump_logs`` (DE's
:class:`~delight_gym.de.stats.DelightStats` before SB3's own dump).
"""

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

#: The ``state`` of SB3's ``predict`` (a recurrent policy's; :class:`BootstrappedDQN
#: <delight_gym.sb3.BootstrappedDQN>`'s heads), and what ``predict`` returns: the
#: actions and the new state.
PredictState = tuple[np.ndarray, ...] | None
Prediction = tuple[np.ndarray, PredictState]


class StoredTransition(NamedTuple):
    """One step of every env of the VecEnv, as SB3's ``_store_transition`` receives it.

    Attributes
    ----------
    observations : numpy.ndarray
        ``(n_envs, ...)``: what the actions were chosen for (the algorithm's ``_last_obs``).
    actions : numpy.ndarray
        ``(n_envs,)`` (or ``(n_envs, 1)``): the actions stored in the replay buffer.
    new_observations : numpy.ndarray
        ``(n_envs, ...)`` after the step: the next episode's first observation where an
        episode ended (its final one is ``infos[i]["terminal_observation"]``).
    rewards, dones : numpy.ndarray
        ``(n_envs,)``.
    infos : list of dict
        The VecEnv's ``infos`` (``"TimeLimit.truncated"``, ``"terminal_observation"``).
    """

    observations: Any
    actions: np.ndarray
    new_observations: Any
    rewards: np.ndarray
    dones: np.ndarray
    infos: list[dict[str, Any]]


class DelightAlgorithmMixin(OffPolicyAlgorithm):
    """What :class:`~delight_gym.sb3.DelightDQN` and
    :class:`~delight_gym.sb3.BootstrappedDQN` share as Stable-Baselines3 algorithms, mixed
    in before their SB3 base class (``class DelightDQN(DelightAlgorithmMixin, DQN)``).

    * :meth:`predict` with SB3's signature: ``deterministic=True`` is the policy's own greedy
      choice (SB3's contract), ``deterministic=False`` the algorithm's exploring choice
      (:meth:`_predict_exploring`, DE where it is on);
    * ``_store_transition`` stores as the base class does, then hands the step to
      :meth:`_transition_stored` (where DE's clock advances);
    * while DE is on (:meth:`_delight_stats` is not ``None``): after the base class's
      ``_on_step``, ``exploration_rate = ε_t`` (:attr:`epsilon`), recorded as
      ``rollout/exploration_rate``; at every log dump the :class:`DelightStats` since the last
      one are logged (then reset) before SB3's own dump.

    A subclass provides :attr:`epsilon`, :meth:`_delight_stats`, :meth:`_predict_exploring`
    and :meth:`_transition_stored`.

    Attributes
    ----------
    exploration_rate : float
        ``ε_t`` after the last training step while DE is on (``0.0`` before; SB3's DQN keeps
        its own ε here too).
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
        """Check the environment's data (:meth:`_check_from_env`), store as the base class
        does, then :meth:`_transition_stored`."""
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
        """The base class's setup, then :meth:`_check_from_env` on the observation to act on
        (the reset's, for a fresh start), then :meth:`_learning_set_up`."""
        envs_reset = self._last_obs is None or reset_num_timesteps  # SB3 resets the envs then
        out = super()._setup_learn(
            total_timesteps, callback, reset_num_timesteps, tb_log_name, progress_bar
        )
        when = f"at reset (timestep {self.num_timesteps})"
        self._check_from_env(self._last_obs, "observation", when)
        self._learning_set_up(envs_reset)
        return out

    def _learning_set_up(self, envs_reset: bool) -> None:
        """Called at the end of ``_setup_learn``; ``envs_reset``: SB3 reset the envs (a fresh
        start or ``reset_num_timesteps=True``). Nothing by default."""

    def learn(
        self: SelfAlgorithm,
        total_timesteps: int,
        callback: MaybeCallback = None,
        log_interval: int = 4,
        tb_log_name: str | None = None,
        reset_num_timesteps: bool = True,
        progress_bar: bool = False,
    ) -> SelfAlgorithm:
        """As SB3's ``learn``; TensorBoard runs are named ``<class name>_<i>`` (``DelightDQN_1``)
        unless ``tb_log_name`` is given."""
        return super().learn(
            total_timesteps=total_timesteps,
            callback=callback,
            log_interval=log_interval,
            tb_log_name=type(self).__name__ if tb_log_name is None else tb_log_name,
            reset_num_timesteps=reset_num_timesteps,
            progress_bar=progress_bar,
        )

    def _check_from_env(self, value: Any, name: str, when: str) -> None:
        """Stop training with a ``ValueError`` the first time the environment hands over a
        non-finite observation or reward (SB3's ``VecCheckNan`` is the model), instead of
        storing it and training every network to NaN.

        Parameters
        ----------
        value : numpy.ndarray or dict
            ``(n_envs, ...)`` (a Dict observation: each of its arrays).
        name : str
            ``"reward"``, ``"observation"`` or ``"terminal observation"``.
        when : str
            Where it came in (``"at timestep 25"``).
        """
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
        """One TD step of every head of ``ensemble`` on its own sample of SB3's replay buffer
        (with the sample's bootstrap masks when the buffer keeps them), then a hard update of
        the target heads when ``step``, this step's count, is a multiple of ``period``: how both
        algorithms train an ensemble from the replay buffer, with no copy of its transitions."""
        batch = self.replay_buffer.sample(batch_size, env=self._vec_normalize_env)  # type: ignore[union-attr]
        transitions = Transitions(
            observations=batch.observations,
            next_observations=batch.next_observations,
            actions=batch.actions,
            rewards=batch.rewards,
            terminated=batch.dones,
            masks=getattr(batch, "masks", None),
        )
        # check=False: every observation and reward was checked as the env handed it over
        stats = ensemble.td_step(transitions, check=False)
        if step % period == 0:
            ensemble.update_target()
        return stats

    def predict(
        self,
        observation: Any,
        state: PredictState = None,
        episode_start: np.ndarray | None = None,
        deterministic: bool = False,
    ) -> Prediction:
        """The policy's greedy action(s) (``deterministic=True``, ``state`` passed through) or
        the exploring ones (:meth:`_predict_exploring`)."""
        if deterministic:
            return self.policy.predict(observation, state, episode_start, deterministic=True)
        return self._predict_exploring(observation, state, episode_start)

    def _on_step(self) -> None:
        """The base class's step hook, then ``exploration_rate = ε_t`` (logged) while DE is on."""
        super()._on_step()
        if self._delight_stats() is not None:
            self.exploration_rate = self.epsilon
            self.logger.record("rollout/exploration_rate", self.exploration_rate)

    def dump_logs(self) -> None:
        """Log DE's statistics since the last dump (then reset them), then SB3's."""
        stats = self._delight_stats()
        if stats is not None:
            stats.log(self.logger)
        super().dump_logs()


class DelightExplorerMixin(DelightAlgorithmMixin, Generic[EngineT]):
    """What :class:`~delight_gym.sb3.DelightDQN`, :class:`~delight_gym.sb3.DelightSAC` and
    :class:`~delight_gym.sb3.DelightTD3` share: DE's state is an engine
    (:mod:`delight_gym.de.engine`) in :attr:`delight`, built by :meth:`_make_delight` in
    ``_setup_model`` (a loaded one gets its host's link to the model back), which records the
    statistics and decides ``predict(deterministic=False)``.

    A subclass's constructor lists SB3's arguments and DE's, keeps DE's with
    :meth:`_keep_delight_config` and passes SB3's on to the SB3 class, as SB3's own algorithms
    pass theirs to their base class.

    Attributes
    ----------
    delight : DiscreteDelightWrapper or ContinuousDelightWrapper
        DE's state (saved and loaded with the model).
    """

    delight: EngineT | None
    _delight_config: dict[str, Any]

    @classmethod
    def _sb3_class(cls) -> type:
        """The Stable-Baselines3 class this algorithm extends (DQN, SAC, TD3)."""
        return next(c for c in cls.__mro__ if c.__module__.startswith("stable_baselines3"))

    def _keep_delight_config(self, **config: Any) -> None:
        """Check and keep DE's settings until ``_setup_model`` builds the engine: ``delight``
        (not ``False``) becomes ``options``, resolved with the step clock."""
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
        """``posterior_kwargs`` for the engine: the constructor's, over ``defaults`` (this
        algorithm's, e.g. its ``device``) when the default posterior is built."""
        cfg = self._delight_config
        if cfg["posterior"] is not None:
            return cfg["posterior_kwargs"]
        return {**defaults, **(cfg["posterior_kwargs"] or {})}

    def _make_delight(self) -> EngineT:
        """The engine, from ``_delight_config`` (the constructor's DE settings)."""
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
        """DE's current ``ε_t`` (``t``: environment steps seen in training)."""
        return self._de().epsilon

    @property
    def delight_stats(self) -> DelightStats:
        """DE's decisions since the last log dump (the engine's ``stats``): training steps and
        any ``predict(deterministic=False)`` call."""
        return self._de().stats

    def _delight_stats(self) -> DelightStats:
        return self.delight_stats

    def _predict_exploring(
        self, observation: Any, state: PredictState, episode_start: np.ndarray | None
    ) -> Prediction:
        """DE's action(s) (``predict(deterministic=False)``)."""
        return self._de().predict(observation, state, episode_start, deterministic=False)


#: Its former name (kept for subclasses written against it).
DelightWrapperMixin = DelightExplorerMixin
