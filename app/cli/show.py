"""`llmbench show RUN_ID`: one run's state, judge, counts, per-target results (target_rows.py)
and why it stopped."""

import json

import click

from ..errors import LlmbenchError
from ..runs.dto import judge_label
from ..runs.dto import run_summary
from ..runs.queries import get_run
from ..runs.queries import list_logs
from ..runs.records import run_record
from ..runs.state import run_state
from .exit_codes import EXIT_CODES_HELP
from .lazy import load
from .open_database import open_db
from .output import db_context
from .output import num
from .output import target_lines
from .output import translate
from .resume_hint import resume_hint
from .server_options import server_options
from .target_rows import averages

# Whether a live orchestrator holds the database (the engine's lease, with psutil), asked only
# about a run that says it is running.
LIVE_HOLDER = "app.engine.lease:live_holder"


@click.command(epilog=EXIT_CODES_HELP)
@click.argument("run_id")
@click.option("--json", "as_json", is_flag=True, help="Print the run as one JSON object.")
@server_options
def show(run_id, as_json, server=None, token=None):
    """One run: state, judge, targets, counts, per-target results, why it stopped."""
    if server:
        return load("app.cli.remote:show")(server, token, run_id, as_json)
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
        orphaned = state == "running" and load(LIVE_HOLDER)() is None
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
        for line in target_lines(row):
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
