"""The SB3 layer lives in ``delight_gym.sb3`` and DE's options and statistics beside the rule
(``delight_gym.options``, ``delight_gym.stats``): the deprecated old paths are gone, and the
new ones import without a warning."""

from __future__ import annotations

import importlib

import pytest

pytest.importorskip("stable_baselines3")

REMOVED_MODULES = [
    "delight_gym.wrappers.dqn",
    "delight_gym.wrappers.bootstrapped_dqn",
    "delight_gym.wrappers.vec_env",
    "delight_gym.wrappers.logging",
    "delight_gym.wrappers.options",
    "delight_gym.wrappers.stats",
]


@pytest.mark.parametrize("old", REMOVED_MODULES)
def test_removed_module_is_gone(old: str) -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(old)


@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("delight_gym.wrappers", "DelightDQN"),
        ("delight_gym.wrappers", "BootstrappedDQN"),
        ("delight_gym.sb3.bootstrapped_dqn", "DelightSettings"),
        ("delight_gym.rule", "DelightSettings"),
        ("delight_gym.rule", "AnnealedSettings"),
    ],
)
def test_removed_name_is_an_attribute_error(module: str, name: str) -> None:
    with pytest.raises(AttributeError):
        getattr(importlib.import_module(module), name)


def test_new_paths_do_not_warn(recwarn: pytest.WarningsRecorder) -> None:
    from delight_gym.options import DelightOptions, DelightSettings, decide_on_values  # noqa: F401
    from delight_gym.sb3 import BootstrappedDQN, DelightDQN, SB3VecEnvAdapter  # noqa: F401
    from delight_gym.stats import LOG_KEYS, DelightStats
    from delight_gym.wrappers import DelightExplorationWrapper  # noqa: F401
    from delight_gym.wrappers import DelightStats as ReExported

    assert ReExported is DelightStats and LOG_KEYS
    assert not [w for w in recwarn if issubclass(w.category, DeprecationWarning)]
