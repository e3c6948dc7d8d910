"""The composite score where people read it: the results and live run headers, with the formula."""

import pytest
from bs4 import BeautifulSoup

from app.catalog.providers import create_provider
from app.db.models import FAILED
from tests.conftest import make_app
from tests.factories import add_item
from tests.factories import make_run


def soup(response):
    assert response.status_code == 200
    return BeautifulSoup(response.get_data(as_text=True), "html.parser")


@pytest.fixture
def run(app):
    run, (t1, t2) = make_run("p-1", targets=[("local", "m1"), ("remote", "m2")])
    add_item(run, t1, "a", score=82, time_taken_ms=10_000.0)
    add_item(run, t2, "a", status=FAILED, error_stage="answer", error_msg="refused")
    return run


@pytest.mark.parametrize("path", ["/runs/p-1/results", "/runs/p-1"])
def test_header_shows_each_targets_composite_with_its_formula(client, run, path):
    scores = soup(client.get(path)).select("#composite-scores li")
    assert len(scores) == 2
    first = scores[0].select_one("details.composite")
    assert first.summary.get_text(" ", strip=True) == "Composite score · local/m1 87.4"
    assert first.select_one(".composite__formula").get_text() == (
        "composite = 0.70 × quality 82.0 + time 15.0 (median 10.0 s) "
        "+ on-target 15.0 (no latency target) = 87.4"
    )


@pytest.mark.parametrize("path", ["/runs/p-1/results", "/runs/p-1"])
def test_header_shows_a_dash_for_a_target_without_a_composite(client, run, path):
    second = soup(client.get(path)).select("#composite-scores li")[1]
    text = second.select_one(".composite--none").get_text(" ", strip=True)
    assert text == "Composite score · remote/m2 —"


def test_header_follows_the_configured_weights(tmp_path):
    app = make_app(tmp_path, COMPOSITE_QUALITY_WEIGHT=0.5)
    with app.app_context():
        run, (t1,) = make_run("p-2")
        add_item(run, t1, "a", score=80, time_taken_ms=1000.0)
        page = soup(app.test_client().get("/runs/p-2/results"))
    # 0.5 × 80 + 25 + 25
    assert page.select_one("#composite-scores summary strong").get_text() == "90.0"


def test_settings_page_shows_the_formula_and_its_values(client):
    page = soup(client.get("/settings/composite"))
    assert page.select_one("#composite-rule").get_text().startswith("composite = 0.70 × quality")
    rows = [r.get_text(" ", strip=True) for r in page.select("#composite-settings tbody tr")]
    assert rows[0].startswith("Weight of quality 0.7 LLMBENCH_COMPOSITE_QUALITY_WEIGHT")
    assert page.select_one('.subnav a[aria-current="page"]').get_text() == "Composite score"


def test_new_run_form_offers_the_latency_target(client, app):
    create_provider({"name": "local", "type": "OPENAI", "base_url": "http://127.0.0.1:9"})
    page = soup(client.get("/"))
    assert page.select_one("input#latencyTargetMs[name=latencyTargetMs]") is not None
