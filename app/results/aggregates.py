"""A finished run in a few numbers per target and category: what Trends stores and draws.

One query reads the run's items once; scores get a cluster-bootstrap CI (the tasks are the
clusters, so repeats count once per task), speed the mean tokens/s and the median TTFT.
"""

import statistics
from array import array

from ..db.models import COMPLETED
from ..hashing import canonical_params
from ..hashing import sha256_json
from ..runs.outcomes import FAILED_STATUSES
from ..runs.outcomes import I
from ..runs.outcomes import T
from .clustered import cluster_sums_mean_ci

OVERALL = ""  # the category of a target's row over all tasks


def series_names(targets):
    """{target id: series name}: provider/model, plus its params when the run has that model
    more than once (a series is one line on Trends)."""
    counts = {}
    for t in targets:
        counts[(t.provider_name, t.model)] = counts.get((t.provider_name, t.model), 0) + 1
    names = {}
    for t in targets:
        name = f"{t.provider_name}/{t.model}"
        if counts[(t.provider_name, t.model)] > 1:
            name += " " + sha256_json(canonical_params(t.params or {}))[:6]
        names[t.id] = name
    return names


def _median(values):
    return statistics.median(values) if values else None


def _mean(values):
    return statistics.fmean(values) if values else None


def _append(values, value):
    if value is not None:
        values.append(value)


class _Bucket:
    """The items of one target (and category) as they are read.

    Numbers are kept in arrays of doubles and each task's scores as a sum and a count: Python
    lists of floats held ~24 MiB at the end of a 60k-call CLI run, its memory peak."""

    def __init__(self):
        self.items = 0
        self.failed = 0
        self.tasks = {}  # task key -> its index in sums and sizes
        self.sums = array("d")  # each task's sum of scores
        self.sizes = array("d")  # and how many
        self.tps = array("d")
        self.ttft = array("d")
        self.times = array("d")
        self.cost = None

    def add(self, task_key, status, score, tps, ttft, time_ms, cost):
        self.items += 1
        if status in FAILED_STATUSES:
            self.failed += 1
        if status == COMPLETED and score is not None:
            n = self.tasks.get(task_key)
            if n is None:
                n = self.tasks[task_key] = len(self.sums)
                self.sums.append(0.0)
                self.sizes.append(0.0)
            self.sums[n] += score
            self.sizes[n] += 1
        if time_ms is not None and status not in FAILED_STATUSES:
            _append(self.tps, tps)
            _append(self.ttft, ttft)
            self.times.append(time_ms)
        if cost is not None:
            self.cost = (self.cost or 0.0) + cost

    def row(self):
        ci = cluster_sums_mean_ci(self.sums, self.sizes)
        return {
            "items": self.items,
            "n": ci["n"] if ci else 0,
            "tasks": ci["clusters"] if ci else 0,
            "failed": self.failed,
            "score": ci["mean"] if ci else None,
            "ci_low": ci["ciLow"] if ci else None,
            "ci_high": ci["ciHigh"] if ci else None,
            "tokens_per_second": _mean(self.tps),
            "ttft_p50_ms": _median(self.ttft),
            "time_p50_ms": _median(self.times),
            "cost_usd": self.cost,
        }


def run_aggregates(run):
    """[{target_id, series, provider_name, model, category, items, n, tasks, failed, score,
    ci_low, ci_high, tokens_per_second, ttft_p50_ms, time_p50_ms, cost_usd}]: one row per
    target over all tasks (category OVERALL) and one per target and category. (Each task's mean
    score is not returned: no reader used it, and at a run's end, its memory peak, a dict of
    every task per row held ~4 MiB at 15 000 tasks.)"""
    targets = list(T.select().where(T.run == run).order_by(T.position, T.id))
    names = series_names(targets)
    buckets = {}
    query = (
        I.select(
            I.target,
            I.category,
            I.task_key,
            I.status,
            I.evaluation_score,
            I.tokens_per_second,
            I.ttft_ms,
            I.time_taken_ms,
            I.cost_usd,
        )
        .where(I.run == run)
        .tuples()
        .iterator()  # rows read once, not cached: a run's end must not hold all its items
    )
    for target_id, category, *values in query:
        for key in ((target_id, OVERALL), (target_id, category or "(none)")):
            bucket = buckets.get(key)
            if bucket is None:
                bucket = buckets[key] = _Bucket()
            bucket.add(*values)
    rows = []
    for t in targets:
        keys = sorted(k for k in buckets if k[0] == t.id)
        for _, category in keys:
            rows.append(
                {
                    "target_id": t.id,
                    "series": names[t.id],
                    "provider_name": t.provider_name,
                    "model": t.model,
                    "category": category,
                    **buckets[(t.id, category)].row(),
                }
            )
    return rows
