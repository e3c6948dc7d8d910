"""`llmbench run`, `resume`, `report` and `diff`: runs in the foreground and their results."""

import json
import sys
from pathlib import Path

import click

from ..datasets import run_config
from ..datasets import run_plan
from ..errors import LlmbenchError
from ..results import compare
from ..runs.queries import get_run
from ..schedules.service import after_run
from ..schedules.templates import find_template
from ..schedules.templates import start_template
from .db import missing_db_note
from .db import open_db
from .foreground import run_in_foreground
from .output import EXIT_INVALID
from .output import EXIT_OK
from .output import CliError
from .output import Output
from .output import check_lease
from .output import db_context
from .output import emit
from .output import num
from .output import translate
from .output import write_reports


@click.command()
@click.option(
    "-c",
    "--config",
    "config_path",
    type=click.Path(exists=True, dir_okay=False),
    help="Run config (YAML or JSON).",
)
@click.option(
    "--template",
    "template_ref",
    default=None,
    help="Run a saved template (its name or id) instead of a config file.",
)
@click.option(
    "--dry-run", is_flag=True, help="Validate and print the plan; no model call, nothing saved."
)
@click.option("--json", "as_json", is_flag=True, help="Print JSONL events on stdout.")
@click.option("-q", "--quiet", is_flag=True, help="Print errors only.")
def run(config_path, template_ref, dry_run, as_json, quiet):
    """Run a benchmark from a config file (or a saved template) in the foreground.

    \b
    Ctrl-C stops the run cleanly; continue it with `llmbench resume RUN_ID`.
    When it finishes, it is digested for Trends and checked for regressions (alerts and
    their webhooks go out before the command ends).
    If `llmbench serve` holds the orchestrator, nothing is started: exit 1 with who holds it
    (start the run from the web app instead, or stop the server).
    Exit codes: 0 finished (even with failed items), 1 error, 2 invalid config or
    dataset, 3 interrupted (resumable).
    """

    if (config_path is None) == (template_ref is None):
        raise CliError("give either -c CONFIG or --template NAME", EXIT_INVALID)
    if template_ref is not None:
        if dry_run:
            raise CliError(
                "--dry-run checks a config file (-c); a template is checked when saved",
                EXIT_INVALID,
            )
        _run_template(template_ref, as_json, quiet)
    cfg = open_db(check_only=dry_run)
    with db_context():
        try:
            plan = run_config.load(config_path)
        except LlmbenchError as exc:
            raise translate(exc, as_json, note=missing_db_note(cfg)) from None
        if dry_run:
            if as_json:
                emit(run_plan.plan_to_dict(plan))
            elif not quiet:
                click.echo("Dry run: nothing was saved and no model was called.")
                for line in run_plan.describe(plan):
                    click.echo("  " + line)
            return
        check_lease(as_json)
        try:
            created = run_plan.apply(plan)
        except LlmbenchError as exc:
            raise translate(exc, as_json) from None
        run_id = created.run_id
    code = run_in_foreground(run_id, cfg, Output(as_json, quiet))
    with db_context():
        after_run()
    if code == EXIT_OK and plan.out_dir:
        try:
            write_reports(run_id, Path(plan.out_dir) / run_id, as_json, quiet)
        except CliError as exc:
            # The run itself finished: say what went wrong with its files, keep exit 0.
            if as_json:
                emit({"event": "error", "message": exc.message, "errors": []})
            click.echo(f"Error: {exc.message}", err=True)
    sys.exit(code)


def _run_template(template_ref, as_json, quiet):
    """`llmbench run --template NAME`: start the template's run here (409 while another run
    is active: the CLI does not queue) and work it in the foreground."""
    cfg = open_db()
    with db_context():
        check_lease(as_json)
        try:
            template = find_template(template_ref)
            created = start_template(template.id, queue=False, triggered_by="cli")
        except LlmbenchError as exc:
            raise translate(exc, as_json) from None
        run_id = created.run_id
    code = run_in_foreground(run_id, cfg, Output(as_json, quiet))
    with db_context():
        after_run()
    sys.exit(code)


@click.command()
@click.argument("run_id")
@click.option("--json", "as_json", is_flag=True, help="Print JSONL events on stdout.")
@click.option("-q", "--quiet", is_flag=True, help="Print errors only.")
@click.option(
    "--max-budget-usd",
    type=float,
    default=None,
    help="Raise (or set) the run's budget before continuing.",
)
def resume(run_id, as_json, quiet, max_budget_usd):
    """Continue a stopped, paused or interrupted run where it left off (exit codes as `run`)."""
    cfg = open_db()
    out = Output(as_json, quiet)
    code = run_in_foreground(run_id, cfg, out, resume=True, max_budget_usd=max_budget_usd)
    with db_context():
        after_run()
    sys.exit(code)


# ---- report, diff --------------------------------------------------------------------------


@click.command()
@click.argument("run_id")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Folder for summary.json and report.html (default runs/RUN_ID).",
)
@click.option("--json", "as_json", is_flag=True, help="Print a JSON event instead of text.")
def report(run_id, out_dir, as_json):
    """Write summary.json and a self-contained report.html for a run."""
    open_db()
    with db_context():
        try:
            get_run(run_id)
        except LlmbenchError as exc:
            raise translate(exc, as_json) from None
    write_reports(run_id, Path(out_dir or Path("runs") / run_id), as_json, False)


@click.command()
@click.argument("run_a")
@click.argument("run_b")
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON.")
@click.option("--limit", default=10, show_default=True, help="Task changes listed per kind.")
def diff(run_a, run_b, as_json, limit):
    """Per-model and per-task score deltas from RUN_A to RUN_B (B - A)."""
    open_db()
    with db_context():
        try:
            result = compare.compare_runs(
                get_run(run_a),
                get_run(run_b),
                limit=max(limit, 0) if not as_json else 1000,
            )
        except LlmbenchError as exc:
            raise translate(exc, as_json) from None
    if as_json:
        click.echo(json.dumps(result, indent=2, ensure_ascii=False, default=str))
        return
    click.echo(f"A = {run_a}   B = {run_b}")
    click.echo(f"{'target':40} {'A':>6} {'B':>6} {'delta':>7} {'tasks':>5}  verdict")
    for m in result["models"]:
        alert = "  REGRESSION" if m["regressionAlert"] else ""
        click.echo(
            f"{m['label'][:40]:40} {num(m['a']['avgScore']):>6} "
            f"{num(m['b']['avgScore']):>6} {num(m['scoreDelta']):>7} "
            f"{m['sharedTasks']:>5}  {m['verdict']}{alert}"
        )
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
