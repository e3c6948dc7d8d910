"""The CLI's output: error translation, exit codes, progress and JSONL events, reports."""

import json
import sys
import threading

import click
from rich.console import Console
from rich.progress import BarColumn
from rich.progress import Progress
from rich.progress import TaskProgressColumn
from rich.progress import TextColumn
from rich.progress import TimeElapsedColumn

from ..clock import utcnow
from ..db import database
from ..engine import lease
from ..errors import Conflict
from ..errors import NotFound
from ..errors import ValidationError
from ..errors import format_error
from ..exports.report import report_html_chunks
from ..exports.summary import averages_to_dict
from ..exports.summary import summary_json
from ..models import COMPLETED
from ..models import FAILED
from ..models import NEW
from ..models import WAITING_FOR_JUDGE
from ..private_files import open_private
from ..results.averages import model_averages
from ..runs.progress import progress_fraction
from ..runs.queries import get_run

EXIT_OK, EXIT_ERROR, EXIT_INVALID, EXIT_INTERRUPTED = 0, 1, 2, 3
FORMATS = ("yaml", "jsonl", "csv", "runner-jsonl", "json")


def db_context():
    """A connection for this thread (peewee connections are per thread)."""
    return database.connection_context()


class CliError(click.ClickException):
    """A domain error at the CLI edge: printed as 'Error: ...' with its exit code."""

    def __init__(self, message, exit_code=EXIT_ERROR, errors=None):
        super().__init__(message)
        self.exit_code = exit_code
        self.errors = errors or []


def translate(exc, as_json=False, note=None):
    """LlmbenchError -> CliError: invalid input 2, anything else 1 (the one CLI edge)."""
    invalid = isinstance(exc, ValidationError | NotFound)
    errors = getattr(exc, "errors", None) or [{"field": None, "message": exc.message}]
    if as_json:
        emit(
            {
                "event": "error",
                "message": exc.message,
                "errors": errors,
                **({"note": note} if note else {}),
            }
        )
    if isinstance(exc, ValidationError):
        noun = "problem" if len(errors) == 1 else "problems"
        message = f"{len(errors)} {noun}:\n" + "\n".join("  " + format_error(e) for e in errors)
    else:
        message = exc.message
    if note:
        message += "\n" + note
    return CliError(message, EXIT_INVALID if invalid else EXIT_ERROR, errors)


_emit_lock = threading.Lock()


def emit(event):
    """One JSON object per line on stdout, flushed (events come from worker threads too)."""
    with _emit_lock:
        sys.stdout.write(json.dumps(event, ensure_ascii=False, default=str) + "\n")
        sys.stdout.flush()


def num(value, digits=1):
    return "-" if value is None else f"{value:.{digits}f}"


