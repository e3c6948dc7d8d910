"""Speed as a load tester reports it (results/speed.py): per target and per category, on the API,
in summary.json, on the results page, in report.html and in the CLI's summary."""

import datetime as dt
import json
import random

import numpy as np
import pytest
from bs4 import BeautifulSoup

from app.db.models import FAILED
from app.db.models import Item
from app.db.models import Run
from app.exports.report import report_html
from app.exports.summary import summary_json
from app.latency import histogram
from app.latency import merge
from app.latency import pack
from app.latency import unpack
from app.results import speed
from app.results.speed import BOOTSTRAP_MAX
from app.results.speed import NO_SEND_TIMES
from app.results.speed import _group_histograms
from app.results.speed import _sum_histograms
from app.results.speed import compute_speed
from app.results.speed import distribution
from app.results.speed import run_speed
from tests.factories import T0
from tests.factories import add_item
from tests.factories import make_run


def timed(run, target, key, e2e, ttft, tokens, sent, **fields):
    """One answered item with its timing columns."""
    values = {
        "time_taken_ms": e2e,
        "ttft_ms": ttft,
        "first_answer_ms": ttft,
        "tokens_generated": tokens,
        "tokens_per_second": 1000.0 * (tokens - 1) / (e2e - ttft),
        "sent_ts": sent,
        "chunks": tokens,
    }
    values.update(fields)
    return add_item(run, target, key, score=80, **values)


@pytest.fixture
def run(app):
    """Target m1: four timed answers (two categories), one read timeout, one refused; target m2:
    two answers from before the timing columns."""
    run, (t1, t2) = make_run("sp-1", targets=[("local", "m1"), ("remote", "m2")])
    gaps = (pack(histogram([10, 20, 30])), pack(histogram([40])), None, None)
    for n, (e2e, ttft, tokens, sent) in enumerate(
        [(1000, 100, 11, 100.0), (2000, 200, 21, 100.5), (3000, 300, 31, 101.0)]
        + [(4000, 400, 41, 101.5)]
    ):
        timed(
            run,
            t1,
            f"a{n}",
            e2e,
            ttft,
            tokens,
            sent,
            itl_hist=gaps[n],
            category="math" if n < 2 else "code",
        )
    add_item(
        run,
        t1,
        "late",
        status=FAILED,
        error_stage="answer",
        category="code",
        error_msg="No answer from http://127.0.0.1:9/v1 within 5 s (read timeout)",
    )
    add_item(
        run,
        t1,
        "down",
        status=FAILED,
        error_stage="answer",
        category="code",
        error_msg="Cannot reach http://127.0.0.1:9/v1: connection refused",
    )
    add_item(run, t2, "old1", score=70, time_taken_ms=500.0, ttft_ms=None)
    add_item(run, t2, "old2", score=70, time_taken_ms=700.0, ttft_ms=None)
    return run


def first(run):
    return run_speed(run)["targets"][0]


def test_speed_percentiles_match_hand_computed_values(run):
    e2e = first(run)["e2eMs"]
    assert (e2e["n"], e2e["mean"], e2e["p50"], e2e["max"]) == (4, 2500.0, 2500.0, 4000.0)
    # Linear interpolation: p90 sits at position 2.7 of [1000, 2000, 3000, 4000].
    assert e2e["p90"] == pytest.approx(3700.0)
    assert e2e["p95"] == pytest.approx(3850.0)
    assert e2e["p99"] == pytest.approx(3970.0)
    assert first(run)["ttftMs"]["p50"] == 250.0


def test_tpot_is_the_time_after_the_first_token_per_later_token(run):
    # (1000 - 100) / 10, (2000 - 200) / 20, ...: 90 ms every time.
    assert first(run)["tpotMs"]["p50"] == pytest.approx(90.0)
    assert first(run)["tpotMs"]["max"] == pytest.approx(90.0)


