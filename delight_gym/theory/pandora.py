"""Weitzman's optimal search and DE on Pandora's boxes (paper §2.2, Proposition 1).

Agents act on the observation of :class:`~delight_gym.envs.pandora.PandoraBoxesEnv`
(``(K, 3)``: opened flag, revealed value, cost) and return an action in ``0..K`` (``K`` =
stop). :class:`WeitzmanAgent` (optimal, Weitzman 1979) and :class:`DelightPandoraAgent` act
identically (Proposition 1). The documentation's Theory page gives the details.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats

from delight_gym._checks import check_finite_array, check_magnitude, check_positive_float
from delight_gym.de.rule import DEFAULT_GATE_PRICE, delight_rule
from delight_gym.posteriors.beta import beta_expected_improvement
from delight_gym.theory.reservation import reservation_index

__all__ = [
    "DelightPandoraAgent",
    "OrderedSearchAgent",
    "WeitzmanAgent",
    "run_search",
    "sample_instances",
]

#: Largest surprisal λ/c_a that host probabilities exp(−ℓ) can express in float64.
_MAX_SURPRISAL = 700.0


def _boxes(alphas: ArrayLike, betas: ArrayLike, costs: ArrayLike) -> tuple[np.ndarray, ...]:
    named = {"alphas": alphas, "betas": betas, "costs": costs}
    a, b, c = (check_finite_array(x, name) for name, x in named.items())
    if a.ndim != 1 or a.size == 0 or a.shape != b.shape or a.shape != c.shape:
        raise ValueError("alphas, betas and costs must be non-empty 1-D arrays of equal length")
    for name, arr in zip(named, (a, b, c), strict=True):
        if np.any(arr <= 0):
            raise ValueError(f"{name} must be > 0")
    return a, b, c


class _BoxAgent:
    """What both kinds of agent share: acting on an env observation."""

    num_boxes: int
    outside_option: float

    def choose(self, opened: NDArray[np.bool_], values: NDArray[np.float64]) -> int:
        raise NotImplementedError

    def _best(self, opened: NDArray[np.bool_], values: NDArray[np.float64]) -> float:
        return max(self.outside_option, float(values[opened].max(initial=-np.inf)))

    def act(self, obs: Any) -> int:
        """The action for an env observation of shape ``(K, 3)``."""
        o = check_finite_array(obs, "obs", shape=(self.num_boxes, 3))
        return self.choose(o[:, 0] > 0.5, o[:, 1])


class OrderedSearchAgent(_BoxAgent):
    """Open closed boxes in decreasing ``priority`` while some closed box's reservation value
    exceeds the best value in hand (Weitzman's stopping rule); then stop.

    Parameters
    ----------
    reservation : ArrayLike
        Weitzman reservation values ``z_a``, shape ``(K,)``.
    priority : ArrayLike
        the opening order (largest first), shape ``(K,)``.
    outside_option : float
        the value in hand before anything is opened.
    """

    def __init__(
        self, reservation: ArrayLike, priority: ArrayLike, outside_option: float = 0.0
    ) -> None:
        self.reservation = check_finite_array(reservation, "reservation")
        self.priority = check_finite_array(priority, "priority")
        if self.reservation.ndim != 1 or self.reservation.shape != self.priority.shape:
            raise ValueError("reservation and priority must be 1-D arrays of equal length")
        self.num_boxes = self.reservation.size
        self.outside_option = float(outside_option)

    def choose(self, opened: NDArray[np.bool_], values: NDArray[np.float64]) -> int:
        """The action for the state ``(opened, values)``: a box index or ``K`` (stop)."""
        best = self._best(opened, values)
        closed = ~opened
        if not closed.any() or self.reservation[closed].max() <= best:
            return self.num_boxes
        return int(np.argmax(np.where(closed, self.priority, -np.inf)))


class WeitzmanAgent(OrderedSearchAgent):
    """Weitzman's optimal policy: priority = reservation value ``z_a`` (``E[(X_a − z_a)^+] = c_a``).

    Parameters
    ----------
    alphas, betas : ArrayLike
        Beta priors of the boxes, shape ``(K,)``.
    costs : ArrayLike
        inspection costs, shape ``(K,)``.
    outside_option : float
        the value in hand before anything is opened.
    reservation : ArrayLike | None
        precomputed ``z_a`` (else computed).
    """

    def __init__(
        self,
        alphas: ArrayLike,
        betas: ArrayLike,
        costs: ArrayLike,
        outside_option: float = 0.0,
        reservation: ArrayLike | None = None,
    ) -> None:
        a, b, c = _boxes(alphas, betas, costs)
        z = reservation_index(stats.beta(a, b), 1.0, c) if reservation is None else reservation
        super().__init__(z, z, outside_option)

    @classmethod
    def from_env(cls, env: Any) -> WeitzmanAgent:
        """The agent for a :class:`~delight_gym.envs.pandora.PandoraBoxesEnv` after reset."""
        u = env.unwrapped
        return cls(u.alphas, u.betas, u.costs, u.outside_option)


class DelightPandoraAgent(_BoxAgent):
    """DE on Pandora's boxes with an unthrottled max-reservation override.

    Box ``a`` has surprisal ``ℓ_a = λ/c_a`` under a host that prefers to stop
    (``π(a) ∝ exp(−ℓ_a)``, ``π(stop) ∝ 1``), so its effective inspection cost is ``c_a``. The
    agent opens the gated box (``ε = 1``; EI ``E[(X_a − v)^+]`` at the best value in hand ``v``)
    of largest delight reservation index ``z^λ_a``, and stops when the gate is empty.
    ``last_decision`` holds the rule's last output.

    Parameters
    ----------
    alphas, betas, costs : ArrayLike
        the boxes' Beta priors and costs, shape ``(K,)``.
    gate_price : float
        ``λ > 0`` (default 0.1); ``λ/min(c)`` must be at most 700.
    outside_option : float
        the value in hand before anything is opened.
    reservation : ArrayLike | None
        precomputed ``z^λ_a`` (else computed).
    """

    def __init__(
        self,
        alphas: ArrayLike,
        betas: ArrayLike,
        costs: ArrayLike,
        gate_price: float = DEFAULT_GATE_PRICE,
        outside_option: float = 0.0,
        reservation: ArrayLike | None = None,
    ) -> None:
        self.alphas, self.betas, self.costs = _boxes(alphas, betas, costs)
        self.gate_price = check_positive_float(gate_price, "gate_price")
        self.surprisal = self.gate_price / self.costs
        why = "(host probabilities exp(-ℓ) underflow beyond); lower gate_price"
        check_magnitude(self.surprisal, "gate_price / costs", _MAX_SURPRISAL, why=why)
        self.num_boxes = self.costs.size
        logits = np.append(-self.surprisal, 0.0)  # stop is the host's favourite
        self.host = np.exp(logits - logits.max())
        self.host /= self.host.sum()
        # Just above the largest surprisal, so that rounding never caps a box's ℓ_a.
        self.surprisal_cap = float(self.surprisal.max()) * (1.0 + 1e-12)
        self.reservation = (
            reservation_index(stats.beta(self.alphas, self.betas), self.surprisal, self.gate_price)
            if reservation is None
            else check_finite_array(reservation, "reservation")
        )
        self.outside_option = float(outside_option)
        self.last_decision: Any = None

    @classmethod
    def from_env(cls, env: Any, gate_price: float = DEFAULT_GATE_PRICE) -> DelightPandoraAgent:
        """The agent for a :class:`~delight_gym.envs.pandora.PandoraBoxesEnv` after reset."""
        u = env.unwrapped
        return cls(u.alphas, u.betas, u.costs, gate_price, u.outside_option)

    def choose(self, opened: NDArray[np.bool_], values: NDArray[np.float64]) -> int:
        """The action for the state ``(opened, values)``: a box index or ``K`` (stop)."""
        best = self._best(opened, values)
        ei = np.where(opened, 0.0, beta_expected_improvement(self.alphas, self.betas, best))
        decision = delight_rule(
            self.host,
            np.append(ei, 0.0),
            1.0,
            gate_price=self.gate_price,
            surprisal_cap=self.surprisal_cap,
        )
        self.last_decision = decision
        gate = decision.gate[: self.num_boxes]
        if not gate.any():
            return int(np.argmax(decision.override))  # the host: stop
        return int(np.argmax(np.where(gate, self.reservation, -np.inf)))


def run_search(
    choose: Callable[[NDArray[np.bool_], NDArray[np.float64]], int],
    values: ArrayLike,
    costs: ArrayLike,
    outside_option: float = 0.0,
) -> tuple[list[int], float]:
    """Play one search episode of an agent's ``choose`` on known hidden ``values`` (no env):
    the boxes opened, in order, and the payoff ``max(outside_option, best revealed) − costs``."""
    x = check_finite_array(values, "values")
    c = check_finite_array(costs, "costs")
    k = x.size
    opened = np.zeros(k, dtype=bool)
    seen = np.zeros(k)
    order: list[int] = []
    for _ in range(k + 1):
        a = choose(opened, seen)
        if a == k or opened.all():
            break
        if opened[a]:
            raise RuntimeError(f"agent reopened box {a}")
        opened[a], seen[a] = True, x[a]
        order.append(a)
    best = max(outside_option, float(x[opened].max(initial=-np.inf)))
    return order, best - float(c[opened].sum())


def sample_instances(
    num_instances: int, num_boxes: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Random instances ``(alphas, betas, costs)``, each ``(n, K)``, as the env draws them."""
    from delight_gym.envs.pandora import draw_boxes

    return draw_boxes(rng, (num_instances, num_boxes))
