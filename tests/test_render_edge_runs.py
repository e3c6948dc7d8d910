"""Runs with little or nothing to show still render: every page, fragment, chart, export and the
CLI report, for an empty, a fresh, an all-failed, a one-item and a paused run."""

import json

import pytest
from click.testing import CliRunner

from app.cli import main
from app.db.connection import database
from app.db.models import CONTROL_PAUSED
from app.db.models import FAILED
from app.db.models import NEW
from app.db.models import PENDING
from app.db.models import WAITING_FOR_JUDGE
from tests.conftest import TEST_KEY_B64
from tests.factories import add_item
from tests.factories import make_run

KINDS = ("empty", "fresh", "all_failed", "one_item", "paused")


def build(kind):
    """A run of the given kind (its run_id is the kind) next to a finished one to compare with."""
    if kind == "empty":
        make_run(kind, status=PENDING, targets=(("local", "m1"), ("local", "m2")))
    elif kind == "fresh":
        run, (t,) = make_run(kind, status=PENDING)
        add_item(run, t, "t1", status=NEW)
        add_item(run, t, "t2", status=NEW)
    elif kind == "all_failed":
        run, (t1, t2) = make_run(kind, targets=(("local", "m1"), ("local", "m2")))
        for target in (t1, t2):
            for key in ("t1", "t2"):
                add_item(
                    run,
                    target,
                    key,
                    status=FAILED,
                    error_stage="answer",
                    error_msg="connection refused (gave up after 3 attempts)",
                    attempts=3,
                )
    elif kind == "one_item":
        run, (t,) = make_run(kind)
        add_item(run, t, "t1", score=75.0)
    elif kind == "paused":
        run, (t,) = make_run(
            kind, status=PENDING, control=CONTROL_PAUSED, control_reason="paused by you"
        )
        add_item(run, t, "t1", score=60.0)
        add_item(run, t, "t2", status=WAITING_FOR_JUDGE, answer="an answer", time_taken_ms=900.0)
        add_item(run, t, "t3", status=NEW)
    other, (t,) = make_run("other")
    add_item(other, t, "t1", score=50.0)


def urls(rid):
    pages = [
        f"/runs/{rid}",
        f"/runs/{rid}/progress",
        f"/runs/{rid}/log",
        f"/runs/{rid}/events",
        f"/runs/{rid}/items",
        f"/runs/{rid}/results",
        f"/runs/{rid}/results/table",
        f"/runs/{rid}/results/averages",
        f"/runs/{rid}/results?model=m1",
        *[f"/runs/{rid}/charts/{name}.svg" for name in ("score", "speed", "latency", "category")],
        *[
            f"/runs/{rid}/charts/{name}.svg?size=narrow"
            for name in ("score", "speed", "latency", "category")
        ],
        f"/runs/{rid}/results.csv",
        f"/runs/{rid}/averages.csv",
        f"/runs/{rid}/results.md",
        f"/runs/{rid}/summary.json",
        f"/runs/{rid}/report.html",
        f"/compare?a={rid}&b=other",
        f"/compare?a=other&b={rid}",
        "/runs/",
        "/",
        f"/api/runs/{rid}",
        f"/api/runs/{rid}/items",
        f"/api/runs/{rid}/logs",
        f"/api/runs/{rid}/results",
        f"/api/compare?a={rid}&b=other",
        "/api/runs",
    ]
    return pages


@pytest.mark.parametrize("kind", KINDS)
def test_every_page_chart_and_export_renders(app, client, kind):
    build(kind)
    for url in urls(kind):
        response = client.get(url)
        assert response.status_code == 200, (url, response.status_code)
        text = response.get_data(as_text=True)
        assert "Traceback" not in text and "internal error" not in text.lower(), url
        if url.startswith("/api/") or url.endswith(".json"):
            json.loads(text)
        if url.endswith(".svg") or ".svg?" in url:
            assert text.lstrip().startswith("<svg"), url


@pytest.mark.parametrize("kind", ["all_failed", "one_item", "paused"])
def test_every_export_format_renders_through_the_api(app, client, kind):
    build(kind)
    for fmt in ("CSV", "MD", "JSON", "HTML"):
        response = client.post(
            f"/api/runs/{kind}/export", json={"format": fmt, "includeDetailed": True}
        )
        assert response.status_code == 200, fmt
        assert response.get_data(as_text=True), fmt  # streamed: read it all
        response.close()


@pytest.mark.parametrize("kind", KINDS)
def test_the_cli_report_writes_both_files(app, tmp_path, kind):
    build(kind)
    database.close()
    env = {"LLMBENCH_DB": app.config["DB"], "LLMBENCH_MASTER_KEY_BASE64": TEST_KEY_B64}
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["report", kind, "--out", str(out)], env=env)
    assert result.exit_code == 0, result.output + str(result.exception)
    assert json.loads((out / "summary.json").read_text())["runId"] == kind
    assert (out / "report.html").read_text().lstrip().lower().startswith("<!doctype")


def test_an_all_failed_run_reads_finished_nothing_completed_everywhere(app, client):
    build("all_failed")
    assert client.get("/api/runs/all_failed").get_json()["stateLabel"] == (
        "finished, nothing completed"
    )
    for url in ("/runs/all_failed", "/runs/all_failed/results", "/runs/all_failed/report.html"):
        assert "finished, nothing completed" in client.get(url).get_data(as_text=True), url
