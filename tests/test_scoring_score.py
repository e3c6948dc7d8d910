"""Scores and the registry: what a scorer gives back, how an item's scores combine, and which
scorers a task has today."""

from types import SimpleNamespace

from app.scoring import registry
from app.scoring.score import Score
from app.scoring.score import combine

TASK = SimpleNamespace(task_key="t1", question="2+2?", rubric=None, auto_fail_rules=None)


def test_a_score_passes_from_50():
    assert Score.of(50, "ok", by="x").passed and not Score.of(49.99, "no", by="x").passed


def test_an_auto_fail_scores_0_and_fails():
    score = Score.of(90, "broke a rule", by="x", auto_fail=True)
    assert (score.score, score.passed, score.auto_fail) == (0.0, False, True)


def test_one_score_stands_as_it_is():
    score = Score.of(80, "fine", by="rubric", rubric_scores={"facts": 3})
    assert combine([score]) is score


def test_scores_combine_to_their_mean_and_pass_only_when_all_pass():
    combined = combine([Score.of(100, "says it", by="rule"), Score.of(40, "weak", by="rubric")])
    assert combined.score == 70.0 and not combined.passed
    assert combined.reason == "rule: says it; rubric: weak" and combined.by == "rule+rubric"


def test_one_auto_fail_zeroes_the_combined_score():
    combined = combine(
        [Score.of(0, "no", by="rule", auto_fail=True), Score.of(95, "great", by="rubric")]
    )
    assert combined.score == 0.0 and combined.auto_fail and not combined.passed


def test_the_rubric_scores_are_kept_when_scores_combine():
    combined = combine(
        [Score.of(100, "yes", by="rule"), Score.of(80, "ok", by="rubric", rubric_scores={"a": 1})]
    )
    assert combined.rubric_scores == {"a": 1}


def test_a_task_without_checks_is_scored_by_the_rubric_judge_alone():
    assert registry.call_scorer(TASK) is registry.get("rubric")
    assert registry.get("rubric").needs_call and registry.get("rubric").stage == "judge"
    assert registry.rule_scorers(TASK) == []


def test_a_task_with_checks_is_scored_by_its_checks_too():
    task = SimpleNamespace(**vars(TASK), checks=[{"type": "contains", "value": "4"}])
    assert registry.rule_scorers(task) == [registry.get("checks")]
