"""Browser tests of what a new user trips over: the provider form's presets, type switch and
/v1 note; picking runs to compare from the run history; report.html viewed in the browser.
Screenshots at 1280 px and 390 px go to screenshots/ (git-ignored)."""

import datetime as dt
import re

import pytest

from app.db.connection import database
from tests.browser.helpers import serving
from tests.browser.helpers import shot
from tests.conftest import make_app
from tests.engine_helpers import make_provider
from tests.engine_helpers import make_tasks
from tests.over_time import T0
from tests.over_time import finished_run

pytestmark = [pytest.mark.browser]


@pytest.fixture(scope="module")
def server(tmp_path_factory, fake_server):
    """The app (no orchestrator needed) with three finished nightly runs of two models."""
    fake_server.reset()
    app = make_app(tmp_path_factory.mktemp("new-user"), WTF_CSRF_ENABLED=True)
    with database.connection_context():
        provider = make_provider(fake_server, name="fake-local")
        fake_server.models = ["alpha-7b", "beta-3b"]
        make_tasks(14, collection="arith", prefix="arith_")
        make_tasks(6, collection="misc", prefix="logic_")
        base = [70 + (n * 7) % 20 for n in range(12)]
        for day, drop in enumerate((0, 6, 15)):
            finished_run(
                f"nightly-{day:02d}",
                {
                    "fake-local/alpha-7b": [s - drop for s in base],
                    "fake-local/beta-3b": [s - 8 + day for s in base],
                },
                finished_at=T0 + dt.timedelta(days=day),
            )
    with serving(app, "new-user-server") as base:
        yield {"base": base, "fake": fake_server, "pid": provider.id}
    fake_server.reset()


def test_a_preset_fills_the_provider_form(page, server):
    from playwright.sync_api import expect

    page.goto(server["base"] + "/settings/providers/new")
    page.click(".provider-presets a:has-text('vLLM')")
    expect(page.locator("#f-type")).to_have_value("OPENAI")
    expect(page.locator("#f-baseUrl")).to_have_value("http://localhost:8000")
    expect(page.locator("#f-modelsEndpoint")).to_have_value("/v1/models")
    expect(page.locator("#f-inferenceEndpoint")).to_have_value("/v1/chat/completions")
    expect(page.locator("#f-name")).to_have_value("vllm")
    expect(page.locator("#preset-note")).to_contain_text("port 8000")
    assert page.url.endswith("/settings/providers/new")  # filled in place, nothing reloaded
    shot(page, "provider-form-preset")
    assert page.console_errors == []


def test_switching_the_type_moves_the_default_url_and_endpoints(page, server):
    from playwright.sync_api import expect

    page.goto(server["base"] + "/settings/providers/new")
    expect(page.locator("#f-baseUrl")).to_have_value("http://localhost:11434")
    page.select_option("#f-type", "OPENAI")
    expect(page.locator("#f-baseUrl")).to_have_value("http://localhost:8080")
    expect(page.locator("#f-modelsEndpoint")).to_have_value("/v1/models")
    page.select_option("#f-type", "OLLAMA")
    expect(page.locator("#f-baseUrl")).to_have_value("http://localhost:11434")
    expect(page.locator("#f-inferenceEndpoint")).to_have_value("/api/chat")


def test_a_base_url_ending_in_v1_is_noticed_and_fixed(page, server):
    from playwright.sync_api import expect

    page.goto(server["base"] + "/settings/providers/new?preset=lmstudio")
    expect(page.locator("#v1-note")).to_be_hidden()
    page.fill("#f-baseUrl", "http://localhost:1234/v1")
    expect(page.locator("#v1-note")).to_be_visible()
    expect(page.locator("#v1-note")).to_contain_text("/v1/v1/models")
    shot(page, "provider-form-v1")
    page.click("#v1-fix")
    expect(page.locator("#f-baseUrl")).to_have_value("http://localhost:1234")
    expect(page.locator("#v1-note")).to_be_hidden()


