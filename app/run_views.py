"""Read-only queries behind the dashboard, the run history and the live run view."""

import datetime as dt
import hashlib
import math

from peewee import JOIN
from peewee import Case
from peewee import fn

from .clock import utcnow
from .errors import NotFound
from .errors import ValidationError
from .models import CANT_BE_FINISHED
from .models import COMPLETED
from .models import CONTROL_PAUSED
from .models import CONTROL_RUNNING
from .models import CONTROL_STOPPED
from .models import FAILED
from .models import FINISHED
from .models import ITEM_STATUSES
from .models import NEW
from .models import PENDING
from .models import Collection
from .models import CollectionTask
from .models import Item
from .models import Provider
from .models import Run
from .models import RunLog
from .models import RunTarget
from .runs import run_state
from .runs import spent_usd

RUN_STATES = ("running", "paused", "stopped", "finished")
# Whitelisted history sorts: URL name -> what it orders by.
HISTORY_SORTS = ("created", "run_id", "state", "judge", "items", "score")
RATE_WINDOW = 20  # items used for the ETA and the recent tokens/s


def get_run(run_id):
    """The run named `run_id`, or NotFound."""
    run = Run.get_or_none(Run.run_id == run_id)
    if run is None:
        raise NotFound(f"No run named {run_id!r}; see the run history for the runs that exist.")
    return run


def get_provider(provider_id):
    """The provider with this id, or NotFound."""
    provider = Provider.get_or_none(Provider.id == provider_id)
    if provider is None:
        raise NotFound(f"No provider with id {provider_id}; add one under Settings → Providers.")
    return provider


def state_condition(state):
    """A WHERE expression selecting runs in the shown state (running/paused/stopped/finished)."""
    if state == "finished":
        return Run.status == FINISHED
    control = {"running": CONTROL_RUNNING, "paused": CONTROL_PAUSED, "stopped": CONTROL_STOPPED}[
        state
    ]
    return (Run.status == PENDING) & (Run.control == control)


def budget_halt(run):
    """{spent, limit} when the run halted because its budget was reached, else None."""
    if run_state(run) not in ("paused", "stopped") or "budget" not in (run.control_reason or ""):
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
        budget = float(value)
    except ValueError:
        raise ValidationError.field(
            "max_budget_usd", f"{value!r} is not a number of dollars"
        ) from None
    spent = float(spent_usd(run) or 0.0)
    if not math.isfinite(budget) or not budget > spent:
        raise ValidationError.field(
            "max_budget_usd", f"the new budget must be more than the ${spent:.4f} already spent"
        )
    return budget


def retryable_answer_failures(run):
    """How many items "Retry failed answers" would ask again (answer or warm-up FAILED)."""
    return (
        Item.select()
        .where(
            (Item.run == run) & (Item.status == FAILED) & Item.error_stage.in_(["answer", "warmup"])
        )
        .count()
    )


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


def progress(run, now=None):
    """Counts per status and per phase, the ETA (both phases) and recent tokens/s."""
    now = now or utcnow()
    counts = dict.fromkeys(ITEM_STATUSES, 0)
    answer_failed = judge_failed = 0
    rows = (
        Item.select(Item.status, Item.error_stage, fn.COUNT(Item.id).alias("n"))
        .where(Item.run == run)
        .group_by(Item.status, Item.error_stage)
        .tuples()
    )
    for status, stage, n in rows:
        counts[status] = counts.get(status, 0) + n
        if status in (FAILED, CANT_BE_FINISHED):
            if stage == "judge":
                judge_failed += n
            else:
                answer_failed += n
    total = sum(counts.values())
    benchmarked = total - counts[NEW]
    judged = counts[COMPLETED] + judge_failed
    judge_total = total - answer_failed  # every answer gets judged
    state = run_state(run)
    judging = run.phase == "JUDGING"
    answered = _recent(run, Item.answered_at, Item.tokens_per_second)
    left_per_target, answer_paces = _answer_paces(run, now if not judging else None)
    known = [pace for pace in answer_paces.values() if pace is not None]
    # A target not started yet is assumed to go at the average pace of those measured.
    typical = sum(known) / len(known) if known else None
    judge_every = _interval(_recent(run, Item.judged_at), now if judging else None)
    # Judging time is unknown until two judgements are in: assume it is like answering.
    judge_every = judge_every if judge_every is not None else typical
    eta = None
    left_to_answer, left_to_judge = counts[NEW], judge_total - judged
    if state == "running" and (left_to_answer or left_to_judge):
        if (typical is not None or not left_to_answer) and judge_every is not None:
            eta = left_to_judge * judge_every + sum(
                left * (answer_paces.get(target) or typical)
                for target, left in left_per_target.items()
            )
    tps = [t for _, t in answered[:10] if t]
    return {
        "total": total,
        "counts": counts,
        "benchmarked": benchmarked,
        "answer_failed": answer_failed,
        "judged": judged,
        "judge_failed": judge_failed,
        "judge_total": judge_total,
        "bench_pct": _pct(benchmarked, total),
        "judge_pct": _pct(judged, judge_total),
        "overall_pct": _pct(benchmarked + judged, total + judge_total),
        "eta_seconds": eta,
        "recent_tps": sum(tps) / len(tps) if tps else None,
        "state": state,
        "phase": run.phase,
    }


