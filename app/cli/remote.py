"""`--server URL --token T` (or LLMBENCH_SERVER, LLMBENCH_TOKEN): `runs`, `show`, `pause`,
`stop`, `report` and `run --template` against a remote llmbench through its JSON API, with a
token's role, instead of opening a database here. The options are server_options.py's: a
command loads this module (and requests) only when it is given a server."""

import json
import re
import time
from pathlib import Path

import click
import requests

from ..files.private import open_private
from .output import EXIT_ERROR
from .output import EXIT_INTERRUPTED
from .output import EXIT_INVALID
from .output import EXIT_OK
from .output import CliError
from .output import emit
from .output import num

TIMEOUT = 30.0
POLL_SECONDS = 1.0  # how often `run --template --server` asks the server how its run is doing
ENDED = ("finished", "paused", "stopped")  # states a followed run does not leave by itself
# The report files a server hands out (POST /api/runs/{id}/export): name here, API body.
REPORT_FILES = (
    ("summary.json", {"format": "JSON"}),
    ("report.html", {"format": "HTML"}),
    ("results-detailed.csv", {"format": "CSV", "includeDetailed": True}),
    ("report.md", {"format": "MD", "includeDetailed": True}),
    ("results.jsonl", {"format": "JSONL"}),
)


def _request(server, token, method, path, params=None, body=None, stream=False):
    """One API call's reply, or a CliError with the server's message (the token never)."""
    url = server.rstrip("/") + "/api" + path
    headers = {"Accept": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    try:
        reply = requests.request(
            method, url, params=params, json=body, headers=headers, timeout=TIMEOUT, stream=stream
        )
    except requests.RequestException as exc:
        raise CliError(f"cannot reach {server}: {type(exc).__name__}") from None
    if reply.status_code < 400:
        return reply
    try:
        found = reply.json()
    except ValueError:
        found = None
    message = found.get("error") if isinstance(found, dict) else None
    message = message or f"HTTP {reply.status_code}"
    if reply.status_code == 401 and not token:
        message += " (give a token: --token or LLMBENCH_TOKEN)"
    invalid = reply.status_code in (400, 404)
    raise CliError(f"{server}: {message}", EXIT_INVALID if invalid else EXIT_ERROR)


def call(server, token, method, path, params=None, body=None):
    """One API call; its JSON, or a CliError with the server's message (the token never)."""
    reply = _request(server, token, method, path, params, body)
    try:
        return reply.json()
    except ValueError:
        return None


def runs(server, token, state, limit, as_json):
    """The remote run history, newest first."""
    found = call(server, token, "GET", "/runs", {"state": state} if state else None)[:limit]
    if as_json:
        for run in found:
            emit(run)
        return
    if not found:
        click.echo("No runs match.", err=True)
        return
    click.echo(f"{'run id':36} {'state':9} {'items':>6}  {'created':17}  targets")
    for run in found:
        targets = ", ".join(t.get("label") or t["model"] for t in run.get("targets", []))
        created = (run.get("createdAt") or "")[:16].replace("T", " ")
        click.echo(
            f"{run['runId'][:36]:36} {run['state']:9} {run['totalItems']:>6}  "
            f"{created:17}  {targets}"
        )


def show(server, token, run_id, as_json):
    """One remote run: state, judge, counts, progress."""
    run = call(server, token, "GET", f"/runs/{run_id}")
    if as_json:
        click.echo(json.dumps({"run": run}, indent=2, ensure_ascii=False))
        return
    counts = run["counts"]
    click.echo(f"Run {run['runId']} ({run['name'] or 'no name'}): {run['state']}")
    if run.get("controlReason") and run["state"] != "finished":
        click.echo(f"  why: {run['controlReason']}")
    click.echo(f"  judge: {run.get('judgeProviderName') or '-'}/{run.get('judgeModel') or '-'}")
    click.echo(
        f"  items: {run['totalItems']} ({counts['COMPLETED']} completed, "
        f"{run['failedItems']} failed, {counts['NEW']} not answered, "
        f"{counts['WAITING_FOR_JUDGE']} waiting for the judge); "
        f"progress {num(100 * run['progress'])} %"
    )
    targets = ", ".join(t.get("label") or t["model"] for t in run.get("targets", []))
    click.echo(f"  targets: {targets or '-'}")
    click.echo(f"  created: {run['createdAt']}   finished: {run['finishedAt'] or '-'}")


def control(server, token, run_id, verb, as_json):
    """Pause or stop a remote run (a token with the runner role)."""
    run = call(server, token, "POST", f"/runs/{run_id}/{verb}")
    if as_json:
        emit({"event": f"run_{run['state']}", "runId": run_id, "state": run["state"]})
    else:
        click.echo(f"Run {run_id} is {run['state']}.")


def report(server, token, run_id, out_dir, as_json):
    """Download a remote run's report files (summary.json, report.html, the detailed CSV,
    Markdown and results.jsonl) into `out_dir`, owner-only like the local ones; their paths."""
    call(server, token, "GET", f"/runs/{run_id}")  # an unknown run: exit 2 before any file
    folder = Path(out_dir or Path("runs") / _safe(run_id))
    paths = {}
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for name, body in REPORT_FILES:
            export = f"/runs/{run_id}/export"
            reply = _request(server, token, "POST", export, body=body, stream=True)
            path = folder / name
            with reply, open_private(path, "wb") as handle:
                for chunk in reply.iter_content(chunk_size=65536):
                    handle.write(chunk)
            paths[name] = str(path)
    except OSError as exc:
        raise CliError(
            f"cannot write the reports to {folder}: {exc.filename or folder}: "
            f"{exc.strerror or exc}; choose a folder you can write to (--out DIR)"
        ) from None
    if as_json:
        emit({"event": "report_written", "runId": run_id, "server": server, "files": paths})
    else:
        click.echo(f"Wrote {', '.join(paths.values())}", err=True)
    return paths


def _safe(run_id):
    """A run id as a folder name (a server's ids are its own: nothing outside the folder)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", run_id).strip("._") or "run"


def find_template(server, token, ref):
    """A remote template's id by its name, or by id when `ref` is a number."""
    templates = call(server, token, "GET", "/templates") or []
    for template in templates:
        if template.get("name") == str(ref):
            return template["id"]
    for template in templates:
        if str(template.get("id")) == str(ref).strip():
            return template["id"]
    names = ", ".join(t.get("name", "?") for t in templates) or "none yet"
    raise CliError(f"{server}: no template named {ref!r} (templates: {names})", EXIT_INVALID)


def run_template(server, token, ref, as_json, quiet, stop_paused=False):
    """`llmbench run --template NAME --server URL`: trigger the template there (queued while
    the server works on another run), follow the run until it ends; the exit code.
    `stop_paused` (a CI job): a run that ends paused is stopped, so nothing waits paused."""
    template_id = find_template(server, token, ref)
    started = call(
        server, token, "POST", f"/templates/{template_id}/trigger", body={"triggeredBy": "cli"}
    )
    run_id = started["runId"]
    if as_json:
        emit({"event": "run_started", "runId": run_id, "state": started["state"], "server": server})
    elif not quiet:
        click.echo(f"Run {run_id} started on {server} ({started['state']})", err=True)
    try:
        code = follow(server, token, run_id, as_json, quiet)
    except KeyboardInterrupt:
        # As beside a local server: Ctrl-C pauses the run, which `llmbench resume` continues.
        call(server, token, "POST", f"/runs/{run_id}/pause")
        if not as_json:
            click.echo(f"Run {run_id} paused on {server}.", err=True)
        return EXIT_INTERRUPTED
    if stop_paused and code == EXIT_INTERRUPTED:
        stop_if_paused(server, token, run_id, as_json)
    return code


def stop_if_paused(server, token, run_id, as_json):
    """Stop a remote run that ended paused (a CI job leaves nothing paused behind); it stays
    resumable. True when it was stopped."""
    if call(server, token, "GET", f"/runs/{run_id}")["state"] != "paused":
        return False
    call(server, token, "POST", f"/runs/{run_id}/stop")
    if not as_json:
        click.echo(f"Run {run_id} stopped (a CI job leaves nothing paused).", err=True)
    return True


def _progress_line(run):
    counts = run["counts"]
    return (
        f"Run {run['runId']} {run['state']}: {counts['COMPLETED']} of {run['totalItems']} "
        f"items done, {run['failedItems']} failed ({num(100 * run['progress'], 0)} %)"
    )


def follow(server, token, run_id, as_json, quiet, sleep=time.sleep):
    """Poll the remote run until it is finished, paused or stopped, printing a line when its
    progress changes; 0 finished, 3 paused or stopped (resumable), as a local run."""
    said = None
    while True:
        run = call(server, token, "GET", f"/runs/{run_id}")
        line = _progress_line(run)
        if line != said:
            said = line
            if as_json:
                emit(
                    {
                        "event": "progress",
                        "runId": run_id,
                        "state": run["state"],
                        "done": run["counts"]["COMPLETED"],
                        "failed": run["failedItems"],
                        "total": run["totalItems"],
                        "progress": run["progress"],
                    }
                )
            elif not quiet:
                click.echo(line, err=True)
        if run["state"] in ENDED:
            break
        sleep(POLL_SECONDS)
    code = EXIT_OK if run["state"] == "finished" else EXIT_INTERRUPTED
    if as_json:
        emit({"event": f"run_{run['state']}", "runId": run_id, "exitCode": code})
    elif code == EXIT_INTERRUPTED:
        why = f" ({run['controlReason']})" if run.get("controlReason") else ""
        click.echo(
            f"Run {run_id} is {run['state']}{why}: continue it with `llmbench resume {run_id}` "
            "on the server",
            err=True,
        )
    elif not quiet:
        click.echo(f"Run {run_id} finished on {server}.", err=True)
    return code
