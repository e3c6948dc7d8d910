"""SLOs and goodput (results/goodput.py): which answers are good, goodput per target and per load
step, the highest load that meets the SLO, and where it is shown (API, summary.json, results
page, report.html)."""

import json

import pytest
from bs4 import BeautifulSoup

from app.db.models import FAILED
from app.exports.report import report_html
from app.exports.summary import summary_json
from app.latency import histogram
from app.latency import pack
from app.results.goodput import run_goodput
from tests.factories import add_item
from tests.factories import make_run

SLO = {"ttftP90Ms": 500, "e2eP95Ms": 3000, "minScore": 70}


def answer(run, target, key, ttft, e2e, score, sent, step=0, **fields):
    """One answered item with its timing columns (10 tokens)."""
    values = {
        "time_taken_ms": e2e,
        "ttft_ms": ttft,
        "first_answer_ms": ttft,
        "tokens_generated": 10,
        "tokens_per_second": 9000.0 / (e2e - ttft),
        "sent_ts": sent,
        "chunks": 10,
        "step": step,
    }
    values.update(fields)
    return add_item(run, target, key, score=score, **values)


def only(run, **kwargs):
    return run_goodput(run, **kwargs)["targets"][0]


@pytest.fixture
def fixed(app):
    """Five answers of one target against SLO: two good, one too slow to start, one under the
    min score, one auto-failed."""
    run, (t1,) = make_run("gp-1", settings={"slo": SLO})
    answer(run, t1, "good1", 100, 1000, 80, 100.0)
    answer(run, t1, "slow", 600, 1500, 90, 100.5)
    answer(run, t1, "weak", 200, 2000, 60, 101.0)
    answer(run, t1, "broke", 300, 2500, 95, 101.5, auto_fail=True)
    answer(run, t1, "good2", 150, 1200, 75, 102.0)
    return run


def test_goodput_is_good_answers_over_the_answering_window(fixed):
    figures = only(fixed)
    # Window: first sent 100.0 s, last done at 101.5 + 2.5 = 104.0 s: 4 s; 2 good answers.
    assert (figures["answers"], figures["good"]) == (5, 2)
    assert figures["windowSeconds"] == pytest.approx(4.0)
    assert figures["goodput"] == pytest.approx(0.5)
    assert figures["goodShare"] == pytest.approx(0.4)


def test_an_answer_within_the_latency_slo_but_under_the_min_score_is_not_good(app):
    run, (t1,) = make_run("gp-2", settings={"slo": SLO})
    answer(run, t1, "weak", 100, 1000, 69.9, 100.0)
    assert only(run)["good"] == 0


def test_an_auto_failed_answer_is_not_good_whatever_its_score(app):
    run, (t1,) = make_run("gp-3", settings={"slo": SLO})
    answer(run, t1, "broke", 100, 1000, 100, 100.0, auto_fail=True)
    assert only(run)["good"] == 0


def test_an_answer_whose_own_itl_p90_is_over_the_bound_is_not_good(app):
    run, (t1,) = make_run("gp-4", settings={"slo": {"itlP90Ms": 30}})
    answer(run, t1, "steady", 100, 1000, 80, 100.0, itl_hist=pack(histogram([20] * 10)))
    answer(run, t1, "stutter", 100, 1000, 80, 100.0, itl_hist=pack(histogram([20] * 5 + [90] * 5)))
    assert only(run)["good"] == 1


def test_attainment_holds_each_bound_against_the_targets_percentiles(fixed):
    attainment = only(fixed)["attainment"]
    # TTFT [100, 150, 200, 300, 600]: p90 at position 3.6 -> 300 + 0.6 * 300 = 480.
    assert attainment["ttftP90Ms"] == {"value": pytest.approx(480.0), "limit": 500, "met": True}
    # Scores 80, 90, 60, 95, 75: average 80.
    assert attainment["minScore"]["value"] == pytest.approx(80.0)
    assert only(fixed)["met"] is True


def step_run(run_id, ttfts, load=None):
    """A run with one answer per load step, each with the given TTFT and score 80."""
    settings = {"slo": {"ttftP90Ms": 500, "minScore": 70}}
    if load is not None:
        settings["load"] = load
    run, (t1,) = make_run(run_id, settings=settings)
    for step, ttft in enumerate(ttfts):
        answer(run, t1, f"s{step}", ttft, 1000, 80, 100.0 + 10 * step, step=step)
    return run


