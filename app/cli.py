"""The `llmbench` command line. Domain errors become ClickExceptions here and nowhere else."""

import json
import sys
from pathlib import Path

import click

from . import config as config_mod
from .cli_output import EXIT_OK
from .cli_output import FORMATS
from .cli_output import CliError
from .cli_output import Output
from .cli_output import check_lease
from .cli_output import db_context
from .cli_output import drive
from .cli_output import emit
from .cli_output import num
from .cli_output import translate
from .cli_output import write_reports
from .errors import LlmbenchError


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="llmbench")
def main():
    """llmbench: benchmark LLMs on your own model servers, judged by an LLM.

    \b
    Exit codes: 0 done (item failures are reported, not fatal), 1 unexpected error
    (also: `llmbench serve` holds the orchestrator), 2 invalid config or dataset,
    3 interrupted (resumable with `llmbench resume RUN_ID`).
    The database is LLMBENCH_DB (default instance/llmbench.db), shared with the web app.
    """


def open_db(check_only=False):
    """Bind the database and the master key like the web app does (no Flask needed).

    `check_only` (validate, --dry-run) saves nothing: without a database file it checks against
    an empty throwaway one (removed when the command ends) and never generates a key file.
    """
    from . import crypto
    from . import db

    cfg = config_mod.load()
    cfg["DB_MISSING"] = False
    key_file = config_mod.INSTANCE_PATH / "master.key"
    if check_only and not (cfg["MASTER_KEY_PATH"] or cfg["MASTER_KEY_BASE64"] or key_file.exists()):
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        crypto.set_key(AESGCM.generate_key(bit_length=256))  # nothing gets encrypted and kept
    else:
        crypto.set_key(
            crypto.load_key(
                cfg["MASTER_KEY_PATH"], cfg["MASTER_KEY_BASE64"], str(config_mod.INSTANCE_PATH)
            )
        )
    path = cfg["DB"]
    if check_only and path != ":memory:" and not Path(path).exists():
        import shutil
        import tempfile

        scratch = tempfile.mkdtemp(prefix="llmbench-check-")
        cfg["DB_MISSING"] = True
        db.init_db(str(Path(scratch) / "empty.db"))

        def _discard():
            if not db.database.is_closed():
                db.database.close()
            shutil.rmtree(scratch, ignore_errors=True)

        click.get_current_context().call_on_close(_discard)
        return cfg
    db.init_db(path)
    return cfg


def _missing_db_note(cfg):
    """What to add to a check's errors when there is no database yet (names cannot resolve)."""
    if not cfg.get("DB_MISSING"):
        return None
    return (
        f"note: the database {cfg['DB']} does not exist yet, so no provider or collection "
        "is stored by name; define providers in the config, or set LLMBENCH_DB to your "
        "database"
    )


@main.command()
@click.option(
    "--host", default=None, help="Address to listen on (LLMBENCH_HOST, default 127.0.0.1)."
)
@click.option("--port", default=None, type=int, help="Port (LLMBENCH_PORT, default 8080).")
def serve(host, port):
    """Run the web app and its one orchestrator (gunicorn, one worker, threads)."""
    import logging

    from gunicorn.app.base import BaseApplication

    from . import create_app

    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    cfg = config_mod.load()
    bind = f"{host or cfg['HOST']}:{port or cfg['PORT']}"

    class Server(BaseApplication):
        def load_config(self):
            # One worker: one process, one orchestrator thread by construction; threads serve polls.
            for key, value in {
                "bind": bind,
                "workers": 1,
                "threads": 8,
                "worker_class": "gthread",
                "preload_app": False,
                "max_requests": 0,
                "timeout": 120,
                "accesslog": None,
            }.items():
                self.cfg.set(key, value)

        def load(self):
            return create_app({"SCHEDULER_ENABLED": True})

    click.echo(f"llmbench listening on http://{bind}", err=True)
    Server().run()


@main.command("reset-defaults")
def reset_defaults():
    """Restore the default providers and built-in task collections (your own data is kept)."""
    from . import defaults

    open_db()
    with db_context():
        summary = defaults.reset_defaults()
    click.echo(summary)


# ---- run, resume -------------------------------------------------------------------------


@main.command()
@click.option(
    "-c",
    "--config",
    "config_path",
    required=True,
    type=click.Path(exists=True, dir_okay=False),
    help="Run config (YAML or JSON).",
)
@click.option(
    "--dry-run", is_flag=True, help="Validate and print the plan; no model call, nothing saved."
)
@click.option("--json", "as_json", is_flag=True, help="Print JSONL events on stdout.")
@click.option("-q", "--quiet", is_flag=True, help="Print errors only.")
def run(config_path, dry_run, as_json, quiet):
    """Run a benchmark from a config file in the foreground.

    \b
    Ctrl-C stops the run cleanly; continue it with `llmbench resume RUN_ID`.
    If `llmbench serve` holds the orchestrator, nothing is started: exit 1 with who holds it
    (start the run from the web app instead, or stop the server).
    Exit codes: 0 finished (even with failed items), 1 error, 2 invalid config or
    dataset, 3 interrupted (resumable).
    """
    from .datasets import run_config
    from .datasets import run_plan

    cfg = open_db(check_only=dry_run)
    with db_context():
        try:
            plan = run_config.load(config_path)
        except LlmbenchError as exc:
            raise translate(exc, as_json, note=_missing_db_note(cfg)) from None
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
    code = drive(run_id, cfg, Output(as_json, quiet), "run_started")
    if code == EXIT_OK and plan.out_dir:
        try:
            write_reports(run_id, Path(plan.out_dir) / run_id, as_json, quiet)
        except CliError as exc:
            # The run itself finished: say what went wrong with its files, keep exit 0.
            if as_json:
                emit({"event": "error", "message": exc.message, "errors": []})
            click.echo(f"Error: {exc.message}", err=True)
    sys.exit(code)


