"""The `llmbench` command line. Domain errors become ClickExceptions here and nowhere else."""

import sys

import click

from . import config as config_mod


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="llmbench")
def main():
    """llmbench: benchmark LLMs on your own model servers, judged by an LLM.

    \b
    Exit codes: 0 done (item failures are reported, not fatal), 1 unexpected error,
    2 invalid config or dataset, 3 interrupted (resumable).
    """


def open_db():
    """Bind the database and the master key like the web app does (no Flask needed)."""
    from . import crypto
    from . import db

    cfg = config_mod.load()
    crypto.set_key(crypto.load_key(cfg["MASTER_KEY_PATH"], cfg["MASTER_KEY_BASE64"],
                                   str(config_mod.INSTANCE_PATH)))
    db.init_db(cfg["DB"])
    return cfg


@main.command()
@click.option("--host", default=None, help="Address to listen on (LLMBENCH_HOST, default 127.0.0.1).")
@click.option("--port", default=None, type=int, help="Port (LLMBENCH_PORT, default 8080).")
def serve(host, port):
    """Run the web app and its one orchestrator (gunicorn, one worker, threads)."""
    from gunicorn.app.base import BaseApplication

    from . import create_app

    cfg = config_mod.load()
    bind = f"{host or cfg['HOST']}:{port or cfg['PORT']}"

    class Server(BaseApplication):
        def load_config(self):
            # One worker: one process, one orchestrator thread by construction; threads serve polls.
            for key, value in {"bind": bind, "workers": 1, "threads": 8,
                               "worker_class": "gthread", "preload_app": False,
                               "max_requests": 0, "timeout": 120, "accesslog": None}.items():
                self.cfg.set(key, value)

        def load(self):
            return create_app({"SCHEDULER_ENABLED": True})

    click.echo(f"llmbench listening on http://{bind}", err=True)
    Server().run()


@main.command("reset-defaults")
def reset_defaults():
    """Restore the default providers and built-in task collections (your own data is kept)."""
    from . import defaults
    from .db import database

    open_db()
    with database.connection_context():
        summary = defaults.reset_defaults()
    click.echo(summary)


if __name__ == "__main__":
    sys.exit(main())
