"""app.compare: per-model deltas, paired significance over shared tasks, per-task changes."""

import random

import pytest

from app.db.models import FAILED
from app.results.compare import compare_runs
from app.results.compare import run_choices
from tests.factories import add_item
from tests.factories import make_run


@pytest.fixture
def pair(app):
    """B drops m1 by ~10 points on 30 shared tasks, leaves m2 unchanged; m3 only in A."""
    run_a, (a1, a2, a3) = make_run("a", targets=[("local", "m1"), ("local", "m2"), ("local", "m3")])
    run_b, (b1, b2) = make_run("b", targets=[("local", "m1"), ("local", "m2")])
    for n in range(30):
        add_item(run_a, a1, f"t{n:02d}", score=80 + n % 5, tokens_per_second=40)
        add_item(
            run_b,
            b1,
            f"t{n:02d}",
            score=70 + n % 5 - (5 if n == 7 else 0),
            tokens_per_second=50,
            time_taken_ms=800,
        )
        add_item(run_a, a2, f"t{n:02d}", score=60 + (n % 2) * 10)
        add_item(run_b, b2, f"t{n:02d}", score=60 + ((n + 1) % 2) * 10)
    add_item(run_a, a3, "t00", score=10)
    add_item(run_a, a1, "jf", score=90, tokens_per_second=40)
    add_item(run_b, b1, "jf", status=FAILED, error_stage="judge", error_msg="bad json")
    add_item(run_b, b1, "only-b", score=5)
    return run_a, run_b


def _model(result, label):
    return next(m for m in result["models"] if m["label"] == label)


def test_models_are_matched_by_provider_and_model(pair):
    result = compare_runs(*pair)
    assert [m["label"] for m in result["models"]] == ["local/m1", "local/m2"]
    assert result["onlyInA"] == ["local/m3"]
    assert result["onlyInB"] == []


def test_a_consistent_drop_is_significant_and_raises_a_regression_alert(pair):
    m1 = _model(compare_runs(*pair), "local/m1")
    paired = m1["pairedScore"]
    assert paired["n"] == 30
    assert paired["meanDiff"] == pytest.approx(-10 - 5 / 30)
    assert paired["ciHigh"] < 0 and paired["significant"] is True
    assert m1["verdict"] == "worse"
    assert m1["regressionAlert"] is True
    assert m1["signTestP"] < 0.001


def test_balanced_changes_are_not_significant(pair):
    m2 = _model(compare_runs(*pair), "local/m2")
    assert m2["pairedScore"]["significant"] is False
    assert m2["verdict"] == "no significant change"
    assert m2["regressionAlert"] is False


def test_speed_deltas_are_reported(pair):
    m1 = _model(compare_runs(*pair), "local/m1")
    assert m1["tokensPerSecondDelta"] == pytest.approx(10)
    assert m1["timeDeltaMs"] < 0
    assert m1["pairedTimeMs"]["significant"] is True


def test_judge_failures_are_counted_apart_not_as_score_drops(pair):
    result = compare_runs(*pair)
    m1 = _model(result, "local/m1")
    assert m1["sharedTasks"] == 31
    assert m1["sharedJudgeFailures"] == {"a": 0, "b": 1}
    assert result["judgeFailuresCount"] == 1
    assert all(c["taskKey"] != "jf" for c in result["regressions"])


def test_regressions_and_improvements_biggest_first(pair):
    result = compare_runs(*pair)
    deltas = [c["delta"] for c in result["regressions"]]
    assert deltas == sorted(deltas)
    assert result["regressions"][0]["taskKey"] == "t07"
    assert result["regressions"][0]["delta"] == -15
    # m2's +10 / -10 moves balance out (no significant change): below the threshold, not
    # improvements nor regressions (the lists follow the verdict's rule).
    assert result["improvementsCount"] == 0
    below = [c for c in result["belowThreshold"] if c["label"] == "local/m2"]
    assert len(below) == 30 and all(abs(c["delta"]) == 10 for c in below)


def test_compare_is_deterministic(pair):
    assert compare_runs(*pair) == compare_runs(*pair)


def test_run_choices_newest_first(pair):
    assert [run_id for run_id, _label in run_choices()] == ["b", "a"]


def test_task_changes_listed_under_a_limit_are_the_first_of_all_of_them_with_full_counts(app):
    rng = random.Random(7)
    targets = [("local", "worse"), ("local", "better"), ("local", "mixed")]
    run_a, ta = make_run("many-a", targets=targets)
    run_b, tb = make_run("many-b", targets=targets)
    for n in range(80):
        for shift, a, b in zip((-12, 12, 0), ta, tb, strict=True):
            score = rng.choice((20, 40, 60, 80))
            moved = score + shift + rng.choice((-30, -5, 0, 5, 30))
            add_item(run_a, a, f"t{n:02d}", score=score)
            add_item(run_b, b, f"t{n:02d}", score=max(0, min(100, moved)))
    everything = compare_runs(run_a, run_b, limit=None)
    assert [m["verdict"] for m in everything["models"]][:2] == ["worse", "better"]

    listed = compare_runs(run_a, run_b, limit=3)

    counts = {
        "regressions": "regressionsCount",
        "improvements": "improvementsCount",
        "belowThreshold": "belowThresholdCount",
    }
    for name, count in counts.items():
        assert listed[name] == everything[name][:3]
        assert listed[count] == len(everything[name])
