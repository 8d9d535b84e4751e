"""The posterior protocol (``delight_gym.de.posterior``) and every package posterior speaking it.

References: hand-computed baselines; for the torch adapters' one-copy ``evaluate``, the same
adapter's separate ``mean`` and ``expected_improvement`` calls (the protocol's other route) and,
independently, the Gaussian EI closed form ``s·(φ(z) + zΦ(z))`` from SciPy's ``norm``.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import torch
from gymnasium import spaces
from scipy import stats

from delight_gym.posteriors import (
    BetaBernoulliPosterior,
    LinearGaussianPosterior,
    PosteriorValues,
    TabularMDPPosterior,
    TabularValuePosterior,
    ValuePosterior,
    adapt_posterior,
    evaluate_posterior,
    host_baseline,
)


def test_host_baseline_by_hand_numpy_and_torch() -> None:
    means = np.array([[1.0, 3.0, -1.0], [0.5, 0.5, 2.0]])
    probs = np.array([[0.5, 0.25, 0.25], [1.0, 0.0, 0.0]])
    host = [0.5 * 1 + 0.25 * 3 - 0.25, 0.5]
    np.testing.assert_allclose(host_baseline(means, probs), host, rtol=1e-15)
    np.testing.assert_array_equal(host_baseline(means, probs, "max"), [3.0, 2.0])
    t = host_baseline(torch.as_tensor(means), torch.as_tensor(probs))
    assert isinstance(t, torch.Tensor) and t.dtype == torch.float64
    np.testing.assert_allclose(t.numpy(), host, rtol=1e-15)
    np.testing.assert_array_equal(host_baseline(torch.as_tensor(means), None, "max"), [3.0, 2.0])
    with pytest.raises(ValueError, match="kind"):
        host_baseline(means, probs, "mean")
    with pytest.raises(ValueError, match="host_probs"):
        host_baseline(means, probs[:, :2])


class _Mock:
    """Means ``m[obs]``; EI ``(m − v)^+`` (a zero-variance posterior)."""

    num_actions = 2

    def __init__(self) -> None:
        self.m = np.array([[0.0, 1.0], [2.0, -1.0]])

    def mean(self, observations):  # type: ignore[no-untyped-def]
        return self.m[np.asarray(observations)]

    def expected_improvement(self, observations, baseline):  # type: ignore[no-untyped-def]
        return np.maximum(self.mean(observations) - baseline[:, None], 0.0)

    def update(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        pass


def test_evaluate_posterior_without_and_with_evaluate() -> None:
    probs = np.array([[0.5, 0.5], [0.5, 0.5]])
    out = evaluate_posterior(_Mock(), np.array([0, 1]), probs)
    np.testing.assert_array_equal(out.mean, [[0.0, 1.0], [2.0, -1.0]])
    np.testing.assert_array_equal(out.baseline, [0.5, 0.5])
    np.testing.assert_array_equal(out.expected_improvement, [[0.0, 0.5], [1.5, 0.0]])
    out = evaluate_posterior(_Mock(), np.array([0, 1]), probs, "max")
    np.testing.assert_array_equal(out.baseline, [1.0, 2.0])

    class WithEvaluate(_Mock):
        def evaluate(self, observations, host_probs, baseline="host"):  # type: ignore[no-untyped-def]
            n = len(observations)
            return PosteriorValues(np.zeros((n, 2)), np.full(n, 7.0), np.ones((n, 2)))

    out = evaluate_posterior(WithEvaluate(), np.array([0, 1]), probs)
    np.testing.assert_array_equal(out.baseline, [7.0, 7.0])  # the posterior's own answer
    with pytest.raises(ValueError, match="posterior mean has shape"):
        evaluate_posterior(_Mock(), np.array([0, 1]), probs[:, :1])
    with pytest.raises(ValueError, match="baseline"):
        evaluate_posterior(_Mock(), np.array([0, 1]), probs, "min")


def _package_posteriors() -> dict[str, tuple[object, np.ndarray, object]]:
    """Each package posterior (updated a little), a batch of observations, the space."""
    rng = np.random.default_rng(0)
    beta = BetaBernoulliPosterior(1, 3)
    beta.update(np.array([1]), np.array([1.0]))
    linear = LinearGaussianPosterior(1, 2)
    linear.update(torch.tensor([[1.0, 0.5]]), torch.tensor([0.3]))
    feats = rng.normal(size=(4, 3, 2))
    mdp = TabularMDPPosterior(2, 3, 2, 3)
    mdp.update(torch.tensor([0, 1]), torch.tensor([1, 0]), torch.tensor([0.9, 0.1]), None)
    value = TabularValuePosterior(3, 2)
    value.update(np.array([0, 1]), np.array([1, 0]), np.array([1.0, 0.0]), np.array([1, 2]),
                 np.array([False, True]))  # fmt: skip
    return {
        "beta": (beta, np.zeros((4, 1)), None),
        "linear": (linear, feats, None),
        "mdp": (mdp, np.array([0, 1]), spaces.Discrete(3)),
        "value": (value, np.array([0, 1, 2]), spaces.Discrete(3)),
    }


@pytest.mark.parametrize("name", ["beta", "linear", "mdp", "value"])
@pytest.mark.parametrize("baseline", ["host", "max"])
def test_every_package_posterior_speaks_the_protocol(name: str, baseline: str) -> None:
    posterior, obs, space = _package_posteriors()[name]
    adapted = adapt_posterior(posterior, 3 if name != "value" and name != "mdp" else 2, space)
    assert isinstance(adapted, ValuePosterior)
    n, a = len(obs), adapted.num_actions
    probs = np.random.default_rng(1).dirichlet(np.ones(a), size=n)
    out = evaluate_posterior(adapted, obs, probs, baseline)
    # the protocol's step-by-step route gives the same numbers as a one-copy evaluate()
    means = adapted.mean(obs)
    base = host_baseline(means, probs, baseline)
    ei = adapted.expected_improvement(obs, base)
    np.testing.assert_allclose(out.mean, means, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(out.baseline, base, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(out.expected_improvement, ei, rtol=1e-12, atol=1e-15)
    assert out.mean.shape == out.expected_improvement.shape == (n, a)
    assert out.baseline.shape == (n,)
    assert np.all(out.expected_improvement >= 0)
    assert all(x.dtype == np.float64 for x in out)


def test_linear_adapter_evaluate_is_gaussian_ei_of_the_predictive() -> None:
    posterior, feats, _ = _package_posteriors()["linear"]
    adapted = adapt_posterior(posterior, 3, None)
    assert hasattr(adapted, "evaluate")  # the torch adapters copy to the host once
    probs = np.full((4, 3), 1.0 / 3.0)
    out = adapted.evaluate(feats, probs, "host")
    mu, sd = posterior.predictive(torch.as_tensor(feats).reshape(1, -1, 2))
    mu, sd = mu.reshape(4, 3).numpy(), sd.reshape(4, 3).numpy()
    base = mu.mean(axis=1)
    z = (mu - base[:, None]) / sd
    closed = sd * (stats.norm.pdf(z) + z * stats.norm.cdf(z))
    np.testing.assert_allclose(out.expected_improvement, closed, rtol=1e-12)
    np.testing.assert_allclose(out.baseline, base, rtol=1e-13)


def test_adapt_posterior_passes_others_through_and_needs_actions_for_linear() -> None:
    mock = _Mock()
    assert adapt_posterior(mock, 2, None) is mock
    with pytest.raises(TypeError, match="number of actions"):
        adapt_posterior(LinearGaussianPosterior(1, 2), None, None)


def test_adapting_a_numpy_posterior_does_not_import_torch() -> None:
    code = (
        "import sys\n"
        "import numpy as np\n"
        "from delight_gym.posteriors import BetaBernoulliPosterior, adapt_posterior\n"
        "from delight_gym.posteriors import evaluate_posterior\n"
        "p = adapt_posterior(BetaBernoulliPosterior(1, 2), 2, None)\n"
        "out = evaluate_posterior(p, np.zeros((1, 1)), np.array([[1.0, 0.0]]))\n"
        "assert abs(out.expected_improvement[0, 1] - 0.125) < 1e-15, out\n"  # (1 - 1/2)²/2
        "assert 'torch' not in sys.modules, 'torch was imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
