"""Default providers and the built-in task bank. (placeholder until its owner fills it in)"""


def ensure_defaults():
    """Create defaults on an empty database."""


def reset_defaults():
    """Restore defaults; returns a one-line summary."""
    return "nothing to reset yet"
