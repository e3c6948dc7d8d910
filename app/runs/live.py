"""Read-only queries behind the dashboard and the live run view.

The live view's progress and ETA live in progress.py, the run history in history.py.
"""

import hashlib
import math

from peewee import JOIN
from peewee import fn

from ..db.connection import built_once
from ..db.connection import database
from ..db.connection import tuples_once
from ..db.models import COMPLETED
from ..db.models import CONTROL_QUEUED
from ..db.models import CONTROL_RUNNING
from ..db.models import ITEM_STATUSES
from ..db.models import NEW
from ..db.models import PENDING
from ..db.models import Collection
from ..db.models import CollectionTask
from ..db.models import Item
from ..db.models import Provider
from ..db.models import Run
from ..db.models import RunLog
from ..db.models import RunTarget
from ..errors import ValidationError
from .counts import tallies
from .progress import progress_fraction
from .queries import spent_usd
from .spec import setting
from .state import run_state


def budget_halt(run):
    """{spent, limit} when the run halted because its budget was reached, else None."""
    # The reason first: it is a string test, the state may look at the lease.
    if "budget" not in (run.control_reason or "") or run_state(run) not in ("paused", "stopped"):
        return None
    limit = (run.settings or {}).get("maxBudgetUsd")
    limit = float(limit) if limit is not None else None
    spent = float(spent_usd(run) or 0.0)
    minimum = math.floor(spent * 100 + 1) / 100  # the next cent above what was spent
    return {
        "spent": spent,
        "limit": limit,
        "minimum": minimum,
        "suggested": max(minimum, round(2 * max(limit or 0.0, spent), 2)),
    }


def raised_budget(run, value):
    """The new budget (USD) typed next to Resume: None when empty; must exceed what was spent."""
    value = (value or "").strip()
    if not value:
        return None
    try:
        budget = setting("maxBudgetUsd", value)
    except ValueError as exc:
        raise ValidationError.field("maxBudgetUsd", f"{value!r}: {exc}") from None
    spent = float(spent_usd(run) or 0.0)
    if not budget > spent:
        raise ValidationError.field(
            "maxBudgetUsd", f"the new budget must be more than the ${spent:.4f} already spent"
        )
    return budget


def providers():
    """Every provider by name."""
    return list(Provider.select().order_by(Provider.name))


def collections_with_counts():
    """Collections, quick and full first, each with `.task_count`."""
    count = fn.COUNT(CollectionTask.id).alias("task_count")
    collections = list(
        Collection.select(Collection, count)
        .join(CollectionTask, JOIN.LEFT_OUTER)
        .group_by(Collection.id)
        .order_by(Collection.name)
    )
    return sorted(collections, key=lambda c: {"quick": 0, "full": 1}.get(c.name, 2))


def run_models(run):
    """The run's targets in order (each named by its `.label`, unique in the run)."""
    return list(run.targets.order_by(RunTarget.position, RunTarget.id))


LATEST_COLUMNS = (
    Item.id,
    Item.target,
    Item.task_key,
    Item.status,
    Item.error_msg,
    Item.next_retry_at,
    Item.attempts,
    Item.time_taken_ms,
    Item.tokens_generated,
    Item.tokens_estimated,
    Item.tokens_per_second,
    Item.evaluation_score,
    Item.updated_at,
)


def latest_items(run, target=None, status=None, limit=20):
    """The items touched last (answered or judged), newest first, optionally filtered.

    Only the columns the live view shows (runs/_latest_items.html, items_mark): not the answer,
    the raw request and response bodies or the judge's JSON, polled every second."""
    columns = (*LATEST_COLUMNS, RunTarget.id, RunTarget.label, RunTarget.provider_name)
    return list(_latest(run, target, status, *columns).join(RunTarget).limit(limit))


