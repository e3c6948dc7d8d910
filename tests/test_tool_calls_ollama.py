"""The Ollama adapter offers a task's tools on /api/chat, reads the calls an answer makes
(arguments an object), streamed and not, and maps JSON mode to `format`."""

import pytest

from app.providers.interface import ProviderConfig
from app.providers.registry import get_adapter

HI = [{"role": "user", "content": "What is the weather in Paris?"}]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
WEATHER = {"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}
SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}}


@pytest.fixture
def adapter(fake):
    adapter = get_adapter(
        ProviderConfig(
            name="o",
            type="OLLAMA",
            base_url=fake.url,
            models_endpoint="/api/tags",
            inference_endpoint="/api/chat",
            timeout=5.0,
        )
    )
    yield adapter
    adapter.close()


def sent(fake):
    return fake.chat_calls()[-1]["body"]


def test_the_tools_are_offered_top_level_not_as_options(fake, adapter):
    adapter.chat("m", HI, {"temperature": 0.1}, tools=TOOLS)
    body = sent(fake)
    assert body["tools"] == TOOLS and "tools" not in body["options"]


def test_tool_choice_is_not_sent_to_ollama(fake, adapter):
    adapter.chat("m", HI, {"tool_choice": "required", "temperature": 0.1}, tools=TOOLS)
    body = sent(fake)
    assert "tool_choice" not in body and "tool_choice" not in body["options"]


@pytest.mark.parametrize(
    ("response_format", "expected"),
    [
        ({"type": "json_object"}, "json"),
        ({"type": "json_schema", "json_schema": {"name": "a", "schema": SCHEMA}}, SCHEMA),
    ],
)
def test_response_format_becomes_ollamas_format(fake, adapter, response_format, expected):
    adapter.chat("m", HI, {"response_format": response_format})
    body = sent(fake)
    assert body["format"] == expected and "response_format" not in body.get("options", {})


@pytest.mark.parametrize("stream", [False, True])
def test_an_answer_that_only_calls_a_tool_has_empty_text_and_the_call(fake, adapter, stream):
    fake.enqueue(tool_calls=[WEATHER])
    completion = adapter.chat("m", HI, tools=TOOLS, stream=stream)
    assert completion.text == ""
    assert completion.tool_calls == [WEATHER]


@pytest.mark.parametrize("stream", [False, True])
def test_text_beside_a_call_is_kept_with_it(fake, adapter, stream):
    fake.enqueue("Let me look.", tool_calls=[WEATHER])
    completion = adapter.chat("m", HI, tools=TOOLS, stream=stream)
    assert completion.text == "Let me look." and completion.tool_calls == [WEATHER]


@pytest.mark.parametrize("stream", [False, True])
def test_malformed_arguments_text_is_kept_as_text(fake, adapter, stream):
    fake.enqueue(tool_calls=[{"name": "get_weather", "arguments": '{"city": '}])
    completion = adapter.chat("m", HI, tools=TOOLS, stream=stream)
    assert completion.tool_calls == [{"name": "get_weather", "arguments": '{"city": '}]


def test_a_streamed_call_is_in_the_assembled_reply(fake, adapter):
    fake.enqueue(tool_calls=[WEATHER])
    completion = adapter.chat("m", HI, tools=TOOLS, stream=True)
    assert completion.raw_json["message"]["tool_calls"] == [{"function": WEATHER}]


def test_an_answer_without_calls_has_none(fake, adapter):
    assert adapter.chat("m", HI, tools=TOOLS).tool_calls is None
