"""`llmbench run` and `resume`: a run in the foreground, its files, its quality gates."""

import os
import shlex
import sys
from contextlib import contextmanager
from pathlib import Path

import click

from ..db.connection import database
from ..engine import lease
from ..errors import Conflict
from ..errors import LlmbenchError
from ..runconfig import run_plan
from ..runs.control import resume_run
from ..runs.queries import get_run
from ..runs.queries import latest_unfinished
from ..runs.records import record_invocation
from ..runs.reuse import reuse_counts
from ..runs.state import run_state
from ..schedules.known_secrets import known_redactor
from ..schedules.template_start import find_template
from ..schedules.template_start import start_template
from .exit_codes import EXIT_CODES_HELP
from .followed_run import follow_in_server
from .followed_run import server_holder
from .lazy import load
from .open_database import missing_db_note
from .open_database import open_db
from .options import file_options
from .options import gate_options
from .options import gates_from
from .options import override_options
from .options import overrides_from
from .options import selection_options
from .output import EXIT_INVALID
from .output import CliError
from .output import db_context
from .output import emit
from .output import translate
from .plans import read_plan
from .progress import make_output
from .server_options import server_options
from .watched_run import conclude
from .watched_run import run_in_foreground
from .watched_run import say_waiting
from .watched_run import stop_paused_in_ci


def ci_options(command):
    """--ci and --keep-paused: what a CI job leaves behind when its run ends paused."""
    command = click.option(
        "--keep-paused",
        is_flag=True,
        help="With --ci (or CI=true): leave a run that ended paused paused.",
    )(command)
    return click.option(
        "--ci",
        "ci",
        is_flag=True,
        help="A CI job (also when the environment has CI=true): a run that ends paused "
        "(exit 3: budget, judge, outage) is stopped, resumable, so the job leaves nothing "
        "paused behind.",
    )(command)


def in_ci(ci_flag):
    """--ci, or a CI environment (CI=true, as GitHub Actions, GitLab and most others set)."""
    return ci_flag or os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def _absolute(path):
    return str(Path(path).resolve()) if path else None


def _outputs(out_dir, junit, pass_score, files=(), summary_md=None):
    """Where this run's files go (kept with the run, so `resume` writes them too); every
    path given on the command line is relative to the working folder."""
    outputs = {
        "outDir": _absolute(out_dir),
        "junit": _absolute(junit),
        "passScore": pass_score,
        "files": [_absolute(f) for f in files] or None,
        "summaryMd": _absolute(summary_md),
        # GitHub Actions' job summary: each step appends its part.
        "stepSummary": os.environ.get("GITHUB_STEP_SUMMARY") or None,
    }
    return {k: v for k, v in outputs.items() if v is not None}


