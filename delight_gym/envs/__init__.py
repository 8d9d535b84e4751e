"""Gymnasium environments of delight_gym and their registration."""

from delight_gym.envs.bandits import BernoulliBanditEnv, BernoulliBanditVectorEnv
from delight_gym.envs.linear import LinearBanditEnv, LinearBanditVectorEnv
from delight_gym.envs.registration import ENV_IDS, register_envs

__all__ = [
    "ENV_IDS",
    "BernoulliBanditEnv",
    "BernoulliBanditVectorEnv",
    "LinearBanditEnv",
    "LinearBanditVectorEnv",
    "register_envs",
]
