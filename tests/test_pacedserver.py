"""The paced test server: its answers and its own log are the truth speed figures are checked
against, so it must send what it says, in order, one event per token, on its schedule."""

import json
import threading

import pytest
import requests

from tests.pacedserver import PacedServer

CHAT = {"openai": "/v1/chat/completions", "ollama": "/api/chat"}


def stream(server, wire):
    """Every event of one streamed chat, as JSON objects (SSE data or NDJSON lines)."""
    body = {"model": "paced", "messages": [{"role": "user", "content": "hi"}], "stream": True}
    resp = requests.post(server.url + CHAT[wire], json=body, stream=True, timeout=30)
    events = []
    for line in resp.iter_lines():
        line = line.decode()
        if wire == "openai":
            if line.startswith("data:") and line[5:].strip() != "[DONE]":
                events.append(json.loads(line[5:]))
        elif line.strip():
            events.append(json.loads(line))
    return events


def pieces(events, wire):
    """(channel, text) of every event that carried a token, in order."""
    out = []
    for event in events:
        if wire == "openai":
            for choice in event.get("choices", []):
                delta = choice["delta"]
                if delta.get("reasoning_content"):
                    out.append(("reasoning", delta["reasoning_content"]))
                if delta.get("content"):
                    out.append(("answer", delta["content"]))
        else:
            message = event.get("message", {})
            if message.get("thinking"):
                out.append(("reasoning", message["thinking"]))
            if message.get("content"):
                out.append(("answer", message["content"]))
    return out


@pytest.fixture
def paced():
    servers = []

    def make(**kw):
        server = PacedServer(**{"ttft": 0.0, "itl": 0.001, **kw}).start()
        servers.append(server)
        return server

    yield make
    for server in servers:
        server.stop()


@pytest.mark.parametrize("wire", ["openai", "ollama"])
def test_every_answer_token_is_sent_in_order_one_event_each(paced, wire):
    server = paced(tokens=5)
    got = pieces(stream(server, wire), wire)
    assert got == [("answer", f"t{i} ") for i in range(5)]
    (entry,) = server.logged(1)
    assert len(entry["sent"]) == 5 and entry["channels"] == ["answer"] * 5
    assert entry["sent"] == sorted(entry["sent"]) and entry["completed"]


@pytest.mark.parametrize("wire", ["openai", "ollama"])
def test_one_chunk_sends_the_whole_answer_in_one_event(paced, wire):
    server = paced(tokens=6, one_chunk=True)
    got = pieces(stream(server, wire), wire)
    assert got == [("answer", "".join(f"t{i} " for i in range(6)))]
    assert len(server.logged(1)[0]["sent"]) == 1


@pytest.mark.parametrize("wire", ["openai", "ollama"])
def test_reasoning_tokens_come_before_the_answer(paced, wire):
    server = paced(tokens=3, reasoning_tokens=2)
    got = pieces(stream(server, wire), wire)
    assert got == [("reasoning", "r0 "), ("reasoning", "r1 ")] + [
        ("answer", f"t{i} ") for i in range(3)
    ]
    assert server.logged(1)[0]["channels"] == ["reasoning"] * 2 + ["answer"] * 3


def test_the_last_openai_event_carries_usage_and_llamacpp_timings(paced):
    server = paced(tokens=4, reasoning_tokens=2)
    last = stream(server, "openai")[-1]
    assert last["usage"]["completion_tokens"] == 6
    assert last["usage"]["completion_tokens_details"] == {"reasoning_tokens": 2}
    assert set(last["timings"]) >= {"prompt_ms", "predicted_ms", "predicted_per_second"}


def test_the_last_ollama_line_carries_its_counters_in_nanoseconds(paced):
    server = paced(tokens=4)
    last = stream(server, "ollama")[-1]
    assert last["done"] and last["eval_count"] == 4
    for key in ("load_duration", "prompt_eval_duration", "eval_duration"):
        assert isinstance(last[key], int)


def test_slots_serve_one_request_at_a_time_and_queue_the_rest(paced):
    server = paced(tokens=3, slots=1, ttft=0.005)
    threads = [threading.Thread(target=stream, args=(server, "openai")) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    served = sorted(server.logged(3), key=lambda entry: entry["started"])
    assert [entry["in_service"] for entry in served] == [1, 1, 1]
    for earlier, later in zip(served, served[1:], strict=False):
        assert later["started"] >= earlier["last_sent"]  # queued until the slot was free
        assert later["slot_wait"] > 0


def test_tokens_are_due_at_absolute_offsets_from_the_start():
    server = PacedServer(ttft=0.15, tokens=4, itl=0.02)
    offsets, channels = server.schedule(1)
    assert offsets == pytest.approx([0.15, 0.17, 0.19, 0.21])
    assert channels == ["answer"] * 4


def test_jitter_is_the_same_for_the_same_request_number():
    one = PacedServer(tokens=20, itl=0.02, jitter=0.005, seed=7)
    two = PacedServer(tokens=20, itl=0.02, jitter=0.005, seed=7)
    assert one.schedule(3) == two.schedule(3)
    assert one.schedule(3) != one.schedule(4)
    gaps = [b - a for a, b in zip(one.schedule(3)[0], one.schedule(3)[0][1:], strict=False)]
    assert all(0.015 - 1e-9 <= gap <= 0.025 + 1e-9 for gap in gaps)
