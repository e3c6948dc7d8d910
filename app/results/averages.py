"""Results of a run: per-model averages, breakdowns, one item and chart data, computed in SQL.

The detailed table (URL state, filters, SQL pagination) lives in table.py.
"""

import hashlib
import math
from array import array

from peewee import fn

from ..db.connection import database
from ..db.models import CANT_BE_FINISHED
from ..db.models import COMPLETED
from ..db.models import DIFFICULTIES
from ..db.models import FAILED
from ..db.models import NEW
from ..db.models import WAITING_FOR_JUDGE
from ..errors import NotFound
from ..errors import ValidationError
from ..runs.outcomes import FAILED_STATUSES
from ..runs.outcomes import I
from ..runs.outcomes import T
from .kept import kept_figures
from .kept import stamp
from .recent import Recent

AVERAGE_SORTS = {
    "provider": "provider_name",
    "model": "label",
    "time": "avg_time_ms",
    "ttft": "avg_ttft_ms",
    "tps": "avg_tokens_per_second",
    "score": "avg_score",
    "completed": "completed",
    "failed": "failed",
    "cost": "cost_usd",
    "position": "position",
}


# ---- per-model averages -------------------------------------------------------------------

# {(database, run, target, a digest of its scores' histogram): (low, high)}: a run of
# continuous scores draws them one by one (clustered.histogram_mean_ci), not cheap at 100 000.
_CI_CACHE = Recent(512)


ESTIMATE = "stream.estimate"  # the tps_source of a rate whose token count was guessed


def model_averages(run, sort=None, direction="asc", estimates=False):
    """Per model: averages, counts (answer vs judge failures), cost, tokens and a 95 % score CI.

    The average tokens/s holds measured rates only (the server's counters, or its token count
    timed on the stream); estimated rates (token count guessed from chunks) join it only when
    `estimates` is asked for, and `tps_estimated` says how many there are. Kept per run state
    (kept.py): a view of an unchanged run reads no item.
    """
    name = "averages+estimates" if estimates else "averages"
    rows = kept_figures(run, name, lambda: compute_averages(run, estimates))
    return sort_averages(rows, sort, direction)


def averages_to_dict(row):
    """One model's averages with camelCase keys (API and summary.json)."""
    return {
        "providerName": row["provider_name"],
        "model": row["model"],
        "label": row["label"],
        "targetLabel": row["target_label"],
        "items": row["item_count"],
        "completed": row["completed"],
        "pending": row["pending"],
        "failedAnswer": row["failed_answer"],
        "failedWarmup": row["failed_warmup"],
        "failedJudge": row["failed_judge"],
        "avgTimeMs": row["avg_time_ms"],
        "avgTtftMs": row["avg_ttft_ms"],
        "avgTokensPerSecond": row["avg_tokens_per_second"],
        # Estimated rates (token count guessed from the stream) left out of the average.
        "tokensPerSecondEstimated": row["tps_estimated"],
        "avgScore": row["avg_score"],
        "scoredItems": row["score_n"],
        "scoreCi95": ([row["ci_low"], row["ci_high"]] if row["ci_low"] is not None else None),
        "costUsd": row["cost_usd"],
        "promptTokens": row["prompt_tokens"] or 0,
        "tokensGenerated": row["tokens_generated"] or 0,
    }


# ---- the run's items in one grouped pass ----------------------------------------------------

# What every figure of this module is worked out from: the run's items counted and summed per
# group of these columns, read in the order of the covering index item_figures (models.py), so
# the database reads that index alone, in order, and streams the groups (no item row, no sort).
# The score is the last key, so each target's scores come as a histogram (what the CI
# resamples); groups are merged over it as they stream (a run of continuous scores has nearly
# a group per item: held as two arrays of numbers, not as objects).
_GROUP_KEY = (
    I.status,
    I.error_stage,
    I.target,
    I.category,
    I.difficulty,
    I.tps_source,
    I.evaluation_score,
)
_GROUP_SUMS = (
    fn.COUNT(I.id),
    fn.SUM(I.time_taken_ms),
    fn.COUNT(I.time_taken_ms),
    fn.SUM(I.ttft_ms),
    fn.COUNT(I.ttft_ms),
    fn.SUM(I.tokens_per_second),
    fn.COUNT(I.tokens_per_second),
    fn.SUM(I.cost_usd),
    fn.SUM(I.prompt_tokens),
    fn.SUM(I.tokens_generated),
)
_KEYS = ("status", "stage", "target", "category", "difficulty", "tps_source")
_SUMS = ("n", "time", "time_n", "ttft", "ttft_n", "tps", "tps_n", "cost", "prompt_tokens")
_SUMS += ("tokens",)


