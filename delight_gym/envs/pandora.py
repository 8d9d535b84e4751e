"""Pandora's boxes: Weitzman's (1979) revealed-value search problem as a Gymnasium env.

The reservation-value view of the delight gate (paper §2.2) is exact in this model; see
:mod:`delight_gym.theory.pandora` for Weitzman's optimal policy and DE as agents.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.error import ResetNeeded
from numpy.typing import ArrayLike, NDArray

from delight_gym._checks import check_finite_array, check_positive_int
from delight_gym.envs._base import (
    InstanceEnv,
    check_agrees,
    check_discrete_action,
    check_render_mode,
)

__all__ = ["DEFAULT_NUM_BOXES", "PandoraBoxesEnv", "draw_boxes"]

#: Number of boxes used when neither ``num_boxes`` nor the priors are given.
DEFAULT_NUM_BOXES = 5
#: Instance distribution: prior shapes ~ U(SHAPE_RANGE), costs log-uniform on COST_RANGE.
SHAPE_RANGE = (0.5, 5.0)
COST_RANGE = (1e-3, 1e-1)


def draw_boxes(
    rng: np.random.Generator, shape: int | tuple[int, ...]
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Random boxes ``(alphas, betas, costs)`` of ``shape``, drawn as the env draws them."""
    alphas = rng.uniform(SHAPE_RANGE[0], SHAPE_RANGE[1], shape)
    betas = rng.uniform(SHAPE_RANGE[0], SHAPE_RANGE[1], shape)
    log_lo, log_hi = float(np.log(COST_RANGE[0])), float(np.log(COST_RANGE[1]))
    return alphas, betas, np.exp(rng.uniform(log_lo, log_hi, shape))


def _positive_vector(value: ArrayLike, name: str) -> NDArray[np.float64]:
    arr = check_finite_array(value, name)
    if arr.ndim != 1 or arr.size == 0 or np.any(arr <= 0):
        raise ValueError(f"{name} must be a non-empty 1-D array of positive numbers")
    return arr.copy()


