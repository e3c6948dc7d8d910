"""The one APScheduler thread that ticks the orchestrator. (placeholder)"""


def start(config):
    """Start the orchestrator thread."""
