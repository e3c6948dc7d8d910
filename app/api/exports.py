"""JSON API: exports. (placeholder)"""

from . import bp  # noqa: F401
