"""A task's checks parsed up front: defaults filled in, and any bad check refused with one 400
error naming the check's index, type and field."""

import json

import pytest

from app.errors import ValidationError
from app.scoring.checks.spec import TYPES
from app.scoring.checks.spec import CheckError
from app.scoring.checks.spec import parse_checks

GOOD = {"type": "contains", "value": "Paris"}


def refused(check, has_reference=False):
    with pytest.raises(CheckError) as caught:
        parse_checks([GOOD, GOOD, check], has_reference=has_reference)
    return caught.value.message


def test_a_check_gets_weight_1_threshold_100_and_no_gate_by_default():
    (check,) = parse_checks([GOOD])
    assert (check.weight, check.threshold, check.gate) == (1.0, 100.0, False)


@pytest.mark.parametrize("kind", ["rouge-1", "rouge-2", "rouge-l", "bleu", "chrf", "similarity"])
def test_a_reference_metric_passes_at_50_by_default(kind):
    (check,) = parse_checks([{"type": kind}], has_reference=True)
    assert check.threshold == 50.0


def test_a_check_error_is_a_validation_error_with_status_400():
    with pytest.raises(ValidationError) as caught:
        parse_checks([{"type": "nope"}])
    assert caught.value.status == 400 and caught.value.errors[0]["field"] == "checks[0].type"


def test_checks_must_be_a_list():
    with pytest.raises(CheckError, match=r"^checks: must be a list of checks$"):
        parse_checks({"type": "contains"})


def test_an_empty_list_is_no_checks():
    assert parse_checks([]) == []


def test_a_check_as_plain_json_has_every_default():
    (check,) = parse_checks([{"type": "equals", "value": "x", "normalize": ["case"]}])
    assert json.loads(json.dumps(check.to_dict())) == {
        "type": "equals",
        "value": "x",
        "weight": 1.0,
        "threshold": 100.0,
        "gate": False,
        "normalize": ["case"],
    }


@pytest.mark.parametrize(
    "check, message",
    [
        ("contains", "checks[2]: must be an object with a `type`"),
        ({"value": "x"}, "checks[2].type: required"),
        ({"type": "sentiment"}, "checks[2].type: unknown check type 'sentiment' (known: equals"),
        ({"type": "contains"}, "checks[2] (contains).value: must be a non-empty text"),
        ({"type": "contains", "value": 4}, "checks[2] (contains).value: must be a non-empty text"),
        ({"type": "contains-any", "value": "x"}, "checks[2] (contains-any).value: must be a non-"),
        ({"type": "contains-all", "value": ["a", 3]}, "checks[2] (contains-all).value: every"),
        (
            {"type": "regex", "value": "[a-"},
            "checks[2] (regex).value: bad regex: unterminated character set at position 3",
        ),
        ({"type": "regex", "value": "a", "flags": "iq"}, "checks[2] (regex).flags: must be"),
        ({"type": "equals", "value": "a", "normalize": ["accents"]}, "unknown option 'accents'"),
        ({"type": "equals", "value": "a", "normalize": "case"}, "(equals).normalize: must be a"),
        ({"type": "choice", "value": "BB"}, "checks[2] (choice).value: must be the expected"),
        ({"type": "number", "value": "42"}, "checks[2] (number).value: must be a number"),
        ({"type": "number", "value": True}, "checks[2] (number).value: must be a number"),
        ({"type": "number", "value": 1, "tolerance": -1}, "checks[2] (number).tolerance: must be"),
        ({"type": "number", "value": 1, "tolerance": "1 %"}, "(number).tolerance: must be"),
        ({"type": "json", "value": {}}, "checks[2] (json).value: a json check takes no value"),
        ({"type": "json-schema", "value": "x"}, "(json-schema).value: must be a JSON schema"),
        (
            {"type": "json-schema", "value": {"type": "integr"}},
            "checks[2] (json-schema).value: invalid JSON schema: 'integr' is not valid",
        ),
        ({"type": "length"}, "checks[2] (length).min: give `min`, `max` or both"),
        ({"type": "length", "min": 5, "max": 2}, "checks[2] (length).max: must be at least min"),
        ({"type": "length", "max": 2, "unit": "tokens"}, "checks[2] (length).unit: must be one"),
        ({"type": "rouge-l"}, "checks[2] (rouge-l).value: no reference: give a text"),
        ({"type": "bleu", "value": ""}, "checks[2] (bleu).value: must be the reference text"),
        ({"type": "tool-call", "value": []}, "checks[2] (tool-call).value: must be a call"),
        ({"type": "tool-call", "value": {"arguments": {}}}, "(tool-call).value: must be a call"),
        ({"type": "tool-call", "value": [{"name": "f"}, {"name": "g", "x": 1}]}, "value[1]: unk"),
        ({"type": "tool-call", "value": {"name": "f", "arguments": "{}"}}, "value.arguments:"),
        ({"type": "tool-call", "value": {"name": "f"}, "match": "fuzzy"}, "(tool-call).match:"),
        ({"type": "latency", "value": -1}, "checks[2] (latency).value: must be the largest"),
        ({"type": "contains", "value": "a", "weight": 0}, "(contains).weight: must be a number"),
        ({"type": "contains", "value": "a", "weight": -2}, "(contains).weight: must be a number"),
        ({"type": "contains", "value": "a", "threshold": 101}, "(contains).threshold: must be"),
        ({"type": "contains", "value": "a", "threshold": -1}, "(contains).threshold: must be"),
        ({"type": "contains", "value": "a", "gate": "yes"}, "(contains).gate: must be true or"),
        ({"type": "contains", "value": "a", "flags": "i"}, "checks[2] (contains).flags: unknown"),
        ({"type": "contains", "value": "a", "tolerance": 1}, "(contains).tolerance: unknown key"),
    ],
)
def test_a_bad_check_is_refused_naming_its_index_type_and_field(check, message):
    assert message in refused(check)


def test_a_bad_regex_says_where_it_breaks():
    assert refused({"type": "regex", "value": "ab[c-"}) == (
        "checks[2] (regex).value: bad regex: unterminated character set at position 5"
    )


def test_a_reference_metric_with_a_task_reference_needs_no_value():
    (check,) = parse_checks([{"type": "rouge-l"}], has_reference=True)
    assert check.value is None


def test_a_tolerance_may_be_a_percentage():
    (check,) = parse_checks([{"type": "number", "value": 200, "tolerance": "1.5%"}])
    assert check.options["tolerance"] == "1.5%"


def test_one_tool_call_is_a_list_of_one_with_arguments():
    (check,) = parse_checks([{"type": "tool-call", "value": {"name": "f"}}])
    assert check.value == [{"name": "f", "arguments": {}}]


def test_every_type_is_known_to_the_evaluator():
    from app.scoring.checks.evaluate import EVALUATORS

    assert set(TYPES) == set(EVALUATORS)


def test_a_json_schema_taken_as_valid_still_must_be_an_object():
    with pytest.raises(CheckError) as caught:
        parse_checks([{"type": "json-schema", "value": "not a schema"}], check_schemas=False)
    assert caught.value.message.startswith("checks[0] (json-schema).value")


def test_a_json_schema_taken_as_valid_is_neither_checked_nor_compiled():
    # For the built-in bank, whose schemas a test checks (test_defaults.py): a schema only a
    # full check refuses passes, and no validator is built for it.
    bad = {"type": "json-schema", "value": {"type": 12}}
    with pytest.raises(CheckError):
        parse_checks([bad])
    (check,) = parse_checks([bad], check_schemas=False)
    assert (check.value, check.compiled) == ({"type": 12}, None)
