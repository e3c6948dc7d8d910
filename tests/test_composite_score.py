"""The composite score from plain numbers, against sums worked out by hand."""

import pytest

from app.results.composite import DEFAULT_SETTINGS
from app.results.composite import NONE_TEXT
from app.results.composite import CompositeSettings
from app.results.composite import best
from app.results.composite import composite
from app.results.composite import settings_from
from app.results.composite import time_points


def test_fast_target_without_latency_target_gets_all_efficiency_points():
    # 0.70 × 82 + 15 + 15 = 87.4
    c = composite(82.0, 10_000.0)
    assert c.score == 87.4
    assert c.time_points == 15.0
    assert c.on_target_points == 15.0
    assert c.on_target_share is None


def test_formula_is_the_sum_as_shown():
    c = composite(82.0, 10_000.0, met=8, answers=10, latency_target_ms=5000)
    # 57.4 + 15 + 12 = 84.4
    assert c.formula() == (
        "composite = 0.70 × quality 82.0 + time 15.0 (median 10.0 s) "
        "+ on-target 12.0 (80 % under 5.0 s) = 84.4"
    )


def test_formula_says_when_the_run_has_no_latency_target():
    assert "on-target 15.0 (no latency target)" in composite(50.0, 1000.0).formula()


def test_no_scored_item_gives_no_composite_not_zero():
    assert composite(None, 1000.0) is None


def test_no_measured_answer_time_gives_no_composite():
    assert composite(80.0, None) is None


def test_nothing_is_shown_as_a_dash():
    assert NONE_TEXT == "—"


def test_all_answers_scored_zero_leave_the_efficiency_points():
    # Every answer auto-failed (score 0), fast, all within the target: 0 + 15 + 15.
    assert composite(0.0, 2000.0, met=4, answers=4, latency_target_ms=3000).score == 30.0


def test_all_answers_failed_miss_the_latency_target():
    # Failed answers count as misses: 0 of 5 → 0 on-target points.
    c = composite(60.0, 2000.0, met=0, answers=5, latency_target_ms=3000)
    assert c.on_target_points == 0.0
    assert c.score == 57.0  # 42 + 15 + 0


def test_just_under_30_seconds_gets_full_time_points():
    assert time_points(29_999.0) == 15.0


def test_exactly_30_seconds_follows_the_line_15_minus_3_per_minute():
    # 15 − 3 × 0.5 = 13.5: "under 30 s" is full points, 30 s itself is on the line.
    assert time_points(30_000.0) == 13.5


def test_two_minutes_loses_six_points():
    assert time_points(120_000.0) == 9.0


def test_exactly_5_minutes_gives_no_time_points():
    assert time_points(300_000.0) == 0.0


def test_past_5_minutes_time_points_stay_at_zero():
    assert time_points(600_000.0) == 0.0


def test_latency_target_nobody_meets_gives_no_on_target_points():
    c = composite(90.0, 40_000.0, met=0, answers=12, latency_target_ms=1000)
    # 63 + (15 − 3 × 40/60 = 13) + 0 = 76.0
    assert c.on_target_share == 0.0
    assert c.score == 76.0


def test_latency_target_with_no_answers_gives_no_on_target_points():
    assert composite(90.0, 1000.0, met=0, answers=0, latency_target_ms=1000).on_target_points == 0


def test_perfect_target_scores_100():
    assert composite(100.0, 100.0, met=3, answers=3, latency_target_ms=500).score == 100.0


def test_score_is_rounded_to_one_decimal():
    # 0.7 × 33.33 = 23.331 + 15 + 15 = 53.331 → 53.3
    assert composite(33.33, 1000.0).score == 53.3


def test_other_weights_split_efficiency_in_two_halves():
    settings = CompositeSettings(quality_weight=0.6)
    c = composite(50.0, 1000.0, settings=settings)
    assert (c.time_points, c.on_target_points, c.score) == (20.0, 20.0, 70.0)


def test_other_time_curve_from_settings():
    settings = CompositeSettings(full_time_seconds=10.0, points_per_minute=6.0)
    assert time_points(9_000.0, settings) == 15.0
    assert time_points(60_000.0, settings) == 9.0


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ({}, DEFAULT_SETTINGS),
        ({"COMPOSITE_QUALITY_WEIGHT": "0.5"}, CompositeSettings(quality_weight=0.5)),
        ({"COMPOSITE_QUALITY_WEIGHT": 1.5}, DEFAULT_SETTINGS),
        ({"COMPOSITE_POINTS_PER_MINUTE": "many"}, DEFAULT_SETTINGS),
        ({"COMPOSITE_FULL_TIME_SECONDS": 60}, CompositeSettings(full_time_seconds=60.0)),
    ],
)
def test_settings_come_from_config_and_bad_values_keep_the_default(config, expected):
    assert settings_from(config) == expected


def test_best_skips_targets_without_a_composite():
    a, b = composite(50.0, 1000.0), composite(80.0, 1000.0)
    assert best([a, None, b]) is b
    assert best([None]) is None


def test_to_dict_carries_the_formula():
    data = composite(82.0, 10_000.0).to_dict()
    assert data["score"] == 87.4
    assert data["formula"].endswith("= 87.4")
