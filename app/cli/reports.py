"""A run's files on disk: summary.json, report.html, results.jsonl and results.csv in a folder,
and the JUnit XML file; each written by the exports package's own generators."""

import json
from pathlib import Path

import click

from ..config import load
from ..exports.item_results import results_csv
from ..exports.item_results import results_jsonl
from ..exports.junit import run_items
from ..exports.junit import write_junit
from ..exports.report import report_html_chunks
from ..exports.summary import summary_json
from ..files.private import open_private
from ..results.composite import settings_from
from ..runs.queries import get_run
from ..schedules.known_secrets import MaskedWriter
from ..schedules.known_secrets import mask_chunks
from .output import CliError
from .output import db_context
from .output import emit

DEFAULT_PASS_SCORE = 50.0


def _write_chunks(path, chunks):
    # Owner-only (0600), like the database: the files hold prompts and answers.
    # Masked once more on the way out: no secret the database knows reaches a file.
    with open_private(path, "w", encoding="utf-8", newline="") as handle:
        for chunk in mask_chunks(chunks):
            handle.write(chunk)


def write_reports(run_id, folder, as_json, quiet):
    """summary.json, report.html, results.jsonl and results.csv into `folder`; their paths."""
    folder = Path(folder)
    paths = {
        "summary": folder / "summary.json",
        "report": folder / "report.html",
        "resultsJsonl": folder / "results.jsonl",
        "resultsCsv": folder / "results.csv",
    }
    with db_context():
        run = get_run(run_id)
        summary = summary_json(run, settings_from(load()))
        try:
            folder.mkdir(parents=True, exist_ok=True)
            _write_chunks(
                paths["summary"],
                [json.dumps(summary, indent=2, ensure_ascii=False, default=str) + "\n"],
            )
            _write_chunks(paths["report"], report_html_chunks(run))
            _write_chunks(paths["resultsJsonl"], results_jsonl(run))
            _write_chunks(paths["resultsCsv"], results_csv(run))
        except OSError as exc:
            where = exc.filename or folder
            raise CliError(
                f"cannot write the reports to {folder}: {where}: "
                f"{exc.strerror or exc}; choose a folder you can write to "
                f"(llmbench report {run_id} --out DIR)"
            ) from None
    if as_json:
        emit({"event": "report_written", "runId": run_id, **{k: str(v) for k, v in paths.items()}})
    elif not quiet:
        click.echo(f"Wrote {', '.join(str(p) for p in paths.values())}", err=True)
    return {k: str(v) for k, v in paths.items()}


def write_junit_file(run_id, path, pass_score, as_json, quiet, gates=()):
    """The run's JUnit XML at `path` (one testcase per item, and one per gate case in `gates`:
    (classname, name, failure or None)); returns its totals."""
    path = Path(path)
    pass_score = DEFAULT_PASS_SCORE if pass_score is None else pass_score
    with db_context():
        run = get_run(run_id)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with open_private(path, "w", encoding="utf-8") as handle:
                masked = MaskedWriter(handle)
                totals = write_junit(
                    run_items(run),
                    masked,
                    run_id=run.run_id,
                    pass_score=pass_score,
                    timestamp=run.started_at,
                    gates=gates,
                )
                masked.flush()
        except OSError as exc:
            raise CliError(
                f"cannot write the JUnit file {path}: {exc.strerror or exc}; choose a file in "
                f"a folder you can write to (llmbench report {run_id} --junit PATH)"
            ) from None
    if as_json:
        emit({"event": "junit_written", "runId": run_id, "path": str(path), **totals})
    elif not quiet:
        click.echo(
            f"Wrote {path}: {totals['tests']} tests, {totals['failures']} failures, "
            f"{totals['skipped']} skipped (pass score {pass_score:g})",
            err=True,
        )
    return totals


def write_outputs(run_id, outputs, finished, as_json, quiet, gates=()):
    """Every file `outputs` asks for ({outDir, junit, passScore}); the reports only for a
    finished run, the JUnit file always (unfinished items are skipped; `gates` are the gate
    testcases it gets). Returns the paths; a file that cannot be written is said on stderr (the
    run itself is kept)."""
    written = {}
    jobs = []
    if outputs.get("outDir") and finished:
        folder = Path(outputs["outDir"]) / run_id
        jobs.append(lambda: written.update(write_reports(run_id, folder, as_json, quiet)))
    if outputs.get("junit"):

        def junit():
            write_junit_file(
                run_id, outputs["junit"], outputs.get("passScore"), as_json, quiet, gates
            )
            written["junit"] = str(outputs["junit"])

        jobs.append(junit)
    for job in jobs:
        try:
            job()
        except CliError as exc:
            if as_json:
                emit({"event": "error", "message": exc.message, "errors": []})
            click.echo(f"Error: {exc.message}", err=True)
    return written
