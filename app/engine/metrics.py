"""Per-item metrics: context hash, cost, and honest decode speed (never total tokens / latency)."""

from .. import latency
from ..db.models import Price
from ..providers.base import stream_rate


def price_for(provider_name, model):
    """The price row for provider+model, or None."""
    return Price.get_or_none((Price.provider_name == provider_name) & (Price.model == model))


def cost(completion, price):
    """(cost_usd, source): provider-reported cost first, else the price table, else (None, None)."""
    if completion.cost_usd is not None:
        return float(completion.cost_usd), "provider"
    if price is None:
        return None, None
    if completion.prompt_tokens is None and completion.completion_tokens is None:
        return None, None
    usd = (
        (completion.prompt_tokens or 0) * price.input_per_1m
        + (completion.completion_tokens or 0) * price.output_per_1m
    ) / 1e6
    return usd, "price_table"


def speed(completion):
    """(tokens_per_second, source, decode_ms) for an answer.

    The server's own counter wins (Ollama eval_*, llama.cpp timings). Otherwise completion tokens
    over the time from the first token to the end of the stream, and only when enough tokens
    came over long enough to measure a model (providers.base.stream_rate); a whole answer in
    one network chunk, or no first-token time, gives no rate rather than a made-up one. The
    source says whether the token count was the server's (stream.timing) or guessed from the
    chunks (stream.estimate).
    """
    decode_ms = completion.decode_ms
    if completion.tokens_per_second is not None:
        return completion.tokens_per_second, completion.tps_source, decode_ms
    if decode_ms is None and completion.ttft_ms is not None and completion.wall_ms:
        decode_ms = max(completion.wall_ms - completion.ttft_ms, 0.0)
    tps = stream_rate(completion.completion_tokens, decode_ms)
    if tps is None:
        return None, None, decode_ms
    source = "stream.estimate" if completion.tokens_estimated else "stream.timing"
    return tps, source, decode_ms


def queue_ms(completion):
    """The part of TTFT the server did not spend on this request (waiting for a slot, the
    network): TTFT minus the server's own load and prompt time, or None when the server gave no
    prompt time (llama.cpp timings.prompt_ms, Ollama prompt_eval_duration) or its times exceed
    ours (clocks apart, a cached prompt counted oddly): no guess passed off as a measurement."""
    if completion.ttft_ms is None or completion.prompt_ms is None:
        return None
    queue = completion.ttft_ms - (completion.load_ms or 0.0) - completion.prompt_ms
    return queue if queue >= 0 else None


def timing(completion):
    """An answer's stream timing as Item columns: the token gaps kept as a packed histogram
    (None when the stream came in one chunk: ITL not measurable)."""
    return dict(
        first_answer_ms=completion.first_answer_ms,
        last_token_ms=completion.last_token_ms,
        sent_ts=completion.sent_at,
        chunks=completion.chunks,
        reasoning_tokens=completion.reasoning_tokens,
        itl_hist=latency.pack(latency.histogram(completion.gaps_ms or ())),
        queue_ms=queue_ms(completion),
    )
