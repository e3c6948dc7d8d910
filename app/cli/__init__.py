"""The `llmbench` command line: the group. Each command lives beside its kind and is imported
only when it runs (LazyGroup): runs.py (run, resume), results.py (report, diff), manage.py
(runs, pause, stop, delete), show.py, datasets.py (validate, import, export), database.py (db),
worker.py, serve.py, defaults.py (reset-defaults). So `llmbench run` never imports Flask, the
charts or the exporters. Domain errors become ClickExceptions in this package and nowhere else."""

import atexit
import gc
import sys

import click

from .. import __version__
from .exit_codes import EXIT_CODES_HELP
from .lazy import LazyGroup

HELP = f"""llmbench: benchmark LLMs on your own model servers, judged by an LLM.

The database is LLMBENCH_DB (default llmbench.db in the home: `llmbench info` says where),
shared with the web app.

{EXIT_CODES_HELP}
"""

COMMANDS = {
    "serve": "app.cli.serve:serve",
    "reset-defaults": "app.cli.defaults:reset_defaults",
    "run": "app.cli.runs:run",
    "resume": "app.cli.runs:resume",
    "report": "app.cli.results:report",
    "diff": "app.cli.results:diff",
    "runs": "app.cli.manage:runs_cmd",
    "show": "app.cli.show:show",
    "pause": "app.cli.manage:pause",
    "stop": "app.cli.manage:stop",
    "delete": "app.cli.manage:delete",
    "validate": "app.cli.datasets:validate",
    "import": "app.cli.datasets:import_cmd",
    "export": "app.cli.datasets:export",
    "db": "app.cli.database:db_group",
    "worker": "app.cli.worker:worker",
    "users": "app.cli.accounts:users",
    "tokens": "app.cli.accounts:tokens",
    "info": "app.cli.info:info",
}
# Each command's help line as --help lists it, without importing the command (lazy.py).
SUMMARIES = {
    "serve": "Run the web app and its one orchestrator (gunicorn, one worker, threads).",
    "reset-defaults": "Restore the default providers and built-in task collections (your own "
    "data is kept).",
    "run": "Run a benchmark from a config file (or a saved template) in the foreground.",
    "resume": "Continue a stopped, paused or interrupted run where it left off.",
    "report": "Write summary.json, report.html, results.jsonl and results.csv for a run "
    "(or, with -o, just the files asked for).",
    "diff": "Per-model and per-task score deltas from RUN_A to RUN_B (B - A).",
    "runs": "List runs, newest first: state, targets, score and date.",
    "show": "One run: state, judge, targets, counts, per-target results, why it stopped.",
    "pause": "Pause a running run: the item in flight finishes, then it halts (resumable).",
    "stop": "Stop a running or paused run now (e.g. one paused by its budget); resumable.",
    "delete": "Delete a stopped or finished run with its items and log (not undoable).",
    "validate": "Check a run config or a dataset file/folder: nothing saved, no model called "
    "(2 if bad).",
    "import": "Import tasks from files or folders of YAML, or a promptfoo suite "
    "(promptfooconfig.yaml); all or nothing (exit 2 listing every problem).",
    "export": "Export tasks in a dataset format (json keeps collections too).",
    "db": "The database: which one is in use (check), or move it to another (copy).",
    "worker": "Claim items of the running run (answers, then judgements) and write the results.",
    "users": "Accounts: once one exists, every page and API call needs a login.",
    "tokens": "Tokens for machines: `Authorization: Bearer <token>` on the API, with the "
    "token's role.",
    "info": "Print the home, the database, the master key file, the version and the schema.",
}


@click.group(
    cls=LazyGroup,
    lazy=COMMANDS,
    summaries=SUMMARIES,
    context_settings={"help_option_names": ["-h", "--help"]},
    help=HELP,
)
@click.version_option(__version__)
@click.option(
    "--debug",
    is_flag=True,
    help="Print the traceback behind an error message (for a bug report).",
)
def main(debug):
    """The command group (its help is HELP); --debug is read where an error is shown
    (output.show_traceback)."""
    # The process ends with its command. Frozen at exit, the objects still alive (every module,
    # a run's rows) are not walked by the interpreter's last garbage collections: 0.10-0.15 s
    # less after a run, and files and the database are closed before (cli/open_database.py).
    # Registered once however many commands one process runs (the tests').
    atexit.unregister(gc.freeze)
    atexit.register(gc.freeze)
    # The command's own modules are loaded by now (click resolves the command first) and live
    # as long as the process: frozen, the collections a run triggers do not walk them each
    # time. Thawed when the command ends, so a process running many commands (the tests')
    # still collects what each one left.
    gc.freeze()
    click.get_current_context().call_on_close(gc.unfreeze)


if __name__ == "__main__":
    sys.exit(main())
