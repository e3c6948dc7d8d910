"""Runs from the terminal: `llmbench runs` (the history), `show`, `pause`, `stop`, `delete`."""

import json

import click

from ..clock import isoformat
from ..engine import lease
from ..errors import LlmbenchError
from ..runs import lifecycle
from ..runs.dto import judge_label
from ..runs.dto import run_summary
from ..runs.history import HISTORY_SORTS
from ..runs.history import history
from ..runs.history import parse_date
from ..runs.queries import RUN_STATES
from ..runs.queries import get_run
from ..runs.queries import list_logs
from ..runs.records import run_record
from ..runs.state import run_state
from . import remote
from .exit_codes import EXIT_CODES_HELP
from .open_database import open_db
from .output import db_context
from .output import emit
from .output import num
from .output import quality_line
from .output import slo_line
from .output import speed_line
from .output import step_table
from .output import translate
from .target_rows import averages
from .watched_run import resume_hint

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
@remote.server_options
def runs_cmd(state, judge, since, until, sort, limit, as_json, server=None, token=None):
    """List runs, newest first: state, targets, score and date."""
    if server:
        return remote.runs(server, token, state, limit, as_json)
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


@click.command(epilog=EXIT_CODES_HELP)
@click.argument("run_id")
@click.option("--json", "as_json", is_flag=True, help="Print the run as one JSON object.")
@remote.server_options
def show(run_id, as_json, server=None, token=None):
    """One run: state, judge, targets, counts, per-target results, why it stopped."""
    if server:
        return remote.show(server, token, run_id, as_json)
    open_db()
    with db_context():
        try:
            run = get_run(run_id)
        except LlmbenchError as exc:
            raise translate(exc, as_json) from None
        summary = run_summary(run)
        rows = averages(run_id)
        state = run_state(run)
        # "running" by its control, but no live orchestrator holds the database (its process
        # was killed a moment ago and the lease has not expired yet): it can be resumed now.
        orphaned = state == "running" and lease.live_holder() is None
        hint = resume_hint(run) if state in ("paused", "stopped") or orphaned else None
        errors = [e.message for e in list_logs(run_id, limit=1000) if e.level == "ERROR"][-5:]
        record = run_record(run)
    if as_json:
        click.echo(
            json.dumps(
                {
                    "run": summary,
                    "models": rows,
                    "orphaned": orphaned,
                    "resumeCommand": hint,
                    "recentErrors": errors,
                    "record": record,
                },
                indent=2,
                ensure_ascii=False,
                default=str,
            )
        )
        return
    counts = summary["counts"]
    shown = f"{state} (but no orchestrator works on it: it was interrupted)" if orphaned else state
    click.echo(f"Run {summary['runId']} ({summary['name'] or 'no name'}): {shown}")
    if summary["controlReason"] and state != "finished":
        click.echo(f"  why: {summary['controlReason']}")
    click.echo(f"  judge: {judge_label(summary['judgeProviderName'], summary['judgeModel'])}")
    click.echo(f"  collections: {', '.join(c['name'] for c in summary['collections']) or '-'}")
    click.echo(
        f"  items: {summary['totalItems']} ({counts['COMPLETED']} completed, "
        f"{summary['failedItems']} failed, {counts['NEW']} not answered, "
        f"{counts['WAITING_FOR_JUDGE']} waiting for the judge)"
    )
    click.echo(f"  created: {summary['createdAt']}   finished: {summary['finishedAt'] or '-'}")
    _echo_record(record)
    for row in rows:
        rate = row["autoFailRate"]
        click.echo(
            f"  {row['target']}: score {num(row['avgScore'])}, {row['completed']} completed, "
            f"{row['failed']} failed, auto-fail {'-' if rate is None else f'{rate:.1f} %'}"
        )
        if quality_line(row):
            click.echo(f"    {quality_line(row)}")
        click.echo(f"    {speed_line(row.get('speed'))}")
        if row.get("slo"):
            click.echo(f"    {slo_line(row['slo'])}")
        for line in step_table(row.get("steps")):
            click.echo(f"    {line}")
    for message in errors:
        click.echo(f"  error: {message}")
    if hint:
        click.echo(f"Continue it with: {hint}")


def _echo_record(record):
    """How the run was made: version, hashes, the command line; the config as given, indented."""
    click.echo(
        f"  made by: llmbench {record['toolVersion'] or 'unknown'}   dataset "
        f"{(record['datasetHash'] or '-')[:12]}   judge prompt {(record['promptHash'] or '-')[:12]}"
    )
    if record["commandLine"]:
        click.echo(f"  command: {record['commandLine']}")
    if record["config"]:
        click.echo("  config as given:")
        for line in record["config"].rstrip().splitlines():
            click.echo(f"    {line}")


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
@remote.server_options
def pause(run_id, as_json, server=None, token=None):
    """Pause a running run: the item in flight finishes, then it halts (resumable)."""
    if server:
        return remote.control(server, token, run_id, "pause", as_json)
    _control(lifecycle.pause_run, run_id, as_json, reason="paused from the command line")


@click.command(epilog=EXIT_CODES_HELP)
@click.argument("run_id")
@click.option("--json", "as_json", is_flag=True, help="Print the result as one JSON object.")
@remote.server_options
def stop(run_id, as_json, server=None, token=None):
    """Stop a running or paused run now (e.g. one paused by its budget); resumable."""
    if server:
        return remote.control(server, token, run_id, "stop", as_json)
    _control(lifecycle.stop_run, run_id, as_json, reason="stopped from the command line")


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
            lifecycle.delete_run(run_id)
        except LlmbenchError as exc:
            raise translate(exc, as_json) from None
    if as_json:
        emit({"event": "run_deleted", "runId": run_id})
    else:
        click.echo(f"Deleted run {run_id}.")
