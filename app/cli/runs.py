"""`llmbench run` and `resume`: a run in the foreground, its files, its quality gates."""

import sys
from pathlib import Path

import click

from ..errors import LlmbenchError
from ..runconfig import reader
from ..runconfig import run_plan
from ..runs.queries import get_run
from ..runs.queries import latest_unfinished
from ..runs.reuse import reuse_counts
from ..schedules.template_start import find_template
from ..schedules.template_start import start_template
from .exit_codes import EXIT_CODES_HELP
from .open_database import missing_db_note
from .open_database import open_db
from .options import gate_options
from .options import gates_from
from .options import override_options
from .options import overrides_from
from .output import EXIT_INVALID
from .output import CliError
from .output import check_lease
from .output import db_context
from .output import emit
from .output import translate
from .progress import make_output
from .watched_run import conclude
from .watched_run import run_in_foreground


def _absolute(path):
    return str(Path(path).resolve()) if path else None


def _outputs(out_dir, junit, pass_score):
    """Where this run's files go (kept with the run, so `resume` writes them too)."""
    outputs = {"outDir": _absolute(out_dir), "junit": _absolute(junit), "passScore": pass_score}
    return {k: v for k, v in outputs.items() if v is not None}


@click.command(epilog=EXIT_CODES_HELP)
@click.option(
    "-c",
    "--config",
    "config_path",
    type=click.Path(exists=True, dir_okay=False),
    help="Run config (YAML or JSON; ours or an apocbench-style apocbench.yml).",
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
@click.option(
    "--reuse",
    is_flag=True,
    help="Take answers (and judgements) from earlier runs with the same context hash "
    "instead of asking again; reused items are marked and left out of speed figures. Off by "
    "default: a benchmark measures speed.",
)
@override_options
@gate_options
def run(
    config_path,
    template_ref,
    dry_run,
    as_json,
    quiet,
    reuse,
    limit,
    categories,
    concurrency,
    name,
    judge,
    sets,
    allow_unpriced,
    skip_unsupported,
    fail_under,
    max_failed_pct,
    max_auto_fail_pct,
    min_composite,
    max_ttft_p90,
    max_itl_p90,
    min_goodput,
    junit,
    pass_score,
):
    """Run a benchmark from a config file (or a saved template) in the foreground.

    \b
    On a terminal a live screen shows the run (q quits, l log, s scores); elsewhere plain
    lines. Ctrl-C (or q) stops the run cleanly; continue it with `llmbench resume RUN_ID`.
    When it finishes, it is digested for Trends and checked for regressions (alerts and
    their webhooks go out before the command ends).
    If another orchestrator (llmbench serve) holds the database, nothing is started: exit 1
    naming it.
    """
    gates = gates_from(
        fail_under,
        max_failed_pct,
        max_auto_fail_pct,
        min_composite,
        max_ttft_p90,
        max_itl_p90,
        min_goodput,
    )
    if (config_path is None) == (template_ref is None):
        raise CliError("give either -c CONFIG or --template NAME", EXIT_INVALID)
    if template_ref is not None:
        if dry_run:
            raise CliError(
                "--dry-run checks a config file (-c); a template is checked when saved",
                EXIT_INVALID,
            )
        _run_template(template_ref, as_json, quiet, _outputs(None, junit, pass_score), gates)
    cfg = open_db(check_only=dry_run)
    overrides = overrides_from(limit, categories, concurrency, name, judge, sets)
    with db_context():
        try:
            plan = reader.load(
                config_path,
                overrides=overrides,
                allow_unpriced=allow_unpriced,
                skip_unsupported=skip_unsupported,
            )
        except LlmbenchError as exc:
            raise translate(exc, as_json, note=missing_db_note(cfg)) from None
        if dry_run:
            _dry_run(plan, as_json, quiet)
            return
        if not as_json:  # before the run starts: what --skip-unsupported left out
            for line in run_plan.left_out(plan):
                click.echo(line, err=True)
        check_lease(as_json)
        outputs = _outputs(plan.out_dir, junit, pass_score)
        earlier = latest_unfinished(plan.name) if plan.resume else None
        try:
            if earlier is not None:
                run_id = earlier.run_id
                outputs = {**(earlier.outputs or {}), **outputs}
            else:
                run_id = run_plan.apply(plan, reuse=reuse, outputs=outputs).run_id
        except LlmbenchError as exc:
            raise translate(exc, as_json) from None
        if reuse and earlier is None:
            _say_reused(run_id, as_json, quiet)
    out = make_output(as_json, quiet)
    if earlier is not None and not as_json and not quiet:
        click.echo(f"run.resume: continuing {run_id} (the latest unfinished run)", err=True)
    code = run_in_foreground(run_id, cfg, out, resume=earlier is not None)
    sys.exit(conclude(run_id, out, code, outputs, gates))


def _run_template(template_ref, as_json, quiet, outputs, gates):
    """`llmbench run --template NAME`: start the template's run here (409 while another run
    is active: the CLI does not queue) and work it in the foreground."""
    cfg = open_db()
    with db_context():
        check_lease(as_json)
        try:
            template = find_template(template_ref)
            run_id = start_template(template.id, queue=False, triggered_by="cli").run_id
        except LlmbenchError as exc:
            raise translate(exc, as_json) from None
    out = make_output(as_json, quiet)
    code = run_in_foreground(run_id, cfg, out)
    sys.exit(conclude(run_id, out, code, outputs, gates))


def _dry_run(plan, as_json, quiet):
    if as_json:
        emit(run_plan.plan_to_dict(plan))
    elif not quiet:
        click.echo("Dry run: nothing was saved and no model was called.")
        for line in run_plan.describe(plan):
            click.echo("  " + line)


def _say_reused(run_id, as_json, quiet):
    """Report the hits of --reuse (how many answers and judgements were taken)."""
    hits = reuse_counts(get_run(run_id))
    if as_json:
        emit({"event": "reused", "runId": run_id, **hits})
    elif not quiet:
        click.echo(
            f"Reused {hits['answers']} answers and {hits['judgements']} judgements from earlier "
            "runs (same context hash); they are left out of speed figures",
            err=True,
        )


@click.command(epilog=EXIT_CODES_HELP)
@click.argument("run_id")
@click.option("--json", "as_json", is_flag=True, help="Print JSONL events on stdout.")
@click.option("-q", "--quiet", is_flag=True, help="Print errors only.")
@click.option(
    "--max-budget-usd",
    type=float,
    default=None,
    help="Raise (or set) the run's budget before continuing.",
)
@gate_options
def resume(
    run_id,
    as_json,
    quiet,
    max_budget_usd,
    fail_under,
    max_failed_pct,
    max_auto_fail_pct,
    min_composite,
    max_ttft_p90,
    max_itl_p90,
    min_goodput,
    junit,
    pass_score,
):
    """Continue a stopped, paused or interrupted run where it left off.

    The run's reports (its config's out_dir) and JUnit file are written again at the end;
    --junit and --pass-score change them for this invocation.
    """
    cfg = open_db()
    with db_context():
        try:
            outputs = dict(get_run(run_id).outputs or {})
        except LlmbenchError as exc:
            raise translate(exc, as_json) from None
    outputs.update(_outputs(None, junit, pass_score))
    out = make_output(as_json, quiet)
    code = run_in_foreground(run_id, cfg, out, resume=True, max_budget_usd=max_budget_usd)
    gates = gates_from(
        fail_under,
        max_failed_pct,
        max_auto_fail_pct,
        min_composite,
        max_ttft_p90,
        max_itl_p90,
        min_goodput,
    )
    sys.exit(conclude(run_id, out, code, outputs, gates))
