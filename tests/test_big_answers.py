"""Answers bigger than LLMBENCH_MAX_ANSWER_CHARS are cut at it, as documented, whatever their
shape: one huge unstreamed body or one huge stream event (fake server over real HTTP)."""

import json

import pytest

from app.db.models import COMPLETED
from app.db.models import Item
from app.providers.base import Cut
from app.providers.interface import MAX_ANSWER_CHARS
from app.providers.interface import ProviderConfig
from app.providers.interface import ProviderError
from app.providers.ollama import OllamaAdapter
from app.providers.openai import OpenAIAdapter
from tests.engine_helpers import FakeClock
from tests.engine_helpers import drive
from tests.engine_helpers import make_provider
from tests.engine_helpers import make_tasks
from tests.engine_helpers import start_run

HI = [{"role": "user", "content": "hi"}]
TEN_MIB = 10 * 1024 * 1024


def adapter_for(fake, kind, **config):
    cls, endpoints = {
        "OPENAI": (OpenAIAdapter, ("/v1/models", "/v1/chat/completions")),
        "OLLAMA": (OllamaAdapter, ("/api/tags", "/api/chat")),
    }[kind]
    return cls(ProviderConfig("t", kind, fake.url, *endpoints, timeout=30.0, **config))


@pytest.mark.parametrize("kind", ["OPENAI", "OLLAMA"])
def test_a_10_mib_unstreamed_answer_is_cut_at_the_cap(fake, kind):
    adapter = adapter_for(fake, kind)
    fake.enqueue(chunks=["x" * TEN_MIB])
    result = adapter.chat("m", HI, stream=False)
    adapter.close()
    assert result.answer_cut and result.text == "x" * MAX_ANSWER_CHARS
    assert len(result.raw) < 3 * 1024 * 1024  # what was read is not all kept either


@pytest.mark.parametrize("kind", ["OPENAI", "OLLAMA"])
def test_a_10_mib_single_stream_event_is_cut_at_the_cap(fake, kind):
    adapter = adapter_for(fake, kind)
    fake.enqueue(chunks=["x" * TEN_MIB])
    result = adapter.chat("m", HI)
    adapter.close()
    assert result.answer_cut and result.text == "x" * MAX_ANSWER_CHARS
    assert len(result.raw) < 100_000  # the event's start and a note, not megabytes


@pytest.mark.parametrize("kind", ["OPENAI", "OLLAMA"])
def test_a_big_event_after_some_answer_fills_the_answer_up_to_the_cap(fake, kind):
    adapter = adapter_for(fake, kind, max_answer_chars=1000)
    fake.enqueue(chunks=["start ", "y" * 200_000])
    result = adapter.chat("m", HI)
    adapter.close()
    assert result.answer_cut and result.text == "start " + "y" * 994


@pytest.mark.parametrize("stream", [True, False])
def test_a_cut_answers_escapes_are_decoded(fake, stream):
    adapter = adapter_for(fake, "OPENAI", max_answer_chars=1000)
    answer = 'é"\\\n😀/\t' * 30_000  # escaped as \u00e9, \", \\, \n, a surrogate pair, \t
    fake.enqueue(chunks=[answer])
    result = adapter.chat("m", HI, stream=stream)
    adapter.close()
    assert result.answer_cut and result.text == answer[:1000]


def test_a_big_reply_without_answer_text_is_a_clear_error(fake):
    adapter = adapter_for(fake, "OPENAI", max_answer_chars=100)
    fake.enqueue(body={"choices": [], "padding": "z" * 100_000})
    with pytest.raises(ProviderError) as info:
        adapter.chat("m", HI, stream=False)
    adapter.close()
    assert info.value.kind == "too_large" and "with no answer text in it" in info.value.message


@pytest.fixture
def config(app):
    return dict(app.config)


def _answers_with(spec):
    def responder(call):
        body = call["body"] or {}
        if body.get("stream") and "response_format" not in body and "format" not in body:
            return spec
        return None

    return responder


def _openai_body(text):
    message = {"role": "assistant", "content": text}
    return json.dumps({"model": "m1", "choices": [{"index": 0, "message": message}]})


@pytest.mark.parametrize("kind", ["OPENAI", "OLLAMA"])
def test_an_item_whose_answer_is_one_10_mib_event_is_completed_and_cut(app, fake, config, kind):
    p = make_provider(fake, type=kind)
    start_run(p, [(p, "m1")], make_tasks(1), judge_model="judge")
    fake.responder = _answers_with({"chunks": ["x" * TEN_MIB]})
    drive(config, FakeClock())
    item = Item.get()
    assert item.status == COMPLETED and item.answer_cut
    assert item.answer == "x" * MAX_ANSWER_CHARS


def test_an_item_whose_server_sends_10_mib_unstreamed_is_completed_and_cut(app, fake, config):
    p = make_provider(fake)
    start_run(p, [(p, "m1")], make_tasks(1), judge_model="judge")
    fake.responder = _answers_with({"body": _openai_body("x" * TEN_MIB)})
    drive(config, FakeClock())
    item = Item.get()
    assert item.status == COMPLETED and item.answer_cut
    assert item.answer == "x" * MAX_ANSWER_CHARS


def test_a_stream_line_past_the_cap_comes_cut_and_the_next_line_whole(fake):
    adapter = adapter_for(fake, "OPENAI")
    fake.enqueue(body="a" * 5000 + "\nnext line\n")
    resp = adapter.request("POST", "/v1/chat/completions", json_body={"model": "m"})
    lines = list(adapter.iter_lines(resp, fake.url, max_line=100))
    adapter.close()
    assert isinstance(lines[0], Cut) and bytes(lines[0].data) == b"a" * 100
    assert lines[1:] == ["next line"]
