"""The judge sees an answer's tool calls: each call (name and arguments, compact JSON) after the
answer's text, secrets masked, and the tools the task offered; a task without tools gets the
prompt it always had."""

import json

from app.catalog.providers import create_provider
from app.db.models import COMPLETED
from app.db.models import Item
from app.engine import lease
from app.scoring.rubric import build_judge_messages
from tests.engine_helpers import TEST_MODELS
from tests.engine_helpers import FakeClock
from tests.engine_helpers import calls
from tests.engine_helpers import drive
from tests.engine_helpers import serve_models

KEY = "sk-live-TOPSECRET0123456789"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The weather in a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
WEATHER = {"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}
TASK = {
    "taskId": "weather",
    "category": "Tools",
    "question": "What will the weather be in Paris?",
    "excellent": "Calls get_weather for Paris.",
    "tools": TOOLS,
}


def run_judged(client, app, fake, tool_calls, text="Let me look that up.", task=TASK):
    """One task answered with `text` and `tool_calls`, judged by the fake; the judge's prompt."""
    lease.acquire("test-holder", 15.0)
    serve_models(fake, *TEST_MODELS)
    provider = create_provider(
        {
            "name": "fake",
            "type": "OPENAI",
            "baseUrl": fake.url,
            "headers": [{"key": "X-Api-Key", "value": KEY, "isSecret": True}],
        }
    )
    fake.responder = lambda call: (
        {"text": text, "tool_calls": tool_calls} if (call["body"] or {}).get("tools") else None
    )
    created = client.post("/api/tasks", json=task)
    assert created.status_code == 201, created.json
    run = {
        "runId": "judged-tools",
        "taskIds": [created.json["id"]],
        "targets": [{"providerId": provider.id, "model": "m1"}],
        "judgeProviderId": provider.id,
        "judgeModel": "judge",
    }
    assert client.post("/api/runs", json=run).status_code == 201
    assert drive(dict(app.config), FakeClock())["state"] == "finished"
    assert Item.get().status == COMPLETED
    (judge,) = calls(fake, "judge")
    return judge[2]


def test_the_judge_sees_each_tool_call_as_compact_json_after_the_answer(app, client, fake):
    prompt = run_judged(client, app, fake, [WEATHER])
    call = '{"name":"get_weather","arguments":{"city":"Paris","days":3}}'
    assert f"Let me look that up.\n\nTool calls:\n{call}\n</answer>" in prompt


def test_the_judge_is_told_which_tools_the_task_offered(app, client, fake):
    prompt = run_judged(client, app, fake, [WEATHER])
    assert "Tools offered to the model" in prompt
    assert "- get_weather: The weather in a city" in prompt


def test_an_answer_that_only_calls_tools_shows_the_calls_alone(app, client, fake):
    prompt = run_judged(client, app, fake, [WEATHER], text="")
    assert '<answer>\nTool calls:\n{"name":"get_weather"' in prompt


def test_a_secret_in_a_tool_calls_arguments_is_masked_for_the_judge(app, client, fake):
    leaky = {"name": "get_weather", "arguments": {"city": f"Paris {KEY}"}}
    prompt = run_judged(client, app, fake, [leaky])
    assert "get_weather" in prompt and KEY not in prompt
    assert KEY not in json.dumps([c["body"] for c in fake.chat_calls()][-1])


def test_an_item_without_tools_gets_the_prompt_it_always_had():
    item = type("Item", (), {})()
    item.question, item.answer, item.rubric, item.auto_fail_rules = "Q?", "A.", None, None
    item.excellent = item.good = item.pass_answer = item.incorrect_direction = "x"
    plain = build_judge_messages(item)
    item.tools, item.tool_calls = None, []
    assert build_judge_messages(item) == plain
    assert "Tool" not in plain[1]["content"]
