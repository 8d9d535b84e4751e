"""A fresh probe set of bad input to the continuous-action API, in seven classes.

Every probe runs in a child process (forked from a server that has imported numpy, torch and
the package once) under a memory cap (``RLIMIT_AS``, 6 GiB) and a timeout (30 s by default), and is
classified:

* ``clear error``: a ValueError / TypeError / OSError whose message matches the probe's stated
  keyword (the argument or the cause);
* ``right answer``: no error, and the probe's stated check of the result holds;
* ``crash``: any other exception, an expected one whose message does not name the cause, or a
  child killed (memory, signal);
* ``silent``: no error, and the result is wrong (its check fails, or an error was expected);
* ``hang``: the child ran past the timeout.

The classes are those of the issue "Check once, where data enters": 1 sizes, 2 finite input
giving non-finite results, 3 accepted and wrong, 4 messages naming the cause, 5 Dict
observations, 6 tampered saves, 7 the older API. CLI probes run ``python -m delight_gym.cli`` in
a subprocess (exit status 2, one ``error:`` line naming the option, no traceback).

Usage::

    nice python benchmarks/probe_bad_input.py -j 2 [--only 3] [--probe NAME] [--timeout 30]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import multiprocessing as mp
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MEMORY_CAP = 6 * 2**30
OK = ("clear error", "right answer")
CLASSES = {
    "1": "sizes checked before allocating or looping",
    "2": "finite input, finite result",
    "3": "accepted and wrong",
    "4": "messages name the cause",
    "5": "Dict and other composite observations",
    "6": "tampered and truncated saves",
    "7": "the older API",
}
ERRORS = (ValueError, TypeError, OSError)


@dataclass(frozen=True)
class Probe:
    """One bad input. ``code`` runs after :data:`PRELUDE`; ``kw`` is the regex a clear error's
    message must match; ``check`` (an expression of the namespace, usually of ``out``) is the
    stated check of a right answer (``None``: an error was expected, no answer is right)."""

    cls: str
    name: str
    code: str
    kw: str | None = None
    check: str | None = None
    cli: tuple[str, ...] | None = None


PROBES: list[Probe] = []


def probe(cls: str, name: str, code: str = "", kw: str | None = None, check: str | None = None):
    PROBES.append(Probe(cls, name, textwrap.dedent(code).strip(), kw, check))


def cli(cls: str, name: str, argv: str, kw: str) -> None:
    PROBES.append(Probe(cls, name, argv, kw, None, tuple(argv.split())))


PRELUDE = r"""
import io, math, os, pickle, warnings, zipfile
import numpy as np
import torch
from gymnasium import spaces
from delight_gym import DelightExplorationWrapper, ContinuumBanditEnv, ContinuumBanditVectorEnv
from delight_gym.de.candidates import (
    CandidateDelight, CategoricalHost, GaussianProposalHost, HostSamples, PosteriorArgmax,
    TopK, UniformProposals, candidate_rule,
)
from delight_gym.de.hosts import CallableBoxHost, CallableHost, make_host
from delight_gym.de.options import DelightOptions
from delight_gym.de.rule import delight_rule, epsilon_schedule
from delight_gym.posteriors.q_ensemble import ContinuousQEnsemble, ContinuousTransitions
from delight_gym.posteriors.rff import RFFPosterior
from delight_gym.agents.continuum import ContinuumAgent, srinivas_beta, srinivas_beta_continuous
from delight_gym.envs.continuum import basin_volume

OBS, ACT = spaces.Box(-1.0, 1.0, (3,)), spaces.Box(-1.0, 1.0, (2,))
rng = np.random.default_rng(0)


def fin(*xs):
    out = True
    for x in xs:
        if isinstance(x, torch.Tensor):
            x = x.detach().double().cpu().numpy()
        out = out and bool(np.isfinite(np.asarray(x, dtype=np.float64)).all())
    return out


def tanh_host(obs):
    return np.tanh(np.asarray(obs, dtype=np.float64)[..., :2])


def engine(host=tanh_host, obs_space=OBS, act_space=ACT, **kw):
    return DelightExplorationWrapper(
        host, observation_space=obs_space, action_space=act_space, seed=0,
        **({"posterior_kwargs": {"num_heads": 2, "hidden_sizes": (8,)}} | kw),
    )


def ens(obs=OBS, act=ACT, **kw):
    return ContinuousQEnsemble(obs, act, **({"num_heads": 2, "hidden_sizes": (8,), "seed": 0} | kw))


def batch(n=4, reward=0.0, **over):
    r = np.random.default_rng(1)
    fields = dict(
        observations=r.uniform(-1, 1, (n, 3)), actions=r.uniform(-1, 1, (n, 2)),
        rewards=np.full(n, reward), next_observations=r.uniform(-1, 1, (n, 3)),
        dones=np.zeros(n), next_actions=r.uniform(-1, 1, (n, 2)),
    )
    fields.update(over)
    return ContinuousTransitions(**fields)


def zero_ei(s, c):
    return np.zeros(np.asarray(c).shape[:2])


def box_de(host=None, ei=zero_ei, proposals=None, space=ACT, **kw):
    host = host or GaussianProposalHost(space)
    proposals = proposals or [(HostSamples(host), 3)]
    return CandidateDelight(space, host, ei, proposals, **kw)


def rewrite_zip(src, dst, drop=(), replace=None):
    replace = replace or {}
    with zipfile.ZipFile(src) as a, zipfile.ZipFile(dst, "w") as b:
        for item in a.namelist():
            if item in drop:
                continue
            b.writestr(item, replace.get(item, a.read(item)))


def cut(src, dst, share=0.5):
    data = open(src, "rb").read()
    open(dst, "wb").write(data[: int(len(data) * share)])


def small_sac(cls_name="DelightSAC", env="Pendulum-v1"):
    from delight_gym import sb3
    model = getattr(sb3, cls_name)(
        "MlpPolicy", env, seed=0, learning_starts=5, batch_size=8,
        posterior_kwargs={"num_heads": 2, "hidden_sizes": (8,)},
        policy_kwargs={"net_arch": [8]},
    )
    model.learn(8)
    return model


def small_boot():
    from delight_gym.sb3 import BootstrappedDQN
    model = BootstrappedDQN("MlpPolicy", "CartPole-v1", seed=0, learning_starts=5, batch_size=8,
                            num_heads=2, policy_kwargs={"net_arch": [8]})
    model.learn(10)
    return model
