"""``DelightSAC`` and ``DelightTD3``: SB3's SAC and TD3 whose collected actions DE decides.

Each environment step, ``_sample_action`` asks the algorithm's engine
(:class:`~delight_gym.de.engine_box.ContinuousDelightWrapper`) for the action: the host is
the algorithm's own actor (SAC: a draw of its squashed Gaussian; TD3: ``μ(s)``, plus
``action_noise`` where DE does not override), the posterior a
:class:`~delight_gym.posteriors.q_ensemble.ContinuousQEnsemble` trained by TD from the same
replay samples, next actions from the actor. The executed action is the one the buffer stores
(SB3's ``[-1, 1]`` scaling), so the data stay valid off-policy data. What the two share:
:class:`DelightOffPolicyMixin`. Guide: ``docs/sb3.md``.
"""

from __future__ import annotations

import io
import pathlib
import zipfile
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from stable_baselines3 import SAC, TD3
from stable_baselines3.common.buffers import ReplayBuffer
from stable_baselines3.common.noise import ActionNoise
from stable_baselines3.common.save_util import load_from_zip_file
from stable_baselines3.common.type_aliases import GymEnv, Schedule
from stable_baselines3.common.vec_env import VecEnv
from stable_baselines3.sac.policies import SACPolicy
from stable_baselines3.td3.policies import TD3Policy

from delight_gym._checks import (
    check_all_finite,
    check_box_bounds,
    check_positive_int,
    check_probability,
)
from delight_gym.de.engine_box import DEFAULT_CANDIDATES, ContinuousDelightWrapper
from delight_gym.de.hosts import BoxHost
from delight_gym.de.options import DelightOptions
from delight_gym.posteriors.q_ensemble import ContinuousQEnsemble, ContinuousTransitions
from delight_gym.sb3.base import DelightExplorerMixin, StoredTransition
from delight_gym.sb3.bootstrapped_policy import sb3_arguments
from delight_gym.sb3.hosts import DEFAULT_HOST_STD, SB3DeterministicHost, SB3GaussianHost

__all__ = ["DEFAULT_POSTERIOR_EPSILON", "DelightOffPolicyMixin", "DelightSAC", "DelightTD3"]

#: ``posterior_epsilon``'s default: the posterior trains at every gradient step while
#: ``ε_t >= 0.1``, then on a share ``ε_t / 0.1`` of them.
DEFAULT_POSTERIOR_EPSILON = 0.1


