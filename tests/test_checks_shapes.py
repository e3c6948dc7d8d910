"""Shape checks: the option picked, the number given (within a tolerance), JSON, JSON that
matches a schema, and the answer's length."""

import pytest

from app.scoring.checks.evaluate import run_check
from app.scoring.checks.spec import CheckError
from app.scoring.checks.spec import parse_checks


def check(answer, **spec):
    (parsed,) = parse_checks([spec])
    return run_check(parsed, answer)


def test_choice_passes_on_the_expected_letter_in_any_case():
    assert check("Answer: b", type="choice", value="B").passed
    assert check("The answer is (B).", type="choice", value="b").passed


def test_choice_says_what_was_picked_and_expected():
    assert check("I think it's C, not B", type="choice", value="B").reason == (
        "picked C, expected B"
    )


def test_choice_fails_when_no_letter_is_picked():
    result = check("I am not sure.", type="choice", value="A")
    assert not result.passed and result.reason == "no option letter found (expected A)"


def test_number_within_an_absolute_tolerance_passes():
    assert check("about 41.6", type="number", value=42, tolerance=0.5).passed


def test_number_outside_the_tolerance_fails_saying_so():
    result = check("The answer is 41.5", type="number", value=42, tolerance=0.4)
    assert (result.passed, result.reason) == (False, "number 41.5 is not 42 ± 0.4")


def test_number_tolerance_may_be_relative():
    assert check("1,010", type="number", value=1000, tolerance="1%").passed
    assert not check("1,011", type="number", value=1000, tolerance="1%").passed


def test_number_without_tolerance_is_exact_up_to_float_noise():
    assert check("0.3", type="number", value=0.1 + 0.2).passed
    assert not check("0.31", type="number", value=0.3).passed


def test_number_fails_when_the_answer_has_none():
    assert check("no idea", type="number", value=7).reason == "no number found (expected 7)"


@pytest.mark.parametrize(
    "answer",
    [
        '{"a": 1}',
        "  [1, 2]\n",
        'Here it is:\n```json\n{"a": 1}\n```\nDone.',
        '```\n{"a": 1}\n```',
    ],
)
def test_json_passes_plain_or_in_a_fenced_block(answer):
    assert check(answer, type="json").passed


def test_json_fails_naming_where_parsing_stopped():
    result = check('{"a": }', type="json")
    assert not result.passed and result.reason == "not JSON: Expecting value at line 1 column 7"


def test_json_too_deeply_nested_fails_without_raising():
    result = check("[" * 5000 + "]" * 5000, type="json")
    assert not result.passed and "nested too deeply" in result.reason


SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "population": {"type": "integer"}},
    "required": ["city"],
}


def test_json_schema_passes_a_matching_answer():
    assert check('{"city": "Paris", "population": 2}', type="json-schema", value=SCHEMA).passed


def test_json_schema_names_the_path_and_the_problem():
    result = check('{"city": "Paris", "population": "2"}', type="json-schema", value=SCHEMA)
    assert result.reason == (
        "JSON does not match the schema at $.population: `'2' is not of type 'integer'`"
    )


def test_json_schema_fails_an_answer_that_is_not_json():
    assert check("Paris", type="json-schema", value=SCHEMA).reason.startswith("not JSON: ")


def test_json_schema_with_a_ref_to_nowhere_fails_the_check_not_the_run():
    schema = {"$ref": "https://example.invalid/schema.json"}
    result = check("{}", type="json-schema", value=schema)
    assert not result.passed and result.reason.startswith("the schema could not be applied")


@pytest.mark.parametrize(
    "answer, spec, reason",
    [
        ("one two three", {"min": 2, "max": 3}, "3 words"),
        ("one", {"min": 2}, "1 word, fewer than 2"),
        ("abcdef", {"max": 5, "unit": "characters"}, "6 characters, more than 5"),
    ],
)
def test_length_counts_words_or_characters(answer, spec, reason):
    result = check(answer, type="length", **spec)
    assert result.reason == reason and result.passed == (reason == "3 words")


def test_a_schema_pattern_is_used_and_a_runaway_one_times_out():
    schema = {"type": "string", "pattern": "(a|aa)+$"}
    assert check('"aaa"', type="json-schema", value=schema).passed
    result = check(f'"{"a" * 40}b"', type="json-schema", value=schema)
    assert result.reason == "the schema's pattern `(a|aa)+$` timed out after 0.5 s"


def test_a_schema_pattern_that_does_not_match_says_so():
    result = check('"abc"', type="json-schema", value={"type": "string", "pattern": "^x"})
    assert result.reason == "JSON does not match the schema at $: `'abc' does not match '^x'`"


def test_json_among_words_fails_unless_anywhere_is_set():
    answer = 'The service is up: {"up": true} (checked just now)'
    assert not check(answer, type="json").passed
    assert check(answer, type="json", anywhere=True).passed


def test_json_anywhere_fails_when_no_object_stands_in_the_answer():
    result = check("up {maybe} [1, 2]", type="json", anywhere=True)
    assert (result.passed, result.reason) == (False, "no JSON object in the answer")


def test_a_schema_anywhere_passes_when_any_object_in_the_answer_matches():
    schema = {"type": "object", "required": ["up"]}
    answer = 'First {"down": 1}, then {"up": false}.'
    assert check(answer, type="json-schema", value=schema, anywhere=True).passed


def test_a_schema_anywhere_names_the_first_objects_mismatch():
    schema = {"type": "object", "required": ["up"]}
    result = check('Got {"down": 1}.', type="json-schema", value=schema, anywhere=True)
    assert not result.passed and "'up' is a required property" in result.reason


def test_anywhere_must_be_true_or_false():
    with pytest.raises(CheckError, match=r"anywhere"):
        check("{}", type="json", anywhere="yes")


def test_json_anywhere_counts_objects_only_even_inside_a_list():
    assert not check("[1, 2]", type="json", anywhere=True).passed
    assert check('[{"up": true}]', type="json", anywhere=True).passed