def _answer_paces(run, now=None):
    """({target id: items left to answer}, {target id: seconds per answer or None}).

    Each target's pace is its own: the spacing of its recent answers, else their average answer
    time. With `now`, the target answering last has its window run to now, so a stall shows.
    """
    left = dict(
        Item.select(Item.target, fn.COUNT(Item.id))
        .where((Item.run == run) & (Item.status == NEW))
        .group_by(Item.target)
        .tuples()
    )
    targets = [t for (t,) in RunTarget.select(RunTarget.id).where(RunTarget.run == run).tuples()]
    windows = {
        target: list(
            Item.select(Item.answered_at, Item.time_taken_ms)
            .where((Item.run == run) & (Item.target == target) & Item.answered_at.is_null(False))
            .order_by(Item.answered_at.desc())
            .limit(RATE_WINDOW)
            .tuples()
        )
        for target in targets
    }
    started = [(w[0][0], t) for t, w in windows.items() if w]
    latest = max(started)[1] if started else None
    paces = {}
    for target, window in windows.items():
        pace = _interval(window, now if target == latest else None)
        times = [ms for _, ms in window if ms]
        if pace is None and times:
            pace = sum(times) / len(times) / 1000.0
        paces[target] = pace
    return left, paces


def _recent(run, column, *extra):
    """The latest RATE_WINDOW (time, *extra) rows of the run where `column` is set."""
    return list(
        Item.select(column, *extra)
        .where((Item.run == run) & column.is_null(False))
        .order_by(column.desc())
        .limit(RATE_WINDOW)
        .tuples()
    )


def _interval(recent, now=None):
    """Seconds per item over the recent window (None with fewer than two items).

    With `now`, the window ends now rather than at the last item, so a stall makes it grow.
    """
    if len(recent) < 2:
        return None
    span = (recent[0][0] - recent[-1][0]).total_seconds()
    if now is not None:
        span += max(0.0, (now - recent[0][0]).total_seconds())
    return span / (len(recent) - 1) if span > 0 else None


def _pct(part, whole):
    return round(100.0 * part / whole, 1) if whole else 0.0


def run_models(run):
    """The run's targets in order, each with `.label` 'provider / model'."""
    targets = list(run.targets.order_by(RunTarget.position, RunTarget.id))
    for t in targets:
        t.label = f"{t.provider_name} / {t.model}"
    return targets


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


def judge_models():
    """Distinct judge models used by any run (for the history filter)."""
    return [m for (m,) in Run.select(Run.judge_model).distinct().order_by(Run.judge_model).tuples()]


def _item_stats(run_ids):
    """{run pk: (total, completed, failed, avg score)} for the given runs, one query."""
    if not run_ids:
        return {}
    done = fn.SUM(Case(None, [(Item.status == COMPLETED, 1)], 0))
    failed = fn.SUM(Case(None, [(Item.status.in_([FAILED, CANT_BE_FINISHED]), 1)], 0))
    rows = (
        Item.select(Item.run, fn.COUNT(Item.id), done, failed, fn.AVG(Item.evaluation_score))
        .where(Item.run.in_(run_ids))
        .group_by(Item.run)
        .tuples()
    )
    return {r[0]: r[1:] for r in rows}


def parse_date(value):
    """A YYYY-MM-DD string as a date, or None when empty or malformed."""
    try:
        return dt.date.fromisoformat(value) if value else None
    except ValueError:
        return None


