"""Runs from the terminal: `llmbench runs` (the history), `pause`, `stop`, `delete`; `show` is
show.py's (a run's figures). Each reads or writes a few rows: none loads the engine, an HTTP
client (remote.py's, only with --server) nor numpy."""

import click

from ..clock import isoformat
from ..errors import LlmbenchError
from ..runs import control
from ..runs.dto import judge_label
from ..runs.history import HISTORY_SORTS
from ..runs.history import history
from ..runs.history import parse_date
from ..runs.queries import RUN_STATES
from ..runs.state import run_state
from .exit_codes import EXIT_CODES_HELP
from .lazy import load
from .open_database import open_db
from .output import db_context
from .output import emit
from .output import num
from .output import translate
from .server_options import server_options

SORTS = [s for key in HISTORY_SORTS for s in (key, f"-{key}")]


def _date(value, option):
    if value is None:
        return None
    date = parse_date(value)
    if date is None:
        raise click.BadParameter("use YYYY-MM-DD", param_hint=option)
    return date


@click.command("runs")
@click.option("--state", type=click.Choice(RUN_STATES), help="Only runs in this state.")
@click.option("--judge", help="Only runs judged by this model.")
@click.option("--since", help="Only runs created on or after this date (YYYY-MM-DD).")
@click.option("--until", help="Only runs created on or before this date (YYYY-MM-DD).")
@click.option(
    "--sort", type=click.Choice(SORTS), default="-created", show_default=True, help="Order."
)
@click.option("--limit", type=click.IntRange(1, 1000), default=20, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="One JSON object per run (JSONL).")
@server_options
def runs_cmd(state, judge, since, until, sort, limit, as_json, server=None, token=None):
    """List runs, newest first: state, targets, score and date."""
    if server:
        return load("app.cli.remote:runs")(server, token, state, limit, as_json)
    open_db()
    with db_context():
        page = history(
            state=state,
            judge=judge,
            date_from=_date(since, "--since"),
            date_to=_date(until, "--until"),
            sort=sort,
            per_page=limit,
        )
        rows = [
            {
                "runId": r.run_id,
                "name": r.name,
                "state": r.state,
                "targets": r.target_models,
                "judge": judge_label(r.judge_provider_name, r.judge_model),
                "avgScore": r.avg_score,
                "items": r.total_items,
                "completed": r.completed_items,
                "failed": r.failed_items,
                "createdAt": isoformat(r.created_at),
                "source": r.source,
            }
            for r in page["runs"]
        ]
    if as_json:
        for row in rows:
            emit(row)
        return
    if not rows:
        click.echo("No runs match.", err=True)
        return
    click.echo(f"{'run id':36} {'state':9} {'score':>6} {'items':>6}  {'created':17}  targets")
    for r in rows:
        click.echo(
            f"{r['runId'][:36]:36} {r['state']:9} {num(r['avgScore']):>6} {r['items']:>6}  "
            f"{r['createdAt'][:16].replace('T', ' '):17}  {', '.join(r['targets'])}"
        )
    if page["total"] > len(rows):
        click.echo(f"({len(rows)} of {page['total']}; --limit shows more)", err=True)


def _control(action, run_id, as_json, **kwargs):
    open_db()
    with db_context():
        try:
            run = action(run_id, **kwargs)
        except LlmbenchError as exc:
            raise translate(exc, as_json) from None
        state = run_state(run)
    if as_json:
        emit({"event": f"run_{state}", "runId": run_id, "state": state})
    else:
        click.echo(f"Run {run_id} is {state}.")


@click.command(epilog=EXIT_CODES_HELP)
@click.argument("run_id")
@click.option("--json", "as_json", is_flag=True, help="Print the result as one JSON object.")
@server_options
def pause(run_id, as_json, server=None, token=None):
    """Pause a running run: the item in flight finishes, then it halts (resumable)."""
    if server:
        return load("app.cli.remote:control")(server, token, run_id, "pause", as_json)
    _control(control.pause_run, run_id, as_json, reason="paused from the command line")


@click.command(epilog=EXIT_CODES_HELP)
@click.argument("run_id")
@click.option("--json", "as_json", is_flag=True, help="Print the result as one JSON object.")
@server_options
def stop(run_id, as_json, server=None, token=None):
    """Stop a running or paused run now (e.g. one paused by its budget); resumable."""
    if server:
        return load("app.cli.remote:control")(server, token, run_id, "stop", as_json)
    _control(control.stop_run, run_id, as_json, reason="stopped from the command line")


@click.command(epilog=EXIT_CODES_HELP)
@click.argument("run_id")
@click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as one JSON object.")
def delete(run_id, yes, as_json):
    """Delete a stopped or finished run with its items and log (not undoable)."""
    if not yes:
        click.confirm(f"Delete run {run_id} with all its items and log?", abort=True, err=True)
    open_db()
    with db_context():
        try:
            control.delete_run(run_id)
        except LlmbenchError as exc:
            raise translate(exc, as_json) from None
    if as_json:
        emit({"event": "run_deleted", "runId": run_id})
    else:
        click.echo(f"Deleted run {run_id}.")
