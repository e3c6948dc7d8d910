"""The CLI's edge: exit codes, error translation, JSONL events, the lines of speed figures.

What a running run prints (the screen, plain lines, JSONL) is cli/progress.py; the files it
writes are cli/reports.py; the per-target rows at a run's end, cli/target_rows.py. Light:
every command imports it, so nothing here reads a run's figures (numpy) or knows the engine."""

import json
import sys
import threading
import traceback

import click

from ..db.connection import database
from ..errors import NotFound
from ..errors import ValidationError
from ..errors import format_error

EXIT_OK, EXIT_ERROR, EXIT_INVALID, EXIT_INTERRUPTED, EXIT_GATE = 0, 1, 2, 3, 4
FORMATS = ("yaml", "jsonl", "csv", "runner-jsonl", "json")
IMPORT_FORMATS = (*FORMATS, "promptfoo")  # read only: a promptfoo suite is not exported


def db_context():
    """A connection for this thread (peewee connections are per thread)."""
    return database.connection_context()


class CliError(click.ClickException):
    """A domain error at the CLI edge: printed as 'Error: ...' with its exit code."""

    def __init__(self, message, exit_code=EXIT_ERROR, errors=None):
        super().__init__(message)
        self.exit_code = exit_code
        self.errors = errors or []


def show_traceback(exc):
    """The traceback behind an error's message, on stderr, when the command ran with --debug
    (a person reads the message; a bug report wants the traceback)."""
    ctx = click.get_current_context(silent=True)
    if ctx is not None and ctx.find_root().params.get("debug"):
        click.echo("".join(traceback.format_exception(exc)), err=True, nl=False)


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


# -o FILE: the format from the extension (cli/reports.py OUTPUT_KINDS says the same).
OUTPUT_EXTENSIONS = (".jsonl", ".json", ".csv", ".xml", ".md", ".html")


def check_outputs(ctx, param, values):
    """-o FILE: refused (exit 2, naming the option) unless its extension names a format."""
    for value in values:
        suffix = value[value.rfind(".") :].lower() if "." in value else ""
        if suffix not in OUTPUT_EXTENSIONS:
            raise click.BadParameter(
                f"{value}: the extension says the format; use one of "
                f"{', '.join(OUTPUT_EXTENSIONS)}",
                param_hint="-o/--output",
            )
    return values


_emit_lock = threading.Lock()


def emit(event):
    """One JSON object per line on stdout, flushed (events come from worker threads too)."""
    with _emit_lock:
        sys.stdout.write(json.dumps(event, ensure_ascii=False, default=str) + "\n")
        sys.stdout.flush()


def num(value, digits=1):
    return "-" if value is None else f"{value:.{digits}f}"


def step_table(steps):
    """The per-load-step table under a target: its lines (none without steps)."""
    if not steps:
        return []
    load = "rate/s" if steps[0]["mode"] == "rate" else "concurrency"
    lines = [
        f"{'step':>4} {load:>11} {'requests':>8} {'out tok/s':>9} {'p90 TTFT ms':>11} "
        f"{'p90 ITL ms':>10} {'SLO met':>9} {'goodput':>7} {'score':>6}"
    ]
    for s in steps:
        if s["sloMet"] is None:
            met = "-"
        else:
            met = f"{s['good']}/{s['requests']} {'yes' if s['sloMet'] else 'no'}"
        lines.append(
            f"{s['step']:>4} {s['load']:>11g} {s['requests']:>8} "
            f"{num(s['outputTokensPerSecond']):>9} {num(s['ttftP90Ms'], 0):>11} "
            f"{num(s['itlP90Ms']):>10} {met:>9} {num(s['goodput'], 2):>7} {num(s['score']):>6}"
        )
    return lines


def slo_line(slo):
    """'SLO: 9 of 24 answers good, goodput 0.09 answers/s; serves fake/m1 at concurrency 2
    with p90 TTFT ≤ 500 ms' (None without an SLO)."""
    if not slo:
        return None
    return (
        f"SLO: {slo['good']} of {slo['answers']} answers good, goodput "
        f"{num(slo['goodput'], 2)} answers/s; {slo['sentence']}"
    )


def quality_line(row):
    """'composite 49.6 · checks: 3 of 4 answers pass all (7 of 8 checks)' for a target's row
    (target_rows.averages); None when it has neither a composite nor a checked answer."""
    parts = []
    if row.get("compositeScore") is not None:
        parts.append(f"composite {num(row['compositeScore'])}")
    checks = row.get("checks")
    if checks:
        parts.append(
            f"checks: {checks['answersPassed']} of {checks['answers']} answers pass all "
            f"({checks['checksPassed']} of {checks['checks']} checks)"
        )
    return " · ".join(parts) or None


def speed_line(speed):
    """'TTFT p50 120 / p90 340 ms · ITL p50 21.0 ms · e2e p90 4100 ms · 310.2 out tok/s ·
    2.10 req/s · concurrency 3.9' ('-' for a figure it does not have)."""
    if not speed:
        return "speed: -"
    return (
        f"TTFT p50 {num(speed['ttftP50Ms'], 0)} / p90 {num(speed['ttftP90Ms'], 0)} ms · "
        f"ITL p50 {num(speed['itlP50Ms'])} ms · e2e p90 {num(speed['e2eP90Ms'], 0)} ms · "
        f"{num(speed['outputTokensPerSecond'])} out tok/s · "
        f"{num(speed['requestsPerSecond'], 2)} req/s · "
        f"concurrency {num(speed['achievedConcurrency'], 2)}"
    )


def target_lines(row):
    """The lines under a target's figures, as `show` and a run's end print them: quality
    (if any), speed, SLO (if any) and the load steps' table."""
    quality = quality_line(row)
    lines = [quality] if quality else []
    lines.append(speed_line(row.get("speed")))
    if row.get("slo"):
        lines.append(slo_line(row["slo"]))
    return [*lines, *step_table(row.get("steps"))]
