"""JSON API: tasks. (placeholder)"""

from . import bp  # noqa: F401