def test_itl_merges_every_answers_gaps(run):
    itl = first(run)["itlMs"]
    assert itl["n"] == 4
    assert itl["p50"] == 25.0 and itl["max"] == 40.0 and itl["mean"] == 25.0


def test_window_throughput_counts_tokens_over_the_answering_window(run):
    window = first(run)["window"]
    # First sent at 100.0 s, last done at 101.5 + 4.0 = 105.5 s.
    assert window["seconds"] == pytest.approx(5.5)
    assert window["outputTokensPerSecond"] == pytest.approx((11 + 21 + 31 + 41) / 5.5)
    assert window["requestsPerSecond"] == pytest.approx(4 / 5.5)


def test_achieved_concurrency_is_busy_time_over_window(run):
    assert first(run)["window"]["achievedConcurrency"] == pytest.approx((1 + 2 + 3 + 4) / 5.5)


def test_error_and_timeout_rates_count_failed_answers_over_attempts(run):
    figures = first(run)
    assert (figures["attempts"], figures["failed"], figures["timeouts"]) == (6, 2, 1)
    assert figures["errorRate"] == pytest.approx(2 / 6)
    assert figures["timeoutRate"] == pytest.approx(1 / 6)


def test_categories_get_their_own_figures(run):
    categories = {c["category"]: c for c in first(run)["categories"]}
    assert categories["math"]["e2eMs"]["p50"] == 1500.0
    assert categories["code"]["e2eMs"]["p50"] == 3500.0
    assert categories["code"]["failed"] == 2 and categories["math"]["failed"] == 0


def test_one_chunk_streams_flag_the_target_as_buffered(app):
    run, (t,) = make_run("sp-buf")
    for n in range(3):
        timed(run, t, f"b{n}", 1000, 990, 30, 100.0 + n, chunks=1, itl_hist=None)
    timed(run, t, "s", 1000, 100, 30, 104.0, itl_hist=pack(histogram([30] * 29)))
    assert first(run)["flags"]["streamBuffered"] is True


def test_a_stream_with_many_chunks_is_not_flagged_buffered(run):
    assert first(run)["flags"]["streamBuffered"] is False


def test_a_long_queue_flags_ttft_as_queue_dominated(app):
    run, (t,) = make_run("sp-queue")
    for n in range(3):
        timed(run, t, f"q{n}", 2000, 1000, 30, 100.0 + n, queue_ms=800.0)
    assert first(run)["flags"]["queueDominatedTtft"] is True


def test_without_queue_times_the_queue_flag_is_unknown(run):
    assert first(run)["flags"]["queueDominatedTtft"] is None


def test_an_older_run_without_send_times_gives_what_it_has_and_says_why(run):
    old = run_speed(run)["targets"][1]
    assert old["e2eMs"]["p50"] == 600.0
    assert old["ttftMs"]["n"] == 0 and old["ttftMs"]["p50"] is None
    assert old["window"]["outputTokensPerSecond"] is None
    assert old["window"]["reason"] == NO_SEND_TIMES
    assert old["flags"] == {"queueDominatedTtft": None, "streamBuffered": None}


def test_cis_are_stable_and_hold_the_estimate():
    values = [random.Random(n).uniform(100, 900) for n in range(BOOTSTRAP_MAX)]
    once, again = distribution(values), distribution(list(reversed(values)))
    assert once == again
    assert once["p50Ci"][0] <= once["p50"] <= once["p50Ci"][1]
    assert once["meanCi"][0] <= once["mean"] <= once["meanCi"][1]


def test_large_samples_get_the_bootstraps_large_sample_interval():
    values = [random.Random(n).uniform(100, 900) for n in range(BOOTSTRAP_MAX + 1)]
    figures = distribution(values)
    assert figures["p50Ci"][0] < figures["p50"] < figures["p50Ci"][1]
    assert figures["meanCi"][1] - figures["meanCi"][0] == pytest.approx(
        2 * 1.96 * 230.9 / (BOOTSTRAP_MAX + 1) ** 0.5, rel=0.1
    )