def test_checked_runs_in_the_history_compare_a_baseline_with_several(page, server):
    from playwright.sync_api import expect

    page.goto(server["base"] + "/runs/")
    for run_id in ("nightly-02", "nightly-00", "nightly-01"):
        page.check(f"input[name=run][value={run_id}]")
    page.click("text=Compare checked runs")
    page.wait_for_url(re.compile(r"/compare\?run="))
    expect(page.locator("#cmp-many-h")).to_contain_text("Baseline nightly-00 against 2 runs")
    chart = page.locator(".cmp-chart img")
    expect(chart).to_be_visible()
    page.wait_for_function(
        "img => img.complete && img.naturalWidth > 0", arg=chart.element_handle()
    )
    expect(page.locator("nav.topnav a[aria-current=page]")).to_have_text("Compare")
    shot(page, "compare-baseline")
    assert page.console_errors == []


def test_two_checked_runs_open_with_the_newer_as_b(page, server):
    from playwright.sync_api import expect

    page.goto(server["base"] + "/runs/")
    page.check("input[name=run][value=nightly-02]")
    page.check("input[name=run][value=nightly-01]")
    page.click("text=Compare checked runs")
    page.wait_for_url(re.compile(r"/compare\?a=nightly-01&b=nightly-02$"))
    expect(page.locator("#cmp-b")).to_have_value("nightly-02")
    expect(page.locator(".cmp-chart img")).to_be_visible()
    shot(page, "compare-pair")


def test_the_report_opens_in_the_browser(page, server):
    from playwright.sync_api import expect

    page.goto(server["base"] + "/runs/nightly-02/results")
    with page.context.expect_page() as opened:
        page.click("nav.rs-exports a:has-text('View report')")
    report = opened.value
    report.wait_for_load_state()
    expect(report.locator("h1")).to_have_text("Run nightly-02")
    expect(report.locator("#run-state")).to_have_text("finished")
    created = report.locator("dt:has-text('Finished') + dd time")
    # report.html has no script to show the reader's zone: its times are UTC and say so.
    expect(created).to_have_text(re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$"))
    shot(report, "report-view")
    report.close()


def test_test_inference_says_the_model_is_not_listed(page, server):
    from playwright.sync_api import expect

    server["fake"].models = ["alpha-7b", "beta-3b"]
    page.goto(f"{server['base']}/settings/providers/{server['pid']}")
    page.fill(f"#model-{server['pid']}", "alpha")
    page.click(".provider-test__form button:has-text('Send')")
    expect(page.locator(".test-result .flash--warn")).to_contain_text("alpha is not in")
    expect(page.locator(".test-result .flash--warn")).to_contain_text("did you mean alpha-7b")
    shot(page, "provider-test-unlisted")


def test_prices_pick_the_provider_then_its_model(page, server):
    from playwright.sync_api import expect

    server["fake"].models = ["alpha-7b", "beta-3b"]
    page.goto(server["base"] + "/settings/prices")
    page.select_option("#f-providerName", "fake-local")
    expect(page.locator("select#f-model option")).to_have_count(3)
    page.select_option("#f-model", "beta-3b")
    page.fill("#f-outputPer1m", "0.6")
    page.click("text=Save price")
    expect(page.locator(".flash--success")).to_contain_text("fake-local / beta-3b saved")
    # The flash shows before the new page's htmx is bound; a change fired earlier is lost.
    page.wait_for_load_state("load")
    page.select_option("#f-providerName", "fake-local")
    expect(page.locator("select#f-model")).to_be_visible()
    shot(page, "prices-pick")


def test_import_and_collection_words(page, server):
    from playwright.sync_api import expect

    page.goto(server["base"] + "/settings/import/")
    page.click("text=Which format is my file?")
    expect(page.locator(".format-help")).to_contain_text("apocbench-style JSONL")
    shot(page, "import-formats")
    page.goto(server["base"] + "/settings/collections/")
    page.click("text=misc")
    page.fill("input[name=q]", "arith_1")
    page.keyboard.press("Enter")
    button = page.locator("#candidates button:has-text('Add all')")
    expect(button).to_have_text(re.compile(r"Add all \d+ shown"))
    shot(page, "collection-add-all")
    button.click()
    expect(page.locator(".flash--success")).to_contain_text("to misc")
