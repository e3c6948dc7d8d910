"""Trends: score and speed over time per series (provider/model), from per-run aggregates.

Scores come from RunAggregate rows (a few per run), never the items: 200 runs x 5 models is a
thousand rows whatever the runs' sizes. The speed percentiles and goodput of the points shown
come from run_speed / run_goodput, once per run shown (both kept per run once worked out, so
that is a row each; so are the on-target counts of a run with a latency target: kept_runs.py).
Only comparable runs join a line: a change of judge (provider, model, params or prompt) or of
the task set (the run's dataset hash) breaks it, and the point where it breaks says why.
"""

import datetime as dt

from ..clock import isoformat
from ..db.models import Collection
from ..db.models import Run
from ..db.models import RunAggregate
from ..db.models import RunCollection
from ..db.models import RunTarget
from ..db.target_name import target_name
from ..errors import ValidationError
from ..ids import is_db_id
from ..results.composite import DEFAULT_SETTINGS
from ..results.composite_figures import aggregate_composite
from ..results.kept_runs import kept_goodput
from ..results.kept_runs import kept_on_target_counts
from ..results.speed import run_speed
from ..runs.dto import NO_JUDGE
from ..runs.spec import run_slo

A = RunAggregate
# A judge-free run digested before its label was NO_JUDGE has "/" (empty provider and model).
_OLD_NO_JUDGE = "/"


def parse_day(value, field, end=False):
    """A YYYY-MM-DD (or ISO datetime) filter as a naive UTC datetime; `end` takes the whole day."""
    if value in (None, ""):
        return None
    text = str(value).strip()
    try:
        if len(text) == 10:
            day = dt.datetime.combine(dt.date.fromisoformat(text), dt.time())
            return day + dt.timedelta(days=1) if end else day
        when = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValidationError.field(field, "use a date YYYY-MM-DD or an ISO 8601 time") from None
    if when.tzinfo is not None:
        when = when.astimezone(dt.UTC).replace(tzinfo=None)
    return when


def collection_of(ref):
    """A collection by id or name for a filter, or ValidationError naming `collection`."""
    if ref in (None, ""):
        return None
    text = str(ref)
    query = Collection.select().where(Collection.name == text)
    # Only a number SQLite can hold is an id; a longer one can only be a name.
    if text.isascii() and text.isdigit() and is_db_id(int(text)):
        query = Collection.select().where((Collection.id == int(text)) | (Collection.name == text))
    collection = query.first()
    if collection is None:
        raise ValidationError.field("collection", f"no collection {ref!r}")
    return collection


def _filtered(filters):
    query = (
        A.select(
            Run.run_id,
            A.series,
            A.model,
            A.provider_name,
            A.finished_at,
            A.judge_key,
            A.judge_label,
            A.tasks_key,
            A.score,
            A.ci_low,
            A.ci_high,
            A.n,
            A.tasks,
            A.tokens_per_second,
            A.ttft_p50_ms,
            A.time_p50_ms,
            A.run.alias("run_pk"),
            A.target.alias("target_pk"),
            A.category,
            Run.settings,
            Run.triggered_by,
            Run.trigger_note,
            RunTarget.label.alias("target_label"),
        )
        .join(Run, on=(A.run == Run.id))
        .join(RunTarget, on=(A.target == RunTarget.id))
    )
    query = query.where(A.category == (filters.get("category") or ""))
    collection = collection_of(filters.get("collection"))
    if collection is not None:
        runs = RunCollection.select(RunCollection.run).where(
            RunCollection.collection == collection.id
        )
        query = query.where(A.run.in_(runs))
    judge = filters.get("judge")
    if judge == NO_JUDGE:
        query = query.where(A.judge_label.in_((NO_JUDGE, _OLD_NO_JUDGE)))
    elif judge:
        query = query.where((A.judge_label == judge) | A.judge_label.endswith("/" + judge))
    model = filters.get("model")
    if model:
        query = query.where((A.model == model) | (A.series == model))
    start = parse_day(filters.get("from"), "from")
    end = parse_day(filters.get("to"), "to", end=True)
    if start:
        query = query.where(A.finished_at >= start)
    if end:
        query = query.where(A.finished_at < end)
    return query.order_by(A.finished_at, A.run, A.series).namedtuples()


def judge_text(label):
    """A digest's judge label as people read it: NO_JUDGE for a judge-free run, old or new."""
    return NO_JUDGE if label == _OLD_NO_JUDGE else label


def break_reason(before, after):
    """Why `after` does not join `before`'s line, or None when the two are comparable."""
    if before.judge_key != after.judge_key:
        if before.judge_label != after.judge_label:
            old, new = judge_text(before.judge_label), judge_text(after.judge_label)
            return f"judge changed: {old} → {new}"
        return f"judge params or prompt changed ({judge_text(after.judge_label)})"
    if before.tasks_key != after.tasks_key:
        old, new = (before.tasks_key or "?")[:8], (after.tasks_key or "?")[:8]
        return f"tasks changed (task set {old} → {new})"
    return None


