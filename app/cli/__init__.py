"""The `llmbench` command line: the group, serve and reset-defaults; the commands of runs.py
(run, resume), results.py (report, diff), manage.py (runs, show, pause, stop, delete) and
datasets.py (validate, import, export). Domain errors become ClickExceptions in this package
and nowhere else."""

import logging
import sys

import click
from gunicorn.app.base import BaseApplication

from .. import config
from .. import create_app
from ..catalog import defaults
from ..dburl import DatabaseUrlError
from ..dburl import parse
from .database import db_group
from .datasets import export
from .datasets import import_cmd
from .datasets import validate
from .db import open_db
from .manage import delete
from .manage import pause
from .manage import runs_cmd
from .manage import show
from .manage import stop
from .output import EXIT_CODES_HELP
from .output import EXIT_INVALID
from .output import CliError
from .output import db_context
from .results import diff
from .results import report
from .runs import resume
from .runs import run
from .worker import worker

HELP = f"""llmbench: benchmark LLMs on your own model servers, judged by an LLM.

The database is LLMBENCH_DB (default instance/llmbench.db), shared with the web app.

{EXIT_CODES_HELP}
"""


@click.group(context_settings={"help_option_names": ["-h", "--help"]}, help=HELP)
@click.version_option(package_name="llmbench")
def main():
    """The command group (its help is HELP)."""


@main.command()
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
    bind = f"{host or cfg['HOST']}:{port or cfg['PORT']}"

    class Server(BaseApplication):
        def load_config(self):
            # One worker: one process, one orchestrator thread by construction; threads serve polls.
            for key, value in {
                "bind": bind,
                "workers": 1,
                "threads": 8,
                "worker_class": "gthread",
                "preload_app": False,
                "max_requests": 0,
                "timeout": 120,
                "accesslog": None,
            }.items():
                self.cfg.set(key, value)

        def load(self):
            # The bound address is one of the Host names the app answers (web/hosts.py).
            return create_app({"SCHEDULER_ENABLED": True, "HOST": host or cfg["HOST"]})

    click.echo(f"llmbench listening on http://{bind}", err=True)
    Server().run()


@main.command("reset-defaults")
def reset_defaults():
    """Restore the default providers and built-in task collections (your own data is kept)."""
    open_db()
    with db_context():
        summary = defaults.reset_defaults()
    click.echo(summary)


# The other commands live beside their kind: runs.py, results.py, manage.py, datasets.py.
for _command in (
    run,
    resume,
    report,
    diff,
    runs_cmd,
    show,
    pause,
    stop,
    delete,
    validate,
    import_cmd,
    export,
    db_group,
    worker,
):
    main.add_command(_command)


if __name__ == "__main__":
    sys.exit(main())
