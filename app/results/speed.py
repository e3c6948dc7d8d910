"""A run's speed as a load tester reports it, per target and per category within a target:
TTFT, time to the first answer token, ITL, TPOT, end-to-end time and decode rate (each with its
percentiles and 95 % CIs), throughput over the answering window, error and timeout rates, and
two flags that say when a figure means something else than it seems.

Read in one query per run (the answers' timing columns as plain tuples, each failure's kind
worked out in SQL), every answer's gap histogram decoded at once (app/latency_arrays.py), then
worked out with numpy: a 100 000-item run takes a second or more, most of it SQLite reading
the wide item rows. So the figures are kept: per process (a small cache) and in the database
(RunSpeed, one row per run, stored when a finished run is digested or first viewed:
kept_speed.py), each under a stamp that an index seek and the kept item counts give; a view
whose stamp still holds reads one row (bench/bench_speed_page.py). Items from before the timing
columns (or answers that were not streamed) still give what they have; the window figures need
send times and say so when there are none.
"""

import json
import math
from array import array

import numpy as np
from peewee import SQL
from peewee import Case
from peewee import fn

from ..db.connection import database
from ..db.models import RunTarget
from ..db.target_name import target_name
from ..latency import bucket_value
from ..latency import histogram_summary
from ..latency_arrays import merged_by_group
from ..runs.outcomes import IS_ANSWER_FAILED
from ..runs.outcomes import I
from .clustered import percentile_ci
from .kept_speed import kept
from .kept_speed import remember
from .kept_speed import stamp
from .kept_speed import store
from .kept_speed import stored
from .kept_speed import working
from .stats import CONFIDENCE
from .stats import RESAMPLES
from .stats import SEED

# The figures each distribution reports besides n, mean and max.
SPEED_QUANTILES = (("p50", 0.50), ("p90", 0.90), ("p95", 0.95), ("p99", 0.99))
# Up to this many values, the CIs come from the project's seeded bootstrap (RESAMPLES draws);
# past it the bootstrap's large-sample limits (the mean's normal interval, the median's order-
# statistic interval), which it matches within its own resampling noise there and which cost
# nothing: bootstrapping 50 000 answers 1000 times takes half a second per figure, 500 answers
# ~25 ms, and a run has 6 figures per target and per category.
BOOTSTRAP_MAX = 100
_Z = 1.959963984540054  # the normal quantile of a 95 % two-sided interval

# What an answer-failure's error text says when it timed out (providers/base.py network_error
# and check_deadline: "Timed out connecting…", "…(read timeout)", "…raise it [the timeout]…").
TIMEOUT_WORDS = ("timed out", "timeout")

# The index of a run's items, in rowid order on SQLite (models.Item.run's own).
RUN_INDEX = "item_run_id"

NO_SEND_TIMES = (
    "no answer has a send time (a run from before send times were stored, or answers that "
    "were not streamed): the answering window is unknown"
)

# The answers' columns, in this order: one tuple per answer, no model objects.
_COLUMNS = (
    I.target,
    I.category,
    I.time_taken_ms,
    I.ttft_ms,
    I.first_answer_ms,
    I.tokens_generated,
    I.tokens_per_second,
    I.tokens_estimated,
    I.sent_ts,
    I.chunks,
    I.itl_hist,
    I.queue_ms,
)


def run_speed(run, averages=None):
    """{"runId", "targets": [...]}: every target's speed figures, in the run's order, each with
    the same figures per category ("categories"). `averages` (model_averages rows), when a
    caller has them, name the targets without reading them again.

    A run whose items have not changed since its figures were last worked out (the stamp: its
    latest item change, found by index, and its kept item counts) is not read again: the
    figures come from a small per-process cache, else from the run's RunSpeed row (one row, for
    every process: kept_speed.py). Otherwise they are worked out, and kept unless the run is
    still working."""
    run_stamp = stamp(run)
    if run_stamp is None:
        return compute_speed(run, averages)
    figures = kept(run, run_stamp)
    if figures is None:
        figures = compute_speed(run, averages)
        if not working(run):
            store(run, run_stamp, json.dumps(figures, default=_plain))
        remember(run, run_stamp, figures)
    return figures


