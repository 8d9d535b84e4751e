"""The command line's bounds, checked on the parsed arguments before anything runs.

:func:`cell_sizes` estimates one cell's large buffers from the options, :func:`check_fits`
refuses the command (exit status 2, naming the options) when they would not fit in memory, and
:func:`check_control` bounds the control families' seeds and evaluation episodes and
:func:`check_ranges` the settings' ranges that the envs would refuse inside a cell.
"""

from __future__ import annotations

import argparse
import math

from delight_gym._checks import array_bytes, check_would_fit, magnitude_limit
from delight_gym.envs.neural import neural_bandit_nbytes
from delight_gym.experiments.families.base import Family

__all__ = [
    "CONTINUUM_POOL_COPIES",
    "MAX_CONTEXTUAL_NOISE",
    "MAX_EVAL_EPISODES",
    "NETWORK_WIDTH",
    "SB3_MAX_SEED",
    "cell_sizes",
    "check_control",
    "check_fits",
    "check_ranges",
    "curve_sizes",
]

#: SB3 (the control families) seeds numpy's legacy generator: seeds must lie below 2**32.
SB3_MAX_SEED = 2**32 - 1
#: The most evaluation episodes one control run may take (checkpoints x --eval-episodes):
#: every episode is a loop of up to the task's episode length (200 to 999 steps).
MAX_EVAL_EPISODES = 100_000
#: float64 copies of a continuum round's pool ``(B, 64, d)`` alive at once (the pool, its
#: tensor, the padded EI input, the scored points and their local and uniform parts): with the
#: RFF frequencies ``(B, 256, d)`` and the env's bumps ``(B, 6, d)``, about the measured peak.
CONTINUUM_POOL_COPIES = 6
#: The widest first layer of the contextual agents' networks (NeuralLinear's paper settings).
NETWORK_WIDTH = 100
#: The contextual families' largest ``--noise``: rewards stay below what a float32 network's
#: training accepts (its squared gradients finite), with a margin of 100 σ for the draws.
MAX_CONTEXTUAL_NOISE = magnitude_limit("float32", 4) / 100


def cell_sizes(
    family: Family, args: argparse.Namespace, instance: dict[str, object]
) -> dict[str, int]:
    """Every large buffer of one cell of ``family`` (bytes by name), from the parsed arguments:
    the regret curves of every family, the continuum agents' frequencies, pools and env, and
    the neural bandits' env, a round's inputs and the networks' first layer."""
    batch = min(args.seeds, args.batch_size or family.batch_size)
    parts = curve_sizes(args.horizon, batch, args.seeds)
    if family.name.startswith("continuum"):
        d = int(instance["dim"])  # type: ignore[call-overload]
        rows = f"{batch} rows of dim={d}"
        parts[f"--dim: the RFF frequencies ({rows} x 256)"] = array_bytes(batch, 256, d)
        pools = CONTINUUM_POOL_COPIES * array_bytes(batch, 64, d)
        parts[f"--dim: the candidate pools ({rows} x 64, {CONTINUUM_POOL_COPIES} copies)"] = pools
        parts[f"--dim: the env's bumps ({rows} x 6)"] = array_bytes(batch, 6, d)
    if family.name == "neural-width":
        k, d, c = (int(instance[key]) for key in ("arms", "dim", "context_dim"))  # type: ignore[call-overload]
        rows = f"{batch} rows of K={k} arms, D={d} + C={c} inputs"
        dims = "--dim, --context-dim"
        parts[f"{dims}, --arms: the env's arrays ({rows})"] = neural_bandit_nbytes(k, d, c, batch)
        # as the agents' own check: 4 copies of a round's inputs and activations (float64)
        inputs = 4 * array_bytes(batch, k, d + c + NETWORK_WIDTH + 2)
        parts[f"{dims}, --arms: a round's inputs ({rows})"] = inputs
        # the first layer's weights, gradient and Adam's two moments, per seed
        layer = 4 * array_bytes(batch, d + c, NETWORK_WIDTH)
        parts[f"{dims}: the networks' first layer ({rows})"] = layer
    return parts


