"""Stable-Baselines3 algorithms with Delight-gated exploration (DE), and SB3 plumbing.

:class:`DelightDQN`, :class:`BootstrappedDQN` (DE optional), :class:`DelightSAC`,
:class:`DelightTD3` and what they share, :class:`DelightAlgorithmMixin`; :class:`EZGreedyDQN`
(temporally-extended ε-greedy); :class:`SB3VecEnvAdapter` (a vector env as an SB3 ``VecEnv``).
SB3 is imported on first use of these names.
"""

from typing import TYPE_CHECKING

from delight_gym._lazy_import import lazy_getattr

if TYPE_CHECKING:  # the lazy names, for type checkers
    from delight_gym.sb3.base import DelightAlgorithmMixin
    from delight_gym.sb3.bootstrapped_dqn import BootstrappedDQN
    from delight_gym.sb3.delight_continuous import DelightSAC, DelightTD3
    from delight_gym.sb3.delight_dqn import DelightDQN
    from delight_gym.sb3.ez_greedy import EZGreedyDQN
    from delight_gym.sb3.vec_env import SB3VecEnvAdapter

__all__ = [
    "BootstrappedDQN",
    "DelightAlgorithmMixin",
    "DelightDQN",
    "DelightSAC",
    "DelightTD3",
    "EZGreedyDQN",
    "SB3VecEnvAdapter",
]

#: The public names and their modules, imported on first use (PEP 562).
_LAZY = {
    "BootstrappedDQN": "delight_gym.sb3.bootstrapped_dqn",
    "DelightAlgorithmMixin": "delight_gym.sb3.base",
    "DelightDQN": "delight_gym.sb3.delight_dqn",
    "DelightSAC": "delight_gym.sb3.delight_continuous",
    "DelightTD3": "delight_gym.sb3.delight_continuous",
    "EZGreedyDQN": "delight_gym.sb3.ez_greedy",
    "SB3VecEnvAdapter": "delight_gym.sb3.vec_env",
}
__getattr__ = lazy_getattr(__name__, _LAZY)
