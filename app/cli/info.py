"""`llmbench info`: where this llmbench keeps its data, and which version and schema it is."""

import json
from pathlib import Path

import click

from ..catalog import startup
from ..config import load
from ..db import migrations
from ..db.connection import database
from ..db.connection import init_db
from ..db.urls import DatabaseUrlError
from ..db.urls import parse
from ..runs.records import tool_version
from .output import EXIT_INVALID
from .output import CliError


def schema_of(value):
    """The last migration applied to the database and how many this version would still
    apply, or (None, reason) when there is no database yet. Read only: nothing is migrated."""
    target = parse(value)
    if not target.is_postgres and target.path != ":memory:" and not Path(target.path).exists():
        return None, "not created yet: the first command or `llmbench serve` creates it"
    init_db(value)
    try:
        with database.connection_context():
            names = migrations.applied(database)
    except Exception as exc:  # noqa: BLE001 (a schema we cannot read is a line here, not a crash)
        return None, f"cannot be read ({exc})"
    finally:
        if not database.is_closed():
            database.close()
    pending = len([m for m in migrations.MIGRATIONS if m.__name__ not in set(names)])
    last = names[-1] if names else "empty"
    return last, f"{pending} migration(s) to apply on the next start" if pending else "up to date"


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def info(as_json):
    """Print the home, the database, the master key file, the version and the schema."""
    cfg = load()
    try:
        masked = parse(cfg["DB"]).masked
    except DatabaseUrlError as exc:
        raise CliError(exc.message, EXIT_INVALID) from None
    key = startup.key_source(cfg)
    key_state = "set" if key == "LLMBENCH_MASTER_KEY_BASE64" else None
    if key_state is None:
        key_state = "present" if Path(key).exists() else "not created yet"
    last, schema_state = schema_of(cfg["DB"])
    facts = {
        "home": cfg["HOME"],
        "database": masked,
        "keyFile": key,
        "keyState": key_state,
        "version": tool_version(),
        "schema": last,
        "schemaState": schema_state,
    }
    if as_json:
        click.echo(json.dumps(facts))
        return
    click.echo(f"home:      {facts['home']}")
    click.echo(f"database:  {facts['database']}")
    click.echo(f"key file:  {facts['keyFile']} ({key_state})")
    click.echo(f"version:   {facts['version']}")
    click.echo(f"schema:    {last or '-'} ({schema_state})")
