"""What `llmbench run` does when its foreground run ends: digest the run (aggregates, then
alerts) and send its webhooks before the command exits."""

from .digest import digest_finished
from .webhooks import deliver_due


def after_run(now=None):
    """Digest the finished runs not digested yet and send the alerts' webhooks now."""
    digest_finished(now)
    deliver_due(now)
