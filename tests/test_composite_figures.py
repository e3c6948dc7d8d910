"""A run's composite score read from its items: the reader, summary.json, the JSON API, the
latencyTargetMs run setting."""

import pytest

from app.db.models import FAILED
from app.exports.summary import summary_json
from app.results.composite import CompositeSettings
from app.results.composite_figures import target_composites
from app.runs.spec import clean_settings
from tests.factories import add_item
from tests.factories import make_run


@pytest.fixture
def run(app):
    """m1: scores 80 and 60 in 10 s and 50 s (median 30 s), one answer failed; m2: only a
    failed answer. Latency target 20 s."""
    run, (t1, t2) = make_run(
        "c-1", targets=[("local", "m1"), ("remote", "m2")], settings={"latencyTargetMs": 20000}
    )
    add_item(run, t1, "a", score=80, time_taken_ms=10_000.0)
    add_item(run, t1, "b", score=60, time_taken_ms=50_000.0)
    add_item(run, t1, "c", status=FAILED, error_stage="answer", error_msg="timeout")
    add_item(run, t2, "a", status=FAILED, error_stage="answer", error_msg="refused")
    return run, t1, t2


def test_reader_sums_quality_median_time_and_share_on_target(run):
    run, t1, _ = run
    c = target_composites(run)[t1.id]
    # 0.70 × 70 = 49; median 30 s → 15 − 1.5 = 13.5; 1 of 3 answers (a failure counts) × 15 = 5
    assert c.median_time_ms == 30_000.0
    assert c.on_target_share == pytest.approx(1 / 3)
    assert c.score == 67.5


def test_reader_gives_none_for_a_target_whose_answers_all_failed(run):
    run, _, t2 = run
    assert target_composites(run)[t2.id] is None


def test_reader_uses_the_settings_it_is_given(run):
    run, t1, _ = run
    c = target_composites(run, CompositeSettings(full_time_seconds=60.0))[t1.id]
    assert c.time_points == 15.0


def test_run_without_latency_target_gets_full_on_target_points(app):
    run, (t1,) = make_run("c-2")
    add_item(run, t1, "a", score=50, time_taken_ms=1000.0)
    c = target_composites(run)[t1.id]
    assert (c.on_target_share, c.on_target_points, c.score) == (None, 15.0, 65.0)


def test_summary_json_has_composite_per_model_and_the_best(run):
    run, _, _ = run
    summary = summary_json(run)
    scores = [m["compositeScore"] for m in summary["models"]]
    assert scores == [67.5, None]
    assert summary["models"][0]["composite"]["formula"].endswith("= 67.5")
    assert summary["bestCompositeScore"]["score"] == 67.5
    assert summary["compositeSettings"]["qualityWeight"] == 0.70


def test_summary_json_best_is_null_when_no_target_has_a_composite(app):
    run, (t1,) = make_run("c-3")
    add_item(run, t1, "a", status=FAILED, error_stage="answer", error_msg="x")
    assert summary_json(run)["bestCompositeScore"] is None


def test_api_run_has_composite_scores(client, run):
    data = client.get("/api/runs/c-1").get_json()
    assert [r["compositeScore"] for r in data["compositeScores"]] == [67.5, None]
    assert data["bestCompositeScore"]["label"] == "local/m1"  # the one name: provider/label


@pytest.mark.parametrize("value", [0, -5, "soon", 1.5, 3_600_001])
def test_latency_target_out_of_range_names_the_field(value):
    errors = []
    clean_settings({"latencyTargetMs": value}, errors)
    assert [e["field"] for e in errors] == ["settings.latencyTargetMs"]


def test_latency_target_is_kept_as_a_run_setting():
    errors = []
    assert clean_settings({"latencyTargetMs": "2500"}, errors) == {"latencyTargetMs": 2500}
    assert errors == []


def test_api_start_with_bad_latency_target_is_400_naming_it(client, app):
    response = client.post("/api/runs", json={"settings": {"latencyTargetMs": "soon"}})
    assert response.status_code == 400
    assert "settings.latencyTargetMs" in {e["field"] for e in response.json["errors"]}
