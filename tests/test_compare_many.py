"""Compare from the run history: check two or more runs, a baseline against several, the
per-model chart of score changes, the newer run as B, and Compare in the navigation."""

import datetime as dt

import pytest
from bs4 import BeautifulSoup

from app.results.compare import run_choices
from app.results.compare_many import newer_default
from tests.factories import T0
from tests.factories import add_item
from tests.factories import make_run


def soup(response):
    return BeautifulSoup(response.get_data(as_text=True), "html.parser")


@pytest.fixture
def history(app):
    """Three runs a day apart of the same two models: m1 drops by 10 then by 20."""
    for day, drop in enumerate((0, 10, 20)):
        created = T0 + dt.timedelta(days=day)
        run, (m1, m2) = make_run(
            f"day{day}",
            targets=[("local", "m1"), ("local", "m2")],
            created_at=created,
            started_at=created,
            finished_at=created + dt.timedelta(minutes=5),
        )
        for n in range(12):
            add_item(run, m1, f"t{n}", score=80 - drop + n % 3)
            add_item(run, m2, f"t{n}", score=60 + n % 3)


def test_the_navigation_has_compare(client):
    nav = soup(client.get("/")).select_one("nav.topnav")
    assert nav.find("a", string="Compare")["href"] == "/compare"


def test_the_run_history_has_a_checkbox_per_run_for_compare(client, history):
    page = soup(client.get("/runs/"))
    form = page.select_one("form#compare-pick")
    assert form["action"] == "/compare" and form["method"] == "get"
    boxes = page.select("input[type=checkbox][name=run][form=compare-pick]")
    assert sorted(b["value"] for b in boxes) == ["day0", "day1", "day2"]


def test_two_checked_runs_compare_the_older_as_a_and_the_newer_as_b(client, history):
    response = client.get("/compare?run=day2&run=day0")
    assert response.status_code == 302
    assert response.location.endswith("/compare?a=day0&b=day2")


def test_one_checked_run_asks_for_another(client, history):
    page = soup(client.get("/compare?run=day1"))
    assert "Check two or more runs" in page.select_one(".flash--info").get_text()


def test_three_checked_runs_compare_the_oldest_with_each_newer_one(client, history):
    page = soup(client.get("/compare?run=day1&run=day2&run=day0"))
    assert "Baseline day0 against 2 runs" in page.select_one("#cmp-many-h").get_text()
    heads = [th.get_text(strip=True) for th in page.select("table.cmp-many thead th")][1:]
    assert heads == ["day1", "day2"]
    m1 = next(tr for tr in page.select("table.cmp-many tbody tr") if tr.th.get_text() == "local/m1")
    cells = [td.select_one(".rs-delta").get_text() for td in m1.select("td")]
    assert cells == ["-10.0", "-20.0"]


def test_another_baseline_can_be_picked_among_the_checked_runs(client, history):
    page = soup(client.get("/compare?run=day0&run=day1&run=day2&base=day2"))
    assert page.select_one("#cmp-base option[selected]")["value"] == "day2"
    heads = [th.get_text(strip=True) for th in page.select("table.cmp-many thead th")][1:]
    assert heads == ["day0", "day1"]


def test_a_checked_run_that_does_not_exist_is_404_naming_it(client, history):
    response = client.get("/compare?run=day0&run=gone")
    assert response.status_code == 404 and "gone" in response.get_data(as_text=True)


def test_the_chart_draws_one_bar_series_per_compared_run(client, history):
    response = client.get("/compare/chart.svg?base=day0&run=day1&run=day2")
    assert response.status_code == 200 and response.mimetype == "image/svg+xml"
    svg = response.get_data(as_text=True)
    assert "Score change vs the baseline" in svg
    assert "day1" in svg and "day2" in svg and ">local/m1<" in svg  # each target by its one name


def test_the_pair_view_shows_the_chart_of_changes(client, history):
    page = soup(client.get("/compare?a=day0&b=day1"))
    assert page.select_one(".cmp-chart img")["src"] == "/compare/chart.svg?base=day0&run=day1"


def test_with_a_picked_b_is_the_next_newer_run_by_default(client, history):
    page = soup(client.get("/compare?a=day0"))
    assert page.select_one("#cmp-b option[selected]")["value"] == "day2"


def test_newer_default_is_the_newest_run_after_a_else_the_newest_other(app, history):
    choices = run_choices()
    assert newer_default("day1", choices) == "day2"
    assert newer_default("day2", choices) == "day1"


def test_b_older_than_a_says_so(client, history):
    page = soup(client.get("/compare?a=day2&b=day0"))
    assert "older than A" in page.select_one(".flash--info").get_text()
