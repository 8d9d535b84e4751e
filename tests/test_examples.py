"""Every script in ``examples/`` runs in its ``--smoke`` mode and prints what it computed.

Each script runs in its own process, as ``__main__`` with ``--smoke``, the four together, with
recorders installed first (:func:`_run_recorded`, this file's ``__main__``): every env made by
``gymnasium.make`` and every ``DeepSeaVectorEnv`` logs the actions it was given and the rewards
it paid, and :class:`~delight_gym.DelightExplorationWrapper` logs each decision's ``last_info``.
The recorders only watch; the script's printed table is its own.

The tests then recompute the printed numbers from that record, independently of the script's
own bookkeeping, and compare them to the printed precision:

- DeepSea regret from the closed-form optimal return (always 0.99 in the deterministic
  DeepSea of any size ``N``: ``N`` "right" moves at ``0.01/N`` each, then the treasure 1), not
  from the env's ``info``; every episode's return must be 0.99 or lie in ``[-0.01 (N-1)/N, 0]``;
- the bandit's pseudo-regret from the instance's arm means and the arms pulled;
- DE's override count from the recorded host probabilities and EI, through the paper's gate
  written out here in numpy (surprisal, delight, ``χ >= λ``), with the bandit's EI itself
  recomputed from the Beta posterior of the recorded pulls in closed form.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from scipy.special import betainc

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
SCRIPTS = (
    "bandit_quickstart.py",
    "deep_sea_agents.py",
    "sb3_dqn_deep_sea.py",
    "ppo_wrapped_eval.py",
    "cartpole_delight.py",
    "mountain_car_delight.py",
    "mountain_car_continuous_delight.py",
)
# Deterministic DeepSea, any size N: N "right" moves at 0.01/N each and the treasure's 1.
OPTIMAL_RETURN = 0.99


def _run_recorded(script: str, record_path: str) -> None:
    """Run ``script --smoke`` as ``__main__`` with recorders installed; dump them as JSON.

    The record has ``envs`` (per ``gymnasium.make`` call, its episodes in order: reset
    ``seed``, ``actions``, ``rewards`` and, for bandits, the instance ``means`` at each step),
    ``vector_envs`` (per ``DeepSeaVectorEnv``, its per-step ``actions`` and ``rewards`` of shape
    ``(num_envs,)``) and ``predicts`` (per ``DelightExplorationWrapper.predict`` call, the
    wrapper's settings and ``last_info``).
    """
    import runpy

    import gymnasium

    import delight_gym.envs
    from delight_gym.de.engine import DelightEngine  # both engines predict through it

    record: dict[str, list[Any]] = {"envs": [], "vector_envs": [], "predicts": []}

    class Recorder(gymnasium.Wrapper):
        def __init__(self, env: gymnasium.Env) -> None:
            super().__init__(env)
            self.episodes: list[dict[str, Any]] = []
            record["envs"].append(self.episodes)

        def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> Any:
            self.episodes.append({"seed": seed, "actions": [], "rewards": [], "means": []})
            return self.env.reset(seed=seed, options=options)

        def step(self, action: Any) -> Any:
            result = self.env.step(action)
            episode = self.episodes[-1]
            a = np.asarray(action)  # an int for Discrete actions, a list for Box ones
            episode["actions"].append(int(a) if a.ndim == 0 else a.tolist())
            episode["rewards"].append(float(result[1]))
            means = getattr(self.env.unwrapped, "means", None)  # bandits only
            if means is not None:
                episode["means"].append(np.asarray(means, dtype=float).tolist())
            return result

    class VectorRecorder(delight_gym.envs.DeepSeaVectorEnv):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.recorded: dict[str, list[Any]] = {"actions": [], "rewards": []}
            record["vector_envs"].append(self.recorded)

        def step(self, actions: Any) -> Any:
            result = super().step(actions)
            self.recorded["actions"].append(np.asarray(actions).tolist())
            self.recorded["rewards"].append(np.asarray(result[1], dtype=float).tolist())
            return result

    predict = DelightEngine.predict

    def recording_predict(
        self: Any,
        observation: Any,
        state: Any = None,
        episode_start: Any = None,
        deterministic: bool = False,
    ) -> Any:
        t = self.t
        result = predict(self, observation, state, episode_start, deterministic)
        info = self.last_info
        if "host_probs" not in info:  # the Box engine: its decisions are not checked here
            return result
        record["predicts"].append(
            {
                "t": t,
                "deterministic": bool(deterministic),
                "gate_price": float(self.gate_price),
                "surprisal_cap": float(self.surprisal_cap),
                "half_life": float(self.half_life),
                "action": np.asarray(result[0]).tolist(),
                **{
                    key: np.asarray(info[key]).tolist()
                    for key in (
                        "overridden",
                        "explored",
                        "epsilon",
                        "host_probs",
                        "expected_improvement",
                    )
                },
            }
        )
        return result

    make = gymnasium.make
    gymnasium.make = lambda *args, **kwargs: Recorder(make(*args, **kwargs))
    delight_gym.envs.DeepSeaVectorEnv = VectorRecorder  # type: ignore[misc]
    DelightEngine.predict = recording_predict  # type: ignore[method-assign]
    sys.argv = [script, "--smoke"]
    runpy.run_path(script, run_name="__main__")
    Path(record_path).write_text(json.dumps(record))


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, dict[str, Any]]]:
    """Per script: (its stdout, the record of :func:`_run_recorded`)."""
    folder = tmp_path_factory.mktemp("example_records")
    records = {name: folder / f"{name}.json" for name in SCRIPTS}
    procs = {
        name: subprocess.Popen(
            [sys.executable, __file__, str(EXAMPLES / name), str(records[name])],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in SCRIPTS
    }
    out = {}
    for name, proc in procs.items():
        stdout, stderr = proc.communicate(timeout=300)
        assert proc.returncode == 0, f"{name} failed:\n{stderr}"
        out[name] = (stdout, json.loads(records[name].read_text()))
    return out


def test_every_example_is_covered() -> None:
    assert sorted(p.name for p in EXAMPLES.glob("*.py")) == sorted(SCRIPTS)


def _options_without_help(source: str) -> list[str]:
    """The ``add_argument`` calls of ``source`` that give no ``help=`` (their first argument)."""
    missing = []
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "add_argument"
            and not any(k.arg == "help" for k in node.keywords)
        ):
            first = node.args[0] if node.args else None
            missing.append(first.value if isinstance(first, ast.Constant) else "?")
    return missing


@pytest.mark.parametrize("script", SCRIPTS)
def test_help_describes_every_option(script: str) -> None:
    """``--help`` says what each option does: every ``add_argument`` has a ``help=``."""
    source = (EXAMPLES / script).read_text(encoding="utf-8")
    assert _options_without_help(source) == []
    assert _options_without_help('p.add_argument("--x", type=int)') == ["--x"]  # the check bites


# -- independent recomputations ------------------------------------------------------------


def _beta_expected_improvement(a: np.ndarray, b: np.ndarray, v: float) -> np.ndarray:
    """``E[(X - v)^+]`` for ``X ~ Beta(a, b)``, shapes ``(A,)``: closed form
    ``a/(a+b) (1 - I_v(a+1, b)) - v (1 - I_v(a, b))`` with ``I`` the regularised incomplete
    beta function."""
    return a / (a + b) * (1.0 - betainc(a + 1, b, v)) - v * (1.0 - betainc(a, b, v))


def _count_overrides(predicts: list[dict[str, Any]]) -> int:
    """Recompute every recorded DE decision's gate and return the number of overrides.

    Written from the paper's rule, not from ``delight_gym.de.rule``: surprisal
    ``ℓ(a) = min([-log π(a) + log max_b π(b)]_+, L)``, delight ``χ = EI·ℓ``, and a decision
    overrides the host exactly when its ``ε`` coin chose the override (``explored``) and some
    ``χ(a) >= λ``; the override's action is then inside the gate. ``ε_t = M/(M + t)``.
    """
    total = 0
    for p in predicts:
        overridden = np.atleast_1d(np.asarray(p["overridden"], dtype=bool))
        if p["deterministic"]:
            assert not overridden.any()
            continue
        assert p["epsilon"] == pytest.approx(p["half_life"] / (p["half_life"] + p["t"]))
        probs = np.atleast_2d(np.asarray(p["host_probs"], dtype=float))
        ei = np.atleast_2d(np.asarray(p["expected_improvement"], dtype=float))
        explored = np.atleast_1d(np.asarray(p["explored"], dtype=bool))
        actions = np.atleast_1d(np.asarray(p["action"]))
        with np.errstate(divide="ignore"):
            neg_log = -np.log(probs)
        surprisal = np.minimum(neg_log - neg_log.min(axis=1, keepdims=True), p["surprisal_cap"])
        delight = ei * surprisal
        top = delight.max(axis=1)
        decided = np.abs(top - p["gate_price"]) > 1e-9  # leave knife-edge rounding aside
        gate_open = top >= p["gate_price"]
        np.testing.assert_array_equal(overridden[decided], (explored & gate_open)[decided])
        rows = np.flatnonzero(overridden)
        assert np.all(delight[rows, actions[rows]] >= p["gate_price"] - 1e-9)
        total += int(overridden.sum())
    return total


def _check_deep_sea_returns(returns: np.ndarray, size: int) -> None:
    """Every episode of the deterministic DeepSea returns 0.99 (treasure) or, having missed
    it, minus ``0.01/N`` per "right" move: a value in ``[-0.01 (N-1)/N, 0]``."""
    treasure = np.abs(returns - OPTIMAL_RETURN) < 1e-9
    missed = (returns >= -0.01 * (size - 1) / size - 1e-9) & (returns <= 1e-9)
    assert np.all(treasure | missed), returns


def _check_table_row(groups: tuple[str, ...], returns: np.ndarray, episodes: int) -> None:
    """One printed row ``found/seeds, median first treasure, regret mean ± s.e.`` against
    ``returns`` of shape ``(episodes, seeds)``, to the printed precision."""
    found_txt, seeds_txt, median_txt, mean_txt, se_txt = groups
    assert returns.shape == (episodes, int(seeds_txt))
    hit = returns > 0.5
    first = np.where(hit.any(axis=0), hit.argmax(axis=0) + 1.0, np.inf)
    assert int(found_txt) == int(np.isfinite(first).sum())
    median = float(np.median(first))
    if median_txt.startswith(">"):
        assert median_txt == f"> {episodes}" and not np.isfinite(median)
    else:
        assert abs(float(median_txt) - median) <= 0.5
    regret = (OPTIMAL_RETURN - returns).sum(axis=0)
    assert abs(float(mean_txt) - regret.mean()) <= 0.05 + 1e-9
    se = regret.std(ddof=1) / np.sqrt(len(regret))
    assert abs(float(se_txt) - se) <= 0.05 + 1e-9


def _header(text: str) -> tuple[int, int, int]:
    m = re.search(r"DeepSea-v0 size (\d+), (\d+) episodes, (\d+) seeds", text)
    assert m is not None, text
    return int(m[1]), int(m[2]), int(m[3])


def _row(text: str, agent: str) -> re.Match[str]:
    m = re.search(
        rf"^{re.escape(agent)}\s+(\d+)/(\d+)\s+(\d+|> \d+)\s+(-?[\d.]+) ± ([\d.]+)(.*)$",
        text,
        re.MULTILINE,
    )
    assert m is not None, f"no row for {agent} in:\n{text}"
    return m


# -- the examples ------------------------------------------------------------------------


def test_bandit_quickstart(outputs: dict[str, tuple[str, dict[str, Any]]]) -> None:
    text, record = outputs["bandit_quickstart.py"]
    m = re.search(r"T=(\d+): pseudo-regret ([\d.]+), (\d+) overrides", text)
    assert m is not None, text
    horizon = int(m[1])
    (episodes,) = record["envs"]
    episodes = [e for e in episodes if e["actions"]]
    assert len(episodes) == horizon and all(len(e["actions"]) == 1 for e in episodes)
    actions = np.array([e["actions"][0] for e in episodes])
    rewards = np.array([e["rewards"][0] for e in episodes])
    means = np.array([e["means"][0] for e in episodes])
    assert np.all(means == means[0])  # one instance for the whole run
    arms = means.shape[1]
    # Pseudo-regret from the instance's means and the pulled arms: catches a wrong
    # info["regret"], a sum over the wrong rounds or a number printed from the wrong variable.
    regret = float(np.sum(means[0].max() - means[0][actions]))
    assert abs(float(m[2]) - regret) <= 0.05 + 1e-9
    # The wrapper's inputs to the gate, recomputed from the pulls: the greedy host is one-hot
    # on the Beta(1, 1) posterior's best mean (lowest index on ties) and EI is the Beta closed
    # form at the host's baseline. Catches a posterior that learns from the wrong arm or reward,
    # an EI off its closed form, or a baseline other than the host's value.
    predicts = record["predicts"]
    assert len(predicts) == horizon
    a, b = np.ones(arms), np.ones(arms)
    for p, action, reward in zip(predicts, actions, rewards, strict=True):
        assert p["action"] == action and reward in (0.0, 1.0)
        mean = a / (a + b)
        np.testing.assert_array_equal(p["host_probs"], np.eye(arms)[np.argmax(mean)])
        ei = _beta_expected_improvement(a, b, float(mean.max()))
        np.testing.assert_allclose(p["expected_improvement"], ei, rtol=1e-9, atol=1e-12)
        a[action] += reward
        b[action] += 1.0 - reward
    # The printed override count equals the overrides the paper's gate allows on those
    # inputs: catches a miscounted or misreported override, or a gate that opens or stays
    # shut wrongly (e.g. a surprisal sign error).
    assert int(m[3]) == _count_overrides(predicts)


@pytest.mark.parametrize(
    ("script", "agents"),
    [
        ("deep_sea_agents.py", ("psrl", "delight", "egreedy")),
        ("sb3_dqn_deep_sea.py", ("dqn-egreedy", "delight-dqn")),
    ],
)
def test_deep_sea_tables(
    outputs: dict[str, tuple[str, dict[str, Any]]], script: str, agents: tuple[str, ...]
) -> None:
    text, record = outputs[script]
    size, episodes, seeds = _header(text)
    for i, agent in enumerate(agents):
        row = _row(text, agent)
        if script == "deep_sea_agents.py":
            # One vector env per agent, seed i in column i, N steps per episode.
            rewards = np.asarray(record["vector_envs"][i]["rewards"], dtype=float)
            assert rewards.shape == (episodes * size, seeds)
            returns = rewards.reshape(episodes, size, seeds).sum(axis=1)
        else:
            # One env per (agent, seed), in that order; SB3's auto-reset opens a last, empty
            # episode after training ends.
            per_seed = []
            for env in record["envs"][i * seeds : (i + 1) * seeds]:
                played = [e for e in env if e["actions"]][:episodes]
                assert len(played) == episodes and all(len(e["rewards"]) == size for e in played)
                per_seed.append([sum(e["rewards"]) for e in played])
            returns = np.array(per_seed).T
            first = [
                next((str(j + 1) for j, r in enumerate(rs) if r > 0.5), "-") for rs in per_seed
            ]
            # Catches per-seed first-treasure episodes off by one or swapped between seeds.
            assert f"(first per seed: {','.join(first)};" in row[6], row[0]
        # Catches an env paying a reward outside DeepSea's closed form, or an episode cut at
        # the wrong step.
        _check_deep_sea_returns(returns, size)
        # Catches a found count, first-treasure median or regret (mean ± s.e.) that does not
        # follow from the episodes played, e.g. regret against a wrong optimal return or
        # summed over the wrong episodes, or treasures counted from the wrong returns.
        _check_table_row(row.groups()[:5], returns, episodes)


def test_ppo_wrapped_eval(outputs: dict[str, tuple[str, dict[str, Any]]]) -> None:
    text, record = outputs["ppo_wrapped_eval.py"]
    m = re.search(r"DeepSea-v0 size (\d+): PPO trained \d+ steps, (\d+) evaluation episodes", text)
    assert m is not None, text
    size, episodes = int(m[1]), int(m[2])
    (env,) = record["envs"]
    # The three evaluations reset with seeds 10**6, 10**6 + 1, ... (training resets do not).
    evals = [e for e in env if e["seed"] is not None and e["seed"] >= 10**6]
    assert len(evals) == 3 * episodes
    blocks = [evals[k * episodes : (k + 1) * episodes] for k in range(3)]
    for k, policy in enumerate(("ppo-deterministic", "ppo-sampled", "ppo+delight")):
        block = blocks[k]
        assert [e["seed"] for e in block] == [10**6 + e for e in range(episodes)]
        assert all(len(e["actions"]) == size for e in block)
        returns = np.array([sum(e["rewards"]) for e in block])
        _check_deep_sea_returns(returns, size)
        row = re.search(rf"^{re.escape(policy)}\s+(\d+)\s+(-?[\d.]+)$", text, re.MULTILINE)
        assert row is not None, f"no row for {policy} in:\n{text}"
        # Catches treasures or mean returns that do not follow from the episodes played.
        assert int(row[1]) == int(np.sum(returns > 0.5))
        assert abs(float(row[2]) - returns.mean()) <= 0.0005 + 1e-9
    # A deterministic policy on the deterministic DeepSea replays one action sequence: catches
    # deterministic=True not being honoured (and hence a treasure count other than 0 or all).
    assert all(e["actions"] == blocks[0][0]["actions"] for e in blocks[0])
    # The wrapper decided exactly the ppo+delight steps, with the actions the env received.
    predicts = record["predicts"]
    assert [p["action"] for p in predicts] == [a for e in blocks[2] for a in e["actions"]]
    m = re.search(r"DE overrode (\d+) of (\d+) evaluation steps", text)
    assert m is not None, text
    # Catches a step count other than the env's (N steps per episode, 20 x 4 in smoke mode) and
    # an override count other than what the paper's gate allows on the wrapper's recorded host
    # probabilities and EI.
    assert int(m[2]) == len(predicts) == episodes * size
    assert int(m[1]) == _count_overrides(predicts)
    # DE does override the PPO host in smoke mode, and the wrapper's own statistics (what it
    # logs under delight/) record the same count over the same steps.
    assert int(m[1]) > 0
    m = re.search(r"the wrapper's record: (\d+) of (\d+)\)", text)
    assert m is not None, text
    assert int(m[1]) == _count_overrides(predicts) and int(m[2]) == len(predicts)


@pytest.mark.parametrize(
    ("script", "env_id", "reward_per_step"),
    [
        ("cartpole_delight.py", "CartPole-v1", 1.0),
        ("mountain_car_delight.py", "MountainCar-v0", -1.0),
    ],
)
def test_deep_agent_comparison_tables(
    outputs: dict[str, tuple[str, dict[str, Any]]],
    script: str,
    env_id: str,
    reward_per_step: float,
) -> None:
    text, record = outputs[script]
    m = re.search(
        rf"{re.escape(env_id)}: (\d+) training steps, seeds 0-(\d+), (\d+) evaluation episodes",
        text,
    )
    assert m is not None, text
    seeds, episodes = int(m[2]) + 1, int(m[3])
    rows = re.findall(r"^(\S+)\s+(-?[\d.]+)\s+(n/a|[\d.]+)\s+(.+)$", text, re.MULTILINE)
    rows = [r for r in rows if r[0] in ("dqn", "delight-dqn", "bootdqn")]
    assert [r[0] for r in rows] == ["dqn", "delight-dqn", "bootdqn"], text
    # The evaluation envs are the ones reset with seeds 10**6, 10**6 + 1, ... (agent by agent,
    # seed by seed, in the printed order); training envs never use such seeds.
    evals = [env for env in record["envs"] if env and (env[0]["seed"] or 0) >= 10**6]
    assert len(evals) == len(rows) * seeds
    for k, (_, mean, se, per_seed) in enumerate(rows):
        seed_means = []
        for env in evals[k * seeds : (k + 1) * seeds]:
            assert [e["seed"] for e in env] == [10**6 + e for e in range(episodes)]
            # Both tasks pay a constant reward per step: catches returns not summed from the
            # rewards the env paid (or episodes cut short or run past the 500/200-step limit).
            returns = [sum(e["rewards"]) for e in env]
            assert returns == [reward_per_step * len(e["actions"]) for e in env]
            assert all(1 <= len(e["actions"]) <= (500 if reward_per_step > 0 else 200) for e in env)
            seed_means.append(np.mean(returns))
        values = np.array(seed_means)
        # Catches a mean or s.e. (std ddof=1 / sqrt(seeds)) that does not follow from the
        # evaluation episodes played, or per-seed means in the wrong order.
        np.testing.assert_allclose([float(v) for v in per_seed.split()], values, atol=0.05 + 1e-9)
        assert abs(float(mean) - values.mean()) <= 0.005 + 1e-9
        if seeds > 1:
            assert abs(float(se) - values.std(ddof=1) / np.sqrt(seeds)) <= 0.005 + 1e-9
        else:  # one seed (the smoke run): no standard error, and no "nan" printed for it
            assert se == "n/a"
            assert "nan" not in text


if __name__ == "__main__":
    _run_recorded(sys.argv[1], sys.argv[2])


def test_one_seed_prints_no_standard_error(capsys: pytest.CaptureFixture[str]) -> None:
    """With one seed the DeepSea table says ``n/a`` for the s.e. (not ``nan``, not 0)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "deep_sea_agents", EXAMPLES / "deep_sea_agents.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up there
    try:
        spec.loader.exec_module(module)
        module.main(["--size", "3", "--episodes", "4", "--seeds", "1"])
    finally:
        del sys.modules[spec.name]
    text = capsys.readouterr().out
    for agent in ("psrl", "delight", "egreedy"):
        assert re.search(rf"^{agent}\s+\d+/1\s+.* ± n/a\s", text, re.MULTILINE), text
    assert "nan" not in text


def test_continuous_control_table(outputs: dict[str, tuple[str, dict[str, Any]]]) -> None:
    text, record = outputs["mountain_car_continuous_delight.py"]
    m = re.search(r"(\d+) training steps, seeds 0-(\d+), (\d+) evaluation episodes", text)
    assert m is not None, text
    steps, seeds, episodes = int(m[1]), int(m[2]) + 1, int(m[3])
    rows = re.findall(r"^(\S+)\s+(-?[\d.]+)\s+(n/a|[\d.]+)\s+(.+)$", text, re.MULTILINE)
    agents = ("sac", "delight-sac", "td3", "delight-td3")
    rows = [r for r in rows if r[0] in agents]
    assert [r[0] for r in rows] == list(agents), text
    evals = [env for env in record["envs"] if env and (env[0]["seed"] or 0) >= 10**6]
    trains = [env for env in record["envs"] if env and (env[0]["seed"] or 0) < 10**6]
    assert len(evals) == len(trains) == len(agents) * seeds
    for k, (_, mean, _, per_seed) in enumerate(rows):
        seed_means = []
        for env in evals[k * seeds : (k + 1) * seeds]:
            assert [e["seed"] for e in env] == [10**6 + e for e in range(episodes)]
            # Box actions of one coordinate, inside [-1, 1], and episodes of at most 999 steps.
            actions = np.array([a for e in env for a in e["actions"]])
            assert actions.ndim == 2 and actions.shape[1] == 1 and np.abs(actions).max() <= 1
            assert all(1 <= len(e["actions"]) <= 999 for e in env)
            seed_means.append(np.mean([sum(e["rewards"]) for e in env]))
        # Catches a mean that does not follow from the rewards the evaluation env paid.
        np.testing.assert_allclose([float(v) for v in per_seed.split()], seed_means, atol=0.005)
        assert abs(float(mean) - np.mean(seed_means)) <= 0.005 + 1e-9
    # Every agent trained for the printed number of steps, and each DE agent's override count
    # is out of exactly those steps.
    assert all(sum(len(e["actions"]) for e in env) == steps for env in trains)
    counts = re.findall(r"DE overrode (\d+) of (\d+) training steps", text)
    assert len(counts) == 2 * seeds and all(int(n) == steps for _, n in counts)
    assert all(0 < int(k) <= steps for k, _ in counts)
