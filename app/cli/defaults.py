"""`llmbench reset-defaults`: the default providers and built-in task collections back."""

import click

from ..catalog import defaults
from .open_database import open_db
from .output import db_context


@click.command("reset-defaults")
def reset_defaults():
    """Restore the default providers and built-in task collections (your own data is kept)."""
    open_db(builtins=False)  # what reset_defaults creates, it says
    with db_context():
        summary = defaults.reset_defaults()
    click.echo(summary)
