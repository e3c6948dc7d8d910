"""One answer's speed, read from its Item columns (pure): what the API item, the exports and the
item page show, each figure with where it came from.

Here rather than in results/ because the API item (runs/dto.py) shows it too, and runs sits
below results.
"""

import time
from bisect import bisect_right
from itertools import accumulate
from math import ceil
from math import floor
from math import fsum
from operator import mul

from ..latency import BUCKET_MS
from ..latency import LINEAR_BUCKETS
from ..latency import QUANTILES
from ..latency import bucket_value
from ..latency import unpack

# The Item columns item_speed() reads.
COLUMNS = (
    "time_taken_ms",
    "ttft_ms",
    "first_answer_ms",
    "last_token_ms",
    "sent_ts",
    "chunks",
    "tokens_generated",
    "tokens_estimated",
    "tokens_per_second",
    "tps_source",
    "reasoning_tokens",
    "itl_hist",
    "queue_ms",
)
ITL_FIGURES = ("mean", "p50", "p90", "p99", "max")
QUANTILE_OF = dict(QUANTILES)

# Where a figure came from, as a person reads it.
STREAM = "stream"
SERVER = "server timings"
ESTIMATE = "estimate"
_TPS_SOURCES = {
    "ollama.eval": SERVER,
    "llamacpp.timings": SERVER,
    "stream.timing": STREAM,
    "stream.estimate": ESTIMATE,
}


def columns_of(item):
    """{column: value} of COLUMNS from an Item (or any object with those attributes)."""
    return {name: getattr(item, name, None) for name in COLUMNS}


def sent_at(sent_ts):
    """A stored sent_ts (Unix seconds) as ISO 8601 UTC to the millisecond with a Z, or None
    (clock.isoformat's text; gmtime + strftime, as the detailed CSV reads it for every row)."""
    if sent_ts is None:
        return None
    micros = round(sent_ts * 1_000_000)
    seconds, rest = divmod(micros, 1_000_000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{rest // 1000:03d}Z"


def tpot_ms(e2e_ms, ttft_ms, tokens):
    """Time per output token after the first: (e2e - TTFT) / (tokens - 1); None with fewer than
    two tokens or no TTFT (nothing to divide)."""
    if e2e_ms is None or ttft_ms is None or tokens is None or tokens < 2:
        return None
    return max(e2e_ms - ttft_ms, 0.0) / (tokens - 1)


def itl(itl_hist, figures=ITL_FIGURES):
    """{mean, p50, p90, p99, max} in ms (or those of them `figures` names) of an answer's token
    gaps, or None when it has none: latency.histogram_summary's figures, read faster.

    An export reads it for every row (the detailed CSV's goal is 50 000 rows/s), and
    unpack() + histogram_summary() take ~75 us a row: nearly every packed byte is a one-byte
    varint (bucket steps and counts under 128), so those histograms are read with C-speed
    slicing and the percentiles found by bisecting the running counts."""
    if not itl_hist:
        return None
    data = bytes(itl_hist)
    if max(data) < 0x80:
        buckets, counts = list(accumulate(data[0::2])), data[1::2]
    else:
        hist = unpack(data)
        buckets = sorted(hist)
        counts = [hist[b] for b in buckets]
    running = list(accumulate(counts))
    total = running[-1] if running else 0
    if not total:
        return None
    out = {}
    for name in figures:
        if name == "mean" and buckets[-1] <= LINEAR_BUCKETS:  # b * BUCKET_MS: sums exactly
            value = sum(map(mul, buckets, counts)) * BUCKET_MS / total
        elif name == "mean":
            value = fsum(bucket_value(b) * n for b, n in zip(buckets, counts, strict=True)) / total
        elif name == "max":
            value = bucket_value(buckets[-1])
        else:
            value = _percentile(buckets, running, total, QUANTILE_OF[name])
        out[name] = round(value, 2)
    return out


def _percentile(buckets, running, total, q):
    # histogram_summary's interpolation: the values at ranks floor(pos) and ceil(pos).
    pos = (total - 1) * q
    lo, hi = floor(pos), ceil(pos)
    low, high = buckets[bisect_right(running, lo)], buckets[bisect_right(running, hi)]
    low = low * BUCKET_MS if low <= LINEAR_BUCKETS else bucket_value(low)
    high = high * BUCKET_MS if high <= LINEAR_BUCKETS else bucket_value(high)
    return low + (high - low) * (pos - lo)


def item_speed(columns):
    """One answer's speed from {column: value} (COLUMNS; missing ones read as None).

    `itl_measurable` is False for a stream that came in one chunk ("ITL not measurable"), None
    when no stream was recorded (a failed or reused answer). `sources` says where each figure
    came from: the stream we timed, the server's own timings, or an estimate (token counts
    guessed from the chunks)."""
    get = columns.get
    tokens, estimated = get("tokens_generated"), bool(get("tokens_estimated"))
    gaps = itl(get("itl_hist"))
    chunks = get("chunks")
    measurable = None if chunks is None and gaps is None else gaps is not None
    tpot = tpot_ms(get("time_taken_ms"), get("ttft_ms"), tokens)
    sources = {}
    if get("ttft_ms") is not None:
        sources["ttft"] = STREAM
    if tpot is not None:
        sources["tpot"] = ESTIMATE if estimated else STREAM
    if get("tokens_per_second") is not None:
        sources["tokensPerSecond"] = _TPS_SOURCES.get(get("tps_source"), get("tps_source"))
    if gaps is not None:
        sources["itl"] = STREAM
    if get("queue_ms") is not None:
        # TTFT we timed, less the load and prompt time the server reported.
        sources["queue"] = ESTIMATE
    return {
        "sent_at": sent_at(get("sent_ts")),
        "ttft_ms": get("ttft_ms"),
        "first_answer_ms": get("first_answer_ms"),
        "last_token_ms": get("last_token_ms"),
        "e2e_ms": get("time_taken_ms"),
        "tpot_ms": tpot,
        "tokens_per_second": get("tokens_per_second"),
        "tps_source": get("tps_source"),
        "chunks": chunks,
        "reasoning_tokens": get("reasoning_tokens"),
        "itl": gaps,
        "itl_measurable": measurable,
        "queue_ms": get("queue_ms"),
        "sources": sources,
    }


def api_fields(speed):
    """item_speed()'s figures as the API item and results.jsonl name them (camelCase)."""
    return {
        "firstAnswerMs": speed["first_answer_ms"],
        "lastTokenMs": speed["last_token_ms"],
        "sentAt": speed["sent_at"],
        "chunks": speed["chunks"],
        "reasoningTokens": speed["reasoning_tokens"],
        "itl": speed["itl"],
        "itlMeasurable": speed["itl_measurable"],
        "tpotMs": speed["tpot_ms"],
        "queueMs": speed["queue_ms"],
    }
