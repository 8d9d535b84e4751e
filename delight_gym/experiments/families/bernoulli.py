"""The ``bernoulli`` family: K-armed Bernoulli bandits, means ~ U(0, 1) per instance.

Its cell runs :func:`~delight_gym.experiments.bandit.run_bernoulli` (imported when the cell
runs, so that importing the family imports neither torch nor the environments).
"""

from __future__ import annotations

from typing import Any

from delight_gym.experiments.families.base import ARMS, BANDIT_AGENTS, Family

__all__ = ["BERNOULLI", "bernoulli_cell"]


def bernoulli_cell(
    agent: str, horizon: int, seeds: int, *, seed: int, arms: int, **agent_kwargs: Any
) -> Any:
    """Cell of the Bernoulli family: :func:`~delight_gym.experiments.bandit.run_bernoulli`
    (a :class:`~delight_gym.experiments.bandit.BanditResult`)."""
    from delight_gym.experiments import bandit

    return bandit.run_bernoulli(agent, arms, horizon, seeds, seed=seed, **agent_kwargs)


#: K-armed Bernoulli bandits, means ~ U(0, 1) per instance.
BERNOULLI = Family(
    name="bernoulli",
    help="K-armed Bernoulli bandits, means ~ U(0,1)",
    cell=bernoulli_cell,
    agents=BANDIT_AGENTS,
    instance=(ARMS,),
    default_agents=("delight", "thompson", "egreedy", "greedy"),
    # All 100 seeds in one batch (a few MB at K = 10^4): a step's array operations then serve
    # 100 seeds at once, 2.5x cheaper than four batches of 25.
    batch_size=100,
    title="Bernoulli bandits",
)
