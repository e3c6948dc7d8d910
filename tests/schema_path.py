"""A database as an older release left it: an empty SQLite file taken along the migration path
every database takes (m001 is the frozen first schema), stopped before one migration. Its rows
are written with SQL, as that release's code wrote them: today's models name columns it does
not have yet.

    db = before(tmp_path, "m018_templates_and_queue", monkeypatch)
    db.execute_sql("INSERT INTO run ...")
    migrations.apply(db)                    # the rest of the path
"""

from app.db import migrations
from app.db.connection import database
from app.db.connection import init_db

NOW = "2026-11-22 12:00:00"


def before(tmp_path, name, monkeypatch):
    """Bind the database to a new file migrated up to, not including, the migration `name`."""
    init_db(str(tmp_path / "older.db"))
    names = [fn.__name__ for fn in migrations.MIGRATIONS]
    with monkeypatch.context() as patch:
        patch.setattr(migrations, "MIGRATIONS", migrations.MIGRATIONS[: names.index(name)])
        migrations.apply(database)
    return database


def through(db, name, monkeypatch):
    """Apply the migrations not applied yet up to and including `name`, no later one."""
    names = [fn.__name__ for fn in migrations.MIGRATIONS]
    with monkeypatch.context() as patch:
        patch.setattr(migrations, "MIGRATIONS", migrations.MIGRATIONS[: names.index(name) + 1])
        migrations.apply(db)


def insert(db, table, **values):
    """INSERT one row of `values` into `table`; its id."""
    columns = ", ".join(f'"{c}"' for c in values)
    marks = ", ".join("?" for _ in values)
    cursor = db.execute_sql(
        f'INSERT INTO "{table}" ({columns}) VALUES ({marks})', tuple(values.values())
    )
    return cursor.lastrowid


def old_run(db, run_id="old", *, score=70.0, **item_values):
    """A FINISHED run with one target and one COMPLETED item scored `score`, in the columns the
    first schema has (and the target's label, which every release since m014 writes); returns
    (run id, target id)."""
    run = insert(
        db,
        "run",
        run_id=run_id,
        name=run_id,
        judge_provider_name="judgeprov",
        judge_model="judge-1",
        status="FINISHED",
        phase="JUDGING",
        control="running",
        source="web",
        dataset_hash="d" * 64,
        prompt_hash="p" * 64,
        created_at=NOW,
        started_at=NOW,
        finished_at=NOW,
        updated_at=NOW,
    )
    labelled = "label" in {c.name for c in db.get_columns("runtarget")}
    target = insert(
        db,
        "runtarget",
        run_id=run,
        provider_name="local",
        model="m1",
        position=0,
        **({"label": "m1"} if labelled else {}),
    )
    values = {
        "status": "COMPLETED",
        "answer": "answer to t1",
        "time_taken_ms": 1000.0,
        "ttft_ms": 100.0,
        "tokens_generated": 50,
        "tokens_per_second": 50.0,
        "evaluation_score": score,
        "answered_at": NOW,
        "judged_at": NOW,
    }
    old_item(db, run, target, "t1", **{**values, **item_values})
    return run, target


def old_item(db, run, target, task_key, **values):
    """An item of `run`'s `target` with `values` over a NEW item's, in the first schema's
    columns (and answer_cut and repeat where the schema has them: NOT NULL, written by every
    release since m011 and m019)."""
    row = {
        "run_id": run,
        "target_id": target,
        "task_key": task_key,
        "category": "general",
        "subcategory": "",
        "difficulty": "easy",
        "question": f"Question {task_key}?",
        "excellent": "",
        "good": "",
        "pass_answer": "",
        "incorrect_direction": "",
        "status": "NEW",
        "attempts": 0,
        "answer_attempts": 0,
        "tokens_estimated": 0,
        "created_at": NOW,
        "updated_at": NOW,
    }
    columns = {c.name for c in db.get_columns("item")}
    row.update({name: 0 for name in ("answer_cut", "repeat") if name in columns})
    return insert(db, "item", **{**row, **values})
