"""The over-time pages: Trends, baselines, templates, the queue, alert banners, system metrics
on a run's pages (forms POST and redirect; fragments poll only while running)."""

import datetime as dt
import json
import random

import pytest
from bs4 import BeautifulSoup

from app import crypto
from app.db.models import Alert
from app.db.models import Baseline
from app.db.models import Collection
from app.db.models import Run
from app.db.models import Template
from app.engine import lease
from app.runs.queries import get_run
from app.runs.state import run_state
from app.schedules.digest import digest_finished
from app.schedules.templates import create_template
from app.sysmetrics.store import SampleStore
from tests.engine_helpers import make_provider
from tests.engine_helpers import make_tasks
from tests.over_time import T0
from tests.over_time import finished_run

HX = {"HX-Request": "true"}
DAY = dt.timedelta(days=1)


def soup(response):
    return BeautifulSoup(response.get_data(as_text=True), "html.parser")


@pytest.fixture
def history(app):
    """Three finished runs of collection 'bench' (the last a clear regression), digested."""
    rng = random.Random(5)
    before = [rng.gauss(70, 10) for _ in range(30)]
    finished_run("r1", {"local/m1": before})
    finished_run("r2", {"local/m1": [s + rng.gauss(0, 2) for s in before]}, finished_at=T0 + DAY)
    finished_run("r3", {"local/m1": [s - 15 for s in before]}, finished_at=T0 + 2 * DAY)
    digest_finished(T0 + 2 * DAY)
    return Collection.get(Collection.name == "bench")


@pytest.fixture
def spec(app, fake):
    lease.acquire("test-holder", 15.0)
    provider = make_provider(fake)
    return {
        "judgeProviderId": provider.id,
        "judgeModel": "judge",
        "collectionIds": [make_tasks(2).id],
        "targets": [{"providerId": provider.id, "model": "m1"}],
    }


# ---- Trends ---------------------------------------------------------------------------------


def test_the_trends_page_draws_each_metric_with_points_linking_to_runs(client, history):
    page = soup(client.get("/trends"))
    for metric in ("score", "tokensPerSecond", "ttftMs"):
        assert page.select_one(f"#chart-{metric} svg") is not None
    links = {a["href"] for a in page.select("#chart-score .chart-wide a")}
    assert links == {"/runs/r1/results", "/runs/r2/results", "/runs/r3/results"}
    band = page.select_one("#chart-score .chart-wide polygon")
    assert band is not None  # the 95 % CI band


def test_the_trends_page_without_runs_says_how_to_get_some(client):
    page = soup(client.get("/trends"))
    assert "No finished runs match" in page.text and page.select_one("#chart-score") is None


def test_a_bad_trends_filter_redirects_with_the_reason(client, history):
    response = client.get("/trends?from=soon")
    assert response.status_code == 302
    page = soup(client.get(response.headers["Location"]))
    assert "from: use a date" in page.select_one(".flash--error").text


def test_a_broken_line_says_why(client, app):
    finished_run("a", {"local/m1": [50, 60]})
    finished_run("b", {"local/m1": [50, 60]}, finished_at=T0 + DAY, judge_model="judge-2")
    digest_finished(T0 + DAY)
    text = soup(client.get("/trends")).select_one(".tr-breaks").text
    assert "judge changed: judgeprov/judge-1 → judgeprov/judge-2" in text and "b" in text


def test_a_collection_shows_current_previous_and_baseline(client, history):
    Baseline.create(collection=history, run=get_run("r1"))
    page = soup(client.get(f"/trends?collection={history.id}"))
    runs = page.select_one(".tr-runs").text
    assert "r3" in runs and "r2" in runs and "r1" in runs
    score = page.select_one("table.tr-metric")
    assert "Score" in score.caption.text
    change = score.select_one("tr.tr-all .tr-change")
    assert "tr-change--worse" in change["class"] and "▼" in change.text
    radar = client.get(page.select_one("#chart-radar img")["src"])
    assert radar.mimetype == "image/svg+xml" and "<svg" in radar.get_data(as_text=True)


