"""The rubric judge's reply parser reads apocbench's shape ({overall_score, notes,
auto_fail_reason}) as well as ours, and a non-empty auto_fail_reason auto-fails the answer."""

import json
from types import SimpleNamespace

import pytest

from app.scoring import rubric
from app.scoring.replies import JudgeOutputError

RUBRIC = [{"id": "facts", "text": "States the facts", "weight": 1, "max_score": 4}]


def item(**fields):
    values = {"rubric": None, "auto_fail_rules": None, "question": "2+2?", "answer": "4"}
    return SimpleNamespace(**{**values, **fields})


def parse(data, **fields):
    return rubric.parse_judgement(json.dumps(data), item(**fields))


def test_an_apocbench_reply_gives_its_score_and_notes():
    result = parse({"overall_score": 85, "notes": " clear ", "auto_fail_reason": ""})
    assert (result["score"], result["judge_score"], result["reason"]) == (85.0, 85, "clear")
    assert not result["auto_fail"] and result["auto_fail_reason"] is None


def test_an_apocbench_auto_fail_reason_auto_fails_even_without_rules():
    result = parse({"overall_score": 70, "notes": "ok", "auto_fail_reason": "made up a source"})
    assert result["auto_fail"] and result["score"] == 0.0
    assert result["auto_fail_reason"] == "made up a source"


def test_an_apocbench_reply_may_leave_out_notes_and_auto_fail_reason():
    result = parse({"overall_score": 62.5})
    assert result["score"] == 62.5 and result["reason"] == "(the judge gave no notes)"
    assert not result["auto_fail"] and result["auto_fail_reason"] is None


def test_an_apocbench_reply_without_notes_says_why_it_auto_failed():
    result = parse({"overall_score": 40, "auto_fail_reason": "refused"})
    assert result["reason"] == "auto-fail: refused" and result["auto_fail"]


def test_an_apocbench_reply_without_rubric_scores_keeps_its_overall_score_on_a_rubric_task():
    assert parse({"overall_score": 90, "notes": "fine"}, rubric=RUBRIC)["score"] == 90.0


@pytest.mark.parametrize(
    ("data", "why"),
    [
        ({"overall_score": "high"}, '"overall_score" must be a number from 0 to 100'),
        ({"overall_score": 101}, '"overall_score" must be a number from 0 to 100'),
        ({"overall_score": 50, "notes": 3}, '"notes" must be a string'),
        ({"overall_score": 50, "auto_fail_reason": True}, '"auto_fail_reason" must be a string'),
    ],
)
def test_a_bad_apocbench_reply_says_why(data, why):
    with pytest.raises(JudgeOutputError, match=why):
        parse(data)


def test_our_reply_is_read_as_before():
    result = parse({"score": 80, "reason": "good"})
    assert (result["score"], result["reason"], result["auto_fail"]) == (80.0, "good", False)
    assert result["auto_fail_reason"] is None


def test_our_reply_missing_its_score_is_refused_by_name():
    with pytest.raises(JudgeOutputError, match='"score" must be an integer'):
        parse({"reason": "good"})


def test_our_auto_fail_keeps_the_judges_reason_as_the_auto_fail_reason():
    result = parse({"score": 80, "reason": "broke it", "auto_fail": True}, auto_fail_rules=["x"])
    assert result["auto_fail"] and result["auto_fail_reason"] == "broke it"


def test_our_auto_fail_takes_an_auto_fail_reason_when_given():
    data = {"score": 80, "reason": "r", "auto_fail": True, "auto_fail_reason": "said a lie"}
    assert parse(data, auto_fail_rules=["x"])["auto_fail_reason"] == "said a lie"
