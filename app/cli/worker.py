"""`llmbench worker`: claim and answer items of the running run beside `llmbench serve`
(PostgreSQL only). The loop is engine/remote.py; here: options, the database, signals, output."""

import faulthandler
import logging
import os
import signal
import socket
import threading

import click

from ..db.urls import DatabaseUrlError
from ..db.urls import parse
from ..engine.remote import DEFAULT_CONCURRENCY
from ..engine.remote import RemoteWorker
from ..engine.remote import UnknownProviders
from ..engine.remote import provider_ids
from .open_database import open_db
from .output import EXIT_INVALID
from .output import CliError
from .output import db_context

SQLITE_REFUSED = (
    "llmbench worker needs PostgreSQL (LLMBENCH_DB or --db postgresql://user@host:5432/db): "
    "a SQLite file is one machine's, written by one process at a time, and `llmbench serve` "
    "already works its runs; see the README's Team setup"
)
# Run-log events a worker prints (one line each); the rest stays in the run log.
SHOWN = ("item_done", "item_judged", "item_failed", "retry_scheduled", "abandoned")


@click.command("worker")
@click.option("--db", default=None, help="postgresql://… (default: LLMBENCH_DB).")
@click.option(
    "--concurrency",
    default=DEFAULT_CONCURRENCY,
    show_default=True,
    type=click.IntRange(1, 512),
    help="Requests this worker keeps in flight at most (a provider's max_concurrency still "
    "holds across every worker and the web app).",
)
@click.option(
    "--providers",
    default=None,
    help="Comma-separated provider names this machine can reach (default: every provider).",
)
@click.option("--quiet", "-q", is_flag=True, help="Print only start and stop.")
def worker(db, concurrency, providers, quiet):
    """Claim items of the running run (answers, then judgements) and write the results.

    Start any number, on any machine that reaches the database and the model servers; the web
    app (`llmbench serve`) keeps the run's phases, pause, stop and budget. Ctrl-C or SIGTERM
    gives the claims in flight back and exits.
    """
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(message)s")
    value = db or os.environ.get("LLMBENCH_DB") or ""
    try:
        if not value or not parse(value).is_postgres:
            raise CliError(SQLITE_REFUSED, EXIT_INVALID)
    except DatabaseUrlError as exc:
        raise CliError(exc.message, EXIT_INVALID) from None
    if db:
        os.environ["LLMBENCH_DB"] = db  # open_db reads the config, as every command does
    cfg = open_db()
    names = [n.strip() for n in (providers or "").split(",") if n.strip()]
    with db_context():
        try:
            ids = provider_ids(names)
        except UnknownProviders as exc:
            raise CliError(str(exc), EXIT_INVALID) from None

    stop = threading.Event()

    def _stop(signum, frame):
        stop.set()

    previous = {s: signal.signal(s, _stop) for s in (signal.SIGINT, signal.SIGTERM)}
    faulthandler.register(signal.SIGUSR1)  # `kill -USR1 <pid>` prints every thread's stack

    def on_event(event):
        if not quiet and event.get("event") in SHOWN:
            click.echo(event.get("message", ""))

    remote = RemoteWorker(cfg, stop, concurrency=concurrency, providers=ids, on_event=on_event)
    serves = ", ".join(names) if names else "every provider"
    click.echo(
        f"llmbench worker {remote.holder} on {socket.gethostname()}: {parse(value).masked}, "
        f"concurrency {concurrency}, serves {serves}",
        err=True,
    )
    try:
        with db_context():
            remote.serve()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    click.echo(f"llmbench worker {remote.holder} stopped (claims in flight given back)", err=True)