class Output:
    """What a run prints: JSONL events (--json), errors only (--quiet), a progress bar on a
    terminal, or plain lines (CI logs). Human text goes to stderr, results to stdout."""

    SHOWN = {"phase_changed", "warmup_failed", "budget_reached", "run_finished", "abandoned"}

    def __init__(self, as_json, quiet):
        self.as_json, self.quiet = as_json, quiet
        self.console = Console(stderr=True)
        self.progress = None
        self.task = None
        self.counts = None  # NEW / waiting / completed / failed, kept from the run's events
        self.total = 0
        self.phase = ""

    def start(self, summary, event):
        """The run is about to work: say what it holds (and start the bar on a terminal)."""
        counts = summary["counts"]
        self.total = summary["totalItems"]
        self.counts = {
            "new": counts["NEW"],
            "waiting": counts["WAITING_FOR_JUDGE"],
            "completed": counts["COMPLETED"],
            "failed": summary["failedItems"],
        }
        self.phase = summary["phase"]
        targets = [f"{t['providerName']}/{t['model']}" for t in summary["targets"]]
        judge = f"{summary['judgeProviderName']}/{summary['judgeModel']}"
        if self.as_json:
            emit(
                {
                    "event": event,
                    "runId": summary["runId"],
                    "state": summary["state"],
                    "phase": summary["phase"],
                    "totalItems": summary["totalItems"],
                    "targets": targets,
                    "judge": judge,
                }
            )
            return
        if self.quiet:
            return
        self.note(
            f"Run {summary['runId']}: {summary['totalItems']} items, targets "
            f"{', '.join(targets)}; judge {judge}"
        )
        if self.console.is_terminal:
            self.progress = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                TaskProgressColumn(),
                TimeElapsedColumn(),
                console=self.console,
                transient=False,
            )
            self.progress.start()
            self.task = self.progress.add_task(summary["phase"].lower(), total=1.0)
            self.refresh()

    def event(self, event):
        """Called from the orchestrator's thread for every run event."""
        name = event.get("event")
        if name in ("run_started", "run_resumed") and "run" in event:
            self.start(event["run"], name)
            return
        self._count(name, event)
        if self.as_json:
            emit(event)
        elif event.get("level") == "ERROR":
            self.note(event.get("message") or name, always=True)
        elif name in self.SHOWN:
            self.note(event.get("message") or name)

    def _count(self, name, event):
        """Keep the bar's counts from the item events (no query per refresh)."""
        c = self.counts
        if c is None:
            return
        if name == "item_done":
            c["new"] -= 1
            c["waiting"] += 1
        elif name == "item_judged":
            c["waiting"] -= 1
            c["completed"] += 1
        elif name == "item_failed":
            c["waiting" if event.get("stage") == "judge" else "new"] -= 1
            c["failed"] += 1
        elif name in ("warmup_failed", "cant_be_finished"):
            moved = event.get("failed", event.get("count")) or 0
            c["waiting" if event.get("stage") == "judge" else "new"] -= moved
            c["failed"] += moved
        elif name == "phase_changed":
            self.phase = event.get("phase") or self.phase

    def refresh(self):
        """Redraw the bar from the counts kept so far."""
        if self.progress is None or self.counts is None:
            return
        c, total = self.counts, self.total
        # The one progress figure the live view and the API show too (runs/progress.py).
        done = progress_fraction(
            {
                NEW: c["new"],
                WAITING_FOR_JUDGE: c["waiting"],
                COMPLETED: c["completed"],
                FAILED: c["failed"],
            }
        )
        self.progress.update(
            self.task,
            completed=done,
            description=(
                f"{self.phase.lower()} answered {c['waiting'] + c['completed']}/{total}, "
                f"judged {c['completed']}, failed {c['failed']}"
            ),
        )

    def show_final(self, summary):
        """The bar's last state is the run's final one (from the database)."""
        if self.counts is not None:
            counts = summary["counts"]
            self.counts = {
                "new": counts["NEW"],
                "waiting": counts["WAITING_FOR_JUDGE"],
                "completed": counts["COMPLETED"],
                "failed": summary["failedItems"],
            }
            self.phase = summary["phase"]
        self.refresh()

    def note(self, message, always=False):
        """A line for people (stderr, above the bar); --quiet keeps only errors."""
        if self.as_json or (self.quiet and not always):
            return
        if self.progress is not None:
            self.progress.console.print(message, markup=False, highlight=False)
        else:
            click.echo(message, err=True)

    def stop(self):
        if self.progress is not None:
            self.progress.stop()
            self.progress = None

    def finish(self, summary, averages, code):
        """The end: the final counts, per-target averages and, when interrupted, how to go on."""
        self.show_final(summary)
        self.stop()
        run_id = summary["runId"]
        hint = f"llmbench resume {run_id}" if code == EXIT_INTERRUPTED else None
        if self.as_json:
            emit(
                {
                    "event": "run_summary",
                    "runId": run_id,
                    "state": summary["state"],
                    "counts": summary["counts"],
                    "failedItems": summary["failedItems"],
                    "models": averages,
                    "exitCode": code,
                    "resumeCommand": hint,
                }
            )
        elif not self.quiet:
            click.echo(
                f"Run {run_id} {summary['stateLabel']}: {summary['completedItems']} completed, "
                f"{summary['failedItems']} failed, {summary['counts']['NEW']} not answered"
            )
            click.echo(
                f"{'target':40} {'score':>6} {'done':>5} {'failed':>6} {'avg ms':>8} {'tok/s':>7}"
            )
            for row in averages:
                click.echo(
                    f"{row['target'][:40]:40} {num(row['avgScore']):>6} "
                    f"{row['completed']:>5} {row['failed']:>6} "
                    f"{num(row['avgTimeMs'], 0):>8} {num(row['avgTokensPerSecond']):>7}"
                )
        if hint:
            reason = summary["controlReason"] or "no reason given"
            click.echo(
                f"Run {run_id} is {summary['state']} ({reason}). Continue it with: {hint}", err=True
            )


def check_lease(as_json):
    """Exit 1 naming the holder when a live orchestrator (llmbench serve) holds the lease."""
    held = lease.current()
    if held is not None and held.expires_at > utcnow() and held.holder != lease.process_holder():
        message = (
            f"the orchestrator is held by {held.holder} (llmbench serve?) until "
            f"{held.expires_at:%H:%M:%S} UTC; start the run from the web app, or stop the "
            "server and try again"
        )
        raise translate(Conflict(message), as_json)


def averages(run_id):
    """Per-target averages for the end-of-run summary (summary.json's own shape)."""
    rows = [averages_to_dict(r) for r in model_averages(get_run(run_id))]
    return [
        {
            "target": r.get("label"),
            "completed": r.get("completed", 0),
            "failed": (r.get("failedAnswer") or 0) + (r.get("failedJudge") or 0),
            "avgScore": r.get("avgScore"),
            "avgTimeMs": r.get("avgTimeMs"),
            "avgTokensPerSecond": r.get("avgTokensPerSecond"),
            "costUsd": r.get("costUsd"),
        }
        for r in rows
    ]


def write_reports(run_id, folder, as_json, quiet):
    """summary.json and report.html into `folder` (the web app's own generators)."""
    summary_path, report_path = folder / "summary.json", folder / "report.html"
    with db_context():
        run_obj = get_run(run_id)
        try:
            folder.mkdir(parents=True, exist_ok=True)
            # Owner-only (0600), like the database: the report holds prompts and answers.
            with open_private(summary_path, "w", encoding="utf-8") as handle:
                handle.write(
                    json.dumps(summary_json(run_obj), indent=2, ensure_ascii=False, default=str)
                    + "\n"
                )
            with open_private(report_path, "w", encoding="utf-8") as handle:
                for chunk in report_html_chunks(run_obj):
                    handle.write(chunk)
        except OSError as exc:
            where = exc.filename or folder
            raise CliError(
                f"cannot write the reports to {folder}: {where}: "
                f"{exc.strerror or exc}; choose a folder you can write to "
                f"(llmbench report {run_id} --out DIR)"
            ) from None
    if as_json:
        emit(
            {
                "event": "report_written",
                "runId": run_id,
                "summary": str(summary_path),
                "report": str(report_path),
            }
        )
    elif not quiet:
        click.echo(f"Wrote {summary_path} and {report_path}")