class DelightOffPolicyMixin(DelightExplorerMixin[ContinuousDelightWrapper]):
    """What :class:`DelightSAC` and :class:`DelightTD3` share, mixed in before SAC or TD3.

    A subclass provides :meth:`_make_host` and :meth:`_actor_actions`; this mixin builds the
    engine in ``_setup_model`` (or rebinds a loaded one), decides the collected actions in
    ``_sample_action`` and trains the posterior after SB3's own gradient steps
    (:meth:`_train_posterior`).

    Attributes
    ----------
    delight : ContinuousDelightWrapper
        DE's state: options, ``posterior``, clock ``t``, ``rng``, ``stats`` (saved with the
        model).
    """

    posterior_epsilon: float = DEFAULT_POSTERIOR_EPSILON
    _posterior_credit: float = 0.0

    def _keep_delight_config(self, **config: Any) -> None:
        n_steps = config.pop("n_steps")
        check_positive_int(config.pop("batch_size"), "batch_size")
        eps = check_probability(config.pop("posterior_epsilon"), "posterior_epsilon")
        super()._keep_delight_config(**config)
        if n_steps != 1:
            raise ValueError(
                f"{type(self).__name__} trains its posterior by one-step TD: n_steps must be 1"
            )
        self.posterior_epsilon = eps
        self._posterior_credit = 0.0

    @classmethod
    def _wrap_env(cls, env: GymEnv, verbose: int = 0, monitor_wrapper: bool = True) -> VecEnv:
        """SB3's, after refusing ``Dict`` observations (before SB3 suggests MultiInputPolicy)."""
        space = env.observation_space
        if not isinstance(space, spaces.Box | spaces.Discrete):
            raise TypeError(
                f"{cls.__name__} supports Box observations, not {type(space).__name__} "
                "(MultiInputPolicy): its Q-ensemble and candidate sets take flat observations; "
                "flatten them first (gymnasium.wrappers.FlattenObservation)"
            )
        return super()._wrap_env(env, verbose, monitor_wrapper)

    def _setup_model(self) -> None:
        """Refuse integer or unbounded ``Box`` actions before SB3 allocates anything."""
        check_box_bounds(self.action_space, "action_space")
        super()._setup_model()

    def predict(
        self,
        observation: Any,
        state: Any = None,
        episode_start: np.ndarray | None = None,
        deterministic: bool = False,
    ) -> tuple[np.ndarray, Any]:
        """As the base class's; a non-finite observation is refused naming ``observation``
        (``deterministic=True`` included)."""
        if deterministic:
            check_all_finite(np.asarray(observation), "observation")
        return super().predict(observation, state, episode_start, deterministic)

    @classmethod
    def load(
        cls,
        path: str | pathlib.Path | io.BufferedIOBase,
        env: Any = None,
        device: torch.device | str = "auto",
        custom_objects: dict[str, Any] | None = None,
        print_system_info: bool = False,
        force_reset: bool = True,
        **kwargs: Any,
    ) -> Any:
        """SB3's ``load``, after checking that ``path`` holds a whole saved model of this class
        with DE's engine: one ``ValueError`` naming the file and what is missing otherwise."""
        try:
            saved = load_from_zip_file(path, device=device, custom_objects=custom_objects)
        except (zipfile.BadZipFile, EOFError, KeyError, OSError, RuntimeError, ValueError) as exc:
            # RuntimeError: torch's reader of a truncated .pth file
            raise ValueError(f"{path} is not a readable saved {cls.__name__}: {exc}") from None
        missing = _missing_in_save(cls, *saved)
        if missing:
            raise ValueError(f"{path} is not a complete saved {cls.__name__}: {missing}")
        return super().load(
            path, env, device, custom_objects, print_system_info, force_reset, **kwargs
        )

    def _make_host(self) -> BoxHost:
        raise NotImplementedError

    def _actor_actions(self, observations: torch.Tensor) -> torch.Tensor:
        """The actor's deterministic actions in SB3's ``[-1, 1]`` units (no graph)."""
        raise NotImplementedError

    def _make_delight(self) -> ContinuousDelightWrapper:
        cfg = self._delight_config
        return ContinuousDelightWrapper(
            self._make_host(),
            cfg["posterior"],
            delight=cfg["options"],
            seed=cfg["seed"],
            n_host=cfg["n_host"],
            n_posterior=cfg["n_posterior"],
            posterior_kwargs=self._posterior_kwargs(device=self.device),
            start_step=0,
        )

    def _sample_action(
        self,
        learning_starts: int,
        action_noise: ActionNoise | None = None,
        n_envs: int = 1,
    ) -> tuple[np.ndarray, np.ndarray]:
        """DE's action for every env from the first step (no uniform warm-up); ``action_noise``
        is added to the host's action where DE did not override. Returns the executed action
        and the buffer's, ``unscale(buffer_action)`` exactly."""
        assert self._last_obs is not None, "self._last_obs was not set"
        de = self._de()
        actions, _ = de.predict(self._last_obs, deterministic=False)
        shape = (n_envs, *self.action_space.shape)  # type: ignore[misc]
        scaled = self.policy.scale_action(np.asarray(actions, dtype=np.float32).reshape(shape))
        if action_noise is not None:
            noise = np.asarray(action_noise())
            if noise.shape not in (shape, shape[1:]):
                raise ValueError(
                    f"action_noise must return shape {shape[1:]} or {shape}, got {noise.shape}"
                )
            check_all_finite(noise, "action_noise()")
            noisy = scaled + noise
            overridden = np.asarray(de.last_info["overridden"], dtype=bool).reshape(n_envs, 1)
            scaled = np.where(overridden, scaled, noisy)
        buffer_action = np.clip(scaled, -1.0, 1.0).astype(np.float32)
        return self.policy.unscale_action(buffer_action), buffer_action

    def _transition_stored(self, transition: StoredTransition) -> None:
        """The posterior trains from the buffer: only DE's clock advances."""
        self._de().advance(len(transition.dones), transition.dones)

    def _unscale(self, scaled: torch.Tensor) -> torch.Tensor:
        """SB3's ``[-1, 1]`` actions in the environment's units (float64, inside the box)."""
        de = self._de()  # its low and high: the action space's bounds, checked once
        low, high = (torch.as_tensor(b, device=scaled.device) for b in (de.low, de.high))
        return torch.clamp(low + 0.5 * (scaled.double() + 1.0) * (high - low), low, high)

    def _posterior_steps(self, gradient_steps: int) -> int:
        """How many of SB3's ``gradient_steps`` the posterior takes: all while
        ``ε_t >= posterior_epsilon``, then a share ``ε_t / posterior_epsilon`` (the fraction
        carried over, so the count is exact on average and needs no randomness)."""
        floor = self.posterior_epsilon
        share = 1.0 if floor == 0 else min(1.0, self._de().epsilon / floor)
        credit = self._posterior_credit + gradient_steps * share
        steps = int(credit)
        self._posterior_credit = credit - steps
        return steps

    def _train_posterior(self, gradient_steps: int, batch_size: int) -> None:
        """Posterior TD steps (:meth:`_posterior_steps` of SB3's), each on its own replay
        sample, with next actions from the actor; a posterior without ``update`` is left as
        given."""
        posterior = self._de().posterior
        # The replay data were checked as the env handed them over; the actions are clamped.
        trusted = isinstance(posterior, ContinuousQEnsemble)
        update = posterior._update if trusted else getattr(posterior, "update", None)
        if update is None:
            return
        for _ in range(self._posterior_steps(gradient_steps)):
            data = self.replay_buffer.sample(batch_size, env=self._vec_normalize_env)  # type: ignore[union-attr]
            with torch.no_grad():
                next_actions = self._unscale(self._actor_actions(data.next_observations))
            update(
                ContinuousTransitions(
                    data.observations,
                    self._unscale(data.actions),
                    data.rewards,
                    data.next_observations,
                    data.dones,
                    next_actions,
                )
            )


