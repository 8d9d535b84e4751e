"""Bad input on the deep API: each case raises the right exception type, its message names the
argument (and, for environment data, the timestep), and a refused update changes nothing."""

from __future__ import annotations

import copy
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
import torch
from gymnasium import spaces

import delight_gym  # noqa: F401  (registers DeepSea-v0)
from delight_gym._checks import (
    check_all_finite,
    check_binary,
    check_seed,
    check_would_fit,
    format_bytes,
)
from delight_gym.posteriors.ensemble import EnsembleQNetwork, EnsembleQPosterior, Transitions
from delight_gym.posteriors.ensemble_td import ensemble_td_loss, ensemble_td_step

BOX = spaces.Box(-1.0, 1.0, (3,), np.float32)
N = 5


def _posterior(**kwargs: Any) -> EnsembleQPosterior:
    options: dict[str, Any] = {
        "num_heads": 3,
        "hidden_sizes": (8,),
        "seed": 100,
        "learning_starts": 1,
    }
    options.update(kwargs)
    return EnsembleQPosterior(BOX, 2, batch_size=4, **options)


def _batch(rng: np.random.Generator, n: int = N) -> dict[str, Any]:
    return {
        "observations": rng.uniform(-1, 1, (n, 3)).astype(np.float32),
        "actions": rng.integers(0, 2, n),
        "rewards": rng.normal(size=n),
        "next_observations": rng.uniform(-1, 1, (n, 3)).astype(np.float32),
        "terminated": np.zeros(n, dtype=bool),
    }


def _with(batch: dict[str, Any], **changes: Any) -> dict[str, Any]:
    out = {k: np.array(v, copy=True) for k, v in batch.items()}
    out.update(changes)
    return out


def _nan_row(x: np.ndarray, row: int = 2, value: float = np.nan) -> np.ndarray:
    x = np.array(x, dtype=np.float32, copy=True)
    x[row, 1] = value
    return x


# -- posterior: one case per kind, the type and the argument's name ------------------------------


def _bad_updates(b: dict[str, Any]) -> list[tuple[str, dict[str, Any], type, str]]:
    nan_reward = np.array(b["rewards"], copy=True)
    nan_reward[3] = np.nan
    return [
        (
            "nan observation row",
            _with(b, observations=_nan_row(b["observations"])),
            ValueError,
            "observations",
        ),
        (
            "inf next observation",
            _with(b, next_observations=_nan_row(b["next_observations"], value=np.inf)),
            ValueError,
            "next_observations",
        ),
        ("nan reward", _with(b, rewards=nan_reward), ValueError, "rewards"),
        (
            "float64 beyond float32",
            _with(b, observations=np.full((N, 3), 1e39)),
            ValueError,
            "observations",
        ),
        (
            "4 next observations for 5",
            _with(b, next_observations=b["next_observations"][:4]),
            ValueError,
            "next_observations",
        ),
        (
            "1 next observation for 5",
            _with(b, next_observations=b["next_observations"][:1]),
            ValueError,
            "next_observations",
        ),
        ("action >= A", _with(b, actions=np.array([0, 1, 2, 0, 1])), ValueError, "actions"),
        (
            "float actions",
            _with(b, actions=np.array([0.0, 1.0, 0.5, 0.0, 1.0])),
            ValueError,
            "actions",
        ),
        ("4 rewards for 5", _with(b, rewards=b["rewards"][:4]), ValueError, "rewards"),
        (
            "terminated not 0/1",
            _with(b, terminated=np.array([0.3, -1.2, 2.5, 0, 1])),
            ValueError,
            "terminated",
        ),
        ("terminated shape", _with(b, terminated=np.zeros((N, 2), bool)), ValueError, "terminated"),
        (
            "string observations",
            _with(b, observations=np.full((N, 3), "a")),
            TypeError,
            "observations",
        ),
    ]


CASES = _bad_updates(_batch(np.random.default_rng(100)))


