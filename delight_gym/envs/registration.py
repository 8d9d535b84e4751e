"""Registration of delight_gym's environments with Gymnasium.

Gymnasium >= 1.0 has no entry-point plugin, so ``import delight_gym`` calls
:func:`register_envs`. To add an environment, append an :class:`EnvEntry` to ``_ENV_TABLE``;
``ENV_IDS`` (and the parameterised contract tests in ``tests/test_env_contract.py``) pick it
up automatically.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
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


def _with_vector(env_id: str, module: str, name: str, **kwargs: Any) -> EnvEntry:
    """The entry of ``<name>Env`` and its native ``<name>VectorEnv`` in ``envs.<module>``."""
    path = f"delight_gym.envs.{module}:{name}"
    return EnvEntry(env_id, f"{path}Env", f"{path}VectorEnv", kwargs)


_ENV_TABLE: tuple[EnvEntry, ...] = (
    _with_vector("BernoulliBandit-v0", "bandits", "BernoulliBandit"),
    _with_vector("LinearBandit-v0", "linear", "LinearBandit"),
    _with_vector("WheelBandit-v0", "wheel", "WheelBandit"),
    _with_vector("NeuralBandit-v0", "neural", "NeuralBandit"),
    _with_vector("ContinuumBandit-v0", "continuum", "ContinuumBandit"),
    EnvEntry("PandoraBoxes-v0", "delight_gym.envs.pandora:PandoraBoxesEnv"),
    EnvEntry("Reservoir-v0", "delight_gym.envs.reservoir:ReservoirEnv"),
    _with_vector("DeepSea-v0", "deep_sea", "DeepSea"),
    _with_vector("DeepSeaStochastic-v0", "deep_sea", "DeepSea", deterministic=False),
)

#: The ids of every environment delight_gym registers.
ENV_IDS: tuple[str, ...] = tuple(entry.id for entry in _ENV_TABLE)


def register_envs() -> None:
    """Register every environment with Gymnasium, skipping ids already registered."""
    for entry in _ENV_TABLE:
        if entry.id not in gym.registry:
            gym.register(**asdict(entry))  # the fields are register's keywords; kwargs a copy