def _missing_in_save(cls: Any, data: Any, params: Any, variables: Any) -> str:
    """What a saved model's ``data``, ``params`` and torch ``variables`` lack for a ``cls``
    ("" when whole)."""
    if not data or not params:
        return "no model data or parameters (the file is truncated)"
    if "policy" not in params:
        return "it has no policy.pth (the networks' weights)"
    if variables is None:
        return "it has no pytorch_variables.pth (SAC's entropy coefficient)"
    policy, base = data.get("policy_class"), cls.policy_aliases["MlpPolicy"]
    if not (isinstance(policy, type) and issubclass(policy, base)):
        return f"its policy is a {getattr(policy, '__name__', policy)}, not a {base.__name__}"
    engine = data.get("delight")
    if engine is None:
        return "its data has no 'delight' entry (DE's engine)"
    if not isinstance(engine, ContinuousDelightWrapper):
        return f"its 'delight' entry is a {type(engine).__name__}, not DE's engine"
    state = getattr(engine, "__dict__", {})
    for name, kind in (("rng", np.random.Generator), ("delight", DelightOptions)):
        if not isinstance(state.get(name), kind):
            return f"its engine's {name!r} is {state.get(name)!r}, not a {kind.__name__}"
    t = state.get("t")
    if isinstance(t, bool) or not isinstance(t, int) or t < 0:
        return f"its engine's clock 't' is {t!r}, not an integer >= 0"
    for name in ("host", "posterior", "n_host", "n_posterior"):
        if state.get(name) is None:
            return f"its engine has no {name!r}"
    for name in ("observation_space", "action_space"):
        if state.get(name) != data.get(name):
            return f"its engine's {name} {state.get(name)} is not the model's {data.get(name)}"
    return ""


