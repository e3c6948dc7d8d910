"""A run's composite score per target, read from its items (composite.py does the sums).

The average score and the answer failures come from the averages' one grouped query (passed in
when the caller has read them); one more query reads the measured answer times for the medians
(SQLite has no median) and the answers within the latency target, whatever the targets' number.
"""

import statistics
from array import array

from peewee import Case

from ..db.connection import database
from ..db.target_name import target_name
from ..runs.outcomes import FAILED_STATUSES
from ..runs.outcomes import IS_ANSWER_FAILED
from ..runs.outcomes import I
from ..runs.outcomes import T
from ..runs.outcomes import count_where
from .averages import model_averages
from .composite import DEFAULT_SETTINGS
from .composite import best
from .composite import composite
from .kept import kept_figures

# The answers whose time counts: as aggregates.py takes them for the median Trends stores, so a
# run's composite is the same number on its page and on Trends.
_MEASURED = I.status.not_in(FAILED_STATUSES) & I.time_taken_ms.is_null(False)
NO_CATEGORY = "(none)"  # an item without a category, as aggregates.py names it


def latency_target_ms(run):
    """The run's latencyTargetMs setting, or None."""
    value = (run.settings or {}).get("latencyTargetMs")
    return float(value) if value is not None else None


def _answer_times(run):
    """[target id, median answer time, answers timed, answers within the latency target] per
    target with a timed answer: kept per run state (kept.py), so a view reads no item."""
    return {
        row[0]: row[1:] for row in kept_figures(run, "answer-times", lambda: _time_figures(run))
    }


def _time_figures(run):
    target = latency_target_ms(run)
    times = {}
    query = I.select(I.target, I.time_taken_ms).where((I.run == run) & _MEASURED).tuples()
    # Packed doubles, not a list of float objects: a quarter of the memory (32 -> 8 MiB at a
    # million answers); the median sorts one target's values at a time.
    for target_id, ms in database.execute(query):
        values = times.get(target_id)
        if values is None:
            values = times[target_id] = array("d")
        values.append(ms)
    return [
        [
            target_id,
            statistics.median(values),
            len(values),
            sum(1 for ms in values if target is not None and ms <= target),
        ]
        for target_id, values in times.items()
    ]


def target_composites(run, settings=DEFAULT_SETTINGS, averages=None):
    """{target id: Composite or None} for every target of the run.

    `averages` (model_averages' rows) when the caller has them already: the average score and
    the answer failures come from them. The on-target share counts an answer that failed as one
    that missed the target (a timeout is the slowest answer of all); answers reused from an
    earlier run have no time and count neither way."""
    averages = model_averages(run) if averages is None else averages
    target = latency_target_ms(run)
    times = _answer_times(run)
    out = {}
    for row in averages:
        median, timed, met = times.get(row["target_id"], (None, 0, 0))
        out[row["target_id"]] = composite(
            row["avg_score"],
            median,
            met=met,
            answers=timed + row["failed_answer"],
            latency_target_ms=target,
            settings=settings,
        )
    return out


def _name(target):
    """A target as people read it: its one name (db.target_name)."""
    return target_name(target.provider_name, target.label or target.model)


def composites_dict(run, settings=DEFAULT_SETTINGS):
    """The run's composite scores for the JSON API: per target and the best one."""
    composites = target_composites(run, settings)
    targets = list(T.select().where(T.run == run).order_by(T.position, T.id))
    rows = []
    for t in targets:
        c = composites.get(t.id)
        rows.append(
            {
                "targetId": t.id,
                "label": _name(t),
                "compositeScore": c.score if c else None,
                "composite": c.to_dict() if c else None,
            }
        )
    top = best(composites.values())
    best_row = next((r for r in rows if top is not None and r["compositeScore"] == top.score), None)
    return {
        "compositeScores": rows,
        "bestCompositeScore": (
            {"label": best_row["label"], "score": top.score, "formula": top.formula()}
            if best_row
            else None
        ),
    }


def on_target_counts(targets_ms):
    """{(run pk, target pk, category): (met, answers)} for runs with a latency target
    ({run pk: its latencyTargetMs}); category "" is all tasks. One grouped query over the items
    of those runs only: runs without a target need none (Trends reads aggregates alone)."""
    if not targets_ms:
        return {}
    limit = Case(I.run, list(targets_ms.items()), None)
    query = (
        I.select(
            I.run,
            I.target,
            I.category,
            count_where(_MEASURED & (I.time_taken_ms <= limit)),
            count_where(_MEASURED),
            count_where(IS_ANSWER_FAILED),
        )
        .where(I.run.in_(list(targets_ms)))
        .group_by(I.run, I.target, I.category)
        .tuples()
    )
    out = {}
    for run_pk, target_pk, category, met, measured, failed in query:
        for key in ((run_pk, target_pk, ""), (run_pk, target_pk, category or NO_CATEGORY)):
            before = out.get(key, (0, 0))
            out[key] = (before[0] + met, before[1] + measured + failed)
    return out


def aggregate_composite(score, time_p50_ms, target_ms, counts, settings=DEFAULT_SETTINGS):
    """The composite of a stored aggregate row (Trends, a collection's summary): its score and
    median answer time, and (met, answers) from on_target_counts when its run has a target."""
    met, answers = counts or (0, 0)
    return composite(score, time_p50_ms, met, answers, target_ms, settings)
