"""The tool-call check: the answer's returned calls match the expected ones by name and
arguments, exactly or as a subset, numbers within a tolerance."""

import pytest

from app.scoring.checks.evaluate import run_check
from app.scoring.checks.spec import parse_checks

WEATHER = {"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}


def check(tool_calls, **spec):
    (parsed,) = parse_checks([{"type": "tool-call", "value": WEATHER, **spec}])
    return run_check(parsed, "", tool_calls=tool_calls)


def test_the_expected_call_with_arguments_as_a_json_string_passes():
    result = check([{"name": "get_weather", "arguments": '{"days": 3, "city": "Paris"}'}])
    assert result.passed and result.reason == "made the expected call"


def test_an_openai_shaped_call_is_read_too():
    call = {
        "type": "function",
        "function": {"name": "get_weather", "arguments": WEATHER["arguments"]},
    }
    assert check([call]).passed


def test_exact_refuses_an_extra_argument_and_subset_allows_it():
    calls = [{"name": "get_weather", "arguments": {"city": "Paris", "days": 3, "unit": "C"}}]
    assert not check(calls).passed
    assert check(calls, match="subset").passed


def test_numbers_match_within_the_tolerance():
    calls = [{"name": "get_weather", "arguments": {"city": "Paris", "days": 3.2}}]
    assert not check(calls).passed
    assert check(calls, tolerance=0.5).passed


def test_true_does_not_match_1():
    (parsed,) = parse_checks([{"type": "tool-call", "value": {"name": "f", "arguments": {"x": 1}}}])
    assert not run_check(parsed, "", tool_calls=[{"name": "f", "arguments": {"x": True}}]).passed


def test_a_missing_call_is_named_with_the_calls_made():
    result = check([{"name": "get_time", "arguments": {}}])
    assert result.score == 0.0
    assert result.reason == (
        '0/1 expected calls made; no call `get_weather({"city": "Paris", "days": 3})` '
        "(calls made: `get_time`)"
    )


def test_two_expected_calls_score_the_share_made():
    (parsed,) = parse_checks(
        [{"type": "tool-call", "value": [WEATHER, {"name": "get_time"}], "match": "subset"}]
    )
    result = run_check(parsed, "", tool_calls=[WEATHER])
    assert (result.score, result.passed) == (50.0, False)


def test_exact_counts_an_extra_call_against_the_answer():
    result = check([WEATHER, {"name": "get_time", "arguments": {}}])
    assert result.score == 50.0 and result.reason.endswith("1 unexpected call(s): `get_time`")


@pytest.mark.parametrize(
    "tool_calls",
    [None, [], ["junk"], [{"name": 3}], [{"name": "get_weather", "arguments": "{not json"}]],
)
def test_no_usable_call_fails_without_raising(tool_calls):
    assert not check(tool_calls).passed
