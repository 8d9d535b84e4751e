"""Registration of delight_gym's environments with Gymnasium.

Gymnasium >= 1.0 has no entry-point plugin, so ``import delight_gym`` calls
:func:`register_envs`. To add an environment, append an :class:`EnvEntry` to ``_ENV_TABLE``;
``ENV_IDS`` (and the parameterised contract tests in ``tests/test_env_contract.py``) pick it
up automatically.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

__all__ = ["ENV_IDS", "EnvEntry", "register_envs"]


@dataclass(frozen=True)
class EnvEntry:
    """One registered environment: the arguments of :func:`gymnasium.register`."""

    id: str
    entry_point: str
    vector_entry_point: str | None = None
    kwargs: dict[str, Any] = field(default_factory=dict)
    nondeterministic: bool = False


_ENV_TABLE: tuple[EnvEntry, ...] = (
    EnvEntry(
        id="BernoulliBandit-v0",
        entry_point="delight_gym.envs.bandits:BernoulliBanditEnv",
        vector_entry_point="delight_gym.envs.bandits:BernoulliBanditVectorEnv",
    ),
    EnvEntry(
        id="LinearBandit-v0",
        entry_point="delight_gym.envs.linear:LinearBanditEnv",
        vector_entry_point="delight_gym.envs.linear:LinearBanditVectorEnv",
    ),
    EnvEntry(
        id="WheelBandit-v0",
        entry_point="delight_gym.envs.wheel:WheelBanditEnv",
        vector_entry_point="delight_gym.envs.wheel:WheelBanditVectorEnv",
    ),
    EnvEntry(
        id="NeuralBandit-v0",
        entry_point="delight_gym.envs.neural:NeuralBanditEnv",
        vector_entry_point="delight_gym.envs.neural:NeuralBanditVectorEnv",
    ),
    EnvEntry(
        id="ContinuumBandit-v0",
        entry_point="delight_gym.envs.continuum:ContinuumBanditEnv",
        vector_entry_point="delight_gym.envs.continuum:ContinuumBanditVectorEnv",
    ),
    EnvEntry(id="PandoraBoxes-v0", entry_point="delight_gym.envs.pandora:PandoraBoxesEnv"),
    EnvEntry(id="Reservoir-v0", entry_point="delight_gym.envs.reservoir:ReservoirEnv"),
    EnvEntry(
        id="DeepSea-v0",
        entry_point="delight_gym.envs.deep_sea:DeepSeaEnv",
        vector_entry_point="delight_gym.envs.deep_sea:DeepSeaVectorEnv",
    ),
    EnvEntry(
        id="DeepSeaStochastic-v0",
        entry_point="delight_gym.envs.deep_sea:DeepSeaEnv",
        vector_entry_point="delight_gym.envs.deep_sea:DeepSeaVectorEnv",
        kwargs={"deterministic": False},
    ),
)

#: The ids of every environment delight_gym registers.
ENV_IDS: tuple[str, ...] = tuple(entry.id for entry in _ENV_TABLE)


def register_envs() -> None:
    """Register every environment with Gymnasium, skipping ids already registered."""
    for entry in _ENV_TABLE:
        if entry.id in gym.registry:
            continue
        gym.register(
            id=entry.id,
            entry_point=entry.entry_point,
            vector_entry_point=entry.vector_entry_point,
            kwargs=dict(entry.kwargs),
            nondeterministic=entry.nondeterministic,
        )
