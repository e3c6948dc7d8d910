"""OpenAIAdapter against the fake server over real HTTP."""

import socket
import threading
from email.utils import formatdate

import pytest
import requests

from app.providers.base import parse_retry_after
from app.providers.interface import Cancelled
from app.providers.interface import ProviderConfig
from app.providers.interface import ProviderError
from app.providers.openai import OpenAIAdapter
from app.providers.redaction import redact

SECRET = "sk-test-very-secret-1234"
HI = [{"role": "user", "content": "hi"}]
SCHEMA = {"type": "object", "properties": {"score": {"type": "integer"}}, "required": ["score"]}


def make(base_url, timeout=5.0, **kw):
    return OpenAIAdapter(
        ProviderConfig(
            name="t",
            type="OPENAI",
            base_url=base_url,
            models_endpoint="/v1/models",
            inference_endpoint="/v1/chat/completions",
            headers={"Authorization": f"Bearer {SECRET}"},
            timeout=timeout,
            **kw,
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
    assert SECRET not in str(info.value) and "very-secret" not in (info.value.raw or "")
    return info.value


def test_list_models(fake, adapter):
    fake.models = ["a", "b"]
    assert [m["id"] for m in adapter.list_models()] == ["a", "b"]
    assert adapter.list_models()[0]["owned_by"] == "fake"


def test_list_models_accepts_ollama_style_models_list(fake, adapter):
    fake.enqueue(path="/v1/models", body={"models": [{"name": "llama3"}]})
    assert adapter.list_models() == [{"name": "llama3", "id": "llama3"}]


def test_list_models_malformed(fake, adapter):
    fake.enqueue(path="/v1/models", malformed=True)
    with pytest.raises(ProviderError) as info:
        adapter.list_models()
    assert info.value.kind == "malformed" and not info.value.transient


def test_streaming_assembles_text(fake, adapter):
    fake.enqueue("The answer is 42.")
    result = adapter.chat("m", HI)
    assert result.text == "The answer is 42."
    assert result.model == "m" and result.finish_reason == "stop"
    assert result.raw_json["choices"][0]["message"]["content"] == "The answer is 42."
    assert "data: [DONE]" in result.raw


def test_streaming_request_body(fake, adapter):
    adapter.chat(
        "m", HI, {"temperature": 0.2, "max_tokens": 50, "seed": 7, "top_k": 3, "top_p": None}
    )
    body = fake.calls[-1]["body"]
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["temperature"] == 0.2 and body["max_tokens"] == 50 and body["seed"] == 7
    assert body["top_k"] == 3 and "top_p" not in body


def test_secret_header_is_sent(fake, adapter):
    adapter.chat("m", HI)
    assert fake.calls[-1]["headers"]["Authorization"] == f"Bearer {SECRET}"


def test_each_call_sends_its_own_body(fake, adapter):
    adapter.chat("m", [{"role": "user", "content": "first"}])
    adapter.chat("m", [{"role": "user", "content": "second"}])
    first, second = fake.calls[-2:]
    assert first["body"]["messages"][0]["content"] == "first"
    assert second["body"]["messages"][0]["content"] == "second"
    assert second["headers"]["Content-Length"] == str(len(second["raw"].encode()))


def test_the_body_and_headers_are_what_requests_would_send(fake, adapter):
    messages = [{"role": "user", "content": "caf\u00e9 \u2014 \U0001f600?"}]
    adapter.chat("m", messages, {"temperature": 0.5})
    expected = requests.Session()
    expected.headers.update(adapter.session.headers)
    want = expected.prepare_request(
        requests.Request(
            "POST", adapter.url(adapter.inference_endpoint), json=fake.calls[-1]["body"]
        )
    )
    call = fake.calls[-1]
    assert call["raw"].encode() == want.body
    sent = [(k, v) for k, v in call["headers"].items() if k not in ("Host",)]
    assert sent == list(want.headers.items())


def test_a_body_that_is_not_json_is_refused_before_it_is_sent(fake, adapter):
    with pytest.raises(requests.exceptions.InvalidJSONError):
        adapter.chat("m", HI, {"temperature": float("nan")})
    assert fake.chat_calls() == []


def test_a_cookie_the_session_got_later_is_sent(fake, adapter):
    adapter.chat("m", HI)  # the endpoint's request is prepared without cookies
    adapter.session.cookies.set("sid", "abc")  # as a server's Set-Cookie would
    adapter.chat("m", HI)
    assert fake.calls[-1]["headers"]["Cookie"] == "sid=abc"


def test_ttft_measured_before_the_rest_of_the_stream(fake, adapter):
    fake.enqueue(chunks=["a", "b", "c"], latency=0.1, chunk_delay=0.1)
    result = adapter.chat("m", HI)
    assert 100 <= result.ttft_ms < result.wall_ms
    assert result.wall_ms >= 300


def test_usage_picked_up_and_the_rate_timed_from_the_stream(fake, adapter):
    fake.enqueue(chunks=["a"] * 10, chunk_delay=0.02, usage={"prompt_tokens": 11})
    result = adapter.chat("m", HI)
    assert result.prompt_tokens == 11 and result.completion_tokens == 10
    # The server counted the tokens, our clock timed them: a measurement, not an estimate.
    assert result.tps_source == "stream.timing" and not result.tokens_estimated
    # The tokens after the first over the time after the first (the decode window, as
    # measured: no timing is assumed), never all tokens over the whole latency.
    assert result.decode_ms >= 180  # nine chunk delays of 20 ms at least
    assert result.tokens_per_second == pytest.approx(9 / (result.decode_ms / 1000))
    assert result.tokens_per_second != pytest.approx(10 / (result.wall_ms / 1000))


def test_a_whole_answer_in_one_chunk_has_no_rate(fake, adapter):
    # Six tokens arriving together: the gap after the first token measures the network.
    fake.enqueue(
        chunks=["one two three four five six"], latency=0.15, usage={"completion_tokens": 6}
    )
    result = adapter.chat("m", HI)
    assert result.completion_tokens == 6 and result.ttft_ms >= 150
    assert result.tokens_per_second is None and result.tps_source is None


def test_too_few_tokens_have_no_rate_even_when_spread_out(fake, adapter):
    fake.enqueue(chunks=["a", "b", "c"], chunk_delay=0.05)
    assert adapter.chat("m", HI).tokens_per_second is None


def test_llamacpp_timings_picked_up(fake, adapter):
    fake.enqueue(
        "x y",
        timings={
            "prompt_n": 4,
            "prompt_ms": 12.5,
            "predicted_n": 2,
            "predicted_ms": 40.0,
            "predicted_per_second": 49.3,
        },
    )
    result = adapter.chat("m", HI)
    assert result.tokens_per_second == 49.3 and result.tps_source == "llamacpp.timings"
    assert result.prompt_ms == 12.5 and result.decode_ms == 40.0
    assert result.raw_json["timings"]["predicted_per_second"] == 49.3


def test_openrouter_cost_picked_up(fake, adapter):
    fake.enqueue("ok", usage={"cost": 0.00123})
    assert adapter.chat("m", HI).cost_usd == 0.00123


def test_tokens_estimated_without_usage(fake, adapter):
    fake.enqueue(chunks=["a", "b", "c", "d"], usage=False)
    result = adapter.chat("m", HI)
    assert result.completion_tokens == 4 and result.tokens_estimated
    assert result.prompt_tokens is None


def test_non_streaming(fake, adapter):
    fake.enqueue("whole", timings=True)
    result = adapter.chat("m", HI, stream=False)
    assert result.text == "whole" and result.ttft_ms is None
    assert fake.calls[-1]["body"]["stream"] is False
    assert result.completion_tokens == 1 and result.tps_source == "llamacpp.timings"
    assert result.raw_json["object"] == "chat.completion"


def test_empty_answer_is_not_an_error(fake, adapter):
    fake.enqueue(chunks=[])
    assert adapter.chat("m", HI).text == ""


def test_json_schema_sent_as_response_format(fake, adapter):
    result = adapter.chat("m", HI, json_schema=SCHEMA)
    sent = fake.calls[-1]["body"]["response_format"]
    assert sent == {
        "type": "json_schema",
        "json_schema": {"name": "judgement", "strict": True, "schema": SCHEMA},
    }
    assert '"score": 80' in result.text


@pytest.mark.parametrize("status", [500, 502, 503])
def test_5xx_is_transient_server_error(fake, adapter, status):
    fake.enqueue("backend exploded", status=status)
    err = chat_error(adapter)
    assert err.transient and err.kind == "server" and err.status == status
    assert err.message.startswith(f"Server answered {status} ")
    assert "backend exploded" in err.message


def test_429_with_retry_after_seconds(fake, adapter):
    fake.enqueue("slow down", status=429, retry_after=7)
    err = chat_error(adapter)
    assert err.transient and err.kind == "rate_limit" and err.retry_after == 7


def test_503_with_retry_after_is_honoured(fake, adapter):
    fake.enqueue("maintenance", status=503, retry_after=4)
    err = chat_error(adapter)
    assert err.transient and err.kind == "server" and err.retry_after == 4


def test_retry_after_http_date():
    now = 1_000_000_000
    assert parse_retry_after(formatdate(now + 30, usegmt=True), now=now) == 30
    assert parse_retry_after("garbage") is None


def test_read_timeout(fake):
    adapter = make(fake.url, timeout=0.2)
    fake.enqueue(latency=1.0)
    err = chat_error(adapter)
    assert err.transient and err.kind == "timeout" and "0.2 s" in err.message
    adapter.close()


def test_connection_refused_on_closed_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    adapter = make(f"http://127.0.0.1:{port}")
    err = chat_error(adapter)
    assert err.transient and err.kind == "connection"
    assert err.message == (
        f"Could not connect to http://127.0.0.1:{port}/v1/chat/completions:"
        " connection refused (is the server running?)"
    )
    adapter.close()


def test_malformed_json_body(fake, adapter):
    fake.enqueue(malformed=True)
    err = chat_error(adapter, stream=False)
    assert not err.transient and err.kind == "malformed"


def test_malformed_stream_event(fake, adapter):
    fake.enqueue("a b c", malformed=True)
    err = chat_error(adapter)
    assert not err.transient and err.kind == "malformed"


def test_dropped_connection_twice_is_a_transient_connection_error(fake, adapter):
    fake.enqueue(drop=True)
    fake.enqueue(drop=True)
    err = chat_error(adapter)
    assert err.transient and err.kind == "connection"


def test_a_connection_closed_without_answer_is_retried_once_at_once(fake, adapter):
    fake.enqueue(drop=True)
    fake.enqueue("second try")
    assert adapter.chat("m", [{"role": "user", "content": "hi"}]).text == "second try"
    assert len(fake.chat_calls()) == 2


def test_dropped_mid_stream(fake, adapter):
    fake.enqueue("a b c", drop="mid")
    err = chat_error(adapter)
    assert err.transient and err.kind == "connection"


def test_unknown_model_is_permanent_not_found(fake, adapter):
    fake.strict_models = True
    err = chat_error(adapter)
    assert not err.transient and err.kind == "not_found" and "model 'm' not found" in err.message


def test_other_4xx_is_permanent_client_error(fake, adapter):
    fake.enqueue("'messages' is required", status=400)
    err = chat_error(adapter)
    assert not err.transient and err.kind == "client" and err.status == 400


def test_secret_echoed_by_server_is_scrubbed(fake, adapter):
    fake.enqueue(f"bad key Bearer {SECRET}", status=401)
    err = chat_error(adapter)
    assert "****" in err.message


def test_cancel_before_request_sends_nothing(fake, adapter):
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(Cancelled):
        adapter.chat("m", HI, cancel=cancel)
    assert fake.calls == []


def test_cancel_mid_stream(fake, adapter):
    cancel = threading.Event()
    fake.enqueue(chunks=["a"] * 50, chunk_delay=0.05)
    threading.Timer(0.15, cancel.set).start()
    with pytest.raises(Cancelled) as info:
        adapter.chat("m", HI, cancel=cancel)
    assert info.value.kind == "cancelled"


def test_redact_masks_whole_value_and_token_part():
    text = f"header was 'Bearer {SECRET}' and token {SECRET} at http://u:p@host/x"
    out = redact(text, [f"Bearer {SECRET}"])
    assert SECRET not in out and "u:p@" not in out


def test_server_ignoring_stream_true_still_parsed(fake, adapter):
    fake.enqueue(
        body={"model": "m", "choices": [{"message": {"content": "plain"}, "finish_reason": "stop"}]}
    )
    result = adapter.chat("m", HI)
    assert result.text == "plain" and result.finish_reason == "stop"


# ---- the environment's proxy settings (read once per adapter, not per call) ----------------


@pytest.fixture
def proxy_env(monkeypatch):
    """Sets HTTP_PROXY and NO_PROXY (both spellings), with nothing else from the machine."""
    for name in ("all_proxy", "https_proxy", "http_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)

    def set_env(proxy, no_proxy=None):
        for name in ("http_proxy", "HTTP_PROXY"):
            monkeypatch.setenv(name, proxy)
        if no_proxy is not None:
            for name in ("no_proxy", "NO_PROXY"):
                monkeypatch.setenv(name, no_proxy)

    return set_env


def test_calls_go_through_the_environments_http_proxy(fake, proxy_env):
    proxy_env(fake.url)  # the fake answers a proxied request line like any other
    adapter = make("http://llm.invalid:8000")
    try:
        fake.enqueue("via the proxy")
        assert adapter.chat("m", HI).text == "via the proxy"
    finally:
        adapter.close()
    assert fake.calls[-1]["headers"]["Host"] == "llm.invalid:8000"


def test_a_host_in_no_proxy_is_called_directly(fake, proxy_env):
    proxy_env("http://127.0.0.1:9", no_proxy="127.0.0.1,localhost")  # port 9: nothing listens
    adapter = make(fake.url)
    try:
        fake.enqueue("direct")
        assert adapter.chat("m", HI).text == "direct"
    finally:
        adapter.close()
