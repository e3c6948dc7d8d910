"""`--server URL --token T` (or LLMBENCH_SERVER, LLMBENCH_TOKEN): `runs`, `show`, `pause` and
`stop` against a remote llmbench through its JSON API, with a token's role, instead of opening a
database here."""

import json

import click
import requests

from .output import EXIT_ERROR
from .output import EXIT_INVALID
from .output import CliError
from .output import emit
from .output import num

TIMEOUT = 30.0


def server_options(command):
    """Add --server and --token to a command (both read from the environment too)."""
    command = click.option(
        "--token",
        envvar="LLMBENCH_TOKEN",
        help="A token for --server (`llmbench tokens create`; env LLMBENCH_TOKEN).",
    )(command)
    return click.option(
        "--server",
        envvar="LLMBENCH_SERVER",
        help="A remote llmbench's URL: use its API, not a database here (env LLMBENCH_SERVER).",
    )(command)


def call(server, token, method, path, params=None):
    """One API call; its JSON, or a CliError with the server's message (the token never)."""
    url = server.rstrip("/") + "/api" + path
    headers = {"Accept": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    try:
        reply = requests.request(method, url, params=params, headers=headers, timeout=TIMEOUT)
    except requests.RequestException as exc:
        raise CliError(f"cannot reach {server}: {type(exc).__name__}") from None
    try:
        body = reply.json()
    except ValueError:
        body = None
    if reply.status_code >= 400:
        message = body.get("error") if isinstance(body, dict) else None
        message = message or f"HTTP {reply.status_code}"
        if reply.status_code == 401 and not token:
            message += " (give a token: --token or LLMBENCH_TOKEN)"
        invalid = reply.status_code in (400, 404)
        raise CliError(f"{server}: {message}", EXIT_INVALID if invalid else EXIT_ERROR)
    return body


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
