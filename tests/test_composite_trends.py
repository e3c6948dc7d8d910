"""The composite score over time: Trends' points and chart, the baseline's line, the triggers in
the tooltip, and the current vs previous vs baseline table."""

import datetime as dt

import pytest
from bs4 import BeautifulSoup

from app.db.models import Collection
from app.db.models import Run
from app.schedules.baselines import collection_summary
from app.schedules.baselines import pin_baseline
from app.schedules.digest import digest_finished
from app.schedules.trends import trends
from tests.over_time import T0
from tests.over_time import finished_run

DAY = dt.timedelta(days=1)


@pytest.fixture
def runs(app):
    # Every answer takes 1 s. "base": 50; "r1": 70; "r2": 90 with a 500 ms target nobody meets.
    finished_run("base", {"local/m1": [40, 60]}, finished_at=T0 - DAY)
    finished_run("r1", {"local/m1": [60, 80]})
    finished_run(
        "r2", {"local/m1": [90, 90]}, finished_at=T0 + DAY, settings={"latencyTargetMs": 500}
    )
    Run.update(triggered_by="scheduled", trigger_note="nightly").where(Run.run_id == "r2").execute()
    digest_finished(T0 + 2 * DAY)
    collection = Collection.get(Collection.name == "bench")
    pin_baseline(collection.id, "base")
    return collection


def points(data):
    return {p["runId"]: p for p in data["series"][0]["points"]}


def test_trend_point_has_the_composite_and_its_formula(runs):
    r1 = points(trends())["r1"]
    assert r1["composite"] == 79.0  # 0.70 × 70 + 15 + 15
    assert r1["compositeFormula"].endswith("= 79.0")


def test_trend_point_of_a_run_whose_latency_target_nobody_met(runs):
    assert points(trends())["r2"]["composite"] == 78.0  # 0.70 × 90 + 15 + 0


def test_trend_point_says_how_its_run_was_started(runs):
    r2 = points(trends())["r2"]
    assert (r2["triggeredBy"], r2["triggerNote"]) == ("scheduled", "nightly")


def test_collection_summary_compares_the_composite(runs):
    table = next(t for t in collection_summary(runs.id)["comparison"] if t["metric"] == "composite")
    everyone = table["rows"][0]
    assert (everyone["baseline"], everyone["previous"], everyone["current"]) == (65.0, 79.0, 78.0)
    assert everyone["verdict"] == "worse"
    assert everyone["formula"].endswith("= 78.0")


def test_trends_page_draws_the_composite_with_the_baseline_line(runs, client):
    page = BeautifulSoup(client.get(f"/trends?collection={runs.id}").text, "html.parser")
    chart = page.select_one("#chart-composite")
    assert "Composite score over time" in chart.get_text()
    assert "baseline base" in chart.get_text()
    assert "started by scheduled: nightly" in str(chart)
    assert page.select_one("#composite-rule").get_text().startswith("composite = 0.70 × quality")
