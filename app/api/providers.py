"""JSON API: providers. (placeholder)"""

from . import bp  # noqa: F401
