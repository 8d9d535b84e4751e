"""The contextual bandits: :mod:`~delight_gym.envs.wheel` (WheelBandit-v0) and
:mod:`~delight_gym.envs.neural` (NeuralBandit-v0), gathered under one import path. Their
shared bases are :class:`~delight_gym.envs._bandit.ContextualBanditEnv` and its vector form.
"""

from __future__ import annotations

from delight_gym.envs._bandit import ContextualBanditEnv, ContextualBanditVectorEnv
from delight_gym.envs.neural import (
    DEFAULT_NEURAL_DIM,
    DEFAULT_NEURAL_NUM_ARMS,
    NEURAL_REWARDS,
    NeuralBanditEnv,
    NeuralBanditVectorEnv,
    check_neural_arms,
    check_neural_fits,
    check_neural_reward,
    neural_bandit_nbytes,
    neural_mean_reward,
)
from delight_gym.envs.wheel import (
    WHEEL_NUM_ARMS,
    WHEEL_SAFE_ARM,
    WheelBanditEnv,
    WheelBanditVectorEnv,
    wheel_means,
)

__all__ = [
    "DEFAULT_NEURAL_DIM",
    "DEFAULT_NEURAL_NUM_ARMS",
    "NEURAL_REWARDS",
    "WHEEL_NUM_ARMS",
    "WHEEL_SAFE_ARM",
    "ContextualBanditEnv",
    "ContextualBanditVectorEnv",
    "NeuralBanditEnv",
    "NeuralBanditVectorEnv",
    "WheelBanditEnv",
    "WheelBanditVectorEnv",
    "check_neural_arms",
    "check_neural_fits",
    "check_neural_reward",
    "neural_bandit_nbytes",
    "neural_mean_reward",
    "wheel_means",
]
