"""Live run view (polling that stops itself, controls, log, latest items) and the run history."""

import datetime as dt

import pytest
from bs4 import BeautifulSoup

from app.catalog.collections import add_tasks_to_collection
from app.catalog.collections import create_collection
from app.catalog.providers import create_provider
from app.catalog.tasks import create_task
from app.db.connection import database
from app.db.models import COMPLETED
from app.db.models import FAILED
from app.db.models import FINISHED
from app.db.models import Item
from app.db.models import Run
from app.runlog import log_event
from app.runs.control import pause_run
from app.runs.control import stop_run
from app.runs.lifecycle import create_run
from app.runs.progress import progress
from app.runs.queries import list_logs
from app.runs.state import run_state
from tests.conftest import make_app
from tests.factories import add_item
from tests.factories import make_run

HX = {"HX-Request": "true"}


def soup(response):
    return BeautifulSoup(response.data, "html.parser")


@pytest.fixture
def run(app, fake):
    """A running run (scheduler off, so it stays as created): 2 tasks x targets m1, m2."""
    fake.models = ["m1", "m2"]  # a run checks that its models are served
    provider = create_provider({"name": "fake", "type": "OPENAI", "base_url": fake.url})
    tasks = [
        create_task(
            {
                "task_id": f"t{n}",
                "category": "math",
                "question": f"{n}+{n}?",
                "excellent": str(2 * n),
            }
        )
        for n in (1, 2)
    ]
    collection = create_collection("quick")
    add_tasks_to_collection(collection.id, [t.id for t in tasks])
    return create_run(
        {
            "name": "live",
            "judgeProviderId": provider.id,
            "judgeModel": "m1",
            "targets": [
                {"providerId": provider.id, "model": "m1"},
                {"providerId": provider.id, "model": "m2"},
            ],
            "collectionIds": [collection.id],
        }
    )


def finish(run):
    Run.update(status=FINISHED).where(Run.id == run.id).execute()


def progress_root(client, run):
    response = client.get(f"/runs/{run.run_id}/progress", headers=HX)
    assert response.status_code == 200
    return soup(response).find(id="run-progress")


def test_live_view_shows_header_and_every_region(client, run):
    page = soup(client.get(f"/runs/{run.run_id}"))
    assert run.run_id in page.find("h1").text and "m1" in page.select_one(".meta-list").text
    for region in ("run-progress", "run-controls", "run-log", "latest-items", "raw-events"):
        assert page.find(id=region) is not None, region


def test_unknown_run_is_404(client, app):
    assert client.get("/runs/nope").status_code == 404


def test_progress_fragment_polls_while_running(client, run):
    root = progress_root(client, run)
    assert root["hx-trigger"] == "every 1s"
    assert root["hx-get"] == f"/runs/{run.run_id}/progress"
    assert root["hx-target"] == "this" and root["hx-swap"] == "outerHTML"


@pytest.mark.parametrize("how", ["paused", "stopped", "finished"])
def test_progress_fragment_stops_polling_when_not_running(client, run, how):
    {
        "paused": lambda: pause_run(run.run_id),
        "stopped": lambda: stop_run(run.run_id),
        "finished": lambda: finish(run),
    }[how]()
    root = progress_root(client, run)
    assert not root.has_attr("hx-trigger") and not root.has_attr("hx-get")
    assert root.find(id="run-state").text.startswith(how)


def test_progress_shows_counts_per_status_and_phase(client, run):
    Item.update(status=COMPLETED, evaluation_score=90.0).where(
        Item.id == Item.select(Item.id).where(Item.run == run).order_by(Item.id).limit(1)
    ).execute()
    root = progress_root(client, run)
    assert "1 / 4 answered" in root.text and "1 / 4 judged" in root.text
    bar = root.find(attrs={"aria-label": "Benchmarking"})
    assert bar["role"] == "progressbar" and bar["aria-valuenow"] == "1"


def test_poll_resends_log_and_items_only_when_they_changed(client, run):
    root = progress_root(client, run)
    marks = {"log_mark": str(list_logs(run.run_id)[-1].id), "items_mark": "stale"}
    response = client.get(f"/runs/{run.run_id}/progress", query_string=marks, headers=HX)
    page = soup(response)
    assert page.find(id="run-log") is None  # unchanged: not resent
    assert page.find(id="latest-items")["hx-swap-oob"] == "true"
    assert "log_mark" in root["hx-vals"]


