"""A text check's `negate` option (promptfoo's not-icontains, not-regex, ...): it passes when the
text test fails, and only text checks take it."""

import pytest

from app.scoring.checks.evaluate import run_check
from app.scoring.checks.spec import CheckError
from app.scoring.checks.spec import parse_checks


def check(answer, **spec):
    (parsed,) = parse_checks([spec])
    return run_check(parsed, answer)


@pytest.mark.parametrize(
    "spec, answer",
    [
        ({"type": "icontains", "value": "sorry"}, "Here you go."),
        ({"type": "equals", "value": "Paris"}, "Lyon"),
        ({"type": "regex", "value": r"\d+"}, "no digits"),
        ({"type": "starts-with", "value": "As an AI"}, "Sure."),
    ],
)
def test_a_negated_text_check_passes_when_the_test_fails(spec, answer):
    result = check(answer, negate=True, **spec)
    assert result.passed and result.score == 100.0


def test_a_negated_text_check_fails_when_the_test_holds():
    result = check("I'm SORRY", type="icontains", value="sorry", negate=True)
    assert not result.passed and result.reason.startswith("negated:")


def test_negate_is_kept_in_the_plain_json_only_when_set():
    (plain, negated) = parse_checks(
        [{"type": "contains", "value": "a"}, {"type": "contains", "value": "a", "negate": True}]
    )
    assert "negate" not in plain.to_dict() and negated.to_dict()["negate"] is True


def test_only_text_checks_take_negate():
    with pytest.raises(CheckError) as caught:
        parse_checks([{"type": "json", "negate": True}])
    assert "negate" in caught.value.message


def test_negate_must_be_true_or_false():
    with pytest.raises(CheckError) as caught:
        parse_checks([{"type": "contains", "value": "a", "negate": "yes"}])
    assert "true or false" in caught.value.message