def _snapshot(post: EnsembleQPosterior) -> dict[str, Any]:
    return copy.deepcopy(post.state_dict())


def _assert_same(before: dict[str, Any], after: dict[str, Any]) -> None:
    assert before.keys() == after.keys()
    for key in ("buffer_pos", "buffer_len", "transitions", "sgd_steps"):
        assert before[key] == after[key], key
    assert torch.equal(before["generator"], after["generator"])
    for name, value in before["network"].items():
        assert torch.equal(value, after["network"][name]), name
    for k, v in before["buffer"].items():
        assert torch.equal(v, after["buffer"][k]), k
    assert repr(before["optimizer"]) == repr(after["optimizer"])


@pytest.mark.parametrize(("label", "batch", "error", "name"), CASES, ids=[c[0] for c in CASES])
def test_refused_update_names_the_argument_and_changes_nothing(
    label: str, batch: dict[str, Any], error: type, name: str
) -> None:
    post = _posterior()
    post.update(**_batch(np.random.default_rng(101)))  # optimizer state and buffer exist
    assert post.sgd_steps > 0
    before = _snapshot(post)
    with pytest.raises(error, match=rf"\b{name}\b"):
        post.update(**batch)
    _assert_same(before, _snapshot(post))
    # A good update still trains afterwards (nothing was left half-done).
    post.update(**_batch(np.random.default_rng(102)))
    assert post.transitions == 2 * N


@pytest.mark.parametrize(("label", "batch", "error", "name"), CASES, ids=[c[0] for c in CASES])
def test_refused_td_step_names_the_argument_and_changes_nothing(
    label: str, batch: dict[str, Any], error: type, name: str
) -> None:
    post = _posterior()
    post.td_step(Transitions(**_batch(np.random.default_rng(101))))
    weights = [p.detach().clone() for p in post.network.parameters()]
    state = repr(post.optimizer.state_dict())
    # SB3's replay samples are (B, 1) tensors: the same checks apply to them.
    as_tensors = {
        k: torch.as_tensor(np.asarray(v))
        for k, v in batch.items()
        if k != "observations" or np.asarray(v).dtype.kind != "U"
    }
    if "observations" not in as_tensors:
        as_tensors["observations"] = batch["observations"]
    for given in (batch, as_tensors):
        with pytest.raises(error, match=rf"\b{name}\b"):
            post.td_step(Transitions(**given))
    for before, after in zip(weights, post.network.parameters(), strict=True):
        assert torch.equal(before, after)
    assert repr(post.optimizer.state_dict()) == state


def test_td_step_refuses_bad_masks_and_mismatched_batches() -> None:
    post = _posterior()
    b = _batch(np.random.default_rng(103))
    with pytest.raises(ValueError, match="masks must have shape"):
        post.td_step(Transitions(**b, masks=np.ones((N, 2))))
    with pytest.raises(ValueError, match="masks must be finite"):
        post.td_step(Transitions(**b, masks=np.full((N, 3), np.nan)))
    with pytest.raises(ValueError, match="masks must be >= 0"):
        post.td_step(Transitions(**b, masks=-np.ones((N, 3))))
    with pytest.raises(ValueError, match="actions must have shape"):
        post.td_step(Transitions(**_with(b, actions=b["actions"][:3])))
    # SB3's (B, 1) columns are accepted and give the loss of the (B,) ones.
    net = post.network

    def loss_of(given: dict[str, Any]) -> torch.Tensor:
        return ensemble_td_loss(net, net.check_transitions(Transitions(**given)), 0.9)[0]

    loss = loss_of(b)
    columns = {
        k: (v[:, None] if k in ("actions", "rewards", "terminated") else v) for k, v in b.items()
    }
    assert torch.equal(loss_of(columns), loss)


