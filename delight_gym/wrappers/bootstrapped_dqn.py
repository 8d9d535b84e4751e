"""Deprecated: moved to :mod:`delight_gym.sb3.bootstrapped_dqn`.

The old path warns (``DeprecationWarning``) and will be removed in the next release.
"""

from delight_gym._lazy import lazy_getattr

__getattr__ = lazy_getattr(
    __name__,
    {
        **dict.fromkeys(
            (
                "BootstrapReplayBuffer",
                "BootstrappedDQN",
                "BootstrappedDQNPolicy",
            ),
            "delight_gym.sb3.bootstrapped_dqn",
        ),
        "DelightSettings": "delight_gym.wrappers.options:DelightOptions",
    },
    moved=True,
)
