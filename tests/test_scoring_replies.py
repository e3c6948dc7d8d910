"""A judge's reply read as one JSON object: the one parser the rubric and pairwise judges share."""

import pytest

from app.scoring.replies import JudgeOutputError
from app.scoring.replies import json_object
from app.scoring.replies import reason


def test_a_bare_json_object_is_read():
    assert json_object('{"score": 80, "reason": "fine"}') == {"score": 80, "reason": "fine"}


def test_a_fenced_json_object_is_read():
    assert json_object('```json\n{"winner": "A"}\n```') == {"winner": "A"}


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("", "empty"),
        (None, "empty"),
        ("```json\n```", "empty"),
        ('Sure! {"score": 80}', "not valid JSON"),
        ("[1, 2]", "must be a JSON object"),
    ],
)
def test_anything_but_one_json_object_says_why(text, why):
    with pytest.raises(JudgeOutputError, match=why):
        json_object(text)


def test_a_reply_cut_off_at_the_length_limit_is_refused_even_when_it_parses():
    with pytest.raises(JudgeOutputError, match="cut off"):
        json_object('{"score": 80, "reason": "fine"}', finish_reason="length")


def test_the_reason_is_stripped():
    assert reason({"reason": "  clear and right \n"}) == "clear and right"


@pytest.mark.parametrize("value", [None, "", "   ", 5])
def test_a_missing_or_blank_reason_is_refused(value):
    with pytest.raises(JudgeOutputError, match='"reason"'):
        reason({"reason": value})
