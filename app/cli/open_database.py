"""The CLI's database: bound like the web app does (no Flask), or a throwaway one for checks."""

import sys
from pathlib import Path

import click
from peewee import OperationalError

from .. import crypto
from ..catalog import defaults
from ..catalog import startup
from ..config import load
from ..db import connection as db
from ..db import migrations
from ..db.urls import DatabaseUrlError
from ..db.urls import parse
from ..schedules.known_secrets import MaskedStream
from ..schedules.known_secrets import known_redactor
from .output import EXIT_INVALID
from .output import CliError
from .output import show_traceback

# Each SQLite connection's page cache in a command (the web app keeps 8 MB). A CLI run's every
# thread holds a connection and no results page is served: with 8 MB each, a 12k-call run
# peaked ~6 MiB higher, and the gap grows with the database.
CACHE_MIB = 2


def open_database(value):
    """migrations.open_db(value) with a bad LLMBENCH_DB, a SQLite file we cannot use or an
    unreachable server as a CLI error of a few lines (the password masked; the traceback only
    with --debug)."""
    try:
        target = parse(value)
    except DatabaseUrlError as exc:
        raise CliError(exc.message, EXIT_INVALID) from None
    try:
        return migrations.open_db(value, CACHE_MIB)
    except migrations.DatabaseUnusable as exc:
        show_traceback(exc)
        raise CliError(exc.message) from None
    except OperationalError as exc:
        show_traceback(exc)
        raise CliError(f"cannot open the database LLMBENCH_DB={target.masked}: {exc}") from None


def open_db(check_only=False, builtins=True):
    """Bind the database and the master key like the web app does (no Flask needed).

    `check_only` (validate, --dry-run) saves nothing: without a database file it checks against
    an empty throwaway one (removed when the command ends) and never generates a key file.
    An empty database gets the default providers and built-in tasks and collections, as in
    the web app, unless `builtins` is off (reset-defaults, which says what it creates).
    """

    cfg = load()
    cfg["DB_MISSING"] = False
    if not builtins:
        cfg["LOAD_DEFAULTS"] = False
    path = cfg["DB"]
    try:
        local = not parse(path).is_postgres
    except DatabaseUrlError as exc:
        raise CliError(exc.message, EXIT_INVALID) from None
    if check_only and local and path != ":memory:" and not Path(parse(path).path).exists():
        # Lazy: tempfile and shutil (~7 ms to import) only for a check with no database yet.
        import shutil
        import tempfile

        scratch = tempfile.mkdtemp(prefix="llmbench-check-")
        cfg["DB_MISSING"] = True
        crypto.set_key(crypto.new_key())  # nothing gets encrypted and kept
        migrations.open_db(str(Path(scratch) / "empty.db"))
        if cfg["LOAD_DEFAULTS"]:  # as `run` will find them: a new database has the built-ins
            with db.database.connection_context():
                defaults.ensure_defaults()

        def _discard():
            if not db.database.is_closed():
                db.database.close()
            shutil.rmtree(scratch, ignore_errors=True)

        click.get_current_context().call_on_close(_discard)
        return cfg
    open_database(path)
    prepare_database(cfg, create_key=not check_only)
    context = click.get_current_context()
    context.call_on_close(db.close_idle)
    _mask_output(context)
    return cfg


def prepare_database(cfg, create_key=True):
    """The bound database's master key and, on an empty one, the built-in tasks and
    collections (catalog/startup.py, as the web app does); a missing or wrong key is an error
    of one line naming the database and the key file. A check (`create_key` off) makes no key
    file: without one it checks with a throwaway key."""
    try:
        if create_key:
            startup.prepare(cfg)
        elif startup.install_key(cfg, create=False) is None:
            crypto.set_key(crypto.new_key())  # nothing gets encrypted
    except crypto.KeyError_ as exc:
        show_traceback(exc)
        raise CliError(exc.message) from None


def _mask_output(context):
    """Mask what the command prints with every secret the database holds, until it ends."""
    redactor = known_redactor()
    if not redactor:
        return
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = MaskedStream(sys.stdout, redactor), MaskedStream(sys.stderr, redactor)

    def _restore():
        sys.stdout, sys.stderr = saved

    context.call_on_close(_restore)


def missing_db_note(cfg):
    """What to add to a check's errors when there is no database yet (names cannot resolve)."""
    if not cfg.get("DB_MISSING"):
        return None
    return (
        f"note: the database {cfg['DB']} does not exist yet, so no provider or collection "
        "is stored by name; define providers in the config, or set LLMBENCH_DB to your "
        "database"
    )
