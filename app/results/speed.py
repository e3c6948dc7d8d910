"""A run's speed as a load tester reports it, per target and per category within a target:
TTFT, time to the first answer token, ITL, TPOT, end-to-end time and decode rate (each with its
percentiles and 95 % CIs), throughput over the answering window, error and timeout rates, and
two flags that say when a figure means something else than it seems.

Read from the database in two queries per run (the answers' timing columns as plain tuples, the
failures counted in SQL), then worked out with numpy: a 100 000-item run stays well under a
second. Items from before the timing columns (or answers that were not streamed) still give
what they have; the window figures need send times and say so when there are none.
"""

import math

import numpy as np
from peewee import fn

from ..db.connection import database
from ..db.models import RunTarget
from ..latency import bucket_value
from ..latency import histogram_summary
from ..runs.outcomes import IS_ANSWER_FAILED
from ..runs.outcomes import I
from ..runs.outcomes import count_where
from .clustered import percentile_ci
from .stats import CONFIDENCE
from .stats import RESAMPLES
from .stats import SEED

# The figures each distribution reports besides n, mean and max.
SPEED_QUANTILES = (("p50", 0.50), ("p90", 0.90), ("p95", 0.95), ("p99", 0.99))
# Up to this many values, the CIs come from the project's seeded bootstrap (RESAMPLES draws);
# past it the bootstrap's large-sample limits (the mean's normal interval, the median's order-
# statistic interval), which it matches within its own resampling noise there and which cost
# nothing: bootstrapping 50 000 answers 1000 times takes half a second per figure.
BOOTSTRAP_MAX = 500
_Z = 1.959963984540054  # the normal quantile of a 95 % two-sided interval

# What an answer-failure's error text says when it timed out (providers/base.py network_error
# and check_deadline: "Timed out connecting…", "…(read timeout)", "…raise it [the timeout]…").
TIMEOUT_WORDS = ("timed out", "timeout")

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


def run_speed(run):
    """{"runId", "targets": [...]}: every target's speed figures, in the run's order, each with
    the same figures per category ("categories")."""
    targets = list(
        RunTarget.select(RunTarget.id, RunTarget.provider_name, RunTarget.model, RunTarget.label)
        .where(RunTarget.run == run)
        .order_by(RunTarget.position, RunTarget.id)
        .tuples()
    )
    answers = _answer_rows(run)
    failures = _failure_counts(run)
    by_target = {}
    for row in answers:
        by_target.setdefault(row[0], []).append(row)
    out = []
    for target_id, provider_name, model, label in targets:
        columns = _columns(by_target.get(target_id, []))
        fails = {cat: counts for (tid, cat), counts in failures.items() if tid == target_id}
        figures = {
            "targetId": target_id,
            "label": f"{provider_name}/{label or model}",
            "providerName": provider_name,
            "model": model,
        }
        everything = np.ones(columns["e2e"].size, dtype=bool)
        figures.update(_figures(columns, everything, _sum_counts(fails.values())))
        categories = columns["category"]
        figures["categories"] = [
            {"category": c, **_figures(columns, categories == c, fails.get(c))}
            for c in sorted(set(categories.tolist()) | set(fails))
        ]
        out.append(figures)
    return {"runId": run.run_id, "targets": out}


def _answer_rows(run):
    """The answers' timing columns as tuples (an answer: not failed, with an answer time)."""
    query = I.select(*_COLUMNS).where(
        (I.run == run) & I.time_taken_ms.is_null(False) & ~IS_ANSWER_FAILED
    )
    return database.execute(query).fetchall()


def _failure_counts(run):
    """{(target id, category): (answer attempts, failed, timed out)}, counted in SQL."""
    timed_out = IS_ANSWER_FAILED & (
        fn.LOWER(I.error_msg).contains(TIMEOUT_WORDS[0])
        | fn.LOWER(I.error_msg).contains(TIMEOUT_WORDS[1])
    )
    attempted = IS_ANSWER_FAILED | I.time_taken_ms.is_null(False)
    query = (
        I.select(
            I.target,
            I.category,
            count_where(attempted),
            count_where(IS_ANSWER_FAILED),
            count_where(timed_out),
        )
        .where(I.run == run)
        .group_by(I.target, I.category)
    )
    return {
        (tid, category or ""): (int(a), int(f), int(t))
        for tid, category, a, f, t in database.execute(query).fetchall()
    }


def _sum_counts(counts):
    counts = list(counts)
    return tuple(sum(c[i] for c in counts) for i in range(3)) if counts else None


def _columns(rows):
    """A target's answers as numpy columns (None as NaN), transposed in one go."""
    names = ("target", "category", "e2e", "ttft", "first_answer", "tokens", "decode")
    names += ("estimated", "sent", "chunks", "itl", "queue")
    if not rows:
        columns = {name: np.array([], dtype=float) for name in names}
        columns["category"] = np.array([], dtype=object)
        columns["estimated"] = np.array([], dtype=bool)
        columns["itl"] = np.array([], dtype=object)
        return columns
    raw = dict(zip(names, zip(*rows, strict=True), strict=True))
    columns = {name: np.array(raw[name], dtype=float) for name in names[2:7] + ("sent", "queue")}
    columns["chunks"] = np.array(raw["chunks"], dtype=float)
    columns["category"] = np.array([c or "" for c in raw["category"]], dtype=object)
    columns["estimated"] = np.array([bool(e) for e in raw["estimated"]], dtype=bool)
    itl = np.empty(len(rows), dtype=object)
    itl[:] = raw["itl"]
    columns["itl"] = itl
    return columns