@pytest.mark.parametrize("collection", ["nope", ""])
def test_the_radar_of_no_known_collection_is_a_404(client, collection):
    assert client.get(f"/trends/radar.svg?collection={collection}").status_code == 404


def test_pinning_a_baseline_from_the_trends_page(client, history):
    response = client.post(
        f"/collections/{history.id}/baseline",
        data={"runId": "r2", "next": f"/trends?collection={history.id}"},
    )
    assert response.status_code == 302
    assert response.headers["Location"].endswith(f"/trends?collection={history.id}")
    assert Baseline.get().run.run_id == "r2"
    client.post(f"/collections/{history.id}/baseline/delete")
    assert Baseline.select().count() == 0


def test_pinning_a_run_of_another_collection_is_refused(client, history):
    other = Collection.create(name="other")
    client.post(f"/collections/{other.id}/baseline", data={"runId": "r1"})
    assert Baseline.select().count() == 0
    page = soup(client.get(f"/trends?collection={other.id}"))
    assert "did not run collection 'other'" in page.select_one(".flash--error").text


def test_pinning_never_redirects_to_another_site(client, history):
    response = client.post(
        f"/collections/{history.id}/baseline", data={"runId": "r2", "next": "//evil.test/x"}
    )
    assert "evil.test" not in response.headers["Location"]


# ---- alerts -------------------------------------------------------------------------------


def test_an_open_alert_shows_on_the_dashboard_and_the_runs_pages(client, history):
    assert Alert.select().count() == 1
    for url in ("/", "/runs/r3", "/runs/r3/results"):
        banner = soup(client.get(url)).select_one(".alert-banner")
        assert banner is not None and "dropped" in banner.text, url
    assert soup(client.get("/runs/r2")).select_one(".alert-banner") is None


def test_dismissing_an_alert_removes_the_banner(client, history):
    alert = Alert.get()
    response = client.post(f"/alerts/{alert.id}/dismiss", data={"next": "/runs/r3"})
    assert response.status_code == 303 and response.headers["Location"].endswith("/runs/r3")
    assert soup(client.get("/runs/r3")).select_one(".alert-banner") is None
    assert Alert.get().state == "dismissed"


# ---- templates ----------------------------------------------------------------------------


def test_a_template_is_created_from_the_form(client, spec):
    response = client.post(
        "/templates/",
        data={
            "name": "nightly",
            "spec": json.dumps(spec),
            "cron": "0 3 * * *",
            "timezone": "Europe/Berlin",
            "enabled": "on",
            "regressionThreshold": "4",
            "webhookUrl": "https://hooks.example.test/x/secret9876",
        },
    )
    assert response.status_code == 302
    page = soup(client.get(response.headers["Location"]))
    assert page.h1.text == "nightly"
    assert "Europe/Berlin" in page.text and "CET" in page.text or "CEST" in page.text
    assert "****9876" in page.text and "secret9876" not in page.text


def test_a_template_form_with_bad_json_names_the_line_and_saves_nothing(client, spec):
    response = client.post("/templates/", data={"name": "x", "spec": '{"judgeModel": \n oops}'})
    assert response.status_code == 400
    error = soup(response).select_one("#spec-error").text
    assert "not valid JSON (line 2)" in error
    assert Template.select().count() == 0


def test_a_template_form_shows_each_error_beside_its_field(client, spec):
    bad = {**spec, "targets": [{"providerId": spec["judgeProviderId"], "model": ""}]}
    response = client.post(
        "/templates/",
        data={"name": "x", "spec": json.dumps(bad), "cron": "61 * * * *", "timezone": "Nowhere"},
    )
    page = soup(response)
    assert "targets[0].model" in page.select_one("#spec-error").text
    assert page.select_one("#schedule-cron-error") is not None
    assert page.select_one("#schedule-timezone-error") is not None
    assert page.select_one("#cron")["aria-invalid"] == "true"


def test_editing_a_template_keeps_its_webhook_unless_removed(client, spec):
    template = create_template(
        {"name": "t", "spec": spec, "webhookUrl": "https://h.example.test/abc1234"}
    )
    form = {"name": "t2", "spec": json.dumps(spec)}
    client.post(f"/templates/{template.id}", data=form)
    stored = Template.get_by_id(template.id)
    assert stored.name == "t2" and stored.webhook_url is not None
    client.post(f"/templates/{template.id}", data={**form, "removeWebhook": "on"})
    assert Template.get_by_id(template.id).webhook_url is None


