"""Browser tests of the over-time pages: Trends (points link to their runs, a collection's
current vs previous vs baseline, pinning), a run's system-metrics chart, the alert banner, and a
template saved from a run, run now, queued and taken out of the queue. Screenshots at 1280 px
and 390 px go to screenshots/ (git-ignored)."""

import datetime as dt
import random
import re
import threading

import pytest

from app.db.connection import database
from app.db.models import Collection
from app.db.models import Provider
from app.engine import scheduler
from app.schedules import service
from app.schedules.digest import digest_finished
from app.sysmetrics.store import SampleStore
from tests.browser.helpers import serving
from tests.browser.helpers import shot
from tests.conftest import make_app
from tests.engine_helpers import make_provider
from tests.engine_helpers import make_tasks
from tests.over_time import T0
from tests.over_time import finished_run

pytestmark = [pytest.mark.browser]

DAY = dt.timedelta(days=1)


def seed_history(collection):
    """Ten nightly runs of one model with samples; the last drops clearly (an alert)."""
    rng = random.Random(7)
    base = [rng.gauss(70, 10) for _ in range(30)]
    for day in range(10):
        shift = -15 if day == 9 else rng.gauss(0, 1)
        scores = {
            "fake-local/alpha-7b": [s + shift + rng.gauss(0, 2) for s in base],
            "fake-local/beta-3b": [s - 8 + rng.gauss(0, 2) for s in base],
        }
        run = finished_run(
            f"nightly-{day:02d}",
            scores,
            finished_at=T0 + day * DAY,
            collection=collection,
            category_of=lambda task: ("math", "logic", "facts")[task % 3],
            tps=35 + rng.random() * 5,
        )
        store = SampleStore(run.id)
        start = (T0 + day * DAY - dt.datetime(1970, 1, 1)).total_seconds() - 240
        for k in range(120):
            store(
                {
                    "t": start + 2 * k,
                    "cpuPercent": 35 + 30 * abs((k % 30) - 15) / 15,
                    "ramUsedGb": 9 + k / 200,
                    "ramTotalGb": 31.2,
                    "rssMb": 180 + k / 4,
                    "gpuCount": None,
                    "gpuUtilPercent": None,
                    "vramUsedGb": None,
                    "vramTotalGb": None,
                    "loadedModels": None,
                }
            )
        digest_finished(T0 + day * DAY)


@pytest.fixture(scope="module")
def server(tmp_path_factory, fake_server):
    """The app with its orchestrator thread (and the schedules' hook) on 127.0.0.1."""
    fake_server.reset()
    fake_server.default_latency = 0.05
    app = make_app(
        tmp_path_factory.mktemp("over-time"),
        TICK_SECONDS=0.2,
        LEASE_SECONDS=5.0,
        WTF_CSRF_ENABLED=True,
        SYSMETRICS_SECONDS=0.5,
    )
    with database.connection_context():
        provider = make_provider(fake_server, name="fake-local")
        fake_server.models = ["alpha-7b", "beta-3b", "judge"]
        collection = make_tasks(3, collection="quick")
        seed_history(Collection.create(name="nightly-bank"))
        provider_id, collection_id = provider.id, collection.id
    with serving(app, "over-time-server") as base:
        scheduler.start(app.config, hooks=[service.on_tick])
        yield {"base": base, "pid": provider_id, "cid": collection_id, "fake": fake_server}
        scheduler.shutdown()
    fake_server.reset()


