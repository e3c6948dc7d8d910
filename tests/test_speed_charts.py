"""The speed charts (results/speed_charts.py, run_speed_charts.py): score against p90 answer time
with the Pareto frontier, TTFT and ITL distributions, the per-request timeline, the load charts;
on the results page and in report.html, and an empty state that says what is missing."""

import datetime as dt

import pytest
from lxml import etree

from app.charts.key import wrap
from app.db.models import Item
from app.exports.report import report_html
from app.latency import bucket
from app.latency import histogram
from app.latency import pack
from app.results.run_speed_charts import has_load_steps
from app.results.run_speed_charts import load_points
from app.results.run_speed_charts import speed_chart
from app.results.run_speed_charts import speed_chart_names
from app.results.speed import run_speed
from app.results.speed_charts import NO_SEND_TIMES
from app.results.speed_charts import bin_counts
from app.results.speed_charts import bin_edges
from app.results.speed_charts import bin_histogram
from app.results.speed_charts import choose_edges
from app.results.speed_charts import is_log
from app.results.speed_charts import load_chart
from app.results.speed_charts import log_bin_edges
from app.results.speed_charts import pareto_frontier
from app.results.speed_charts import quality_speed_chart
from app.results.speed_charts import timeline_bars
from tests.factories import T0
from tests.factories import add_item
from tests.factories import make_run
from tests.pacedserver import PacedServer
from tests.test_item_timing import answers_logged
from tests.test_item_timing import run_on

LONG = "a-provider-with-a-long-name/an-organisation/a-model-name-far-too-long-for-any-axis-Q4_K_M"


def point(label, x, y):
    return {"label": label, "x": x, "y": y}


def texts(svg):
    """Every text a chart draws (its <text> lines and <title>s), parsed: the SVG is valid XML."""
    root = etree.fromstring(svg.encode())
    return [
        "".join(el.itertext())
        for el in root.iter()
        if isinstance(el.tag, str) and etree.QName(el).localname in ("text", "title")
    ]


# ---- the frontier -----------------------------------------------------------------------------


def test_the_frontier_keeps_the_targets_no_other_beats_on_both():
    fast = point("fast", 0.5, 60)
    good = point("good", 2.0, 90)
    middle = point("middle", 1.0, 75)
    beaten = point("beaten", 1.5, 70)  # middle is faster and better
    front = pareto_frontier([good, beaten, fast, middle])
    assert [p["label"] for p in front] == ["fast", "middle", "good"]


def test_two_equal_targets_are_both_on_the_frontier():
    a, b = point("a", 1.0, 80), point("b", 1.0, 80)
    assert [p["label"] for p in pareto_frontier([a, b])] == ["a", "b"]


def test_of_two_equally_fast_targets_only_the_better_one_is_on_the_frontier():
    assert [p["label"] for p in pareto_frontier([point("a", 1, 70), point("b", 1, 80)])] == ["b"]


def test_one_target_is_its_own_frontier():
    assert [p["label"] for p in pareto_frontier([point("only", 3.0, 10)])] == ["only"]


def test_a_target_with_no_score_or_no_time_is_on_no_frontier():
    front = pareto_frontier([point("unscored", 0.1, None), point("untimed", None, 99)])
    assert front == []
    assert [p["label"] for p in pareto_frontier([point("unscored", 0.1, None), point("s", 5, 1)])]


# ---- the timeline's bars ----------------------------------------------------------------------


def test_a_bar_runs_from_its_send_to_its_last_token_with_queue_and_first_token_apart():
    bars = timeline_bars([(100.5, 200.0, 300.0, 1000.0), (100.0, None, 100.0, 500.0)])
    assert [(b["start"], b["queueEnd"], b["firstEnd"], b["end"]) for b in bars] == [
        (0.0, None, 0.1, 0.5),  # the first sent is the first row, its send is 0
        (0.5, 0.7, 0.8, 1.5),
    ]


def test_the_timeline_keeps_the_first_answers_by_send_time_up_to_its_limit():
    answers = [(float(t), None, 10.0, 20.0) for t in (5, 1, 4, 2, 3)]
    assert [b["start"] for b in timeline_bars(answers, limit=3)] == [0.0, 1.0, 2.0]


def test_answers_without_a_send_time_are_left_out_of_the_timeline():
    assert timeline_bars([(None, None, 10.0, 20.0)]) == []


def test_timeline_bars_of_answers_sent_in_one_instant_with_and_without_a_queue_are_drawn():
    bars = timeline_bars([(5.0, None, 100.0, 400.0), (5.0, 30.0, 100.0, 400.0)])
    assert [b["start"] for b in bars] == [0.0, 0.0]


