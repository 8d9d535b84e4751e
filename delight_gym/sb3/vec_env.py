"""Gymnasium 1.x vector envs as Stable-Baselines3 ``VecEnv``: :class:`SB3VecEnvAdapter`.

The adapter gives SB3 what its ``DummyVecEnv`` gives (``infos`` with ``"terminal_observation"``
and ``"TimeLimit.truncated"``, finished sub-envs restarted whatever the autoreset mode, sub-env
``i`` seeded ``seed + i``), so it equals a ``DummyVecEnv`` of the single envs seed for seed.
"""

from __future__ import annotations

from collections.abc import Sequence
from copy import deepcopy
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import concatenate, create_empty_array, iterate
from gymnasium.wrappers.vector import DictInfoToList
from stable_baselines3.common.env_util import is_wrapped
from stable_baselines3.common.vec_env.base_vec_env import (
    VecEnv,
    VecEnvIndices,
    VecEnvObs,
    VecEnvStepReturn,
)

from delight_gym._checks import check_instance

__all__ = ["SB3VecEnvAdapter"]

#: The keys a SAME_STEP vector env adds to ``infos`` for finished sub-envs.
_FINAL_KEYS = ("final_obs", "final_info")


class SB3VecEnvAdapter(VecEnv):
    """A Gymnasium 1.x ``VectorEnv`` seen as a Stable-Baselines3 ``VecEnv``.

    Parameters
    ----------
    venv : gymnasium.vector.VectorEnv
        E.g. ``gym.make_vec("DeepSea-v0", num_envs=8)``. Its single spaces become the
        adapter's spaces; its ``metadata["autoreset_mode"]`` (default ``NEXT_STEP``) decides
        how finished sub-envs are restarted.

    Raises
    ------
    TypeError, ValueError
        ``venv`` is not a ``VectorEnv``, or its ``autoreset_mode`` not an ``AutoresetMode``.
    """

    def __init__(self, venv: VectorEnv) -> None:
        check_instance(
            venv, VectorEnv, "venv", "a gymnasium.vector.VectorEnv (e.g. gym.make_vec(...))"
        )
        mode = venv.metadata.get("autoreset_mode", AutoresetMode.NEXT_STEP)
        try:
            self.autoreset_mode = AutoresetMode(mode)
        except ValueError:
            raise ValueError(
                f'venv.metadata["autoreset_mode"] must be an AutoresetMode, got {mode!r}'
            ) from None
        self.venv = venv
        # Gymnasium's converter of vector infos to one dict per sub-env.
        self._list_infos = DictInfoToList(venv)
        self._actions: np.ndarray | None = None
        super().__init__(venv.num_envs, venv.single_observation_space, venv.single_action_space)

    def reset(self) -> VecEnvObs:
        """Reset every sub-env with the seeds of :meth:`seed` and options of ``set_options``
        (equal for all sub-envs: a vector env takes one ``options`` dict)."""
        seeds = list(self._seeds)
        options = self._options
        if any(opt != options[0] for opt in options[1:]):
            raise ValueError(
                "options: a Gymnasium vector env is reset with one options dict for all "
                f"sub-envs, so set_options must give every sub-env the same; got {options!r}"
            )
        reset: Any = self._list_infos.reset  # typed for an int seed; vector envs take a list
        obs, infos = reset(
            seed=None if all(s is None for s in seeds) else seeds,
            options=deepcopy(options[0]) or None,
        )
        self.reset_infos = list(infos)
        self._reset_seeds()
        self._reset_options()
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        """Store one action per sub-env for :meth:`step_wait` (``(num_envs, 1)`` is accepted
        for ``Discrete``, as SB3 stores them); ``ValueError`` otherwise."""
        arr = np.asarray(actions)
        shape = (self.num_envs, *(self.action_space.shape or ()))
        if arr.ndim == 0 or arr.shape[0] != self.num_envs or arr.size != int(np.prod(shape)):
            raise ValueError(
                f"actions must hold one action per sub-env, shape {shape}; got {arr.shape}"
            )
        self._actions = arr.reshape(shape)

    def step_wait(self) -> VecEnvStepReturn:
        """Step every sub-env: ``(obs, rewards, dones, infos)``, finished sub-envs restarted.

        Examples
        --------
        A size-2 DeepSea ends after two steps; the returned observation is the next start.

        >>> import gymnasium as gym
        >>> import numpy as np
        >>> import delight_gym
        >>> from stable_baselines3 import PPO
        >>> from delight_gym.sb3.vec_env import SB3VecEnvAdapter
        >>> venv = SB3VecEnvAdapter(gym.make_vec("DeepSea-v0", num_envs=2, size=2))
        >>> venv.seed(0)
        [0, 1]
        >>> obs = venv.reset()
        >>> for _ in range(2):
        ...     obs, rewards, dones, infos = venv.step(np.array([0, 1]))
        >>> dones
        array([ True,  True])
        >>> infos[0]["terminal_observation"]
        array([[0., 0.],
               [0., 0.]], dtype=float32)
        >>> obs[0]
        array([[1., 0.],
               [0., 0.]], dtype=float32)
        >>> model = PPO("MlpPolicy", venv, n_steps=16, batch_size=32, seed=0, device="cpu")
        >>> model = model.learn(64)
        """
        if self._actions is None:
            raise RuntimeError("step_wait() needs a step_async(actions) call first")
        actions, self._actions = self._actions, None
        obs, rewards, terminated, truncated, list_infos = self._list_infos.step(actions)
        terminated = np.asarray(terminated, dtype=np.bool_)
        truncated = np.asarray(truncated, dtype=np.bool_)
        dones = terminated | truncated
        infos: list[dict[str, Any]] = []
        if self.autoreset_mode == AutoresetMode.SAME_STEP:  # already restarted: move final_*
            for i, info in enumerate(list_infos):
                if dones[i]:
                    step_info = dict(info.get("final_info", {}))
                    step_info["terminal_observation"] = info["final_obs"]
                    self.reset_infos[i] = {k: v for k, v in info.items() if k not in _FINAL_KEYS}
                else:
                    step_info = dict(info)
                infos.append(step_info)
        else:  # NEXT_STEP or DISABLED: restart the finished sub-envs now, as SB3 expects.
            infos = [dict(info) for info in list_infos]
            if dones.any():
                space = self.venv.single_observation_space
                # Copies: a vector env with ``copy=False`` reuses its buffer in the reset.
                step_obs = [deepcopy(o) for o in iterate(self.venv.observation_space, obs)]
                reset_obs, reset_infos = self._list_infos.reset(options={"reset_mask": dones})
                new_obs = list(iterate(self.venv.observation_space, reset_obs))
                for i in np.flatnonzero(dones).tolist():
                    infos[i]["terminal_observation"] = step_obs[i]
                    self.reset_infos[i] = reset_infos[i]
                merged = [new_obs[i] if dones[i] else step_obs[i] for i in range(self.num_envs)]
                out: Any = create_empty_array(space, self.num_envs)
                obs = concatenate(space, merged, out)
        for i, info in enumerate(infos):
            info["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
        return obs, np.asarray(rewards, dtype=np.float32), dones, infos

    def seed(self, seed: int | None = None) -> Sequence[int | None]:
        """Seed sub-env ``i`` with ``seed + i`` at the next :meth:`reset`; ``None``: a base seed
        from OS entropy (not numpy's global generator, as SB3's base class). Returns the seeds."""
        if seed is None:
            seed = int(np.random.default_rng().integers(np.iinfo(np.uint32).max))
        return super().seed(seed)

    def close(self) -> None:
        self.venv.close()

    # A SyncVectorEnv's sub-envs are reached one by one (``envs``), an AsyncVectorEnv's all at
    # once (``get_attr``/``set_attr``/``call``); a native vector env is one object for all.
    def _require_all(self, indices: VecEnvIndices, what: str) -> None:
        if sorted(self._get_indices(indices)) != list(range(self.num_envs)):
            raise ValueError(
                f"indices: {type(self.venv).__name__} is one object for all sub-envs, so "
                f"{what} must address every sub-env (indices=None), got {indices!r}"
            )

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        """The attribute of each sub-env asked (a native vector env's own, for every index)."""
        idx = list(self._get_indices(indices))
        venv: Any = self.venv  # Sync/AsyncVectorEnv methods are not on VectorEnv
        envs = getattr(venv, "envs", None)
        if envs is not None:
            return [envs[i].get_wrapper_attr(attr_name) for i in idx]
        if callable(getattr(venv, "get_attr", None)):
            values = venv.get_attr(attr_name)
            return [values[i] for i in idx]
        value = getattr(venv, attr_name)
        return [value for _ in idx]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        """Set the attribute in the sub-envs asked (native vector env: ``indices=None``)."""
        idx = set(self._get_indices(indices))
        venv: Any = self.venv
        envs = getattr(venv, "envs", None)
        if envs is not None:
            for i in sorted(idx):
                envs[i].set_wrapper_attr(attr_name, value)
        elif callable(getattr(venv, "get_attr", None)):  # one value per sub-env
            current = venv.get_attr(attr_name) if len(idx) < self.num_envs else None
            values = [
                value if current is None or i in idx else current[i] for i in range(self.num_envs)
            ]
            venv.set_attr(attr_name, values)
        else:
            self._require_all(indices, "set_attr")
            setattr(venv, attr_name, value)

    def env_method(
        self,
        method_name: str,
        *method_args: Any,
        indices: VecEnvIndices = None,
        **method_kwargs: Any,
    ) -> list[Any]:
        """Call the method in the sub-envs asked; a native vector env's method is called once
        (``indices=None``) and its result returned for every sub-env."""
        idx = list(self._get_indices(indices))
        venv: Any = self.venv
        envs = getattr(venv, "envs", None)
        if envs is not None:
            return [
                envs[i].get_wrapper_attr(method_name)(*method_args, **method_kwargs) for i in idx
            ]
        self._require_all(indices, "env_method")
        if callable(getattr(venv, "call", None)):
            return list(venv.call(method_name, *method_args, **method_kwargs))
        result = getattr(venv, method_name)(*method_args, **method_kwargs)
        return [result for _ in idx]

    def env_is_wrapped(self, wrapper_class: type[Any], indices: VecEnvIndices = None) -> list[bool]:
        """Whether each sub-env asked is wrapped in ``wrapper_class`` (``SyncVectorEnv`` only;
        False for the sub-envs of a native or an ``AsyncVectorEnv``)."""
        idx = list(self._get_indices(indices))
        envs = getattr(self.venv, "envs", None)
        if envs is not None:
            return [is_wrapped(envs[i], wrapper_class) for i in idx]
        return [False for _ in idx]

    def get_images(self) -> Sequence[np.ndarray | None]:
        """One RGB frame per sub-env (``render_mode="rgb_array"``), else ``None`` each."""
        if self.render_mode != "rgb_array":
            return [None for _ in range(self.num_envs)]
        frames: Any = self.venv.render()
        return list(frames) if frames is not None else [None for _ in range(self.num_envs)]
