"""Browser test: start a run without a judge from the new-run form. Ticking "No judge" hides
the judge's inputs and lets the run start; the run is scored by the tasks' checks only."""

import re

import pytest
import requests

from app.engine import scheduler
from tests.browser.helpers import serving
from tests.conftest import make_app

pytestmark = [pytest.mark.browser]


@pytest.fixture(scope="module")
def server(tmp_path_factory, fake_server):
    """The app with its orchestrator thread, one provider and a collection of checked tasks."""
    fake_server.reset()
    fake_server.models = ["alpha-7b"]
    app = make_app(
        tmp_path_factory.mktemp("browser-no-judge"),
        SCHEDULER_ENABLED=False,
        TICK_SECONDS=0.2,
        LEASE_SECONDS=5.0,
        WTF_CSRF_ENABLED=True,
    )
    with serving(app, "browser-no-judge-server") as base:
        api = requests.Session()
        provider = api.post(
            f"{base}/api/providers",
            timeout=10,
            json={"name": "fake-local", "type": "OPENAI", "baseUrl": fake_server.url},
        ).json()
        task = api.post(
            f"{base}/api/tasks",
            timeout=10,
            json={
                "taskId": "says_answer",
                "category": "text",
                "question": "Say the word answer.",
                "checks": [{"type": "icontains", "value": "answer"}],
            },
        ).json()
        collection = api.post(
            f"{base}/api/collections", timeout=10, json={"name": "checked", "taskIds": [task["id"]]}
        ).json()
        scheduler.start(app.config)
        yield {"base": base, "pid": provider["id"], "cid": collection["id"]}
        scheduler.shutdown()
    fake_server.reset()


def test_a_run_without_a_judge_starts_from_the_form_and_is_scored_by_checks(page, server):
    from playwright.sync_api import expect

    base, pid, cid = server["base"], server["pid"], server["cid"]
    page.goto(base + "/")
    page.check(f'#target-models-{pid} input[value="{pid}:alpha-7b"]')
    page.check(f'input[name="collectionIds"][value="{cid}"]')
    expect(page.locator("#start-run")).to_be_disabled()  # no judge model, and no "No judge"
    expect(page.locator("#judgeModel")).to_be_visible()
    page.check("#noJudge")
    expect(page.locator("#judgeModel")).to_be_hidden()
    expect(page.locator("#start-run")).to_be_enabled()
    page.fill("#name", "checks-only")
    page.click("#start-run")
    page.wait_for_url(re.compile(r"/runs/checks-only-\d{8}-\d{6}$"))
    run_id = page.url.rsplit("/", 1)[1]
    expect(page.locator("#run-state")).to_have_text("finished")
    run = requests.get(f"{base}/api/runs/{run_id}", timeout=10).json()
    assert run["judgeModel"] in ("", None)