def test_merged_histograms_equal_the_latency_modules_merge_per_group():
    rng = random.Random(7)
    blobs = [
        pack(histogram([rng.expovariate(1 / 30) * rng.choice([1, 300]) for _ in range(n)]))
        for n in range(0, 200)
    ]
    groups = np.array([n % 3 for n in range(len(blobs))])
    merged = _group_histograms(blobs, groups, 3)
    for g in range(3):
        expected = merge([unpack(b) for b, n in zip(blobs, groups, strict=True) if n == g])
        assert _sum_histograms(merged, [g]) == expected


def test_figures_read_a_few_answers_at_a_time_equal_those_read_at_once(run, monkeypatch):
    # Two load steps, so the per-step figures and gap histograms are folded in by chunk too.
    Run.update(settings={"load": {"mode": "concurrency", "steps": [1, 4]}}).where(
        Run.id == run.id
    ).execute()
    Item.update(step=1).where(
        (Item.run == run.id) & Item.task_key.in_(["a1", "a3", "down"])
    ).execute()
    run = Run.get_by_id(run.id)
    whole = compute_speed(run)
    for chunk in (1, 2, 3):
        monkeypatch.setattr(speed, "READ_CHUNK", chunk)
        assert compute_speed(run) == whole
    assert [s["step"] for s in whole["targets"][0]["steps"]] == [0, 1]
    assert whole["targets"][0]["steps"][1]["itlMs"] != whole["targets"][0]["steps"][0]["itlMs"]


def test_a_changed_item_is_read_again_not_taken_from_the_cache(app):
    run, (t,) = make_run("sp-cache")
    tried = {"last_attempt_at": T0, "updated_at": T0}
    item = timed(run, t, "a", 1000, 100, 11, 100.0, **tried)
    assert run_speed(run) == run_speed(run)
    Item.update(time_taken_ms=3000.0, updated_at=T0 + dt.timedelta(seconds=1)).where(
        Item.id == item.id
    ).execute()
    assert first(run)["e2eMs"]["p50"] == 3000.0


def test_api_speed_lists_each_target(client, run):
    body = client.get("/api/runs/sp-1/speed").get_json()
    assert [t["label"] for t in body["targets"]] == ["local/m1", "remote/m2"]
    assert body["targets"][0]["e2eMs"]["p50"] == 2500.0


def test_api_speed_of_an_unknown_run_is_404(client, app):
    assert client.get("/api/runs/nope/speed").status_code == 404


def test_summary_json_has_speed_per_target(run):
    models = json.loads(json.dumps(summary_json(run)))["models"]
    assert [m["speed"]["label"] for m in models] == ["local/m1", "remote/m2"]
    assert models[0]["speed"]["window"]["achievedConcurrency"] == pytest.approx(10 / 5.5)


def test_results_page_shows_speed_table(client, run):
    page = BeautifulSoup(client.get("/runs/sp-1/results").get_data(as_text=True), "html.parser")
    table = page.find(id="speed-table")
    rows = [r.find(["th", "td"]).get_text(strip=True) for r in table.tbody.find_all("tr")]
    assert rows[0] == "local/m1" and "remote/m2" in rows
    assert "timed out" in table.get_text()


def test_results_page_of_a_run_without_timing_columns_still_renders(client, app):
    run, (t,) = make_run("sp-old")
    add_item(run, t, "x", score=50, ttft_ms=None)
    response = client.get("/runs/sp-old/results")
    assert response.status_code == 200
    assert "speed-table" in response.get_data(as_text=True)


def test_report_html_has_the_speed_table(run):
    html = report_html(run)
    assert 'id="speed-table"' in html and "queue-dominated" not in html


def test_the_decode_chart_says_it_is_per_answer(client, run):
    svg = client.get("/runs/sp-1/charts/speed.svg").get_data(as_text=True)
    assert "Decode speed per answer (tokens/s)" in svg
