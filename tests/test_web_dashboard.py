"""Dashboard: the new-run form (fragments, validation, start, 409), continue and results panels."""

import pytest
from bs4 import BeautifulSoup

from app.catalog.collections import add_tasks_to_collection
from app.catalog.collections import create_collection
from app.catalog.providers import create_provider
from app.catalog.tasks import create_task
from app.db.models import COMPLETED
from app.db.models import Run
from app.db.models import RunTarget
from app.runs import spec
from app.runs.control import pause_run
from app.runs.control import stop_run
from app.runs.state import run_state
from tests.conftest import make_app
from tests.factories import add_item
from tests.factories import make_run

HX = {"HX-Request": "true"}


def soup(response):
    return BeautifulSoup(response.data, "html.parser")


@pytest.fixture
def setup(app, fake):
    """A provider on the fake server (models m1, m2) and a collection 'quick' of two tasks."""
    fake.models = ["m1", "m2"]
    provider = create_provider({"name": "fake", "type": "OPENAI", "base_url": fake.url})
    tasks = [
        create_task(
            {
                "task_id": f"t{n}",
                "category": "math",
                "question": f"What is {n}+{n}?",
                "excellent": str(2 * n),
            }
        )
        for n in (1, 2)
    ]
    collection = create_collection("quick")
    add_tasks_to_collection(collection.id, [t.id for t in tasks])
    return {"pid": provider.id, "cid": collection.id}


def start_form(setup, **extra):
    pid = setup["pid"]
    form = {
        "judgeProviderId": pid,
        "judgeModel": "m1",
        "target": [f"{pid}:m1"],
        "collectionIds": setup["cid"],
        "name": "web",
    }
    form.update(extra)
    return form


def test_dashboard_shows_new_continue_and_results_panels(client, setup):
    page = soup(client.get("/"))
    assert page.find(id="new-run") and page.find(id="continue-runs")
    assert page.find(id="recent-results")


def test_dashboard_without_providers_points_to_settings(client):
    response = client.get("/")
    assert response.status_code == 200
    assert b"Add a provider in Settings" in response.data


def test_collections_are_listed_with_task_counts_and_quick_highlighted(client, setup):
    item = soup(client.get("/")).select_one(".pick-list__item--quick")
    assert "2 tasks" in item.get_text() and item.find("input", value=str(setup["cid"]))


def test_target_models_fragment_lists_server_models_as_checkboxes(client, setup):
    response = client.get(f"/new-run/providers/{setup['pid']}/models", headers=HX)
    root = soup(response).find(id=f"target-models-{setup['pid']}")
    values = [box["value"] for box in root.select("input[name=target]")]
    assert values == [f"{setup['pid']}:m1", f"{setup['pid']}:m2"]
    assert root["hx-target"] == "this" and root["hx-swap"] == "outerHTML"


def test_target_models_refresh_keeps_picked_models_and_their_params(client, setup):
    key = f"{setup['pid']}:typed-only"
    response = client.get(
        f"/new-run/providers/{setup['pid']}/models",
        query_string={"target": key, f"{key}#temperature": "0.3", "refresh": "1"},
        headers=HX,
    )
    page = soup(response)
    assert page.find("input", value=key).has_attr("checked")
    assert page.find("input", attrs={"name": f"{key}#temperature"})["value"] == "0.3"


def test_target_models_fragment_explains_a_server_that_is_down(client, app):
    provider = create_provider({"name": "down", "type": "OLLAMA", "base_url": "http://127.0.0.1:9"})
    response = client.get(f"/new-run/providers/{provider.id}/models", headers=HX)
    assert response.status_code == 200
    # Said calmly (grey, no error colour) with a retry, and the group's summary is told.
    note = soup(response).select_one("[data-unreachable]")
    assert "Not reachable: check that Ollama is running" in note.get_text(" ", strip=True)
    assert "field-note--error" not in note["class"]
    assert note.select_one("button").get_text(strip=True) == "Retry"
    assert soup(response).select_one(f"#group-status-{provider.id}").get_text() == (
        "not reachable, check that Ollama is running"
    )


def test_judge_models_fragment_fills_the_datalist(client, setup):
    response = client.get(
        "/new-run/judge-models", query_string={"judgeProviderId": setup["pid"]}, headers=HX
    )
    options = soup(response).select("#judge-model-options option")
    assert [o["value"] for o in options] == ["m1", "m2"]


