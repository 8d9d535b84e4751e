"""The SB3 layer lives in ``delight_gym.sb3`` and DE's options and statistics beside the rule
(``delight_gym.de.options``, ``delight_gym.de.stats``): the deprecated old paths and keywords are
gone, and the new ones import without a warning."""

from __future__ import annotations

import importlib

import pytest

pytest.importorskip("stable_baselines3")

REMOVED_MODULES = [
    "delight_gym.wrappers",
    "delight_gym.rule",
    "delight_gym.options",
    "delight_gym.stats",
    "delight_gym.explorer",
    "delight_gym.explorer_continuous",
    "delight_gym.candidates",
    "delight_gym.candidates_proposers",
    "delight_gym.sb3_hosts",
    "delight_gym.posteriors.base",
    "delight_gym.agents.settings",
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
        ("delight_gym.sb3.bootstrapped_dqn", "DelightSettings"),
        ("delight_gym.de.rule", "DelightSettings"),
        ("delight_gym.de.rule", "AnnealedSettings"),
    ],
)
def test_removed_name_is_an_attribute_error(module: str, name: str) -> None:
    with pytest.raises(AttributeError):
        getattr(importlib.import_module(module), name)


def test_new_paths_do_not_warn(recwarn: pytest.WarningsRecorder) -> None:
    from delight_gym import DelightExplorationWrapper  # noqa: F401
    from delight_gym.agents.base import DelightSettings  # noqa: F401
    from delight_gym.de.decide import decide_on_values  # noqa: F401
    from delight_gym.de.options import DelightOptions  # noqa: F401
    from delight_gym.de.stats import LOG_KEYS, DelightStats
    from delight_gym.de.stats import DelightStats as ReExported
    from delight_gym.sb3 import BootstrappedDQN, DelightDQN, SB3VecEnvAdapter  # noqa: F401

    assert ReExported is DelightStats and LOG_KEYS
    assert not [w for w in recwarn if issubclass(w.category, DeprecationWarning)]


@pytest.mark.parametrize("keyword", ["gate_price", "surprisal_cap", "half_life", "baseline"])
def test_removed_wrapper_keyword_is_a_type_error(keyword: str) -> None:
    from gymnasium import spaces

    from delight_gym import DelightExplorationWrapper

    with pytest.raises(TypeError, match=f"unexpected keyword argument '{keyword}'"):
        DelightExplorationWrapper(
            lambda obs: [[0.5, 0.5]] * len(obs),
            observation_space=spaces.Discrete(2),
            action_space=spaces.Discrete(2),
            **{keyword: 0.1},
        )


@pytest.mark.parametrize(
    ("cls", "keyword"),
    [("DelightDQN", "gate_price"), ("DelightDQN", "delight_seed"), ("BootstrappedDQN", "net_arch")],
)
def test_removed_algorithm_keyword_is_a_type_error(cls: str, keyword: str) -> None:
    algorithm = getattr(importlib.import_module("delight_gym.sb3"), cls)
    with pytest.raises(TypeError, match=f"unexpected keyword argument '{keyword}'"):
        algorithm("MlpPolicy", "CartPole-v1", **{keyword: 1})


def test_options_are_built_by_make_only() -> None:
    from delight_gym.de.options import DelightOptions

    assert not hasattr(DelightOptions, "from_keywords")
