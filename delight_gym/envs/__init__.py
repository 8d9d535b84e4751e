"""Gymnasium environments of delight_gym and their registration."""

from delight_gym.envs.bandits import BernoulliBanditEnv, BernoulliBanditVectorEnv
from delight_gym.envs.continuum import ContinuumBanditEnv, ContinuumBanditVectorEnv
from delight_gym.envs.deep_sea import (
    MAX_DEEP_SEA_SIZE,
    DeepSeaEnv,
    DeepSeaVectorEnv,
    deep_sea_expected_return,
    deep_sea_optimal_return,
)
from delight_gym.envs.linear import LinearBanditEnv, LinearBanditVectorEnv
from delight_gym.envs.neural import NeuralBanditEnv, NeuralBanditVectorEnv
from delight_gym.envs.registration import ENV_IDS, register_envs
from delight_gym.envs.wheel import WheelBanditEnv, WheelBanditVectorEnv

__all__ = [
    "ENV_IDS",
    "MAX_DEEP_SEA_SIZE",
    "BernoulliBanditEnv",
    "BernoulliBanditVectorEnv",
    "ContinuumBanditEnv",
    "ContinuumBanditVectorEnv",
    "DeepSeaEnv",
    "DeepSeaVectorEnv",
    "LinearBanditEnv",
    "LinearBanditVectorEnv",
    "NeuralBanditEnv",
    "NeuralBanditVectorEnv",
    "WheelBanditEnv",
    "WheelBanditVectorEnv",
    "deep_sea_expected_return",
    "deep_sea_optimal_return",
    "register_envs",
]