def history(
    state=None, judge=None, date_from=None, date_to=None, sort="-created", page=1, per_page=25
):
    """Runs matching the filters, sorted and paginated in SQL, with item counts and avg score."""
    query = Run.select()
    if state in RUN_STATES:
        query = query.where(state_condition(state))
    if judge:
        query = query.where(Run.judge_model == judge)
    if date_from:
        query = query.where(Run.created_at >= dt.datetime.combine(date_from, dt.time()))
    if date_to:
        end = dt.datetime.combine(date_to + dt.timedelta(days=1), dt.time())
        query = query.where(Run.created_at < end)
    total = query.count()
    desc = sort.startswith("-")
    key = sort.lstrip("-")
    if key not in HISTORY_SORTS:
        key, desc = "created", True
    if key in ("items", "score"):
        # Sorting by an aggregate needs it for every run matched, so join it as a subquery.
        agg = (
            Item.select(
                Item.run.alias("rid"),
                fn.COUNT(Item.id).alias("n"),
                fn.AVG(Item.evaluation_score).alias("avg"),
            )
            .group_by(Item.run)
            .alias("agg")
        )
        query = query.join(agg, JOIN.LEFT_OUTER, on=(agg.c.rid == Run.id))
        order = [agg.c.n if key == "items" else agg.c.avg]
    else:
        order = {
            "created": [Run.created_at],
            "run_id": [Run.run_id],
            "state": [Run.status, Run.control],
            "judge": [Run.judge_model],
        }[key]
    order = [o.desc(nulls="LAST") if desc else o.asc(nulls="LAST") for o in order]
    order.append(Run.id.desc() if desc else Run.id.asc())
    pages = max(1, -(-total // per_page))
    page = min(max(1, page), pages)
    runs = list(query.order_by(*order).paginate(page, per_page))
    stats = _item_stats([r.id for r in runs])
    models = {}
    for run_pk, model in (
        RunTarget.select(RunTarget.run, RunTarget.model)
        .where(RunTarget.run.in_([r.id for r in runs]))
        .order_by(RunTarget.position, RunTarget.id)
        .tuples()
    ):
        models.setdefault(run_pk, []).append(model)
    for r in runs:
        r.state = run_state(r)
        r.total_items, r.completed_items, r.failed_items, r.avg_score = stats.get(
            r.id, (0, 0, 0, None)
        )
        r.target_models = models.get(r.id, [])
    return {
        "runs": runs,
        "total": total,
        "page": page,
        "pages": pages,
        "sort": ("-" if desc else "") + key,
    }


def _phase_stats(run_ids):
    """{run pk: (total, answered, answer failures, judged)} for the given runs, one query.

    Answered counts every item past NEW (an answer waiting for the judge is answered); judged
    counts completed items and failed judgements, so the two phases read apart.
    """
    if not run_ids:
        return {}
    failed = Item.status.in_([FAILED, CANT_BE_FINISHED])
    judge_stage = Item.error_stage == "judge"
    answer_stage = Item.error_stage.is_null() | (Item.error_stage != "judge")
    answered = fn.SUM(Case(None, [(Item.status != NEW, 1)], 0))
    answer_failed = fn.SUM(Case(None, [(failed & answer_stage, 1)], 0))
    judged = fn.SUM(Case(None, [((Item.status == COMPLETED) | (failed & judge_stage), 1)], 0))
    rows = (
        Item.select(Item.run, fn.COUNT(Item.id), answered, answer_failed, judged)
        .where(Item.run.in_(run_ids))
        .group_by(Item.run)
        .tuples()
    )
    return {r[0]: r[1:] for r in rows}


def continuable_runs(limit=20):
    """Unfinished runs that are not running (paused, stopped, crashed), with their progress."""
    runs = list(
        Run.select()
        .where((Run.status == PENDING) & (Run.control != CONTROL_RUNNING))
        .order_by(Run.created_at.desc())
        .limit(limit)
    )
    stats = _phase_stats([r.id for r in runs])
    for r in runs:
        r.state = run_state(r)
        total, answered, answer_failed, judged = (n or 0 for n in stats.get(r.id, (0, 0, 0, 0)))
        r.total_items, r.answered_items, r.judged_items = total, answered, judged
        r.judge_total = total - answer_failed
        r.done_pct = _pct(answered + judged, total + r.judge_total)
        r.budget_halted = "budget" in (r.control_reason or "")
    return runs
