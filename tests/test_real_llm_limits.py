"""Every call is bounded, against the real llama.cpp server from ../shared/llm/serve-local-llm
(skipped when it is down): the answer cap cuts and flags a real stream, the total deadline ends
a real generation that would go on, and the real server's own rate is the one recorded."""

import pytest
import requests

from app.providers.interface import ProviderConfig
from app.providers.interface import ProviderError
from app.providers.registry import get_adapter

pytestmark = [pytest.mark.real_llm, pytest.mark.slow]
BASE_URL = "http://127.0.0.1:18080"
COUNT = [{"role": "user", "content": "Count from 1 to 300, one number after another."}]


@pytest.fixture(scope="module")
def model():
    try:
        with requests.get(BASE_URL + "/v1/models", timeout=1) as resp:
            return resp.json()["data"][0]["id"]
    except (requests.RequestException, ValueError, KeyError, IndexError):
        pytest.skip("no local LLM on 127.0.0.1:18080 (run ../shared/llm/serve-local-llm)")


def adapter(**config):
    return get_adapter(
        ProviderConfig(
            name="local",
            type="OPENAI",
            base_url=BASE_URL,
            models_endpoint="/v1/models",
            inference_endpoint="/v1/chat/completions",
            timeout=60,
            **config,
        )
    )


def test_a_real_answer_past_the_cap_is_cut_and_flagged(model):
    client = adapter(max_answer_chars=40)
    try:
        result = client.chat(model, COUNT, params={"max_tokens": 200, "ignore_eos": True})
    finally:
        client.close()
    assert result.answer_cut and len(result.text) == 40


def test_a_real_generation_past_the_calls_deadline_ends_there(model):
    client = adapter()
    try:
        with pytest.raises(ProviderError) as info:
            # ignore_eos: the model cannot stop early; 1000 tokens take far longer than 0.5 s.
            client.chat(
                model, COUNT, params={"max_tokens": 1000, "ignore_eos": True, "max_seconds": 0.5}
            )
    finally:
        client.close()
    assert info.value.kind == "deadline" and not info.value.transient


def test_the_real_servers_own_rate_is_recorded(model):
    client = adapter()
    try:
        result = client.chat(model, COUNT, params={"max_tokens": 48, "ignore_eos": True})
    finally:
        client.close()
    assert result.tps_source == "llamacpp.timings" and result.tokens_per_second > 0
