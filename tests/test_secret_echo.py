"""A server that echoes the request's secret headers back, in every encoding, leaks nothing.

The fake answers 401 (and a 200 whose answer quotes the key) with the headers it received as
they are, JSON-escaped with `\\/`, URL-encoded, and the Basic header decoded to `user:pass`, in
a body long enough that a cut at 200 characters falls inside the key. The secret is then looked
for in the database and WAL bytes, the log, the API, the pages and the exports.
"""

import base64
import json
import logging
import sqlite3
from pathlib import Path
from urllib.parse import quote

import pytest

from app.catalog.providers import create_provider
from app.db.connection import database
from app.providers.redaction import redact
from tests.engine_helpers import FakeClock
from tests.engine_helpers import call_kind
from tests.engine_helpers import drive
from tests.engine_helpers import make_provider
from tests.engine_helpers import make_tasks
from tests.engine_helpers import serve_models
from tests.engine_helpers import start_run

KEY = "sk-ab/cd+EVILSECRET/xyz0123456789"
PASSWORD = "pa/ss+HUSHHUSH"
BASIC = base64.b64encode(f"alice:{PASSWORD}".encode()).decode()
# What must never show up, in any of the forms the fake echoes.
MARKERS = ("EVILSECRET", "HUSHHUSH", BASIC, BASIC.rstrip("="))


def echo_body(headers):
    """The headers the server got, echoed every way a careless server might: a JSON body
    whose encoder escapes every `/` as `\\/` (PHP's default), holding the key as it is,
    URL-encoded (both cases), the Basic header and its decoded `user:pass`."""
    key = headers.get("X-Api-Key", "")
    basic = headers.get("Authorization", "").split(" ", 1)[-1]
    decoded = base64.b64decode(basic).decode() if basic else ""
    body = {
        "error": {
            # Long enough that the 200-character snippet ends inside the key.
            "message": "unauthorized: " + "x" * 170 + f" key {key} rejected",
            "urlencoded": quote(key, safe=""),
            "lower_urlencoded": quote(key, safe="").lower(),
            "basic": f"Basic {basic}",
            "credentials": decoded,
            "password": quote(decoded.split(":", 1)[-1], safe=""),
            "headers": dict(headers),
        }
    }
    return json.dumps(body).replace("/", "\\/")


def leaks(text):
    """The markers found in `text` (bytes or str)."""
    if isinstance(text, bytes):
        return [m for m in MARKERS if m.encode() in text or m.encode("utf-16-le") in text]
    return [m for m in MARKERS if m in text]


def test_redact_masks_every_encoding_a_server_may_echo():
    body = echo_body({"X-Api-Key": KEY, "Authorization": f"Basic {BASIC}"})
    assert "sk-ab\\/cd+EVILSECRET" in body  # the key really is echoed with escaped slashes
    masked = redact(body, [KEY, f"Basic {BASIC}"])
    assert leaks(masked) == [] and leaks(masked[:200]) == []


def test_the_cut_comes_after_the_mask():
    message = "x" * 190 + KEY
    masked = redact(message, [KEY])[:200]
    assert "EVILSECRET" not in masked and "sk-ab" not in masked


@pytest.fixture
def echo(fake):
    def responder(call):
        kind = call_kind(call)[0]
        if call["headers"].get("X-Api-Key") and kind == "answer":
            if "t0" in json.dumps(call["body"]):
                return {"status": 401, "body": echo_body(call["headers"])}
            return {"text": f"my key is {call['headers']['X-Api-Key']} and that is all"}
        return None

    fake.responder = responder
    return fake


@pytest.mark.sqlite_only  # reads the SQLite file and its WAL for the secret
def test_a_server_echoing_the_secret_leaks_it_nowhere(app, client, echo, caplog, tmp_path):
    caplog.set_level(logging.DEBUG)
    serve_models(echo, "m1", "judge")
    judge = make_provider(echo, name="judge")
    secret = create_provider(
        {
            "name": "echoing",
            "type": "OPENAI",
            "baseUrl": echo.url,
            "headers": [
                {"key": "X-Api-Key", "value": KEY, "isSecret": True},
                {"key": "Authorization", "value": f"Basic {BASIC}", "isSecret": True},
            ],
        }
    )
    run = start_run(judge, [(secret, "m1")], make_tasks(2))
    keeper = sqlite3.connect(app.config["DB"])  # keeps the WAL from being checkpointed away
    try:
        keeper.execute("SELECT count(*) FROM provider").fetchone()
        assert drive(dict(app.config), FakeClock())["state"] == "finished"
        # The key did reach the server, so the checks below are not vacuous.
        assert any(c["headers"].get("X-Api-Key") == KEY for c in echo.calls)
        rid = run.run_id
        items = client.get(f"/api/runs/{rid}/items").get_json()["items"]
        assert {i["status"] for i in items} == {"FAILED", "COMPLETED"}
        urls = [
            f"/api/runs/{rid}",
            f"/api/runs/{rid}/items",
            *[i["url"] for i in items],
            f"/api/runs/{rid}/logs",
            f"/api/runs/{rid}/results",
            "/api/providers",
            f"/runs/{rid}",
            f"/runs/{rid}/progress",
            f"/runs/{rid}/log",
            f"/runs/{rid}/events",
            f"/runs/{rid}/items",
            f"/runs/{rid}/results",
            f"/runs/{rid}/results/table",
            *[f"/runs/{rid}/items/{i['id']}" for i in items],
            f"/runs/{rid}/results.csv",
            f"/runs/{rid}/averages.csv",
            f"/runs/{rid}/results.md",
            f"/runs/{rid}/summary.json",
            f"/runs/{rid}/report.html",
            f"/settings/providers/{secret.id}",
        ]
        for url in urls:
            response = client.get(url)
            assert response.status_code == 200, url
            assert leaks(response.get_data(as_text=True)) == [], url
        tested = client.post(
            f"/api/providers/{secret.id}/test-inference", json={"model": "m1", "prompt": "t0"}
        )
        assert leaks(tested.get_data(as_text=True)) == []
        assert leaks(caplog.text) == []
        database.close()
        db = Path(app.config["DB"])
        wal = Path(f"{db}-wal")
        assert wal.exists() and wal.stat().st_size > 0
        assert leaks(db.read_bytes() + wal.read_bytes()) == []
    finally:
        keeper.close()
