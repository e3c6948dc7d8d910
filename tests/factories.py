"""Fixture data for results/exports tests: Run, RunTarget and Item rows inserted directly."""

import datetime as dt

from app.db.connection import database
from app.db.models import COMPLETED
from app.db.models import FINISHED
from app.db.models import Item
from app.db.models import Run
from app.db.models import RunCollection
from app.db.models import RunTarget
from app.ratings.votes import pair_token

T0 = dt.datetime(2025, 1, 2, 3, 4, 5)


def make_run(run_id="run-1", *, targets=(("local", "m1"),), status=FINISHED, **fields):
    """A run with its targets (provider name, model[, params]); returns (run, [targets])."""
    defaults = {
        "run_id": run_id,
        "name": run_id,
        "judge_provider_name": "judgeprov",
        "judge_model": "judge-1",
        "judge_params": {"temperature": 0},
        "status": status,
        "phase": "JUDGING",
        "created_at": T0,
        "started_at": T0,
        "finished_at": T0 + dt.timedelta(minutes=5) if status == FINISHED else None,
        "dataset_hash": "d" * 64,
        "prompt_hash": "p" * 64,
    }
    defaults.update(fields)
    run = Run.create(**defaults)
    made = []
    for position, spec in enumerate(targets):
        provider_name, model = spec[0], spec[1]
        params = spec[2] if len(spec) > 2 else None
        made.append(
            RunTarget.create(
                run=run, provider_name=provider_name, model=model, params=params, position=position
            )
        )
    RunCollection.create(run=run, collection_name="quick")
    return run, made


def add_item(run, target, task_key, *, score=None, status=COMPLETED, **fields):
    """One item; COMPLETED items get default metrics unless given."""
    values = {
        "run": run,
        "target": target,
        "task_key": task_key,
        "category": "general",
        "difficulty": "easy",
        "question": f"Question {task_key}?",
        "status": status,
        "evaluation_score": score,
    }
    if status == COMPLETED:
        values.update(
            {
                "answer": f"answer to {task_key}",
                "time_taken_ms": 1000.0,
                "ttft_ms": 100.0,
                "tokens_generated": 50,
                "prompt_tokens": 20,
                "tokens_per_second": 50.0,
                "evaluation_reason": "fine",
                "answered_at": T0,
                "judged_at": T0,
            }
        )
    values.update(fields)
    return Item.create(**values)


def bulk_items(run, target, count, *, start=0, score_of=None, **fields):
    """Insert `count` completed items fast: one prepared INSERT sent with every row's values
    (peewee's insert_many writes each value into the SQL text: 44 000 rows took ~100 s on
    PostgreSQL)."""
    defaults = Item._meta.get_default_dict()  # what insert_many would fill in
    rows = []
    for n in range(start, start + count):
        score = score_of(n) if score_of else float(n % 101)
        row = {
            "run": run.id,
            "target": target.id,
            "task_key": f"t{n:06d}",
            "category": ("math", "code", "writing", "facts")[n % 4],
            "difficulty": ("easy", "medium", "hard")[n % 3],
            "question": f"Q{n}",
            "status": COMPLETED,
            "answer": f"answer {n}",
            "time_taken_ms": 500.0 + (n * 37) % 900,
            "ttft_ms": 50.0 + n % 40,
            "tokens_generated": 40 + n % 60,
            "prompt_tokens": 20,
            "tokens_per_second": 20.0 + (n * 7) % 50,
            "evaluation_score": score,
            "evaluation_reason": f"reason {n}",
            "cost_usd": 0.0001,
            "created_at": T0,
            "updated_at": T0,
        }
        row.update(fields)
        rows.append({**defaults, **row})
    columns = [Item._meta.fields[name] for name in rows[0]] if rows else []
    names = ", ".join(c.column_name for c in columns)
    marks = ", ".join([database.param] * len(columns))
    values = [tuple(c.db_value(row[c.name]) for c in columns) for row in rows]
    with database.atomic():
        database.connection().cursor().executemany(
            f"INSERT INTO item ({names}) VALUES ({marks})", values
        )


def shown_pair(left_id, right_id, voter="human"):
    """The pair token of two items as the A/B page hands them to `voter` (a vote carries it)."""
    return pair_token(voter, Item.get_by_id(left_id), Item.get_by_id(right_id))