def test_save_as_template_from_a_run_fills_the_spec(client, spec):
    run = client.post("/api/runs", json={**spec, "settings": {"repeats": 2}}).get_json()
    page = soup(client.get(f"/templates/new?from_run={run['runId']}"))
    filled = json.loads(page.select_one("#spec").text)
    assert [(t["providerId"], t["model"]) for t in filled["targets"]] == [
        (spec["judgeProviderId"], "m1")
    ]
    assert filled["settings"] == {"repeats": 2}


def test_save_as_template_from_the_new_run_form_fills_the_spec(client, spec):
    form = {
        "judgeProviderId": spec["judgeProviderId"],
        "judgeModel": "judge",
        "target": f"{spec['judgeProviderId']}:m1",
        "collectionIds": spec["collectionIds"][0],
        "repeats": "3",
        "name": "mine",
    }
    page = soup(client.post("/templates/draft", data=form))
    filled = json.loads(page.select_one("#spec").text)
    assert filled["settings"] == {"repeats": "3"} and filled["targets"][0]["model"] == "m1"
    assert page.select_one("#name")["value"] == "mine"
    assert Template.select().count() == 0  # a draft saves nothing


def test_run_now_starts_the_template_and_opens_the_run(client, spec):
    template = create_template({"name": "t", "spec": spec})
    response = client.post(f"/templates/{template.id}/run")
    run = Run.get()
    assert response.headers["Location"].endswith(f"/runs/{run.run_id}")
    assert run_state(run) == "running" and run.template_id == template.id


def test_run_now_while_busy_queues_and_says_so(client, spec):
    template = create_template({"name": "t", "spec": spec})
    client.post(f"/templates/{template.id}/run")
    response = client.post(f"/templates/{template.id}/run", follow_redirects=True)
    assert "is queued" in soup(response).select_one(".flash--info").text


def test_deleting_a_template_keeps_its_runs(client, spec):
    template = create_template({"name": "t", "spec": spec})
    client.post(f"/templates/{template.id}/run")
    client.post(f"/templates/{template.id}/delete")
    assert Template.select().count() == 0 and Run.select().count() == 1


def test_the_templates_list_shows_the_schedule_and_next_run(client, spec):
    create_template(
        {"name": "t", "spec": spec, "schedule": {"cron": "30 2 * * 1", "timezone": "UTC"}}
    )
    row = soup(client.get("/templates/")).select_one("table.tp-list tbody tr")
    assert "30 2 * * 1" in row.text and "UTC" in row.text and "02:30" in row.text


# ---- the queue on the dashboard ------------------------------------------------------------


def new_run_form(spec, **extra):
    return {
        "judgeProviderId": spec["judgeProviderId"],
        "judgeModel": "judge",
        "target": f"{spec['judgeProviderId']}:m1",
        "collectionIds": spec["collectionIds"][0],
        **extra,
    }


def test_the_409_offers_to_queue_the_run(client, spec):
    client.post("/runs", data=new_run_form(spec))
    response = client.post("/runs", data=new_run_form(spec))
    assert response.status_code == 409
    button = soup(response).select_one("#queue-it")
    assert button["form"] == "new-run-form" and button["name"] == "queue"


def test_queue_it_queues_the_run_and_the_dashboard_lists_it(client, spec):
    client.post("/runs", data=new_run_form(spec))
    response = client.post("/runs", data=new_run_form(spec, queue="1"))
    queued = Run.select().order_by(Run.id.desc()).first()
    assert response.status_code == 302 and run_state(queued) == "queued"
    card = soup(client.get("/")).select_one("#queue")
    assert queued.run_id in card.text
    client.post(f"/queue/{queued.run_id}/cancel", data={"next": "/"})
    assert run_state(get_run(queued.run_id)) == "stopped"
    assert soup(client.get("/")).select_one("#queue") is None


