"""Per-item metrics: context hash, cost, and honest decode speed (never total tokens / latency)."""

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