def test_values_refuse_non_finite_observations_and_host_probabilities() -> None:
    post = _posterior()
    obs = _nan_row(np.zeros((N, 3)))
    for method in (post.head_values, post.mean):
        with pytest.raises(ValueError, match="observations must be finite"):
            method(obs)
    with pytest.raises(ValueError, match=r"observations must be finite.*entry \(2, 1\)"):
        post.expected_improvement(obs, np.zeros(N))
    good = np.zeros((N, 3))
    with pytest.raises(ValueError, match="host_probs must be finite"):
        post.evaluate(good, np.full((N, 2), np.nan))
    with pytest.raises(ValueError, match="host_probs must sum to 1"):
        post.evaluate(good, np.full((N, 2), 5.0))
    with pytest.raises(ValueError, match="host_probs must be non-negative"):
        post.evaluate(good, np.tile([1.5, -0.5], (N, 1)))
    with pytest.raises(ValueError, match=r"host_probs must have shape \(5, 2\)"):
        post.evaluate(good, np.full((N, 3), 1 / 3))
    # The "max" baseline does not use them: None is fine, and equals any distribution's.
    values = post.evaluate(good, None, baseline="max")
    np.testing.assert_array_equal(values.baseline, post.mean(good).max(axis=1))


def test_discrete_observations_refuse_nan_and_bools() -> None:
    post = EnsembleQPosterior(spaces.Discrete(4), 2, num_heads=2, seed=100)
    with pytest.raises(ValueError, match="observations must be finite"):
        post.head_values(np.array([0.0, np.nan]))
    with pytest.raises(ValueError, match="observations must be integers"):
        post.head_values(np.array([True, False]))
    with pytest.raises(ValueError, match="observations must be integers"):
        post.head_values(np.array([0.5]))


@pytest.mark.parametrize(
    ("kwargs", "error", "name"),
    [
        ({"seed": -1}, ValueError, "seed"),
        ({"seed": 2**64}, ValueError, "seed"),
        ({"seed": 1.5}, TypeError, "seed"),
        ({"learning_starts": -1}, ValueError, "learning_starts must be >= 0"),
        ({"num_heads": 10**12}, ValueError, "num_heads"),
        ({"hidden_sizes": (10**9, 10**9)}, ValueError, "hidden_sizes"),
    ],
)
def test_bad_settings_name_the_argument(kwargs: dict[str, Any], error: type, name: str) -> None:
    with pytest.raises(error, match=name):
        EnsembleQPosterior(BOX, 2, **kwargs)


def test_memory_limits_say_the_size_they_would_need() -> None:
    # 10**12 heads of [64, 64] on 3 inputs and 2 actions: 6 float32 copies of each weight.
    per_head = 3 * 64 + 64 + 64 * 64 + 64 + 64 * 2 + 2
    need = 6 * 4 * 10**12 * per_head
    with pytest.raises(ValueError, match=rf"num_heads=10+ .* would need {format_bytes(need)}"):
        EnsembleQNetwork(BOX, 2, num_heads=10**12)
    assert EnsembleQNetwork.training_bytes((3, 64, 64, 2), 10**12) == need
    # The posterior's own replay buffer is allocated at the first update: refused there, with
    # nothing stored.
    post = _posterior(buffer_size=10**13)
    row = 2 * 3 * 4 + 8 + 4 + 1  # two float32 observations, int64 action, reward, flag
    with pytest.raises(
        ValueError, match=rf"buffer_size=10+ would need {format_bytes(row * 10**13)}"
    ):
        post.update(**_batch(np.random.default_rng(104)))
    assert post.transitions == 0 and post.state_dict()["buffer"] == {}


def test_unusable_spaces_and_devices() -> None:
    with pytest.raises(ValueError, match="observation_space must hold at least one number"):
        EnsembleQPosterior(spaces.Box(-1, 1, (0,)), 2)
    # A zero-dimensional Box (one number per observation) works.
    scalar = EnsembleQPosterior(spaces.Box(-1, 1, ()), 2, num_heads=2, seed=100)
    assert scalar.head_values(np.zeros(4)).shape == (2, 4, 2)
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="device 'cuda' is not usable"):
            EnsembleQPosterior(BOX, 2, device="cuda")


