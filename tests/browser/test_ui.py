"""Browser tests: Playwright drives Debian's chromium against a real server and the fake server.

Start a run from the dashboard, watch it progress, pause, resume, see it finish, then open, sort,
filter and expand its results and download the CSV. Screenshots of every page at 1280 px and
390 px go to screenshots/ (git-ignored). Never downloads a browser: without /usr/bin/chromium
the tests skip.
"""

import csv
import io
import re

import pytest
import requests

from app.db.connection import database
from app.engine import scheduler
from tests.browser.helpers import WIDTHS
from tests.browser.helpers import serving
from tests.browser.helpers import shot
from tests.conftest import make_app

pytestmark = [pytest.mark.browser]

# The service's columns come first and in order (clients read them); ours follow.
DETAILED_CSV_HEADER = [
    "provider_name",
    "model_name",
    "task_id",
    "task_name",
    "task_status",
    "spent_time_ms",
    "tokens_generated",
    "tokens_per_second",
    "score",
    "judge_reason",
    "llm_response_text",
    "error_msg",
]
MODELS = ["alpha-7b", "beta-3b"]


@pytest.fixture(scope="module")
def server(tmp_path_factory, fake_server):
    """The app with its orchestrator thread on 127.0.0.1:<free port>, seeded through the API."""
    fake_server.reset()
    fake_server.models = list(MODELS)
    fake_server.default_latency = 0.3  # slow enough to watch the progress move
    app = make_app(
        tmp_path_factory.mktemp("browser"),
        SCHEDULER_ENABLED=False,
        TICK_SECONDS=0.2,
        LEASE_SECONDS=5.0,
        WTF_CSRF_ENABLED=True,
    )
    with serving(app, "browser-test-server") as base:
        pid, cid = seed_through_the_api(base, fake_server)
        # The orchestrator thread starts after seeding, as `llmbench serve` would with
        # SCHEDULER_ENABLED=True: provider_store's read-then-write transactions are deferred
        # and can hit "database is locked" against the lease heartbeat.
        scheduler.start(app.config)
        yield {"base": base, "pid": pid, "cid": cid, "app": app}
        scheduler.shutdown()
    fake_server.reset()


def seed_through_the_api(base, fake_server):
    """The fake provider, an Ollama nobody runs, four tasks and the `quick` collection."""
    api = requests.Session()
    provider = api.post(
        f"{base}/api/providers",
        timeout=10,
        json={"name": "fake-local", "type": "OPENAI", "baseUrl": fake_server.url},
    ).json()
    api.post(
        f"{base}/api/providers",
        timeout=10,
        json={"name": "offline-ollama", "type": "OLLAMA", "baseUrl": "http://127.0.0.1:9"},
    )
    task_ids = [
        api.post(
            f"{base}/api/tasks",
            timeout=10,
            json={
                "taskId": f"arith_{n}",
                "category": ("math", "logic")[n % 2],
                "difficulty": ("easy", "medium", "hard")[n % 3],
                "question": f"What is {n} + {n}?",
                "excellent": str(2 * n),
                "good": str(2 * n),
                "pass": str(2 * n),
                "incorrectAnswerDirection": "any other number",
            },
        ).json()["id"]
        for n in range(1, 5)
    ]
    collection = api.post(
        f"{base}/api/collections", timeout=10, json={"name": "quick", "taskIds": task_ids}
    ).json()
    return provider["id"], collection["id"]


def bar_value(page, label):
    return int(page.get_attribute(f'#run-progress [aria-label="{label}"]', "aria-valuenow"))


