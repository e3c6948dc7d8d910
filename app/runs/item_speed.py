"""One answer's speed, read from its Item columns (pure): what the API item, the exports and the
item page show, each figure with where it came from.

Here rather than in results/ because the API item (runs/dto.py) shows it too, and runs sits
below results.
"""

import time

from ..latency import figures
from ..latency import unpack_lists

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


def itl(itl_hist, names=ITL_FIGURES):
    """{mean, p50, p90, p99, max} in ms (or those of them `names` names), rounded to 0.01, of an
    answer's token gaps, or None when it has none (latency.figures of its packed histogram)."""
    found = figures(*unpack_lists(itl_hist), names) if itl_hist else None
    return None if found is None else {name: round(found[name], 2) for name in names}


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
