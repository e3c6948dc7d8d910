"""OpenAIAdapter against the real llama.cpp server from ../shared/llm/serve-local-llm (if up)."""

import json

import pytest

from tests import real_llm

pytestmark = pytest.mark.real_llm
SCHEMA = {
    "type": "object",
    "properties": {
        "score": {"type": "integer", "minimum": 0, "maximum": 100},
        "reason": {"type": "string", "maxLength": 100},
    },
    "required": ["score", "reason"],
    "additionalProperties": False,
}


@pytest.fixture(scope="module")
def adapter(llm_model):
    """The adapter on the server (the test is skipped when it is not up: llm_model)."""
    adapter = real_llm.adapter()
    yield adapter
    adapter.close()


def test_lists_the_served_model(adapter, llm_model):
    listed = adapter.list_models()
    assert listed[0]["id"] == llm_model
    assert "meta" in listed[0]


def test_streamed_chat_with_llamacpp_timings(adapter, llm_model):
    result = adapter.chat(
        llm_model,
        [{"role": "user", "content": "What is the capital of France?"}],
        {"max_tokens": 30, "temperature": 0},
    )
    assert result.text.strip()
    assert result.model == llm_model and result.finish_reason in ("stop", "length")
    assert result.ttft_ms is not None and 0 < result.ttft_ms <= result.wall_ms
    assert result.completion_tokens and result.prompt_tokens and not result.tokens_estimated
    assert result.tps_source == "llamacpp.timings" and result.tokens_per_second > 0
    assert result.decode_ms and result.prompt_ms is not None


def test_json_schema_chat_returns_valid_json(adapter, llm_model):
    messages = [
        {"role": "system", "content": "Grade the answer 0-100. Reply in JSON."},
        {"role": "user", "content": "Question: 2+2? Answer: 4"},
    ]
    result = adapter.chat(
        llm_model, messages, {"max_tokens": 150, "temperature": 0}, json_schema=SCHEMA
    )
    assert result.finish_reason == "stop"
    data = json.loads(result.text)
    assert set(data) == {"score", "reason"} and 0 <= data["score"] <= 100
    assert result.tps_source == "llamacpp.timings"


def test_a_streamed_answer_keeps_its_token_timing_beside_llamacpps_own(adapter, llm_model):
    result = adapter.chat(
        llm_model,
        [{"role": "user", "content": "Count from one to twenty in words."}],
        {"max_tokens": 40, "temperature": 0},
    )
    assert result.chunks and result.chunks > 2
    assert len(result.gaps_ms) == result.chunks - 1
    assert result.ttft_ms <= result.first_answer_ms <= result.last_token_ms <= result.wall_ms
    assert result.sent_at is not None and result.itl["p50"] is not None
    # llama.cpp says how long decoding took; our stream saw the same tokens arrive. Loose: a
    # shared machine can delay our reading, never the server's own clock.
    ours = (result.chunks - 1) / ((result.last_token_ms - result.ttft_ms) / 1000)
    theirs = result.raw_json["timings"]["predicted_per_second"]
    assert 0.5 * theirs <= ours <= 2.0 * theirs
