"""Fixtures: a fresh app on a temp SQLite file per test, the scheduler off, a fixed test key."""

import base64
import logging
import os

import pytest

from app import create_app
from app.db import database

TEST_KEY_B64 = base64.b64encode(b"k" * 32).decode()


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    """No LLMBENCH_* from the developer's shell leaks into a test."""
    for name in list(os.environ):
        if name.startswith("LLMBENCH_"):
            monkeypatch.delenv(name)


def make_app(tmp_path, **overrides):
    config = {
        "TESTING": True,
        "DB": str(tmp_path / "test.db"),
        "MASTER_KEY_BASE64": TEST_KEY_B64,
        "SCHEDULER_ENABLED": False,
        "LOAD_DEFAULTS": False,
        "WTF_CSRF_ENABLED": False,
        "SECRET_KEY": "test",
        # No sampler thread writing beside a test (tests that sample turn it on themselves).
        "SYSMETRICS_SECONDS": 0,
    }
    config.update(overrides)
    return create_app(config)


@pytest.fixture
def app(tmp_path):
    app = make_app(tmp_path)
    # No connection_context here: each request's teardown closes the connection, and
    # Peewee reopens it on the next query (autoconnect) for code called directly by a test.
    yield app
    if not database.is_closed():
        database.close()
    logging.getLogger().handlers[:] = [
        h for h in logging.getLogger().handlers if not isinstance(h, logging.FileHandler)
    ]


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def runner(app):
    return app.test_cli_runner()


@pytest.fixture(scope="session")
def fake_server():
    """One real HTTP fake model server on 127.0.0.1 for the session; reset per test."""
    from tests.fakeserver import FakeServer

    server = FakeServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def fake(fake_server):
    """The fake server with a clean script and call log."""
    fake_server.reset()
    yield fake_server
    fake_server.reset()