def test_refresh_without_javascript_rerenders_the_form_with_models(client, setup):
    response = client.get(
        "/",
        query_string={
            "judgeProviderId": setup["pid"],
            "judgeModel": "m2",
            "refresh": "judge",
            "collectionIds": setup["cid"],
        },
    )
    page = soup(response)
    assert [o["value"] for o in page.select("#judge-model-options option")] == ["m1", "m2"]
    assert page.find(id="judgeModel")["value"] == "m2"
    assert page.find("input", attrs={"name": "collectionIds"}).has_attr("checked")


@pytest.mark.parametrize(
    "missing, field_id",
    [
        ("judgeModel", "judgeModel-error"),
        ("target", "targets-error"),
        ("collectionIds", "collectionIds-error"),
    ],
)
def test_start_without_a_required_pick_answers_400_naming_it(client, setup, missing, field_id):
    form = start_form(setup)
    form.pop(missing)
    response = client.post("/runs", data=form)
    assert response.status_code == 400
    assert soup(response).find(id=field_id)
    assert Run.select().count() == 0


def test_start_with_a_bad_param_answers_400_at_that_param(client, setup):
    key = f"{setup['pid']}:m1"
    response = client.post("/runs", data=start_form(setup, **{f"{key}#temperature": "9"}))
    assert response.status_code == 400
    field = soup(response).find("input", attrs={"name": f"{key}#temperature"})
    assert field["aria-invalid"] == "true" and field["value"] == "9"


def test_a_400_does_not_reload_the_models_over_its_messages(client, setup):
    key = f"{setup['pid']}:m1"
    page = soup(client.post("/runs", data=start_form(setup, **{f"{key}#seed": "x"})))
    group = page.find(id=f"target-models-{setup['pid']}").find_parent("details")
    assert group.has_attr("open") and not group.has_attr("hx-get")


def test_start_redirects_to_the_live_view(client, setup):
    key = f"{setup['pid']}:m1"
    response = client.post(
        "/runs", data=start_form(setup, **{f"{key}#temperature": "0.2", f"{key}#stop": "###, END"})
    )
    run = Run.get()
    assert response.status_code == 302
    assert response.headers["Location"].endswith(f"/runs/{run.run_id}")
    assert run.run_id.startswith("web-") and run.source == "web"
    assert RunTarget.get().params == {"temperature": 0.2, "stop": ["###", "END"]}


def test_each_provider_has_a_params_row_for_the_models_typed_by_name(client, setup):
    typed = soup(client.get("/")).find(id=f"extra_models_{setup['pid']}").find_parent("div")
    names = [i["name"] for i in typed.select(".extra-params input")]
    assert names == [
        f"extra_params_{setup['pid']}#{n}"
        for n in (
            "temperature",
            "top_p",
            "max_tokens",
            "seed",
            "stop",
            "max_seconds",
            "response_format",
            "tool_choice",
        )
    ]


def test_typed_models_get_the_params_of_their_row(client, setup):
    pid = setup["pid"]
    form = start_form(
        setup,
        target=[f"{pid}:m1"],
        **{
            f"{pid}:m1#temperature": "0.1",
            f"extra_models_{pid}": "m2",
            f"extra_params_{pid}#temperature": "0.7",
            f"extra_params_{pid}#max_tokens": "64",
        },
    )
    assert client.post("/runs", data=form).status_code == 302
    params = {t.model: t.params for t in RunTarget.select()}
    assert params == {"m1": {"temperature": 0.1}, "m2": {"temperature": 0.7, "max_tokens": 64}}


def test_a_bad_typed_model_param_answers_400_at_its_row(client, setup):
    pid = setup["pid"]
    form = start_form(setup, **{f"extra_models_{pid}": "m2", f"extra_params_{pid}#top_p": "5"})
    response = client.post("/runs", data=form)
    assert response.status_code == 400
    field = soup(response).find("input", attrs={"name": f"extra_params_{pid}#top_p"})
    assert field["aria-invalid"] == "true" and field["value"] == "5"
    assert field.find_parent("details").has_attr("open")
    assert Run.select().count() == 0


def test_a_model_picked_and_typed_is_one_target(client, setup):
    form = start_form(setup, **{f"extra_models_{setup['pid']}": "m1, m2"})
    client.post("/runs", data=form)
    assert sorted(t.model for t in RunTarget.select()) == ["m1", "m2"]