# -- the shared checks ---------------------------------------------------------------------------


def test_shared_checks() -> None:
    assert check_seed(None) is None and check_seed(np.int64(7)) == 7
    with pytest.raises(TypeError, match="my_seed"):
        check_seed(True, "my_seed")
    check_all_finite(np.arange(3), "x")  # integers are always finite
    with pytest.raises(ValueError, match=r"x must be finite \(no NaN or inf\) at t = 4; .*entry 1"):
        check_all_finite(torch.tensor([0.0, float("inf")]), "x", where=" at t = 4")
    check_binary(torch.tensor([0.0, 1.0]), "done")
    with pytest.raises(ValueError, match=r"done must be bools or 0/1; entries \[1\] got \[0.5\]"):
        check_binary(np.array([1.0, 0.5]), "done")
    with pytest.raises(ValueError, match="done must be bools or 0/1"):
        check_binary(np.array(["x"]), "done")
    assert format_bytes(512) == "512 bytes" and format_bytes(1.5 * 2**30) == "1.5 GiB"
    check_would_fit(1, "tiny")
    with pytest.raises(ValueError, match=r"big=1 would need 8.0 EiB on cpu"):
        check_would_fit(2**63, "big=1")


# -- SB3 algorithms, the wrapper and the VecEnv adapter: env data is checked where it comes in ---


class _Poisoned(gym.Wrapper):
    """CartPole whose ``what`` (``"reward"``, ``"observation"`` or ``"reset"``) turns NaN or
    inf every ``every`` steps (counted over episodes)."""

    def __init__(self, what: str, every: int = 25, value: float = np.nan) -> None:
        super().__init__(gym.make("CartPole-v1"))
        self.what, self.every, self.value, self.count = what, every, value, 0

    def reset(self, **kwargs: Any) -> Any:
        obs, info = self.env.reset(**kwargs)
        if self.what == "reset":
            obs = np.full_like(obs, self.value)
        return obs, info

    def step(self, action: Any) -> Any:
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.count += 1
        if self.count % self.every == 0:
            if self.what == "reward":
                reward = self.value
            elif self.what == "observation":
                obs = obs.copy()
                obs[2] = self.value
        return obs, reward, terminated, truncated, info


def _bootstrapped(env: Any, **kwargs: Any) -> Any:
    from delight_gym.sb3 import BootstrappedDQN

    options: dict[str, Any] = {
        "num_heads": 2,
        "learning_starts": 8,
        "batch_size": 8,
        "seed": 100,
        "device": "cpu",
        "policy_kwargs": {"net_arch": (8,)},
    }
    options.update(kwargs)
    return BootstrappedDQN("MlpPolicy", env, **options)


def _delight_dqn(env: Any, **kwargs: Any) -> Any:
    from delight_gym.sb3 import DelightDQN

    return DelightDQN(
        "MlpPolicy",
        env,
        learning_starts=8,
        batch_size=8,
        seed=100,
        device="cpu",
        policy_kwargs={"net_arch": [8]},
        posterior_kwargs={"num_heads": 2, "hidden_sizes": (8,)},
        **kwargs,
    )


@pytest.mark.parametrize("make", [_bootstrapped, _delight_dqn], ids=["bootdqn", "delightdqn"])
@pytest.mark.parametrize(
    ("what", "value", "message"),
    [
        ("reward", np.nan, r"stopped at timestep 25: the environment's reward must be finite"),
        ("observation", np.inf, r"stopped at timestep 25: the environment's observation must be"),
        ("reset", np.nan, r"stopped at reset \(timestep 0\): the environment's observation"),
    ],
)
def test_algorithms_stop_at_the_first_non_finite_env_value(
    make: Any, what: str, value: float, message: str
) -> None:
    model = make(_Poisoned(what, value=value))
    with pytest.raises(ValueError, match=message):
        model.learn(60)
    # Nothing from the poisoned step reached the networks: every weight is still finite.
    for param in model.policy.parameters():
        assert torch.isfinite(param).all()
    if what != "reset":
        assert model.replay_buffer.size() == 24  # the 24 good steps, not the 25th


