"""JSON API: runs. (placeholder)"""

from . import bp  # noqa: F401
