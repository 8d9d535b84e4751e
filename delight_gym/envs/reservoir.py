"""An infinite reservoir of fresh arms (paper §4.4, Theorem ``tail_rate``).

:mod:`delight_gym.theory.reservoir` holds the horizon-priced reservation policy, horizon-priced
DE and the regret-rate experiment.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from numpy.typing import NDArray

from delight_gym._checks import check_choice, check_positive_float, check_positive_int
from delight_gym.envs._base import (
    InstanceEnv,
    check_discrete_action,
    check_render_mode,
    pull_info,
    read_only_copy,
    require_drawn,
)

__all__ = ["REWARD_MODES", "ReservoirEnv"]

#: ``"revealed"``: the reward is the arm's value; ``"bernoulli"``: a Bernoulli(value) draw.
REWARD_MODES = ("revealed", "bernoulli")


class ReservoirEnv(InstanceEnv[np.int64]):
    """A bandit with a reservoir of i.i.d. arms whose values have a polynomial upper tail.

    Arm ``a`` has value ``X_a ~ Beta(1, α)``, so ``P(X ≥ 1 − y) = y^α`` (``α =
    tail_exponent``). The instance, all ``num_arms`` values, is drawn at the first
    :meth:`reset` and kept; with at least as many arms as rounds it is an infinite reservoir.

    - Action space: ``Discrete(num_arms)``.
    - Observation space: ``Discrete(1)``, always ``0``.
    - Rewards: ``X_a`` (``"revealed"``, the default) or ``1`` w.p. ``X_a`` (``"bernoulli"``).
    - Episode end: one pull; ``info``: ``expected_reward`` (``X_a``), ``optimal_expected_reward``
      (1, the support's top) and ``regret``.
    - Arguments: ``tail_exponent`` (1), ``num_arms`` (1000; use at least the horizon),
      ``reward_mode``, ``render_mode``.
    - Version history: v0, the initial version (delight_gym 0.1.0).

    >>> env = ReservoirEnv(tail_exponent=2.0, num_arms=10)
    >>> _ = env.reset(seed=3)
    >>> obs, reward, terminated, truncated, info = env.step(0)
    >>> reward == info["expected_reward"], terminated, info["optimal_expected_reward"]
    (True, True, 1.0)
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 4}  # noqa: RUF012

    def __init__(
        self,
        tail_exponent: float = 1.0,
        num_arms: int = 1000,
        reward_mode: str = "revealed",
        render_mode: str | None = None,
    ) -> None:
        self.tail_exponent = check_positive_float(tail_exponent, "tail_exponent")
        self.num_arms = check_positive_int(num_arms, "num_arms")
        check_choice(reward_mode, REWARD_MODES, "reward_mode")
        self.reward_mode = reward_mode
        self.render_mode = check_render_mode(render_mode, self.metadata["render_modes"])
        self.action_space = spaces.Discrete(self.num_arms)
        self.observation_space = spaces.Discrete(1)
        self._values: NDArray[np.float64] | None = None
        self._pulls = 0

    @property
    def values(self) -> NDArray[np.float64]:
        """The arms' values, shape ``(num_arms,)`` (a read-only copy)."""
        not_drawn = "the reservoir is drawn at the first reset(); call reset()"
        return read_only_copy(require_drawn(self._values, not_drawn))

    def _has_instance(self) -> bool:
        return self._values is not None

    def _draw_instance(self) -> None:
        self._values = self.np_random.beta(1.0, self.tail_exponent, self.num_arms)

    def _start_episode(self) -> np.int64:
        return np.int64(0)

    def step(self, action: Any) -> tuple[np.int64, float, bool, bool, dict[str, Any]]:
        """Pull arm ``action``; the episode terminates after this one pull."""
        self._require_reset()
        assert self._values is not None  # drawn by the first reset
        value = float(self._values[check_discrete_action(action, self.action_space)])
        bernoulli = self.reward_mode == "bernoulli"
        reward = float(self.np_random.random() < value) if bernoulli else value
        self._pulls += 1
        return np.int64(0), reward, True, False, pull_info(value, 1.0)

    def _frame(self) -> str:
        return (
            f"Reservoir alpha={self.tail_exponent:g} arms={self.num_arms} "
            f"({self.reward_mode}); pulls so far {self._pulls}"
        )
