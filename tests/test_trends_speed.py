"""Trends points carry the speed percentiles and goodput (issue 29), from run_speed of the runs
shown."""

import datetime as dt

import pytest

from app.db.models import Item
from app.schedules.digest import digest_finished
from app.schedules.trends import trends
from app.schedules.trends_view import TABLE_POINTS
from tests.over_time import T0
from tests.over_time import finished_run

DAY = dt.timedelta(days=1)
SLO = {"slo": {"ttftP90Ms": 150}}


def points(data, name="local/m1"):
    return next(s for s in data["series"] if s["target"] == name)["points"]


@pytest.fixture
def two_runs(app):
    """r1: TTFT 100 ms, no SLO; r2: TTFT 200 ms with an SLO its answers miss."""
    finished_run("r1", {"local/m1": [60, 80]}, ttft=100)
    finished_run("r2", {"local/m1": [70, 90]}, finished_at=T0 + DAY, ttft=200, settings=SLO)
    digest_finished(T0 + 2 * DAY)


def test_trends_points_carry_the_speed_figures(two_runs):
    first, second = points(trends())
    assert (first["ttftP50Ms"], first["ttftP90Ms"]) == (100.0, 100.0)
    assert first["e2eP90Ms"] == 1000.0
    assert second["ttftP50Ms"] == 200.0
    assert "outputTokensPerSecond" in first  # None here: these answers have no send times


def test_goodput_is_given_only_where_the_run_has_an_slo(app):
    # r1 has no SLO; r2's SLO (p90 TTFT <= 150 ms) holds for its 10 answers sent 0.5 s apart
    # over a 5.5 s window (the last one ends 1 s after it is sent): 10 / 5.5 answers/s.
    finished_run("r1", {"local/m1": [60] * 10}, ttft=100)
    run = finished_run("r2", {"local/m1": [70] * 10}, finished_at=T0 + DAY, settings=SLO)
    for n, item in enumerate(Item.select().where(Item.run == run).order_by(Item.task_key)):
        item.sent_ts, item.tokens_generated = 1000.0 + n / 2, 21
        item.save()
    digest_finished(T0 + 2 * DAY)
    first, second = points(trends())
    assert first["goodput"] is None
    assert second["goodput"] == pytest.approx(10 / 5.5)


def test_only_the_latest_points_shown_get_speed_figures(two_runs):
    first, second = points(trends(speed_points=1))
    assert first["ttftP50Ms"] is None and second["ttftP50Ms"] == 200.0


def test_the_api_and_page_carry_the_speed_figures(two_runs, client):
    body = client.get("/api/trends").get_json()
    assert points(body)[0]["ttftP90Ms"] == 100.0
    page = client.get("/trends").get_data(as_text=True)
    assert "TTFT p90" in page and "e2e p90" in page and TABLE_POINTS >= 2


def test_a_category_point_carries_that_categorys_speed_without_goodput(app):
    # Tasks alternate math / code; one math answer is slow: math's p90 is its own, not the
    # target's (100, 100, 300, 100 ms: 240).
    scores = {"local/m1": [60, 80, 70, 90]}
    run = finished_run("r1", scores, settings=SLO, category_of=lambda t: ("math", "code")[t % 2])
    Item.update(ttft_ms=300.0).where((Item.run == run) & (Item.task_key == "t0002")).execute()
    digest_finished(T0 + DAY)
    (point,) = points(trends({"category": "math"}))
    assert point["ttftP90Ms"] == pytest.approx(280.0)  # 100 and 300 ms: p90 by interpolation
    assert point["goodput"] is None
