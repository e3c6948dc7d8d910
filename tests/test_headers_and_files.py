"""Headers and files: a Content-Security-Policy that fits our pages, no framing, no sniffing;
the SQLite file, its WAL and exports written 0600; a clear 413 past the upload limit; imports
of a big line-format file read as a stream."""

import io
import json
import os
import re
import sqlite3
import stat
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from click.testing import CliRunner

from app.cli import main
from app.db.connection import database
from app.db.models import Task
from app.web.security import DOCUMENT_POLICY
from app.web.security import PAGE_POLICY
from tests.conftest import TEST_KEY_B64
from tests.conftest import make_app
from tests.factories import add_item
from tests.factories import make_run

PAGES = ["/", "/runs/", "/settings/", "/settings/providers/", "/settings/tasks/", "/runs/r1"]


def mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.mark.parametrize("url", [*PAGES, "/api/status", "/nope"])
def test_every_response_carries_the_security_headers(client, url):
    make_run("r1")
    response = client.get(url)
    assert response.headers["X-Frame-Options"] == "DENY"
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    policy = response.headers["Content-Security-Policy"]
    assert policy == PAGE_POLICY and "frame-ancestors 'none'" in policy
    assert "'unsafe-inline'" not in policy and "'unsafe-eval'" not in policy


@pytest.mark.parametrize("url", PAGES)
def test_our_pages_hold_no_inline_script_style_or_handler(client, url):
    make_run("r1")
    page = BeautifulSoup(client.get(url).text, "html.parser")
    assert all(s.get("src") for s in page.find_all("script")), "inline <script>"
    assert not page.find_all("style"), "inline <style>"
    for element in page.find_all(True):
        assert "style" not in element.attrs, element.name
        assert not [a for a in element.attrs if a.startswith("on")], element.name
        href = element.get("href") or ""
        assert not href.startswith("javascript:"), href


def test_report_and_charts_get_the_document_policy(client):
    run, (t,) = make_run("r1")
    add_item(run, t, "t1", score=50.0)
    report = client.get("/runs/r1/report.html")
    report.get_data()
    assert report.headers["Content-Security-Policy"] == DOCUMENT_POLICY
    chart = client.get("/runs/r1/charts/score.svg")
    assert chart.headers["Content-Security-Policy"] == DOCUMENT_POLICY
    assert "script-src" not in DOCUMENT_POLICY  # default-src 'none': no script at all


def test_the_database_and_its_wal_are_owner_only(tmp_path):
    os.umask(0o022)
    app = make_app(tmp_path)
    db = Path(app.config["DB"])
    keeper = sqlite3.connect(db)  # keeps the WAL from being checkpointed away
    try:
        keeper.execute("SELECT count(*) FROM task").fetchone()
        with app.test_client() as client:
            client.post("/api/tasks", json={"taskId": "a", "category": "c", "question": "q?"})
        assert mode(db) == 0o600
        assert Path(f"{db}-wal").exists() and mode(f"{db}-wal") == 0o600
        assert mode(f"{db}-shm") == 0o600
    finally:
        keeper.close()
        database.close()


def test_an_existing_database_is_narrowed_to_owner_only(tmp_path):
    db = tmp_path / "old.db"
    db.touch(mode=0o644)
    make_app(tmp_path, DB=str(db))
    assert mode(db) == 0o600
    database.close()


def test_cli_exports_are_owner_only(app, tmp_path):
    os.umask(0o022)
    make_run("r1")
    Task.create(task_id="a", category="c", question="q?")
    database.close()
    env = {"LLMBENCH_DB": app.config["DB"], "LLMBENCH_MASTER_KEY_BASE64": TEST_KEY_B64}
    out = tmp_path / "out"
    assert CliRunner().invoke(main, ["report", "r1", "--out", str(out)], env=env).exit_code == 0
    tasks = tmp_path / "tasks.csv"
    tasks.write_text("old")
    tasks.chmod(0o644)
    assert (
        CliRunner().invoke(main, ["export", "--format", "csv", "-o", str(tasks)], env=env).exit_code
        == 0
    )
    for path in (out / "summary.json", out / "report.html", tasks):
        assert mode(path) == 0o600, path
    assert "task_id" in tasks.read_text()


def test_an_upload_past_the_limit_gets_a_clear_413(tmp_path):
    # A quarter MiB limit keeps the test's multipart body in memory (no temporary file).
    app = make_app(tmp_path, MAX_UPLOAD_MB=0.25)
    client = app.test_client()
    big = b'{"id": "x", "prompt": "' + b"a" * (300 * 1024) + b'"}\n'
    response = client.post(
        "/api/tasks/import",
        data={"file": (io.BytesIO(big), "big.jsonl")},
        headers={"X-Requested-With": "llmbench"},
        content_type="multipart/form-data",
    )
    assert response.status_code == 413
    data = response.get_json()
    assert "larger than 0.25 MiB" in data["error"] and "LLMBENCH_MAX_UPLOAD_MB" in data["error"]
    as_json = client.post("/api/tasks/import", json={"content": big.decode()})
    assert as_json.status_code == 413
    page = client.post(
        "/settings/import/",
        data={"file": (io.BytesIO(big), "big.jsonl")},
        content_type="multipart/form-data",
    )
    assert page.status_code == 413 and "larger than 0.25 MiB" in page.text
    assert Task.select().count() == 0
    database.close()


def test_the_default_upload_limit_is_64_mib(app):
    assert app.config["MAX_CONTENT_LENGTH"] == 64 * 1024 * 1024


def seed004_line(task_id, prompt="q"):
    """One strict seed 004 JSONL task (every required key present)."""
    return json.dumps(
        {
            "id": task_id,
            "category": "c",
            "difficulty": "easy",
            "scenario": [],
            "prompt": prompt,
            "rubric": [],
            "auto_fail": [],
        }
    )


def jsonl_lines(n, bad_at=None):
    lines = [seed004_line(f"t{i}", "q" if i != bad_at else "") for i in range(n)]
    return ("\n".join(lines) + "\n").encode()


def test_a_big_jsonl_upload_is_imported_from_its_stream(client):
    response = client.post(
        "/api/tasks/import",
        data={"file": (io.BytesIO(jsonl_lines(3000)), "bank.jsonl"), "collection": "bank"},
        headers={"X-Requested-With": "llmbench"},
        content_type="multipart/form-data",
    )
    assert response.status_code == 201, response.get_json()
    assert response.get_json()["created"] == 3000
    assert Task.select().count() == 3000


def test_a_streamed_import_is_all_or_nothing_with_the_bad_line_named(client):
    response = client.post(
        "/api/tasks/import",
        data={"file": (io.BytesIO(jsonl_lines(3000, bad_at=2500)), "bank.jsonl")},
        headers={"X-Requested-With": "llmbench"},
        content_type="multipart/form-data",
    )
    assert response.status_code == 400
    (error,) = response.get_json()["errors"]
    assert error["line"] == 2501 and error["file"] == "bank.jsonl"
    assert Task.select().count() == 0


def test_a_streamed_import_finds_a_task_id_given_twice(client):
    text = "\n".join([seed004_line("a"), seed004_line("b"), seed004_line("a", "r")]).encode()
    response = client.post(
        "/api/tasks/import",
        data={"file": (io.BytesIO(text), "dup.jsonl")},
        headers={"X-Requested-With": "llmbench"},
        content_type="multipart/form-data",
    )
    assert response.status_code == 400
    assert re.search(r"given twice \(first at line 1\)", response.get_json()["error"])
    assert Task.select().count() == 0
