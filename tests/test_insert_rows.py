"""db.insert_rows: prepared multi-row INSERTs store what insert_many stores."""

import datetime as dt

import pytest
from peewee import IntegrityError

from app.db.connection import database
from app.db.connection import insert_rows
from app.db.models import Collection
from app.db.models import CollectionTask
from app.db.models import Task

WHEN = dt.datetime(2026, 1, 2, 3, 4, 5)


def _task(task_id, **extra):
    return {"task_id": task_id, "category": "c", "question": f"{task_id}?", **extra}


def _stored(task_id):
    fields = [f for f in Task._meta.sorted_fields if f.name != "id"]
    task = Task.get(Task.task_id == task_id)
    return {f.name: getattr(task, f.name) for f in fields}


def test_inserted_rows_read_back_as_insert_many_stores_them(app):
    extra = {"rubric": [{"id": "r1", "text": "t", "weight": 2}], "tags": ["x"], "created_at": WHEN}
    with database.atomic():
        Task.insert_many([_task("peewee", **extra)]).execute()
        assert insert_rows(Task, [_task("ours", **extra)]) == 1
    ours, theirs = _stored("ours"), _stored("peewee")
    assert {**ours, "task_id": None, "question": None, "updated_at": None} == {
        **theirs,
        "task_id": None,
        "question": None,
        "updated_at": None,
    }
    assert ours["rubric"] == [{"id": "r1", "text": "t", "weight": 2}]
    assert ours["created_at"] == WHEN


def test_fields_left_out_get_their_defaults(app):
    with database.atomic():
        insert_rows(Task, [_task("t1")])
    stored = _stored("t1")
    assert stored["difficulty"] == "medium"
    assert stored["subcategory"] == ""
    assert stored["created_at"] is not None


def test_many_rows_all_arrive_in_order(app):
    with database.atomic():
        assert insert_rows(Task, [_task(f"t{i:03d}") for i in range(250)]) == 250
    ids = [t.task_id for t in Task.select(Task.task_id).order_by(Task.id)]
    assert ids == [f"t{i:03d}" for i in range(250)]


def test_no_rows_inserts_nothing(app):
    assert insert_rows(Task, []) == 0
    assert Task.select().count() == 0


def test_a_duplicate_is_an_error_unless_conflicts_are_ignored(app):
    with database.atomic():
        insert_rows(Task, [_task("a"), _task("b")])
        group = Collection.create(name="g")
    tasks = [t.id for t in Task.select().order_by(Task.id)]
    members = [{"collection": group.id, "task": pk} for pk in tasks]
    with database.atomic():
        insert_rows(CollectionTask, members[:1])
    with database.atomic():
        insert_rows(CollectionTask, members, ignore_conflicts=True)
    assert CollectionTask.select().count() == 2
    with pytest.raises(IntegrityError), database.atomic():
        insert_rows(Task, [_task("a")])
    assert Task.select().count() == 2
