"""`llmbench serve`: the web app and its one orchestrator under gunicorn.

Loaded only when `serve` runs (see LazyGroup in __init__): Flask, the web app and gunicorn
cost the other commands ~0.5 s and ~20 MiB they never use."""

import logging
import threading

import click
from gunicorn.app.base import BaseApplication

from .. import config
from ..accounts.access import StartRefused
from ..accounts.access import prepare_start
from ..db import connection as db
from ..db.urls import DatabaseUrlError
from ..db.urls import parse
from ..factory import compile_templates
from ..factory import create_app
from .open_database import open_database
from .open_database import prepare_database
from .output import EXIT_INVALID
from .output import CliError

# What serve exits with when it cannot start: gunicorn's "worker failed to boot", which is what
# a database it could not open used to end in (after gunicorn's 78 lines).
EXIT_NO_START = 3


@click.command()
@click.option(
    "--host", default=None, help="Address to listen on (LLMBENCH_HOST, default 127.0.0.1)."
)
@click.option("--port", default=None, type=int, help="Port (LLMBENCH_PORT, default 8080).")
def serve(host, port):
    """Run the web app and its one orchestrator (gunicorn, one worker, threads)."""
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    cfg = config.load()
    try:  # a database we cannot serve is an error now, not a folder named `postgresql:`
        parse(cfg["DB"])
    except DatabaseUrlError as exc:
        raise CliError(exc.message, EXIT_INVALID) from None
    # Opened (and migrated) here, before gunicorn starts: a database we cannot use is a few
    # lines naming the file, not a worker's traceback. Closed again before the worker forks.
    try:
        open_database(cfg["DB"])
        prepare_database(cfg)  # a missing or wrong master key: one line, before gunicorn
    except CliError as exc:
        exc.exit_code = EXIT_NO_START
        raise
    # Beyond loopback with no account: refuse, unless the config makes the first admin or
    # turns the login off (both logged).
    try:
        with db.database.connection_context():
            prepare_start(cfg, host or cfg["HOST"])
    except StartRefused as exc:
        raise CliError(exc.message, EXIT_NO_START) from None
    db.close_idle()
    bind = f"{host or cfg['HOST']}:{port or cfg['PORT']}"

    class Server(BaseApplication):
        def load_config(self):
            # One worker: one process, one orchestrator thread by construction; threads serve polls.
            settings = {
                "bind": bind,
                "workers": 1,
                "threads": 8,
                "worker_class": "gthread",
                "preload_app": False,
                "max_requests": 0,
                "timeout": 120,
                "accesslog": None,
            }
            # gunicorn 25.1+ opens a control socket, by default in ~/.gunicorn/: nothing is
            # written outside the home (an older gunicorn has no such setting).
            if "control_socket_disable" in self.cfg.settings:
                settings["control_socket_disable"] = True
            for key, value in settings.items():
                self.cfg.set(key, value)

        def load(self):
            # The bound address is one of the Host names the app answers (web/hosts.py).
            app = create_app({"SCHEDULER_ENABLED": True, "HOST": host or cfg["HOST"]})
            # Off the worker's start: it answers at once, the templates are ready a second later.
            threading.Thread(
                target=compile_templates, args=(app,), name="templates", daemon=True
            ).start()
            return app

    click.echo(f"llmbench listening on http://{bind}", err=True)
    Server().run()
