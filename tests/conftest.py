"""Fixtures: a fresh app on a temp SQLite file per test, the scheduler off, a fixed test key.

The database: SQLite by default. `--db=postgres` (or LLMBENCH_TEST_DB=postgres) runs every test
that builds an app on a fresh PostgreSQL database (a copy of a migrated template on a throwaway
server, tests/pg_server.py); `--db=both` runs them on each. The modules in ALSO_ON_POSTGRES run
on both always, their PostgreSQL half marked `postgres` and skipped when the binaries are
missing (`-m "not postgres"` leaves it out).
"""

import base64
import fcntl
import gc
import logging
import os
import re
import shutil
import tempfile
import threading
import time
from pathlib import Path

import pytest

from app import crypto
from app.db import migrations
from app.db.connection import close_idle
from app.db.connection import database
from app.db.connection import init_db
from app.factory import create_app
from tests import pg_databases
from tests import pg_server
from tests import real_llm
from tests.keys import TEST_KEY_B64
from tests.ram_disk import ram_folder

# Fewer collections of the young generations: the tests allocate millions of short-lived rows,
# requests and templates, and the default (700 allocations) collected so often that it cost
# 5-10 % of the fast loop's CPU. Cycles are still collected, a little later.
gc.set_threshold(50_000, 20, 20)

# Every test's files (its SQLite database above all) on a RAM disk when there is one with room,
# unless TMPDIR names a place: pytest's tmp_path folders are made under tempfile's folder.
if not os.environ.get("TMPDIR") and ram_folder():
    tempfile.tempdir = ram_folder()


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    """No LLMBENCH_* from the developer's shell leaks into a test (nor a CI runner's job
    summary file: a run appends to $GITHUB_STEP_SUMMARY)."""
    for name in list(os.environ):
        if name.startswith("LLMBENCH_") or name == "GITHUB_STEP_SUMMARY":
            monkeypatch.delenv(name)


# Modules whose app tests also run on PostgreSQL in the default run.
ALSO_ON_POSTGRES = {
    "test_api_providers",
    "test_api_tasks",
    "test_api_exports",
    "test_claim_batches",
    "test_exports",
    "test_row_files_golden",
    "test_orchestrator",
    "test_postgres",
    "test_indexes",
    "test_item_counts",
    "test_speed_kept",
    "test_kept_figures",
    "test_export_streams",
    "test_run_creation",
    "test_ab_pairs_kept",
    "test_evaluate_kept",
    "test_compare_same_as_before",
    "test_warm_compares",
    "test_rewarm",
}
PG_TEMPLATE = "llmbench_migrated"
DB_CHOICES = ("sqlite", "postgres", "both")


def pytest_addoption(parser):
    parser.addoption(
        "--db",
        choices=DB_CHOICES,
        default=os.environ.get("LLMBENCH_TEST_DB") or "sqlite",
        help="database for tests that build an app: sqlite (default), postgres or both",
    )


def pytest_generate_tests(metafunc):
    if "db_backend" not in metafunc.fixturenames or "app" not in metafunc.fixturenames:
        return
    choice = metafunc.config.getoption("--db")
    module = metafunc.module.__name__.rsplit(".", 1)[-1]
    if metafunc.definition.get_closest_marker("sqlite_only"):
        return  # about the SQLite file itself (its bytes, its WAL): SQLite in every run
    if choice == "postgres":
        backends = ["postgres"]
    elif choice == "both" or module in ALSO_ON_POSTGRES:
        backends = ["sqlite", "postgres"]
    else:
        return
    metafunc.parametrize(
        "db_backend",
        [
            pytest.param(b, marks=[pytest.mark.postgres] if b == "postgres" else [])
            for b in backends
        ],
        indirect=True,
    )


MAX_WORKERS = 8