def test_start_watch_pause_resume_finish_and_read_results(page, server, fake_server):
    from playwright.sync_api import expect

    fake_server.default_latency = 0.3  # slow enough to watch the progress move

    base, pid, cid = server["base"], server["pid"], server["cid"]
    page.goto(base + "/")
    expect(page.locator("#start-run")).to_be_disabled()
    # The first provider's group is open and lists its models from the server.
    alpha = page.locator(f'#target-models-{pid} input[value="{pid}:alpha-7b"]')
    expect(alpha).to_be_visible()
    page.fill("#judgeModel", "alpha-7b")
    expect(page.locator("#judge-model-options option")).to_have_count(len(MODELS))
    alpha.check()
    page.check(f'#target-models-{pid} input[value="{pid}:beta-3b"]')
    params = page.locator(".target", has=page.locator(f'input[value="{pid}:beta-3b"]'))
    params.locator("summary").click()
    params.locator(f'input[name="{pid}:beta-3b#temperature"]').fill("0.2")
    expect(page.locator("#start-run")).to_be_disabled()  # no collection yet
    page.check(f'input[name="collectionIds"][value="{cid}"]')
    page.fill("#name", "browser")
    expect(page.locator("#start-run")).to_be_enabled()
    shot(page, "dashboard-filled")
    page.click("#start-run")

    page.wait_for_url(re.compile(r"/runs/browser-\d{8}-\d{6}$"))
    run_id = page.url.rsplit("/", 1)[1]
    expect(page.locator("#run-state")).to_have_text("running")
    # The progress bar moves without a reload.
    page.wait_for_function("""() => Number(document.querySelector(
        '#run-progress [aria-label="Benchmarking"]').getAttribute('aria-valuenow')) >= 2""")
    expect(page.locator("#latest-items tbody tr").first).to_be_visible()
    # From here no answer can arrive before the pause below, however slow the machine is:
    # otherwise a busy machine could finish the run before the Pause button is clicked.
    fake_server.default_latency = 30.0
    shot(page, "live-running")

    # While the server does not answer, the page says so; it recovers by itself.
    page.route("**/progress*", lambda route: route.abort())
    expect(page.locator("#reconnecting")).to_be_visible()
    page.unroute("**/progress*")
    expect(page.locator("#reconnecting")).to_be_hidden()

    page.click("#pause-run")
    expect(page.locator("#run-state")).to_have_text("paused")
    expect(page.locator(".status-indicator")).to_contain_text("paused")
    expect(page.locator("#resume-run")).to_be_visible()
    assert page.get_attribute("#run-progress", "hx-trigger") is None  # polling ended itself
    shot(page, "live-paused")

    fake_server.default_latency = 0.3
    page.click("#resume-run")
    expect(page.locator("#run-state")).to_have_text("running")
    expect(page.locator("#run-state")).to_have_text("finished", timeout=90_000)
    assert bar_value(page, "Judging") == 2 * 4
    expect(page.locator("#run-log")).to_contain_text("finished", ignore_case=True)
    expect(page.locator(".status-indicator")).to_contain_text("idle")
    expect(page.locator("#latest-items tbody tr")).to_have_count(2 * 4)
    shot(page, "live-finished")

    page.click("text=Open results")
    page.wait_for_url(re.compile(rf"/runs/{run_id}/results"))
    shot(page, "results")
    check_results_page(page)


def check_results_page(page):
    """Sort by a column, filter by model, expand a row, download the detailed CSV."""
    from playwright.sync_api import expect

    table = page.locator("#results-table")
    table.locator("th a", has_text="Score").click()
    expect(page.locator("#results-table th[aria-sort]")).to_contain_text("Score")

    beta = page.locator("#f-model option", has_text="beta-3b").get_attribute("value")
    page.select_option("#f-model", beta)
    page.locator("#results-filters [type=submit]").click()
    rows = page.locator("#results-table tbody tr[id^=item-]")
    expect(rows).to_have_count(4)
    expect(page.locator("#results-table tbody")).not_to_contain_text("alpha-7b")

    rows.first.locator("details summary").first.click()
    expect(page.locator("#results-table td[id^=detail-]").first).to_contain_text("fake judge")
    shot(page, "results-filtered-expanded")

    with page.expect_download() as download_info:
        page.locator("a", has_text="CSV (detailed)").click()
    with open(download_info.value.path(), encoding="utf-8", newline="") as handle:
        header = next(csv.reader(io.StringIO(handle.readline())))
    assert header[: len(DETAILED_CSV_HEADER)] == DETAILED_CSV_HEADER


