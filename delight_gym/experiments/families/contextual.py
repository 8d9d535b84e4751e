"""The contextual families with learned posteriors: ``wheel`` (the Deep Bayesian Bandits
Showdown's wheel bandit) and ``neural-width`` (many persistent arms with nonlinear means).

Both take the same agents (three rules × three learned posteriors, annealed ε-greedy, uniform
play); their run functions are :func:`~delight_gym.experiments.contextual.run_wheel` and
``run_neural``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from delight_gym._checks import (
    check_nonnegative_float,
    check_nonnegative_int,
    check_positive_int,
    check_probability,
)
from delight_gym.experiments.families.base import (
    ARMS,
    DE_PARAMETERS,
    EGREEDY,
    UNIFORM,
    Agent,
    Family,
    Parameter,
    SweepOutcome,
    lazy_check,
)

__all__ = ["NEURAL_WIDTH", "WHEEL"]


#: Which NeuralLinear settings the ``*-neurallinear`` agents use: the Showdown's public example
#: or its paper's (:data:`~delight_gym.posteriors.neural_linear.NEURAL_LINEAR_SETTINGS`); the
#: ``wheel`` family defaults to the paper's (:data:`WHEEL_NL_SETTINGS`), which come closest to
#: the Showdown's published wheel results.
NL_SETTINGS = Parameter(
    "nl_settings",
    str,
    lazy_check("delight_gym.posteriors.neural_linear:neural_linear_settings"),
    default="example",
    symbol="NL",
    help="NeuralLinear's settings: example (the Showdown's public example_main.py) or paper "
    "(its paper's: two layers of 100, retrained every 20 rounds for 20 steps) "
    "(default %(default)s)",
)
WHEEL_NL_SETTINGS = dataclasses.replace(NL_SETTINGS, default="paper")


def uniform_relative_report(result: SweepOutcome) -> list[str]:
    """The showdown's metric for each setting: every agent's cumulative regret divided by
    ``uniform``'s (:func:`~delight_gym.experiments.contextual.relative_to_uniform`)."""
    from delight_gym.experiments.contextual import relative_to_uniform

    columns = list(result.spec.setting_columns)
    table = relative_to_uniform(result.summary, columns)
    if table.empty:
        return []
    lines = ["cumulative regret relative to uniform play (the showdown's metric):"]
    for _, row in table.iterrows():
        setting = " ".join(result.spec.family.parameters[c].format(row[c]) for c in columns)
        lines.append(
            f"  {setting} {row['agent']}: {row['relative_regret']:.4f} ± {row['relative_se']:.4f}"
        )
    return lines


def _contextual_agents(nl_settings: Parameter) -> tuple[Agent, ...]:
    """``RULE-POSTERIOR`` for the three rules and learned posteriors (the NeuralLinear ones
    taking ``nl_settings``), then annealed ε-greedy and uniform play."""
    posteriors = {"linfull": "LinFull", "neurallinear": "NeuralLinear", "ensemble": "ensemble"}
    rules = {  # rule: its label, its colour with each posterior
        "delight": ("DE", ("#d62728", "#e377c2", "#8c564b")),
        "thompson": ("Thompson", ("#1f77b4", "#17becf", "#9467bd")),
        "greedy": ("greedy", ("#7f7f7f", "#bcbd22", "#393b79")),
    }
    agents = []
    for rule, (label, colors) in rules.items():
        for (post, post_label), color in zip(posteriors.items(), colors, strict=True):
            name, style = f"{rule}-{post}", "--" if rule == "greedy" else "-"
            parameters = (
                *(DE_PARAMETERS if rule == "delight" else ()),
                *((nl_settings,) if post == "neurallinear" else ()),
            )
            agents.append(Agent(name, f"{label} ({post_label})", color, style, parameters))
    return (*agents, EGREEDY, UNIFORM)


def _contextual_family(
    nl_settings: Parameter, instance: tuple[Parameter, ...], noise: float, **fields: Any
) -> Family:
    """A contextual family: every agent of :func:`_contextual_agents` by default, ``instance``
    then the noise σ (swept over ``noise``), every seed in one batch, ``fields``."""
    sigma = Parameter(
        "noise", float, check_nonnegative_float, sweep=(noise,), symbol="σ", help="noise σ"
    )
    agents = _contextual_agents(nl_settings)
    return Family(
        agents=agents,
        instance=(*instance, sigma),
        default_agents=tuple(a.name for a in agents),
        batch_size=fields["seeds"],
        **fields,
    )


#: The Deep Bayesian Bandits Showdown's wheel (``WheelBandit-v0``): one model per arm on the
#: context; DE's λ = gate_price × 49 (the mean-reward range), fixed before any result.
WHEEL = _contextual_family(
    WHEEL_NL_SETTINGS,
    (
        Parameter(
            "delta",
            float,
            check_probability,
            sweep=(0.5, 0.7, 0.9, 0.95, 0.99),
            symbol="δ",
            help="radii δ beyond which the quadrant's arm pays 50",
        ),
    ),
    0.01,
    name="wheel",
    help="the Deep Bayesian Bandits Showdown's wheel bandit (WheelBandit-v0)",
    cell="delight_gym.experiments.contextual:run_wheel",
    horizon=2000,
    seeds=20,
    title="Wheel bandit",
    report=uniform_relative_report,
)

#: Many persistent arms with nonlinear means (``NeuralBandit-v0``): one shared model on every
#: arm's row; DE's λ = gate_price × the mean-reward range (10 quadratic, 2 cosine).
NEURAL_WIDTH = _contextual_family(
    NL_SETTINGS,
    (
        # a positive count whose smallest run fits in memory
        dataclasses.replace(
            ARMS,
            check=lazy_check("delight_gym.envs.neural:check_neural_arms"),
            sweep=(10, 100, 1000),
        ),
        Parameter(
            "reward",
            str,
            lazy_check("delight_gym.envs.contextual:check_neural_reward"),
            sweep=("quadratic", "cosine"),
            symbol="h",
            help="mean-reward functions h (quadratic: 10 s², cosine: cos(3 s))",
        ),
        Parameter("dim", int, check_positive_int, sweep=(20,), symbol="D", help="arm dimensions"),
        Parameter(
            "context_dim",
            int,
            check_nonnegative_int,
            sweep=(0,),
            symbol="C",
            help="per-round context dimensions",
        ),
    ),
    0.1,
    name="neural-width",
    help="K persistent arms with nonlinear means 10 (xᵀθ)² or cos(3 xᵀθ) (NeuralBandit-v0)",
    cell="delight_gym.experiments.contextual:run_neural",
    horizon=1000,
    seeds=10,
    title="Neural bandits",
)
