"""JSON API: POST /api/runs/<id>/export, GET /api/runs/<id>/results, GET /api/compare."""

import json

import pytest

from app.db.models import FAILED
from tests.factories import add_item
from tests.factories import make_run


@pytest.fixture
def run(app):
    run, (t1, t2) = make_run("r-1", targets=[("local", "m1"), ("remote", "m2")])
    add_item(run, t1, "a", score=90, category="math")
    add_item(run, t1, "b", status=FAILED, error_stage="judge", error_msg="bad", answer="x")
    add_item(run, t2, "a", score=40, category="math")
    return run


@pytest.mark.parametrize(
    "body, filename, first_line",
    [
        (
            {"format": "CSV", "includeDetailed": True},
            "run-r-1-detailed.csv",
            "provider_name,model_name,task_id,task_name,task_status,spent_time_ms,tokens_generated,"
            "tokens_per_second,score,judge_reason,llm_response_text,error_msg,"
            "check_score,checks,auto_fail_reason,tool_calls,"
            "first_answer_ms,itl_p50_ms,itl_p90_ms,tpot_ms,queue_ms,sent_at,judge_score",
        ),
        (
            {"format": "CSV", "includeDetailed": False},
            "run-r-1-average.csv",
            "provider_name,model_name,avg_time_per_task_ms,avg_tokens_per_second,avg_score,"
            "tasks_count,composite_score",
        ),
        ({"format": "MD"}, "run-r-1.md", "# Run r-1"),
        ({"format": "HTML"}, "run-r-1-report.html", "<!doctype html>"),
    ],
)
def test_export_returns_the_file_with_content_disposition(client, run, body, filename, first_line):
    response = client.post("/api/runs/r-1/export", json=body)
    assert response.status_code == 200
    assert response.headers["Content-Disposition"] == f'attachment; filename="{filename}"'
    assert response.get_data(as_text=True).splitlines()[0] == first_line


@pytest.mark.parametrize(
    "fmt, content_type",
    [
        ("CSV", "text/csv; charset=utf-8"),
        ("MD", "text/markdown; charset=utf-8"),
        ("HTML", "text/html; charset=utf-8"),
        ("JSON", "application/json"),
        ("JSONL", "application/x-ndjson; charset=utf-8"),
    ],
)
def test_export_content_type_names_the_charset_once(client, run, fmt, content_type):
    response = client.post("/api/runs/r-1/export", json={"format": fmt})
    assert response.headers["Content-Type"] == content_type


def test_export_jsonl_is_results_jsonl_one_line_per_item(client, run):
    response = client.post("/api/runs/r-1/export", json={"format": "JSONL"})
    assert response.headers["Content-Disposition"] == 'attachment; filename="run-r-1-results.jsonl"'
    lines = [json.loads(line) for line in response.get_data(as_text=True).splitlines()]
    assert len(lines) == 3 and {line["taskId"] for line in lines} == {"a", "b"}


def test_export_json_is_the_summary(client, run):
    response = client.post("/api/runs/r-1/export", json={"format": "json"})
    summary = json.loads(response.get_data(as_text=True))
    assert summary["runId"] == "r-1"
    assert summary["failures"]["judge"] == 1


@pytest.mark.parametrize(
    "body, field",
    [
        ({"format": "XLS"}, "format"),
        ({}, "format"),
        ({"format": 3}, "format"),
        ({"format": "CSV", "includeDetailed": "yes"}, "includeDetailed"),
    ],
)
def test_export_bad_body_is_400_naming_the_field(client, run, body, field):
    response = client.post("/api/runs/r-1/export", json=body)
    assert response.status_code == 400
    assert [e["field"] for e in response.get_json()["errors"]] == [field]


def test_export_without_json_body_is_400(client, run):
    response = client.post(
        "/api/runs/r-1/export", data="format=CSV", content_type="application/x-www-form-urlencoded"
    )
    assert response.status_code == 400
    assert response.get_json()["errors"][0]["field"] == "body"


def test_export_unknown_run_is_404(client, app):
    response = client.post("/api/runs/nope/export", json={"format": "CSV"})
    assert response.status_code == 404
    assert "nope" in response.get_json()["error"]


def test_results_json_has_averages_and_breakdowns(client, run):
    data = client.get("/api/runs/r-1/results").get_json()
    assert data["runId"] == "r-1"
    assert [m["label"] for m in data["models"]] == ["local/m1", "remote/m2"]
    m1 = data["models"][0]
    assert (m1["avgScore"], m1["failedJudge"], m1["scoreCi95"]) == (90, 1, [90, 90])
    assert data["breakdowns"]["category"][0]["key"] == "general"
    assert data["breakdowns"]["category"][1]["models"][1]["avgScore"] == 40


def test_results_json_unknown_run_is_404(client, app):
    assert client.get("/api/runs/nope/results").status_code == 404


def test_compare_api(client, run):
    other, (t1,) = make_run("r-2", targets=[("local", "m1")])
    add_item(other, t1, "a", score=70)
    data = client.get("/api/compare?a=r-1&b=r-2").get_json()
    assert data["a"]["runId"] == "r-1" and data["b"]["runId"] == "r-2"
    assert data["models"][0]["scoreDelta"] == -20
    assert data["onlyInA"] == ["remote/m2"]
    assert "bootstrap CI" in data["method"] and "sign test" in data["method"]


def test_compare_api_requires_both_runs(client, run):
    response = client.get("/api/compare?a=r-1")
    assert response.status_code == 400
    assert [e["field"] for e in response.get_json()["errors"]] == ["b"]