def keep_speed(run):
    """Work out and store a run's speed figures unless its stored ones still hold (a finished
    run, when it is digested: its first view is then one row)."""
    run_stamp = stamp(run)
    if run_stamp is not None and stored(run, run_stamp) is None:
        store(run, run_stamp, json.dumps(compute_speed(run), default=_plain))


def compute_speed(run, averages=None):
    """run_speed's figures worked out from the run's items (no cache, nothing stored)."""
    targets = _targets(run, averages)
    load = (run.settings or {}).get("load")
    columns, failures, step_failures = _read(run, steps=bool(load))
    groups = dict(columns["_groups"])  # (target id, category) -> group number, first seen first
    group_of = columns["_group_of"]
    for key in failures:
        groups.setdefault(key, len(groups))
    hists = _add_counts(columns["_hists"], np.zeros((len(groups), 1), dtype=np.int64))
    out = []
    for target_id, provider_name, model, label in targets:
        keys = sorted(k for k in groups if k[0] == target_id)
        numbers = [groups[k] for k in keys]
        figures = {
            "targetId": target_id,
            "label": target_name(provider_name, label or model),
            "providerName": provider_name,
            "model": model,
        }
        mask = np.isin(group_of, numbers)
        itl = _sum_histograms(hists, numbers)
        fails = [failures.get(k, (0, 0)) for k in keys]
        figures.update(
            _figures(columns, mask, (sum(f[0] for f in fails), sum(f[1] for f in fails)), itl)
        )
        figures["categories"] = [
            {
                "category": key[1],
                **_figures(
                    columns, group_of == number, failures.get(key), _sum_histograms(hists, [number])
                ),
            }
            for key, number in zip(keys, numbers, strict=True)
        ]
        out.append(figures)
    if load:
        _add_steps(run, load, out, columns, step_failures)
    return {"runId": run.run_id, "targets": out}


def _plain(value):
    """A numpy number as the plain one JSON writes (figures worked out with numpy)."""
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"not JSON: {type(value).__name__}")


def _targets(run, averages):
    """(id, provider name, model, label) of the run's targets in the run's order."""
    if averages is None:
        return list(
            RunTarget.select(
                RunTarget.id, RunTarget.provider_name, RunTarget.model, RunTarget.label
            )
            .where(RunTarget.run == run)
            .order_by(RunTarget.position, RunTarget.id)
            .tuples()
        )
    ordered = sorted(averages, key=lambda r: (r["position"], r["target_id"]))
    return [(r["target_id"], r["provider_name"], r["model"], r["target_label"]) for r in ordered]


# Rows read and folded in at a time: the run's answers are kept as numpy columns and merged
# histograms, never as a list of every row (at 1M items those tuples were hundreds of MiB, and
# the server's peak RSS). 5 000, not 20 000: a chunk's tuples and their transpose were most of
# the fold's heap peak (15 -> 6 MiB at 30 000 answers, the end of a 60k-call run's digest) for
# the same CPU.
READ_CHUNK = 5_000