@main.command()
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
    from . import runs

    cfg = open_db()
    with db_context():
        check_lease(as_json)
        try:
            run_obj = runs.get_run(run_id)
            if runs.run_state(run_obj) != "running":
                runs.resume_run(run_id, max_budget_usd=max_budget_usd)
        except LlmbenchError as exc:
            raise translate(exc, as_json) from None
    sys.exit(drive(run_id, cfg, Output(as_json, quiet), "run_resumed"))


# ---- report, diff --------------------------------------------------------------------------


@main.command()
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
    from . import runs

    open_db()
    with db_context():
        try:
            runs.get_run(run_id)
        except LlmbenchError as exc:
            raise translate(exc, as_json) from None
    write_reports(run_id, Path(out_dir or Path("runs") / run_id), as_json, False)


@main.command()
@click.argument("run_a")
@click.argument("run_b")
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON.")
@click.option("--limit", default=10, show_default=True, help="Task changes listed per kind.")
def diff(run_a, run_b, as_json, limit):
    """Per-model and per-task score deltas from RUN_A to RUN_B (B - A)."""
    from . import compare
    from . import runs

    open_db()
    with db_context():
        try:
            result = compare.compare_runs(
                runs.get_run(run_a),
                runs.get_run(run_b),
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


# ---- validate, import, export --------------------------------------------------------------


def _is_config(path):
    """A YAML/JSON file whose top level has run/judge/targets is a run config."""
    import yaml

    path = Path(path)
    if path.is_dir() or path.suffix.lower() not in (".yml", ".yaml", ".json"):
        return False
    try:
        doc = yaml.load(
            path.read_text(encoding="utf-8-sig"),
            Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader),
        )
    except (yaml.YAMLError, UnicodeDecodeError):
        return False
    return isinstance(doc, dict) and bool({"run", "judge", "targets"} & set(doc))


@main.command()
@click.argument("path", required=False, type=click.Path(exists=True))
@click.option(
    "-c",
    "--config",
    "config_path",
    type=click.Path(exists=True, dir_okay=False),
    help="A run config to check (same as giving it as PATH).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    help="Dataset format (default: guessed from the name and content).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as one JSON object.")
def validate(path, config_path, fmt, as_json):
    """Check a run config or a dataset file/folder: nothing saved, no model called (2 if bad)."""
    from .datasets import importer
    from .datasets import run_config
    from .datasets import run_plan

    target = config_path or path
    if target is None:
        raise click.UsageError("give a config or dataset path (or -c CONFIG)")
    cfg = open_db(check_only=True)
    with db_context():
        try:
            if config_path or _is_config(target):
                plan = run_config.load(target)
                result = {**run_plan.plan_to_dict(plan), "event": "valid", "kind": "config"}
                text = [f"{target}: valid run config"] + ["  " + x for x in run_plan.describe(plan)]
            else:
                checked = importer.check(target, fmt, on_duplicate="skip")
                existing = len(checked.existing)
                result = {
                    "event": "valid",
                    "kind": "dataset",
                    "tasks": len(checked.tasks),
                    "new": len(checked.tasks) - existing,
                    "existing": existing,
                    "collections": sorted(checked.collections),
                }
                text = [
                    f"{target}: valid dataset, {len(checked.tasks)} tasks "
                    f"({len(checked.tasks) - existing} new, {existing} already stored)"
                ]
        except LlmbenchError as exc:
            raise translate(exc, as_json, note=_missing_db_note(cfg)) from None
    if as_json:
        emit(result)
    else:
        click.echo("\n".join(text))


@main.command("import")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--format", "fmt", type=click.Choice(FORMATS), help="Default: guessed per file.")
@click.option("--collection", help="Add the tasks to this collection (created if new).")
@click.option(
    "--on-duplicate",
    type=click.Choice(["reject", "skip", "update"]),
    default="reject",
    show_default=True,
    help="When a task_id already exists.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as one JSON object.")
def import_cmd(paths, fmt, collection, on_duplicate, as_json):
    """Import tasks from files or folders of YAML; all or nothing (exit 2 listing every problem)."""
    from .datasets import importer

    open_db()
    with db_context():
        try:
            result = importer.import_tasks(
                list(paths), fmt, collection=collection, on_duplicate=on_duplicate
            )
        except LlmbenchError as exc:
            raise translate(exc, as_json) from None
    if as_json:
        emit({"event": "imported", **result.to_dict()})
        return
    where = f" into collection {result.collection!r}" if result.collection else ""
    click.echo(
        f"Imported {len(result.task_ids)} tasks{where}: {result.created} created, "
        f"{result.updated} updated, {result.skipped} skipped"
    )


@main.command()
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="json", show_default=True)
@click.option("--collection", help="Only this collection's tasks (default: all tasks).")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="File (default stdout).")
def export(fmt, collection, output):
    """Export tasks in a dataset format (json keeps collections too)."""
    from .datasets import exporter

    open_db()
    with db_context():
        try:
            chunks = exporter.export_tasks(fmt, collection)
            if output:
                try:
                    with open(output, "w", encoding="utf-8", newline="") as handle:
                        for chunk in chunks:
                            handle.write(chunk)
                except OSError as exc:
                    raise CliError(
                        f"cannot write {output}: {exc.strerror or exc}; choose a "
                        "file in a folder you can write to"
                    ) from None
            else:
                for chunk in chunks:
                    click.echo(chunk, nl=False)
        except LlmbenchError as exc:
            raise translate(exc) from None
    if output:
        click.echo(f"Wrote {output}", err=True)


if __name__ == "__main__":
    sys.exit(main())
