"""JSON API: status. (placeholder)"""

from . import bp  # noqa: F401