def _kept(outputs):
    """A run's stored outputs for another invocation: its own job summary file (another CI
    job's, long gone) is not one of them."""
    return {k: v for k, v in (outputs or {}).items() if k != "stepSummary"}


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
@selection_options
@gate_options
@file_options
@ci_options
@server_options
def run(
    config_path,
    template_ref,
    dry_run,
    as_json,
    quiet,
    reuse,
    ci,
    keep_paused,
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
    output_files,
    summary_md,
    server=None,
    token=None,
    **selection,
):
    """Run a benchmark from a config file (or a saved template) in the foreground.

    \b
    On a terminal a live screen shows the run (q quits, l log, s scores); elsewhere plain
    lines. Ctrl-C (or q) stops the run cleanly; continue it with `llmbench resume RUN_ID`.
    When it finishes, it is digested for Trends and checked for regressions (alerts and
    their webhooks go out before the command ends).
    A paused or stopped run never keeps a new one from starting: it waits, resumable, and
    the new run names it. With --ci (or CI=true) a run that ends paused is stopped.
    Beside a `llmbench serve` on the same database, the run is handed to the server's
    orchestrator (queued if it is busy) and followed here; Ctrl-C pauses it. If another
    orchestrator (another llmbench run) holds the database, nothing is started: exit 1
    naming it. With --server URL (and --token) a template starts on that llmbench and is
    followed here until it ends (0 finished, 3 paused or stopped; Ctrl-C pauses it).
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
    if server:
        if dry_run:
            raise CliError(
                "--dry-run checks a config file (-c); a template is checked when saved",
                EXIT_INVALID,
            )
        _refuse_local_options(config_path, template_ref, gates, junit, output_files, summary_md)
        stop_paused = in_ci(ci) and not keep_paused
        run_template = load("app.cli.remote:run_template")
        sys.exit(run_template(server, token, template_ref, as_json, quiet, stop_paused))
    if (config_path is None) == (template_ref is None):
        raise CliError("give either -c CONFIG or --template NAME", EXIT_INVALID)
    if template_ref is not None:
        if dry_run:
            raise CliError(
                "--dry-run checks a config file (-c); a template is checked when saved",
                EXIT_INVALID,
            )
        _run_template(
            template_ref,
            as_json,
            quiet,
            _outputs(None, junit, pass_score, output_files, summary_md),
            gates,
            stop_paused=in_ci(ci) and not keep_paused,
        )
    cfg = open_db(check_only=dry_run)
    overrides = overrides_from(limit, categories, concurrency, name, judge, sets)
    with db_context(), _dataset_and_run(dry_run) as together:
        try:
            plan = read_plan(
                config_path,
                overrides,
                {**selection, "pass_score": pass_score},
                allow_unpriced=allow_unpriced,
                skip_unsupported=skip_unsupported,
                store_dataset=together is not None,
            )
        except LlmbenchError as exc:
            raise translate(exc, as_json, note=missing_db_note(cfg)) from None
        if dry_run:
            _dry_run(plan, as_json, quiet)
            return
        if not as_json:  # before the run starts: what --skip-unsupported left out
            for line in run_plan.left_out(plan):
                click.echo(line, err=True)
        server = server_holder()  # a llmbench serve holds the database: it works the run
        if server is None:
            check_lease(as_json)
        outputs = _outputs(plan.out_dir, junit, pass_score, output_files, summary_md)
        earlier = latest_unfinished(plan.name) if plan.resume else None
        try:
            if earlier is not None:
                together.rollback()  # a run continued: its dataset is not imported again
                run_id = earlier.run_id
                outputs = {**_kept(earlier.outputs), **outputs}
                if server is not None:
                    _resume_for_server(run_id)
            else:
                queue = server is not None
                created = run_plan.apply(plan, reuse=reuse, outputs=outputs, queue=queue)
                run_id = created.run_id
                _record(created, config_path)
        except LlmbenchError as exc:
            raise translate(exc, as_json) from None
        if reuse and earlier is None:
            _say_reused(run_id, as_json, quiet)
    out = make_output(as_json, quiet)
    if earlier is not None and not as_json and not quiet:
        click.echo(f"run.resume: continuing {run_id} (the latest unfinished run)", err=True)
    say_waiting(run_id, out)
    if server is not None:
        code = follow_in_server(run_id, out, server.holder)
    else:
        code = run_in_foreground(run_id, cfg, out, resume=earlier is not None)
    if in_ci(ci) and not keep_paused:
        stop_paused_in_ci(run_id, out)
    sys.exit(conclude(run_id, out, code, outputs, gates))


@contextmanager
def _dataset_and_run(dry_run):
    """The transaction a run's dataset and the run are stored in, together or not at all:
    the dataset is imported as read_plan checks it (one read of the file) and any problem
    after it (a bad line near its end, the config, the run) rolls both back. None for
    --dry-run, which stores nothing. The engine starts after it is committed."""
    if dry_run:
        yield None
        return
    with database.atomic("IMMEDIATE") as together:
        yield together


def _refuse_local_options(config_path, template_ref, gates, junit, output_files, summary_md):
    """--server starts a saved template there; what only a run worked here can do is refused
    by name before anything starts."""
    if config_path is not None or template_ref is None:
        raise CliError(
            "--server starts a saved template on that llmbench: give --template NAME "
            "(a config file, -c, runs here)",
            EXIT_INVALID,
        )
    local = [
        ("a quality or speed gate (--fail-under, --max-failed-pct …)", bool(gates)),
        ("--junit", bool(junit)),
        ("-o/--output", bool(output_files)),
        ("--summary-md", bool(summary_md)),
    ]
    named = [name for name, given in local if given]
    if named:
        raise CliError(
            f"{', '.join(named)} works on a run here, not with --server; download the files "
            "afterwards with `llmbench report RUN_ID --server URL`",
            EXIT_INVALID,
        )


def _run_template(template_ref, as_json, quiet, outputs, gates, stop_paused=False):
    """`llmbench run --template NAME`: start the template's run here (409 while another run
    is running: the CLI does not queue) and work it in the foreground; beside a server, queue
    it there and follow it."""
    cfg = open_db()
    with db_context():
        server = server_holder()
        if server is None:
            check_lease(as_json)
        try:
            template = find_template(template_ref)
            queue = server is not None
            created = start_template(template.id, queue=queue, triggered_by="cli")
            run_id = created.run_id
            _record(created, None)
        except LlmbenchError as exc:
            raise translate(exc, as_json) from None
    out = make_output(as_json, quiet)
    say_waiting(run_id, out)
    if server is not None:
        code = follow_in_server(run_id, out, server.holder)
    else:
        code = run_in_foreground(run_id, cfg, out)
    if stop_paused:
        stop_paused_in_ci(run_id, out)
    sys.exit(conclude(run_id, out, code, outputs, gates))


def _record(run, config_path):
    """Keep the command line and the config file as given with the run, every secret the
    database holds masked (the config's headers are stored by now)."""
    redactor = known_redactor()

    def masked(text):
        return redactor.mask(text)[0] if redactor and text else text

    config = (
        Path(config_path).read_text(encoding="utf-8", errors="replace") if config_path else None
    )
    record_invocation(run, masked(shlex.join(["llmbench", *sys.argv[1:]])), masked(config))


def _resume_for_server(run_id, max_budget_usd=None):
    """Continue a paused or stopped run for the server's orchestrator to work (409 while it
    works on another)."""
    if run_state(get_run(run_id)) != "running":
        resume_run(run_id, max_budget_usd=max_budget_usd)


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
@file_options
@ci_options
def resume(
    run_id,
    as_json,
    quiet,
    max_budget_usd,
    ci,
    keep_paused,
    fail_under,
    max_failed_pct,
    max_auto_fail_pct,
    min_composite,
    max_ttft_p90,
    max_itl_p90,
    min_goodput,
    junit,
    pass_score,
    output_files,
    summary_md,
):
    """Continue a stopped, paused or interrupted run where it left off.

    The run's reports (its config's out_dir) and JUnit file are written again at the end;
    --junit and --pass-score change them for this invocation.
    """
    cfg = open_db()
    with db_context():
        server = server_holder()
        try:
            outputs = _kept(get_run(run_id).outputs)
            if server is not None:
                _resume_for_server(run_id, max_budget_usd)
        except LlmbenchError as exc:
            raise translate(exc, as_json) from None
    outputs.update(_outputs(None, junit, pass_score, output_files, summary_md))
    out = make_output(as_json, quiet)
    if server is not None:
        code = follow_in_server(run_id, out, server.holder)
    else:
        code = run_in_foreground(run_id, cfg, out, resume=True, max_budget_usd=max_budget_usd)
    if in_ci(ci) and not keep_paused:
        stop_paused_in_ci(run_id, out)
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


def check_lease(as_json):
    """Exit 1 naming the holder (llmbench serve or run, its pid) when another live
    orchestrator holds the lease; a dead holder on this host is no obstacle."""
    held = lease.live_holder()
    if held is not None:
        message = (
            f"the orchestrator is held by {lease.describe_holder(held.holder)} until "
            f"{held.expires_at:%H:%M:%S} UTC; start the run from the web app (if that is "
            "llmbench serve), or stop that process and try again"
        )
        raise translate(Conflict(message), as_json)
