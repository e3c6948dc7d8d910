"""`llmbench validate`, `import` and `export`: check run configs and datasets, move tasks."""

from pathlib import Path

import click

from ..datasets import importer
from ..errors import LlmbenchError
from ..files.private import open_private
from .lazy import load
from .open_database import missing_db_note
from .open_database import open_db
from .options import override_options
from .options import overrides_from
from .options import selection_options
from .output import FORMATS
from .output import IMPORT_FORMATS
from .output import CliError
from .output import db_context
from .output import emit
from .output import translate

# The exporter only for `export`: `validate` and `import` never write a dataset.
EXPORT_TASKS = "app.datasets.exporter:export_tasks"


def _is_config(path):
    """A YAML/JSON file whose top level has run/judge/targets (or an apocbench-style
    models/routers)
    is a run config."""
    path = Path(path)
    if path.is_dir() or path.suffix.lower() not in (".yml", ".yaml", ".json"):
        return False
    import yaml  # lazy: a JSONL or CSV dataset's check reads no YAML (datasets/lines.py)

    try:
        doc = yaml.load(
            path.read_text(encoding="utf-8-sig"),
            Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader),
        )
    except (yaml.YAMLError, UnicodeDecodeError, RecursionError, ValueError):
        return False
    return isinstance(doc, dict) and bool(
        {"run", "judge", "targets", "models", "routers"} & set(doc)
    )


@click.command()
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
    type=click.Choice(IMPORT_FORMATS),
    help="Dataset format (default: guessed from the name and content).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as one JSON object.")
@override_options
@selection_options
def validate(
    path,
    config_path,
    fmt,
    as_json,
    limit,
    categories,
    concurrency,
    name,
    judge,
    sets,
    allow_unpriced,
    skip_unsupported,
    **selection,
):
    """Check a run config or a dataset file/folder: nothing saved, no model called (2 if bad).

    A config is checked with the same overrides `llmbench run` would take."""
    target = config_path or path
    if target is None:
        raise click.UsageError("give a config or dataset path (or -c CONFIG)")
    cfg = open_db(check_only=True)
    is_config = bool(config_path) or _is_config(target)
    with db_context():
        try:
            if is_config:
                # Lazy: the run config reader (providers, HTTP adapters) only for a config.
                check_config = load("app.cli.plans:check_config")
                result, text = check_config(
                    target,
                    overrides_from(limit, categories, concurrency, name, judge, sets),
                    selection,
                    allow_unpriced=allow_unpriced,
                    skip_unsupported=skip_unsupported,
                )
            else:
                checked = importer.check(
                    target, fmt, on_duplicate="skip", skip_unsupported=skip_unsupported
                )
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
                ] + [
                    f"  Left out {':'.join(str(p) for p in (e['file'], e['line']) if p)}: "
                    f"{e['field']}: {e['message']}"
                    for e in checked.unsupported
                ]
        except LlmbenchError as exc:
            # A dataset names no provider or collection: the database note is for configs.
            note = missing_db_note(cfg) if is_config else None
            raise translate(exc, as_json, note=note) from None
    if as_json:
        emit(result)
    else:
        click.echo("\n".join(text))


@click.command("import")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@click.option(
    "--format", "fmt", type=click.Choice(IMPORT_FORMATS), help="Default: guessed per file."
)
@click.option("--collection", help="Add the tasks to this collection (created if new).")
@click.option(
    "--on-duplicate",
    type=click.Choice(["reject", "skip", "update"]),
    default="reject",
    show_default=True,
    help="When a task_id already exists.",
)
@click.option(
    "--skip-unsupported",
    is_flag=True,
    help="Leave out what llmbench cannot run (a promptfoo javascript assert, ...), listing it.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as one JSON object.")
def import_cmd(paths, fmt, collection, on_duplicate, skip_unsupported, as_json):
    """Import tasks from files or folders of YAML, or a promptfoo suite (promptfooconfig.yaml);
    all or nothing (exit 2 listing every problem)."""
    open_db()
    with db_context():
        try:
            result = importer.import_tasks(
                list(paths),
                fmt,
                collection=collection,
                on_duplicate=on_duplicate,
                skip_unsupported=skip_unsupported,
            )
        except LlmbenchError as exc:
            raise translate(exc, as_json) from None
    if as_json:
        emit({"event": "imported", **result.to_dict()})
        return
    for entry in result.unsupported:
        place = ":".join(str(p) for p in (entry["file"], entry["line"]) if p)
        click.echo(f"Skipped {place}: {entry['field']}: {entry['message']}")
    where = f" into collection {result.collection!r}" if result.collection else ""
    if not result.collection and result.collections:
        where = " into collection " + ", ".join(repr(c) for c in result.collections)
    click.echo(
        f"Imported {len(result.task_ids)} tasks{where}: {result.created} created, "
        f"{result.updated} updated, {result.skipped} skipped"
    )


@click.command()
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="json", show_default=True)
@click.option("--collection", help="Only this collection's tasks (default: all tasks).")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="File (default stdout).")
def export(fmt, collection, output):
    """Export tasks in a dataset format (json keeps collections too)."""
    open_db()
    with db_context():
        try:
            chunks = load(EXPORT_TASKS)(fmt, collection)
            if output:
                try:
                    with open_private(output, "w", encoding="utf-8", newline="") as handle:
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
