"""Results of a run: per-model averages, breakdowns, one item and chart data, computed in SQL.

The detailed table (URL state, filters, SQL pagination) lives in table.py.
"""

import threading
from collections import OrderedDict

from peewee import JOIN
from peewee import Case
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
from ..runs.outcomes import IS_ANSWER_FAILED
from ..runs.outcomes import IS_JUDGE_FAILED
from ..runs.outcomes import IS_WARMUP_FAILED
from ..runs.outcomes import SCORE
from ..runs.outcomes import I
from ..runs.outcomes import T
from ..runs.outcomes import count_where
from ..runs.outcomes import if_answered
from . import stats
from .clustered import cluster_bootstrap_mean_ci
from .kept import kept_figures

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

_CI_CACHE = OrderedDict()
_CI_LOCK = threading.Lock()
_CI_CACHE_SIZE = 512


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


def compute_averages(run, estimates=False):
    """model_averages' rows in run order, worked out from the run's items (nothing kept)."""
    tps = if_answered(I.tokens_per_second)
    if not estimates:
        tps = Case(None, [(I.tps_source == ESTIMATE, None)], tps)
    query = (
        T.select(
            T.id,
            T.provider_name,
            T.model,
            T.label,
            T.position,
            T.warmup_ms,
            T.warmup_error,
            fn.COUNT(I.id),
            count_where(I.status == COMPLETED),
            count_where(I.status.in_([NEW, WAITING_FOR_JUDGE])),
            count_where(IS_ANSWER_FAILED),
            count_where(IS_WARMUP_FAILED),
            count_where(IS_JUDGE_FAILED),
            fn.AVG(if_answered(I.time_taken_ms)),
            fn.AVG(if_answered(I.ttft_ms)),
            fn.AVG(tps),
            count_where((I.tps_source == ESTIMATE) & I.tokens_per_second.is_null(False)),
            fn.AVG(SCORE),
            fn.COUNT(SCORE),
            fn.SUM(SCORE),
            fn.SUM(SCORE * SCORE),
            fn.MIN(SCORE),
            fn.MAX(SCORE),
            fn.SUM(I.cost_usd),
            fn.SUM(I.prompt_tokens),
            fn.SUM(I.tokens_generated),
        )
        # run_id in the join lets SQLite use an index that starts with (run, target).
        .join(I, JOIN.LEFT_OUTER, on=((I.target == T.id) & (I.run == run.id)))
        .where(T.run == run)
        .group_by(T.id)
        .order_by(T.position, T.id)
        .tuples()
    )
    rows = []
    for (
        tid,
        provider,
        model,
        label,
        position,
        warmup_ms,
        warmup_error,
        items,
        completed,
        pending,
        failed_answer,
        failed_warmup,
        failed_judge,
        avg_time,
        avg_ttft,
        avg_tps,
        tps_estimated,
        avg_score,
        score_n,
        score_sum,
        score_sumsq,
        score_min,
        score_max,
        cost,
        prompt_tokens,
        tokens,
    ) in query:
        rows.append(
            {
                "target_id": tid,
                "provider_name": provider,
                "model": model,
                # provider/label: the label names the model and its params (two targets may
                # share a model); the provider in front, as charts and summaries show it.
                "label": f"{provider}/{label}",
                "target_label": label,
                "position": position,
                "item_count": items,
                "completed": completed,
                "pending": pending,
                "failed_answer": failed_answer,
                "failed_warmup": failed_warmup,
                "failed_judge": failed_judge,
                "failed": failed_answer + failed_judge,
                "avg_time_ms": avg_time,
                "avg_ttft_ms": avg_ttft,
                "avg_tokens_per_second": avg_tps,
                "tps_estimated": tps_estimated,
                "avg_score": avg_score,
                "score_n": score_n,
                "ci_low": None,
                "ci_high": None,
                "cost_usd": cost,
                "prompt_tokens": prompt_tokens,
                "tokens_generated": tokens,
                "warmup_ms": warmup_ms,
                "warmup_error": warmup_error,
                "_ci_key": (run.id, tid, score_n, score_sum, score_sumsq, score_min, score_max),
            }
        )
    _attach_cis(run, rows)
    return rows


def _attach_cis(run, rows):
    """Fill ci_low/ci_high; scores are fetched (one query) only for models not cached yet."""
    missing = []
    for row in rows:
        key = row.pop("_ci_key")
        with _CI_LOCK:
            ci = _CI_CACHE.get(key)
            if ci is not None:
                _CI_CACHE.move_to_end(key)
        if ci is None and row["score_n"]:
            missing.append((row, key))
        elif ci is not None:
            row["ci_low"], row["ci_high"] = ci
    if not missing:
        return
    if int((run.settings or {}).get("repeats") or 1) > 1:
        _attach_cluster_cis(run, missing)
        return
    scores = {row["target_id"]: [] for row, _ in missing}
    query = (
        I.select(I.target, I.evaluation_score)
        .where(
            (I.run == run)
            & (I.status == COMPLETED)
            & I.evaluation_score.is_null(False)
            & I.target.in_(list(scores))
        )
        .tuples()
    )
    for target_id, score in query:
        scores[target_id].append(score)
    for row, key in missing:
        ci = stats.bootstrap_mean_ci(scores[row["target_id"]])
        row["ci_low"], row["ci_high"] = ci
        with _CI_LOCK:
            _CI_CACHE[key] = ci
            while len(_CI_CACHE) > _CI_CACHE_SIZE:
                _CI_CACHE.popitem(last=False)


def _attach_cluster_cis(run, missing):
    """CIs that resample tasks, not answers: the K repeats of a task are one cluster."""
    clusters = {row["target_id"]: {} for row, _ in missing}
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
    for target_id, task_key, score in query:
        clusters[target_id].setdefault(task_key, []).append(score)
    for row, key in missing:
        result = cluster_bootstrap_mean_ci(list(clusters[row["target_id"]].values()))
        ci = (result["ciLow"], result["ciHigh"]) if result else None
        row["ci_low"], row["ci_high"] = ci or (None, None)
        with _CI_LOCK:
            _CI_CACHE[key] = ci
            while len(_CI_CACHE) > _CI_CACHE_SIZE:
                _CI_CACHE.popitem(last=False)


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
    column = {"category": I.category, "difficulty": I.difficulty}.get(by)
    if column is None:
        raise ValidationError.field("by", "must be category or difficulty")
    if targets is None:
        targets = run_targets(run)
    cells = {}
    for target_id, key, avg, n, items, failed_judge, failed_answer in kept_figures(
        run, f"breakdown:{by}", lambda: _breakdown_cells(run, column)
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


def _breakdown_cells(run, column):
    """[target id, key, average score, scored, items, judge failures, answer failures] per
    target and value of `column`, from the run's items."""
    query = (
        I.select(
            I.target,
            column,
            fn.AVG(SCORE),
            fn.COUNT(SCORE),
            fn.COUNT(I.id),
            count_where(IS_JUDGE_FAILED),
            count_where(IS_ANSWER_FAILED),
        )
        .where(I.run == run)
        .group_by(I.target, column)
        .tuples()
    )
    return [list(row) for row in query]


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
