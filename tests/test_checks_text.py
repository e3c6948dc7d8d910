"""Text checks: equals (with normalize), contains and its kin, starts-with and regex, each
scoring 100 or 0 with a reason a person reads."""

import pytest

from app.scoring.checks.evaluate import run_check
from app.scoring.checks.spec import parse_checks


def check(answer, **spec):
    (parsed,) = parse_checks([spec])
    return run_check(parsed, answer)


def test_equals_is_exact_without_normalize():
    assert check("Paris", type="equals", value="Paris").passed
    assert not check(" paris", type="equals", value="Paris").passed


@pytest.mark.parametrize(
    "normalize, answer",
    [
        (["trim"], "  Paris\n"),
        (["case"], "PARIS"),
        (["whitespace"], "New   York\nCity"),
        (["punctuation"], "New York City!"),
        (["trim", "case", "whitespace", "punctuation"], "  new york, city. "),
    ],
)
def test_equals_normalizes_what_it_is_told(normalize, answer):
    expected = "New York City" if "York" in answer or "york" in answer else "Paris"
    assert check(answer, type="equals", value=expected, normalize=normalize).passed


def test_equals_punctuation_covers_unicode_punctuation():
    assert check("«Paris»…", type="equals", value="Paris", normalize=["punctuation"]).passed


def test_equals_says_what_was_expected_when_it_fails():
    result = check("Lyon", type="equals", value="Paris")
    assert (result.score, result.reason) == (0.0, "is not `Paris` (answer `Lyon`)")


def test_contains_is_case_sensitive_and_icontains_is_not():
    assert not check("PARIS", type="contains", value="Paris").passed
    assert check("PARIS", type="icontains", value="Paris").passed


def test_contains_names_the_missing_text():
    assert check("Lyon", type="contains", value="Paris").reason == "`Paris` not found"


def test_contains_any_passes_on_one_of_them():
    result = check("It is Lyon.", type="contains-any", value=["Paris", "Lyon"])
    assert result.passed and result.reason == "contains `Lyon`"


def test_contains_all_names_each_missing_text():
    result = check("Paris", type="contains-all", value=["Paris", "France", "Seine"])
    assert not result.passed and result.reason == "missing `France`, `Seine`"


def test_not_contains_fails_when_the_text_is_there():
    result = check("As an AI model", type="not-contains", value="As an AI")
    assert not result.passed and result.reason == "`As an AI` found (must not be)"


def test_starts_with_ignores_leading_whitespace():
    assert check("\n  Yes, because", type="starts-with", value="Yes").passed
    assert not check("Well, yes", type="starts-with", value="Yes").passed


def test_a_regex_that_is_not_found_fails_naming_it():
    result = check("the answer is 421", type="regex", value=r"\b42\b")
    assert (result.passed, result.reason) == (False, r"regex `\b42\b` not found")


@pytest.mark.parametrize(
    "flags, pattern, answer",
    [
        ("i", "paris", "PARIS"),
        ("m", "^two$", "one\ntwo\nthree"),
        ("s", "one.two", "one\ntwo"),
        ("x", r"\d+ \s* kg  # a weight", "5 kg"),
    ],
)
def test_regex_flags_work(flags, pattern, answer):
    assert check(answer, type="regex", value=pattern, flags=flags).passed


def test_a_long_reason_quotes_only_the_start_of_the_text():
    result = check("x" * 500, type="equals", value="y")
    assert len(result.reason) < 100 and "…" in result.reason
