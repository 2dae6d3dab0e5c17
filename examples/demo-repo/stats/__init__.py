"""A tiny statistics package: the patchloop demo repository."""

from stats.median import median

__all__ = ["median"]
