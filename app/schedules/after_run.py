"""What `llmbench run` does when its foreground run ends: digest the run (aggregates, then
alerts) and send its webhooks before the command exits."""

from ..results.composite import DEFAULT_SETTINGS
from .digest import digest_finished
from .webhooks import deliver_due


def after_run(now=None, composite_settings=DEFAULT_SETTINGS):
    """Digest the finished runs not digested yet and send the alerts' webhooks now."""
    digest_finished(now, composite_settings=composite_settings)
    deliver_due(now)