def test_trends_points_link_to_their_runs_and_a_collection_compares(page, server):
    from playwright.sync_api import expect

    page.goto(server["base"] + "/trends")
    chart = page.locator("#chart-score .chart-wide svg")
    expect(chart).to_be_visible()
    expect(chart.locator("a")).to_have_count(10)  # one link per run, over both models' points
    page.select_option("#f-collection", label="nightly-bank")
    page.click("text=Apply")
    expect(page.locator("#summary-h")).to_contain_text("current vs previous vs baseline")
    expect(page.locator("tr.tr-all .tr-change--worse").first).to_be_visible()
    page.select_option("#pin-run", "nightly-02")
    page.click("text=Pin as baseline")
    expect(page.locator(".flash--success")).to_contain_text("nightly-02 is now the baseline")
    expect(page.locator(".tr-runs")).to_contain_text("nightly-02")
    shot(page, "trends")
    page.locator("#chart-score .chart-wide svg a").last.click()
    page.wait_for_url(re.compile(r"/runs/nightly-\d\d/results$"))


def test_a_runs_results_chart_its_system_metrics(page, server):
    from playwright.sync_api import expect

    page.goto(server["base"] + "/runs/nightly-09/results")
    section = page.locator("#run-sysmetrics")
    expect(section.locator("#sys-load .chart-wide svg")).to_be_visible()
    expect(section.locator(".sys-peaks")).to_contain_text("CPU 65 %")
    section.scroll_into_view_if_needed()
    shot(page, "run-system-metrics")


def test_the_regression_banner_is_dismissed(page, server):
    from playwright.sync_api import expect

    page.goto(server["base"] + "/runs/nightly-09")
    banner = page.locator(".alert-banner")
    expect(banner).to_contain_text("dropped")
    page.click(".alert-banner button:has-text('Dismiss')")
    page.wait_for_url(re.compile(r"/runs/nightly-09$"))
    expect(page.locator(".alert-banner")).to_have_count(0)


def test_a_template_from_a_run_runs_now_queues_and_leaves_the_queue(page, server):
    from playwright.sync_api import expect

    base = server["base"]
    # The run started here stays running for the whole test, so the template's run must wait
    # in the queue: its first model call is held until the test ends (a fixed 5 s latency
    # was within the provider's 5 s timeout, and a busy machine saw the run end mid-test).
    release = threading.Event()
    server["fake"].responder = lambda call: release.wait(120) and None  # then the default
    _provider_timeout(server["pid"], 300.0)
    response = page.request.post(
        base + "/api/runs",
        data={
            "judgeProviderId": server["pid"],
            "judgeModel": "judge",
            "collectionIds": [server["cid"]],
            "targets": [{"providerId": server["pid"], "model": "alpha-7b"}],
            "name": "seed",
        },
    )
    run_id = response.json()["runId"]
    try:
        page.goto(f"{base}/runs/{run_id}")
        page.click("text=Save as template")
        page.fill("#name", "nightly-live")
        page.fill("#cron", "0 3 * * *")
        page.fill("#timezone", "Europe/Berlin")
        page.click("text=Save template")
        expect(page.locator("h1")).to_have_text("nightly-live")
        expect(page.locator("#schedule-h").locator("..")).to_contain_text("Europe/Berlin")
        shot(page, "template")
        page.click("#run-template")
        page.wait_for_url(re.compile(r"/runs/nightly-live-\d{8}-\d{6}(-\d+)?$"))
        queued_id = page.url.rsplit("/", 1)[1]
        expect(page.locator(".flash--info")).to_contain_text("is queued")
        expect(page.locator("#run-state")).to_have_text("queued")
        expect(page.locator("#run-progress")).to_contain_text("Queued")
        page.goto(base + "/")
        expect(page.locator("#queue")).to_contain_text(queued_id)
        shot(page, "dashboard-queue")
        page.locator("#queue button:has-text('Cancel')").first.click()
        expect(page.locator(".flash--success")).to_contain_text("left the queue")
        expect(page.locator("#queue")).to_have_count(0)
    finally:
        page.request.post(f"{base}/api/runs/{run_id}/stop")
        release.set()
        server["fake"].responder = None
        _provider_timeout(server["pid"], 5.0)


def _provider_timeout(provider_id, seconds):
    with database.connection_context():
        Provider.update(timeout_seconds=seconds).where(Provider.id == provider_id).execute()
