"""Every family pickles whole: the figure process and Ray's workers receive it by value."""

from __future__ import annotations

import pickle

import pytest

from delight_gym.experiments.families import FAMILIES


@pytest.mark.parametrize("name", list(FAMILIES))
def test_family_pickles_and_its_checks_still_run(name: str) -> None:
    family = FAMILIES[name]
    again = pickle.loads(pickle.dumps(family))
    assert again.name == name
    assert list(again.parameters) == list(family.parameters)
    for before, after in zip(family.parameters.values(), again.parameters.values(), strict=True):
        if before.check is not None and before.default is not None:
            assert after.check(before.default, before.name) == before.check(
                before.default, before.name
            )
