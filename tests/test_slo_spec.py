"""settings.slo in a run spec (runs/spec.py clean_slo): the API, the new-run form and a run
config check it by one rule, and a bad value is named by its field."""

import pytest

from app.db.models import Run
from app.errors import ValidationError
from app.runconfig import reader
from app.runs.spec import clean_settings
from tests.cli_helpers import write_config
from tests.test_web_dashboard import setup  # noqa: F401 - the fixture
from tests.test_web_dashboard import soup
from tests.test_web_dashboard import start_form


def errors_of(raw):
    errors = []
    clean_settings({"slo": raw}, errors)
    return {e["field"]: e["message"] for e in errors}


def test_an_slo_is_kept_in_the_settings_as_numbers(app):
    errors = []
    settings = clean_settings({"slo": {"ttftP90Ms": "500", "minScore": 70}}, errors)
    assert errors == [] and settings["slo"] == {"ttftP90Ms": 500.0, "minScore": 70.0}


@pytest.mark.parametrize("key", ["ttftP90Ms", "itlP90Ms", "e2eP95Ms"])
@pytest.mark.parametrize("value", [0, -5, "fast", float("inf"), True])
def test_a_latency_bound_that_is_not_a_positive_number_is_named(app, key, value):
    message = errors_of({key: value})[f"settings.slo.{key}"]
    assert message.startswith("must be a positive number")


def test_a_min_score_outside_0_to_100_is_named(app):
    assert errors_of({"minScore": 101}) == {
        "settings.slo.minScore": "must be a number from 0 to 100"
    }


def test_an_unknown_slo_key_is_named(app):
    assert "settings.slo.ttftP50Ms" in errors_of({"ttftP50Ms": 100})


def test_an_slo_that_is_not_an_object_is_named(app):
    assert "settings.slo" in errors_of(500)


def test_the_api_answers_a_bad_slo_with_400_naming_the_field(client, setup):  # noqa: F811
    body = client.post(
        "/api/runs",
        json={
            "judgeProviderId": setup["pid"],
            "judgeModel": "m1",
            "targets": [{"providerId": setup["pid"], "model": "m1"}],
            "collectionIds": [setup["cid"]],
            "settings": {"slo": {"ttftP90Ms": -1}},
        },
    )
    assert body.status_code == 400
    (error,) = body.get_json()["errors"]
    assert error["field"] == "settings.slo.ttftP90Ms"
    assert error["path"] == ["settings", "slo", "ttftP90Ms"]
    assert Run.select().count() == 0


def test_the_form_starts_a_run_with_its_slo(client, setup):  # noqa: F811
    form = start_form(setup, **{"slo.ttftP90Ms": "500", "slo.minScore": "70"})
    assert client.post("/runs", data=form).status_code == 302
    assert Run.get().settings["slo"] == {"ttftP90Ms": 500.0, "minScore": 70.0}


def test_the_form_shows_a_bad_slo_beside_its_input(client, setup):  # noqa: F811
    response = client.post("/runs", data=start_form(setup, **{"slo.e2eP95Ms": "-3"}))
    assert response.status_code == 400
    page = soup(response)
    assert page.find(id="slo-e2eP95Ms-error").text.startswith("must be a positive number")
    assert page.find("input", attrs={"name": "slo.e2eP95Ms"})["aria-invalid"] == "true"
    assert page.select_one("details.advanced").has_attr("open")


def _plan(path):
    return reader.load(path, environ={"FAKE_KEY": "k"})


def test_a_run_config_sets_the_slo(app, tmp_path, fake):
    plan = _plan(write_config(tmp_path, fake, slo={"ttft_p90_ms": 500, "min_score": 70}))
    assert plan.settings["slo"] == {"ttftP90Ms": 500.0, "minScore": 70.0}


def test_a_run_config_takes_the_api_spelling_of_the_slo_too(app, tmp_path, fake):
    plan = _plan(write_config(tmp_path, fake, slo={"itlP90Ms": 40}))
    assert plan.settings["slo"] == {"itlP90Ms": 40.0}


def test_a_run_config_with_a_bad_slo_names_its_key(app, tmp_path, fake):
    with pytest.raises(ValidationError) as info:
        _plan(write_config(tmp_path, fake, slo={"e2e_p95_ms": 0, "p99": 3}))
    fields = {e["field"] for e in info.value.errors}
    assert {"run.slo.e2e_p95_ms", "run.slo.p99"} <= fields
