"""Deprecated: :class:`~delight_gym.wrappers.stats.DelightStats` moved to
:mod:`delight_gym.wrappers.stats`, the algorithms' shared base to :mod:`delight_gym.sb3.base`;
this path warns and will be removed in the next release."""

from delight_gym._lazy import lazy_getattr

__getattr__ = lazy_getattr(
    __name__,
    {
        **dict.fromkeys(("LOG_KEYS", "DelightStats"), "delight_gym.wrappers.stats"),
        **dict.fromkeys(
            ("DelightAlgorithmMixin", "PredictState", "Prediction", "StoredTransition"),
            "delight_gym.sb3.base",
        ),
    },
    moved=True,
)