class PandoraBoxesEnv(InstanceEnv[NDArray[np.float32]]):
    """Weitzman's Pandora's boxes with ``Beta`` priors on ``[0, 1]`` and inspection costs.

    Box ``a`` holds ``X_a ~ Beta(alphas[a], betas[a])``; opening it costs ``costs[a]`` and
    reveals ``X_a``; stopping keeps the best revealed value (or ``outside_option``). The
    instance (priors and costs: shapes ``U(0.5, 5)``, costs log-uniform on ``[1e-3, 1e-1]``)
    is drawn at the first :meth:`reset` unless given; the values at every reset.

    - Action space: ``Discrete(K + 1)``: ``a < K`` opens box ``a`` (paid again if open), K stops.
    - Observation space: ``Box(0, 1, (K, 3), float32)``, per box ``[opened, value, cost]``.
    - Rewards: ``−costs[a]`` per opening; at the end, plus ``max(outside_option, values)``.
    - Episode end: stop or every box open; truncated after ``max_steps`` (``2K + 1``).
      ``info``: ``opened``, and at the end ``payoff``, ``best_value`` and ``values``.
    - Arguments: ``num_boxes`` (5), ``alphas``, ``betas``, ``costs`` (all three or none),
      ``outside_option`` (0), ``max_steps``.
    - Version history: v0, the initial version (delight_gym 0.1.0).

    >>> env = PandoraBoxesEnv(alphas=[1.0, 2.0], betas=[1.0, 1.0], costs=[0.01, 0.05])
    >>> obs, info = env.reset(seed=0)
    >>> obs, reward, terminated, truncated, info = env.step(0)
    >>> round(reward, 3), bool(obs[0, 0]), terminated
    (-0.01, True, False)
    >>> obs, reward, terminated, truncated, info = env.step(2)  # stop
    >>> terminated, round(info["payoff"], 3) == round(float(obs[0, 1]) - 0.01, 3)
    (True, True)
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 4}  # noqa: RUF012

    def __init__(
        self,
        num_boxes: int | None = None,
        alphas: ArrayLike | None = None,
        betas: ArrayLike | None = None,
        costs: ArrayLike | None = None,
        outside_option: float = 0.0,
        max_steps: int | None = None,
        render_mode: str | None = None,
    ) -> None:
        given = [x is not None for x in (alphas, betas, costs)]
        if any(given) and not all(given):
            raise ValueError("alphas, betas and costs must be given together (or none of them)")
        fixed = all(given)
        num = None if num_boxes is None else check_positive_int(num_boxes, "num_boxes")
        self._fixed_instance = "this env was built with fixed priors and costs" if fixed else None
        if fixed:
            self._alphas = _positive_vector(alphas, "alphas")  # type: ignore[arg-type]
            self._betas = _positive_vector(betas, "betas")  # type: ignore[arg-type]
            self._costs = _positive_vector(costs, "costs")  # type: ignore[arg-type]
            k = self._alphas.size
            if self._betas.size != k or self._costs.size != k:
                raise ValueError("alphas, betas and costs must have the same length")
            check_agrees("num_boxes", num, k, "the priors' length")
            if np.any(self._costs > 1):
                raise ValueError("costs must lie in (0, 1]")
        else:
            k = DEFAULT_NUM_BOXES if num is None else num
        self.num_boxes = k
        out = float(outside_option)
        if not 0.0 <= out <= 1.0:
            raise ValueError(f"outside_option must lie in [0, 1], got {outside_option}")
        self.outside_option = out
        self.max_steps = (
            2 * k + 1 if max_steps is None else check_positive_int(max_steps, "max_steps")
        )
        self.render_mode = check_render_mode(render_mode, self.metadata["render_modes"])
        self.action_space = spaces.Discrete(k + 1)
        self.observation_space = spaces.Box(0.0, 1.0, (k, 3), np.float32)
        self._instance_drawn = fixed
        self._values = np.zeros(k)
        self._opened = np.zeros(k, dtype=bool)
        self._order: list[int] = []
        self._paid = 0.0
        self._steps = 0
        self._done = True

    def _has_instance(self) -> bool:
        return self._instance_drawn

    def _require_instance(self) -> None:
        if not self._instance_drawn:
            raise ResetNeeded("the instance is drawn at the first reset(); call reset()")

    @property
    def alphas(self) -> NDArray[np.float64]:
        """First Beta parameter of each box's prior, shape ``(K,)`` (a copy)."""
        self._require_instance()
        return self._alphas.copy()

    @property
    def betas(self) -> NDArray[np.float64]:
        """Second Beta parameter of each box's prior, shape ``(K,)`` (a copy)."""
        self._require_instance()
        return self._betas.copy()

    @property
    def costs(self) -> NDArray[np.float64]:
        """Inspection cost of each box, shape ``(K,)`` (a copy)."""
        self._require_instance()
        return self._costs.copy()

    def _draw_instance(self) -> None:
        self._alphas, self._betas, self._costs = draw_boxes(self.np_random, self.num_boxes)
        self._instance_drawn = True

    def _observation(self) -> NDArray[np.float32]:
        obs = np.zeros((self.num_boxes, 3), dtype=np.float32)
        obs[:, 0] = self._opened
        obs[:, 1] = np.where(self._opened, self._values, 0.0)  # values hidden until opened
        obs[:, 2] = self._costs
        return obs

    # reset() is InstanceEnv's: the instance on the first call or on resample, then the values.
    def _start_episode(self) -> NDArray[np.float32]:
        self._values = self.np_random.beta(self._alphas, self._betas)
        self._opened = np.zeros(self.num_boxes, dtype=bool)
        self._order = []
        self._paid = 0.0
        self._steps = 0
        self._done = False
        return self._observation()

    def step(self, action: Any) -> tuple[NDArray[np.float32], float, bool, bool, dict[str, Any]]:
        """Open a box (``action < K``) or stop (``action == K``)."""
        if self._done:
            raise ResetNeeded("call reset() before step() (the episode has ended)")
        a = check_discrete_action(action, self.action_space)
        self._steps += 1
        reward = 0.0
        if a < self.num_boxes:
            reward -= float(self._costs[a])
            self._paid += float(self._costs[a])
            if not self._opened[a]:
                self._opened[a] = True
                self._order.append(a)
        terminated = a == self.num_boxes or bool(self._opened.all())
        truncated = not terminated and self._steps >= self.max_steps
        info: dict[str, Any] = {"opened": list(self._order)}
        if terminated or truncated:
            best = max(self.outside_option, float(self._values[self._opened].max(initial=0.0)))
            reward += best
            self._done = True
            info.update(payoff=best - self._paid, best_value=best, values=self._values.copy())
        return self._observation(), reward, terminated, truncated, info

    def _frame(self) -> str:  # a one-line summary of the opened boxes
        if not self._instance_drawn:
            return "PandoraBoxes: instance not drawn yet (call reset())"
        shown = ", ".join(f"{a}:{self._values[a]:.3f}" for a in self._order) or "none"
        return f"PandoraBoxes K={self.num_boxes}: opened {shown}; paid {self._paid:.3f}"
