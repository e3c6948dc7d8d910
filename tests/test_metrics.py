"""Metrics: context hash, cost from the provider or the price table, honest decode speed."""

import pytest

from app.db.models import Price
from app.engine.metrics import cost
from app.engine.metrics import price_for
from app.engine.metrics import speed
from app.hashing import context_hash
from app.providers.interface import Completion

MESSAGES = [{"role": "user", "content": "hi"}]


def test_context_hash_ignores_param_order_and_unset_params():
    a = context_hash("p", "http://x/", "m", {"temperature": 0, "seed": 1}, MESSAGES, "v1")
    b = context_hash(
        "p", "http://x", "m", {"seed": 1, "temperature": 0, "stop": None}, MESSAGES, "v1"
    )
    assert a == b and len(a) == 64


@pytest.mark.parametrize(
    "change",
    [
        {"provider_name": "q"},
        {"base_url": "http://y"},
        {"model": "n"},
        {"params": {"temperature": 1}},
        {"messages": [{"role": "user", "content": "ho"}]},
        {"template_version": "v2"},
    ],
)
def test_context_hash_changes_with_each_input(change):
    base = {
        "provider_name": "p",
        "base_url": "http://x",
        "model": "m",
        "params": {"temperature": 0},
        "messages": MESSAGES,
        "template_version": "v1",
    }
    assert context_hash(**base) != context_hash(**{**base, **change})


def test_provider_reported_cost_wins(app):
    price = Price.create(provider_name="p", model="m", input_per_1m=1, output_per_1m=1)
    completion = Completion(text="x", cost_usd=0.5, prompt_tokens=10, completion_tokens=10)
    assert cost(completion, price) == (0.5, "provider")


def test_cost_from_the_price_table(app):
    Price.create(provider_name="p", model="m", input_per_1m=2.0, output_per_1m=10.0)
    completion = Completion(text="x", prompt_tokens=1000, completion_tokens=500)
    usd, source = cost(completion, price_for("p", "m"))
    assert usd == pytest.approx((1000 * 2 + 500 * 10) / 1e6) and source == "price_table"


def test_no_price_no_cost(app):
    completion = Completion(text="x", prompt_tokens=10, completion_tokens=10)
    assert cost(completion, price_for("p", "m")) == (None, None)


def test_server_counter_speed_is_kept():
    completion = Completion(
        text="x",
        tokens_per_second=42.0,
        tps_source="ollama.eval",
        decode_ms=500.0,
        completion_tokens=21,
    )
    assert speed(completion) == (42.0, "ollama.eval", 500.0)


def test_speed_from_the_stream_is_decode_time_only():
    completion = Completion(text="x", wall_ms=1100.0, ttft_ms=100.0, completion_tokens=11)
    tps, source, decode_ms = speed(completion)
    assert decode_ms == 1000.0 and tps == pytest.approx(10.0) and source == "stream.timing"


def test_no_first_token_time_means_no_speed_rather_than_tokens_over_latency():
    completion = Completion(text="x", wall_ms=1000.0, completion_tokens=50)
    assert speed(completion)[0] is None


def test_estimated_tokens_are_flagged_in_the_source():
    completion = Completion(
        text="x", wall_ms=300.0, ttft_ms=100.0, completion_tokens=10, tokens_estimated=True
    )
    assert speed(completion)[1] == "stream.estimate"


@pytest.mark.parametrize(
    ("tokens", "wall_ms", "ttft_ms"),
    [
        (6, 160.2, 160.0),  # a whole answer in one chunk: 0.2 ms after the first token
        (7, 1000.0, 100.0),  # too few tokens to measure a rate
        (50, 140.0, 100.0),  # 40 ms after the first token: the network, not the model
    ],
)
def test_no_rate_from_too_little_of_a_stream(tokens, wall_ms, ttft_ms):
    completion = Completion(text="x", wall_ms=wall_ms, ttft_ms=ttft_ms, completion_tokens=tokens)
    assert speed(completion)[:2] == (None, None)