def test_bootstrapped_predict_refuses_heads_out_of_range() -> None:
    model = _bootstrapped(gym.make("CartPole-v1"))
    obs = np.zeros((2, 4), np.float32)
    _, state = model.predict(obs)
    assert state is not None and state[0].shape == (2,)
    with pytest.raises(ValueError, match=r"state \(the heads\) must lie in \[0, 1\]"):
        model.predict(obs, state=(np.array([0, 2]),))
    with pytest.raises(ValueError, match=r"state \(the heads\) must be integers"):
        model.predict(obs, state=(np.array([0.0, 1.5]),))
    with pytest.raises(ValueError, match="state must hold one head per observation"):
        model.predict(obs, state=(np.array([0, 1, 1]),))
    with pytest.raises(ValueError, match="episode_start must hold one flag per observation"):
        model.predict(obs, state=state, episode_start=np.array([True]))


def test_bootstrapped_settings_that_cannot_work_are_refused() -> None:
    env = gym.make("CartPole-v1")
    with pytest.raises(ValueError, match="seed must be >= 0"):
        _bootstrapped(env, seed=-1)
    with pytest.raises(ValueError, match="learning_starts must be >= 0"):
        _bootstrapped(env, learning_starts=-1)
    with pytest.raises(ValueError, match=r"num_heads=10+ .*would need"):
        _bootstrapped(env, num_heads=10**12)
    # CartPole: 4 float32 numbers an observation, int64 actions, three float32 flags and values.
    row = 2 * 4 * 4 + 8 + 12
    with pytest.raises(
        ValueError,
        match=rf"buffer_size=10+ with n_envs=1 would need "
        rf"{format_bytes(row * 10**13)}",
    ):
        _bootstrapped(env, buffer_size=10**13)


def test_wrapper_checks_observations_rewards_and_flags() -> None:
    from delight_gym import DelightExplorationWrapper

    box = spaces.Box(-5, 5, (3,), np.float32)
    de = DelightExplorationWrapper(
        lambda obs: np.tile([0.5, 0.5], (len(obs), 1)),
        observation_space=box,
        action_space=spaces.Discrete(2),
        posterior_kwargs={"num_heads": 2, "hidden_sizes": (8,)},
        seed=100,
    )
    obs = np.zeros(3, np.float32)
    de.observe(obs, 0, 1.0, obs, False, False)
    with pytest.raises(ValueError, match=r"observation must be finite \(no NaN or inf\) at t = 1"):
        de.predict(np.array([0.0, np.nan, 0.0]))
    with pytest.raises(ValueError, match=r"next_obs must be finite .* at t = 1"):
        de.observe(obs, 0, 1.0, np.full(3, np.inf), False, False)
    with pytest.raises(ValueError, match=r"reward must be finite .* at t = 1"):
        de.observe(obs, 0, np.nan, obs, False, False)
    with pytest.raises(ValueError, match="terminated must be bools or 0/1"):
        de.observe(
            np.zeros((3, 3)), [0, 1, 0], [1, 1, 1], np.zeros((3, 3)), [0.3, -1.2, 2.5], [0, 0, 0]
        )
    with pytest.raises(ValueError, match="truncated must be bools or 0/1"):
        de.observe(obs, 0, 1.0, obs, False, 0.5)
    assert de.t == 1
    with pytest.raises(ValueError, match="seed must be >= 0"):
        DelightExplorationWrapper(
            lambda o: np.tile([0.5, 0.5], (len(o), 1)),
            observation_space=box,
            action_space=spaces.Discrete(2),
            seed=-1,
        )
    with pytest.raises(ValueError, match="learning_starts must be >= 0"):
        DelightExplorationWrapper(
            lambda o: np.tile([0.5, 0.5], (len(o), 1)),
            observation_space=box,
            action_space=spaces.Discrete(2),
            posterior_kwargs={"learning_starts": -1},
        )


