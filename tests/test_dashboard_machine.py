"""The dashboard shows this machine now (what /api/system/metrics returns), and /api/runs takes
limit and offset."""

import pytest
from bs4 import BeautifulSoup

from tests.factories import make_run


def test_the_dashboard_asks_for_the_machine_after_it_is_shown(client):
    page = BeautifulSoup(client.get("/").get_data(as_text=True), "html.parser")
    machine = page.select_one("#machine")
    assert machine["hx-get"] == "/machine" and machine["hx-trigger"] == "load"


def test_the_machine_fragment_shows_cpu_ram_gpu_and_loaded_models(client):
    fragment = BeautifulSoup(client.get("/machine").get_data(as_text=True), "html.parser")
    terms = [dt.get_text() for dt in fragment.select("#machine dt")]
    assert terms == ["CPU", "RAM", "GPU memory", "Loaded models", "Running"]
    assert fragment.select_one("#machine")["hx-trigger"] == "every 10s"
    assert " GB" in fragment.get_text()


@pytest.fixture
def three_runs(app):
    for n in range(3):
        make_run(f"run-{n}")


def test_api_runs_limit_gives_that_many_newest_first(client, three_runs):
    body = client.get("/api/runs?limit=1").get_json()
    assert len(body) == 1


def test_api_runs_offset_skips_the_newest(client, three_runs):
    every = [r["runId"] for r in client.get("/api/runs").get_json()]
    page = [r["runId"] for r in client.get("/api/runs?limit=2&offset=1").get_json()]
    assert page == every[1:3]


@pytest.mark.parametrize(
    "query, field", [("limit=0", "limit"), ("limit=abc", "limit"), ("offset=-1", "offset")]
)
def test_a_bad_limit_or_offset_is_a_400_naming_it(client, three_runs, query, field):
    response = client.get(f"/api/runs?{query}")
    assert response.status_code == 400 and field in response.get_data(as_text=True)
