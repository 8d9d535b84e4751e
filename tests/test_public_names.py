"""No two public classes of the package share a name (one ``DelightSettings`` used to be the
agents' settings mixin and another ``BootstrappedDQN``'s options record)."""

from __future__ import annotations

import collections
import importlib
import inspect
import pkgutil

import pytest

import delight_gym


def _public_modules() -> list[str]:
    names = []
    for info in pkgutil.walk_packages(delight_gym.__path__, "delight_gym."):
        if not any(part.startswith("_") for part in info.name.split(".")[1:]):
            names.append(info.name)
    return names


def test_public_class_names_are_unique() -> None:
    pytest.importorskip("stable_baselines3")
    homes: dict[str, set[str]] = collections.defaultdict(set)
    for name in _public_modules():
        module = importlib.import_module(name)
        for attr, obj in vars(module).items():  # defined here, not re-exported or deprecated
            if inspect.isclass(obj) and not attr.startswith("_") and obj.__module__ == name:
                homes[obj.__name__].add(name)
    shared = {cls: sorted(mods) for cls, mods in homes.items() if len(mods) > 1}
    assert not shared, shared
    assert homes["DelightOptions"] == {"delight_gym.de.options"}
    assert homes["DelightSettings"] == {"delight_gym.agents.base"}


def test_the_package_lists_every_lazy_name_once_and_each_resolves():
    import delight_gym

    # __all__ is a literal (type checkers read it); the lazy table must agree with it.
    assert len(delight_gym.__all__) == len(set(delight_gym.__all__))
    assert set(delight_gym._LAZY) <= set(delight_gym.__all__)
    for name in delight_gym.__all__:
        assert getattr(delight_gym, name) is not None, name
