"""How much a task's checks weigh beside the judge, and how an item's scores combine by it."""

from types import SimpleNamespace

from app.scoring.score import Score
from app.scoring.score import combine
from app.scoring.task_checks import checks_weight
from app.scoring.task_checks import weights_of

CHECKS = [{"type": "contains", "value": "4"}]


def task(checks=CHECKS, rubric=None, excellent="4"):
    return SimpleNamespace(checks=checks, rubric=rubric, excellent=excellent)


def test_a_task_without_checks_is_the_judges_alone():
    assert checks_weight(task(checks=None)) == 0.0 and checks_weight(task(checks=[])) == 0.0


def test_checks_and_references_share_half_by_default():
    assert checks_weight(task()) == 0.5
    assert checks_weight(task(excellent="", rubric=[{"id": "a"}])) == 0.5


def test_checks_without_rubric_or_excellent_answer_take_the_whole_score():
    assert checks_weight(task(excellent="  ")) == 1.0


def test_without_a_judge_the_checks_take_the_whole_score():
    assert checks_weight(task(), {"checks": 0.2}, judge=False) == 1.0


def test_the_runs_score_weights_replace_the_default():
    assert checks_weight(task(excellent=""), {"checks": 0.2}) == 0.2


def test_the_judge_and_other_rules_share_what_the_checks_leave():
    scores = [Score.of(100, "c", by="checks"), Score.of(60, "r", by="rule")]
    scores.append(Score.of(80, "j", by="rubric"))
    weights = weights_of(scores, 0.5)
    assert weights == {"checks": 0.5, "rule": 0.25, "rubric": 0.25}
    assert combine(scores, weights).score == 85.0


def test_a_check_weighing_nothing_does_not_fail_the_item():
    scores = [Score.of(0, "c", by="checks"), Score.of(80, "j", by="rubric")]
    combined = combine(scores, weights_of(scores, 0.0))
    assert combined.score == 80.0 and combined.passed


def test_without_a_checks_score_the_scores_keep_their_plain_mean():
    assert weights_of([Score.of(1, "r", by="rule"), Score.of(2, "j", by="rubric")], 0.5) is None
