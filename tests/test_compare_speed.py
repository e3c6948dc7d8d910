"""Compare carries speed (issue 29): each shared target's percentiles, output tok/s and goodput
A -> B, called faster or slower only when the runs' p50 CIs do not overlap."""

import pytest

from app.cli.results import _print
from app.results.compare import compare_runs
from app.results.compare_speed import FASTER
from app.results.compare_speed import NO_CLEAR_CHANGE
from app.results.compare_speed import SLOWER
from app.results.compare_speed import p50_change
from tests.factories import add_item
from tests.factories import make_run

SLO = {"slo": {"ttftP90Ms": 5000}}


def timed_run(run_id, ttft, e2e, *, settings=None, tokens=21):
    """A run whose target local/m1 answers 20 tasks: TTFT `ttft` + n ms, end-to-end `e2e` + n ms,
    one send every half second."""
    run, (target,) = make_run(run_id, settings=settings or {})
    for n in range(20):
        add_item(
            run,
            target,
            f"t{n:02d}",
            score=80,
            time_taken_ms=e2e + n,
            ttft_ms=ttft + n,
            first_answer_ms=ttft + n,
            tokens_generated=tokens,
            tokens_per_second=1000.0 * (tokens - 1) / (e2e - ttft),
            sent_ts=1000.0 + n / 2,
            chunks=tokens,
        )
    return run


def untimed_run(run_id):
    """A run from before the timing columns: no TTFT, no send times."""
    run, (target,) = make_run(run_id)
    for n in range(20):
        add_item(run, target, f"t{n:02d}", score=80, ttft_ms=None)
    return run


def speed_of(result):
    return result["models"][0]["speed"]


def figure(speed, key):
    return next(f for f in speed["figures"] if f["key"] == key)


def test_compare_lists_each_targets_speed_in_both_runs_with_the_change(app):
    speed = speed_of(compare_runs(timed_run("a", 100, 1000), timed_run("b", 300, 1500)))
    keys = [f["key"] for f in speed["figures"]]
    assert keys == ["ttftP50Ms", "ttftP90Ms", "itlP50Ms", "e2eP90Ms", "outputTokensPerSecond"]
    ttft = figure(speed, "ttftP50Ms")
    assert (ttft["a"], ttft["b"], ttft["change"]) == (
        pytest.approx(109.5),
        pytest.approx(309.5),
        pytest.approx(200),
    )
    e2e = figure(speed, "e2eP90Ms")
    assert e2e["change"] == pytest.approx(500)
    assert figure(speed, "outputTokensPerSecond")["a"] > figure(speed, "outputTokensPerSecond")["b"]


def test_non_overlapping_p50_cis_are_called_slower_or_faster(app):
    slow, fast = timed_run("a", 100, 1000), timed_run("b", 300, 1500)
    assert speed_of(compare_runs(slow, fast))["verdict"] == SLOWER
    assert speed_of(compare_runs(fast, slow))["verdict"] == FASTER
    assert figure(speed_of(compare_runs(fast, slow)), "ttftP50Ms")["verdict"] == FASTER


def test_overlapping_p50_cis_give_no_clear_change(app):
    speed = speed_of(compare_runs(timed_run("a", 100, 1000), timed_run("b", 102, 1002)))
    assert speed["verdict"] == NO_CLEAR_CHANGE
    assert figure(speed, "ttftP50Ms")["verdict"] == NO_CLEAR_CHANGE
    assert figure(speed, "ttftP90Ms")["verdict"] is None  # a p90 has no CI to judge by


def test_goodput_joins_when_both_runs_have_an_slo(app):
    both = compare_runs(
        timed_run("a", 100, 1000, settings=SLO), timed_run("b", 300, 1500, settings=SLO)
    )
    goodput = figure(speed_of(both), "goodput")
    assert goodput["a"] > 0 and goodput["b"] > 0
    one = compare_runs(timed_run("c", 100, 1000, settings=SLO), timed_run("d", 300, 1500))
    assert "goodput" not in [f["key"] for f in speed_of(one)["figures"]]


def test_a_run_without_timing_columns_compares_without_speed(app):
    result = compare_runs(untimed_run("old"), timed_run("new", 100, 1000))
    assert result["models"][0]["verdict"]  # the scores still compare
    speed = speed_of(result)
    assert speed["figures"] == [] and speed["verdict"] is None
    assert speed["why"] == "no speed figures in A"


def test_the_compare_page_shows_the_speed_table(client, app):
    timed_run("a", 100, 1000), timed_run("b", 300, 1500)
    untimed_run("old")
    page = client.get("/compare?a=a&b=b").get_data(as_text=True)
    assert "Speed A → B" in page and "slower" in page and "p50 TTFT (ms)" in page
    page = client.get("/compare?a=old&b=b").get_data(as_text=True)
    assert "no speed figures in A" in page


def test_the_compare_api_carries_speed_per_model(client, app):
    timed_run("a", 100, 1000), timed_run("b", 300, 1500)
    body = client.get("/api/compare?a=a&b=b").get_json()
    speed = body["models"][0]["speed"]
    assert speed["verdict"] == SLOWER
    assert figure(speed, "ttftP50Ms")["change"] == pytest.approx(200)


def test_diff_prints_one_speed_line_per_target(app, capsys):
    result = compare_runs(timed_run("a", 100, 1000), timed_run("b", 300, 1500))
    _print(result, "a", "b", limit=5)
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if line.startswith("  local/m1: ")]
    assert len(lines) == 1
    assert "ttft p50 110->310" in lines[0] and lines[0].endswith("; slower")


def _p50(value, half_width=0.1):
    return {"p50": value, "p50Ci": [value - half_width, value + half_width]}


def test_a_1_ms_shift_with_tight_cis_is_no_clear_change():
    # A huge run: CIs a tenth of a millisecond wide, so they do not overlap; 1 ms of 1000 is
    # no change anyone would notice.
    assert p50_change(_p50(1000.0), _p50(1001.0)) == NO_CLEAR_CHANGE


def test_a_move_past_5_percent_and_2_ms_with_separate_cis_is_called():
    assert p50_change(_p50(1000.0), _p50(1100.0)) == SLOWER
    assert p50_change(_p50(1100.0), _p50(1000.0)) == FASTER


def test_a_large_share_of_a_tiny_time_is_not_enough_without_2_ms():
    # 10 ms -> 11.5 ms is 15 % but 1.5 ms.
    assert p50_change(_p50(10.0), _p50(11.5)) == NO_CLEAR_CHANGE


def test_the_speed_rule_is_stated_on_the_compare_page(client, app):
    timed_run("a", 100, 1000), timed_run("b", 300, 1500)
    page = client.get("/compare?a=a&b=b").get_data(as_text=True)
    assert "at least 5% and 2 ms" in page
