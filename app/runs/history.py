"""The run history page: runs filtered by state, judge and dates, sorted and paginated in SQL."""

import datetime as dt

from peewee import JOIN

from ..db.models import COMPLETED
from ..db.models import Run
from ..db.models import RunTarget
from ..db.target_name import target_name
from .counts import run_best_scores
from .counts import run_totals
from .counts import tallies
from .queries import RUN_STATES
from .queries import state_condition
from .state import run_state
from .state import state_label

# Whitelisted history sorts: URL name -> what it orders by.
HISTORY_SORTS = ("created", "run_id", "state", "judge", "items", "score")


def judge_models():
    """Distinct judge models used by any run (for the history filter)."""
    query = Run.select(Run.judge_model).distinct().order_by(Run.judge_model)
    return [m for (m,) in query.tuples() if m]  # a run without a judge has none to filter by


def _item_stats(run_ids):
    """{run pk: (total, completed, failed, avg score, Tally)} for the given runs, one query."""
    return {
        pk: (kept.total, kept.by_status[COMPLETED], kept.failed, kept.mean("score"), kept)
        for pk, kept in tallies(run_ids).items()
        if kept.total
    }


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
        # From the kept counts (runs/counts.py): a few rows per run, not every item. "score" is
        # the best target's own average (the list shows each target's), never a blend.
        agg = (run_totals() if key == "items" else run_best_scores()).alias("agg")
        query = query.join(agg, JOIN.LEFT_OUTER, on=(agg.c.rid == Run.id))
        order = [agg.c.n if key == "items" else agg.c.best]
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
    for run_pk, target_id, provider_name, label in (
        RunTarget.select(RunTarget.run, RunTarget.id, RunTarget.provider_name, RunTarget.label)
        .where(RunTarget.run.in_([r.id for r in runs]))
        .order_by(RunTarget.position, RunTarget.id)
        .tuples()
    ):
        models.setdefault(run_pk, []).append((target_id, provider_name, label))
    for r in runs:
        r.state = run_state(r)
        r.total_items, r.completed_items, r.failed_items, r.avg_score, kept = stats.get(
            r.id, (0, 0, 0, None, None)
        )
        r.state_label, r.state_tone = state_label(r.state, r.completed_items, r.failed_items)
        targets = models.get(r.id, [])
        r.target_models = [label for _tid, _provider, label in targets]
        # Each target by its one name (provider/label, as every page calls it) with its own
        # score, in run order (None: not scored yet), and the best and worst.
        r.target_scores = [
            (target_name(provider, label), kept.target_mean(tid) if kept else None)
            for tid, provider, label in targets
        ]
        scored = [s for _label, s in r.target_scores if s is not None]
        r.best_score = max(scored) if scored else None
        r.worst_score = min(scored) if scored else None
    return {
        "runs": runs,
        "total": total,
        "page": page,
        "pages": pages,
        "sort": ("-" if desc else "") + key,
    }
