"""report.html for a person: viewed in the browser beside its download, with readable times in
UTC that say so (whatever the server's zone) and the state in words (no phase names)."""

import datetime as dt
import re
import time

import pytest
from bs4 import BeautifulSoup

from app.clock import local_text
from app.db.models import CONTROL_RUNNING
from app.db.models import PENDING
from app.exports.report import report_html
from tests.factories import add_item
from tests.factories import make_run


def soup(text):
    return BeautifulSoup(text, "html.parser")


@pytest.fixture
def run(app):
    run, (target,) = make_run("viewed")
    add_item(run, target, "t1", score=80, answer="4")
    return run


def test_the_results_page_links_to_view_the_report_beside_its_download(client, run):
    page = soup(client.get("/runs/viewed/results").get_data(as_text=True))
    downloads = page.select_one("nav.rs-exports")
    view = next(a for a in downloads.select("a") if a.get_text().startswith("View report"))
    assert view["href"] == "/runs/viewed/view/report.html" and not view.has_attr("download")


def test_the_viewed_report_is_shown_inline_under_the_documents_policy(client, run):
    response = client.get("/runs/viewed/view/report.html")
    assert response.status_code == 200 and response.mimetype == "text/html"
    assert response.headers["Content-Disposition"].startswith("inline;")
    assert "script-src" not in response.headers["Content-Security-Policy"]
    assert soup(response.get_data(as_text=True)).h1.get_text() == "Run viewed"


def test_a_finished_run_reads_finished_without_its_phase(run):
    state = soup(report_html(run)).select_one("#run-state").parent.get_text()
    assert state.strip() == "finished"


def test_a_running_run_says_what_it_is_doing(app):
    run, _ = make_run("busy", status=PENDING, control=CONTROL_RUNNING, phase="BENCHMARKING")
    assert soup(report_html(run)).select_one("#run-state").get_text() == "running, answering tasks"


@pytest.fixture
def berlin(monkeypatch):
    """The server's clock in a zone other than UTC."""
    monkeypatch.setenv("TZ", "Europe/Berlin")
    time.tzset()
    yield
    monkeypatch.delenv("TZ")
    time.tzset()


def test_report_times_are_utc_and_say_so_whatever_the_servers_zone(run, berlin):
    page = soup(report_html(run))
    for name, value in (("Created", run.created_at), ("Finished", run.finished_at)):
        stamp = page.find("dt", string=name).find_next("dd").time
        assert stamp.get_text() == value.strftime("%Y-%m-%d %H:%M:%S UTC")
        assert stamp["datetime"] == value.isoformat(timespec="milliseconds") + "Z"


def test_the_reports_generated_time_is_utc_too(run, berlin):
    stamp = soup(report_html(run)).find("dt", string="Report generated").find_next("dd").time
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC", stamp.get_text())


def test_the_results_page_states_its_times_in_utc_with_the_iso_value_kept(client, run, berlin):
    header = soup(client.get("/runs/viewed/results").get_data(as_text=True)).select_one(".rs-meta")
    created, finished = header.select("time")
    assert created.get_text() == run.created_at.strftime("%Y-%m-%d %H:%M UTC")
    assert finished.get_text() == run.finished_at.strftime("%Y-%m-%d %H:%M UTC")
    assert created["datetime"].endswith("Z") and finished["datetime"].endswith("Z")


def test_local_text_names_the_zone_of_this_machine(monkeypatch):
    monkeypatch.setenv("TZ", "Europe/Berlin")
    time.tzset()
    try:
        text = local_text(dt.datetime(2026, 11, 26, 9, 15, 3))
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
    assert text == "26 Nov 2026, 10:15:03 CET"


def test_the_ratings_and_cost_page_shows_no_unit_beside_a_missing_latency(client, app):
    run, (target,) = make_run("unanswered")
    add_item(run, target, "t1", status=PENDING, score=None)
    page = soup(client.get("/runs/unanswered/report").get_data(as_text=True))
    latency = page.find("dt", string="avg latency").find_next("dd")
    assert "ms" not in latency.get_text() and "–" in latency.get_text()
