"""The OpenAI adapter offers a task's tools and reads the calls an answer makes, streamed and
not, against the fake server over real HTTP."""

import pytest

from app.providers.interface import ProviderConfig
from app.providers.openai import OpenAIAdapter

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


@pytest.fixture
def adapter(fake):
    adapter = OpenAIAdapter(
        ProviderConfig(
            name="t",
            type="OPENAI",
            base_url=fake.url,
            models_endpoint="/v1/models",
            inference_endpoint="/v1/chat/completions",
            timeout=5.0,
        )
    )
    yield adapter
    adapter.close()


def sent(fake):
    return fake.chat_calls()[-1]["body"]


def test_the_tools_are_offered_in_the_request(fake, adapter):
    adapter.chat("m", HI, tools=TOOLS, stream=False)
    assert sent(fake)["tools"] == TOOLS


def test_a_call_without_tools_sends_no_tools_key(fake, adapter):
    adapter.chat("m", HI, {"tool_choice": "required"}, stream=False)
    assert "tools" not in sent(fake) and "tool_choice" not in sent(fake)


def test_the_targets_tool_choice_rides_beside_the_tools(fake, adapter):
    choice = {"type": "function", "function": {"name": "get_weather"}}
    adapter.chat("m", HI, {"tool_choice": choice}, tools=TOOLS, stream=False)
    assert sent(fake)["tool_choice"] == choice


@pytest.mark.parametrize(
    "response_format",
    [
        {"type": "json_object"},
        {"type": "json_schema", "json_schema": {"name": "w", "schema": {"type": "object"}}},
    ],
)
def test_the_targets_response_format_is_sent_as_given(fake, adapter, response_format):
    adapter.chat("m", HI, {"response_format": response_format}, stream=False)
    assert sent(fake)["response_format"] == response_format


def test_the_judges_schema_wins_over_the_targets_response_format(fake, adapter):
    schema = {"type": "object"}
    adapter.chat("m", HI, {"response_format": {"type": "json_object"}}, json_schema=schema)
    assert sent(fake)["response_format"]["json_schema"]["schema"] == schema


@pytest.mark.parametrize("stream", [False, True])
def test_an_answer_that_only_calls_a_tool_has_empty_text_and_the_call(fake, adapter, stream):
    fake.enqueue(tool_calls=[WEATHER])
    completion = adapter.chat("m", HI, tools=TOOLS, stream=stream)
    assert completion.text == ""
    assert completion.tool_calls == [WEATHER]


def test_a_one_chunk_stream_gives_the_whole_call(fake, adapter):
    fake.enqueue(tool_calls=[WEATHER], tool_chunk=0)
    completion = adapter.chat("m", HI, tools=TOOLS, stream=True)
    assert completion.tool_calls == [WEATHER]
    assert completion.ttft_ms is not None


def test_arguments_split_over_many_chunks_are_joined(fake, adapter):
    fake.enqueue(tool_calls=[WEATHER], tool_chunk=1)
    completion = adapter.chat("m", HI, tools=TOOLS, stream=True)
    assert completion.raw.count("tool_calls") > len('{"city": "Paris", "days": 3}')
    assert completion.tool_calls == [WEATHER]


def test_two_streamed_calls_are_kept_apart_by_index(fake, adapter):
    other = {"name": "get_time", "arguments": {"zone": "CET"}}
    fake.enqueue(tool_calls=[WEATHER, other], tool_chunk=3)
    completion = adapter.chat("m", HI, tools=TOOLS, stream=True)
    assert completion.tool_calls == [WEATHER, other]


@pytest.mark.parametrize("stream", [False, True])
def test_malformed_arguments_json_is_kept_as_text(fake, adapter, stream):
    fake.enqueue(tool_calls=[{"name": "get_weather", "arguments": '{"city": "Par'}], tool_chunk=2)
    completion = adapter.chat("m", HI, tools=TOOLS, stream=stream)
    assert completion.tool_calls == [{"name": "get_weather", "arguments": '{"city": "Par'}]


@pytest.mark.parametrize("stream", [False, True])
def test_text_beside_a_call_is_kept_with_it(fake, adapter, stream):
    fake.enqueue("Let me look.", tool_calls=[WEATHER])
    completion = adapter.chat("m", HI, tools=TOOLS, stream=stream)
    assert completion.text == "Let me look." and completion.tool_calls == [WEATHER]


def test_a_streamed_call_is_in_the_assembled_reply(fake, adapter):
    fake.enqueue(tool_calls=[WEATHER], tool_chunk=4)
    completion = adapter.chat("m", HI, tools=TOOLS, stream=True)
    (call,) = completion.raw_json["choices"][0]["message"]["tool_calls"]
    assert call["id"] == "call_0" and call["function"]["name"] == "get_weather"


def test_an_answer_without_calls_has_none(fake, adapter):
    assert adapter.chat("m", HI, tools=TOOLS).tool_calls is None
