"""A run's composite score per target, read from its items (composite.py does the sums).

Two queries for the whole run, whatever its number of targets: one grouped query for the average
score, the answer failures and the answers within the latency target; one read of the measured
answer times for their medians (SQLite has no median).
"""

import statistics

from peewee import Value
from peewee import fn

from ..db.connection import database
from ..runs.outcomes import IS_ANSWER_FAILED
from ..runs.outcomes import SCORE
from ..runs.outcomes import I
from ..runs.outcomes import T
from ..runs.outcomes import count_where
from .composite import DEFAULT_SETTINGS
from .composite import best
from .composite import composite

_MEASURED = ~IS_ANSWER_FAILED & I.time_taken_ms.is_null(False)


def latency_target_ms(run):
    """The run's latencyTargetMs setting, or None."""
    value = (run.settings or {}).get("latencyTargetMs")
    return float(value) if value is not None else None


def _median_times(run):
    times = {}
    query = I.select(I.target, I.time_taken_ms).where((I.run == run) & _MEASURED).tuples()
    for target, ms in database.execute(query):
        times.setdefault(target, []).append(ms)
    return {target: statistics.median(values) for target, values in times.items()}


def target_composites(run, settings=DEFAULT_SETTINGS):
    """{target id: Composite or None} for every target of the run with items.

    The on-target share counts an answer that failed as one that missed the target (a timeout
    is the slowest answer of all); answers reused from an earlier run have no time and count
    neither way."""
    target = latency_target_ms(run)
    met = count_where(_MEASURED & (I.time_taken_ms <= target)) if target is not None else Value(0)
    rows = (
        I.select(
            I.target,
            fn.AVG(SCORE),
            count_where(_MEASURED),
            count_where(IS_ANSWER_FAILED),
            met,
        )
        .where(I.run == run)
        .group_by(I.target)
        .tuples()
    )
    medians = _median_times(run)
    out = {}
    for target_id, avg_score, measured, failed, within in rows:
        out[target_id] = composite(
            avg_score,
            medians.get(target_id),
            met=within,
            answers=measured + failed,
            latency_target_ms=target,
            settings=settings,
        )
    return out


def target_name(target):
    """A target as people read it: its label, else provider/model."""
    return target.label or f"{target.provider_name}/{target.model}"


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
                "label": target_name(t),
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
