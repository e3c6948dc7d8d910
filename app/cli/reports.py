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
from ..exports.markdown import markdown
from ..exports.report import report_html_chunks
from ..exports.summary import summary_json
from ..files.private import open_private
from ..results.composite import settings_from
from ..runs.queries import get_run
from ..runs.state import run_state as run_summary_state
from ..schedules.known_secrets import MaskedWriter
from ..schedules.known_secrets import mask_chunks
from .output import CliError
from .output import db_context
from .output import emit
from .output import num
from .target_rows import averages

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
    for path in outputs.get("files") or ():
        kind = OUTPUT_KINDS[Path(path).suffix.lower()]
        if kind != "junit" and not finished:
            continue  # as with out_dir: the reports of a finished run only

        def one(path=path, kind=kind):
            if kind == "junit":
                write_junit_file(run_id, path, outputs.get("passScore"), as_json, quiet, gates)
            else:
                write_one(run_id, path, kind, as_json, quiet)
            written[str(path)] = str(path)

        jobs.append(one)
    for job in jobs:
        try:
            job()
        except CliError as exc:
            if as_json:
                emit({"event": "error", "message": exc.message, "errors": []})
            click.echo(f"Error: {exc.message}", err=True)
    return written


# `-o/--output FILE`: the format from the extension.
OUTPUT_KINDS = {
    ".jsonl": "resultsJsonl",
    ".json": "summary",
    ".csv": "resultsCsv",
    ".xml": "junit",
    ".md": "markdown",
    ".html": "report",
}


def _chunks(run, kind):
    if kind == "summary":
        summary = summary_json(run, settings_from(load()))
        return [json.dumps(summary, indent=2, ensure_ascii=False, default=str) + "\n"]
    if kind == "report":
        return report_html_chunks(run)
    if kind == "resultsJsonl":
        return results_jsonl(run)
    if kind == "resultsCsv":
        return results_csv(run)
    return markdown(run, composite_settings=settings_from(load()))


def write_one(run_id, path, kind, as_json, quiet):
    """One file of `-o FILE` (not the JUnit one): summary.json's, report.html's, results.jsonl's,
    results.csv's or the Markdown export's content at `path`."""
    path = Path(path)
    with db_context():
        run = get_run(run_id)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            _write_chunks(path, _chunks(run, kind))
        except OSError as exc:
            raise CliError(
                f"cannot write {path}: {exc.strerror or exc}; choose a file in a folder you can "
                f"write to (llmbench report {run_id} --out DIR)"
            ) from None
    if as_json:
        emit({"event": "file_written", "runId": run_id, "path": str(path), "format": kind})
    elif not quiet:
        click.echo(f"Wrote {path}", err=True)


def summary_markdown(run_id, artifacts, failures, gates):
    """The run for a CI job's summary page ($GITHUB_STEP_SUMMARY): its state, a table of
    targets and scores, the gates asked and how they went, and the files written."""
    with db_context():
        run = get_run(run_id)
        rows = averages(run_id)
        state = run_summary_state(run)
    lines = [f"### llmbench run `{run_id}`: {state}", ""]
    lines.append("| Target | Score | Completed | Failed | Output tok/s | p90 TTFT ms |")
    lines.append("|---|---:|---:|---:|---:|---:|")
    for row in rows:
        speed = row.get("speed") or {}
        label = str(row["target"]).replace("|", "\\|")
        lines.append(
            f"| {label} | {num(row['avgScore'])} | {row['completed']} | {row['failed']} | "
            f"{num(speed.get('outputTokensPerSecond'))} | {num(speed.get('ttftP90Ms'), 0)} |"
        )
    lines.append("")
    asked = gate_flags(gates)
    if failures:
        lines.append(f"**Gates: {len(failures)} failed** ({', '.join(asked)})")
        lines.append("")
        lines += [f"- ❌ `{f['gate']}`: {f['message']}" for f in failures]
    elif asked:
        lines.append(f"**Gates: passed** ({', '.join(asked)})")
    else:
        lines.append("Gates: none asked")
    paths = sorted(set(artifacts.values()))
    if paths:
        lines += ["", "Files: " + ", ".join(f"[{Path(p).name}]({p})" for p in paths)]
    return "\n".join(lines) + "\n"


def gate_flags(gates):
    """The gates asked, as their options with their limits (`--fail-under 70`)."""
    if not gates:
        return []
    flags = (
        ("--fail-under", gates.fail_under),
        ("--max-failed-pct", gates.max_failed_pct),
        ("--max-auto-fail-pct", gates.max_auto_fail_pct),
        ("--min-composite", gates.min_composite),
        ("--max-ttft-p90", gates.max_ttft_p90),
        ("--max-itl-p90", gates.max_itl_p90),
        ("--min-goodput", gates.min_goodput),
    )
    return [f"{flag} {value:g}" for flag, value in flags if value is not None]


def write_summary_md(run_id, outputs, artifacts, failures, gates, as_json, quiet):
    """The Markdown summary into --summary-md FILE (replaced) and $GITHUB_STEP_SUMMARY
    (appended to, as GitHub Actions expects: each step adds its part)."""
    text = summary_markdown(run_id, artifacts, failures, gates)
    for key, mode in (("summaryMd", "w"), ("stepSummary", "a")):
        path = outputs.get(key)
        if not path:
            continue
        try:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            # The step summary is the CI runner's file: appended to, its mode left alone.
            opener = open_private if mode == "w" else open
            with opener(path, mode, encoding="utf-8") as handle:
                for chunk in mask_chunks([text]):
                    handle.write(chunk)
        except OSError as exc:
            click.echo(f"Error: cannot write the summary {path}: {exc.strerror or exc}", err=True)
            continue
        if as_json:
            emit({"event": "summary_written", "runId": run_id, "path": str(path)})
        elif not quiet:
            click.echo(f"Wrote the summary to {path}", err=True)
