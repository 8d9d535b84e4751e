"""A line-by-line transcription of bsuite 0.3.6's ``deep_sea.DeepSea`` (plain numpy, no dm_env).

Source: ``bsuite/environments/deep_sea.py`` and ``bsuite/environments/base.py`` of the
``bsuite==0.3.6`` sdist on PyPI (Copyright 2019 DeepMind Technologies Limited, Apache License
2.0). The step and reset logic below keeps bsuite's statements and their order, so that the
random draws happen exactly where bsuite makes them; only dm_env's ``TimeStep`` is replaced by
a plain tuple and bsuite's auto-reset on a step after the last one is kept as in ``base.py``.

It is written independently of ``delight_gym.envs.deep_sea`` and serves as the reference the
tests compare that env against. The random stream is injectable: ``rng`` is any object with
bsuite's ``RandomState`` methods ``randn()`` and ``rand()`` (by default
``numpy.random.RandomState(seed)``, bsuite's own); :class:`GeneratorAsRandomState` lets the
reference draw from a ``numpy.random.Generator`` instead, so it can share the env's stream.
"""

from __future__ import annotations

import warnings
from typing import Any, NamedTuple

import numpy as np

__all__ = ["GeneratorAsRandomState", "ReferenceDeepSea", "TimeStep"]


class TimeStep(NamedTuple):
    """What bsuite's dm_env ``TimeStep`` carries: ``step_type`` is first/mid/last."""

    step_type: str  # "first", "mid" or "last"
    reward: float | None
    observation: np.ndarray

    def last(self) -> bool:
        return self.step_type == "last"


class GeneratorAsRandomState:
    """``randn()`` / ``rand()`` (RandomState's names) drawn from a ``numpy.random.Generator``."""

    def __init__(self, generator: np.random.Generator) -> None:
        self._generator = generator

    def randn(self) -> float:
        return float(self._generator.standard_normal())

    def rand(self) -> float:
        return float(self._generator.random())


class ReferenceDeepSea:
    """bsuite 0.3.6 ``DeepSea``, transcribed (see the module docstring)."""

    def __init__(
        self,
        size: int,
        deterministic: bool = True,
        unscaled_move_cost: float = 0.01,
        randomize_actions: bool = True,
        seed: int | None = None,
        mapping_seed: int | None = None,
        rng: Any = None,
    ) -> None:
        # base.Environment.__init__
        self._reset_next_step = True

        self._size = size
        self._deterministic = deterministic
        self._unscaled_move_cost = unscaled_move_cost
        self._rng = np.random.RandomState(seed) if rng is None else rng

        if randomize_actions:
            self._mapping_rng = np.random.RandomState(mapping_seed)
            self._action_mapping = self._mapping_rng.binomial(1, 0.5, [size, size])
        else:
            warnings.warn(
                "Environment is in debug mode (randomize_actions=False)."
                "Only randomized_actions=True is the DeepSea environment.",
                stacklevel=2,
            )
            self._action_mapping = np.ones([size, size])

        if not self._deterministic:  # action 'right' only succeeds (1 - 1/N)
            optimal_no_cost = (1 - 1 / self._size) ** (self._size - 1)
        else:
            optimal_no_cost = 1.0
        self._optimal_return = optimal_no_cost - self._unscaled_move_cost

        self._column = 0
        self._row = 0
        self._bad_episode = False
        self._total_bad_episodes = 0
        self._denoised_return = 0
        self._reset()

    # bsuite's base.Environment.reset / step (auto-reset after a last step)
    def reset(self) -> TimeStep:
        self._reset_next_step = False
        return self._reset()

    def step(self, action: int) -> TimeStep:
        if self._reset_next_step:
            return self.reset()
        timestep = self._step(action)
        self._reset_next_step = timestep.last()
        return timestep

    def _get_observation(self) -> np.ndarray:
        obs = np.zeros(shape=(self._size, self._size), dtype=np.float32)
        if self._row >= self._size:  # End of episode null observation
            return obs
        obs[self._row, self._column] = 1.0
        return obs

    def _reset(self) -> TimeStep:
        self._row = 0
        self._column = 0
        self._bad_episode = False
        return TimeStep("first", None, self._get_observation())

    def _step(self, action: int) -> TimeStep:
        reward = 0.0
        action_right = action == self._action_mapping[self._row, self._column]

        # Reward calculation
        if self._column == self._size - 1 and action_right:
            reward += 1.0
            self._denoised_return += 1.0
        if not self._deterministic:  # Noisy rewards on the 'end' of chain.
            if self._row == self._size - 1 and self._column in [0, self._size - 1]:
                reward += self._rng.randn()

        # Transition dynamics
        if action_right:
            if self._rng.rand() > 1 / self._size or self._deterministic:
                self._column = np.clip(self._column + 1, 0, self._size - 1)
            reward -= self._unscaled_move_cost / self._size
        else:
            if self._row == self._column:  # You were on the right path and went wrong
                self._bad_episode = True
            self._column = np.clip(self._column - 1, 0, self._size - 1)
        self._row += 1

        observation = self._get_observation()
        if self._row == self._size:
            if self._bad_episode:
                self._total_bad_episodes += 1
            return TimeStep("last", reward, observation)
        return TimeStep("mid", reward, observation)

    def bsuite_info(self) -> dict[str, Any]:
        return dict(
            total_bad_episodes=self._total_bad_episodes, denoised_return=self._denoised_return
        )
