"""`llmbench report` and `diff`: a run's files, and two runs compared (a CI regression gate)."""

import json
import sys
from pathlib import Path

import click

from ..config import load
from ..errors import LlmbenchError
from ..results import compare
from ..results.composite import settings_from
from ..runs.queries import get_run
from .exit_codes import EXIT_CODES_HELP
from .open_database import open_db
from .output import EXIT_GATE
from .output import db_context
from .output import num
from .output import translate
from .reports import write_junit_file
from .reports import write_reports

# compare.py's verdict for a target that got significantly worse from A to B.
WORSE = "worse"


@click.command()
@click.argument("run_id")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Folder for summary.json, report.html, results.jsonl and results.csv "
    "(default runs/RUN_ID).",
)
@click.option("--junit", type=click.Path(dir_okay=False), help="Also write a JUnit XML file.")
@click.option(
    "--pass-score",
    type=click.FloatRange(0, 100),
    default=None,
    help="The score a JUnit testcase needs to pass (default 50).",
)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON event instead of text.")
def report(run_id, out_dir, junit, pass_score, as_json):
    """Write summary.json, report.html, results.jsonl and results.csv for a run."""
    open_db()
    with db_context():
        try:
            get_run(run_id)
        except LlmbenchError as exc:
            raise translate(exc, as_json) from None
    write_reports(run_id, Path(out_dir or Path("runs") / run_id), as_json, False)
    if junit:
        write_junit_file(run_id, junit, pass_score, as_json, False)


@click.command(epilog=EXIT_CODES_HELP)
@click.argument("run_a")
@click.argument("run_b")
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON.")
@click.option("--limit", default=10, show_default=True, help="Task changes listed per kind.")
@click.option(
    "--fail-on-regression",
    is_flag=True,
    help="Exit 4 when a target shared by both runs is significantly worse in RUN_B (the "
    "compare page's verdict).",
)
def diff(run_a, run_b, as_json, limit, fail_on_regression):
    """Per-model and per-task score deltas from RUN_A to RUN_B (B - A)."""
    open_db()
    with db_context():
        try:
            result = compare.compare_runs(
                get_run(run_a),
                get_run(run_b),
                limit=max(limit, 0) if not as_json else 1000,
                composite_settings=settings_from(load()),
            )
        except LlmbenchError as exc:
            raise translate(exc, as_json) from None
    regressed = [m for m in result["models"] if m["verdict"] == WORSE]
    if as_json:
        result["regressed"] = [m["label"] for m in regressed]
        click.echo(json.dumps(result, indent=2, ensure_ascii=False, default=str))
    else:
        _print(result, run_a, run_b, limit)
    if fail_on_regression and regressed:
        for m in regressed:
            click.echo(
                f"Regression: {m['label']} is worse in {run_b} than in {run_a} "
                f"({num(m['a']['avgScore'])} -> {num(m['b']['avgScore'])}, "
                f"{m['pairedScore']['n']} shared tasks)",
                err=True,
            )
        sys.exit(EXIT_GATE)


def _print(result, run_a, run_b, limit):
    click.echo(f"A = {run_a}   B = {run_b}")
    click.echo(
        f"{'target':40} {'A':>6} {'B':>6} {'delta':>7} {'comp A':>6} {'comp B':>6} "
        f"{'delta':>7} {'tasks':>5}  verdict"
    )
    for m in result["models"]:
        alert = "  REGRESSION" if m["regressionAlert"] else ""
        change = m["compositeDelta"]
        click.echo(
            f"{m['label'][:40]:40} {num(m['a']['avgScore']):>6} "
            f"{num(m['b']['avgScore']):>6} {num(m['scoreDelta']):>7} "
            f"{num(m['a']['compositeScore']):>6} {num(m['b']['compositeScore']):>6} "
            f"{'-' if change is None else f'{change:+.1f}':>7} "
            f"{m['sharedTasks']:>5}  {m['verdict']}{alert}"
        )
    if result["models"]:
        click.echo(f"comp = composite score. {result['compositeNote']}")
        click.echo("speed A -> B:")
        for m in result["models"]:
            click.echo(f"  {m['label']}: {speed_line(m['speed'])}")
    for warning in result["warnings"]:
        click.echo(f"warning: {warning}")
    for label, names in (("only in A", result["onlyInA"]), ("only in B", result["onlyInB"])):
        if names:
            click.echo(f"{label}: {', '.join(names)}")
    for title, key in (("Regressions", "regressions"), ("Improvements", "improvements")):
        rows = result[key][:limit]
        if rows:
            click.echo(f"{title} ({result[key + 'Count']}):")
            for c in rows:
                click.echo(
                    f"  {c['label']} {c['taskKey']}: {num(c['scoreA'])} -> "
                    f"{num(c['scoreB'])} ({c['delta']:+.1f})"
                )


# The speed figures' short names on one line (ms figures whole, rates with decimals).
SPEED_SHORT = {
    "ttftP50Ms": ("ttft p50", 0),
    "ttftP90Ms": ("p90", 0),
    "itlP50Ms": ("itl p50", 0),
    "e2eP90Ms": ("e2e p90", 0),
    "outputTokensPerSecond": ("tok/s", 1),
    "goodput": ("goodput", 2),
}


def speed_line(speed):
    """One target's speed A -> B on one line: each figure, then the verdict (or why there is
    none)."""
    if not speed["figures"]:
        return speed["why"]
    parts = []
    for f in speed["figures"]:
        name, digits = SPEED_SHORT[f["key"]]
        parts.append(f"{name} {num(f['a'], digits)}->{num(f['b'], digits)}")
    return f"{', '.join(parts)}; {speed['verdict']}"