class DelightSAC(DelightOffPolicyMixin, SAC):
    """SAC with Delight-gated exploration deciding the collected actions (module docstring).

    Parameters
    ----------
    policy, env, learning_rate, buffer_size, learning_starts, batch_size, tau, gamma :
        As for :class:`stable_baselines3.SAC`, with its defaults.
    train_freq, gradient_steps, action_noise, replay_buffer_class, replay_buffer_kwargs :
        As for SAC, as are ``optimize_memory_usage``, ``ent_coef``, ``target_update_interval``,
        ``target_entropy``.
    n_steps : int, default 1
        Must be 1 (the posterior learns one-step TD).
    use_sde, sde_sample_freq, use_sde_at_warmup :
        ``use_sde`` must be False (DE draws the host's actions with its own generator).
    stats_window_size, tensorboard_log, policy_kwargs, verbose, device, _init_setup_model :
        As for SAC.
    seed : int, optional
        Seeds SB3, DE's generator and the default posterior.
    delight : DelightOptions or dict, optional
        DE's options (clock: environment steps).
    posterior : object, optional
        Default: a :class:`~delight_gym.posteriors.q_ensemble.ContinuousQEnsemble` (``gamma``,
        ``device`` and ``seed`` this SAC's).
    posterior_kwargs, n_host, n_posterior : dict, int, int, default None, 8, 8
        The default posterior's arguments; host draws and posterior proposals per candidate set.
    posterior_epsilon : float, default 0.1
        In ``[0, 1]``: the default posterior takes a TD step at every gradient step while
        ``ε_t >= posterior_epsilon``, then at a share ``ε_t / posterior_epsilon`` of them (its
        EI is read only on the rows that explore, a share ``ε_t``); 0: at every step.
    """

    def __init__(
        self,
        policy: str | type[SACPolicy],
        env: GymEnv | str,
        learning_rate: float | Schedule = 3e-4,
        buffer_size: int = 1_000_000,
        learning_starts: int = 100,
        batch_size: int = 256,
        tau: float = 0.005,
        gamma: float = 0.99,
        train_freq: int | tuple[int, str] = 1,
        gradient_steps: int = 1,
        action_noise: ActionNoise | None = None,
        replay_buffer_class: type[ReplayBuffer] | None = None,
        replay_buffer_kwargs: dict[str, Any] | None = None,
        optimize_memory_usage: bool = False,
        n_steps: int = 1,
        ent_coef: str | float = "auto",
        target_update_interval: int = 1,
        target_entropy: str | float = "auto",
        use_sde: bool = False,
        sde_sample_freq: int = -1,
        use_sde_at_warmup: bool = False,
        stats_window_size: int = 100,
        tensorboard_log: str | None = None,
        policy_kwargs: dict[str, Any] | None = None,
        verbose: int = 0,
        seed: int | None = None,
        device: torch.device | str = "auto",
        _init_setup_model: bool = True,
        *,
        delight: DelightOptions | dict[str, Any] | None = None,
        posterior: Any = None,
        posterior_kwargs: dict[str, Any] | None = None,
        n_host: int = DEFAULT_CANDIDATES,
        n_posterior: int = DEFAULT_CANDIDATES,
        posterior_epsilon: float = DEFAULT_POSTERIOR_EPSILON,
    ) -> None:
        if use_sde:
            raise ValueError("DelightSAC draws the host's actions itself: use_sde must be False")
        self._keep_delight_config(
            n_steps=n_steps,
            delight=delight,
            posterior=posterior,
            posterior_kwargs=posterior_kwargs,
            n_host=n_host,
            n_posterior=n_posterior,
            seed=seed,
            batch_size=batch_size,
            posterior_epsilon=posterior_epsilon,
        )
        super().__init__(**sb3_arguments(SAC, locals()))

    def _make_host(self) -> BoxHost:
        return SB3GaussianHost(self)

    def _actor_actions(self, observations: torch.Tensor) -> torch.Tensor:
        return self.actor(observations, deterministic=True)

    def train(self, gradient_steps: int, batch_size: int = 64) -> None:
        """SAC's gradient steps, then as many TD steps of the posterior."""
        super().train(gradient_steps, batch_size)
        self._train_posterior(gradient_steps, batch_size)