"""


# ---------------------------------------------------------------------------------------------
# 1. Sizes: refused before anything is allocated or looped over.
# ---------------------------------------------------------------------------------------------
probe(
    "1",
    "rff-sample_weights-1e9",
    "RFFPosterior(1, 1, num_features=8, seed=0).sample_weights(10**9)",
    kw="num_samples",
)
probe(
    "1",
    "rff-sample_function-1e10",
    "RFFPosterior(1, 1, num_features=8, seed=0).sample_function(10**10)",
    kw="num_samples",
)
probe(
    "1",
    "rff-predictive-2e7-points",
    "RFFPosterior(1, 1, seed=0).predictive(torch.rand(1, 2 * 10**7, 1, dtype=torch.float64))",
    kw=r"would need|\bx\b",
)
probe(
    "1",
    "rff-covariance-1e5-points",
    "RFFPosterior(2, 2, num_features=16, seed=0).covariance(torch.rand(2, 10**5, 2))",
    kw=r"would need|\bx\b",
)
probe(
    "1",
    "rff-update-1e6-rewards-M4096",
    """
      post = RFFPosterior(1, 1, num_features=4096, seed=0)
      post.update(torch.rand(1, 10**6, 1, dtype=torch.float64), torch.zeros(1, 10**6))
      """,
    kw=r"would need|actions",
)
probe(
    "1",
    "rff-21GB-precision-under-a-6GiB-cap",
    "RFFPosterior(10**4, 1, num_features=512, seed=0)",
    kw="would need",
)
probe(
    "1",
    "q-ensemble-values-1e7-candidates",
    """
      q = ContinuousQEnsemble(OBS, ACT, seed=0)  # 10 heads of (64, 64)
      q.values(np.zeros((1, 3)), np.zeros((1, 10**7, 2), dtype=np.float32))
      """,
    kw=r"would need|candidates|actions",
)
probe(
    "1",
    "q-ensemble-num_heads-1e5-wide",
    "ContinuousQEnsemble(OBS, ACT, num_heads=10**5, hidden_sizes=(256, 256))",
    kw=r"num_heads=100000.*would need",
)
probe(
    "1",
    "gaussian-host-sample-n-1e10",
    "GaussianProposalHost(ACT).sample(None, np.zeros((1, 2)), 10**10, rng)",
    kw=r"\bn\b",
)
probe(
    "1",
    "uniform-propose-n-1e10",
    "UniformProposals(ACT).propose(None, np.zeros((1, 2)), 10**10, rng)",
    kw=r"\bn\b",
)
probe(
    "1",
    "posterior-argmax-n_random-1e10",
    """
      pa = PosteriorArgmax(ACT, lambda s, a, r: np.zeros(a.shape[:2]), n_random=10**10)
      pa.propose(None, np.zeros((1, 2)), 1, rng)
      """,
    kw="n_random",
)
probe(
    "1",
    "categorical-host-sample-n-1e10",
    """
      host = CategoricalHost(lambda s: np.full((1, 3), 1 / 3))
      host.sample(np.zeros((1, 1)), np.zeros(1, dtype=np.int64), 10**10, rng)
      """,
    kw=r"\bn\b",
)
probe(
    "1",
    "candidate-delight-1e7-posterior-proposals-loop",
    """
      pa = PosteriorArgmax(ACT, lambda s, a, r: np.zeros(a.shape[:2]), n_random=1)
      de = box_de(proposals=[(pa, 10**7)])
      de.decide(np.zeros((1, 3)), np.zeros((1, 2)), 0, rng)
      """,
    kw=r"proposals\[0\]|work|n=10000000",
)
probe(
    "1",
    "wrapper-n_posterior-1e7-loop",
    "engine(n_posterior=10**7).predict(np.zeros(3))",
    kw="n_posterior",
)
probe(
    "1",
    "vector-env-placement-20000x1000-bumps",
    "ContinuumBanditVectorEnv(20000, num_bumps=1000, dim=2).reset(seed=0)",
    kw=r"MAX_PLACEMENT_WORK|num_envs",
)
probe(
    "1",
    "continuum-agent-pool-1e6-candidates",
    """
      agent = ContinuumAgent("greedy", 200, 1, seed=0, num_candidates=10**6, num_local=0,
                             num_posterior=0)
      agent.act()
      """,
    kw=r"num_candidates|would need",
)
probe(
    "1",
    "continuum-agent-num_posterior-1e7",
    """
      agent = ContinuumAgent("thompson", 1, 1, seed=0, num_candidates=10**7 + 1, num_local=0,
                             num_posterior=10**7)
      agent.act()
      """,
    kw=r"num_posterior|would need",
)
probe(
    "1",
    "continuum-env-mean_reward-1e4-bumps",
    """
      env = ContinuumBanditEnv(dim=2, num_bumps=3000, noise=0.0); env.reset(seed=0)
      env.mean_reward(np.zeros((10**5, 2)))
      """,
    kw=r"would need|x of shape",
)
cli("1", "cli-neural-width-arms-1e9", "run neural-width --arms 1000000000", "--arms")
cli("1", "cli-neural-width-dim-1e9", "run neural-width --dim 1000000000", "--dim")
cli(
    "1",
    "cli-neural-width-context-dim-1e9",
    "run neural-width --context-dim 1000000000",
    "--context-dim",
)
cli("1", "cli-neural-width-horizon-1e12", "run neural-width --horizon 1000000000000", "--horizon")
cli(
    "1",
    "cli-continuum-batch-1e9",
    "run continuum --dim 1 --seeds 1000000000 --batch-size 1000000000",
    "--seeds|--batch-size",
)

# ---------------------------------------------------------------------------------------------
# 2. Finite input, finite (and right) result.
# ---------------------------------------------------------------------------------------------
probe(
    "2",
    "epsilon-schedule-t-and-M-1e308",
    "out = epsilon_schedule(1e308, 1e308)",
    kw="t|half_life",
    check="abs(out - 0.5) < 1e-12",
)
probe("2", "srinivas-beta-t-1e160", "out = srinivas_beta(1e160, 1)", kw=r"\bt\b", check="fin(out)")
probe(
    "2",
    "srinivas-beta-delta-1e-320",
    "out = srinivas_beta(1, 1, delta=1e-320)",
    kw="delta",
    check="fin(out)",
)
probe(
    "2",
    "srinivas-beta-continuous-a-1e308",
    "out = srinivas_beta_continuous(1, 1, a=1e308, delta=1e-300)",
    kw=r"\ba\b|delta",
    check="fin(out)",
)
probe(
    "2",
    "srinivas-beta-continuous-dim-1e300-t",
    "out = srinivas_beta_continuous(1e300, 3)",
    kw=r"\bt\b",
    check="fin(out)",
)
probe(
    "2",
    "basin-volume-width-1e300",
    "out = basin_volume(1e300, 10, 0.5)",
    kw="width|dim",
    check="fin(out)",
)
probe(
    "2",
    "ucb-agent-delta-1e-320",
    """
      agent = ContinuumAgent("ucb", 1, 1, seed=0, ucb_delta=1e-320)
      out = srinivas_beta(1, agent.num_candidates, agent.ucb_delta)
      """,
    kw="ucb_delta|delta",
    check="fin(out)",
)
probe(
    "2",
    "rff-float32-ucb-beta-1e80",
    """
      post = RFFPosterior(1, 1, num_features=16, seed=0, dtype=torch.float32)
      out = post.ucb(torch.rand(1, 4, 1), 1e80)
      """,
    kw="beta",
    check="fin(out)",
)
probe(
    "2",
    "rff-float32-log-ei-baseline-max",
    """
      post = RFFPosterior(1, 1, num_features=16, seed=0, dtype=torch.float32)
      x = torch.rand(1, 4, 1)
      out = [post.log_expected_improvement(x, torch.tensor([b])) for b in (3e38, -3e38)]
      """,
    kw="baseline",
    check="fin(*out)",
)
probe(
    "2",
    "rff-float64-log-ei-baseline-1.7e308",
    """
      post = RFFPosterior(1, 1, num_features=16, seed=0)
      out = post.log_expected_improvement(torch.rand(1, 4, 1), torch.tensor([1.7e308]))
      """,
    kw="baseline",
    check="fin(out)",
)
probe(
    "2",
    "rff-float32-smallest-lengthscale-largest-x",
    """
      post = RFFPosterior(1, 1, num_features=16, seed=0, dtype=torch.float32,
                          lengthscale=2.4e-10)
      x = torch.full((1, 3, 1), 4e9, dtype=torch.float64)
      post.update(x, torch.ones(1, 3))
      out = post.predictive(x)
      """,
    kw="lengthscale|x",
    check="fin(*out)",
)
probe(
    "2",
    "gaussian-host-box-1e308-log-weight",
    """
      box = spaces.Box(-1e308, 1e308, (2,), dtype=np.float64)
      out = GaussianProposalHost(box).log_weight(None, np.zeros((1, 2)), np.zeros((1, 3, 2)))
      """,
    kw="bounds|range|space",
    check="fin(out)",
)
probe(
    "2",
    "gaussian-host-box-1e308-sample",
    """
      box = spaces.Box(-1e308, 1e308, (2,), dtype=np.float64)
      out = GaussianProposalHost(box).sample(None, np.zeros((1, 2)), 5, rng)
      """,
    kw="bounds|range|space",
    check="fin(out)",
)
probe(
    "2",
    "q-ensemble-float32-box-3e38-actions-matter",
    """
      box = spaces.Box(-3e38, 3e38, (2,), dtype=np.float32)
      q = ens(act=box)
      acts = np.array([[[-1e38, -1e38], [1e38, 1e38]]], dtype=np.float32)
      out = q.values(np.zeros((1, 3)), acts)
      """,
    kw="bounds|action_space",
    check="fin(out) and bool((out[:, 0, 0] != out[:, 0, 1]).any())",
)
probe(
    "2",
    "q-ensemble-float64-box-1e300-in-float32",
    """
      box = spaces.Box(-1e300, 1e300, (2,), dtype=np.float64)
      out = ens(act=box).values(np.zeros((1, 3)), np.zeros((1, 2, 2)))
      """,
    kw="bounds|action_space|float32",
    check="fin(out)",
)
probe(
    "2",
    "q-ensemble-observation-3e38",
    "out = ens().values(np.full((1, 3), 3e38), np.zeros((1, 2, 2)))",
    kw="observations",
    check="fin(out)",
)
probe(
    "2",
    "q-ensemble-float64-observation-1e300",
    "out = ens(dtype=torch.float64).values(np.full((1, 3), 1e300), np.zeros((1, 2, 2)))",
    kw="observations",
    check="fin(out)",
)
probe(
    "2",
    "q-ensemble-update-observations-1e30",
    """
      q = ens()
      b = batch()
      q.update(b._replace(observations=np.full((4, 3), 1e30)))
      out = q.values(np.zeros((1, 3)), np.zeros((1, 2, 2)))
      """,
    kw="observations",
    check="fin(out)",
)
probe(
    "2",
    "q-ensemble-lr-1-reward-4e9-20-steps",
    """
      q = ens(learning_rate=1.0)
      for _ in range(20):
          q.update(batch(reward=4e9))
      out = q.expected_improvement(np.zeros((1, 3)), np.zeros((1, 2, 2)))
      """,
    kw="learning_rate|rewards",
    check="fin(out)",
)
probe(
    "2",
    "delight-rule-float16",
    """
      host = torch.tensor([[0.999, 0.0005, 0.0005]], dtype=torch.float16)
      d = delight_rule(host, torch.full((1, 3), 6e4, dtype=torch.float16), 0.5)
      out = (d.probs, d.override, d.delight)
      """,
    kw="float16|dtype",
    check="fin(*out) and abs(float(out[0].sum()) - 1) < 1e-2",
)
probe(
    "2",
    "continuum-env-height-1e308-noise-1e150",
    """
      env = ContinuumBanditEnv(centers=[[0.5], [0.2]], heights=[1.7e308, 1.0], noise=1e150)
      env.reset(seed=0)
      _, r, _, _, info = env.step(np.array([0.9], dtype=np.float32))
      out = [r, info["expected_reward"], info["regret"]]
      """,
    kw="heights",
    check="fin(out)",
)
probe(
    "2",
    "continuum-vector-env-widest-noisiest",
    """
      env = ContinuumBanditVectorEnv(3, bump_width=1e150, needle_width=1e150, noise=1e150)
      env.reset(seed=0)
      _, r, _, _, info = env.step(np.full((3, 2), 0.5, dtype=np.float32))
      out = [r, info["regret"]]
      """,
    kw="width|noise",
    check="fin(*out)",
)
probe(
    "2",
    "wrapper-value_scale-tiny-ei-large",
    """
      class Post:
          def expected_improvement(self, s, c):
              return np.full(np.asarray(c).shape[:2], 1e300)
          def sample_values(self, s, a, r):
              return np.zeros(np.asarray(a).shape[:2])
      e = engine(posterior=Post(), posterior_kwargs=None, delight={"value_scale": 2.3e-308})
      a = e.predict(np.zeros(3))[0]
      out = (a, e.last_info["delight"])
      """,
    kw="value_scale",
    check="fin(out[0]) and fin(out[1])",
)
cli("2", "cli-continuum-needle-1e-200", "run continuum --needle-width 1e-200", "--needle-width")
cli("2", "cli-continuum-needle-1e200", "run continuum --needle-width 1e200", "--needle-width")
cli("2", "cli-neural-width-noise-1e200", "run neural-width --noise 1e200", "--noise")
cli(
    "2",
    "cli-continuum-half-life-1e-320",
    "run continuum --half-life 1e-320 --dim 1 --horizon 2 --seeds 1 --agents delight",
    "--half-life",
)

# ---------------------------------------------------------------------------------------------
# 3. Accepted and wrong: refused, not used.
# ---------------------------------------------------------------------------------------------
probe(
    "3",
    "agent-update-actions-outside-unit-box",
    """
      agent = ContinuumAgent("greedy", 2, 1, seed=0)
      agent.update(np.full((2, 1), 7.0), np.zeros(2))
      """,
    kw="actions",
)
probe(
    "3",
    "agent-update-nan-reward",
    """
      agent = ContinuumAgent("greedy", 2, 1, seed=0)
      agent.update(np.full((2, 1), 0.5), np.array([np.nan, 0.0]))
      """,
    kw="rewards",
)
probe(
    "3",
    "gaussian-host-log-weight-host-action-outside",
    """
      out = GaussianProposalHost(ACT, 0.01).log_weight(
          None, np.full((1, 2), 5.0), np.zeros((1, 3, 2)))
      """,
    kw="host_actions",
    check="fin(out)",
)
probe(
    "3",
    "categorical-host-nan-table",
    """
      cat = CategoricalHost(lambda s: np.array([[np.nan, 0.5, 0.5]]))
      de = CandidateDelight(spaces.Discrete(3), cat, zero_ei, [(TopK(cat), 2)])
      de.decide(np.zeros((1, 3)), np.array([0]), 0, rng)
      """,
    kw=r"probs\(states\)|finite|NaN",
)
probe(
    "3",
    "categorical-top-actions-k-negative",
    """
      cat = CategoricalHost(lambda s: np.array([[0.5, 0.3, 0.2]]))
      out = cat.top_actions(np.zeros((1, 1)), -1)
      """,
    kw=r"\bk\b",
    check="out.shape == (1, 0)",
)
probe(
    "3",
    "q-ensemble-hidden-sizes-string",
    "ContinuousQEnsemble(OBS, ACT, hidden_sizes='64')",
    kw="hidden_sizes",
)
probe(
    "3",
    "q-ensemble-hidden-sizes-float",
    "ContinuousQEnsemble(OBS, ACT, hidden_sizes=(64.7,))",
    kw="hidden_sizes",
)
probe("3", "q-ensemble-dtype-int64", "ContinuousQEnsemble(OBS, ACT, dtype=torch.int64)", kw="dtype")
probe("3", "q-ensemble-dones-2", "ens().update(batch(dones=np.array([2.0, 0, 0, 0])))", kw="dones")
probe("3", "q-ensemble-masks-1d", "ens().update(batch(masks=np.ones(4)))", kw="masks")
probe(
    "3",
    "q-ensemble-next-actions-callable-wrong-shape",
    "ens().update(batch(next_actions=lambda nxt: torch.zeros(len(nxt), 1)))",
    kw="next_actions",
)
probe(
    "3",
    "q-ensemble-ei-nan-baseline",
    "ens().expected_improvement(np.zeros((1, 3)), np.zeros((1, 2, 2)), baseline=[np.nan])",
    kw="baseline",
)
probe(
    "3",
    "q-ensemble-actions-outside-bounds",
    "ens().values(np.zeros((1, 3)), np.full((1, 2, 2), 1.5))",
    kw="actions",
)
probe(
    "3",
    "candidate-decide-t-negative",
    "box_de().decide(np.zeros((1, 3)), np.zeros((1, 2)), -50, rng)",
    kw=r"\bt\b",
)
probe(
    "3",
    "candidate-decide-t-nan",
    "box_de().decide(np.zeros((1, 3)), np.zeros((1, 2)), float('nan'), rng)",
    kw=r"\bt\b",
)
probe(
    "3",
    "candidate-decide-host-action-outside",
    "box_de().decide(np.zeros((1, 3)), np.full((1, 2), 3.0), 0, rng)",
    kw="host_actions",
)
probe("3", "candidate-space-2d-box", "box_de(space=spaces.Box(-1.0, 1.0, (2, 2)))", kw="1-D|shape")
probe(
    "3",
    "candidate-space-degenerate-box",
    "box_de(space=spaces.Box(np.array([-1.0, 0.0]), np.array([1.0, 0.0])))",
    kw="high > low|bounds|degenerate",
)
probe(
    "3",
    "wrapper-action-space-2d-box",
    "engine(act_space=spaces.Box(-1.0, 1.0, (2, 1)))",
    kw="1-D|shape",
)
probe("3", "wrapper-start-step-negative", "engine(start_step=-10)", kw="start_step")
probe(
    "3",
    "wrapper-posterior-and-posterior-kwargs",
    """
      class Post:
          def expected_improvement(self, s, c): return zero_ei(s, c)
          def sample_values(self, s, a, r): return np.zeros(np.asarray(a).shape[:2])
      engine(posterior=Post(), posterior_kwargs={"num_heads": 3})
      """,
    kw="posterior_kwargs",
)
probe("3", "options-durations-float", "DelightOptions(durations=(1, 2.5))", kw="durations")
probe("3", "options-durations-bool", "DelightOptions(durations=(1, True))", kw="durations")
probe(
    "3", "options-gate-price-nan", "DelightOptions(gate_price=np.float64('nan'))", kw="gate_price"
)
probe(
    "3",
    "make-host-host-std-zero",
    "make_host(tanh_host, observation_space=OBS, action_space=ACT, host_std=0.0)",
    kw="host_std",
)
probe(
    "3",
    "rff-update-complex-rewards",
    """
      post = RFFPosterior(1, 1, num_features=8, seed=0)
      post.update(np.full((1, 1, 1), 0.5), np.array([[1 + 2j]]))
      """,
    kw="rewards",
)
probe(
    "3",
    "rff-float32-baseline-1e39",
    """
      post = RFFPosterior(1, 1, num_features=8, seed=0, dtype=torch.float32)
      post.expected_improvement(torch.rand(1, 2, 1), torch.tensor([1e39], dtype=torch.float64))
      """,
    kw="baseline",
)
probe(
    "3",
    "vector-env-resample-int-mask",
    """
      env = ContinuumBanditVectorEnv(2); env.reset(seed=0)
      env.reset(options={"resample": np.array([2, 0])})
      """,
    kw="resample",
)
probe(
    "3",
    "wrapper-observe-action-outside",
    """
      e = engine()
      e.observe(np.zeros(3), np.full(2, 4.0), 0.0, np.zeros(3), False, False)
      """,
    kw="action",
)
probe(
    "3",
    "wrapper-observe-nan-next-obs",
    """
      e = engine()
      e.observe(np.zeros(3), np.zeros(2), 0.0, np.full(3, np.nan), False, False)
      """,
    kw="next_obs|next_observations|observation",
)
probe(
    "3",
    "callable-box-host-log-density-plus-inf",
    """
      h = CallableBoxHost(tanh_host, ACT, OBS,
                          log_density=lambda s, c: np.full(np.asarray(c).shape[:2], np.inf))
      de = box_de(host=h)
      de.decide(np.zeros((1, 3)), np.zeros((1, 2)), 0, rng)
      """,
    kw="host_log_density|log_weight",
)

# ---------------------------------------------------------------------------------------------
# 4. Messages name the cause.
# ---------------------------------------------------------------------------------------------
probe(
    "4",
    "agent-local-std-1e7",
    'ContinuumAgent("delight", 1, 1, seed=0, local_std=1e7)',
    kw="local_std",
)
probe(
    "4",
    "agent-local-std-1e-13",
    'ContinuumAgent("delight", 1, 1, seed=0, local_std=1e-13)',
    kw="local_std",
)
probe(
    "4",
    "gaussian-host-sample-n-negative",
    "GaussianProposalHost(ACT).sample(None, np.zeros((1, 2)), -1, rng)",
    kw=r"\bn\b",
)
probe(
    "4",
    "uniform-propose-n-float",
    "UniformProposals(ACT).propose(None, np.zeros((1, 2)), 2.5, rng)",
    kw=r"\bn\b",
)
probe(
    "4",
    "rff-predictive-2d-x",
    "RFFPosterior(1, 1, num_features=8, seed=0).predictive(np.zeros((1, 3)))",
    kw=r"x must have shape",
)
probe(
    "4",
    "rff-update-string-actions",
    "RFFPosterior(1, 1, num_features=8, seed=0).update([[['a']]], [[0.0]])",
    kw="actions",
)
probe(
    "4",
    "rff-sample-weights-float",
    "RFFPosterior(1, 1, num_features=8, seed=0).sample_weights(2.0)",
    kw="num_samples",
)
probe(
    "4",
    "q-ensemble-values-obs-wrong-width",
    "ens().values(np.zeros((2, 4)), np.zeros((2, 1, 2)))",
    kw="observations",
)
probe(
    "4",
    "q-ensemble-values-actions-wrong-width",
    "ens().values(np.zeros((2, 3)), np.zeros((2, 1, 5)))",
    kw="actions",
)
probe(
    "4",
    "q-ensemble-head-values-out-of-range",
    "ens().head_values(np.zeros((1, 3)), np.zeros((1, 1, 2)), 5)",
    kw="head",
)
probe(
    "4",
    "q-ensemble-sample-values-int-rng",
    "ens().sample_values(np.zeros((1, 3)), np.zeros((1, 1, 2)), 0)",
    kw="rng",
)
probe(
    "4",
    "q-ensemble-update-not-transitions",
    "ens().update((np.zeros((1, 3)),) * 6)",
    kw="ContinuousTransitions|batch",
)
probe("4", "wrapper-predict-wrong-width", "engine().predict(np.zeros((2, 5)))", kw="observation")
probe(
    "4", "wrapper-predict-strings", "engine().predict(np.array(['a', 'b', 'c']))", kw="observation"
)
probe(
    "4",
    "wrapper-predict-inf-observation",
    "engine().predict(np.array([np.inf, 0.0, 0.0]))",
    kw="observation.*finite|finite.*observ",
)
probe(
    "4",
    "wrapper-observe-wrong-obs-shape",
    "engine().observe(np.zeros(5), np.zeros(2), 0.0, np.zeros(3), False, False)",
    kw=r"\bobs\b|observation",
)
probe("4", "wrapper-n-host-zero", "engine(n_host=0)", kw="n_host")
probe(
    "4",
    "wrapper-host-returns-strings",
    "engine(host=lambda o: np.array([['a', 'b']])).predict(np.zeros(3))",
    kw="host",
)
probe(
    "4",
    "candidate-proposer-n-zero",
    "h = GaussianProposalHost(ACT); box_de(host=h, proposals=[(HostSamples(h), 0)])",
    kw=r"proposals\[0\] n",
)
probe(
    "4",
    "candidate-proposer-without-propose",
    "box_de(proposals=[(object(), 2)])",
    kw=r"proposals\[0\]",
)
probe("4", "candidate-half-life-zero", "box_de(half_life=0)", kw="half_life")
probe(
    "4",
    "candidate-ei-returns-strings",
    """
      de = box_de(ei=lambda s, c: np.full(np.asarray(c).shape[:2], 'x'))
      de.decide(np.zeros((1, 3)), np.zeros((1, 2)), 0, rng)
      """,
    kw="expected_improvement",
)
probe(
    "4",
    "candidate-host-log-weight-wrong-shape",
    """
      class H:
          def log_weight(self, s, a, c): return np.zeros((1, 1))
          def sample(self, s, a, n, r): return np.zeros((len(a), n, 2))
      de = box_de(host=H(), proposals=[(HostSamples(H()), 2)])
      de.decide(np.zeros((1, 3)), np.zeros((1, 2)), 0, rng)
      """,
    kw="log_weight|host",
)
probe("4", "options-durations-repeated", "DelightOptions(durations=(1, 1))", kw="durations")
probe("4", "options-clock-hour", "DelightOptions(clock='hour')", kw="clock")
probe("4", "env-render-mode-human", "ContinuumBanditEnv(render_mode='human')", kw="render_mode")
probe(
    "4",
    "env-mean-reward-wrong-width",
    "env = ContinuumBanditEnv(dim=2); env.reset(seed=0); env.mean_reward(np.zeros(3))",
    kw=r"x must have shape",
)
probe(
    "4",
    "env-step-action-3-coordinates",
    "env = ContinuumBanditEnv(dim=2); env.reset(seed=0); env.step(np.zeros(3))",
    kw="action",
)
probe("4", "srinivas-beta-t-zero", "srinivas_beta(0, 5)", kw=r"\bt\b")
probe(
    "4",
    "delight-td3-n-host-zero",
    """
      from delight_gym.sb3 import DelightTD3
      DelightTD3("MlpPolicy", "Pendulum-v1", n_host=0)
      """,
    kw="n_host",
)
probe(
    "4",
    "delight-sac-posterior-kwargs-bad",
    """
      from delight_gym.sb3 import DelightSAC
      DelightSAC("MlpPolicy", "Pendulum-v1", posterior_kwargs={"num_heads": -1})
      """,
    kw="num_heads",
)
cli("4", "cli-continuum-gate-price-nan", "run continuum --gate-price nan", "--gate-price")
cli("4", "cli-continuum-half-life-0", "run continuum --half-life 0", "--half-life")
cli("4", "cli-continuum-surprisal-cap-neg", "run continuum --surprisal-cap -1", "--surprisal-cap")
cli("4", "cli-continuum-agents-unknown", "run continuum --agents delight,foo", "--agents")
cli(
    "4",
    "cli-continuum-dim-empty-item",
    "run continuum --dim 1,,2 --horizon 2 --seeds 1 --agents greedy",
    "--dim",
)
cli("4", "cli-continuum-dim-float", "run continuum --dim 2.5", "--dim")
cli("4", "cli-continuum-batch-size-0", "run continuum --batch-size 0", "--batch-size")
cli("4", "cli-continuum-jobs-0", "run continuum --jobs 0", "--jobs")
cli("4", "cli-continuum-needle-negative", "run continuum --needle-width -0.1", "--needle-width")
cli(
    "4",
    "cli-mcc-eval-every-negative",
    "run mountain-car-continuous --eval-every -5",
    "--eval-every",
)
cli("4", "cli-mcc-agents-unknown", "run mountain-car-continuous --agents sac_foo", "--agents")
cli("4", "cli-mcc-steps-float", "run mountain-car-continuous --steps 1e3", "--steps")
cli("4", "cli-neural-width-reward-unknown", "run neural-width --reward foo", "--reward")
cli("4", "cli-neural-width-context-dim-neg", "run neural-width --context-dim -1", "--context-dim")
cli("4", "cli-neural-width-nl-settings", "run neural-width --nl-settings foo", "--nl-settings")
cli("4", "cli-neural-width-arms-0", "run neural-width --arms 0", "--arms")
cli("4", "cli-neural-width-noise-nan", "run neural-width --noise nan", "--noise")

# ---------------------------------------------------------------------------------------------
# 5. Dict and other composite observations.
# ---------------------------------------------------------------------------------------------
_DICT = "spaces.Dict({'a': OBS, 'b': spaces.Discrete(2)})"
probe(
    "5",
    "wrapper-box-tuple-obs",
    "engine(obs_space=spaces.Tuple((OBS, OBS)))",
    kw=r"Tuple.*(flatten|Flatten)",
)
probe(
    "5", "wrapper-box-multibinary-obs", "engine(obs_space=spaces.MultiBinary(3))", kw="MultiBinary"
)
probe(
    "5",
    "wrapper-box-multidiscrete-obs",
    "engine(obs_space=spaces.MultiDiscrete([2, 3]))",
    kw="MultiDiscrete",
)
probe("5", "wrapper-box-sequence-obs", "engine(obs_space=spaces.Sequence(OBS))", kw="Sequence")
probe(
    "5",
    "wrapper-box-nested-dict-obs",
    "engine(obs_space=spaces.Dict({'x': spaces.Dict({'y': OBS})}))",
    kw="Dict",
)
probe(
    "5",
    "wrapper-box-dict-obs-custom-posterior",
    f"""
      class Post:
          def expected_improvement(self, s, c): return zero_ei(s, c)
          def sample_values(self, s, a, r): return np.zeros(np.asarray(a).shape[:2])
      engine(obs_space={_DICT}, posterior=Post(), posterior_kwargs=None)
      """,
    kw="Dict",
)
probe(
    "5",
    "wrapper-discrete-actions-dict-obs",
    f"""
      DelightExplorationWrapper(lambda o: np.full((len(o), 3), 1 / 3),
                                observation_space={_DICT}, action_space=spaces.Discrete(3))
      """,
    kw="Dict",
)
probe(
    "5",
    "wrapper-box-discrete-obs",
    """
      e = engine(obs_space=spaces.Discrete(5), host=lambda o: np.zeros((len(np.atleast_1d(o)), 2)))
      out = e.predict(np.array([3]))[0]
      """,
    kw="observation_space",
    check="fin(out) and out.shape == (1, 2)",
)
probe(
    "5",
    "wrapper-box-predict-dict-observation",
    "engine().predict({'a': np.zeros(3)})",
    kw="observation|dict|Dict",
)
probe(
    "5",
    "q-ensemble-multibinary-obs",
    "ContinuousQEnsemble(spaces.MultiBinary(3), ACT)",
    kw="observation_space",
)
probe(
    "5",
    "q-ensemble-dict-actions",
    "ContinuousQEnsemble(OBS, spaces.Dict({'a': ACT}))",
    kw="action_space",
)
probe(
    "5",
    "q-ensemble-values-dict-observations",
    "ens().values({'a': np.zeros((1, 3))}, np.zeros((1, 1, 2)))",
    kw="observations",
)
probe(
    "5",
    "q-ensemble-update-dict-observations",
    "ens().update(batch(observations={'a': np.zeros((4, 3))}))",
    kw="observations",
)
probe(
    "5",
    "candidate-delight-dict-states",
    """
      de = box_de()
      out = de.decide({'a': np.zeros((2, 3))}, np.zeros((2, 2)), 0, rng).actions
      """,
    kw="states",
    check="fin(out) and out.shape == (2, 2)",
)
probe(
    "5",
    "delight-td3-mlp-policy-dict-env",
    """
      import gymnasium as gym
      from gymnasium.wrappers import TransformObservation
      from delight_gym.sb3 import DelightTD3
      env = gym.make('Pendulum-v1')
      env = TransformObservation(env, lambda o: {'x': o}, spaces.Dict({'x': env.observation_space}))
      DelightTD3('MlpPolicy', env)
      """,
    kw="(?i)dict",
)
probe(
    "5",
    "delight-sac-tuple-env",
    """
      import gymnasium as gym
      from gymnasium.wrappers import TransformObservation
      from delight_gym.sb3 import DelightSAC
      env = gym.make('Pendulum-v1')
      space = spaces.Tuple((env.observation_space,))
      env = TransformObservation(env, lambda o: (o,), space)
      DelightSAC('MlpPolicy', env)
      """,
    kw="Tuple",
)
probe(
    "5",
    "make-host-box-callable-dict-obs-then-wrapper",
    f"""
      h = make_host(tanh_host, observation_space={_DICT}, action_space=ACT)
      DelightExplorationWrapper(h, seed=0)
      """,
    kw="Dict",
)

# ---------------------------------------------------------------------------------------------
# 6. Tampered and truncated saves.
# ---------------------------------------------------------------------------------------------
probe(
    "6",
    "sac-load-empty-file",
    """
      from delight_gym.sb3 import DelightSAC
      p = os.path.join(tmp, 'empty.zip'); open(p, 'wb').close()
      DelightSAC.load(p)
      """,
    kw="empty.zip",
)
probe(
    "6",
    "sac-load-text-file",
    """
      from delight_gym.sb3 import DelightSAC
      p = os.path.join(tmp, 'text.zip'); open(p, 'w').write('hello')
      DelightSAC.load(p)
      """,
    kw="text.zip",
)
probe(
    "6",
    "sac-load-data-invalid-json",
    """
      m = small_sac(); m.save(os.path.join(tmp, 'w.zip'))
      rewrite_zip(os.path.join(tmp, 'w.zip'), os.path.join(tmp, 'json.zip'), replace={'data': b'{'})
      type(m).load(os.path.join(tmp, 'json.zip'))
      """,
    kw="json.zip",
)
probe(
    "6",
    "sac-load-no-policy",
    """
      m = small_sac(); m.save(os.path.join(tmp, 'w.zip'))
      rewrite_zip(os.path.join(tmp, 'w.zip'), os.path.join(tmp, 'nopol.zip'), drop=('policy.pth',))
      type(m).load(os.path.join(tmp, 'nopol.zip'))
      """,
    kw="nopol.zip",
)
probe(
    "6",
    "sac-load-policy-truncated",
    """
      m = small_sac(); m.save(os.path.join(tmp, 'w.zip'))
      with zipfile.ZipFile(os.path.join(tmp, 'w.zip')) as z: pol = z.read('policy.pth')
      rewrite_zip(os.path.join(tmp, 'w.zip'), os.path.join(tmp, 'cutpol.zip'),
                  replace={'policy.pth': pol[: len(pol) // 2]})
      type(m).load(os.path.join(tmp, 'cutpol.zip'))
      """,
    kw="cutpol.zip",
)
probe(
    "6",
    "sac-load-no-pytorch-variables",
    """
      m = small_sac(); m.save(os.path.join(tmp, 'w.zip'))
      rewrite_zip(os.path.join(tmp, 'w.zip'), os.path.join(tmp, 'novar.zip'),
                  drop=('pytorch_variables.pth',))
      type(m).load(os.path.join(tmp, 'novar.zip'))
      """,
    kw="novar.zip",
)
probe(
    "6",
    "td3-load-a-sac-save",
    """
      from delight_gym.sb3 import DelightTD3
      m = small_sac(); m.save(os.path.join(tmp, 'sac.zip'))
      DelightTD3.load(os.path.join(tmp, 'sac.zip'))
      """,
    kw=r"sac.zip.*(DelightSAC|DelightTD3)|DelightTD3.*sac.zip",
)
probe(
    "6",
    "sac-load-plain-sb3-sac",
    """
      from stable_baselines3 import SAC
      from delight_gym.sb3 import DelightSAC
      plain = SAC('MlpPolicy', 'Pendulum-v1', policy_kwargs={'net_arch': [8]})
      plain.save(os.path.join(tmp, 'plain.zip'))
      DelightSAC.load(os.path.join(tmp, 'plain.zip'))
      """,
    kw="plain.zip.*delight",
)
probe(
    "6",
    "sac-load-engine-of-other-action-space",
    """
      m = small_sac(); m.save(os.path.join(tmp, 'p.zip'))
      other = small_sac(env='MountainCarContinuous-v0')
      m2 = type(m).load(os.path.join(tmp, 'p.zip'))
      m2.delight = other.delight
      m2.save(os.path.join(tmp, 'mixed.zip'))
      type(m).load(os.path.join(tmp, 'mixed.zip'))
      """,
    kw=r"mixed.zip.*(space|delight)",
)
probe(
    "6",
    "engine-load-truncated",
    """
      e = engine(host=np.tanh, obs_space=ACT); e.save(os.path.join(tmp, 'e.zip'))
      cut(os.path.join(tmp, 'e.zip'), os.path.join(tmp, 'ecut.zip'), 0.6)
      DelightExplorationWrapper.load(os.path.join(tmp, 'ecut.zip'))
      """,
    kw="ecut.zip",
)
probe(
    "6",
    "engine-load-pickle-of-dict",
    """
      e = engine(host=np.tanh, obs_space=ACT); e.save(os.path.join(tmp, 'e.zip'))
      with zipfile.ZipFile(os.path.join(tmp, 'e.zip')) as z: names = z.namelist()
      rewrite_zip(os.path.join(tmp, 'e.zip'), os.path.join(tmp, 'edict.zip'),
                  replace={names[0]: pickle.dumps({'t': 3})})
      DelightExplorationWrapper.load(os.path.join(tmp, 'edict.zip'))
      """,
    kw="edict.zip",
)
probe(
    "6",
    "engine-load-garbage-pickle",
    """
      e = engine(host=np.tanh, obs_space=ACT); e.save(os.path.join(tmp, 'e.zip'))
      with zipfile.ZipFile(os.path.join(tmp, 'e.zip')) as z: names = z.namelist()
      rewrite_zip(os.path.join(tmp, 'e.zip'), os.path.join(tmp, 'egarb.zip'),
                  replace={names[0]: b'\\x80\\x04\\x95garbage'})
      DelightExplorationWrapper.load(os.path.join(tmp, 'egarb.zip'))
      """,
    kw="egarb.zip",
)
probe(
    "6",
    "engine-load-missing-attribute",
    """
      e = engine(host=np.tanh, obs_space=ACT); del e.n_host; e.save(os.path.join(tmp, 'eattr.zip'))
      DelightExplorationWrapper.load(os.path.join(tmp, 'eattr.zip'))
      """,
    kw="eattr.zip",
)
probe(
    "6",
    "engine-load-pickle-of-missing-module",
    """
      e = engine(host=np.tanh, obs_space=ACT); e.save(os.path.join(tmp, 'e.zip'))
      with zipfile.ZipFile(os.path.join(tmp, 'e.zip')) as z: names = z.namelist()
      payload = b'\\x80\\x04\\x8c\\x0bno_such_mod\\x94\\x8c\\x01X\\x94\\x93\\x94.'
      rewrite_zip(os.path.join(tmp, 'e.zip'), os.path.join(tmp, 'emod.zip'),
                  replace={names[0]: payload})
      DelightExplorationWrapper.load(os.path.join(tmp, 'emod.zip'))
      """,
    kw="emod.zip",
)
probe(
    "6",
    "engine-load-rng-replaced",
    """
      e = engine(host=np.tanh, obs_space=ACT); e.rng = 7; e.save(os.path.join(tmp, 'erng.zip'))
      e2 = DelightExplorationWrapper.load(os.path.join(tmp, 'erng.zip'))
      out = e2.predict(np.zeros(2))
      """,
    kw=r"erng.zip|rng",
    check="False",
)
probe(
    "6",
    "engine-load-model-class-tampered",
    """
      from stable_baselines3 import TD3
      model = TD3('MlpPolicy', 'Pendulum-v1', policy_kwargs={'net_arch': [8]})
      kw = {'num_heads': 2, 'hidden_sizes': (8,)}
      e = DelightExplorationWrapper(model, seed=0, posterior_kwargs=kw)
      e.save(os.path.join(tmp, 'm.zip'))
      with zipfile.ZipFile(os.path.join(tmp, 'm.zip')) as z: names = z.namelist()
      cls_file = [n for n in names if 'class' in n][0]
      rewrite_zip(os.path.join(tmp, 'm.zip'), os.path.join(tmp, 'mcls.zip'),
                  replace={cls_file: b'no_such_module:X'})
      DelightExplorationWrapper.load(os.path.join(tmp, 'mcls.zip'))
      """,
    kw="mcls.zip",
)
probe(
    "6",
    "engine-load-model-bytes-truncated",
    """
      from stable_baselines3 import TD3
      model = TD3('MlpPolicy', 'Pendulum-v1', policy_kwargs={'net_arch': [8]})
      kw = {'num_heads': 2, 'hidden_sizes': (8,)}
      e = DelightExplorationWrapper(model, seed=0, posterior_kwargs=kw)
      e.save(os.path.join(tmp, 'm.zip'))
      with zipfile.ZipFile(os.path.join(tmp, 'm.zip')) as z:
          names = z.namelist()
          big = max(names, key=lambda n: len(z.read(n)) if n != names[0] else 0)
          data = z.read(big)
      rewrite_zip(os.path.join(tmp, 'm.zip'), os.path.join(tmp, 'mcut.zip'),
                  replace={big: data[: len(data) // 3]})
      DelightExplorationWrapper.load(os.path.join(tmp, 'mcut.zip'))
      """,
    kw="mcut.zip",
)
probe(
    "6",
    "engine-load-directory",
    "DelightExplorationWrapper.load(tmp)",
    kw=re.escape("tmp") + "|Is a directory|" + "probe",
)

# ---------------------------------------------------------------------------------------------
# 7. The older API: rows out of range, truncated files.
# ---------------------------------------------------------------------------------------------
_PRED = """
from delight_gym.posteriors.bandit_ensemble import EnsemblePredictive
from delight_gym.posteriors.linfull import StudentTPredictive
ep = EnsemblePredictive(torch.randn(5, 3, 4, generator=torch.Generator().manual_seed(0)))
def spread(rows):
    n = 3 if rows is None else len(rows)
    return torch.ones(n, 4), torch.full((n, 4), 3.0)
st = StudentTPredictive(torch.zeros(3, 4), spread)
"""
probe(
    "7",
    "ensemble-predictive-bool-rows",
    _PRED + "ep.expected_improvement(0.0, torch.tensor([True, False, True]))",
    kw="rows",
)
probe(
    "7",
    "ensemble-predictive-numpy-rows-3",
    _PRED + "ep.expected_improvement(0.0, np.array([3]))",
    kw=r"rows must lie in",
)
probe(
    "7",
    "ensemble-predictive-uint8-rows-255",
    _PRED + "ep.expected_improvement(0.0, np.array([255], dtype=np.uint8))",
    kw="rows",
)
probe(
    "7",
    "ensemble-predictive-empty-rows",
    _PRED + "out = ep.expected_improvement(0.0, torch.tensor([], dtype=torch.int64))",
    kw="rows",
    check="tuple(out.shape) == (0, 4)",
)
probe(
    "7",
    "ensemble-predictive-integral-float-rows",
    _PRED + "ep.expected_improvement(0.0, torch.tensor([1.0]))",
    kw="rows must be integer",
)
probe(
    "7",
    "student-t-rows-minus-4",
    _PRED + "st.expected_improvement(0.0, torch.tensor([-4]))",
    kw=r"rows must lie in",
)
probe(
    "7",
    "ensemble-predictive-baseline-wrong-shape",
    _PRED + "ep.expected_improvement(torch.zeros(7))",
    kw="baseline",
)
probe(
    "7",
    "ensemble-predictive-baseline-nan",
    _PRED + "ep.expected_improvement(torch.tensor(float('nan')))",
    kw="baseline",
)
probe(
    "7",
    "student-t-baseline-wrong-shape",
    _PRED + "st.expected_improvement(torch.zeros(2, 2))",
    kw="baseline",
)
probe(
    "7",
    "ensemble-q-evaluate-obs-out-of-range",
    """
      from delight_gym.posteriors.ensemble import EnsembleQPosterior
      post = EnsembleQPosterior(spaces.Discrete(3), 2, num_heads=4, seed=0)
      post.evaluate(np.array([5]), np.full((1, 2), 0.5))
      """,
    kw="observations|obs",
)
probe(
    "7",
    "ensemble-q-evaluate-obs-negative",
    """
      from delight_gym.posteriors.ensemble import EnsembleQPosterior
      post = EnsembleQPosterior(spaces.Discrete(3), 2, num_heads=4, seed=0)
      post.evaluate(np.array([-1]), np.full((1, 2), 0.5))
      """,
    kw="observations|obs",
)
probe(
    "7",
    "option-rule-duration-zero",
    """
      from delight_gym.de.commitment import option_rule
      option_rule(np.array([[0.5, 0.5]]), np.zeros((1, 2)), 0.5, durations=(1, 0))
      """,
    kw="durations",
)
probe(
    "7",
    "boot-dqn-load-truncated",
    """
      m = small_boot(); m.save(os.path.join(tmp, 'b.zip'))
      cut(os.path.join(tmp, 'b.zip'), os.path.join(tmp, 'bcut.zip'), 0.7)
      type(m).load(os.path.join(tmp, 'bcut.zip'))
      """,
    kw="bcut.zip",
)
probe(
    "7",
    "boot-dqn-load-no-data",
    """
      m = small_boot(); m.save(os.path.join(tmp, 'b.zip'))
      rewrite_zip(os.path.join(tmp, 'b.zip'), os.path.join(tmp, 'bnodata.zip'), drop=('data',))
      type(m).load(os.path.join(tmp, 'bnodata.zip'))
      """,
    kw="bnodata.zip",
)
probe(
    "7",
    "boot-dqn-load-foreign-policy",
    """
      m = small_boot(); m.save(os.path.join(tmp, 'b.zip'))
      s = small_sac(); s.save(os.path.join(tmp, 's.zip'))
      with zipfile.ZipFile(os.path.join(tmp, 's.zip')) as z: pol = z.read('policy.pth')
      rewrite_zip(os.path.join(tmp, 'b.zip'), os.path.join(tmp, 'bpol.zip'),
                  replace={'policy.pth': pol})
      type(m).load(os.path.join(tmp, 'bpol.zip'))
      """,
    kw="bpol.zip",
)
probe(
    "7",
    "boot-dqn-load-empty",
    """
      from delight_gym.sb3 import BootstrappedDQN
      p = os.path.join(tmp, 'bempty.zip'); open(p, 'wb').close()
      BootstrappedDQN.load(p)
      """,
    kw="bempty.zip",
)
probe(
    "7",
    "bernoulli-env-action-out-of-range",
    """
      from delight_gym import BernoulliBanditEnv
      env = BernoulliBanditEnv(); env.reset(seed=0); env.step(env.action_space.n)
      """,
    kw="action",
)
probe(
    "7",
    "deep-sea-env-action-2",
    """
      from delight_gym import DeepSeaEnv
      env = DeepSeaEnv(); env.reset(seed=0); env.step(2)
      """,
    kw="action",
)
probe(
    "7",
    "linear-env-action-negative",
    """
      from delight_gym import LinearBanditEnv
      env = LinearBanditEnv(); env.reset(seed=0); env.step(-1)
      """,
    kw="action",
)


# ---------------------------------------------------------------------------------------------
# Running.
# ---------------------------------------------------------------------------------------------


def _limit_child() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))
    try:
        os.nice(5)
    except OSError:
        pass


def _child(code: str, kw: str | None, check: str | None, tmp: str, conn) -> None:
    """Run one probe and send back ``(outcome, detail)``."""
    _limit_child()
    import warnings

    warnings.simplefilter("ignore")
    try:
        import torch

        torch.set_num_threads(1)
        ns: dict = {"tmp": tmp, "re": re}
        exec(PRELUDE, ns)
    except BaseException as exc:  # a half-edited file: report it
        conn.send(("crash", f"prelude failed: {type(exc).__name__}: {exc}"))
        return
    try:
        exec(code, ns)
    except ERRORS as exc:
        msg = f"{type(exc).__name__}: {exc}"
        if kw is not None and re.search(kw, str(exc), re.S):
            conn.send(("clear error", msg[:300]))
        else:
            tb = traceback.extract_tb(exc.__traceback__)[-1]
            where = f" (at {Path(tb.filename).name}:{tb.lineno} {tb.name})"
            conn.send(("crash", f"{msg[:400]}{where}; wanted /{kw}/"))
        return
    except BaseException as exc:
        tb = traceback.extract_tb(exc.__traceback__)[-1]
        where = f" (at {Path(tb.filename).name}:{tb.lineno} {tb.name})"
        conn.send(("crash", f"{type(exc).__name__}: {str(exc)[:400]}{where}"))
        return
    if check is None:
        conn.send(("silent", f"no error (wanted one matching /{kw}/)"))
        return
    try:
        ok = bool(eval(check, ns))
    except BaseException as exc:
        conn.send(("silent", f"check {check!r} raised {type(exc).__name__}: {exc}"))
        return
    out = ns.get("out")
    shown = repr(out)
    if len(shown) > 200:
        shown = shown[:200] + "..."
    conn.send(("right answer" if ok else "silent", f"check {check!r} is {ok}; out = {shown}"))


def run_python(p: Probe, ctx, timeout: float) -> tuple[str, str]:
    tmp = tempfile.mkdtemp(prefix="probe_")
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(p.code, p.kw, p.check, tmp, send))
    try:
        proc.start()
        send.close()
        if recv.poll(timeout):
            try:
                result = recv.recv()
            except EOFError:
                result = None
            proc.join(10)
            if result is not None:
                return result
            return "crash", f"child died without an answer (exit code {proc.exitcode})"
        if proc.is_alive():
            proc.kill()
            proc.join()
            return "hang", f"still running after {timeout:g} s (killed)"
        return "crash", f"child died (exit code {proc.exitcode}; memory cap or signal)"
    finally:
        if proc.is_alive():
            proc.kill()
            proc.join()
        shutil.rmtree(tmp, ignore_errors=True)


def run_cli(p: Probe, timeout: float) -> tuple[str, str]:
    assert p.cli is not None
    tmp = tempfile.mkdtemp(prefix="probe_cli_")
    out_dir = os.path.join(tmp, "o")
    argv = [sys.executable, "-m", "delight_gym.cli", *p.cli, "--out", out_dir, "--no-progress"]
    env = dict(os.environ, PYTHONPATH=str(REPO), OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    try:
        proc = subprocess.Popen(
            argv,
            cwd=REPO,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            preexec_fn=_limit_child,
            start_new_session=True,
        )
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.communicate()
            return "hang", f"still running after {timeout:g} s (killed)"
        lines = stderr.strip().splitlines()
        last = lines[-1] if lines else ""
        if proc.returncode == 2 and "Traceback" not in stderr and "error:" in last:
            if re.search(p.kw or "", last):
                return "clear error", last[:300]
            return "crash", f"argparse error not naming /{p.kw}/: {last[:300]}"
        if proc.returncode == 0:
            return "silent", f"exit 0: the bad value ran (stdout tail {stdout[-200:]!r})"
        return "crash", f"exit {proc.returncode}: {last[:400]}"
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=sorted(CLASSES), help="run only this class")
    parser.add_argument("--probe", action="append", help="run only probes with this name")
    parser.add_argument("-j", "--jobs", type=int, default=1, help="probes at once (1 or 2)")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds before 'hang'")
    parser.add_argument("--list", action="store_true", help="list the probes and exit")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error("-j must be >= 1")
    probes = [p for p in PROBES if args.only is None or p.cls == args.only]
    if args.probe:
        probes = [p for p in probes if p.name in args.probe]
    names = [p.name for p in PROBES]
    dupes = {n for n in names if names.count(n) > 1}
    if dupes:
        parser.error(f"duplicate probe names: {sorted(dupes)}")
    if args.list:
        for p in probes:
            print(f"{p.cls} {p.name}")
        return 0
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("MKL_NUM_THREADS", "1")
    sys.path.insert(0, str(REPO))
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(
        [
            "numpy",
            "torch",
            "gymnasium",
            "delight_gym",
            "delight_gym.de.candidates",
            "delight_gym.posteriors.q_ensemble",
            "delight_gym.posteriors.rff",
            "delight_gym.agents.continuum",
            "stable_baselines3",
            "delight_gym.sb3",
        ]
    )
    start = time.monotonic()

    def one(p: Probe) -> tuple[Probe, str, str, float]:
        t0 = time.monotonic()
        outcome, detail = run_cli(p, args.timeout) if p.cli else run_python(p, ctx, args.timeout)
        return p, outcome, detail, time.monotonic() - t0

    results = []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for p, outcome, detail, secs in pool.map(one, probes):
            results.append((p, outcome, detail, secs))
            mark = "ok " if outcome in OK else "BAD"
            print(f"[{mark}] {p.cls} {p.name:50s} {outcome:12s} {secs:5.1f}s", flush=True)

    kinds = ("clear error", "right answer", "crash", "silent", "hang")
    print()
    print(f"{'class':44s}" + "".join(f"{k:>13s}" for k in kinds) + f"{'total':>7s}")
    totals = dict.fromkeys(kinds, 0)
    for c, title in CLASSES.items():
        row = [r for r in results if r[0].cls == c]
        if not row:
            continue
        counts = {k: sum(r[1] == k for r in row) for k in kinds}
        for k in kinds:
            totals[k] += counts[k]
        print(f"{c} {title:42s}" + "".join(f"{counts[k]:13d}" for k in kinds) + f"{len(row):7d}")
    print(f"{'all':44s}" + "".join(f"{totals[k]:13d}" for k in kinds) + f"{len(results):7d}")
    bad = [r for r in results if r[1] not in OK]
    if bad:
        print("\nNot OK:")
        for p, outcome, detail, _ in bad:
            shown = " ".join(p.code.split()) if not p.cli else "delight-gym " + p.code
            print(f"\n* [{p.cls}] {p.name}: {outcome}\n  input: {shown[:600]}\n  {detail}")
    print(f"\n{len(results)} probes in {time.monotonic() - start:.0f} s")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
