"""OllamaAdapter against the fake server over real HTTP."""

import threading

import pytest

from app.providers.interface import Cancelled
from app.providers.interface import ProviderConfig
from app.providers.interface import ProviderError
from app.providers.ollama import OllamaAdapter
from app.providers.registry import get_adapter

SECRET = "ollama-secret-token-9876"
HI = [{"role": "user", "content": "hi"}]


def make(base_url, timeout=5.0):
    return get_adapter(
        ProviderConfig(
            name="o",
            type="OLLAMA",
            base_url=base_url,
            models_endpoint="/api/tags",
            inference_endpoint="/api/chat",
            headers={"X-Api-Key": SECRET},
            timeout=timeout,
        )
    )


@pytest.fixture
def adapter(fake):
    adapter = make(fake.url)
    yield adapter
    adapter.close()


def chat_error(adapter, **kw):
    with pytest.raises(ProviderError) as info:
        adapter.chat("m", HI, **kw)
    assert SECRET not in str(info.value)
    return info.value


def test_get_adapter_builds_ollama(adapter):
    assert isinstance(adapter, OllamaAdapter)


def test_list_models(fake, adapter):
    fake.models = ["llama3:8b", "qwen2:0.5b"]
    models = adapter.list_models()
    assert [m["id"] for m in models] == ["llama3:8b", "qwen2:0.5b"]
    assert models[0]["details"]["quantization_level"] == "Q4_0" and "size" in models[0]


def test_streaming_text_and_eval_metrics(fake, adapter):
    fake.enqueue(
        "one two three",
        timings={
            "eval_count": 3,
            "eval_duration": 60_000_000,
            "prompt_eval_count": 9,
            "prompt_eval_duration": 15_000_000,
            "load_duration": 2_000_000,
        },
    )
    result = adapter.chat("m", HI)
    assert result.text == "one two three" and result.finish_reason == "stop"
    assert result.completion_tokens == 3 and result.prompt_tokens == 9
    assert result.tokens_per_second == pytest.approx(50.0) and result.tps_source == "ollama.eval"
    assert result.decode_ms == 60.0 and result.prompt_ms == 15.0 and result.load_ms == 2.0
    assert result.ttft_ms is not None and result.raw_json["message"]["content"] == "one two three"
    assert result.raw_json["eval_count"] == 3 and result.raw.count("\n") == 3


def test_params_become_options(fake, adapter):
    adapter.chat(
        "m",
        HI,
        {
            "temperature": 0.1,
            "top_p": 0.9,
            "max_tokens": 64,
            "seed": 1,
            "stop": ["\n"],
            "num_ctx": 2048,
        },
    )
    body = fake.calls[-1]["body"]
    assert body["options"] == {
        "temperature": 0.1,
        "top_p": 0.9,
        "num_predict": 64,
        "seed": 1,
        "stop": ["\n"],
        "num_ctx": 2048,
    }
    assert body["stream"] is True and "format" not in body and "keep_alive" not in body


def test_keep_alive_sent(fake, adapter):
    adapter.chat("m", HI, keep_alive="10m")
    assert fake.calls[-1]["body"]["keep_alive"] == "10m"


def test_json_schema_sent_as_format(fake, adapter):
    schema = {"type": "object", "properties": {"score": {"type": "integer"}}}
    result = adapter.chat("m", HI, json_schema=schema)
    assert fake.calls[-1]["body"]["format"] == schema
    assert '"score": 80' in result.text


def test_non_streaming(fake, adapter):
    fake.enqueue("whole answer")
    result = adapter.chat("m", HI, stream=False)
    assert result.text == "whole answer" and result.tps_source == "ollama.eval"
    assert fake.calls[-1]["body"]["stream"] is False


def test_estimate_without_counters(fake, adapter):
    fake.enqueue(chunks=["a"] * 10, usage=False, chunk_delay=0.02)
    result = adapter.chat("m", HI)
    assert result.tokens_estimated and result.completion_tokens == 10
    assert result.tps_source == "stream.estimate" and result.tokens_per_second > 0


def test_unload_sends_keep_alive_zero(fake, adapter):
    adapter.chat("m", HI)
    assert [m["id"] for m in adapter.loaded_models()] == ["m"]
    assert adapter.unload("m") is None
    assert fake.calls[-1]["body"]["keep_alive"] == 0
    assert adapter.loaded_models() == []


def test_unload_failure_is_returned_not_raised(fake, adapter):
    fake.enqueue("nope", status=500, path="/api/chat")
    fake.strict_models = True
    assert "not found" in adapter.unload("ghost")


@pytest.mark.parametrize("status", [500, 502, 503])
def test_5xx_transient(fake, adapter, status):
    fake.enqueue("overloaded", status=status)
    err = chat_error(adapter)
    assert err.transient and err.kind == "server" and "overloaded" in err.message


def test_429_retry_after(fake, adapter):
    fake.enqueue(status=429, retry_after=3)
    err = chat_error(adapter)
    assert err.kind == "rate_limit" and err.retry_after == 3


def test_model_not_found(fake, adapter):
    fake.strict_models = True
    err = chat_error(adapter)
    assert err.kind == "not_found" and not err.transient


def test_read_timeout(fake):
    adapter = make(fake.url, timeout=0.2)
    fake.enqueue(latency=1.0)
    assert chat_error(adapter).kind == "timeout"
    adapter.close()


def test_malformed_stream_line(fake, adapter):
    fake.enqueue("a b", malformed=True)
    err = chat_error(adapter)
    assert err.kind == "malformed" and not err.transient


def test_dropped_connection_twice_is_a_transient_connection_error(fake, adapter):
    fake.enqueue(drop=True)
    fake.enqueue(drop=True)
    assert chat_error(adapter).kind == "connection"


def test_cancel_mid_stream(fake, adapter):
    cancel = threading.Event()
    fake.enqueue(chunks=["a"] * 50, chunk_delay=0.05)
    threading.Timer(0.15, cancel.set).start()
    with pytest.raises(Cancelled):
        adapter.chat("m", HI, cancel=cancel)
