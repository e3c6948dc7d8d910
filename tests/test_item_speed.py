"""One answer's speed as read from its Item (runs/item_speed.py), and the same figures in
results.jsonl and results.csv after their older keys."""

import csv
import datetime as dt
import io
import random

import pytest
from bs4 import BeautifulSoup

from app import latency
from app.clock import isoformat
from app.exports.item_results import CSV_COLUMNS
from app.exports.item_results import item_records
from app.exports.item_results import results_csv
from app.runs.item_speed import ITL_FIGURES
from app.runs.item_speed import item_speed
from app.runs.item_speed import itl
from app.runs.item_speed import sent_at
from app.runs.item_speed import tpot_ms
from tests.factories import add_item
from tests.factories import make_run

STREAMED = {
    "time_taken_ms": 1100.0,
    "ttft_ms": 100.0,
    "first_answer_ms": 300.0,
    "last_token_ms": 1090.0,
    "sent_ts": 1735787045.25,
    "chunks": 51,
    "tokens_generated": 51,
    "tokens_per_second": 50.0,
    "tps_source": "llamacpp.timings",
    "reasoning_tokens": 10,
    "itl_hist": latency.pack(latency.histogram([20.0] * 50)),
    "queue_ms": 12.5,
}


def test_tpot_is_the_time_after_the_first_token_over_the_tokens_after_it():
    assert tpot_ms(1100.0, 100.0, 51) == 20.0


def test_tpot_needs_two_tokens_and_a_first_token_time():
    assert tpot_ms(1100.0, 100.0, 1) is None
    assert tpot_ms(1100.0, None, 51) is None


def test_a_streamed_answer_reads_its_itl_from_the_histogram():
    speed = item_speed(STREAMED)
    assert speed["itl"] == {"mean": 20.0, "p50": 20.0, "p90": 20.0, "p99": 20.0, "max": 20.0}
    assert speed["itl_measurable"] is True
    assert speed["sent_at"] == "2025-01-02T03:04:05.250Z"


def test_a_one_chunk_answer_has_no_itl_and_says_so():
    speed = item_speed({**STREAMED, "chunks": 1, "itl_hist": None})
    assert speed["itl"] is None and speed["itl_measurable"] is False


def test_an_answer_with_no_stream_recorded_leaves_itl_measurable_open():
    assert item_speed({"time_taken_ms": 900.0})["itl_measurable"] is None


def test_each_figure_says_where_it_came_from():
    assert item_speed(STREAMED)["sources"] == {
        "ttft": "stream",
        "tpot": "stream",
        "tokensPerSecond": "server timings",
        "itl": "stream",
        "queue": "estimate",
    }
    guessed = {**STREAMED, "tokens_estimated": True, "tps_source": "stream.estimate"}
    sources = item_speed(guessed)["sources"]
    assert (sources["tpot"], sources["tokensPerSecond"]) == ("estimate", "estimate")


TIMING_KEYS = [
    "firstAnswerMs",
    "lastTokenMs",
    "sentAt",
    "chunks",
    "reasoningTokens",
    "itl",
    "itlMeasurable",
    "tpotMs",
    "queueMs",
]


def test_results_jsonl_carries_the_timing_after_the_older_metrics(app):
    run, (target,) = make_run()
    add_item(run, target, "t1", score=80, **STREAMED)
    (record,) = item_records(run)
    assert list(record["metrics"])[-len(TIMING_KEYS) :] == TIMING_KEYS
    assert list(record["metrics"])[:6] == [
        "timeMs",
        "ttftMs",
        "promptTokens",
        "tokensGenerated",
        "tokensPerSecond",
        "tpsSource",
    ]
    assert record["metrics"]["tpotMs"] == 20.0 and record["metrics"]["queueMs"] == 12.5


def test_results_csv_carries_the_timing_in_its_last_columns(app):
    run, (target,) = make_run()
    add_item(run, target, "t1", score=80, **STREAMED)
    add_item(run, target, "t2", score=80, **{**STREAMED, "chunks": 1, "itl_hist": None})
    (streamed, one_chunk) = csv.DictReader(io.StringIO("".join(results_csv(run))))
    assert CSV_COLUMNS.index("first_answer_ms") == CSV_COLUMNS.index("tool_calls") + 1
    assert CSV_COLUMNS[-2:] == ("queue_ms", "judge_score")
    assert (streamed["itl_p50_ms"], streamed["itl_measurable"]) == ("20.0", "true")
    assert (streamed["sent_at"], streamed["tpot_ms"]) == ("2025-01-02T03:04:05.250Z", "20.0")
    assert (one_chunk["itl_p50_ms"], one_chunk["itl_measurable"]) == ("", "false")


def _speed_block(client, item):
    page = BeautifulSoup(client.get(f"/runs/run-1/items/{item.id}").data, "html.parser")
    return page.select_one(f"#item-speed-{item.id}")


def test_the_item_page_shows_the_answers_speed(app, client):
    run, (target,) = make_run()
    item = add_item(run, target, "t1", score=80, **STREAMED)
    text = _speed_block(client, item).get_text(" ", strip=True)
    assert "TPOT 20.0 ms (stream)" in text
    assert "mean 20.0 · p50 20.0 · p90 20.0 · p99 20.0 · max 20.0 ms" in text
    assert "Queue time 12 ms (estimate)" in text
    assert "Reasoning tokens 10" in text


def test_the_item_page_says_itl_is_not_measurable_for_a_one_chunk_answer(app, client):
    run, (target,) = make_run()
    item = add_item(run, target, "t1", score=80, **{**STREAMED, "chunks": 1, "itl_hist": None})
    itl = _speed_block(client, item).select_one(f"#item-itl-{item.id}")
    assert itl.get_text(" ", strip=True) == "ITL not measurable (one chunk)"


@pytest.mark.parametrize("seed", range(6))
def test_an_answers_itl_is_the_histograms_own_summary(seed):
    rng = random.Random(seed)
    itl_ms = rng.uniform(2.0, 90.0)
    # Wide and stalled gaps too, so some buckets and counts take two-byte varints.
    gaps = [max(0.0, rng.gauss(itl_ms, itl_ms * rng.choice((0.05, 0.5)))) for _ in range(300)]
    gaps += [rng.uniform(150.0, 3000.0) for _ in range(seed)]
    packed = latency.pack(latency.histogram(gaps))
    expected = latency.histogram_summary(latency.unpack(packed))
    assert itl(packed) == {name: round(expected[name], 2) for name in ITL_FIGURES}


@pytest.mark.parametrize("sent_ts", [1735787045.25, 1764000000.123, 1764000000.9999, 0.0])
def test_the_sent_time_reads_as_the_clocks_iso_text(sent_ts):
    as_datetime = dt.datetime.fromtimestamp(sent_ts, dt.UTC).replace(tzinfo=None)
    assert sent_at(sent_ts) == isoformat(as_datetime)