def test_a_queue_longer_than_the_first_token_wait_ends_at_the_first_token():
    (bar,) = timeline_bars([(0.0, 900.0, 300.0, 1000.0)])
    assert bar["queueEnd"] == bar["firstEnd"] == 0.3


def test_an_answer_without_ttft_is_one_streaming_bar():
    (bar,) = timeline_bars([(0.0, None, None, 250.0)])
    assert (bar["queueEnd"], bar["firstEnd"], bar["end"]) == (None, None, 0.25)


# ---- the bins ---------------------------------------------------------------------------------


def test_even_bins_run_from_zero_in_round_steps():
    assert bin_edges(90, 4) == [0, 25, 50, 75, 100]


def test_values_past_the_last_edge_count_in_the_last_bin():
    assert bin_counts([0, 24.9, 25, 99, 100, 5000, None], [0, 25, 50, 75, 100]) == [2, 1, 0, 3]


def test_log_bins_are_chosen_when_the_slowest_is_twenty_times_the_fastest():
    assert not is_log(choose_edges(50, 900))
    edges = choose_edges(40, 4000)
    assert is_log(edges) and edges[0] <= 40 and edges[-1] >= 4000


def test_log_bins_are_evenly_spaced_per_power_of_ten():
    assert log_bin_edges(10, 100, per_decade=2) == [10.0, 31.6, 100.0]


def test_a_gap_histogram_is_binned_at_each_buckets_value():
    hist = histogram([3.2, 3.7, 12.0, 60.0])
    assert bin_histogram(hist, [0, 10, 20, 50]) == [2, 1, 1]
    assert bin_histogram({bucket(7.0): 5}, [0, 10]) == [5]


def test_a_wrapped_label_keeps_every_character():
    lines = wrap(LONG, 20)
    assert all(len(line) <= 20 for line in lines)
    assert "".join(lines) == LONG


# ---- the charts, drawn ------------------------------------------------------------------------


def test_the_quality_speed_chart_names_every_target_in_full():
    svg = quality_speed_chart([point(LONG, 1.2, 80), point("ollama/qwen3:4b", 0.3, 60)])
    drawn = " ".join(texts(svg))
    assert LONG in drawn and "ollama/qwen3:4b" in drawn
    assert "on the frontier" in drawn


def test_the_quality_speed_chart_fits_a_phone_width():
    svg = quality_speed_chart([point(LONG, 1.2, 80)], narrow=True)
    assert 'viewBox="0 0 480 ' in svg


def test_a_target_without_a_score_is_named_as_not_drawn():
    drawn = " ".join(texts(quality_speed_chart([point("a/m", 1, 50), point("b/m", 2, None)])))
    assert "b/m: not drawn (no score)" in drawn


def test_the_load_chart_draws_the_slo_line_and_names_it():
    svg = load_chart(
        [{"label": LONG, "points": [(1, 200), (4, 650)]}],
        title="p90 TTFT against load",
        unit="ms",
        slo=500,
        slo_label="SLO p90 TTFT",
    )
    drawn = " ".join(texts(svg))
    assert LONG in drawn and "SLO p90 TTFT: 500 ms" in drawn


def test_load_points_take_each_steps_load_and_figure():
    targets = [{"label": "a/m", "steps": [{"load": 4, "v": 9}, {"load": 1, "v": 3}, {"v": 7}]}]
    assert load_points(targets, lambda s: s["v"]) == [{"label": "a/m", "points": [(1, 3), (4, 9)]}]


# ---- a run's charts ---------------------------------------------------------------------------


def timed_run():
    """Two targets, three streamed answers each (send times, queue on the first, token gaps)."""
    run, (t1, t2) = make_run("spc-1", targets=[("llama.cpp", LONG), ("ollama", "qwen3:4b")])
    for target, queue in ((t1, 400.0), (t2, None)):
        for n in range(3):
            add_item(
                run,
                target,
                f"k{n}",
                score=60 + 10 * n if target == t1 else 50,
                time_taken_ms=1000.0 + 100 * n,
                ttft_ms=500.0 + 10 * n,
                sent_ts=1000.0 + n,
                queue_ms=queue,
                chunks=20,
                itl_hist=pack(histogram([20.0, 25.0, 30.0 + n])),
            )
    return run, (t1, t2)


def test_every_speed_chart_of_a_run_is_valid_svg_with_the_targets_full_labels(app):
    run, (t1, _t2) = timed_run()
    for name in speed_chart_names(run, run_speed(run)):
        for narrow in (False, True):
            drawn = " ".join(texts(speed_chart(run, name, narrow)))
            assert f"llama.cpp/{LONG}" in drawn and "ollama/qwen3:4b" in drawn, name
    timeline = " ".join(texts(speed_chart(run, "timeline", target=t1.id)))
    assert f"llama.cpp/{LONG}" in timeline and "waiting in the server's queue" in timeline