def _read(run, steps=False):
    """One query, read READ_CHUNK rows at a time: the answers (not failed, with an answer time) as
    columns (_Columns; grouped by load step too with `steps`), and the answer attempts that
    failed as {(target id, category): (failed, timed out)} and {(target id, step): (failed,
    timed out)}."""
    failed = IS_ANSWER_FAILED
    timed_out = failed & (
        fn.LOWER(I.error_msg).contains(TIMEOUT_WORDS[0])
        | fn.LOWER(I.error_msg).contains(TIMEOUT_WORDS[1])
    )
    query = I.select(
        *_COLUMNS, I.step, Case(None, [(failed, 1)], 0), Case(None, [(timed_out, 1)], 0)
    ).where((I.run == run) & (I.time_taken_ms.is_null(False) | failed))
    if not database.is_postgres:
        # The run's items in rowid order, the table's own: SQLite otherwise picked an index
        # ordered by score and read the rows in its order, a page here and there (a quarter
        # more CPU at 100 000 items, bench/bench_speed_page.py).
        query = query.from_(SQL(f'"item" AS "t1" INDEXED BY "{RUN_INDEX}"'))
    at = len(_COLUMNS)
    columns = _Columns(steps)
    failures, step_failures = {}, {}
    cursor = database.execute(query)
    while rows := cursor.fetchmany(READ_CHUNK):
        answers = []
        for row in rows:
            if row[-2]:
                step = (row[0], row[at] or 0)
                for counts, key in ((failures, (row[0], row[1] or "")), (step_failures, step)):
                    was = counts.get(key, (0, 0))
                    counts[key] = (was[0] + 1, was[1] + row[-1])
            else:
                answers.append(row)
        del rows
        columns.add(answers, at)
    return columns.done(), failures, step_failures


_FLOATS = ("e2e", "ttft", "ttfot", "tokens", "decode", "sent", "chunks", "queue")
_AT = {"e2e": 2, "ttft": 3, "ttfot": 4, "tokens": 5, "decode": 6, "sent": 8, "chunks": 9}
_AT["queue"] = 11
_ESTIMATED, _ITL = 7, 10


class _Columns:
    """The answers folded in a chunk at a time: numpy columns of the figures (None as NaN),
    each answer's (target, category) group and, with `steps`, (target, load step) group
    (numbered in the order first seen), whether it has no gap histogram, and the histograms
    merged per group. Without load steps the step groups stay empty: merging the gap
    histograms per step decodes every one of them a second time."""

    def __init__(self, steps=False):
        self.steps = steps
        # Packed arrays a chunk is appended to, read as numpy columns at the end without a
        # copy: numpy chunks joined at the end held every column twice (the chunks freed on
        # the heap, the joined columns beside them): a 1M-item warm's peak 243 -> 204 MiB.
        self.parts = {name: array("d") for name in _FLOATS}
        self.parts.update(estimated=array("b"), _itl_missing=array("b"))
        self.groups = {}  # (target id, category) -> number
        self.step_groups = {}  # (target id, step) -> number
        self.group_parts, self.step_parts = array("q"), array("q")
        self.hists = self.step_hists = np.zeros((0, 1), dtype=np.int64)

    def add(self, rows, at):
        if not rows:
            return
        cols = list(zip(*rows, strict=True))
        for name in _FLOATS:
            self.parts[name].frombytes(np.array(cols[_AT[name]], dtype=float).tobytes())
        self.parts["estimated"].frombytes(np.array(cols[_ESTIMATED], dtype=bool).tobytes())
        blobs = cols[_ITL]
        missing = np.array([not h for h in blobs], dtype=bool)
        self.parts["_itl_missing"].frombytes(missing.tobytes())
        group_of = np.array(
            [
                self.groups.setdefault((t, c or ""), len(self.groups))
                for t, c in zip(cols[0], cols[1], strict=True)
            ],
            dtype=np.int64,
        )
        self.group_parts.frombytes(group_of.tobytes())
        self.hists = _add_counts(self.hists, merged_by_group(blobs, group_of, len(self.groups)))
        if not self.steps:
            return
        step_of = np.array(
            [
                self.step_groups.setdefault((t, s or 0), len(self.step_groups))
                for t, s in zip(cols[0], cols[at], strict=True)
            ],
            dtype=np.int64,
        )
        self.step_parts.frombytes(step_of.tobytes())
        self.step_hists = _add_counts(
            self.step_hists, merged_by_group(blobs, step_of, len(self.step_groups))
        )

    def done(self):
        """The columns (a dict as _figures reads it) with "_groups", "_group_of", "_hists"
        and "_step_groups", "_step_of", "_step_hists"."""
        columns = {name: np.frombuffer(self.parts[name], dtype=float) for name in _FLOATS}
        for name in ("estimated", "_itl_missing"):
            columns[name] = np.frombuffer(self.parts[name], dtype=bool)
        columns["_groups"] = self.groups
        columns["_group_of"] = np.frombuffer(self.group_parts, dtype=np.int64)
        columns["_hists"] = self.hists
        columns["_step_groups"] = self.step_groups
        columns["_step_of"] = np.frombuffer(self.step_parts, dtype=np.int64)
        columns["_step_hists"] = self.step_hists
        return columns