class DelightTD3(DelightOffPolicyMixin, TD3):
    """TD3 with Delight-gated exploration deciding the collected actions (module docstring).

    Parameters
    ----------
    policy, env, learning_rate, buffer_size, learning_starts, batch_size, tau, gamma :
        As for :class:`stable_baselines3.TD3`, with its defaults.
    train_freq, gradient_steps, replay_buffer_class, replay_buffer_kwargs :
        As for TD3.
    action_noise : ActionNoise, optional
        Added to the host's action ``μ(s)`` where DE does not override (default: none, DE is
        the exploration).
    optimize_memory_usage, policy_delay, target_policy_noise, target_noise_clip :
        As for TD3.
    n_steps : int, default 1
        Must be 1 (the posterior learns one-step TD).
    stats_window_size, tensorboard_log, policy_kwargs, verbose, device, _init_setup_model :
        As for TD3.
    seed : int, optional
        Seeds SB3, DE's generator and the default posterior.
    delight, posterior, posterior_kwargs, n_host, n_posterior, posterior_epsilon :
        As for :class:`DelightSAC`.
    host_std : float, default 0.1
        ``> 0``: the stated proposal around ``μ(s)`` (a fraction of each coordinate's range)
        that gives the deterministic host a density.
    """

    def __init__(
        self,
        policy: str | type[TD3Policy],
        env: GymEnv | str,
        learning_rate: float | Schedule = 1e-3,
        buffer_size: int = 1_000_000,
        learning_starts: int = 100,
        batch_size: int = 256,
        tau: float = 0.005,
        gamma: float = 0.99,
        train_freq: int | tuple[int, str] = 1,
        gradient_steps: int = 1,
        action_noise: ActionNoise | None = None,
        replay_buffer_class: type[ReplayBuffer] | None = None,
        replay_buffer_kwargs: dict[str, Any] | None = None,
        optimize_memory_usage: bool = False,
        n_steps: int = 1,
        policy_delay: int = 2,
        target_policy_noise: float = 0.2,
        target_noise_clip: float = 0.5,
        stats_window_size: int = 100,
        tensorboard_log: str | None = None,
        policy_kwargs: dict[str, Any] | None = None,
        verbose: int = 0,
        seed: int | None = None,
        device: torch.device | str = "auto",
        _init_setup_model: bool = True,
        *,
        delight: DelightOptions | dict[str, Any] | None = None,
        posterior: Any = None,
        posterior_kwargs: dict[str, Any] | None = None,
        n_host: int = DEFAULT_CANDIDATES,
        n_posterior: int = DEFAULT_CANDIDATES,
        host_std: float = DEFAULT_HOST_STD,
        posterior_epsilon: float = DEFAULT_POSTERIOR_EPSILON,
    ) -> None:
        self._keep_delight_config(
            n_steps=n_steps,
            delight=delight,
            posterior=posterior,
            posterior_kwargs=posterior_kwargs,
            n_host=n_host,
            n_posterior=n_posterior,
            seed=seed,
            batch_size=batch_size,
            posterior_epsilon=posterior_epsilon,
            host_std=host_std,
        )
        super().__init__(**sb3_arguments(TD3, locals()))

    def _make_host(self) -> BoxHost:
        return SB3DeterministicHost(self, self._delight_config["host_std"])

    def _actor_actions(self, observations: torch.Tensor) -> torch.Tensor:
        return self.actor(observations)

    def train(self, gradient_steps: int, batch_size: int = 100) -> None:
        """TD3's gradient steps, then as many TD steps of the posterior."""
        super().train(gradient_steps, batch_size)
        self._train_posterior(gradient_steps, batch_size)
