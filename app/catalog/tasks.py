"""Tasks: storage and search (fields checked in task_fields); collections re-exported."""

import logging
import math
from dataclasses import dataclass

from ..clock import isoformat
from ..clock import utcnow
from ..db.connection import database
from ..db.models import CollectionTask
from ..db.models import Task
from ..errors import Conflict
from ..errors import NotFound
from .task_fields import clean_task_input

log = logging.getLogger(__name__)


def get_task(task_pk):
    """The task with this database id, or NotFound."""
    task = Task.get_or_none(Task.id == task_pk)
    if task is None:
        raise NotFound(f"task {task_pk} not found")
    return task


def _check_task_id_free(task_id, exclude=None):
    query = Task.select().where(Task.task_id == task_id)
    if exclude is not None:
        query = query.where(Task.id != exclude)
    if query.exists():
        raise Conflict(f"a task with taskId {task_id!r} already exists")


def create_task(data):
    """Validate and save a new task (camelCase or model field names); 409 on a taken taskId."""
    values = clean_task_input(data)
    with database.atomic():
        _check_task_id_free(values["task_id"])
        return Task.create(**values)


def update_task(task_pk, data):
    """Validate and save changes; fields not given keep their values."""
    with database.atomic():
        task = get_task(task_pk)
        values = clean_task_input(data, current=task)
        _check_task_id_free(values["task_id"], exclude=task.id)
        for field, value in values.items():
            setattr(task, field, value)
        task.updated_at = utcnow()
        task.save()
    return task


def delete_task(task_pk):
    """Delete a task (its memberships go; past run items keep their snapshot)."""
    task = get_task(task_pk)
    with database.atomic():
        CollectionTask.delete().where(CollectionTask.task == task.id).execute()
        task.delete_instance()


def task_to_dict(task):
    """TaskDto plus difficulty, rubric, autoFail, tags, vars, checks, tools and more."""
    return {
        "id": task.id,
        "taskId": task.task_id,
        "category": task.category,
        "subcategory": task.subcategory,
        "difficulty": task.difficulty,
        "question": task.question,
        "systemPrompt": task.system_prompt,
        "excellent": task.excellent,
        "good": task.good,
        "pass": task.pass_answer,
        "incorrectAnswerDirection": task.incorrect_direction,
        "rubric": task.rubric,
        "autoFail": task.auto_fail,
        "tags": task.tags,
        "vars": task.vars,
        "templateVersion": task.template_version,
        "checks": task.checks,
        "tools": task.tools,
        "createdAt": isoformat(task.created_at),
        "updatedAt": isoformat(task.updated_at),
    }


@dataclass
class Page:
    """One page of a query's rows."""

    items: list
    total: int
    page: int
    per_page: int

    @property
    def pages(self):
        return max(1, math.ceil(self.total / self.per_page))

    @property
    def has_prev(self):
        return self.page > 1

    @property
    def has_next(self):
        return self.page < self.pages


def _page_args(page, per_page, max_per_page=200):
    try:
        page = max(1, int(page or 1))
    except (TypeError, ValueError):
        page = 1
    try:
        per_page = min(max_per_page, max(1, int(per_page or 50)))
    except (TypeError, ValueError):
        per_page = 50
    return page, per_page


def task_query(q="", category="", exclude_collection=None):
    """Tasks matching a search text and category, by category then taskId."""
    query = Task.select()
    q = (q or "").strip()
    if q:
        like = f"%{q}%"
        query = query.where(
            Task.task_id**like
            | Task.question**like
            | Task.category**like
            | Task.subcategory**like
            | Task.tags.cast("TEXT") ** like
        )
    if category:
        query = query.where(Task.category == category)
    if exclude_collection is not None:
        members = CollectionTask.select(CollectionTask.task).where(
            CollectionTask.collection == exclude_collection
        )
        query = query.where(Task.id.not_in(members))
    return query.order_by(Task.category, Task.task_id)


def search_tasks(q="", category="", page=1, per_page=50, exclude_collection=None):
    """One Page of tasks for the task list (search in id/question/category/tags)."""
    page, per_page = _page_args(page, per_page)
    query = task_query(q, category, exclude_collection)
    total = query.count()
    last = max(1, math.ceil(total / per_page))
    page = min(page, last)
    return Page(list(query.paginate(page, per_page)), total, page, per_page)


def list_categories():
    """Distinct task categories, sorted."""
    rows = Task.select(Task.category).distinct().order_by(Task.category)
    return [r.category for r in rows]
