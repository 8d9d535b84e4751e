"""Quickstart: DE on a 10-armed Bernoulli bandit, as the paper's agent — a greedy host over
Beta(1, 1) posterior means, wrapped by DelightExplorationWrapper with the exact Beta EI."""

import argparse

import gymnasium as gym
import numpy as np

from delight_gym import BetaBernoulliPosterior, DelightExplorationWrapper
from delight_gym.posteriors import BetaBernoulliAdapter

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--horizon", type=int, default=1000, help="rounds played (default %(default)s)")
parser.add_argument("--smoke", action="store_true", help="tiny run: 100 rounds")
args = parser.parse_args()
horizon = 100 if args.smoke else args.horizon

env = gym.make("BernoulliBandit-v0", num_arms=10)
posterior = BetaBernoulliPosterior(1, 10)  # one bandit, Beta(1, 1) prior on every arm
greedy = lambda obs: np.eye(10)[np.repeat(np.argmax(posterior.mean()[0]), len(obs))]  # noqa: E731
agent = DelightExplorationWrapper(
    greedy, BetaBernoulliAdapter(posterior), seed=0,
    observation_space=env.observation_space, action_space=env.action_space,
)  # fmt: skip
obs, _ = env.reset(seed=0)
regret = overrides = 0.0
for _ in range(horizon):
    action, _ = agent.predict(obs)
    next_obs, reward, terminated, truncated, info = env.step(action)
    agent.observe(obs, action, reward, next_obs, terminated, truncated)
    regret += info["regret"]
    overrides += agent.last_info["overridden"]
    obs, _ = env.reset()
print(f"T={horizon}: pseudo-regret {regret:.1f}, {overrides:.0f} overrides")
