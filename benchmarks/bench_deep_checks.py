"""What the deep API's input checks cost per training step, with and without them in one run.

Run: ``python benchmarks/bench_deep_checks.py [--block 25] [--rounds 20] [--heads 10]
[--smoke]``

The checks in the hot path are those added to refuse non-finite or malformed data: finiteness
of observations, rewards and masks, the action range and 0/1 ``terminated`` in every TD step
of :class:`~delight_gym.posteriors.ensemble.EnsembleQPosterior` (also when the SB3 algorithms
train it from their replay buffer), and finiteness of every reward and observation the
environment hands to :class:`~delight_gym.sb3.BootstrappedDQN` and
:class:`~delight_gym.sb3.DelightDQN`. "Without" replaces exactly those checks by no-ops (the
shape checks that existed before stay), so the ratio is their cost.

Timed on the process's CPU clock with one torch thread, in rounds: each round times a block of
steps with the checks and a block without, in alternating order, so that load that comes and
goes hits both alike; the ratio is the median of the rounds' ratios:

* ``td_step``: one Adam step of ``K`` heads of ``[64, 64]`` on a batch of 128 shaped as SB3's
  replay samples (CPU tensors, ``(B, 1)`` columns), CartPole-sized (4 inputs) and DeepSea-sized
  (a one-hot 20 x 20 grid);
* ``check_transitions``: the checks of those batches alone (what the TD step's checks cost,
  without the noise of the step around them);
* ``learn``: ``BootstrappedDQN`` and ``DelightDQN`` training on CartPole, one gradient step per
  environment step (acting, stepping, the checks, storing, training).

It prints the median time per step with and without the checks, the difference, the ratio and
the load average; the checks stay on by default if they cost at most 5 % of a training step.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import time
from collections.abc import Callable, Iterator
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from gymnasium import spaces

import delight_gym.posteriors.ensemble_inputs as ensemble_module
import delight_gym.sb3.base as sb3_base
from delight_gym._checks import host_view
from delight_gym.posteriors.ensemble import EnsembleQPosterior, Transitions
from delight_gym.posteriors.ensemble_inputs import EnsembleInputs


def _unchecked_actions(actions: Any, size: int, num_actions: int, name: str = "actions") -> Any:
    arr = host_view(actions)
    return arr.astype(np.int64) if isinstance(arr, np.ndarray) else arr.long()


def _no_check(*args: Any, **kwargs: Any) -> Any:
    return None


def _all_valid(*args: Any, **kwargs: Any) -> bool:
    return True


@contextlib.contextmanager
def checks(enabled: bool) -> Iterator[None]:
    """The new checks as they are (``enabled``) or replaced by no-ops."""
    if enabled:
        yield
        return
    saved = {
        (ensemble_module, "check_all_finite"): ensemble_module.check_all_finite,
        (ensemble_module, "check_binary"): ensemble_module.check_binary,
        (ensemble_module, "check_action_batch"): ensemble_module.check_action_batch,
        (sb3_base, "check_all_finite"): sb3_base.check_all_finite,
        (EnsembleInputs, "valid_on_device"): EnsembleInputs.valid_on_device,
    }
    replacements: dict[tuple[Any, str], Callable[..., Any]] = {
        (ensemble_module, "check_all_finite"): _no_check,
        (ensemble_module, "check_binary"): _no_check,
        (ensemble_module, "check_action_batch"): _unchecked_actions,
        (sb3_base, "check_all_finite"): _no_check,
        (EnsembleInputs, "valid_on_device"): _all_valid,  # a GPU batch: no check at all
    }
    for (module, name), value in replacements.items():
        setattr(module, name, value)
    try:
        yield
    finally:
        for (module, name), original in saved.items():
            setattr(module, name, original)


def _td_step_case(space: spaces.Box, heads: int, seed: int, device: str) -> Callable[[int], None]:
    """``run(steps)``: ``steps`` TD steps on SB3-shaped batches of 128 (drawn once, on
    ``device``)."""
    post = EnsembleQPosterior(space, 2, num_heads=heads, seed=seed, device=device)
    rng = np.random.default_rng(seed)
    b = 128
    d = int(np.prod(space.shape))
    if space.high.max() == 1 and space.low.min() == 0:  # one-hot rows, as DeepSea's
        obs = np.eye(d, dtype=np.float32)[rng.integers(0, d, (2, b))]
    else:
        obs = rng.normal(size=(2, b, d)).astype(np.float32)
    batch: dict[str, Any] = {
        "observations": torch.as_tensor(obs[0].reshape(b, *space.shape)),
        "actions": torch.as_tensor(rng.integers(0, 2, (b, 1))),
        "rewards": torch.as_tensor(rng.normal(size=(b, 1)).astype(np.float32)),
        "next_observations": torch.as_tensor(obs[1].reshape(b, *space.shape)),
        "terminated": torch.as_tensor((rng.random((b, 1)) < 0.1).astype(np.float32)),
    }
    transitions = Transitions(**{k: v.to(device) for k, v in batch.items()})

    def run(steps: int) -> None:
        for _ in range(steps):
            post.td_step(transitions)

    def check_only(steps: int) -> None:
        for _ in range(steps):
            post.network.check_transitions(transitions)

    run.check_only = check_only  # type: ignore[attr-defined]
    return run


def _learn_case(algorithm: str, heads: int, seed: int) -> Callable[[int], None]:
    """``run(steps)``: ``steps`` more environment steps of ``learn`` on CartPole."""
    from delight_gym.sb3 import BootstrappedDQN, DelightDQN

    env = gym.make("CartPole-v1")
    common: dict[str, Any] = {"learning_starts": 128, "batch_size": 128, "seed": seed}
    model: Any
    if algorithm == "bootdqn":
        model = BootstrappedDQN("MlpPolicy", env, num_heads=heads, device="cpu", **common)
    else:
        model = DelightDQN(
            "MlpPolicy",
            env,
            device="cpu",
            policy_kwargs={"net_arch": [64, 64]},
            posterior_kwargs={"num_heads": heads},
            target_update_interval=4,
            train_freq=1,
            **common,
        )
    model.learn(228)  # past learning_starts: every timed step trains

    def run(steps: int) -> None:
        model.learn(steps, reset_num_timesteps=False)

    return run


def _time(run: Callable[[int], None], steps: int, cuda: bool) -> float:
    """Seconds per step: the process's CPU clock, or the wall clock (synchronized) on CUDA."""
    if cuda:
        torch.cuda.synchronize()
        start = time.perf_counter()
        run(steps)
        torch.cuda.synchronize()
        return (time.perf_counter() - start) / steps
    start = time.process_time()
    run(steps)
    return (time.process_time() - start) / steps


