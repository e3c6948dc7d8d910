"""A task's checks on one answer: each check's result and one Score, the weighted mean, that
passes only when every check passes and auto-fails when a gate check fails."""

import json

from app.scoring.checks.evaluate import evaluate
from app.scoring.checks.spec import parse_checks


def run(checks, answer, **context):
    return evaluate(parse_checks(checks, has_reference=True), answer, **context)


def test_every_check_passing_passes_the_answer_with_100():
    evaluation = run([{"type": "contains", "value": "42"}, {"type": "regex", "value": r"\d"}], "42")
    assert (evaluation.score.score, evaluation.score.passed) == (100.0, True)
    assert evaluation.score.reason == "all 2 checks passed" and evaluation.score.by == "checks"


def test_the_score_is_the_weighted_mean_of_the_checks():
    evaluation = run(
        [{"type": "contains", "value": "42", "weight": 3}, {"type": "contains", "value": "x"}],
        "42",
    )
    assert evaluation.score.score == 75.0 and not evaluation.score.passed


def test_the_reason_names_each_failed_check():
    evaluation = run([{"type": "contains", "value": "42"}, {"type": "regex", "value": "^x"}], "42")
    assert evaluation.score.reason == "1/2 checks passed; regex: regex `^x` not found"


def test_a_metric_passes_at_its_threshold_even_below_100():
    evaluation = run([{"type": "similarity", "value": "abcd", "threshold": 70}], "abc")
    assert evaluation.score.passed and evaluation.score.score == 85.71


def test_a_failed_gate_auto_fails_the_answer_with_0():
    evaluation = run(
        [
            {"type": "contains", "value": "42"},
            {"type": "not-contains", "value": "AI", "gate": True},
        ],
        "42, as an AI",
    )
    score = evaluation.score
    assert (score.score, score.passed, score.auto_fail) == (0.0, False, True)
    assert score.reason == "gate failed: not-contains: `AI` found (must not be)"


def test_a_passed_gate_changes_nothing():
    evaluation = run([{"type": "contains", "value": "42", "gate": True}], "42")
    assert evaluation.score.passed and not evaluation.score.auto_fail


def test_each_result_says_type_score_passed_reason_and_gate():
    (result,) = run([{"type": "contains", "value": "x", "gate": True}], "y").results
    assert result.to_dict() == {
        "type": "contains",
        "score": 0.0,
        "passed": False,
        "reason": "`x` not found",
        "gate": True,
    }


def test_an_evaluation_is_plain_json():
    checks = [
        {"type": "rouge-l"},
        {"type": "number", "value": 42},
        {"type": "json-schema", "value": {"type": "object"}},
        {"type": "latency", "value": 10},
    ]
    evaluation = run(checks, "41", reference="42", facts={"time_taken_ms": 3})
    stored = evaluation.to_dict()
    assert json.loads(json.dumps(stored)) == stored
    assert [r["type"] for r in stored["checks"]] == ["rouge-l", "number", "json-schema", "latency"]


def test_no_checks_pass_with_100():
    evaluation = evaluate([], "anything")
    assert evaluation.results == [] and evaluation.score.passed and evaluation.score.score == 100.0
