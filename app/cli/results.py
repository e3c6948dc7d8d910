"""`llmbench report` and `diff`: a run's files, and two runs compared (a CI regression gate)."""

import json
import sys
from pathlib import Path

import click

from ..config import load
from ..errors import LlmbenchError
from ..results import compare
from ..results import compare_files
from ..results.composite import settings_from
from ..runs.queries import get_run
from . import remote
from .exit_codes import EXIT_CODES_HELP
from .open_database import open_db
from .output import EXIT_GATE
from .output import EXIT_INVALID
from .output import CliError
from .output import check_outputs
from .output import db_context
from .output import num
from .output import translate
from .reports import OUTPUT_KINDS
from .reports import write_junit_file
from .reports import write_one
from .reports import write_reports
from .server_options import server_options

WORSE = compare_files.WORSE  # compare.py's verdict for a target significantly worse in B


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
@click.option(
    "-o",
    "--output",
    "output_files",
    multiple=True,
    metavar="FILE",
    callback=check_outputs,
    help="Write only this file, its format from the extension (.jsonl, .json, .csv, .xml, "
    ".md, .html), instead of the folder. Repeatable.",
)
@server_options
def report(run_id, out_dir, junit, pass_score, as_json, output_files, server=None, token=None):
    """Write summary.json, report.html, results.jsonl and results.csv for a run (or, with -o,
    just the files asked for).

    With --server: download summary.json, report.html, results-detailed.csv, report.md and
    results.jsonl of a run on that llmbench into --out."""
    if server:
        if junit or output_files:
            raise CliError(
                "--junit and -o work on a run here; with --server the report files go to --out",
                EXIT_INVALID,
            )
        remote.report(server, token, run_id, out_dir, as_json)
        return
    open_db()
    with db_context():
        try:
            get_run(run_id)
        except LlmbenchError as exc:
            raise translate(exc, as_json) from None
    for path in output_files:
        kind = OUTPUT_KINDS[Path(path).suffix.lower()]
        if kind == "junit":
            write_junit_file(run_id, path, pass_score, as_json, False)
        else:
            write_one(run_id, path, kind, as_json, False)
    if output_files and not out_dir:
        if junit:
            write_junit_file(run_id, junit, pass_score, as_json, False)
        return
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
    "compare page's verdict), has no scored task in RUN_B, or fails more items than in RUN_A.",
)
@click.option(
    "--max-drop",
    type=click.FloatRange(0),
    default=None,
    metavar="POINTS",
    help="Exit 4 when a target's mean score fell by more than POINTS, significant or not.",
)
@click.option(
    "--fail-on-inconclusive",
    is_flag=True,
    help="Exit 4 when a target has too few shared scored tasks for a verdict.",
)
def diff(run_a, run_b, as_json, limit, fail_on_regression, max_drop, fail_on_inconclusive):
    """Per-model and per-task score deltas from RUN_A to RUN_B (B - A).

    RUN_A and RUN_B are run ids in the database, or two results files kept from earlier jobs
    (results.jsonl, or summary.json: its means only, no per-task verdict).
    """
    limit = max(limit, 0) if not as_json else 1000
    files = [Path(r).is_file() for r in (run_a, run_b)]
    if all(files):
        try:
            result = compare_files.compare_results(
                compare_files.load_results(run_a), compare_files.load_results(run_b), limit
            )
        except LlmbenchError as exc:
            raise translate(exc, as_json) from None
    elif any(files):
        raise CliError(
            "give two run ids or two results files (results.jsonl or summary.json), not one of "
            "each",
            EXIT_INVALID,
        )
    else:
        open_db()
        with db_context():
            try:
                result = compare.compare_runs(
                    get_run(run_a),
                    get_run(run_b),
                    limit=limit,
                    composite_settings=settings_from(load()),
                )
            except LlmbenchError as exc:
                raise translate(exc, as_json) from None
    failures = compare_files.diff_failures(
        result["models"],
        fail_on_regression=fail_on_regression,
        max_drop=max_drop,
        fail_on_inconclusive=fail_on_inconclusive,
        names=(run_a, run_b),
    )
    if as_json:
        result["regressed"] = [m["label"] for m in result["models"] if m["verdict"] == WORSE]
        result["gateFailures"] = failures
        click.echo(json.dumps(result, indent=2, ensure_ascii=False, default=str))
    else:
        _print(result, run_a, run_b, limit)
    for failure in failures:
        if failure["gate"] == "--fail-on-regression":
            click.echo(f"Regression: {failure['target']} {failure['detail']}", err=True)
        else:
            click.echo(f"Gate {failure['gate']} failed: {failure['message']}", err=True)
    if failures:
        click.echo(f"diff: a gate failed (exit {EXIT_GATE})", err=True)
        sys.exit(EXIT_GATE)


def _print(result, run_a, run_b, limit):
    click.echo(f"A = {run_a}   B = {run_b}")
    # Labels in full: two targets of one model differ only at their labels' ends.
    width = max([40, *(len(m["label"]) for m in result["models"])])
    click.echo(
        f"{'target':{width}} {'A':>6} {'B':>6} {'delta':>7} {'comp A':>6} {'comp B':>6} "
        f"{'delta':>7} {'tasks':>5}  verdict"
    )
    for m in result["models"]:
        alert = "  REGRESSION" if m["regressionAlert"] else ""
        change = m["compositeDelta"]
        click.echo(
            f"{m['label']:{width}} {num(m['a']['avgScore']):>6} "
            f"{num(m['b']['avgScore']):>6} {num(m['scoreDelta']):>7} "
            f"{num(m['a']['compositeScore']):>6} {num(m['b']['compositeScore']):>6} "
            f"{'-' if change is None else f'{change:+.1f}':>7} "
            f"{m['sharedTasks']:>5}  {m['verdict']}{alert}"
        )
    if result["models"]:
        click.echo(f"comp = composite score. {result['compositeNote']}".rstrip())
        click.echo("speed A -> B:")
        for m in result["models"]:
            click.echo(f"  {m['label']}: {speed_line(m['speed'])}")
    for warning in result["warnings"]:
        click.echo(f"warning: {warning}")
    for label, names in (("only in A", result["onlyInA"]), ("only in B", result["onlyInB"])):
        if names:
            click.echo(f"{label}: {', '.join(names)}")
    lists = (
        ("Regressions", "regressions"),
        ("Improvements", "improvements"),
        ("Changes below the threshold", "belowThreshold"),
    )
    if result["regressionsCount"] or result["improvementsCount"] or result["belowThresholdCount"]:
        click.echo(result["listRule"])
    for title, key in lists:
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