def _latest(run, target, status, *columns):
    query = Item.select(*columns).where((Item.run == run) & Item.last_attempt_at.is_null(False))
    if target:
        query = query.where(Item.target == target)
    if status in ITEM_STATUSES:
        query = query.where(Item.status == status)
    return query.order_by(Item.updated_at.desc(), Item.id.desc())


def items_mark(items, target=None, status=None):
    """A short fingerprint of the latest-items list (changes when any shown row changes):
    items, or the (id, status, updated_at) rows of `latest_marks`."""
    rows = [i if isinstance(i, tuple) else (i.id, i.status, i.updated_at) for i in items]
    text = repr((target, status, [(n, s, str(u)) for n, s, u in rows]))
    return hashlib.sha1(text.encode()).hexdigest()[:12]


def latest_marks(run, target=None, status=None, limit=20):
    """(id, status, updated_at) of the items `latest_items` would show: enough for the poll to
    tell whether they changed, read from the index alone; the rows only when they did."""
    by_target, by_status = bool(target), status in ITEM_STATUSES
    # The query's shape, with stand-ins for the values bound below (in the same order).
    shape = (0, -1 if by_target else None, ITEM_STATUSES[0] if by_status else None)
    values = [getattr(run, "id", run)]
    values += [getattr(target, "id", target)] if by_target else []
    values += [status] if by_status else []
    return tuples_once(
        ("latest marks", by_target, by_status),
        lambda: _latest(*shape, Item.id, Item.status, Item.updated_at).limit(limit),
        (*values, limit),
    )


def latest_log_id(run):
    """The id of the run's latest log line (0 when none): the poll's log mark."""
    sql = built_once(
        "latest log id",
        lambda: RunLog.select(RunLog.id).where(RunLog.run == 0).order_by(RunLog.id.desc()).limit(1),
    )
    row = database.execute_sql(sql, (getattr(run, "id", run), 1)).fetchone()
    return row[0] if row else 0


def recent_logs(run, limit=50):
    """The run's latest log lines, newest first."""
    sql = built_once(
        "recent logs",
        lambda: RunLog.select().where(RunLog.run == 0).order_by(RunLog.id.desc()).limit(limit),
    )
    return list(RunLog.raw(sql, getattr(run, "id", run), limit))


def _phase_stats(run_ids):
    """{run pk: (total, answered, answer failures, judged)} for the given runs, one query.

    Answered counts every item past NEW (an answer waiting for the judge is answered); judged
    counts completed items and failed judgements, so the two phases read apart.
    """
    stats = {}
    for pk, kept in tallies(run_ids).items():
        answered = kept.total - kept.by_status[NEW]
        judged = kept.by_status[COMPLETED] + kept.judge_failed
        stats[pk] = (kept.total, answered, kept.answer_failed, judged)
    return stats


def _status_counts(run_ids):
    """{run pk: {status: n}} for the given runs, one query."""
    return {pk: dict(kept.by_status) for pk, kept in tallies(run_ids).items()}


def continuable_runs(limit=20):
    """Unfinished runs that are not running or queued (paused, stopped, crashed), with their
    progress."""
    runs = list(
        Run.select()
        .where((Run.status == PENDING) & Run.control.not_in([CONTROL_RUNNING, CONTROL_QUEUED]))
        .order_by(Run.created_at.desc())
        .limit(limit)
    )
    stats = _phase_stats([r.id for r in runs])
    counts = _status_counts([r.id for r in runs])
    for r in runs:
        r.state = run_state(r)
        total, answered, answer_failed, judged = (n or 0 for n in stats.get(r.id, (0, 0, 0, 0)))
        # Answered means an answer came back: failed answers are counted apart.
        r.total_items, r.answered_items, r.judged_items = total, answered - answer_failed, judged
        r.answer_failed = answer_failed
        r.judge_total = total - answer_failed
        # The one progress figure (the live view, the API and the CLI show the same).
        r.done_pct = round(100.0 * progress_fraction(counts.get(r.id, {})), 1)
        r.budget_halted = "budget" in (r.control_reason or "")
    return runs