def check_ranges(
    parser: argparse.ArgumentParser,
    family: Family,
    args: argparse.Namespace,
    instance: dict[str, object],
) -> None:
    """End the command naming the option when a setting lies outside what its env accepts:
    the continuum needle's width times ``√d`` (what the env gets) in ``WIDTH_RANGE``, half of
    it (DE's proposal scale) in ``HOST_STD_RANGE``, and the contextual families' noise at
    most :data:`MAX_CONTEXTUAL_NOISE`."""
    from delight_gym.de.proposers import HOST_STD_RANGE
    from delight_gym.envs.continuum import WIDTH_RANGE

    if "needle_width" in instance:
        width = float(instance["needle_width"])  # type: ignore[arg-type]
        scaled = width * math.sqrt(int(instance["dim"]))  # type: ignore[call-overload]
        low, high = WIDTH_RANGE
        if not low <= scaled <= high:
            parser.error(
                f"--needle-width: {width:g} x √d (d = {instance['dim']}) must lie in "
                f"[{low:g}, {high:g}]"
            )
        low, high = HOST_STD_RANGE
        if "delight" in args.agents and not low <= width / 2 <= high:
            parser.error(
                f"--needle-width: half of it, {width / 2:g} (delight's proposal scale), must lie "
                f"in [{low:g}, {high:g}]"
            )
    noise = float(instance.get("noise", 0.0))  # type: ignore[arg-type]
    if family.name in ("wheel", "neural-width") and noise > MAX_CONTEXTUAL_NOISE:
        parser.error(
            f"--noise: {noise:g} must be at most {MAX_CONTEXTUAL_NOISE:.3g} (the rewards' "
            "squares stay finite in training)"
        )


def curve_sizes(horizon: int, batch: int, seeds: int) -> dict[str, int]:
    """The regret curves' bytes: a cell's ``(batch, horizon)`` (a few copies), all seeds'."""
    return {
        "--horizon x --batch-size": 4 * array_bytes(horizon, batch),
        "--horizon x --seeds": 2 * array_bytes(horizon, seeds),
    }


def check_control(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """The control families' bounds: SB3's seeds below ``2**32`` and at most
    :data:`MAX_EVAL_EPISODES` evaluation episodes per run."""
    last = args.seed + args.seeds - 1
    if last > SB3_MAX_SEED:
        parser.error(
            f"--seed: seeds {args.seed}..{last} must be <= {SB3_MAX_SEED} (SB3 seeds numpy's "
            "legacy generator)"
        )
    for every in args.eval_every:
        for episodes in args.eval_episodes:
            if every < 1 or episodes < 1:
                continue  # refused, naming the option, by the family's own check
            total = (max(args.horizon - 1, 0) // every + 1) * episodes
            if total > MAX_EVAL_EPISODES:
                parser.error(
                    f"--eval-episodes: {episodes} episodes at each of "
                    f"{total // episodes} checkpoints (--eval-every {every}, --steps "
                    f"{args.horizon}) is {total} evaluation episodes per run, more than "
                    f"{MAX_EVAL_EPISODES}"
                )


def check_fits(parser: argparse.ArgumentParser, parts: dict[str, int]) -> None:
    """End the command naming the options (exit status 2) when ``parts`` would not fit in
    memory, each alone (the curves' bound) or all together (one cell's buffers)."""
    try:
        for what, nbytes in parts.items():
            check_would_fit(nbytes, what)
        dims = {k: v for k, v in parts.items() if k.startswith("--dim")}
        if dims:
            check_would_fit(dims, "--dim: one cell's buffers (rows: --seeds, --batch-size)")
    except ValueError as exc:
        parser.error(str(exc))
