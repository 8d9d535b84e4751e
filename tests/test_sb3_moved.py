"""The SB3 layer moved to ``delight_gym.sb3``: every old import path still gives the same object,
with a ``DeprecationWarning`` naming the new home (until the next release)."""

from __future__ import annotations

import importlib

import pytest

pytest.importorskip("stable_baselines3")

MOVED = [
    ("delight_gym.wrappers", "DelightDQN", "delight_gym.sb3.delight_dqn"),
    ("delight_gym.wrappers", "BootstrappedDQN", "delight_gym.sb3.bootstrapped_dqn"),
    ("delight_gym.wrappers.dqn", "DelightDQN", "delight_gym.sb3.delight_dqn"),
    (
        "delight_gym.wrappers.bootstrapped_dqn",
        "BootstrappedDQN",
        "delight_gym.sb3.bootstrapped_dqn",
    ),
    (
        "delight_gym.wrappers.bootstrapped_dqn",
        "BootstrapReplayBuffer",
        "delight_gym.sb3.bootstrapped_dqn",
    ),
    (
        "delight_gym.wrappers.bootstrapped_dqn",
        "BootstrappedDQNPolicy",
        "delight_gym.sb3.bootstrapped_dqn",
    ),
    ("delight_gym.wrappers.vec_env", "SB3VecEnvAdapter", "delight_gym.sb3.vec_env"),
    ("delight_gym.wrappers.logging", "DelightStats", "delight_gym.wrappers.stats"),
    ("delight_gym.wrappers.logging", "LOG_KEYS", "delight_gym.wrappers.stats"),
    ("delight_gym.wrappers.logging", "DelightAlgorithmMixin", "delight_gym.sb3.base"),
    ("delight_gym.wrappers.logging", "StoredTransition", "delight_gym.sb3.base"),
]


@pytest.mark.parametrize(("old", "name", "new"), MOVED)
def test_old_path_warns_and_gives_the_new_object(old: str, name: str, new: str) -> None:
    module = importlib.import_module(old)
    with pytest.warns(DeprecationWarning, match=rf"{old}\.{name} moved to {new}\.{name}"):
        value = getattr(module, name)
    assert value is getattr(importlib.import_module(new), name)


@pytest.mark.parametrize(
    "old", ["delight_gym.sb3.bootstrapped_dqn", "delight_gym.wrappers.bootstrapped_dqn"]
)
def test_the_renamed_options_record_warns_under_its_old_name(old: str) -> None:
    from delight_gym.wrappers import DelightOptions

    module = importlib.import_module(old)
    with pytest.warns(DeprecationWarning, match=r"DelightSettings moved to .*DelightOptions"):
        assert module.DelightSettings is DelightOptions


def test_from_import_warns_at_the_caller() -> None:
    with pytest.warns(DeprecationWarning) as record:
        from delight_gym.wrappers.dqn import DelightDQN  # noqa: F401
    assert record[0].filename == __file__


def test_new_paths_do_not_warn(recwarn: pytest.WarningsRecorder) -> None:
    from delight_gym.sb3 import BootstrappedDQN, DelightDQN, SB3VecEnvAdapter  # noqa: F401
    from delight_gym.wrappers import DelightExplorationWrapper, DelightStats  # noqa: F401

    assert not [w for w in recwarn if issubclass(w.category, DeprecationWarning)]


def test_unknown_name_is_an_attribute_error() -> None:
    import delight_gym.wrappers.dqn as old

    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        _ = old.Nope
