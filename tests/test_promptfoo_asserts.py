"""promptfoo asserts as llmbench checks: each supported type maps to a check that parse_checks
accepts, thresholds and weights carried over; the rest are named unsupported."""

import pytest

from app.datasets.asserts import to_check
from app.scoring.checks.spec import parse_checks


def mapped(**item):
    kind, check = to_check(item)
    assert kind == "check", check
    parse_checks([check])  # every mapped check is one llmbench runs
    return check


@pytest.mark.parametrize(
    "kind", ["equals", "contains", "icontains", "starts-with", "regex", "not-contains"]
)
def test_a_text_assert_is_the_same_check(kind):
    assert mapped(type=kind, value="42") == {"type": kind, "value": "42"}


@pytest.mark.parametrize("kind", ["contains-any", "contains-all"])
def test_a_list_assert_takes_a_list_or_comma_separated_text(kind):
    assert mapped(type=kind, value=["a", "b"])["value"] == ["a", "b"]
    assert mapped(type=kind, value="a, b")["value"] == ["a", "b"]


@pytest.mark.parametrize(
    "kind, base",
    [
        ("not-icontains", "icontains"),
        ("not-equals", "equals"),
        ("not-regex", "regex"),
        ("not-starts-with", "starts-with"),
        ("not-contains-any", "contains-any"),
    ],
)
def test_a_not_assert_is_the_negated_check(kind, base):
    check = mapped(type=kind, value="x")
    assert (check["type"], check["negate"]) == (base, True)


def test_a_number_value_becomes_text():
    assert mapped(type="contains", value=42)["value"] == "42"


def test_is_json_is_a_json_check():
    assert mapped(type="is-json") == {"type": "json"}


def test_contains_json_is_a_json_check_that_finds_the_json_among_words():
    assert mapped(type="contains-json") == {"type": "json", "anywhere": True}


def test_a_json_assert_with_a_schema_is_a_json_schema_check():
    schema = {"type": "object", "required": ["name"]}
    assert mapped(type="is-json", value=schema) == {"type": "json-schema", "value": schema}


def test_a_json_schema_given_as_yaml_text_is_read_as_the_schema():
    check = mapped(type="is-json", value="type: object\nrequired: [name]\n")
    assert check == {"type": "json-schema", "value": {"type": "object", "required": ["name"]}}


def test_a_tools_call_assert_with_the_expected_call_is_a_tool_call_check():
    call = {"name": "get_weather", "arguments": {"city": "Paris"}}
    assert mapped(type="is-valid-openai-tools-call", value=call)["value"] == call


def test_a_tools_call_assert_without_an_expected_call_is_unsupported():
    kind, why = to_check({"type": "is-valid-openai-tools-call"})
    assert kind == "unsupported" and "expected call" in why


def test_levenshtein_is_similarity_with_its_threshold_as_the_largest_edit_count():
    check = mapped(type="levenshtein", value="0123456789", threshold=2)
    assert check == {"type": "similarity", "value": "0123456789", "max_edits": 2}


def test_levenshtein_allows_five_edits_by_default_as_promptfoo_does():
    assert mapped(type="levenshtein", value="Paris")["max_edits"] == 5


def test_a_fractional_levenshtein_threshold_is_refused():
    kind, why = to_check({"type": "levenshtein", "value": "abc", "threshold": 1.5})
    assert kind == "unsupported" and "whole number of edits" in why


@pytest.mark.parametrize(
    "kind, ours, threshold, expected",
    [("rouge-n", "rouge-1", 0.6, 60.0), ("bleu", "bleu", None, 50.0)],
)
def test_a_metric_threshold_from_0_1_becomes_0_100(kind, ours, threshold, expected):
    item = {"type": kind, "value": "the reference"}
    if threshold is not None:
        item["threshold"] = threshold
    check = mapped(**item)
    assert (check["type"], check["threshold"]) == (ours, expected)


@pytest.mark.parametrize("kind, limit", [("latency", 5000), ("cost", 0.01)])
def test_latency_and_cost_take_the_threshold_as_their_largest_value(kind, limit):
    assert mapped(type=kind, threshold=limit) == {"type": kind, "value": limit}


def test_the_weight_is_carried_over():
    assert mapped(type="contains", value="a", weight=3)["weight"] == 3


def test_llm_rubric_is_rubric_text_for_the_judge():
    assert to_check({"type": "llm-rubric", "value": " Is polite "}) == ("rubric", "Is polite")


@pytest.mark.parametrize(
    "item",
    [
        {"type": "javascript", "value": "output.length > 3"},
        {"type": "python", "value": "file://check.py"},
        {"type": "similar", "value": "hello", "provider": "openai:embedding"},
        {"type": "model-graded-closedqa", "value": "x"},
        {"type": "contains", "value": "a", "transform": "output.trim()"},
    ],
)
def test_an_assert_llmbench_cannot_run_is_unsupported(item):
    kind, why = to_check(item)
    assert kind == "unsupported" and why


def test_a_threshold_that_is_not_a_number_is_refused():
    kind, why = to_check({"type": "levenshtein", "value": "abc", "threshold": "two"})
    assert kind == "unsupported" and "threshold must be a number" in why


def test_a_comma_separated_list_keeps_a_quoted_field_whole_without_its_quotes():
    check = mapped(type="contains-all", value='"4", "x, y", z')
    assert check["value"] == ["4", "x, y", "z"]


def test_a_quoted_field_may_hold_a_doubled_or_escaped_quote():
    assert mapped(type="contains-any", value='"say ""hi""", "a\\"b"')["value"] == [
        'say "hi"',
        'a"b',
    ]
