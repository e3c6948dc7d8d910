"""What a running run prints: JSONL events (--json), errors only (--quiet), the live run screen
on a terminal (cli/screen_output.py), or plain lines (CI logs). Human text goes to stderr,
results (the per-target table or the summary screen) to stdout."""

import click

from ..clock import isoformat
from ..clock import utcnow
from ..runs.dto import judge_label
from ..runs.dto import status_counts
from ..runs.queries import get_run
from .ci_log import Ticker
from .lazy import load
from .output import EXIT_GATE
from .output import db_context
from .output import emit
from .output import num
from .output import target_lines

# The output for people, with the live screen, is loaded (with rich) only when people may
# watch: --json and --quiet show no screen, and a run's start-up spent ~40 ms importing rich.
FOR_PEOPLE = "app.cli.screen_output:ScreenOutput"


def make_output(as_json, quiet):
    """The run's output: JSONL (--json), errors only (--quiet), else the screen or plain lines."""
    if as_json or quiet:
        return Output(as_json, quiet)
    return load(FOR_PEOPLE)(as_json, quiet)


class Output:
    """One run's output; `event` is called from the engine's thread, the rest from the main.
    Plain lines (no screen) unless a subclass opens one (screen_output.ScreenOutput)."""

    SHOWN = {
        "phase_changed",
        "warmup_failed",
        "budget_reached",
        "run_finished",
        "abandoned",
        # A CI log says at once what changed the run's pace: a load step, a pause, a stop.
        "load_step",
        "run_paused",
        "run_stopped",
        "warmup_retry",  # a dead model server at the start: each try said, not 600 s of silence
    }

    def __init__(self, as_json, quiet, ticker=None, read_counts=None):
        self.as_json, self.quiet = as_json, quiet
        self.screen = None
        self.waits = {}  # provider id -> why it waits, as last said (its probes repeat it)
        # Without a screen, a progress line every 10 s (ci_log.py); tests give their clock.
        self.ticker = ticker or Ticker()
        self.read_counts = read_counts or _read_counts
        self.run_id = None

    def open_screen(self, summary):
        """The live screen for this run, or None for plain lines."""
        return None

    def print_summary(self, summary, rows, artifacts, gate_failures, hint):
        """The summary screen on stdout, in place of the table (only where a screen was open)."""

    def start(self, summary, event):
        """The run is about to work: say what it holds (and show the screen on a terminal)."""
        # provider/label: two profiles of one model differ in their labels
        targets = [
            f"{t['providerName']}/{t.get('label') or t['model']}" for t in summary["targets"]
        ]
        judge = judge_label(summary["judgeProviderName"], summary["judgeModel"])
        self.run_id = summary["runId"]
        self.ticker.begin(summary["counts"], judged=summary["judgeModel"] is not None)
        if self.as_json:
            emit(
                {
                    "event": event,
                    "at": _now(),
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
        self.screen = self.open_screen(summary)
        if self.screen is not None:
            self.screen.start(summary)
            return
        self.note(
            f"Run {summary['runId']}: {summary['totalItems']} items, targets "
            f"{', '.join(targets)}; judge {judge}"
        )

    def event(self, event):
        """Called from the orchestrator's thread for every run event."""
        name = event.get("event")
        if name in ("run_started", "run_resumed") and "run" in event:
            self.start(event["run"], name)
            return
        if self.as_json:
            emit({**event, "at": _now()})
        elif self.screen is not None:
            self.screen.on_event(event)
        elif event.get("level") == "ERROR":
            self.note(event.get("message") or name, always=True)
        elif name in self.SHOWN or self._new_wait(name, event):
            self.note(event.get("message") or name)

    def _new_wait(self, name, event):
        """True for a server's wait that changed why (refused, then loading model), and for
        its end; a probe failing the same way again is not said twice."""
        provider = event.get("providerId")
        if name == "provider_back":
            return self.waits.pop(provider, None) is not None
        if name != "provider_waiting" or self.waits.get(provider) == event.get("error"):
            return False
        self.waits[provider] = event.get("error")
        return True

    def refresh(self):
        """Redraw the screen; without one, the progress line (or --json event) when due."""
        if self.screen is not None:
            self.screen.refresh()
            return
        if self.quiet or not self.ticker.due():
            return
        counts = self.read_counts(self.run_id)
        if self.as_json:
            figures = self.ticker.figures(counts)
            emit({"event": "progress", "runId": self.run_id, "at": _now(), **figures})
        else:
            click.echo(f"Run {self.run_id} {self.ticker.line(counts)}", err=True)

    def quit_requested(self):
        """True once `q` was pressed on the screen."""
        return self.screen is not None and self.screen.quit.is_set()

    def note(self, message, always=False):
        """A line for people on stderr; --quiet keeps only errors."""
        if self.as_json or (self.quiet and not always):
            return
        if self.screen is not None:
            self.screen.on_event({"event": "note", "message": message, "level": "WARNING"})
            return
        click.echo(message, err=True)

    def shows_results(self):
        """Whether finish() prints the per-target rows (--quiet prints none: not worked out)."""
        return self.as_json or not self.quiet

    def stop(self):
        """Take the screen down (before an error message or the summary)."""
        if self.screen is not None:
            self.screen.stop()

    def finish(self, summary, rows, code, hint, artifacts=None, gate_failures=(), gates_passed=()):
        """The end: per-target results, files written, gates (those failed; gates_passed: the
        options of the gates asked for when all passed), and how to go on."""
        self.stop()
        artifacts = artifacts or {}
        run_id = summary["runId"]
        if self.as_json:
            emit(
                {
                    "event": "run_summary",
                    "at": _now(),
                    "runId": run_id,
                    "state": summary["state"],
                    "counts": summary["counts"],
                    "failedItems": summary["failedItems"],
                    "models": rows,
                    "files": artifacts,
                    "gates": list(gate_failures),
                    "gatesPassed": list(gates_passed),
                    "exitCode": code,
                    "resumeCommand": hint,
                }
            )
        elif not self.quiet and self.screen is not None:
            self.print_summary(summary, rows, artifacts, gate_failures, hint)
        elif not self.quiet:
            self._table(summary, rows)
        if not self.as_json:
            for failure in gate_failures:
                click.echo(f"Gate {failure['gate']} failed: {failure['message']}", err=True)
            if gates_passed and not self.quiet:
                # A CI log should say the gates were checked, not only when one fails.
                click.echo(f"Gates passed: {', '.join(gates_passed)}")
            if code == EXIT_GATE:
                click.echo(f"Run {run_id}: a quality gate failed (exit {EXIT_GATE})", err=True)
            if summary["completedItems"] == 0 and summary["state"] == "finished":
                click.echo(
                    f"Run {run_id} finished but nothing completed: every item failed "
                    "(see the errors above, or llmbench show RUN_ID)",
                    err=True,
                )
        if hint:
            reason = summary["controlReason"] or "no reason given"
            click.echo(
                f"Run {run_id} is {summary['state']} ({reason}). Continue it with: {hint}", err=True
            )

    def _table(self, summary, rows):
        click.echo(
            f"Run {summary['runId']} {summary['stateLabel']}: "
            f"{summary['completedItems']} completed, {summary['failedItems']} failed, "
            f"{summary['counts']['NEW']} not answered"
        )
        # Labels whole: two profiles of one model differ only at their labels' ends.
        width = max([40, *(len(str(row["target"])) for row in rows)])
        click.echo(
            f"{'target':{width}} {'score':>6} {'done':>5} {'failed':>6} {'avg ms':>8} "
            f"{'tok/s':>7} {'autofail':>8}"
        )
        for row in rows:
            rate = row.get("autoFailRate")
            click.echo(
                f"{row['target']:{width}} {num(row['avgScore']):>6} "
                f"{row['completed']:>5} {row['failed']:>6} "
                f"{num(row['avgTimeMs'], 0):>8} {num(row['avgTokensPerSecond']):>7} "
                f"{('-' if rate is None else f'{rate:.1f}%'):>8}"
            )
            for line in target_lines(row):
                click.echo(f"  {line}")


def _now():
    """The wall time a --json event carries (UTC, ISO 8601)."""
    return isoformat(utcnow())


def _read_counts(run_id):
    """The run's items per status, read on the main thread with its own connection."""
    with db_context():
        return status_counts(get_run(run_id))