def test_a_queued_runs_live_view_polls_and_offers_to_leave_the_queue(client, spec):
    client.post("/runs", data=new_run_form(spec))
    client.post("/runs", data=new_run_form(spec, queue="1"))
    queued = Run.select().order_by(Run.id.desc()).first()
    page = soup(client.get(f"/runs/{queued.run_id}"))
    progress = page.select_one("#run-progress")
    assert progress["hx-trigger"] == "every 3s" and "Queued" in progress.text
    assert page.select_one("#cancel-queued") is not None


# ---- system metrics and stability on a run's pages -----------------------------------------


def store_samples(run):
    store = SampleStore(run.id)
    for t in range(5):
        store(
            {
                "t": 1_700_000_000 + 2 * t,
                "cpuPercent": 20.0 + t,
                "ramUsedGb": 8.0,
                "ramTotalGb": 16.0,
                "rssMb": 150.0,
                "gpuCount": None,
                "gpuUtilPercent": None,
                "vramUsedGb": None,
                "vramTotalGb": None,
                "loadedModels": [{"name": "m1:latest", "sizeGb": 1.0, "vramGb": 0.5}],
            }
        )


def test_the_system_metrics_fragment_polls_only_while_running(client, spec):
    running = client.post("/api/runs", json=spec).get_json()["runId"]
    fragment = soup(client.get(f"/runs/{running}/system-metrics", headers=HX))
    assert fragment.select_one("#run-sysmetrics")["hx-trigger"] == "every 5s"
    client.post(f"/api/runs/{running}/stop")
    fragment = soup(client.get(f"/runs/{running}/system-metrics", headers=HX))
    assert not fragment.select_one("#run-sysmetrics").has_attr("hx-trigger")


def test_a_finished_runs_results_chart_its_system_metrics(client, app):
    run = finished_run("done", {"local/m1": [50, 60]})
    store_samples(run)
    page = soup(client.get("/runs/done/results"))
    section = page.select_one("#run-sysmetrics")
    assert "CPU 24 %" in section.select_one(".sys-peaks").text
    assert "m1:latest" in section.text
    for name in ("load", "memory", "throughput"):
        assert section.select_one(f"#sys-{name} svg") is not None


def test_a_repeated_runs_results_show_its_stability(client, app):
    finished_run("rep", {"local/m1": [[50, 90], [80, 80]]}, settings={"repeats": 2})
    section = (
        soup(client.get("/runs/rep/results")).select_one("#stability-h").find_parent("section")
    )
    assert "local/m1" in section.text and "50 %" in section.text  # one task of two spans 40


def test_a_finished_run_offers_to_be_pinned_as_baseline(client, app):
    finished_run("done", {"local/m1": [50]})
    form = soup(client.get("/runs/done/results")).select_one("form[action$='/baseline']")
    assert form.select_one("input[name=runId]")["value"] == "done"


def test_the_run_history_filters_queued_runs(client, spec):
    client.post("/runs", data=new_run_form(spec))
    client.post("/runs", data=new_run_form(spec, queue="1"))
    page = soup(client.get("/runs/?state=queued"))
    assert page.select_one("option[value=queued]") is not None


def test_a_template_webhook_is_never_in_the_page_source(client, spec):
    template = create_template({"name": "t", "spec": spec, "webhookUrl": "https://h.test/tok-5555"})
    assert crypto.decrypt(Template.get().webhook_url, f"template:{template.id}:webhook")
    for url in ("/templates/", f"/templates/{template.id}", f"/templates/{template.id}/edit"):
        assert "tok-5555" not in client.get(url).get_data(as_text=True), url


def test_the_patterns_page_shows_the_queued_state_and_the_system_metrics(client):
    page = soup(client.get("/_patterns/"))
    assert page.select_one("#run-sysmetrics svg") is not None
    assert any("Queued" in p.text for p in page.select(".run-progress--queued"))


def test_bad_json_and_other_bad_fields_are_shown_together(client, spec):
    response = client.post("/templates/", data={"name": "", "spec": "{", "cron": "61 * * * *"})
    page = soup(response)
    assert "not valid JSON" in page.select_one("#spec-error").text
    assert page.select_one("#name-error") is not None
    assert page.select_one("#schedule-cron-error") is not None