class Group:
    """A run's items that share status, stage, target, category, difficulty and rate source,
    with their sums, and their scores' sum and count where they count (completed)."""

    __slots__ = (*_KEYS, *_SUMS, "score_sum", "scored")

    def __init__(self, key):
        for name, value in zip(_KEYS, key, strict=True):
            setattr(self, name, value)
        for name in _SUMS:  # counts from 0, sums from None (no value yet)
            setattr(self, name, 0 if name == "n" or name.endswith("_n") else None)
        self.score_sum = 0.0
        self.scored = 0

    def add(self, sums, score):
        for name, value in zip(_SUMS, sums, strict=True):
            setattr(self, name, _add(getattr(self, name), value))
        if score is not None and self.status == COMPLETED:
            self.score_sum += score * sums[0]
            self.scored += sums[0]

    @property
    def judge_failed(self):
        return self.status in FAILED_STATUSES and self.stage == "judge"

    @property
    def answer_failed(self):
        return self.status in FAILED_STATUSES and self.stage != "judge"


class ItemGroups:
    """A run's items in one pass: `groups` (Group) and each target's completed scores as a
    histogram, `scores[target id] = (values, counts)` (arrays, values in no order, repeated)."""

    def __init__(self, rows):
        groups = {}
        scores = {}
        width = len(_KEYS)
        for row in rows:
            key = row[:width]
            group = groups.get(key)
            if group is None:
                group = groups[key] = Group(key)
            score, sums = row[width], row[width + 1 :]
            group.add(sums, score)
            if score is not None and group.status == COMPLETED:
                values, counts = scores.get(group.target) or scores.setdefault(
                    group.target, (array("d"), array("q"))
                )
                values.append(score)
                counts.append(sums[0])
        self.groups = list(groups.values())
        self.scores = scores


# The groups of the last two (run, stamp) a page read: the averages and both breakdowns of one
# view come from one pass over the items.
_GROUPS = Recent(2)


def item_groups(run):
    """The run's ItemGroups (one indexed pass, shared by the figures of one run state)."""
    key = (database.database, run.id, stamp(run))
    groups = _GROUPS.get(key)
    if groups is None:
        query = I.select(*_GROUP_KEY, *_GROUP_SUMS).where(I.run == run.id).group_by(*_GROUP_KEY)
        groups = ItemGroups(database.execute(query))
        _GROUPS.put(key, groups)
    return groups


def _add(total, value):
    """A SUM over groups: None while no group had a value (as SQL's SUM of no values)."""
    if value is None:
        return total
    return value if total is None else total + value


def _mean(total, n):
    return float(total) / n if n else None


def _score_mean(groups):
    """(mean score, how many scores) over `groups`: their sums added exactly (fsum)."""
    n = sum(g.scored for g in groups)
    return (math.fsum(g.score_sum for g in groups) / n if n else None), n


def compute_averages(run, estimates=False):
    """model_averages' rows in run order, worked out from the run's items (nothing kept)."""
    targets = (
        T.select(T.id, T.provider_name, T.model, T.label, T.position, T.warmup_ms, T.warmup_error)
        .where(T.run == run)
        .order_by(T.position, T.id)
        .tuples()
    )
    read = item_groups(run)
    by_target = {}
    for g in read.groups:
        by_target.setdefault(g.target, []).append(g)
    rows = []
    for tid, provider, model, label, position, warmup_ms, warmup_error in targets:
        groups = by_target.get(tid, [])
        row = {
            "target_id": tid,
            "provider_name": provider,
            "model": model,
            # provider/label: the label names the model and its params (two targets may
            # share a model); the provider in front, as charts and summaries show it.
            "label": f"{provider}/{label}",
            "target_label": label,
            "position": position,
            **_target_figures(groups, estimates),
            "ci_low": None,
            "ci_high": None,
            "warmup_ms": warmup_ms,
            "warmup_error": warmup_error,
        }
        rows.append(row)
    _attach_cis(run, rows, read.scores)
    return rows


