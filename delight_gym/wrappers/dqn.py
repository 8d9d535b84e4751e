"""Deprecated: moved to :mod:`delight_gym.sb3.delight_dqn`.

The old path warns (``DeprecationWarning``) and will be removed in the next release.
"""

from delight_gym._lazy import lazy_getattr

__getattr__ = lazy_getattr(__name__, {"DelightDQN": "delight_gym.sb3.delight_dqn"}, moved=True)
