"""Deprecated: moved to :mod:`delight_gym.sb3.vec_env`.

The old path warns (``DeprecationWarning``) and will be removed in the next release.
"""

from delight_gym._lazy import lazy_getattr

__getattr__ = lazy_getattr(__name__, {"SB3VecEnvAdapter": "delight_gym.sb3.vec_env"}, moved=True)