def _add_counts(total, part):
    """Two groups x buckets count arrays summed, the smaller one padded with zeros."""
    rows = max(total.shape[0], part.shape[0])
    width = max(total.shape[1], part.shape[1])
    out = np.zeros((rows, width), dtype=np.int64)
    out[: total.shape[0], : total.shape[1]] += total
    out[: part.shape[0], : part.shape[1]] += part
    return out


def _figures(columns, mask, failures, itl):
    """The speed figures of the answers `mask` picks (one target, or one category of it);
    `failures`: (failed, timed out) among their answer attempts; `itl`: their merged gaps."""
    answers = int(mask.sum())
    failed, timeouts = failures or (0, 0)
    attempts = answers + failed
    e2e, ttft, tokens = columns["e2e"][mask], columns["ttft"][mask], columns["tokens"][mask]
    # TPOT: the time after the first token, shared by the tokens after it.
    with np.errstate(invalid="ignore", divide="ignore"):
        tpot = np.where(tokens > 1, (e2e - ttft) / (tokens - 1), np.nan)
    # Estimated rates (a token count guessed from the stream) stay out, as in the averages.
    decode = np.where(columns["estimated"][mask], np.nan, columns["decode"][mask])
    return {
        "answers": answers,
        "attempts": attempts,
        "failed": failed,
        "timeouts": timeouts,
        "errorRate": failed / attempts if attempts else None,
        "timeoutRate": timeouts / attempts if attempts else None,
        "ttftMs": distribution(ttft),
        "ttfotMs": distribution(columns["ttfot"][mask]),
        "itlMs": histogram_distribution(itl),
        "tpotMs": distribution(tpot),
        "e2eMs": distribution(e2e),
        "decodeTokensPerSecond": distribution(decode),
        "window": window(columns["sent"][mask], e2e, tokens),
        "flags": flags(
            ttft, columns["queue"][mask], columns["chunks"][mask], itl_missing(columns)[mask]
        ),
    }


def itl_missing(columns):
    """Whether each answer has no ITL histogram (one chunk, or not streamed)."""
    missing = columns.get("_itl_missing")
    if missing is None:
        missing = np.array([not h for h in columns["itl"]], dtype=bool)
        columns["_itl_missing"] = missing
    return missing


def distribution(values):
    """{n, mean, p50, p90, p95, p99, max, p50Ci, meanCi} of the known (not NaN) values; n = 0
    and None figures when there are none."""
    values = np.asarray(values, dtype=float)
    values = np.sort(values[~np.isnan(values)])
    n = int(values.size)
    out = {"n": n, "mean": None}
    out.update({name: None for name, _ in SPEED_QUANTILES})
    out.update({"max": None, "p50Ci": None, "meanCi": None})
    if not n:
        return out
    out["mean"] = float(values.mean())
    for name, q in SPEED_QUANTILES:
        out[name] = _quantile(values, q)
    out["max"] = float(values[-1])
    out["p50Ci"], out["meanCi"] = _cis(values)
    return out