def _target_figures(groups, estimates):
    """One target's counts, means and sums from its groups (answer failures carry no speed;
    estimated rates only when `estimates`)."""
    counts = dict.fromkeys(("items", "completed", "pending", "answer", "warmup", "judge"), 0)
    sums = dict.fromkeys(("time", "ttft", "tps", "cost", "prompt", "tokens"))
    ns = dict.fromkeys(("time", "ttft", "tps"), 0)
    tps_estimated = 0
    for g in groups:
        counts["items"] += g.n
        counts["completed"] += g.n if g.status == COMPLETED else 0
        counts["pending"] += g.n if g.status in (NEW, WAITING_FOR_JUDGE) else 0
        counts["answer"] += g.n if g.answer_failed else 0
        counts["warmup"] += g.n if g.answer_failed and g.stage == "warmup" else 0
        counts["judge"] += g.n if g.judge_failed else 0
        estimate = g.tps_source == ESTIMATE
        tps_estimated += g.tps_n if estimate else 0
        sums["cost"] = _add(sums["cost"], g.cost)
        sums["prompt"] = _add(sums["prompt"], g.prompt_tokens)
        sums["tokens"] = _add(sums["tokens"], g.tokens)
        if g.answer_failed:
            continue
        for name in ("time", "ttft", "tps"):
            if name == "tps" and estimate and not estimates:
                continue
            sums[name] = _add(sums[name], getattr(g, name))
            ns[name] += getattr(g, f"{name}_n")
    avg_score, scored = _score_mean(groups)
    return {
        "item_count": counts["items"],
        "completed": counts["completed"],
        "pending": counts["pending"],
        "failed_answer": counts["answer"],
        "failed_warmup": counts["warmup"],
        "failed_judge": counts["judge"],
        "failed": counts["answer"] + counts["judge"],
        "avg_time_ms": _mean(sums["time"], ns["time"]),
        "avg_ttft_ms": _mean(sums["ttft"], ns["ttft"]),
        "avg_tokens_per_second": _mean(sums["tps"], ns["tps"]),
        "tps_estimated": tps_estimated,
        "avg_score": avg_score,
        "score_n": scored,
        "cost_usd": None if sums["cost"] is None else float(sums["cost"]),
        "prompt_tokens": None if sums["prompt"] is None else int(sums["prompt"]),
        "tokens_generated": None if sums["tokens"] is None else int(sums["tokens"]),
    }


def _attach_cis(run, rows, scores):
    """Fill ci_low/ci_high: a bootstrap of each target's scores (clustered.histogram_mean_ci,
    from their histogram), or of its tasks when the run repeats them (read then, one query)."""
    # Lazy: the bootstrap and numpy (~0.1 s of CPU to import) only when the figures are worked
    # out; a kept run's rows are read back without them (`llmbench show` of a finished run).
    from . import clustered

    scored = [row for row in rows if row["score_n"]]
    if int((run.settings or {}).get("repeats") or 1) > 1:
        # Resampling tasks, not answers: the K repeats of a task are one cluster. Not cached
        # apart (which task holds which score is not in the histogram): the averages are.
        clusters = _task_clusters(run, scored)
        for row in scored:
            result = clustered.cluster_bootstrap_mean_ci(list(clusters[row["target_id"]].values()))
            if result:
                row["ci_low"], row["ci_high"] = result["ciLow"], result["ciHigh"]
        return
    for row in scored:
        values, counts = clustered.merged_histogram(*scores[row["target_id"]])
        digest = hashlib.sha256(values.tobytes() + counts.tobytes()).hexdigest()
        key = (database.database, run.id, row["target_id"], digest)
        ci = _CI_CACHE.get(key)
        if ci is None:
            ci = clustered.histogram_mean_ci(values, counts)
            _CI_CACHE.put(key, ci)
        row["ci_low"], row["ci_high"] = ci


def _task_clusters(run, rows):
    """{target id: {task key: [its scores]}} of the rows' targets (none read without rows)."""
    clusters = {row["target_id"]: {} for row in rows}
    if not rows:
        return clusters
    query = (
        I.select(I.target, I.task_key, I.evaluation_score)
        .where(
            (I.run == run)
            & (I.status == COMPLETED)
            & I.evaluation_score.is_null(False)
            & I.target.in_(list(clusters))
        )
        .tuples()
    )
    for target_id, task_key, score in database.execute(query):
        clusters[target_id].setdefault(task_key, []).append(score)
    return clusters


def sort_averages(rows, sort=None, direction="asc"):
    """Sort average rows by a whitelisted key; missing values last either way."""
    key = AVERAGE_SORTS.get(sort or "position", "position")
    present = [r for r in rows if r[key] is not None]
    absent = [r for r in rows if r[key] is None]
    present.sort(key=lambda r: (r["position"], r["target_id"]))
    # Stable even when reversed: ties keep run order.
    present.sort(key=lambda r: r[key], reverse=(direction == "desc"))
    return present + absent


# ---- breakdowns -----------------------------------------------------------------------------


def run_targets(run):
    """The run's targets as (target id, provider name, model, label) tuples, in run order."""
    return list(
        T.select(T.id, T.provider_name, T.model, T.label)
        .where(T.run == run)
        .order_by(T.position, T.id)
        .tuples()
    )


