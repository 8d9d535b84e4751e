"""Stable-Baselines3 algorithms with Delight-gated exploration (DE), and SB3 plumbing.

* :class:`DelightDQN` — SB3's DQN with DE instead of ε-greedy (:mod:`~delight_gym.sb3.delight_dqn`);
* :class:`BootstrappedDQN` — bootstrapped DQN with randomized priors, optionally with DE on top
  (:mod:`~delight_gym.sb3.bootstrapped_dqn`);
* :class:`DelightSAC`, :class:`DelightTD3` — SAC and TD3 with DE
  (:mod:`~delight_gym.sb3.delight_continuous`);
* :class:`DelightAlgorithmMixin` — what they share (:mod:`~delight_gym.sb3.base`);
* :class:`SB3VecEnvAdapter` — a Gymnasium vector env as an SB3 ``VecEnv``
  (:mod:`~delight_gym.sb3.vec_env`).

Imports SB3. DE's engine: :mod:`delight_gym.explorer`. Guide: ``docs/sb3.md``.
"""

from delight_gym.sb3.base import DelightAlgorithmMixin
from delight_gym.sb3.bootstrapped_dqn import BootstrappedDQN
from delight_gym.sb3.delight_continuous import DelightSAC, DelightTD3
from delight_gym.sb3.delight_dqn import DelightDQN
from delight_gym.sb3.vec_env import SB3VecEnvAdapter

__all__ = [
    "BootstrappedDQN",
    "DelightAlgorithmMixin",
    "DelightDQN",
    "DelightSAC",
    "DelightTD3",
    "SB3VecEnvAdapter",
]