def _quantile(ordered, q):
    """app.latency.percentile on a sorted numpy array (np.quantile's default, without its
    per-call overhead)."""
    pos = (ordered.size - 1) * q
    lo, hi = math.floor(pos), math.ceil(pos)
    low, high = float(ordered[lo]), float(ordered[hi])
    return low if lo == hi else low + (high - low) * (pos - lo)


def _cis(values):
    """([low, high] of the median, [low, high] of the mean) of sorted values."""
    n = values.size
    if n == 1 or values[0] == values[-1]:
        one = float(values[0])
        return [one, one], [one, one]
    if n <= BOOTSTRAP_MAX:
        rng = np.random.default_rng(SEED)
        draws = np.sort(values[rng.integers(0, n, size=(RESAMPLES, n))], axis=1)
        medians = draws[:, (n - 1) // 2] if n % 2 else draws[:, n // 2 - 1 : n // 2 + 1].mean(1)
        return list(percentile_ci(medians, CONFIDENCE)), list(
            percentile_ci(draws.mean(axis=1), CONFIDENCE)
        )
    mean = float(values.mean())
    half = _Z * float(values.std()) / math.sqrt(n)
    # The median of a resample sits at rank fraction 0.5 +- z * 0.5 / sqrt(n).
    spread = _Z * 0.5 / math.sqrt(n)
    low = _quantile(values, max(0.0, 0.5 - spread))
    high = _quantile(values, min(1.0, 0.5 + spread))
    return [low, high], [mean - half, mean + half]


def window(sent, e2e, tokens):
    """Throughput over the answering window (first send -> last answer's end) of the answers
    with a send time: output tokens/s, requests/s and achieved concurrency (busy time over the
    window); None figures with a reason when no answer has a send time."""
    known = ~np.isnan(sent) & ~np.isnan(e2e)
    out = {
        "answers": int(known.sum()),
        "seconds": None,
        "outputTokensPerSecond": None,
        "requestsPerSecond": None,
        "achievedConcurrency": None,
        "reason": None,
    }
    if not known.any():
        out["reason"] = NO_SEND_TIMES
        return out
    start = float(sent[known].min())
    end = float((sent[known] + e2e[known] / 1000.0).max())
    seconds = end - start
    if seconds <= 0:
        out["reason"] = "the answering window is empty"
        return out
    out["seconds"] = seconds
    out["outputTokensPerSecond"] = float(np.nansum(tokens[known])) / seconds
    out["requestsPerSecond"] = float(known.sum()) / seconds
    out["achievedConcurrency"] = float(e2e[known].sum()) / 1000.0 / seconds
    return out


def flags(ttft, queue, chunks, no_itl):
    """{"queueDominatedTtft", "streamBuffered"}: True, False, or None when it cannot be told.

    Queue-dominated: the median wait before the server started (queue_ms, where it says) is more
    than half the median TTFT of those answers, so TTFT measures the queue, not the model.
    Buffered: most streamed answers came in one chunk (no ITL histogram), so their TTFT is the
    whole answer and their ITL is not measurable (a proxy or server that buffers the stream)."""
    both = ~np.isnan(queue) & ~np.isnan(ttft)
    queued = None
    if both.any():
        queued = bool(np.median(queue[both]) > 0.5 * np.median(ttft[both]))
    streamed = ~np.isnan(chunks)
    buffered = None
    if streamed.any():
        one_chunk = int(((chunks == 1) & no_itl).sum())
        buffered = one_chunk * 2 > int(streamed.sum())
    return {"queueDominatedTtft": queued, "streamBuffered": buffered}


def histogram_distribution(hist):
    """distribution()'s keys for merged token gaps (app.latency histograms); the CIs from a
    seeded bootstrap of the gaps (multinomial draws over the buckets)."""
    out = {"n": 0, "mean": None}
    out.update({name: None for name, _ in SPEED_QUANTILES})
    out.update({"max": None, "p50Ci": None, "meanCi": None})
    summary = histogram_summary(hist, SPEED_QUANTILES) if hist else None
    if summary is None:
        return out
    out.update({k: v for k, v in summary.items() if k != "count"})
    out["n"] = summary["count"]
    buckets = sorted(hist)
    values = np.array([bucket_value(b) for b in buckets])
    counts = np.array([hist[b] for b in buckets], dtype=float)
    n = int(counts.sum())
    if len(buckets) == 1:
        one = float(values[0])
        out["p50Ci"], out["meanCi"] = [one, one], [one, one]
        return out
    if n > BOOTSTRAP_MAX:
        # The bootstrap's large-sample limits, as distribution() gives them.
        mean = float(counts @ values / n)
        half = _Z * math.sqrt(float(counts @ (values - mean) ** 2) / n) / math.sqrt(n)
        spread = _Z * 0.5 / math.sqrt(n)
        running = np.cumsum(counts)
        low, high = (
            float(values[np.searchsorted(running, (n - 1) * q, side="right")])
            for q in (max(0.0, 0.5 - spread), min(1.0, 0.5 + spread))
        )
        out["p50Ci"], out["meanCi"] = [low, high], [mean - half, mean + half]
        return out
    rng = np.random.default_rng(SEED)
    drawn = rng.multinomial(n, counts / n, size=RESAMPLES)
    means = drawn @ values / n
    # The lower median of each draw: the first bucket whose running count passes half.
    cumulative = drawn.cumsum(axis=1)
    medians = values[(cumulative >= (n + 1) // 2).argmax(axis=1)]
    out["p50Ci"] = list(percentile_ci(medians, CONFIDENCE))
    out["meanCi"] = list(percentile_ci(means, CONFIDENCE))
    return out


def _group_histograms(blobs, group_of, groups):
    """One merged gap histogram per group (a 2-D array, groups x buckets) of every answer's
    packed histogram (app.latency.pack; None = no gaps): merge(unpack(b) ...) per group, all
    decoded at once (app/latency_arrays.py)."""
    return merged_by_group(blobs, group_of, groups)


def _sum_histograms(hists, numbers):
    """{bucket: count} of the groups `numbers` together."""
    total = hists[numbers].sum(axis=0) if numbers else np.zeros(0, dtype=np.int64)
    return {int(b): int(total[b]) for b in np.flatnonzero(total)}


def _add_steps(run, load, targets, columns, failures):
    """Each target's figures per load step (settings.load): its "steps", in step order, each
    with the step's load (requests in flight, or requests/s), the figures _figures gives a
    target, and the average score of the step's answers with how many were scored: whether
    quality holds under load, beside the speed. `columns` (with each answer's step group) and
    `failures` are what compute_speed read (_read); one more query, for the scores."""
    scores = {
        (target, step or 0): (mean, n)
        for target, step, mean, n in I.select(
            I.target, I.step, fn.AVG(I.evaluation_score), fn.COUNT(I.evaluation_score)
        )
        .where((I.run == run) & I.evaluation_score.is_null(False))
        .group_by(I.target, I.step)
        .tuples()
    }
    groups = columns["_step_groups"]
    group_of = columns["_step_of"]
    hists = columns["_step_hists"]
    for figures in targets:
        figures["steps"] = []
        for step, value in enumerate(load["steps"]):
            key = (figures["targetId"], step)
            number = groups.get(key)
            mask = group_of == number if number is not None else np.zeros(len(group_of), bool)
            itl = _sum_histograms(hists, [number]) if number is not None else {}
            mean, scored = scores.get(key, (None, 0))
            figures["steps"].append(
                {
                    "step": step,
                    "mode": load["mode"],
                    "load": value,
                    **_figures(columns, mask, failures.get(key), itl),
                    "meanScore": float(mean) if mean is not None else None,
                    "scored": int(scored),
                }
            )
