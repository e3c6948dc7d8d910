"""What a terminal watching a run shows (the CLI's run screen): per target its state, counts,
rolling mean score, median answer time and failures; the item in focus; the latest scores.

Read-only and bounded: a handful of grouped queries, medians by OFFSET on the sorted answer
times of one target at a time, so a refresh stays cheap on a big run.
"""

from peewee import fn

from ..db.models import COMPLETED
from ..db.models import NEW
from ..db.models import Item
from ..db.models import RunTarget
from .outcomes import FAILED_STATUSES
from .outcomes import IS_ANSWER_FAILED
from .outcomes import SCORE
from .outcomes import count_where
from .progress import progress

QUESTION_CHARS = 160


def _median_ms(run, target_id, count):
    """The median answer time of one target (the middle of its sorted, measured times)."""
    if not count:
        return None
    where = (
        (Item.run == run)
        & (Item.target == target_id)
        & Item.time_taken_ms.is_null(False)
        & ~IS_ANSWER_FAILED
    )
    values = [
        v
        for (v,) in Item.select(Item.time_taken_ms)
        .where(where)
        .order_by(Item.time_taken_ms)
        .offset((count - 1) // 2)
        .limit(2 - count % 2)
        .tuples()
    ]
    return sum(values) / len(values) if values else None


def target_rows(run):
    """Per target in run order: label, state (queued/running/done), counts, score, median ms."""
    targets = list(
        RunTarget.select().where(RunTarget.run == run).order_by(RunTarget.position, RunTarget.id)
    )
    measured = ~IS_ANSWER_FAILED & Item.time_taken_ms.is_null(False)
    stats = {
        row[0]: row[1:]
        for row in Item.select(
            Item.target,
            fn.COUNT(Item.id),
            count_where(Item.status == NEW),
            count_where(Item.status == COMPLETED),
            count_where(Item.status.in_(FAILED_STATUSES)),
            fn.AVG(SCORE),
            count_where(measured),
        )
        .where(Item.run == run)
        .group_by(Item.target)
        .tuples()
    }
    rows = []
    for target in targets:
        total, new, completed, failed, score, timed = stats.get(target.id, (0, 0, 0, 0, None, 0))
        settled = completed + failed
        state = "done" if total and settled == total else ("queued" if new == total else "running")
        rows.append(
            {
                "targetId": target.id,
                "label": _name(target),
                "state": state,
                "total": total,
                "answered": total - new,
                "completed": completed,
                "failed": failed,
                "meanScore": score,
                "medianMs": _median_ms(run, target.id, timed),
            }
        )
    return rows


def focus(run, item_id):
    """The item a screen shows as current: task id, category, target, the question's start."""
    if item_id is None:
        return None
    row = (
        Item.select(Item.task_key, Item.category, Item.question, Item.status, RunTarget)
        .join(RunTarget)
        .where((Item.run == run) & (Item.id == item_id))
        .first()
    )
    if row is None:
        return None
    question = " ".join((row.question or "").split())
    if len(question) > QUESTION_CHARS:
        question = question[: QUESTION_CHARS - 1] + "…"
    return {
        "taskId": row.task_key,
        "category": row.category,
        "target": _name(row.target),
        "status": row.status,
        "question": question,
    }


def latest_scores(run, limit=10):
    """The latest judged items, newest first: (task id, target label, score, auto-fail)."""
    query = (
        Item.select(Item.task_key, Item.evaluation_score, Item.auto_fail, RunTarget)
        .join(RunTarget)
        # judged_at is set: item_judged_at holds only those, newest last (a seek, not a sort)
        .where((Item.run == run) & (Item.status == COMPLETED) & Item.judged_at.is_null(False))
        .order_by(Item.judged_at.desc(), Item.id.desc())
        .limit(limit)
    )
    return [
        {
            "taskId": i.task_key,
            "target": _name(i.target),
            "score": i.evaluation_score,
            "autoFail": bool(i.auto_fail),
        }
        for i in query
    ]


def snapshot(run, item_id=None, scores=10):
    """Everything the run screen draws, in one call."""
    state = progress(run)
    return {
        "progress": state,
        "targets": target_rows(run),
        "focus": focus(run, item_id),
        "scores": latest_scores(run, scores),
    }


def _name(target):
    """A target as `provider/label`: two profiles of one model differ in their labels."""
    return f"{target.provider_name}/{target.label or target.model}"
