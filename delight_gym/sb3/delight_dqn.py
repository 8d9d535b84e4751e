"""``DelightDQN``: Stable-Baselines3 DQN whose exploration is DE instead of ε-greedy.

**Design.** The host is the DQN's own online Q-network (greedy, or Boltzmann with
``host_temperature``); the posterior is
:class:`~delight_gym.posteriors.value.TabularValuePosterior` for Discrete/one-hot
observations (its ``gamma`` is the DQN's), an
:class:`~delight_gym.posteriors.ensemble.EnsembleQPosterior` for any other Box space (K = 10
heads with randomized priors, ``gamma`` and device the DQN's), or any
:class:`~delight_gym.posteriors.base.ValuePosterior` passed as ``posterior``. An
:class:`~delight_gym.posteriors.ensemble.EnsembleQPosterior` (the default or one passed in)
trains from SB3's replay buffer: one TD step of every head on its own replay sample per
gradient step of the Q-network, a hard update of its target heads every
``target_update_period`` of its steps; any other posterior is fed each transition. Every
environment step:

* ``_sample_action`` asks :class:`~delight_gym.wrappers.DelightExplorationWrapper` for the
  action (DE from the first step: there is no uniform warm-up; ``learning_starts`` still
  delays gradient steps). The action executed is the action stored in the replay buffer —
  DQN is off-policy, so the Q-learning target is unaffected by which behaviour policy chose
  it;
* ``_store_transition`` stores it as DQN does and then feeds the same transition (with the
  true final observation of finished episodes, ``terminated`` excluding time-limit
  truncation) to the posterior (an ensemble: only DE's clock advances), advancing DE's ``t``.

SB3's ε-greedy is switched off; ``exploration_*`` arguments are refused. ``exploration_rate``
holds DE's ``ε_t`` and is logged as ``rollout/exploration_rate``; DE's statistics
(:mod:`delight_gym.wrappers.stats`: override rate, gate size, gate-empty rate, EI of the
overridden actions) are logged under ``delight/`` at every log dump and then reset.
``predict(deterministic=False)`` is DE (without advancing ``t``),
``predict(deterministic=True)`` is the greedy Q-network. ``save``/``load`` keep DE's settings,
posterior, ``t`` and random generator (all live in the ``delight`` attribute, which SB3
serialises; the host link back to the model is dropped on save and restored on load).

**PPO and A2C are not given a DE training mode**, on purpose. Their objectives assume the
rollout actions were drawn from the current policy ``π_θ``: A2C's policy gradient has no
importance correction at all, so overridden actions bias the gradient towards whatever DE
chose; PPO's clipped ratio ``π_θ(a)/π_old(a)`` would have to use the acting probability
``μ(a) = (1−ε)π(a) + εq(a)`` instead of ``π_old(a)``, and for the actions DE exists to try
(``π(a)`` tiny, ``q(a)`` large) that ratio is near 0, so the clip zeroes their gradient for
positive advantages, while the GAE advantages and value targets estimate ``V^μ`` rather than
``V^π``. The result would not be PPO/A2C any more, and not a sound off-policy method either.
Recommended instead: train with :class:`DelightDQN` (off-policy, exact), or train PPO/A2C as
usual and wrap the trained model with :class:`~delight_gym.wrappers.DelightExplorationWrapper`
for exploration at evaluation / deployment time (``examples/ppo_wrapped_eval.py``). See
``docs/sb3.md``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from stable_baselines3 import DQN

from delight_gym.posteriors.base import ValuePosterior
from delight_gym.posteriors.encoders import encoder_for_space
from delight_gym.posteriors.ensemble import EnsembleQPosterior
from delight_gym.rule import DEFAULT_GATE_PRICE, DEFAULT_HALF_LIFE, DEFAULT_SURPRISAL_CAP
from delight_gym.sb3.base import (
    DelightAlgorithmMixin,
    Prediction,
    PredictState,
    StoredTransition,
)
from delight_gym.wrappers.exploration import DelightExplorationWrapper
from delight_gym.wrappers.hosts import SB3QHost
from delight_gym.wrappers.stats import DelightStats

__all__ = ["DelightDQN"]

_REFUSED = ("exploration_fraction", "exploration_initial_eps", "exploration_final_eps")


class DelightDQN(DelightAlgorithmMixin, DQN):
    """DQN with Delight-gated exploration (see the module docstring).

    Parameters
    ----------
    policy, env :
        As for :class:`stable_baselines3.DQN`.
    gate_price, surprisal_cap, half_life :
        DE's ``λ``, ``L``, ``M`` (defaults ``0.1``, ``10``, ``100``).
    host_temperature : float, optional
        ``None``: the host is greedy on the Q-network; ``τ > 0``: Boltzmann.
    baseline : {"host", "max"}, default "host"
        EI baseline (see :mod:`delight_gym.wrappers.exploration`).
    posterior : ValuePosterior, optional
        Default: the tabular value posterior of a Discrete/one-hot observation space, else an
        :class:`~delight_gym.posteriors.ensemble.EnsembleQPosterior` (trained from the replay
        buffer, see the module docstring).
    posterior_kwargs : dict, optional
        Arguments of the default posterior (``gamma`` defaults to this DQN's ``gamma``; the
        ensemble's ``device`` to this DQN's device and its ``seed`` to ``delight_seed``).
    delight_seed : int, optional
        Seed of DE's generator; default: ``seed``.
    lazy_gate : bool, default True
        Evaluate the posterior and gate only on steps whose ``ε`` coin chose the override (same
        actions, far cheaper once ``ε_t`` is small; see
        :class:`~delight_gym.wrappers.DelightExplorationWrapper`). ``False`` fills
        ``delight.last_info`` on every step.
    **kwargs :
        Everything else :class:`stable_baselines3.DQN` takes, except ``exploration_*``.

    Attributes
    ----------
    delight : DelightExplorationWrapper
        DE's state: settings, ``posterior``, ``t``, ``rng`` and ``last_info``.
    """

    delight: DelightExplorationWrapper | None

    def __init__(
        self,
        policy: Any,
        env: Any,
        *,
        gate_price: float = DEFAULT_GATE_PRICE,
        surprisal_cap: float = DEFAULT_SURPRISAL_CAP,
        half_life: float = DEFAULT_HALF_LIFE,
        host_temperature: float | None = None,
        baseline: str = "host",
        posterior: ValuePosterior | None = None,
        posterior_kwargs: dict[str, Any] | None = None,
        delight_seed: int | None = None,
        lazy_gate: bool = True,
        **kwargs: Any,
    ) -> None:
        refused = [k for k in _REFUSED if k in kwargs]
        if refused:
            raise TypeError(
                f"DelightDQN replaces ε-greedy exploration; remove {', '.join(refused)}"
            )
        self.delight = None
        self._delight_config: dict[str, Any] = {
            "gate_price": gate_price,
            "surprisal_cap": surprisal_cap,
            "half_life": half_life,
            "host_temperature": host_temperature,
            "baseline": baseline,
            "posterior": posterior,
            "posterior_kwargs": posterior_kwargs,
            "seed": delight_seed if delight_seed is not None else kwargs.get("seed"),
            "lazy_gate": lazy_gate,
        }
        super().__init__(
            policy,
            env,
            exploration_fraction=1.0,
            exploration_initial_eps=0.0,
            exploration_final_eps=0.0,
            **kwargs,
        )

    def _setup_model(self) -> None:
        super()._setup_model()
        if self.delight is None:
            cfg = self._delight_config
            kwargs = dict(cfg["posterior_kwargs"] or {})
            if cfg["posterior"] is None:
                kwargs.setdefault("gamma", float(self.gamma))
                if encoder_for_space(self.observation_space) is None:
                    kwargs.setdefault("device", self.device)
            self.delight = DelightExplorationWrapper(
                SB3QHost(self, cfg["host_temperature"]),
                cfg["posterior"],
                gate_price=cfg["gate_price"],
                surprisal_cap=cfg["surprisal_cap"],
                half_life=cfg["half_life"],
                seed=cfg["seed"],
                baseline=cfg["baseline"],
                posterior_kwargs=kwargs or None,
                lazy_gate=cfg["lazy_gate"],
            )
            self._delight_config = {}  # the wrapper holds it now (and is what gets saved)
        else:  # loaded: the host's link to the model was dropped when it was saved
            host = self.delight.host
            if not isinstance(host, SB3QHost):  # pragma: no cover - set by _setup_model
                raise TypeError("DelightDQN.delight.host must be an SB3QHost")
            host.model = self
            host.observation_space = self.observation_space
            host.action_space = self.action_space

    @property
    def trains_posterior(self) -> bool:
        """Whether the posterior is an ensemble trained from the replay buffer (else it is fed
        every transition through ``observe``)."""
        return isinstance(self._de().posterior, EnsembleQPosterior)

    @property
    def delight_stats(self) -> DelightStats:
        """DE's decisions since the last log dump (the wrapper's ``stats``): training steps and
        any ``predict(deterministic=False)`` call."""
        return self._de().stats

    @property
    def epsilon(self) -> float:
        """DE's current ``ε_t`` (``t``: environment steps seen in training)."""
        return self._de().epsilon

    def _de(self) -> DelightExplorationWrapper:
        if self.delight is None:  # pragma: no cover - only before _setup_model
            raise RuntimeError("DelightDQN is not set up yet")
        return self.delight

    def _delight_stats(self) -> DelightStats:
        return self.delight_stats

    def _predict_exploring(
        self, observation: Any, state: PredictState, episode_start: np.ndarray | None
    ) -> Prediction:
        """DE's action(s) (``predict(deterministic=False)``; ``deterministic=True`` is the greedy
        Q-network's)."""
        return self._de().predict(observation, state, episode_start, deterministic=False)

    def _sample_action(
        self,
        learning_starts: int,
        action_noise: Any = None,
        n_envs: int = 1,
    ) -> tuple[np.ndarray, np.ndarray]:
        """DE's action for every env; the executed action is the one the buffer stores."""
        assert self._last_obs is not None, "self._last_obs was not set"
        actions, _ = self._de().predict(self._last_obs, deterministic=False)
        actions = np.asarray(actions, dtype=np.int64).reshape(n_envs)
        return actions, actions

    def _transition_stored(self, transition: StoredTransition) -> None:
        """After DQN stored the step: an ensemble trained from the replay buffer only advances
        DE's clock; any other posterior is fed the same transition (with the true final
        observation of finished episodes, ``terminated`` excluding time-limit truncation)."""
        dones, infos = transition.dones, transition.infos
        if self.trains_posterior:
            self._de().advance(len(dones))
            return
        reward = (
            self._vec_normalize_env.get_original_reward()
            if self._vec_normalize_env is not None
            else transition.rewards
        )
        next_obs = np.array(transition.new_observations, copy=True)
        truncated = np.zeros(len(dones), dtype=bool)
        for i, done in enumerate(dones):
            truncated[i] = bool(infos[i].get("TimeLimit.truncated", False))
            if done and infos[i].get("terminal_observation") is not None:
                next_obs[i] = infos[i]["terminal_observation"]
        terminated = np.asarray(dones, dtype=bool) & ~truncated
        obs = transition.observations
        self._de().observe(obs, transition.actions, reward, next_obs, terminated, truncated)

    def train(self, gradient_steps: int, batch_size: int = 100) -> None:
        """DQN's gradient steps, then as many TD steps of an ensemble posterior (each on its own
        sample of the replay buffer; a hard update of its targets every
        ``target_update_period`` of them)."""
        super().train(gradient_steps, batch_size)
        if not self.trains_posterior:
            return
        posterior = self._de().posterior
        assert isinstance(posterior, EnsembleQPosterior)
        for _ in range(gradient_steps):
            batch = self.replay_buffer.sample(batch_size, env=self._vec_normalize_env)  # type: ignore[union-attr]
            posterior.td_step(
                batch.observations,
                batch.actions,
                batch.rewards,
                batch.next_observations,
                batch.dones,
            )
            posterior.sgd_steps += 1
            if posterior.sgd_steps % posterior.target_update_period == 0:
                posterior.update_target()