def test_vec_env_adapter_refuses_the_wrong_number_of_actions() -> None:
    from delight_gym.sb3 import SB3VecEnvAdapter

    venv = SB3VecEnvAdapter(gym.make_vec("DeepSea-v0", num_envs=2, size=4))
    venv.reset()
    with pytest.raises(ValueError, match=r"actions must hold one action per sub-env, shape \(2,\)"):
        venv.step(np.array([0, 1, 1]))
    with pytest.raises(ValueError, match="actions must hold one action per sub-env"):
        venv.step(np.array(0))
    obs, rewards, _, _ = venv.step(np.array([[0], [1]]))  # SB3's (n_envs, 1) is fine
    assert isinstance(obs, np.ndarray) and obs.shape == (2, 4, 4) and rewards.shape == (2,)


# -- the command line refuses sizes that cannot run before any cell starts -----------------------


@pytest.mark.parametrize(
    ("family", "size", "message"),
    [
        ("deepsea-bsuite", "1000000", "--size: size=1000000 is too large: DeepSea holds N x N"),
        ("deepsea", "4097", "size must be <= 4096"),
    ],
)
def test_cli_refuses_deep_sea_sizes_up_front(
    family: str, size: str, message: str, tmp_path: Any, capsys: Any
) -> None:
    from delight_gym import cli

    with pytest.raises(SystemExit) as exc:
        cli.main(["run", family, "--size", size, "--seeds", "1", "--out", str(tmp_path)])
    assert exc.value.code == 2
    assert message in capsys.readouterr().err
    assert not any(tmp_path.iterdir())  # nothing ran


def test_bsuite_size_refuses_a_replay_that_would_not_fit(monkeypatch: Any) -> None:
    from delight_gym import _checks
    from delight_gym.experiments.families import BSUITE_REPLAY_SIZE, check_bsuite_size

    assert check_bsuite_size(50, "size") == 50
    # On a machine with 1 GiB, N = 120 needs 10 000 x 2 x 120**2 x 4 bytes = 1.07 GiB.
    monkeypatch.setattr(_checks, "memory_size", lambda device="cpu": 2**30)
    need = format_bytes(BSUITE_REPLAY_SIZE * 2 * 120**2 * 4)
    with pytest.raises(ValueError, match=rf"--size=120 \(the deep agents' replay .* {need}"):
        check_bsuite_size(120, "--size")
    assert check_bsuite_size(110, "--size") == 110


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_checks_of_gpu_tensors_run_on_the_gpu() -> None:
    post = _posterior(device="cuda")
    good: dict[str, Any] = {
        k: torch.as_tensor(np.asarray(v)).cuda()
        for k, v in _batch(np.random.default_rng(105)).items()
    }
    post.td_step(Transitions(**good))
    weights = [p.detach().clone() for p in post.network.parameters()]
    bad_obs = good["observations"].clone()
    bad_obs[2, 1] = float("nan")
    cases = [
        ({"observations": bad_obs}, r"observations must be finite.*entry \(2, 1\)"),
        ({"rewards": torch.tensor([0, 1, float("inf"), 0, 0.0]).cuda()}, "rewards must be finite"),
        ({"actions": torch.tensor([0, 1, 2, 0, 1]).cuda()}, r"actions must lie in \[0, 1\]"),
        ({"actions": torch.zeros(5).cuda()}, "actions must be integers"),
        ({"terminated": torch.tensor([0.3, 0, 1, 0, 0]).cuda()}, "terminated must be bools or 0/1"),
    ]
    for change, message in cases:
        with pytest.raises(ValueError, match=message):
            post.td_step(Transitions(**{**good, **change}))
    for before, after in zip(weights, post.network.parameters(), strict=True):
        assert torch.equal(before, after)


