"""JSON API: datasets. (placeholder)"""

from . import bp  # noqa: F401
