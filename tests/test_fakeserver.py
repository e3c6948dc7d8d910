"""The fake model server behaves like the real wire formats, over real HTTP."""

import json
import threading
import time

import pytest
import requests

from tests.fakeserver import FakeServer

CHAT = "/v1/chat/completions"
HI = [{"role": "user", "content": "hi"}]  # Ollama treats an empty message list as "load model"


def post(fake, path, body, **kw):
    return requests.post(fake.url + path, json=body, timeout=kw.pop("timeout", 5), **kw)


def sse_events(resp):
    lines = [ln for ln in resp.iter_lines(decode_unicode=True) if ln]
    assert lines[-1] == "data: [DONE]"
    return [json.loads(ln[len("data: ") :]) for ln in lines[:-1]]


def test_openai_models_lists_configured_models(fake):
    fake.models = ["m1", "m2"]
    data = requests.get(fake.url + "/v1/models", timeout=5).json()
    assert [m["id"] for m in data["data"]] == ["m1", "m2"]


def test_ollama_tags_lists_configured_models(fake):
    fake.models = ["llama3:8b"]
    data = requests.get(fake.url + "/api/tags", timeout=5).json()
    assert data["models"][0]["name"] == "llama3:8b"


def test_default_answer_without_script(fake):
    data = post(fake, CHAT, {"model": "x", "messages": [{"role": "user", "content": "hi"}]}).json()
    assert data["choices"][0]["message"]["content"] == "fake answer"
    assert data["usage"]["completion_tokens"] == 2


def test_queued_replies_are_consumed_in_order(fake):
    fake.enqueue("one")
    fake.enqueue("two")
    texts = [
        post(fake, CHAT, {"messages": []}).json()["choices"][0]["message"]["content"]
        for _ in range(3)
    ]
    assert texts == ["one", "two", "fake answer"]


def test_queued_reply_restricted_to_model(fake):
    fake.enqueue("for b", model="b")
    a = post(fake, CHAT, {"model": "a", "messages": []}).json()
    b = post(fake, CHAT, {"model": "b", "messages": []}).json()
    assert a["choices"][0]["message"]["content"] == "fake answer"
    assert b["choices"][0]["message"]["content"] == "for b"


def test_openai_stream_has_role_tokens_finish_usage_and_done(fake):
    fake.enqueue("hello big world", timings=True)
    body = {"stream": True, "stream_options": {"include_usage": True}, "messages": []}
    with post(fake, CHAT, body, stream=True) as resp:
        assert resp.headers["Content-Type"] == "text/event-stream"
        events = sse_events(resp)
    assert events[0]["choices"][0]["delta"]["role"] == "assistant"
    pieces = [e["choices"][0]["delta"]["content"] for e in events[1:4]]
    assert "".join(pieces) == "hello big world"
    assert events[4]["choices"][0]["finish_reason"] == "stop"
    assert events[4]["timings"]["predicted_n"] == 3
    assert events[5]["choices"] == [] and events[5]["usage"]["completion_tokens"] == 3


def test_openai_stream_without_include_usage_has_no_usage_chunk(fake):
    with post(fake, CHAT, {"stream": True, "messages": []}, stream=True) as resp:
        events = sse_events(resp)
    assert all("usage" not in e for e in events)


def test_explicit_chunks_and_usage_override(fake):
    fake.enqueue(chunks=["a", "b", "c"], usage={"completion_tokens": 9, "cost": 0.5})
    data = post(fake, CHAT, {"messages": []}).json()
    assert data["choices"][0]["message"]["content"] == "abc"
    assert data["usage"]["completion_tokens"] == 9 and data["usage"]["cost"] == 0.5


def test_llamacpp_timings_switch(fake):
    fake.llamacpp_timings = True
    data = post(fake, CHAT, {"messages": []}).json()
    assert data["timings"]["predicted_per_second"] == 50.0


def test_ollama_chat_streams_ndjson_with_counters(fake):
    fake.enqueue("hi there")
    with post(fake, "/api/chat", {"model": "m", "messages": HI}, stream=True) as resp:
        lines = [json.loads(ln) for ln in resp.iter_lines() if ln]
    assert "".join(ln["message"]["content"] for ln in lines) == "hi there"
    final = lines[-1]
    assert final["done"] is True and final["eval_count"] == 2
    assert final["eval_duration"] == 40_000_000 and "prompt_eval_duration" in final


def test_ollama_chat_non_streaming(fake):
    data = post(fake, "/api/chat", {"model": "m", "messages": HI, "stream": False}).json()
    assert data["done"] is True and data["message"]["content"] == "fake answer"


def test_ollama_keep_alive_recorded_and_ps_tracks_loaded(fake):
    post(fake, "/api/chat", {"model": "m", "messages": HI, "stream": False, "keep_alive": "5m"})
    assert fake.calls[-1]["body"]["keep_alive"] == "5m"
    loaded = requests.get(fake.url + "/api/ps", timeout=5).json()["models"]
    assert [m["name"] for m in loaded] == ["m"]
    post(fake, "/api/chat", {"model": "m", "keep_alive": 0})
    assert requests.get(fake.url + "/api/ps", timeout=5).json()["models"] == []