def targets_from_averages(averages):
    """The targets `breakdown` takes, from average rows already read (in run order, no query)."""
    return [
        (r["target_id"], r["provider_name"], r["model"], r["target_label"])
        for r in sorted(averages, key=lambda r: (r["position"], r["target_id"]))
    ]


def breakdown(run, by="category", targets=None):
    """Average score per category (or difficulty) per model, as rows of cells in model order."""
    if by not in ("category", "difficulty"):
        raise ValidationError.field("by", "must be category or difficulty")
    if targets is None:
        targets = run_targets(run)
    cells = {}
    for target_id, key, avg, n, items, failed_judge, failed_answer in kept_figures(
        run, f"breakdown:{by}", lambda: _breakdown_cells(run, by)
    ):
        cells[(key, target_id)] = {
            "avg": avg,
            "n": n,
            "item_count": items,
            "failed_judge": failed_judge,
            "failed_answer": failed_answer,
        }
    keys = sorted({k for k, _ in cells}, key=lambda k: _key_order(by, k))
    empty = {"avg": None, "n": 0, "item_count": 0, "failed_judge": 0, "failed_answer": 0}
    out_rows = []
    for key in keys:
        row_cells = [cells.get((key, t[0]), empty) for t in targets]
        n = sum(c["n"] for c in row_cells)
        overall = sum(c["avg"] * c["n"] for c in row_cells if c["n"]) / n if n else None
        out_rows.append({"key": key, "cells": row_cells, "avg": overall, "n": n})
    models = [{"target_id": t[0], "label": f"{t[1]}/{t[3]}"} for t in targets]
    return {"by": by, "keys": keys, "models": models, "rows": out_rows}


def _breakdown_cells(run, by):
    """[target id, key, average score, scored, items, judge failures, answer failures] per
    target and value of `by` (category or difficulty), from the run's items."""
    cells = {}
    for g in item_groups(run).groups:
        cells.setdefault((g.target, getattr(g, by)), []).append(g)
    rows = []
    for (target_id, key), groups in cells.items():
        avg, scored = _score_mean(groups)
        items = sum(g.n for g in groups)
        judge = sum(g.n for g in groups if g.judge_failed)
        answer = sum(g.n for g in groups if g.answer_failed)
        rows.append([target_id, key, avg, scored, items, judge, answer])
    return rows


def _key_order(by, key):
    if by == "difficulty" and key in DIFFICULTIES:
        return (0, DIFFICULTIES.index(key), key)
    return (1, 0, key or "")


# ---- one item, and chart data ---------------------------------------------------------------


def get_item(run, item_id):
    """One item of `run` with its target, or NotFound."""
    item = (
        I.select(I, T)
        .join(T, on=(I.target == T.id))
        .where((I.run == run) & (I.id == item_id))
        .first()
    )
    if item is None:
        raise NotFound(f"Run {run.run_id!r} has no item {item_id}.")
    return item


def latency_samples(run, buckets=1000):
    """Per target id: answer times (ms), sorted; above `buckets` values, evenly spaced order stats.

    Bounded whatever the run's size: a box plot needs the quantiles, not every value.
    """
    table = I._meta.table_name
    sql = (
        f"SELECT target_id, t FROM ("
        f" SELECT target_id, time_taken_ms AS t,"
        f"  ROW_NUMBER() OVER (PARTITION BY target_id ORDER BY time_taken_ms) - 1 AS r,"
        f"  COUNT(*) OVER (PARTITION BY target_id) AS n"
        f" FROM {table} WHERE run_id = ? AND time_taken_ms IS NOT NULL"
        f" AND NOT (status IN (?, ?) AND COALESCE(error_stage, '') != 'judge')) AS ranked"
        f" WHERE n <= ? OR r = 0 OR r = n - 1 OR (r * ?) / (n - 1) != ((r - 1) * ?) / (n - 1)"
        f" ORDER BY target_id, t"
    )
    out = {}
    cursor = database.execute_sql(
        sql, (run.id, FAILED, CANT_BE_FINISHED, buckets + 1, buckets, buckets)
    )
    for target_id, value in cursor:
        out.setdefault(target_id, []).append(value)
    return out


def kept_latency_samples(run, buckets=1000):
    """latency_samples(run, buckets), kept while the run holds (kept.py): the latency chart
    read every answer's time on each view (0.9 s at 100 000 items)."""
    rows = kept_figures(
        run, f"latency:{buckets}", lambda: list(latency_samples(run, buckets).items())
    )
    return {target_id: values for target_id, values in rows}
