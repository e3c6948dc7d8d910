"""A run's status tells the truth: how a finished run ended, one progress figure everywhere, and
failed items counted apart from answered ones (live view, history, API, CLI, report)."""

import datetime as dt

import pytest
from bs4 import BeautifulSoup
from click.testing import CliRunner

from app.cli import main
from app.db.connection import database
from app.db.models import CONTROL_PAUSED
from app.db.models import FAILED
from app.db.models import NEW
from app.db.models import PENDING
from app.db.models import WAITING_FOR_JUDGE
from app.runs.progress import progress
from app.runs.state import state_label
from tests.conftest import TEST_KEY_B64
from tests.factories import add_item
from tests.factories import make_run


def failed(run, target, key, stage="answer"):
    return add_item(run, target, key, status=FAILED, error_stage=stage, error_msg="boom")


@pytest.mark.parametrize(
    ("state", "completed", "failures", "label", "tone"),
    [
        ("finished", 5, 0, "finished", "finished"),
        ("finished", 5, 3, "finished with 3 failed", "warn"),
        ("finished", 0, 128, "finished, nothing completed", "error"),
        ("paused", 0, 3, "paused", "paused"),
    ],
)
def test_the_state_label_says_how_a_run_ended(state, completed, failures, label, tone):
    assert state_label(state, completed, failures) == (label, tone)


def finished_with_failures():
    run, (t,) = make_run("mixed")
    add_item(run, t, "t1", score=80.0)
    add_item(run, t, "t2", score=60.0)
    failed(run, t, "t3")
    return run


def nothing_completed():
    run, (t,) = make_run("allfailed")
    for n in range(4):
        failed(run, t, f"t{n}")
    return run


def badge(html):
    return BeautifulSoup(html, "html.parser").find(id="run-state")


def test_the_live_view_shows_a_finished_run_with_failures_in_the_warning_colour(app, client):
    finished_with_failures()
    page = client.get("/runs/mixed").text
    assert badge(page).get_text() == "finished with 1 failed"
    assert "badge--warn" in badge(page)["class"]
    assert "Finished with 1 failed: 2 completed, 1 failed." in page


def test_the_live_view_shows_nothing_completed_in_the_error_colour(app, client):
    nothing_completed()
    page = client.get("/runs/allfailed").text
    assert badge(page).get_text() == "finished, nothing completed"
    assert "badge--error" in badge(page)["class"]
    soup = BeautifulSoup(page, "html.parser")
    # Failed answers are not answered: 0 of 4, with the 4 failures apart.
    assert soup.find(id="answered-count").get_text(" ", strip=True) == "0 / 4 answered · 4 failed"


def test_history_and_the_dashboard_say_how_runs_ended(app, client):
    finished_with_failures()
    nothing_completed()
    for url in ("/runs/", "/"):
        text = BeautifulSoup(client.get(url).text, "html.parser").get_text(" ")
        assert "finished with 1 failed" in text and "finished, nothing completed" in text, url


def test_the_api_state_label_and_tone(app, client):
    finished_with_failures()
    data = client.get("/api/runs/mixed").get_json()
    assert data["state"] == "finished"  # the state stays a filterable word
    assert (data["stateLabel"], data["stateTone"]) == ("finished with 1 failed", "warn")


def test_the_report_and_summary_say_how_the_run_ended(app, client):
    nothing_completed()
    assert "finished, nothing completed" in client.get("/runs/allfailed/report.html").text
    summary = client.get("/runs/allfailed/summary.json").get_json()
    assert summary["stateLabel"] == "finished, nothing completed"


def test_the_cli_says_how_the_run_ended(app, tmp_path):
    nothing_completed()
    database.close()
    env = {"LLMBENCH_DB": app.config["DB"], "LLMBENCH_MASTER_KEY_BASE64": TEST_KEY_B64}
    result = CliRunner().invoke(main, ["report", "allfailed", "--out", str(tmp_path)], env=env)
    assert result.exit_code == 0
    summary = (tmp_path / "summary.json").read_text()
    assert '"stateLabel": "finished, nothing completed"' in summary


def test_one_progress_figure_in_the_live_view_the_api_and_the_continue_list(app, client):
    # 20 items: 9 answered (4 judged), 2 answers failed, 9 not asked yet; paused.
    run, (t,) = make_run("half", status=PENDING, control=CONTROL_PAUSED, control_reason="x")
    for n in range(4):
        add_item(run, t, f"c{n}", score=50.0)
    for n in range(5):
        add_item(run, t, f"w{n}", status=WAITING_FOR_JUDGE, answer="a")
    failed(run, t, "f0")
    failed(run, t, "f1")
    for n in range(9):
        add_item(run, t, f"n{n}", status=NEW)
    api = client.get("/api/runs/half").get_json()["progress"]
    live = progress(run)
    assert live["overall_pct"] == round(100 * api, 1) == 42.5  # (2 * 6 + 5) / 40
    page = BeautifulSoup(client.get("/runs/half").text, "html.parser")
    # The live view says it in counts, the same as its two phase lines.
    status = page.select_one(".run-progress__status").get_text(" ", strip=True)
    assert status == "Paused while judging: 9 of 20 answered, 4 judged.", status
    assert page.find(id="answered-count").get_text(" ", strip=True) == (
        "9 / 20 answered · 2 failed"
    )
    dashboard = BeautifulSoup(client.get("/").text, "html.parser")
    meter = dashboard.find(attrs={"aria-label": "Progress of half"})
    assert meter["aria-valuenow"] == "42.5"
    assert "9 / 20 answered · 2 failed" in dashboard.get_text(" ", strip=True)


def test_a_full_bar_of_failures_is_drawn_as_failures(app, client):
    nothing_completed()
    page = BeautifulSoup(client.get("/runs/allfailed").text, "html.parser")
    bench = page.find(attrs={"aria-label": "Benchmarking"})
    bars = bench.find_all("span")
    assert "meter__bar--0" in bars[0]["class"]  # nothing answered
    assert "meter__bar--failed" in bars[1]["class"] and "meter__bar--100" in bars[1]["class"]


def test_the_live_view_shows_the_item_in_flight_and_how_long_it_has_run(app, client):
    from app.clock import utcnow

    now = utcnow()
    run, (t,) = make_run("busy", status=PENDING, phase="BENCHMARKING", targets=(("p", "slow-7b"),))
    add_item(
        run,
        t,
        "q1",
        status=NEW,
        last_attempt_at=now - dt.timedelta(seconds=135),
        claimed_until=now + dt.timedelta(minutes=5),
    )
    add_item(run, t, "q2", status=NEW)
    (flight,) = progress(run, now=now)["in_flight"]
    assert (flight["task"], flight["target"], flight["step"]) == ("q1", "slow-7b", "answering")
    assert flight["seconds"] == pytest.approx(135, abs=1)
    text = BeautifulSoup(client.get("/runs/busy").text, "html.parser").select_one("#in-flight")
    assert "q1 on slow-7b · for 2m 1" in text.get_text(" ", strip=True).replace("  ", " ")


def test_the_recent_rate_is_shown_only_while_running(app, client):
    run, (t,) = make_run("done", targets=(("p", "m"),))
    add_item(run, t, "q1", score=50.0)
    page = BeautifulSoup(client.get("/runs/done").text, "html.parser")
    assert "Recent tok/s" not in page.get_text() and "ETA" not in page.get_text()