def pytest_xdist_auto_num_workers(config):
    """`-n auto` (pyproject's addopts): two workers per core, as most tests wait on HTTP, a
    database, a browser or a child process (on 2 cores the fast loop took 145 s with 3, 130 s
    with 4), at most MAX_WORKERS: each worker holds an app, and its own PostgreSQL server and
    chromium when it runs those tiers. PYTEST_XDIST_AUTO_NUM_WORKERS overrides it."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # xdist's own hook reads it
    return min(MAX_WORKERS, 2 * len(os.sched_getaffinity(0)))


# ---- tiers ----------------------------------------------------------------------------------
# Every test gets a tier marker here, so nobody has to remember one:
#   unit      no app, no database, no process: pure functions (`-m unit`)
#   app       builds an app (or runs the CLI) on a SQLite file, in this process
#   apart from the fast loop: browser, postgres, process (spawns processes: crash and lease
#   tests, CLI subprocesses), real_llm, slow.
# The fast loop after each change: `python -m pytest -m "unit or app"`.
APART = ("browser", "postgres", "process", "real_llm", "slow")
# Modules whose tests start other processes (workers killed mid-run, CLI subprocesses, tmux).
PROCESS_MODULES = {
    "test_crash",
    "test_labels_crash",
    "test_lease_processes",
    "test_schedules_processes",
    "test_cli_screen",
    "test_cli_startup",
    "test_cli_database_errors",
    "test_ci_script",
    "test_ci_example",
    "test_workers",
    "test_cli_beside_server",
    "test_wheel_install",
}
# Modules whose tests are many seconds each or minutes in all.
SLOW_MODULES = {
    "test_fuzz",  # Hypothesis on every endpoint and route: ~150 s of test time in all
    "test_wheel_install",  # builds the wheel and installs it into a fresh venv: ~1 min
}
# Single tests apart from an otherwise fast module (a test id, or its start for all params).
APART_TESTS = {
    "test_home.py::test_serve_writes_no_gunicorn_control_socket_into_the_users_home": "process",
    "test_cli.py::test_ctrl_c_stops_the_run_resumably_then_resume_finishes_it": "process",
    # Ticks a run through five slices on a full database, then to its end: ~1 min.
    "test_disk_full.py::test_a_run_whose_disk_fills_waits_fails_no_item_and_finishes_with_room": (
        "slow"
    ),
}
# Words in a module's source that mean its tests build an app, a database or run the CLI.
_BUILDS_APP = re.compile(r"\b(make_app|make_cli|cli_env|create_app|open_db|init_db|CliRunner)\b")
_module_builds_app = {}


def _builds_app(item):
    if "app" in item.fixturenames:
        return True
    path = item.path
    if path not in _module_builds_app:
        _module_builds_app[path] = bool(_BUILDS_APP.search(path.read_text()))
    return _module_builds_app[path]


def pytest_collection_modifyitems(config, items):
    for item in items:
        module = item.path.stem
        if item.path.parent.name == "browser":
            item.add_marker(pytest.mark.browser)
        if module in PROCESS_MODULES:
            item.add_marker(pytest.mark.process)
        if module in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)
        if module.startswith(("test_real_llm", "test_provider_real_llm")):
            item.add_marker(pytest.mark.real_llm)
        apart = APART_TESTS.get(item.nodeid.split("[", 1)[0].removeprefix("tests/"))
        if apart:
            item.add_marker(getattr(pytest.mark, apart))
        if not any(item.get_closest_marker(name) for name in APART):
            item.add_marker(pytest.mark.app if _builds_app(item) else pytest.mark.unit)


@pytest.fixture(scope="session")
def pg_server_url():
    """One throwaway PostgreSQL for the session, with a migrated template database."""
    status = pg_server.available()
    if not status:
        pytest.skip(status.reason)
    with pg_server.running_postgres() as url:
        template = pg_databases.create_database(url, PG_TEMPLATE)
        migrations.open_db(template)
        database.close()
        close_idle()  # no session left on the template: each test's copy is made from it
        yield url


_test_db = {}  # "url": the PostgreSQL database make_app uses for the current test


@pytest.fixture(autouse=True)
def db_backend(request):
    """Which database make_app uses for this test: "sqlite" or "postgres" (a fresh copy)."""
    backend = getattr(request, "param", "sqlite")
    if backend != "postgres":
        yield backend
        return
    server = request.getfixturevalue("pg_server_url")
    with pg_databases.fresh_database(server, template=PG_TEMPLATE) as url:
        _test_db["url"] = url
        try:
            yield backend
        finally:
            _test_db.pop("url", None)
            if not database.is_closed():
                database.close()


_sqlite_template = {}  # "path": a SQLite file migrated once in this process (see _fresh_sqlite)


def _fresh_sqlite(path):
    """A migrated SQLite file at `path`: a copy of one migrated once per test process.

    Migrating a new file costs ~0.1 s, copying a migrated one ~7 ms; open_db then finds every
    migration recorded and applies none. A file already at `path` (a test that made an old
    schema, or restarts an app on its database) is left alone, to be migrated as it is.
    """
    if path.exists():
        return
    if "path" not in _sqlite_template:
        folder = Path(tempfile.mkdtemp(prefix="llmbench-template-"))
        template = folder / "migrated.db"
        migrations.open_db(str(template))
        database.close()
        close_idle()  # the last connection checkpoints the WAL: the one file holds it all
        assert not Path(f"{template}-wal").exists(), "the template's WAL was not checkpointed"
        _sqlite_template["path"] = template
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(_sqlite_template["path"], path)  # keeps its 0600


def pytest_sessionfinish(session):
    template = _sqlite_template.pop("path", None)
    if template is not None:
        shutil.rmtree(template.parent, ignore_errors=True)


# The engine's threads a stopped run leaves behind (workers.py: _abandon) go on using the
# database a little; a new app binding another one closes their pooled connections under them.
ENGINE_THREADS = ("llmbench-worker-", "llmbench-run")
ENGINE_THREADS_GRACE = 30.0


def _wait_for_engine_threads():
    """Until the engine threads of an earlier test have ended (bounded)."""
    deadline = time.monotonic() + ENGINE_THREADS_GRACE
    for thread in threading.enumerate():
        if thread.name.startswith(ENGINE_THREADS) and thread is not threading.current_thread():
            thread.join(max(0.0, deadline - time.monotonic()))


def make_app(tmp_path, **overrides):
    _wait_for_engine_threads()
    if "DB" not in overrides and not _test_db.get("url"):
        _fresh_sqlite(tmp_path / "test.db")
    config = {
        "TESTING": True,
        "DB": _test_db.get("url") or str(tmp_path / "test.db"),
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


_shared = {}  # "app": (the app, its config as built), one per test process; see _shared_app


def _shared_app(tmp_path):
    """The `app` fixture's app: built once per test process, bound to this test's database.

    Building an app registers ~175 URL rules (~50 ms, a third of the fast loop's CPU), and the
    app holds no state of its own between requests: the database, the master key and the
    engine are process-wide. So each test gets the one app with its config as built (a test's
    changes to app.config are undone), the test key, and this test's fresh database bound,
    which is all a new app would differ in. Tests that need other config call make_app.
    """
    entry = _shared.get("app")
    if entry is None:
        app = make_app(tmp_path)
        _shared["app"] = (app, dict(app.config))
        return app
    app, config = entry
    _wait_for_engine_threads()
    url = _test_db.get("url")
    if not url:
        url = str(tmp_path / "test.db")
        _fresh_sqlite(tmp_path / "test.db")
    app.config.clear()
    app.config.update(config, DB=url)
    crypto.set_key(base64.b64decode(TEST_KEY_B64))
    # Bound, not migrated: the database is a copy of a migrated template (SQLite or PostgreSQL),
    # so open_db's checks and its look at the migrations ledger (~7 ms a test) would find
    # nothing to do.
    init_db(url)
    return app


@pytest.fixture
def app(tmp_path):
    app = _shared_app(tmp_path)
    # No connection_context here: each request's teardown closes the connection, and
    # Peewee reopens it on the next query (autoconnect) for code called directly by a test.
    yield app
    _wait_for_engine_threads()
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
def llm_model():
    """The model id the real llama.cpp server serves (tests/real_llm.py); skips when it is down."""
    model = real_llm.served_model()
    if model is None:
        pytest.skip(real_llm.SKIP_REASON)
    return model


@pytest.fixture(autouse=True)
def _one_real_llm_test_at_a_time(request, tmp_path_factory):
    """The real server has few slots: two workers' runs on it at once would find it busy and
    pause (an outage), which is not what those tests are about. One at a time per test session
    (a lock file beside the workers' temp folders, which every xdist worker shares)."""
    if request.node.get_closest_marker("real_llm") is None:
        yield
        return
    with open(tmp_path_factory.getbasetemp().parent / "real_llm.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


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