def test_start_pause_and_stop_work_without_javascript(browser, server):
    """R3: with JS off, the refresh buttons, the start form and the controls are plain forms."""
    from playwright.sync_api import expect

    base, pid, cid = server["base"], server["pid"], server["cid"]
    context = browser.new_context(
        java_script_enabled=False, viewport={"width": 1280, "height": 900}
    )
    page = context.new_page()
    page.set_default_timeout(15_000)
    try:
        page.goto(base + "/")
        page.fill("#judgeModel", "beta-3b")
        page.click(f'button[name="refresh"][value="{pid}"]')  # a GET that lists the models
        page.check(f'input[value="{pid}:alpha-7b"]')
        page.check(f'input[name="collectionIds"][value="{cid}"]')
        page.fill("#name", "nojs")
        page.click("#start-run")
        page.wait_for_url(re.compile(r"/runs/nojs-\d{8}-\d{6}$"))
        expect(page.locator("#run-state")).to_have_text(re.compile("running|finished"))
        if page.locator("#pause-run").count():
            page.click("#pause-run")
            expect(page.locator("#run-state")).to_have_text(re.compile("paused|finished"))
        if page.locator("#stop-run").count():
            page.click("#stop-run")
            expect(page.locator("#run-state")).to_have_text("stopped")
            expect(page.locator("#resume-run")).to_have_text(re.compile("Continue"))
        shot(page, "live-stopped-nojs")
    finally:
        context.close()


@pytest.fixture(scope="module")
def finished_runs(server):
    """Two finished runs written straight to the server's database: long model names, 3 models."""
    from tests.factories import bulk_items
    from tests.factories import make_run

    names = [
        ("fake-local", "llama3.1:8b-instruct-q4_K_M"),
        ("openrouter", "vendor/a-very-long-model-name-for-layout"),
        ("fake-local", "qwen"),
    ]
    for run_id, targets in (("shots-a", names[:2]), ("shots-b", names)):
        run, run_targets = make_run(run_id, targets=targets)
        for target in run_targets:
            bulk_items(run, target, 30)
    item = run_targets[0].items.first().id
    database.close()  # this thread's connection only; the server's threads keep theirs
    return {"item": item}


@pytest.mark.parametrize(
    "name, path",
    [
        ("dashboard", "/"),
        ("history", "/runs/"),
        ("settings", "/settings/"),
        ("providers", "/settings/providers/"),
        ("tasks", "/settings/tasks/"),
        ("collections", "/settings/collections/"),
        ("prices", "/settings/prices"),
        ("import", "/settings/import/"),
        ("patterns", "/_patterns/"),
        ("results-seeded", "/runs/shots-b/results"),
        ("item", "/runs/shots-b/items/{item}"),
        ("compare", "/compare?a=shots-a&b=shots-b"),
        ("compare-pick", "/compare?a=shots-a"),
    ],
)
def test_pages_render_at_both_widths(page, server, finished_runs, name, path):
    response = page.goto(server["base"] + path.format(**finished_runs))
    assert response.status == 200
    for width in WIDTHS:
        # Nothing wider than the screen (tables scroll inside their own wrapper).
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_timeout(100)
        overflow = page.evaluate("document.documentElement.scrollWidth")
        assert overflow <= width, f"{path} is {overflow}px wide at {width}px"
    shot(page, name)


def test_compare_table_shows_every_column_at_1280(page, server, finished_runs):
    page.goto(server["base"] + "/compare?a=shots-a&b=shots-b")
    wrap = page.locator(".table-wrap", has=page.locator("table.rs-compare:not(.cmp-speed)"))
    widths = wrap.evaluate("el => [el.scrollWidth, el.clientWidth]")
    assert widths[0] <= widths[1], f"the compare table scrolls: {widths}"
    last = page.locator("table.rs-compare:not(.cmp-speed) thead th").last
    assert "Judge failures" in last.text_content() and last.is_visible()


