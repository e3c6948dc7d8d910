"""The layout's active run is looked up only when a template shows it, once per request."""

import app.web as web
from app.runs.queries import active_run
from tests.factories import make_run


def _count_active_run(monkeypatch):
    calls = []
    real = active_run
    monkeypatch.setattr(web, "active_run", lambda: calls.append(1) or real())
    return calls


def test_a_page_looks_the_active_run_up_once(client, monkeypatch):
    make_run("run-live", status="PENDING", control="running")
    calls = _count_active_run(monkeypatch)
    page = client.get("/")
    assert page.status_code == 200 and b"run-live" in page.data
    assert calls == [1]


def test_a_fragment_without_it_does_not_look_it_up(client, monkeypatch):
    make_run("run-live", status="PENDING", control="running")
    calls = _count_active_run(monkeypatch)
    assert client.get("/runs/run-live/log").status_code == 200
    assert calls == []


def test_a_provider_id_sqlite_cannot_hold_is_404(client):
    assert client.get(f"/new-run/providers/{2**64}/models").status_code == 404
