"""The SB3 front ends take every keyword of the SB3 class they extend, under SB3's name, so that
``sb3_arguments`` forwards each one (it skips only parameters a newer SB3 adds)."""

from __future__ import annotations

import inspect

import pytest
from stable_baselines3 import DQN, SAC, TD3

from delight_gym.sb3 import DelightDQN, DelightSAC, DelightTD3, EZGreedyDQN
from delight_gym.sb3.bootstrapped_policy import sb3_arguments

#: Keywords a front end fixes itself instead of taking them from the user.
FIXED = {DelightDQN: {"exploration_fraction", "exploration_initial_eps", "exploration_final_eps"}}


@pytest.mark.parametrize(
    ("front", "base"),
    [(DelightSAC, SAC), (DelightTD3, TD3), (DelightDQN, DQN), (EZGreedyDQN, DQN)],
)
def test_front_end_takes_every_sb3_keyword(front: type, base: type) -> None:
    ours = inspect.signature(front).parameters
    missing = set(inspect.signature(base).parameters) - set(ours) - FIXED.get(front, set())
    assert missing == set()
    differ = {
        name
        for name, param in inspect.signature(base).parameters.items()
        if name in ours and ours[name].default != param.default
    }
    assert differ == set()  # the same defaults as SB3's


def test_sb3_arguments_forwards_given_and_fixed_and_skips_unknown() -> None:
    def sb3_like(self: object, a: int, b: int = 2, c: int = 3) -> None: ...

    class Base:
        __init__ = sb3_like

    got = sb3_arguments(Base, {"a": 1, "b": 5, "self": None, "extra": 9}, c=7)
    assert got == {"a": 1, "b": 5, "c": 7}