def _figures(columns, mask, failures):
    """The speed figures of the answers `mask` picks (one target, or one category of it);
    `failures`: (attempts, failed, timed out) counted for them."""
    answers = int(mask.sum())
    attempts, failed, timeouts = failures or (answers, 0, 0)
    e2e, ttft, tokens = columns["e2e"][mask], columns["ttft"][mask], columns["tokens"][mask]
    # TPOT: the time after the first token, shared by the tokens after it.
    with np.errstate(invalid="ignore", divide="ignore"):
        tpot = np.where(tokens > 1, (e2e - ttft) / (tokens - 1), np.nan)
    # Estimated rates (a token count guessed from the stream) stay out, as in the averages.
    decode = np.where(columns["estimated"][mask], np.nan, columns["decode"][mask])
    hists = columns["itl"][mask].tolist()
    return {
        "answers": answers,
        "attempts": attempts,
        "failed": failed,
        "timeouts": timeouts,
        "errorRate": failed / attempts if attempts else None,
        "timeoutRate": timeouts / attempts if attempts else None,
        "ttftMs": distribution(ttft),
        "ttfotMs": distribution(columns["first_answer"][mask]),
        "itlMs": histogram_distribution(_merged_histogram([h for h in hists if h])),
        "tpotMs": distribution(tpot),
        "e2eMs": distribution(e2e),
        "decodeTokensPerSecond": distribution(decode),
        "window": window(columns["sent"][mask], e2e, tokens),
        "flags": flags(ttft, columns["queue"][mask], columns["chunks"][mask], hists),
    }


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
        out[name] = float(np.quantile(values, q))
    out["max"] = float(values[-1])
    out["p50Ci"], out["meanCi"] = _cis(values)
    return out


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
    low = float(np.quantile(values, max(0.0, 0.5 - spread)))
    high = float(np.quantile(values, min(1.0, 0.5 + spread)))
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


def flags(ttft, queue, chunks, hists):
    """{"queueDominatedTtft", "streamBuffered"}: True, False, or None when it cannot be told.

    Queue-dominated: the median wait before the server started (queue_ms, where it says) is more
    than half the median TTFT of those answers, so TTFT measures the queue, not the model.
    Buffered: most streamed answers came in one chunk, so their TTFT is the whole answer and
    their ITL is not measurable (a proxy or server that buffers the stream)."""
    both = ~np.isnan(queue) & ~np.isnan(ttft)
    queued = None
    if both.any():
        queued = bool(np.median(queue[both]) > 0.5 * np.median(ttft[both]))
    streamed = ~np.isnan(chunks)
    buffered = None
    if streamed.any():
        one_chunk = sum(
            1 for c, h in zip(chunks.tolist(), hists, strict=True) if c == 1 and h is None
        )
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
    rng = np.random.default_rng(SEED)
    drawn = rng.multinomial(n, counts / n, size=RESAMPLES)
    means = drawn @ values / n
    # The lower median of each draw: the first bucket whose running count passes half.
    cumulative = drawn.cumsum(axis=1)
    medians = values[(cumulative >= (n + 1) // 2).argmax(axis=1)]
    out["p50Ci"] = list(percentile_ci(medians, CONFIDENCE))
    out["meanCi"] = list(percentile_ci(means, CONFIDENCE))
    return out


def _merged_histogram(blobs):
    """app.latency.merge(unpack(b) for b in blobs), decoded as one numpy array: the blobs are
    varint (bucket delta, count) pairs, and 100 000 answers' worth decode in milliseconds."""
    if not blobs:
        return {}
    parts = [bytes(b) for b in blobs]
    data = np.frombuffer(b"".join(parts), dtype=np.uint8)
    ends = (data & 0x80) == 0  # the last byte of each varint
    if ends.all():
        values = data.astype(np.int64)  # every varint one byte: the usual case
    else:
        index = np.cumsum(ends) - ends  # which varint each byte belongs to
        starts = np.flatnonzero(np.concatenate(([True], ends[:-1])))
        shift = 7 * (np.arange(data.size) - starts[index])
        values = np.bincount(
            index, weights=(data & 0x7F).astype(np.int64) << shift, minlength=int(ends.sum())
        ).astype(np.int64)
    # Values per blob: its count of varint ends; each blob's bucket deltas restart from 0.
    sizes = np.array([len(p) for p in parts])
    per_blob = np.add.reduceat(ends, np.concatenate(([0], np.cumsum(sizes)[:-1]))).astype(np.int64)
    deltas, counts = values[0::2], values[1::2]
    running = np.cumsum(deltas)
    pairs = per_blob // 2
    first = np.concatenate(([0], np.cumsum(pairs)[:-1]))
    base = np.where(first > 0, running[np.maximum(first - 1, 0)], 0)
    buckets = running - np.repeat(base, pairs)
    merged = np.bincount(buckets, weights=counts)
    return {int(b): int(merged[b]) for b in np.flatnonzero(merged)}