@pytest.fixture(scope="module")
def truth_runs(server):
    """A run finished with failures, one with nothing completed, one paused by an outage and
    one waiting for a server that cannot be reached, written straight to the database."""
    import datetime as dt

    from app.clock import utcnow
    from app.db.models import CONTROL_PAUSED
    from app.db.models import FAILED
    from app.db.models import NEW
    from app.db.models import PENDING
    from app.db.models import Outage
    from tests.factories import add_item
    from tests.factories import make_run

    def failed(run, target, key):
        add_item(
            run,
            target,
            key,
            status=FAILED,
            error_stage="answer",
            attempts=3,
            error_msg="Server answered 500 Internal Server Error: boom (gave up after 3 attempts)",
        )

    run, (t,) = make_run("truth-mixed", targets=(("fake-local", "alpha-7b"),))
    for n in range(9):
        add_item(run, t, f"ok{n}", score=60.0 + n)
    for n in range(3):
        failed(run, t, f"bad{n}")
    run, (t,) = make_run("truth-nothing", targets=(("fake-local", "alpha-7b"),))
    for n in range(4):
        failed(run, t, f"bad{n}")
    since = utcnow() - dt.timedelta(minutes=10, seconds=30)
    reason = (
        f"fake-local is unreachable (connection refused since {since:%H:%M:%S} UTC, 10 min, "
        "past the 10 min limit); no item was failed for it: start the server or fix the "
        "provider's base URL, then continue"
    )
    run, (t,) = make_run(
        "truth-outage",
        status=PENDING,
        control=CONTROL_PAUSED,
        control_reason=reason,
        targets=(("fake-local", "alpha-7b"),),
        phase="BENCHMARKING",
    )
    for n in range(3):
        add_item(run, t, f"ok{n}", score=70.0)
    for n in range(5):
        add_item(run, t, f"new{n}", status=NEW)
    database.close()
    return {"since": since, "outage_row": Outage}


def test_finished_runs_say_how_they_ended_in_colour(page, server, truth_runs):
    from playwright.sync_api import expect

    page.goto(server["base"] + "/runs/truth-mixed")
    expect(page.locator("#run-state")).to_have_text("finished with 3 failed")
    expect(page.locator("#run-state")).to_have_class(re.compile("badge--warn"))
    expect(page.locator("#answered-count")).to_have_text("9 / 12 answered · 3 failed")
    shot(page, "live-finished-with-failures")
    page.goto(server["base"] + "/runs/truth-nothing")
    expect(page.locator("#run-state")).to_have_text("finished, nothing completed")
    expect(page.locator("#run-state")).to_have_class(re.compile("badge--error"))
    shot(page, "live-finished-nothing-completed")
    page.goto(server["base"] + "/runs/?sort=run_id")
    expect(page.locator("main")).to_contain_text("finished with 3 failed")
    shot(page, "history-run-states")


def test_a_run_paused_by_an_outage_says_why(page, server, truth_runs):
    from playwright.sync_api import expect

    page.goto(server["base"] + "/runs/truth-outage")
    expect(page.locator("#run-state")).to_have_text("paused")
    expect(page.locator("#control-reason")).to_contain_text("fake-local is unreachable")
    expect(page.locator("#resume-run")).to_be_visible()
    shot(page, "live-paused-outage")


@pytest.mark.parametrize(
    "path",
    [
        "/",
        "/runs/",
        "/runs/truth-mixed",
        "/runs/truth-mixed/results",
        "/settings/providers/",
        "/settings/import/",
        "/compare?a=truth-mixed&b=truth-nothing",
        "/nope",
    ],
)
def test_no_page_breaks_its_content_security_policy(page, server, truth_runs, path):
    refused = []
    page.on(
        "console",
        lambda msg: (
            refused.append(msg.text)
            if "Content Security" in msg.text or "Refused to" in msg.text
            else None
        ),
    )
    page.goto(server["base"] + path)
    page.wait_for_load_state("networkidle")
    for toggle in page.locator("details > summary").all()[:3]:
        if toggle.is_visible():
            toggle.click()
    page.wait_for_timeout(300)
    assert refused == []
