"""The package version, in one place (``delight_gym.__version__``).

A module of its own so that code inside the package (the sweep runner's cell keys, say) can
read it without importing the package root back.
"""

__version__ = "0.2.0"