def test_poll_swaps_the_controls_in_once_the_run_is_no_longer_running(client, run):
    finish(run)
    page = soup(client.get(f"/runs/{run.run_id}/progress", headers=HX))
    controls = page.find(id="run-controls")
    assert controls["hx-swap-oob"] == "true" and "Open results" in controls.text


def test_controls_are_csrf_protected_forms(tmp_path, fake):
    app = make_app(tmp_path, WTF_CSRF_ENABLED=True)
    make_run("r1", status="PENDING")
    client = app.test_client()
    form = soup(client.get("/runs/r1")).select_one("#run-controls form")
    assert form["method"] == "post" and form.find("input", attrs={"name": "csrf_token"})["value"]
    assert client.post("/runs/r1/pause").status_code == 400  # no token
    database.close()


@pytest.mark.parametrize("action, state", [("pause", "paused"), ("stop", "stopped")])
def test_control_form_post_changes_state_and_redirects(client, run, action, state):
    response = client.post(f"/runs/{run.run_id}/{action}")
    assert response.status_code == 303
    assert response.headers["Location"].endswith(f"/runs/{run.run_id}")
    assert run_state(Run.get_by_id(run.id)) == state


def test_resume_with_htmx_returns_controls_and_restarts_polling(client, run):
    pause_run(run.run_id)
    response = client.post(f"/runs/{run.run_id}/resume", headers=HX)
    page = soup(response)
    assert run_state(Run.get_by_id(run.id)) == "running"
    assert page.find(id="pause-run") is not None
    progress = page.find(id="run-progress")
    assert progress["hx-swap-oob"] == "true" and progress["hx-trigger"] == "every 1s"


def test_pause_with_htmx_offers_resume_and_stops_polling(client, run):
    page = soup(client.post(f"/runs/{run.run_id}/pause", headers=HX))
    assert page.find(id="resume-run") is not None
    assert not page.find(id="run-progress").has_attr("hx-trigger")


def test_a_refused_control_shows_why_in_the_controls(client, run):
    finish(run)
    response = client.post(f"/runs/{run.run_id}/pause", headers=HX)
    assert response.status_code == 200
    assert "not running" in soup(response).find(id="run-controls").text


def test_a_refused_control_without_javascript_is_an_error_page(client, run):
    finish(run)
    assert client.post(f"/runs/{run.run_id}/pause").status_code == 400


BUDGET_REASON = (
    "budget reached: spent $0.0300 of the $0.0300 limit (settings.maxBudgetUsd); "
    "continue with a higher budget to go on"
)


def halt_on_budget(run):
    """The run as the orchestrator leaves it when its budget is spent: paused, with the reason."""
    item = Item.select().where(Item.run == run).first()
    Item.update(status="WAITING_FOR_JUDGE", cost_usd=0.03).where(Item.id == item.id).execute()
    Run.update(
        control="paused", control_reason=BUDGET_REASON, settings={"maxBudgetUsd": 0.03}
    ).where(Run.id == run.id).execute()


def test_budget_halted_run_offers_a_raise_budget_field_next_to_resume(client, run):
    halt_on_budget(run)
    controls = soup(client.get(f"/runs/{run.run_id}")).find(id="run-controls")
    field = controls.find("input", attrs={"name": "maxBudgetUsd"})
    assert field["type"] == "number" and float(field["min"]) > 0.03
    assert "Raise budget to $" in field.find_parent("label").text
    assert field.find_parent("form") is controls.find(id="resume-run").find_parent("form")


def test_a_run_paused_by_hand_has_no_budget_field(client, run):
    pause_run(run.run_id)
    controls = soup(client.get(f"/runs/{run.run_id}")).find(id="run-controls")
    assert controls.find(id="resume-run") and not controls.find(attrs={"name": "maxBudgetUsd"})


def test_resume_with_a_raised_budget_continues_the_run(client, run):
    halt_on_budget(run)
    page = soup(client.post(f"/runs/{run.run_id}/resume", data={"maxBudgetUsd": "0.5"}, headers=HX))
    fresh = Run.get_by_id(run.id)
    assert run_state(fresh) == "running" and fresh.settings["maxBudgetUsd"] == 0.5
    assert page.find(id="pause-run") is not None