def test_the_highest_load_step_that_meets_the_slo_is_named(app):
    run = step_run("gp-steps-1", [100, 300, 900], {"mode": "concurrency", "steps": [1, 2, 4]})
    figures = only(run)
    assert [s["met"] for s in figures["steps"]] == [True, True, False]
    assert figures["highestLoad"] == {"step": 1, "load": 2.0}
    assert figures["sentence"] == (
        "serves local/m1 at concurrency 2 with p90 TTFT ≤ 500 ms and score ≥ 70"
    )


def test_a_rate_step_is_named_in_requests_per_second(app):
    run = step_run("gp-steps-2", [100, 300], {"mode": "rate", "steps": [0.5, 2]})
    assert only(run)["sentence"].startswith("serves local/m1 at 2 requests/s with")


def test_no_step_meeting_the_slo_is_said(app):
    run = step_run("gp-steps-3", [900, 1200], {"mode": "concurrency", "steps": [1, 2]})
    figures = only(run)
    assert figures["highestLoad"] is None
    assert figures["sentence"] == (
        "local/m1: no step met the SLO (p90 TTFT ≤ 500 ms and score ≥ 70)"
    )


def test_a_run_without_steps_is_one_step_at_its_concurrency(app):
    run, (t1,) = make_run("gp-one", settings={"slo": SLO, "concurrency": 6})
    answer(run, t1, "a", 100, 1000, 80, 100.0)
    figures = only(run)
    assert [(s["step"], s["load"]) for s in figures["steps"]] == [(0, 6.0)]
    assert figures["sentence"].startswith("serves local/m1 at concurrency 6 with")


def test_a_run_without_an_slo_has_no_goodput(app):
    run, (t1,) = make_run("gp-none")
    answer(run, t1, "a", 100, 1000, 80, 100.0)
    assert run_goodput(run) is None


def test_speed_api_carries_the_slo(fixed, client):
    body = client.get(f"/api/runs/{fixed.run_id}/speed").get_json()
    assert body["slo"]["slo"] == SLO
    (target,) = body["slo"]["targets"]
    assert target["goodput"] == pytest.approx(0.5) and target["good"] == 2
    assert body["targets"][0]["ttftMs"]["n"] == 5  # the speed figures are still there


def test_summary_json_has_the_slo_per_target(fixed):
    summary = json.loads(json.dumps(summary_json(fixed)))
    (model,) = summary["models"]
    assert model["slo"]["goodput"] == pytest.approx(0.5)
    assert model["slo"]["highestLoad"] == {"step": 0, "load": None}


def test_results_page_shows_goodput_and_the_sentence(fixed, client):
    page = BeautifulSoup(client.get(f"/runs/{fixed.run_id}/results").data, "html.parser")
    table = page.select_one("#goodput-table")
    assert table is not None
    row = table.select_one("tbody tr")
    assert "2 / 5" in row.text and "0.50" in row.text
    sentence = page.select_one("#goodput-sentences li").text
    assert sentence == (
        "serves local/m1 at this run's load with p90 TTFT ≤ 500 ms, p95 e2e ≤ 3000 ms "
        "and score ≥ 70"
    )


def test_results_page_without_an_slo_has_no_goodput_block(app, client):
    run, (t1,) = make_run("gp-none-page")
    answer(run, t1, "a", 100, 1000, 80, 100.0)
    page = BeautifulSoup(client.get(f"/runs/{run.run_id}/results").data, "html.parser")
    assert page.select_one("#goodput-table") is None


def test_report_html_shows_goodput(fixed):
    html = report_html(fixed)
    page = BeautifulSoup(html, "html.parser")
    assert "0.50" in page.select_one("#goodput-table").text


def test_a_target_without_answers_has_no_goodput_and_meets_no_slo(app):
    run, (t1, t2) = make_run("gp-empty", targets=[("local", "m1"), ("local", "m2")])
    run.settings = {"slo": SLO}
    run.save()
    answer(run, t1, "a", 100, 1000, 80, 100.0)
    add_item(run, t2, "a", status=FAILED, error_stage="answer", error_msg="refused")
    second = run_goodput(run)["targets"][1]
    assert (second["answers"], second["goodput"], second["met"]) == (0, None, False)
    assert second["steps"] == [] and second["highestLoad"] is None
