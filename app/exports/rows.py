"""The row sources every export shares: targets in run order and a streamed item cursor."""

from collections import namedtuple

from ..db.connection import database
from ..db.models import Item
from ..db.models import RunTarget
from ..runs.outcomes import FAILED_STATUSES

DetailRow = namedtuple(
    "DetailRow",
    (
        "item_id",
        "target_id",
        "provider_name",
        "model",
        "task_id",
        "task_name",
        "category",
        "difficulty",
        "status",
        "error_stage",
        "time_ms",
        "ttft_ms",
        "tokens_generated",
        "tokens_per_second",
        "score",
        "judge_reason",
        "answer",
        "error_msg",
        "cost_usd",
    ),
)


def targets(run):
    """The run's targets in run order: list of (id, provider_name, label).

    Files name a target by its label: the model, with its params when it has any (the same model
    may be a target twice with different params).
    """
    return list(
        RunTarget.select(RunTarget.id, RunTarget.provider_name, RunTarget.label)
        .where(RunTarget.run == run)
        .order_by(RunTarget.id)
        .tuples()
    )


def task_name(question):
    """A task's name in the CSV's task_name column: its whole question (a file never
    shortens a question or an answer; quoting keeps its newlines inside the one field)."""
    return (question or "").strip()


def item_cursor(run, limit=None, with_answer=True):
    """Raw item tuples from one SQLite cursor, ordered by target, task id, id.

    The order matches the (run, target, task_key) index, so SQLite streams without sorting, and
    the cursor is read row by row: memory stays flat whatever the run's size. The columns are
    plain numbers and text, so rows skip peewee's per-value conversion (a third of the time).
    """
    query = (
        Item.select(
            Item.id,
            Item.target,
            Item.task_key,
            Item.question,
            Item.category,
            Item.difficulty,
            Item.status,
            Item.error_stage,
            Item.time_taken_ms,
            Item.ttft_ms,
            Item.tokens_generated,
            Item.tokens_per_second,
            Item.evaluation_score,
            Item.evaluation_reason,
            Item.answer if with_answer else Item.id,
            Item.error_msg,
            Item.cost_usd,
        )
        .where(Item.run == run)
        .order_by(Item.target, Item.task_key, Item.id)
    )
    if limit is not None:
        query = query.limit(limit)
    return database.execute(query)


def detail_rows(run, limit=None, with_answer=True):
    """Items of `run` as DetailRow tuples, streamed (see item_cursor)."""
    names = {tid: (provider, model) for tid, provider, model in targets(run)}
    for (
        item_id,
        target_id,
        task_id,
        question,
        category,
        difficulty,
        status,
        stage,
        time_ms,
        ttft_ms,
        tokens,
        tps,
        score,
        reason,
        answer,
        error,
        cost,
    ) in item_cursor(run, limit, with_answer):
        provider, model = names.get(target_id, ("", ""))
        yield DetailRow(
            item_id,
            target_id,
            provider,
            model,
            task_id,
            task_name(question),
            category,
            difficulty,
            status,
            stage,
            time_ms,
            ttft_ms,
            tokens,
            tps,
            score,
            reason,
            answer if with_answer else None,
            error,
            cost,
        )


def status_label(status, error_stage):
    """FAILED items say which stage failed, so a judge failure never reads as a low score."""
    if status in FAILED_STATUSES and error_stage:
        return f"{status} ({error_stage})"
    return status


def error_text(error_stage, error_msg):
    """The error with the stage that failed in front (answer / judge / warmup); '' when none."""
    if not error_msg:
        return ""
    if error_stage and not error_msg.startswith(f"{error_stage}:"):
        return f"{error_stage}: {error_msg}"
    return error_msg


def number(value, digits=2):
    """Plain number text: integral values without decimals, others rounded; None -> ''."""
    if value is None:
        return ""
    if value.__class__ is int:
        return str(value)
    rounded = round(float(value), digits)
    if rounded.is_integer():
        return str(int(rounded))
    # The shortest text for the rounded float: 40.5, 1067.25 (never 1067.2500000001).
    return repr(rounded)