def _point(row, reason, composite):
    return {
        "runId": row.run_id,
        "finishedAt": isoformat(row.finished_at),
        "score": row.score,
        "ciLow": row.ci_low,
        "ciHigh": row.ci_high,
        "n": row.n,
        "tasks": row.tasks,
        "tokensPerSecond": row.tokens_per_second,
        "ttftMs": row.ttft_p50_ms,
        "timeMs": row.time_p50_ms,
        "judge": judge_text(row.judge_label),
        "comparable": reason is None,
        "breakReason": reason,
        "composite": composite.score if composite else None,
        "compositeFormula": composite.formula() if composite else None,
        "triggeredBy": row.triggered_by,
        "triggerNote": row.trigger_note,
    }


def _target_ms(row):
    value = (row.settings or {}).get("latencyTargetMs")
    return float(value) if value is not None else None


def trends(filters=None, composite_settings=DEFAULT_SETTINGS, speed_points=None):
    """{"series": [{target, label, model, providerName, points: [{runId, finishedAt, score, ciLow,
    ciHigh, n, tokensPerSecond, ttftMs, comparable, breakReason, composite, compositeFormula,
    triggeredBy, triggerNote, ttftP50Ms, ttftP90Ms, e2eP90Ms, outputTokensPerSecond,
    goodput, ...}]}]} for the filters collection, judge, model, category, from, to (all
    optional). The speed figures (run_speed's, goodput with the run's SLO) come on the latest
    `speed_points` points of each series (every point when None); the others have None."""
    filters = filters or {}
    series, last, refs = {}, {}, {}
    rows = list(_filtered(filters))
    # The on-target part needs the items of the runs that set a latency target, and only those.
    counts = kept_on_target_counts({r.run_pk: _target_ms(r) for r in rows if _target_ms(r)})
    for row in rows:
        composite = aggregate_composite(
            row.score,
            row.time_p50_ms,
            _target_ms(row),
            counts.get((row.run_pk, row.target_pk, row.category)),
            composite_settings,
        )
        entry = series.get(row.series)
        if entry is None:
            entry = series[row.series] = {
                "target": row.series,
                "model": row.model,
                "providerName": row.provider_name,
                "points": [],
            }
        # What the line is called: its target's one name in the latest run (a series keeps
        # its key, provider/model and a params hash, across runs; people read the label).
        entry["label"] = target_name(row.provider_name, row.target_label)
        before = last.get(row.series)
        reason = break_reason(before, row) if before else None
        entry["points"].append(_point(row, reason, composite))
        refs.setdefault(row.series, []).append((row.run_pk, row.target_pk))
        last[row.series] = row
    _add_speed(series, refs, filters.get("category") or "", speed_points)
    return {"series": list(series.values()), "category": filters.get("category") or None}


SPEED_KEYS = ("ttftP50Ms", "ttftP90Ms", "e2eP90Ms", "outputTokensPerSecond", "goodput")


def _add_speed(series, refs, category, latest):
    """Give the latest `latest` points of each series (all when None) their run's speed figures
    for the point's target (and category); one run_speed per run shown, read from its kept
    figures once worked out. Goodput is a whole target's, so a category's points have none."""
    wanted = {}
    for name, entry in series.items():
        start = 0 if latest is None else max(0, len(entry["points"]) - latest)
        for point in entry["points"]:
            point.update(dict.fromkeys(SPEED_KEYS))
        for point, ref in list(zip(entry["points"], refs[name], strict=True))[start:]:
            wanted.setdefault(ref[0], []).append((point, ref[1]))
    if not wanted:
        return
    for run in Run.select().where(Run.id.in_(list(wanted))):
        speed = run_speed(run)
        goodput = kept_goodput(run, speed=speed) if run_slo(run) and not category else None
        targets = {t["targetId"]: t for t in speed["targets"]}
        good = {t["targetId"]: t["goodput"] for t in goodput["targets"]} if goodput else {}
        for point, target_pk in wanted[run.id]:
            figures = targets.get(target_pk)
            if figures is not None and category:
                figures = next(
                    (c for c in figures["categories"] if c["category"] == category), None
                )
            if figures is None:
                continue
            point.update(
                ttftP50Ms=figures["ttftMs"]["p50"],
                ttftP90Ms=figures["ttftMs"]["p90"],
                e2eP90Ms=figures["e2eMs"]["p90"],
                outputTokensPerSecond=figures["window"]["outputTokensPerSecond"],
                goodput=good.get(target_pk),
            )


def filter_choices():
    """What the filters offer: collections, judges, models and categories seen in aggregates."""

    def distinct(field, where=None):
        query = A.select(field).distinct()
        if where is not None:
            query = query.where(where)
        return [v for (v,) in query.order_by(field).tuples()]

    return {
        "collections": list(Collection.select().order_by(Collection.name)),
        "judges": list(dict.fromkeys(judge_text(j) for j in distinct(A.judge_label))),
        "models": distinct(A.model),
        "categories": distinct(A.category, A.category != ""),
    }
