"""A trained PPO policy, wrapped for evaluation-time exploration with DE.

PPO is trained as usual (no DE in its rollouts: see ``docs/sb3.md`` for why), then run for
``--eval-episodes`` episodes three ways on the same DeepSea instance:

* ``ppo-deterministic``: ``model.predict(obs, deterministic=True)``;
* ``ppo-sampled``: ``model.predict(obs)``, sampling PPO's own distribution;
* ``ppo+delight``: :class:`delight_gym.DelightExplorationWrapper` around the model, with the
  default tabular value posterior learning online from the evaluation episodes
  (``observe`` after every step).

Printed: treasures found, mean return and (for DE) the number of overridden steps, counted
here from each decision's ``last_info`` and, beside it, the wrapper's own record
(``wrapped.stats``, what it would log to SB3's logger under ``delight/``).
``--smoke`` runs in seconds (size 4, PPO trained 1024 steps: confident enough that DE
overrides it; after only 256 steps PPO's probabilities are still near ½/½, no action is
surprising and the gate, ``EI × surprisal ≥ λ``, stays empty).

The same online evaluation through SB3's ``evaluate_policy`` reads
``evaluate_policy(wrapped, env, deterministic=False, callback=wrapped.evaluation_callback())``;
this script steps the env itself to seed every evaluation episode.

What to expect: the wrapper's override clock continues from the host's training
(``model.num_timesteps``), so after the default 20k PPO steps ``ε_t = M/(M + t)`` starts near
0.005 (near 0.09 after ``--smoke``'s 1024) and DE overrides rarely. With a fresh posterior, DE
explores actions the confident host rules out, which costs return around a policy that is
already optimal; and per-step overrides with probability ``ε_t`` rarely chain the many
consecutive "right" moves a large DeepSea needs. Wrapping pays off when the posterior knows
something the host does not, e.g. a posterior fed the host's own training transitions, or a
host that is uncertain where the posterior is optimistic.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass

import gymnasium as gym
import numpy as np
import torch
from stable_baselines3 import PPO

import delight_gym  # noqa: F401 - registers DeepSea-v0
from delight_gym import DelightExplorationWrapper


@dataclass
class Args:
    size: int = 8
    train_steps: int = 20_000
    eval_episodes: int = 500
    seed: int = 0
    smoke: bool = False


def evaluate(act, env: gym.Env, episodes: int, seed: int, observe=None) -> tuple[int, float]:
    """Run ``episodes`` episodes with ``act(obs) -> action``; return (treasures, mean return)."""
    found, total = 0, 0.0
    for e in range(episodes):
        obs, _ = env.reset(seed=seed + e)
        ret, done = 0.0, False
        while not done:
            action = act(obs)
            nxt, reward, term, trunc, _ = env.step(action)
            if observe is not None:
                observe(obs, action, reward, nxt, term, trunc)
            ret += float(reward)
            obs, done = nxt, term or trunc
        found += ret > 0.5
        total += ret
    return found, total / episodes


def main(argv: list[str] | None = None) -> dict[str, tuple[int, float]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=Args.size, help="N (default %(default)s)")
    parser.add_argument(
        "--train-steps",
        type=int,
        default=Args.train_steps,
        help="PPO training steps (default %(default)s)",
    )
    parser.add_argument(
        "--eval-episodes",
        type=int,
        default=Args.eval_episodes,
        help="evaluation episodes per policy (default %(default)s)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=Args.seed,
        help="PPO's and the wrapper's seed, and the instance's mapping_seed (default %(default)s)",
    )
    parser.add_argument(
        "--smoke",
        action="store_true",
        help="tiny run (seconds): N = 4, 1024 PPO steps, 20 episodes",
    )
    ns = parser.parse_args(argv)
    args = Args(ns.size, ns.train_steps, ns.eval_episodes, ns.seed, ns.smoke)
    if args.smoke:
        args.size, args.train_steps, args.eval_episodes = 4, 1024, 20
    torch.set_num_threads(1)
    env = gym.make("DeepSea-v0", size=args.size, mapping_seed=args.seed)
    model = PPO("MlpPolicy", env, n_steps=128, batch_size=64, seed=args.seed, device="cpu")
    model.learn(args.train_steps)
    wrapped = DelightExplorationWrapper(model, seed=args.seed)
    results = {
        "ppo-deterministic": evaluate(
            lambda o: model.predict(o, deterministic=True)[0], env, args.eval_episodes, 10**6
        ),
        "ppo-sampled": evaluate(lambda o: model.predict(o)[0], env, args.eval_episodes, 10**6),
    }
    overrides = steps = 0

    def act(obs: np.ndarray) -> np.ndarray:
        nonlocal overrides, steps
        action, _ = wrapped.predict(obs)
        overrides += int(wrapped.last_info["overridden"])
        steps += 1
        return action

    results["ppo+delight"] = evaluate(act, env, args.eval_episodes, 10**6, wrapped.observe)
    print(
        f"DeepSea-v0 size {args.size}: PPO trained {args.train_steps} steps, "
        f"{args.eval_episodes} evaluation episodes"
    )
    print(f"{'policy':<18} {'treasures':>9} {'mean return':>12}")
    for name, (found, mean_return) in results.items():
        print(f"{name:<18} {found:>9d} {mean_return:>12.3f}")
    print(
        f"DE overrode {overrides} of {steps} evaluation steps "
        f"(the wrapper's record: {wrapped.stats.overridden} of {wrapped.stats.steps})"
    )
    return results


if __name__ == "__main__":
    main()