def _load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:  # pragma: no cover - not on this platform
        return "n/a"


def main(argv: list[str] | None = None) -> dict[str, float]:
    """Run the benchmark; returns each case's ratio (with ÷ without the checks)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--block", type=int, default=25, help="steps timed at a time")
    parser.add_argument("--rounds", type=int, default=20, help="(with, without) block pairs")
    parser.add_argument("--heads", type=int, default=10, help="ensemble heads K")
    parser.add_argument("--seed", type=int, default=100)
    parser.add_argument(
        "--device", default="cpu", help="the TD steps' device (cuda: TD steps only, wall clock)"
    )
    parser.add_argument("--smoke", action="store_true", help="tiny run (CI)")
    args = parser.parse_args(argv)
    if args.smoke:
        args.block, args.rounds = 3, 2
    torch.set_num_threads(1)
    cases: dict[str, Callable[[int], None]] = {
        "td_step cartpole (4 inputs)": _td_step_case(
            spaces.Box(-np.inf, np.inf, (4,), np.float32), args.heads, args.seed, args.device
        ),
        "td_step deepsea (20x20 one-hot)": _td_step_case(
            spaces.Box(0.0, 1.0, (20, 20), np.float32), args.heads, args.seed, args.device
        ),
    }
    for name in list(cases):  # the checks alone, on the same batch
        cases[name.replace("td_step", "check_transitions")] = cases[name].check_only  # type: ignore[attr-defined]
    cuda = torch.device(args.device).type == "cuda"
    if not cuda:
        cases["learn bootdqn cartpole"] = _learn_case("bootdqn", args.heads, args.seed)
        cases["learn delightdqn cartpole"] = _learn_case("delightdqn", args.heads, args.seed)
    print(
        f"torch {torch.__version__}, 1 thread, device {args.device}, K = {args.heads}, "
        f"{args.rounds} rounds of {args.block} steps with and {args.block} without the checks "
        f"(order alternating), {'wall' if cuda else 'CPU'} clock; load average {_load()}"
    )
    ratios = {}
    for name, run in cases.items():
        with checks(True):
            run(args.block)  # warm-up
        times: dict[bool, list[float]] = {True: [], False: []}
        for r in range(args.rounds):
            for enabled in (True, False) if r % 2 == 0 else (False, True):
                with checks(enabled):
                    times[enabled].append(_time(run, args.block, cuda))
        on, off = statistics.median(times[True]), statistics.median(times[False])
        paired = statistics.median(a / b for a, b in zip(times[True], times[False], strict=True))
        ratios[name] = paired
        print(
            f"{name:42s} with {1e6 * on:8.1f} us/step  without {1e6 * off:8.1f} us/step  "
            f"extra {1e6 * (on - off):7.1f} us  ratio (median of rounds) {paired:.3f}"
        )
    print(f"load average at the end {_load()}")
    return ratios


if __name__ == "__main__":
    main()