@pytest.mark.parametrize("value", ["0.03", "0.01", "-1", "abc", "nan", "inf"])
def test_a_raised_budget_must_be_more_than_the_spend(client, run, value):
    halt_on_budget(run)
    response = client.post(f"/runs/{run.run_id}/resume", data={"maxBudgetUsd": value}, headers=HX)
    assert "maxBudgetUsd" in soup(response).find(id="run-controls").find(role="alert").text
    assert run_state(Run.get_by_id(run.id)) == "paused"


@pytest.mark.parametrize("how", ["budget", "hand", "stopped"])
def test_progress_shows_why_a_run_is_halted(client, run, how):
    {
        "budget": lambda: halt_on_budget(run),
        "hand": lambda: pause_run(run.run_id),
        "stopped": lambda: stop_run(run.run_id),
    }[how]()
    reason = progress_root(client, run).find(id="control-reason").text
    assert {"budget": "budget reached", "hand": "paused by you", "stopped": "stopped by you"}[
        how
    ] in reason


def test_log_shows_latest_lines_newest_first(client, run):
    log_event(run, "note", "second line")
    lines = soup(client.get(f"/runs/{run.run_id}/log", headers=HX)).select(".log-line__msg")
    assert lines[0].text == "second line" and "started" in lines[1].text


def test_raw_events_show_the_log_entries_json(client, run):
    text = soup(client.get(f"/runs/{run.run_id}/events", headers=HX)).find("pre").text
    assert '"event": "run_started"' in text and '"items": 4' in text


def answer_all(run):
    items = list(Item.select().where(Item.run == run).order_by(Item.id))
    Item.update(
        status=COMPLETED,
        evaluation_score=70.0,
        last_attempt_at=dt.datetime(2025, 1, 1),
        time_taken_ms=900.0,
    ).where(Item.id.in_([i.id for i in items[:3]])).execute()
    Item.update(status=FAILED, error_msg="boom", last_attempt_at=dt.datetime(2025, 1, 1)).where(
        Item.id == items[3].id
    ).execute()
    return items


def test_latest_items_filter_by_model_and_status(client, run):
    items = answer_all(run)
    target = items[3].target
    response = client.get(
        f"/runs/{run.run_id}/items",
        query_string={"model": target.id, "status": "FAILED"},
        headers=HX,
    )
    rows = soup(response).select("#latest-items tbody tr")
    assert len(rows) == 1 and "boom" in rows[0].text
    assert response.headers["HX-Replace-Url"] == (
        f"/runs/{run.run_id}?model={target.id}&status=FAILED"
    )


def test_live_view_filter_works_without_javascript(client, run):
    answer_all(run)
    page = soup(client.get(f"/runs/{run.run_id}", query_string={"status": "COMPLETED"}))
    assert len(page.select("#latest-items tbody tr")) == 3
    assert page.find(id="filter-status").find("option", selected=True)["value"] == "COMPLETED"


def test_unknown_filter_values_are_ignored(client, run):
    answer_all(run)
    page = soup(
        client.get(
            f"/runs/{run.run_id}/items", query_string={"model": "x", "status": "BOGUS"}, headers=HX
        )
    )
    assert len(page.select("tbody tr")) == 4


@pytest.fixture
def history(app):
    """alpha finished (j1, 2025-01-02), bravo paused (j2, 02-01), charlie stopped (j1, 03-01)."""
    a, (ta,) = make_run("alpha", judge_model="j1")
    add_item(a, ta, "x", score=90.0)
    make_run(
        "bravo",
        judge_model="j2",
        status="PENDING",
        control="paused",
        created_at=dt.datetime(2025, 2, 1, 10),
    )
    c, (tc,) = make_run(
        "charlie",
        judge_model="j1",
        status="PENDING",
        control="stopped",
        created_at=dt.datetime(2025, 3, 1, 10),
    )
    add_item(c, tc, "x", score=40.0)
    add_item(c, tc, "y", score=None, status="NEW")


def history_ids(client, **query):
    response = client.get("/runs/", query_string=query)
    assert response.status_code == 200
    return [a.text for a in soup(response).select(".history-table tbody .cell-id")]


def test_history_lists_newest_first(client, history):
    assert history_ids(client) == ["charlie", "bravo", "alpha"]