def test_judge_requests_get_a_json_judgement(fake):
    data = post(fake, CHAT, {"messages": [], "response_format": {"type": "json_object"}}).json()
    assert json.loads(data["choices"][0]["message"]["content"]) == {
        "score": 80,
        "reason": "fake judge",
    }
    data = post(fake, "/api/chat", {"messages": HI, "format": {}, "stream": False}).json()
    assert json.loads(data["message"]["content"])["score"] == 80


def test_error_status_with_retry_after(fake):
    fake.enqueue("slow down", status=429, retry_after=7)
    resp = post(fake, CHAT, {"messages": []})
    assert resp.status_code == 429 and resp.headers["Retry-After"] == "7"
    assert resp.json()["error"]["message"] == "slow down"


def test_ollama_error_shape(fake):
    fake.enqueue("boom", status=500)
    resp = post(fake, "/api/chat", {"messages": HI})
    assert resp.status_code == 500 and resp.json() == {"error": "boom"}


def test_strict_models_answers_404_in_both_formats(fake):
    fake.strict_models = True
    resp = post(fake, CHAT, {"model": "nope", "messages": []})
    assert resp.status_code == 404
    assert resp.json()["error"] == {"message": "model 'nope' not found", "type": "not_found_error"}
    resp = post(fake, "/api/chat", {"model": "nope", "messages": HI})
    assert resp.status_code == 404 and resp.json() == {"error": "model 'nope' not found"}


def test_latency_delays_the_answer(fake):
    fake.enqueue(latency=0.3)
    start = time.monotonic()
    post(fake, CHAT, {"messages": []})
    assert time.monotonic() - start >= 0.3


def test_latency_longer_than_read_timeout_times_out(fake):
    fake.enqueue(latency=1.0)
    with pytest.raises(requests.ReadTimeout):
        post(fake, CHAT, {"messages": []}, timeout=(1, 0.2))


def test_drop_closes_connection_without_response(fake):
    fake.enqueue(drop=True)
    with pytest.raises(requests.ConnectionError):
        post(fake, CHAT, {"messages": []})


def test_malformed_non_streaming_body_is_not_json(fake):
    fake.enqueue(malformed=True)
    with pytest.raises(ValueError):
        post(fake, CHAT, {"messages": []}).json()


def test_malformed_stream_contains_a_broken_event(fake):
    fake.enqueue("a b c", malformed=True)
    with post(fake, CHAT, {"messages": [], "stream": True}, stream=True) as resp:
        lines = [ln for ln in resp.iter_lines(decode_unicode=True) if ln]
    assert "data: {broken" in lines


def test_raw_body_override(fake):
    fake.enqueue(body="<html>bad gateway</html>", status=502)
    resp = post(fake, CHAT, {"messages": []})
    assert resp.status_code == 502 and resp.text == "<html>bad gateway</html>"


def test_responder_computes_reply(fake):
    fake.responder = lambda call: {"text": call["body"]["messages"][0]["content"].upper()}
    data = post(fake, CHAT, {"messages": [{"role": "user", "content": "echo"}]}).json()
    assert data["choices"][0]["message"]["content"] == "ECHO"


def test_a_responders_reply_waits_the_default_latency_unless_it_names_its_own(fake):
    fake.default_latency = 0.25
    call = {"path": CHAT, "body": {"messages": []}}
    fake.responder = lambda call: {"text": "slow like the rest"}
    assert fake._take(call)["latency"] == 0.25
    fake.responder = lambda call: {"text": "quick", "latency": 0.0}
    assert fake._take(call)["latency"] == 0.0


def test_calls_log_body_and_headers(fake):
    post(fake, CHAT, {"model": "m", "messages": []}, headers={"Authorization": "Bearer s3"})
    call = fake.calls[-1]
    assert call["path"] == CHAT and call["method"] == "POST" and call["body"]["model"] == "m"
    assert call["headers"]["Authorization"] == "Bearer s3"


def test_listing_can_be_scripted_by_path(fake):
    fake.enqueue(status=500, path="/v1/models")
    assert requests.get(fake.url + "/v1/models", timeout=5).status_code == 500
    assert requests.get(fake.url + "/v1/models", timeout=5).status_code == 200


def test_stop_is_fast_even_with_a_sleeping_request():
    server = FakeServer().start()
    server.enqueue(latency=30)
    errors = []

    def call():
        try:
            requests.post(server.url + CHAT, json={"messages": []}, timeout=10)
        except requests.RequestException as exc:
            errors.append(exc)

    thread = threading.Thread(target=call)
    thread.start()
    server.wait_for_calls(1)
    start = time.monotonic()
    server.stop()
    thread.join(5)
    assert time.monotonic() - start < 3
    assert errors


def test_max_active_counts_concurrent_chats(fake):
    # Both requests meet before either is counted, then each answers after 1 s: on a busy
    # machine the second could otherwise arrive after the first had been answered.
    both_in = threading.Barrier(2, timeout=30)

    def meet(call):
        both_in.wait()  # then the default reply

    fake.responder = meet
    fake.default_latency = 1.0
    threads = [threading.Thread(target=post, args=(fake, CHAT, {"messages": []})) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(5)
    assert fake.max_active == 2 and fake.active == 0
