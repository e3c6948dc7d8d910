"""OpenAIAdapter against the real llama.cpp server from ../shared/llm/serve-local-llm (if up)."""

import json

import pytest
import requests

from app.providers.interface import ProviderConfig
from app.providers.registry import get_adapter

pytestmark = pytest.mark.real_llm
BASE_URL = "http://127.0.0.1:18080"
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
def adapter():
    try:
        with requests.get(BASE_URL + "/v1/models", timeout=1) as resp:
            up = resp.status_code == 200
    except requests.RequestException:
        up = False
    if not up:
        pytest.skip("no local LLM on 127.0.0.1:18080 (run ../shared/llm/serve-local-llm)")
    adapter = get_adapter(
        ProviderConfig(
            name="local",
            type="OPENAI",
            base_url=BASE_URL,
            models_endpoint="/v1/models",
            inference_endpoint="/v1/chat/completions",
            timeout=60,
        )
    )
    yield adapter
    adapter.close()


@pytest.fixture(scope="module")
def model(adapter):
    return adapter.list_models()[0]["id"]


def test_lists_the_served_model(adapter, model):
    assert model
    assert "meta" in adapter.list_models()[0]


def test_streamed_chat_with_llamacpp_timings(adapter, model):
    result = adapter.chat(
        model,
        [{"role": "user", "content": "What is the capital of France?"}],
        {"max_tokens": 30, "temperature": 0},
    )
    assert result.text.strip()
    assert result.model == model and result.finish_reason in ("stop", "length")
    assert result.ttft_ms is not None and 0 < result.ttft_ms <= result.wall_ms
    assert result.completion_tokens and result.prompt_tokens and not result.tokens_estimated
    assert result.tps_source == "llamacpp.timings" and result.tokens_per_second > 0
    assert result.decode_ms and result.prompt_ms is not None


def test_json_schema_chat_returns_valid_json(adapter, model):
    messages = [
        {"role": "system", "content": "Grade the answer 0-100. Reply in JSON."},
        {"role": "user", "content": "Question: 2+2? Answer: 4"},
    ]
    result = adapter.chat(
        model, messages, {"max_tokens": 150, "temperature": 0}, json_schema=SCHEMA
    )
    assert result.finish_reason == "stop"
    data = json.loads(result.text)
    assert set(data) == {"score", "reason"} and 0 <= data["score"] <= 100
    assert result.tps_source == "llamacpp.timings"
