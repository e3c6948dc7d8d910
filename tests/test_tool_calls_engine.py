"""Tool calls from start to finish: a task offering tools and a tool-call check, a run with no
judge on the fake server, the calls stored on the item, scored by the check and shown."""

import pytest

from app.db.models import COMPLETED
from app.db.models import Item
from app.engine import lease
from tests.engine_helpers import FakeClock
from tests.engine_helpers import drive
from tests.engine_helpers import make_provider

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The weather in a city",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            },
        },
    }
]
WEATHER = {"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}
TASK = {
    "taskId": "weather",
    "category": "Tools",
    "question": "What will the weather be in Paris for the next 3 days?",
    "tools": TOOLS,
    "checks": [{"type": "tool-call", "value": WEATHER}],
}


def answer_with(fake, tool_calls):
    """Answer every request that offers tools with these calls (warm-ups get the default)."""
    fake.responder = lambda call: (
        {"tool_calls": tool_calls} if (call["body"] or {}).get("tools") else None
    )


def run_it(app, client, fake, type="OPENAI"):
    lease.acquire("test-holder", 15.0)
    provider = make_provider(fake, type=type)
    task = client.post("/api/tasks", json=TASK)
    assert task.status_code == 201, task.json
    run = {
        "runId": "tools",
        "taskIds": [task.json["id"]],
        "targets": [{"providerId": provider.id, "model": "m1"}],
    }
    response = client.post("/api/runs", json=run)
    assert response.status_code == 201, response.json
    assert drive(dict(app.config), FakeClock())["state"] == "finished"
    return Item.get()


def answers(fake):
    return [c["body"] for c in fake.chat_calls() if (c["body"] or {}).get("tools")]


@pytest.mark.parametrize("type", ["OPENAI", "OLLAMA"])
def test_the_expected_call_passes_the_tool_call_check(app, client, fake, type):
    answer_with(fake, [WEATHER])
    item = run_it(app, client, fake, type)
    assert item.status == COMPLETED and item.answer == ""
    assert item.tool_calls == [WEATHER]
    assert item.check_score == 100.0 and item.evaluation_score == 100.0


def test_the_tasks_tools_are_offered_to_the_target(app, client, fake):
    answer_with(fake, [WEATHER])
    run_it(app, client, fake)
    (body,) = answers(fake)
    assert body["tools"] == TOOLS


def test_a_call_with_other_arguments_fails_the_tool_call_check(app, client, fake):
    answer_with(fake, [{"name": "get_weather", "arguments": {"city": "Lyon", "days": 3}}])
    item = run_it(app, client, fake)
    assert item.status == COMPLETED
    assert item.tool_calls[0]["arguments"]["city"] == "Lyon"
    assert item.check_score == 0.0
    assert item.check_results[0]["passed"] is False


def test_an_answer_without_calls_fails_the_tool_call_check(app, client, fake):
    item = run_it(app, client, fake)
    assert item.status == COMPLETED and item.tool_calls is None
    assert item.check_score == 0.0


def test_the_item_detail_lists_the_calls_with_their_arguments(app, client, fake):
    answer_with(fake, [WEATHER])
    item = run_it(app, client, fake)
    page = client.get(f"/runs/tools/items/{item.id}", headers={"HX-Request": "true"})
    html = page.get_data(as_text=True)
    assert page.status_code == 200 and f'id="item-tool-calls-{item.id}"' in html
    assert "get_weather" in html and "&#34;city&#34;: &#34;Paris&#34;" in html
