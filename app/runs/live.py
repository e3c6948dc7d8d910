"""Read-only queries behind the dashboard and the live run view.

The live view's progress and ETA live in progress.py, the run history in history.py.
"""

import hashlib
import math

from peewee import JOIN
from peewee import fn

from ..errors import ValidationError
from ..models import COMPLETED
from ..models import CONTROL_QUEUED
from ..models import CONTROL_RUNNING
from ..models import ITEM_STATUSES
from ..models import NEW
from ..models import PENDING
from ..models import Collection
from ..models import CollectionTask
from ..models import Item
from ..models import Provider
from ..models import Run
from ..models import RunLog
from ..models import RunTarget
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


def latest_items(run, target=None, status=None, limit=20):
    """The items touched last (answered or judged), newest first, optionally filtered."""
    query = (
        Item.select(Item, RunTarget)
        .join(RunTarget)
        .where((Item.run == run) & Item.last_attempt_at.is_null(False))
    )
    if target:
        query = query.where(Item.target == target)
    if status in ITEM_STATUSES:
        query = query.where(Item.status == status)
    return list(query.order_by(Item.updated_at.desc(), Item.id.desc()).limit(limit))


def items_mark(items, target=None, status=None):
    """A short fingerprint of the latest-items list (changes when any shown row changes)."""
    text = repr((target, status, [(i.id, i.status, str(i.updated_at)) for i in items]))
    return hashlib.sha1(text.encode()).hexdigest()[:12]


def recent_logs(run, limit=50):
    """The run's latest log lines, newest first."""
    return list(RunLog.select().where(RunLog.run == run).order_by(RunLog.id.desc()).limit(limit))


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
