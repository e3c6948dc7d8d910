"""`llmbench db check` (which database, its version, the schema's) and `llmbench db copy`."""

import click

from ..config import load
from ..db.admin import copy_database
from ..db.admin import describe
from ..db.urls import DatabaseUrlError
from ..db.urls import parse
from ..errors import LlmbenchError
from .open_database import open_database
from .output import EXIT_INVALID
from .output import CliError
from .output import translate


@click.group("db")
def db_group():
    """The database: which one is in use (check), or move it to another (copy)."""


@db_group.command("check")
def check():
    """Say which database LLMBENCH_DB is (password masked), its version and the schema version.

    Migrates it first, as a start would.
    """
    cfg = load()
    open_database(cfg["DB"])
    info = describe(cfg["DB"])
    click.echo(f"database: {info['database']} ({info['engine']})")
    click.echo(f"server version: {info['server_version']}")
    click.echo(
        f"schema version: {info['schema_version']} of {info['schema_latest']} "
        f"(last migration {info['last_migration']})"
    )


@db_group.command("copy")
@click.option("--from", "source", default=None, help="Source database (default: LLMBENCH_DB).")
@click.option(
    "--to", "target", required=True, help="Empty target database, e.g. postgresql://…/llmbench."
)
def copy(source, target):
    """Copy every table (ids kept) into an empty database; secrets stay encrypted.

    The target must be empty (a new database); the same master key then reads its secrets.
    """
    cfg = load()
    source = source or cfg["DB"]
    for value in (source, target):
        try:
            parse(value)
        except DatabaseUrlError as exc:
            raise CliError(exc.message, EXIT_INVALID) from None
    # No key is needed: ciphertexts move as they are, bound to the same row ids.
    open_database(source)
    open_database(target)

    def progress(table, rows):
        click.echo(f"  {table}: {rows} rows", err=True)

    click.echo(f"copying {parse(source).masked} -> {parse(target).masked}", err=True)
    try:
        counts = copy_database(source, target, progress=progress)
    except LlmbenchError as exc:
        raise translate(exc) from None
    click.echo(f"copied {sum(counts.values())} rows in {len(counts)} tables")