def test_another_profile_adds_a_second_row_of_the_same_model(client, setup):
    pid = setup["pid"]
    response = client.get(
        f"/new-run/providers/{pid}/models",
        query_string={"target": f"{pid}:m1", f"{pid}:m1#temperature": "0.2", "copy": f"{pid}:m1"},
        headers=HX,
    )
    root = soup(response).find(id=f"target-models-{pid}")
    picked = [box["value"] for box in root.select("input[name=target][checked]")]
    assert picked == [f"{pid}:m1", f"{pid}~2:m1"]
    kept = root.find("input", attrs={"name": f"{pid}:m1#temperature"})
    assert kept["value"] == "0.2"
    assert root.find("input", attrs={"name": f"{pid}~2:m1#label"}) is not None


def test_two_profiles_of_one_model_start_two_labelled_targets(client, setup):
    pid = setup["pid"]
    form = start_form(
        setup,
        target=[f"{pid}:m1", f"{pid}~2:m1"],
        **{
            f"{pid}:m1#temperature": "0.2",
            f"{pid}~2:m1#temperature": "0.9",
            f"{pid}~2:m1#label": "m1 hot",
        },
    )
    assert client.post("/runs", data=form).status_code == 302
    targets = RunTarget.select().order_by(RunTarget.position)
    assert [(t.model, t.params, t.label) for t in targets] == [
        ("m1", {"temperature": 0.2}, "m1 · temperature 0.2"),
        ("m1", {"temperature": 0.9}, "m1 hot"),
    ]


def test_two_profiles_with_the_same_params_answer_400_and_keep_the_form(client, setup):
    pid = setup["pid"]
    form = start_form(setup, target=[f"{pid}:m1", f"{pid}~2:m1"])
    response = client.post("/runs", data=form)
    assert response.status_code == 400
    assert "with these params is already targets[0]" in soup(response).find(id="targets-error").text
    boxes = soup(response).select(f"#target-models-{pid} input[name=target][checked]")
    assert [b["value"] for b in boxes] == [f"{pid}:m1", f"{pid}~2:m1"]
    assert Run.select().count() == 0


def test_a_second_start_answers_409_naming_the_active_run(client, setup):
    first = client.post("/runs", data=start_form(setup))
    active = Run.get()
    response = client.post("/runs", data=start_form(setup, name="again"))
    assert first.status_code == 302 and response.status_code == 409
    link = soup(response).select_one("#form-errors a")
    assert link["href"] == f"/runs/{active.run_id}" and Run.select().count() == 1


def test_engine_validation_errors_land_on_the_form(client, setup):
    response = client.post("/runs", data=start_form(setup, judgeProviderId="999"))
    assert response.status_code == 400
    assert "no provider with id 999" in soup(response).find(id="judgeProviderId-error").text


def test_continue_panel_lists_paused_and_stopped_runs_with_continue(client, setup):
    client.post("/runs", data=start_form(setup))
    run = Run.get()
    stop_run(run.run_id)
    panel = soup(client.get("/")).find(id="continue-runs")
    form = panel.find("form")
    assert run.run_id in panel.text and "stopped" in panel.text
    assert form["action"] == f"/runs/{run.run_id}/resume"


def test_continue_panel_counts_answers_waiting_for_the_judge_apart(client, app):
    run, (target,) = make_run("waiting", status="PENDING", control="paused")
    for n in range(3):
        add_item(run, target, f"w{n}", status="WAITING_FOR_JUDGE", answer="a")
    add_item(run, target, "done", score=70.0)
    add_item(run, target, "new", status="NEW")
    counts = soup(client.get("/")).find(id="continue-runs").select_one(".run-list__counts").text
    assert "4 / 5 answered" in " ".join(counts.split())
    assert "1 / 5 judged" in " ".join(counts.split())


def test_continue_panel_sends_a_budget_halted_run_to_raise_its_budget(client, app):
    make_run(
        "spent",
        status="PENDING",
        control="paused",
        control_reason="budget reached: spent $1.0000 of the $1.0000 limit",
    )
    panel = soup(client.get("/")).find(id="continue-runs")
    assert panel.find("form") is None
    assert panel.find("a", string="Raise budget…")["href"].startswith("/runs/spent")