@pytest.mark.parametrize(
    "query, expected",
    [
        ({"state": "finished"}, ["alpha"]),
        ({"state": "paused"}, ["bravo"]),
        ({"judge": "j1"}, ["charlie", "alpha"]),
        ({"from": "2025-02-01", "to": "2025-02-28"}, ["bravo"]),
        ({"to": "2025-01-02"}, ["alpha"]),
        ({"state": "bogus", "from": "not-a-date"}, ["charlie", "bravo", "alpha"]),
    ],
)
def test_history_filters(client, history, query, expected):
    assert history_ids(client, **query) == expected


@pytest.mark.parametrize(
    "sort, expected",
    [
        ("-score", ["alpha", "charlie", "bravo"]),
        ("score", ["charlie", "alpha", "bravo"]),
        ("run_id", ["alpha", "bravo", "charlie"]),
        ("-items", ["charlie", "alpha", "bravo"]),
        ("nonsense", ["charlie", "bravo", "alpha"]),
    ],
)
def test_history_sorts(client, history, sort, expected):
    assert history_ids(client, sort=sort) == expected


def test_history_sort_links_keep_the_filters(client, history):
    page = soup(client.get("/runs/", query_string={"judge": "j1", "sort": "-created"}))
    link = page.select_one("th[aria-sort] a")["href"]
    assert "judge=j1" in link and "sort=created" in link


def test_patterns_page_renders_every_partial(client, app):
    page = soup(client.get("/_patterns/"))
    for region in (
        "run-progress",
        "run-controls",
        "run-log",
        "latest-items",
        "raw-events",
        "judge-models",
        "target-models-1",
    ):
        assert page.find(id=region) is not None, region
    assert page.select_one(".patterns").has_attr("hx-disable")


def test_eta_counts_answers_and_judgements_left_at_the_recent_pace(run):
    items = list(Item.select().where(Item.run == run).order_by(Item.id))
    t0 = dt.datetime(2025, 1, 1, 12, 0, 0)
    for n, item in enumerate(items[:3]):  # one answer a second, none judged yet
        Item.update(
            status="WAITING_FOR_JUDGE",
            answered_at=t0 + dt.timedelta(seconds=n),
            tokens_per_second=10.0 * (n + 1),
        ).where(Item.id == item.id).execute()
    p = progress(Run.get_by_id(run.id), now=t0 + dt.timedelta(seconds=2))
    assert p["eta_seconds"] == 1 * 1.0 + 4 * 1.0  # 1 answer + 4 judgements left
    # The recent rate is the model's that answered last, never an average across models.
    last = items[2].target_id
    rates = [10.0 * (n + 1) for n, item in enumerate(items[:3]) if item.target_id == last]
    assert p["recent_tps"] == sum(rates) / len(rates)


def test_eta_uses_each_targets_own_pace_for_its_items_left(run):
    m1_a, m1_b, m2_a, _ = list(Item.select().where(Item.run == run).order_by(Item.id))
    t0 = dt.datetime(2025, 1, 1, 12, 0, 0)
    for n, item in enumerate((m1_a, m1_b)):  # m1: fast, one answer a second, judged
        Item.update(
            status=COMPLETED,
            answered_at=t0 + dt.timedelta(seconds=n),
            judged_at=t0 + dt.timedelta(seconds=n + 1),
            time_taken_ms=900.0,
            evaluation_score=50.0,
        ).where(Item.id == item.id).execute()
    # m2: slow, 10 s per answer by its own timing; one answer in, one left.
    Item.update(
        status="WAITING_FOR_JUDGE",
        answered_at=t0 + dt.timedelta(seconds=12),
        time_taken_ms=10_000.0,
    ).where(Item.id == m2_a.id).execute()
    p = progress(Run.get_by_id(run.id), now=t0 + dt.timedelta(seconds=12))
    assert p["eta_seconds"] == 1 * 10.0 + 2 * 1.0  # m2's answer at m2's pace + 2 judgements


def test_answers_that_failed_are_not_waiting_to_be_judged(run):
    item = Item.select().where(Item.run == run).first()
    Item.update(status=FAILED, error_stage="answer").where(Item.id == item.id).execute()
    p = progress(run)
    assert (p["benchmarked"], p["judge_total"], p["answer_failed"]) == (1, 3, 1)