def _as_tensors(batch: dict[str, Any]) -> dict[str, Any]:
    """SB3-shaped tensors ((B, 1) columns), or the value as it is where torch has no dtype."""
    out: dict[str, Any] = {}
    for key, value in batch.items():
        arr = np.asarray(value)
        if arr.dtype.kind not in "biuf":
            out[key] = value
            continue
        t = torch.as_tensor(arr)
        out[key] = t[:, None] if key in ("actions", "rewards", "terminated") and t.ndim == 1 else t
    return out


@pytest.mark.parametrize(("label", "batch", "error", "name"), CASES, ids=[c[0] for c in CASES])
def test_one_sync_gpu_check_refuses_what_the_strict_checks_refuse(
    label: str, batch: dict[str, Any], error: type, name: str
) -> None:
    """The GPU path decides validity with one host sync (``valid_on_device``) and checks item
    by item only a batch that fails: it must refuse every batch the strict checks refuse, and
    give the strict checks' result for a good one. Tested here on CPU tensors."""
    net = _posterior().network

    def valid(given: dict[str, Any], masks: Any = None) -> bool:
        return net.inputs.valid_on_device(Transitions(**given, masks=masks), net.device)

    assert not valid(_as_tensors(batch))
    good = _as_tensors(_batch(np.random.default_rng(106)))
    assert valid(good)
    masks = torch.ones(N, 3)
    for bad_masks in (torch.full((N, 3), float("nan")), -masks, torch.ones(N, 2)):
        assert not valid(good, bad_masks)
    strict = net.check_transitions(Transitions(**good, masks=masks))
    fast = net.inputs.convert(Transitions(**good, masks=masks), net.device)
    for a, b in zip(strict, fast, strict=True):
        assert a is not None and b is not None
        assert a.dtype == b.dtype and torch.equal(a, b)


def test_values_beyond_float32_are_refused_before_anything_is_stored() -> None:
    """Rewards and masks are trained on as float32: a finite 1e308 would become inf there."""
    post = _posterior()
    b = _batch(np.random.default_rng(107))
    with pytest.raises(ValueError, match=r"rewards must be finite \(no NaN or inf\) in float32"):
        post.update(**_with(b, rewards=np.full(N, 1e308)))
    assert post.transitions == 0 and post.state_dict()["buffer"] == {}
    with pytest.raises(ValueError, match=r"masks must be finite .* in float32"):
        post.td_step(Transitions(**b, masks=np.full((N, 3), 1e308)))
    post.update(**_with(b, **{k: v[:0] for k, v in b.items()}))  # an empty batch: nothing
    assert post.transitions == 0


def test_wrapper_names_a_reward_that_is_not_a_number() -> None:
    from delight_gym import DelightExplorationWrapper

    de = DelightExplorationWrapper(
        lambda obs: np.tile([0.5, 0.5], (len(obs), 1)),
        observation_space=BOX,
        action_space=spaces.Discrete(2),
        posterior_kwargs={"num_heads": 2, "hidden_sizes": (8,)},
        seed=100,
    )
    with pytest.raises(TypeError, match="reward must be numbers"):
        de.observe(np.zeros(3), 1, "a", np.zeros(3), False, False)


def test_td_step_without_checks_takes_the_same_step_on_good_data() -> None:
    """The unchecked path of the SB3 algorithms (whose data was checked as the env handed it
    over) only skips the checks: the same loss and the same weights as ``td_step``."""
    steps = []
    for check in (True, False):
        post = _posterior()
        batch = _as_tensors(_batch(np.random.default_rng(108)))
        given = Transitions(**batch, masks=torch.ones(N, 3))
        if check:
            stats = post.td_step(given)
        else:
            encoded = post.network.inputs.convert(given, post.device)
            stats = ensemble_td_step(post.network, post.optimizer, encoded, post.gamma)
        steps.append((stats.loss, [p.detach().clone() for p in post.network.parameters()]))
    assert torch.equal(steps[0][0], steps[1][0])
    for a, b in zip(steps[0][1], steps[1][1], strict=True):
        assert torch.equal(a, b)