def test_continue_button_resumes_and_goes_to_the_live_view(client, setup):
    client.post("/runs", data=start_form(setup))
    run = Run.get()
    pause_run(run.run_id)
    response = client.post(f"/runs/{run.run_id}/resume")
    assert response.headers["Location"].endswith(f"/runs/{run.run_id}")
    assert run_state(Run.get()) == "running"


def test_results_panel_shows_recent_runs_with_their_average_score(client, app):
    run, (target,) = make_run("scored")
    add_item(run, target, "a", score=80.0)
    add_item(run, target, "b", score=60.0, status=COMPLETED)
    panel = soup(client.get("/")).find(id="recent-results")
    assert "scored" in panel.text and "70.0" in panel.text


def test_start_form_needs_a_csrf_token(tmp_path, fake):
    app = make_app(tmp_path, WTF_CSRF_ENABLED=True)
    client = app.test_client()
    page = soup(client.get("/"))
    assert page.find(id="new-run") is not None
    response = client.post("/runs", data={"judgeModel": "m1"})
    assert response.status_code == 400


def test_new_run_panel_names_the_active_run(client, app):
    from tests.factories import make_run

    run, _ = make_run("busy-1", targets=[("local", "m1")])
    run.status, run.control = "PENDING", "running"
    run.save()
    page = BeautifulSoup(client.get("/").get_data(as_text=True), "html.parser")
    note = page.select_one("#new-run-title ~ .flash")
    assert (
        note is not None and "busy-1" in note.get_text() and "one run at a time" in note.get_text()
    )


@pytest.mark.parametrize(
    "name, value", [("maxAttempts", "99"), ("questionLimit", "0"), ("maxBudgetUsd", "-1")]
)
def test_a_setting_out_of_range_is_named_beside_its_input(client, setup, name, value):
    response = client.post("/runs", data=start_form(setup, **{name: value}))
    assert response.status_code == 400
    page = soup(response)
    assert page.find(id=f"{name}-error").text == spec.SETTINGS[name][3]
    assert page.find("input", attrs={"name": name})["aria-invalid"] == "true"
    assert Run.select().count() == 0


def test_the_form_and_the_api_answer_a_bad_setting_with_the_same_rule(client, setup):
    form = soup(client.post("/runs", data=start_form(setup, maxAttempts="21")))
    api = client.post(
        "/api/runs",
        json={
            "judgeProviderId": setup["pid"],
            "judgeModel": "m1",
            "targets": [{"providerId": setup["pid"], "model": "m1"}],
            "collectionIds": [setup["cid"]],
            "settings": {"maxAttempts": 21},
        },
    ).get_json()
    (error,) = api["errors"]
    assert error["field"] == "settings.maxAttempts" and error["path"] == ["settings", "maxAttempts"]
    assert form.find(id="maxAttempts-error").text == error["message"]


def test_a_typed_models_bad_param_is_shown_in_its_providers_row(client, setup):
    pid = setup["pid"]
    form = start_form(setup, target=[], **{f"extra_models_{pid}": "m2"})
    form[f"extra_params_{pid}#top_p"] = "7"
    page = soup(client.post("/runs", data=form))
    field = page.find("input", attrs={"name": f"extra_params_{pid}#top_p"})
    assert field["aria-invalid"] == "true" and field["value"] == "7"


def test_recent_runs_show_their_targets_not_the_judge(client, app):
    make_run("r1", targets=(("p", "alpha-7b"), ("p", "beta-3b")), judge_model="judge-x")
    cell = soup(client.get("/")).select_one("#results-title").find_parent("section")
    text = cell.get_text(" ", strip=True)
    assert "p/alpha-7b p/beta-3b" in text and "judge-x" not in text  # each by its one name


def test_a_bad_load_step_is_named_beside_the_load_steps_input(client, setup):
    response = client.post("/runs", data=start_form(setup, loadSteps="1, 2, 0"))
    assert response.status_code == 400
    page = soup(response)
    assert "from 1 to 64" in page.find(id="loadSteps-error").text
    assert page.find("input", attrs={"name": "loadSteps"})["value"] == "1, 2, 0"
    assert Run.select().count() == 0


def test_load_steps_typed_in_the_form_make_a_run_with_steps(client, setup):
    response = client.post(
        "/runs", data=start_form(setup, loadSteps="1, 2", loadMode="concurrency")
    )
    assert response.status_code in (200, 302, 303)
    assert Run.get().settings["load"]["steps"] == [1, 2]
