"""Every call is bounded: a total deadline, an answer-size cap, a default max_tokens, and list
responses without the raw bodies (fake server over real HTTP)."""

import pytest
from bs4 import BeautifulSoup

from app.db.models import COMPLETED
from app.db.models import FAILED
from app.db.models import Item
from app.db.models import RunLog
from app.providers.interface import ProviderConfig
from app.providers.interface import ProviderError
from app.providers.ollama import OllamaAdapter
from app.providers.openai import OpenAIAdapter
from tests.engine_helpers import FakeClock
from tests.engine_helpers import calls
from tests.engine_helpers import drive
from tests.engine_helpers import make_provider
from tests.engine_helpers import make_tasks
from tests.engine_helpers import start_run

HI = [{"role": "user", "content": "hi"}]


def adapter_for(fake, kind="OPENAI", **config):
    cls, endpoints = {
        "OPENAI": (OpenAIAdapter, ("/v1/models", "/v1/chat/completions")),
        "OLLAMA": (OllamaAdapter, ("/api/tags", "/api/chat")),
    }[kind]
    config.setdefault("timeout", 5.0)
    return cls(ProviderConfig("t", kind, fake.url, *endpoints, **config))


@pytest.mark.parametrize("kind", ["OPENAI", "OLLAMA"])
def test_a_stream_that_never_ends_stops_at_the_calls_total_deadline(fake, kind):
    # Each chunk comes well within the 0.6 s read timeout; the whole would take 40 s.
    adapter = adapter_for(fake, kind, timeout=0.6)
    fake.enqueue(chunks=["tok "] * 400, chunk_delay=0.1)
    with pytest.raises(ProviderError) as info:
        adapter.chat("m", HI)
    assert info.value.kind == "deadline" and not info.value.transient
    assert "within 0.6 s, the total time one call may take" in info.value.message
    adapter.close()


def test_the_targets_max_seconds_bounds_a_call_and_is_not_sent(fake):
    adapter = adapter_for(fake, timeout=30.0)
    fake.enqueue(chunks=["tok "] * 400, chunk_delay=0.1)
    with pytest.raises(ProviderError, match="within 0.5 s"):
        adapter.chat("m", HI, params={"max_seconds": 0.5})
    assert "max_seconds" not in fake.chat_calls()[-1]["body"]
    adapter.close()


@pytest.mark.parametrize("kind", ["OPENAI", "OLLAMA"])
def test_an_answer_past_the_cap_is_cut_and_flagged(fake, kind):
    adapter = adapter_for(fake, kind, max_answer_chars=100)
    fake.enqueue(chunks=["abcdefghi "] * 500)
    result = adapter.chat("m", HI)
    assert result.answer_cut and result.text == ("abcdefghi " * 10)
    assert len(result.raw) < 20000  # the rest was not read, let alone kept
    adapter.close()


def test_an_answer_within_the_cap_is_not_flagged(fake):
    adapter = adapter_for(fake, max_answer_chars=100)
    fake.enqueue("short answer")
    assert not adapter.chat("m", HI).answer_cut
    adapter.close()


def test_an_unstreamed_reply_far_past_the_cap_is_cut_and_the_rest_left_unread(fake):
    adapter = adapter_for(fake, max_answer_chars=100)
    fake.enqueue("x" * 200_000)
    result = adapter.chat("m", HI, stream=False)
    assert result.answer_cut and result.text == "x" * 100
    assert len(result.raw) < 70_000  # read up to 8 x the cap + 64 KiB, not the 200 000
    adapter.close()


@pytest.fixture
def config(app):
    return dict(app.config)


def test_a_target_without_max_tokens_gets_the_default(app, fake, config):
    p = make_provider(fake)
    start_run(p, [(p, "m1"), (p, "m2", {"max_tokens": 64})], make_tasks(1))
    drive(config, FakeClock())
    bodies = {c["body"]["model"]: c["body"] for c in fake.chat_calls() if c["body"].get("stream")}
    assert bodies["m1"]["max_tokens"] == 2048 and bodies["m2"]["max_tokens"] == 64
    assert Item.get(Item.task_key == "t0").request_json["max_tokens"] in (2048, 64)


def test_the_default_max_tokens_reaches_ollama_as_num_predict(app, fake, config):
    p = make_provider(fake, type="OLLAMA")
    start_run(p, [(p, "m1")], make_tasks(1), judge_model="judge")
    drive(dict(config, DEFAULT_MAX_TOKENS=300), FakeClock())
    answers = [
        c for c in fake.chat_calls() if c["body"].get("messages") and "format" not in c["body"]
    ]
    assert answers[-1]["body"]["options"]["num_predict"] == 300


def test_a_cut_answer_is_recorded_as_cut_and_judged(app, fake, config):
    p = make_provider(fake)
    run = start_run(p, [(p, "m1")], make_tasks(1))

    def responder(call):
        body = call["body"] or {}
        if body.get("stream") and "response_format" not in body:
            return {"chunks": ["word "] * 200}
        return None

    fake.responder = responder
    drive(dict(config, MAX_ANSWER_CHARS=50), FakeClock())
    item = Item.get()
    assert item.status == COMPLETED and item.answer_cut and len(item.answer) == 50
    line = RunLog.get((RunLog.run == run) & (RunLog.event == "item_done"))
    assert "the answer was cut at 50 characters" in line.message
    assert len(calls(fake, "answer")) == 1


def test_a_never_ending_answer_fails_its_item_once_not_three_times(app, fake, config):
    # 1.5 s: the 40 s stream runs out of time, while the warm-up has room on a busy machine.
    p = make_provider(fake, timeout=1.5)
    start_run(p, [(p, "m1")], make_tasks(1))

    def responder(call):
        body = call["body"] or {}
        if body.get("stream") and "response_format" not in body:
            return {"chunks": ["tok "] * 400, "chunk_delay": 0.1}
        return None

    fake.responder = responder
    drive(config, FakeClock())
    item = Item.get()
    assert item.status == FAILED and "the total time one call may take" in item.error_msg
    assert len(calls(fake, "answer")) == 1


def test_the_items_list_leaves_the_raw_bodies_to_each_items_url(app, client, fake, config):
    p = make_provider(fake)
    run = start_run(p, [(p, "m1")], make_tasks(2))
    drive(config, FakeClock())
    listed = client.get(f"/api/runs/{run.run_id}/items").get_json()["items"]
    assert {"responseRaw", "requestJson", "judgeRaw", "judgeRequestJson"}.isdisjoint(listed[0])
    one = client.get(listed[0]["url"]).get_json()
    assert one["id"] == listed[0]["id"] and one["responseRaw"] and one["judgeRaw"]
    assert client.get(f"/api/runs/{run.run_id}/items/999999").status_code == 404


def test_the_new_run_form_shows_the_default_max_tokens(app, client, fake):
    make_provider(fake)
    page = BeautifulSoup(client.get("/").text, "html.parser")
    inputs = page.select('input[name$="#max_tokens"]')
    assert inputs and {i.get("placeholder") for i in inputs} == {"2048"}
    assert "Empty max_tokens: 2048 (the default)" in page.get_text()
