"""A secret header value never appears in the SQLite files, the logs, the API or the HTML."""

import logging
import sqlite3
from pathlib import Path

import pytest
from bs4 import BeautifulSoup

from app.db.connection import database
from tests.test_provider_store import closed_port_url

SECRET_VALUE = "sk-live-7Qx9Zr2Lm4Np8Vt6"
AUTH = f"Bearer {SECRET_VALUE}"


def sqlite_bytes(app):
    """The database file and its -wal/-shm companions, as raw bytes."""
    db = Path(app.config["DB"])
    files = [p for p in (db, Path(f"{db}-wal"), Path(f"{db}-shm")) if p.exists()]
    assert db in files
    return b"".join(p.read_bytes() for p in files)


@pytest.mark.sqlite_only  # ends by reading the SQLite file's bytes
def test_a_secret_header_is_nowhere_but_on_the_wire(app, client, fake, caplog):
    caplog.set_level(logging.DEBUG)
    fake.models = ["m1"]
    created = client.post(
        "/api/providers",
        json={
            "name": "secret-provider",
            "type": "OPENAI",
            "baseUrl": fake.url,
            "headers": [{"key": "Authorization", "value": AUTH, "isSecret": True}],
        },
    )
    assert created.status_code == 201
    pid = created.json["id"]
    down = client.post(
        "/settings/providers/new",
        data={
            "name": "down",
            "type": "OLLAMA",
            "baseUrl": closed_port_url(),
            "timeoutSeconds": "5",
            "maxConcurrency": "1",
            "headers-0-key": "Authorization",
            "headers-0-value": AUTH,
            "headers-0-isSecret": "1",
        },
    )
    assert down.status_code == 302
    down_id = client.get("/api/providers").json[0]["id"]
    # An edit that keeps the secret, and a failing edit that re-renders the form.
    client.put(
        f"/api/providers/{pid}",
        json={"headers": [{"key": "Authorization", "value": "", "isSecret": True}]},
    )
    failed = client.post(
        f"/settings/providers/{pid}/edit",
        data={
            "name": "secret-provider",
            "type": "OPENAI",
            "baseUrl": "not a url",
            "headers-0-key": "Authorization",
            "headers-0-value": "",
            "headers-0-isSecret": "1",
        },
    )
    assert failed.status_code == 400

    fake.enqueue("an answer with several words in it")
    fake.enqueue("model blew up", status=500)
    responses = [
        created,
        down,
        failed,
        client.get("/api/providers"),
        client.get(f"/api/providers/{pid}"),
        client.post(f"/api/providers/{pid}/test-models"),
        client.get(f"/api/providers/{pid}/models"),
        client.post(f"/api/providers/{pid}/test-inference", json={"model": "m1", "prompt": "hi"}),
        client.post(f"/api/providers/{pid}/test-inference", json={"model": "m1", "prompt": "hi"}),
        client.post(f"/api/providers/{down_id}/test-models"),
        client.post(
            f"/api/providers/{down_id}/test-inference", json={"model": "m", "prompt": "hi"}
        ),
        client.get("/settings/providers/"),
        client.get(f"/settings/providers/{pid}/edit"),
        client.get(f"/settings/providers/{pid}"),
        client.get(f"/settings/providers/{down_id}/models?refresh=1"),
        client.post(
            f"/settings/providers/{pid}/test/fragment", data={"model": "m1", "prompt": "hi"}
        ),
        client.post(f"/settings/providers/{down_id}/test", data={"model": "m", "prompt": "hi"}),
    ]

    # The secret did reach the model server, so the checks below are not vacuous.
    assert any(c["headers"].get("Authorization") == AUTH for c in fake.calls)
    listing = client.get("/settings/providers/").get_data(as_text=True)
    assert "****8Vt6" in BeautifulSoup(listing, "html.parser").get_text()
    for response in responses:
        assert SECRET_VALUE not in response.get_data(as_text=True), response.request.path
    assert SECRET_VALUE not in caplog.text
    assert all(SECRET_VALUE not in str(r.args) for r in caplog.records)
    database.close()
    raw = sqlite_bytes(app)
    assert b"Authorization" in raw  # the header name is stored in the clear
    assert SECRET_VALUE.encode() not in raw
    assert SECRET_VALUE.encode("utf-16-le") not in raw


@pytest.mark.sqlite_only  # SQLite's WAL file
def test_the_wal_file_holds_no_secret_before_a_checkpoint(app, client):
    db = Path(app.config["DB"])
    # A second connection keeps SQLite from folding the WAL back in when the app's closes.
    keeper = sqlite3.connect(db)
    try:
        keeper.execute("SELECT count(*) FROM provider").fetchone()
        response = client.post(
            "/api/providers",
            json={
                "name": "p",
                "type": "OPENAI",
                "baseUrl": "http://127.0.0.1:9",
                "headers": [{"key": "X-Api-Key", "value": SECRET_VALUE, "isSecret": True}],
            },
        )
        assert response.status_code == 201
        wal = Path(f"{db}-wal").read_bytes()
        assert b"X-Api-Key" in wal  # the write really is in the WAL
        assert SECRET_VALUE.encode() not in wal + db.read_bytes()
    finally:
        keeper.close()
