"""DE's statistics for Stable-Baselines3's logger: one accumulator for every DE algorithm.

:class:`DelightStats` accumulates, between two resets, what DE decided: how often it overrode
the host, the gate sizes, how often the gate was empty, the EI of the overridden actions and
the last ``ε_t``. :class:`~delight_gym.wrappers.DelightExplorationWrapper`,
:class:`~delight_gym.wrappers.DelightDQN` and :class:`~delight_gym.wrappers.BootstrappedDQN`
all record into one, and :meth:`DelightStats.log` writes it to an SB3 logger under the keys
of :data:`LOG_KEYS`:

* ``rollout/exploration_rate`` — ``ε_t`` at the last recorded decision (DE's override
  probability; SB3's own ε-greedy uses the same key);
* ``delight/override_rate`` — fraction of decisions whose action came from a non-empty
  override ``q``;
* ``delight/gate_size`` — mean gate size ``|G|`` over the decisions whose gate was evaluated;
* ``delight/gate_empty_rate`` — fraction of those with an empty gate;
* ``delight/overridden_ei`` — mean EI (as the gate saw it) of the overridden actions (0 when
  nothing was overridden).

A gate is evaluated on every decision, except with ``lazy_gate=True`` (the default of
:class:`~delight_gym.wrappers.DelightDQN`), where only the decisions whose ``ε`` coin chose the
override evaluate it; the two gate statistics are then over those decisions.

TensorBoard works through SB3's own logger (``tensorboard_log=`` of an algorithm, or
``stable_baselines3.common.logger.configure(folder, ["tensorboard"])``; needs the
``tensorboard`` package).

:class:`DelightAlgorithmMixin` is what the two SB3 algorithms with DE share: the logging above
(``ε_t`` at every step, the statistics at every log dump) and ``predict``'s split between the
policy's own greedy choice and DE.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

if TYPE_CHECKING:  # the mixin's base for the type checker; SB3 is not imported at run time
    from stable_baselines3.common.off_policy_algorithm import OffPolicyAlgorithm as _AlgorithmBase
else:
    _AlgorithmBase = object

__all__ = [
    "LOG_KEYS",
    "DelightAlgorithmMixin",
    "DelightStats",
    "PredictState",
    "Prediction",
    "StoredTransition",
]

#: The ``state`` of SB3's ``predict`` (a recurrent policy's; :class:`BootstrappedDQN
#: <delight_gym.wrappers.BootstrappedDQN>`'s heads), and what ``predict`` returns: the
#: actions and the new state.
PredictState = tuple[np.ndarray, ...] | None
Prediction = tuple[np.ndarray, PredictState]

#: The keys :meth:`DelightStats.summary` returns and :meth:`DelightStats.log` records.
LOG_KEYS = (
    "rollout/exploration_rate",
    "delight/override_rate",
    "delight/gate_size",
    "delight/gate_empty_rate",
    "delight/overridden_ei",
)


class DelightStats:
    """DE decisions accumulated between two :meth:`reset` calls.

    Attributes
    ----------
    steps : int
        Decisions recorded (one per observation row).
    overridden : int
        Decisions whose action came from a non-empty override ``q``.
    evaluated : int
        Decisions whose gate was evaluated.
    gate_size_sum : int
        Sum of the gate sizes ``|G|`` of the evaluated decisions.
    gate_empty : int
        Evaluated decisions with an empty gate.
    overridden_ei_sum : float
        Sum of the EI of the overridden actions.
    epsilon : float
        The last ``ε_t`` recorded (NaN before the first).
    """

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Forget everything recorded so far."""
        self.steps = 0
        self.overridden = 0
        self.evaluated = 0
        self.gate_size_sum = 0
        self.gate_empty = 0
        self.overridden_ei_sum = 0.0
        self.epsilon = float("nan")

    def record(
        self,
        overridden: np.ndarray,
        gate_size: np.ndarray,
        gate_empty: np.ndarray,
        overridden_ei: np.ndarray,
        epsilon: float,
        evaluated: np.ndarray | None = None,
    ) -> None:
        """Add one step of ``n`` decisions.

        Parameters
        ----------
        overridden : numpy.ndarray
            bool ``(n,)``.
        gate_size, gate_empty : numpy.ndarray
            int and bool ``(n,)`` (entries of rows not evaluated are ignored).
        overridden_ei : numpy.ndarray
            float ``(m,)``: the EI of each overridden action (``m = overridden.sum()``).
        epsilon : float
            ``ε_t`` of this step.
        evaluated : numpy.ndarray, optional
            bool ``(n,)``: rows whose gate was evaluated (default: all).
        """
        over = np.asarray(overridden, dtype=bool).reshape(-1)
        n = over.size
        ev = np.ones(n, dtype=bool) if evaluated is None else np.asarray(evaluated, dtype=bool)
        ev = ev.reshape(-1)
        if ev.shape != (n,):
            raise ValueError(f"evaluated must have shape ({n},), got {ev.shape}")
        ei = np.asarray(overridden_ei, dtype=np.float64).reshape(-1)
        if ei.size != int(over.sum()):
            raise ValueError(
                f"overridden_ei must hold one value per overridden decision ({int(over.sum())}),"
                f" got {ei.size}"
            )
        self.steps += n
        self.overridden += int(over.sum())
        self.evaluated += int(ev.sum())
        self.gate_size_sum += int(np.asarray(gate_size).reshape(-1)[ev].sum())
        self.gate_empty += int(np.asarray(gate_empty, dtype=bool).reshape(-1)[ev].sum())
        self.overridden_ei_sum += float(ei.sum())
        self.epsilon = float(epsilon)

    def record_info(self, info: dict[str, Any], actions: Any) -> None:
        """Add the decisions of one :meth:`DelightExplorationWrapper.predict
        <delight_gym.wrappers.DelightExplorationWrapper.predict>` call from its ``last_info``.

        Parameters
        ----------
        info : dict
            The wrapper's ``last_info`` (scalars for one observation, ``(n,)`` / ``(n, A)``
            arrays for a batch).
        actions : array_like
            int ``()`` or ``(n,)``: the actions that call returned.
        """
        over = np.atleast_1d(np.asarray(info["overridden"], dtype=bool))
        n = over.size
        gate = np.atleast_1d(np.asarray(info["gate_size"], dtype=np.int64))
        ei = np.asarray(info["expected_improvement"], dtype=np.float64).reshape(n, -1)
        act = np.asarray(actions, dtype=np.int64).reshape(n)
        self.record(
            over,
            gate,
            gate == 0,
            ei[np.flatnonzero(over), act[over]],
            float(info["epsilon"]),
            evaluated=gate >= 0,
        )

    def summary(self) -> dict[str, float]:
        """Means since the last reset, keyed as they are logged (:data:`LOG_KEYS`)."""
        steps = max(self.steps, 1)
        evaluated = self.evaluated
        return {
            "rollout/exploration_rate": self.epsilon,
            "delight/override_rate": self.overridden / steps,
            "delight/gate_size": self.gate_size_sum / evaluated if evaluated else float("nan"),
            "delight/gate_empty_rate": self.gate_empty / evaluated if evaluated else float("nan"),
            "delight/overridden_ei": self.overridden_ei_sum / max(self.overridden, 1),
        }

    def log(self, logger: Any) -> bool:
        """Record :meth:`summary` into an SB3 logger, then :meth:`reset`.

        Does nothing when no decision was recorded since the last reset.

        Parameters
        ----------
        logger : stable_baselines3.common.logger.Logger
            Anything with ``record(key, value)``.

        Returns
        -------
        bool
            Whether anything was recorded.
        """
        if not self.steps:
            return False
        for key, value in self.summary().items():
            logger.record(key, value)
        self.reset()
        return True

    def __repr__(self) -> str:
        return f"{type(self).__name__}(steps={self.steps}, overridden={self.overridden})"


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


class DelightAlgorithmMixin(_AlgorithmBase):
    """What :class:`~delight_gym.wrappers.DelightDQN` and
    :class:`~delight_gym.wrappers.BootstrappedDQN` share as Stable-Baselines3 algorithms, mixed
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
        """Store as the base class does, then :meth:`_transition_stored`."""
        observations = self._last_obs
        super()._store_transition(replay_buffer, buffer_action, new_obs, reward, dones, infos)
        self._transition_stored(
            StoredTransition(observations, buffer_action, new_obs, reward, dones, infos)
        )

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