def test_a_run_without_load_steps_has_no_load_charts(app):
    run, _ = timed_run()
    assert not has_load_steps(run_speed(run))
    assert speed_chart_names(run, run_speed(run)) == ["quality-speed", "ttft", "itl"]


def test_a_run_with_load_steps_has_the_throughput_and_ttft_charts(app):
    run, _ = timed_run()
    speed = run_speed(run)
    steps = [{"load": 1}, {"load": 2}]
    speed = {**speed, "targets": [{**t, "steps": steps} for t in speed["targets"]]}
    names = speed_chart_names(run, speed)
    assert names[:5] == ["quality-speed", "ttft", "itl", "load-throughput", "load-ttft"]


def test_a_run_without_timing_columns_says_what_each_chart_is_missing(app):
    run, (t,) = make_run("spc-old", targets=[("local", "m1")])
    add_item(run, t, "k1", score=80, ttft_ms=None)
    assert NO_SEND_TIMES in " ".join(texts(speed_chart(run, "timeline", target=t.id)))
    assert "no time to first token recorded" in " ".join(texts(speed_chart(run, "ttft")))
    assert "no token gaps recorded" in " ".join(texts(speed_chart(run, "itl")))


def test_the_results_page_shows_the_speed_charts(client, app):
    run, (t1, t2) = timed_run()
    html = client.get("/runs/spc-1/results").get_data(as_text=True)
    assert "/runs/spc-1/speed-charts/quality-speed.svg" in html
    assert f"/runs/spc-1/speed-charts/timeline.svg?target={t2.id}" in html
    response = client.get(f"/runs/spc-1/speed-charts/timeline.svg?target={t1.id}&size=narrow")
    assert response.status_code == 200 and response.mimetype == "image/svg+xml"
    assert 'viewBox="0 0 480 ' in response.get_data(as_text=True)


def test_an_unknown_speed_chart_or_target_is_404(client, app):
    timed_run()
    assert client.get("/runs/spc-1/speed-charts/nope.svg").status_code == 404
    assert client.get("/runs/spc-1/speed-charts/timeline.svg?target=999").status_code == 404
    assert client.get("/runs/spc-1/speed-charts/timeline.svg").status_code == 404


def test_report_html_inlines_the_speed_charts(app):
    run, _ = timed_run()
    html = report_html(run)
    assert "Score against p90 answer time" in html and "Requests over time" in html
    assert "<script" not in html


@pytest.fixture
def one_slot():
    server = PacedServer(ttft=0.02, tokens=12, itl=0.01, slots=1).start()
    yield server
    server.stop()


def test_on_a_one_slot_server_the_timeline_shows_the_second_answer_queued(app, client, one_slot):
    # Two requests at once on one slot: the second waits for the first, and its bar says so.
    server = one_slot
    items = run_on(app, client, server, tasks=2, max_concurrency=2)
    wait = max(e["slot_wait"] for e in answers_logged(server))
    bars = timeline_bars([(i.sent_ts, i.queue_ms, i.ttft_ms, i.time_taken_ms) for i in items])
    queued = max(b["queueEnd"] - b["start"] for b in bars)
    assert queued >= wait - 0.001
    svg = speed_chart(items[0].run, "timeline", target=items[0].target_id)
    assert "waiting in the server's queue" in " ".join(texts(svg))


def test_the_load_ttft_chart_reads_each_steps_p90_and_the_runs_slo(app):
    run, (t,) = make_run(
        "spc-load",
        targets=[("local", "m1")],
        settings={"slo": {"ttftP90Ms": 400}, "load": {"mode": "concurrency", "steps": [1, 8]}},
    )
    add_item(run, t, "k1", score=80)
    speed = run_speed(run)
    steps = [{"load": 1, "ttftMs": {"p90": 120.0}}, {"load": 8, "ttftMs": {"p90": 900.0}}]
    speed = {**speed, "targets": [{**speed["targets"][0], "steps": steps}]}
    drawn = " ".join(texts(speed_chart(run, "load-ttft", speed=speed)))
    assert "local/m1" in drawn and "SLO p90 TTFT: 400 ms" in drawn and "concurrency" in drawn


def test_a_chart_is_drawn_again_once_an_answer_changed(app):
    run, (t,) = make_run("spc-cache", targets=[("local", "m1")])
    tried = {"last_attempt_at": T0, "updated_at": T0, "sent_ts": 100.0}
    item = add_item(run, t, "k1", score=80, **tried)
    before = speed_chart(run, "timeline", target=t.id)
    Item.update(time_taken_ms=20.0, updated_at=T0 + dt.timedelta(seconds=1)).where(
        Item.id == item.id
    ).execute()
    after = speed_chart(run, "timeline", target=t.id)
    assert after != before
