"""The app on PostgreSQL: migrations, `llmbench db check` and `db copy`, write transactions.

Every test starts a real PostgreSQL (tests/pg_server.py, once per session) and skips with the
fix named when Debian's postgresql package or psycopg is missing. The API, exports and full
runs on PostgreSQL are the ALSO_ON_POSTGRES modules (conftest.py); `--db=postgres` runs them all.
"""

import pytest
from click.testing import CliRunner
from peewee import OperationalError

from app.catalog.providers import provider_config
from app.cli import main
from app.db import migrations
from app.db.admin import copy_database
from app.db.connection import database
from app.db.models import Provider
from app.db.models import ProviderHeader
from app.db.models import Task
from app.db.postgres import PostgresDatabase
from app.errors import Conflict
from tests import pg_databases
from tests.conftest import TEST_KEY_B64
from tests.conftest import make_app
from tests.test_provider_store import SECRET
from tests.test_provider_store import provider_data

pytestmark = pytest.mark.postgres


@pytest.fixture
def pg_empty(pg_server_url):
    """A new, empty PostgreSQL database for this test (no tables)."""
    with pg_databases.fresh_database(pg_server_url) as url:
        yield url
        if not database.is_closed():
            database.close()


def test_migrations_create_the_whole_schema_on_an_empty_postgres(pg_empty):
    migrations.open_db(pg_empty)

    with database.connection_context():
        assert migrations.applied(database) == [fn.__name__ for fn in migrations.MIGRATIONS]
        columns = {c.name for c in database.get_columns("item")}
    assert {"claimed_until", "repeat", "answer_reused_from"} <= columns


def test_migrations_bring_an_older_postgres_schema_up_to_date(pg_empty):
    # An older release's database: the last migrations not applied, their columns absent.
    migrations.open_db(pg_empty)
    with database.connection_context():
        database.execute_sql('ALTER TABLE "run" DROP COLUMN "outputs"')
        database.execute_sql('ALTER TABLE "item" DROP COLUMN "answer_reused_from"')
        database.execute_sql(
            "DELETE FROM _migrations WHERE name IN ('m022_item_reused_from', 'm023_run_outputs')"
        )

    migrations.open_db(pg_empty)

    with database.connection_context():
        assert migrations.applied(database)[-2:] == ["m022_item_reused_from", "m023_run_outputs"]
        assert "outputs" in {c.name for c in database.get_columns("run")}
        assert "answer_reused_from" in {c.name for c in database.get_columns("item")}


def test_applying_migrations_twice_changes_nothing(pg_empty):
    migrations.open_db(pg_empty)
    migrations.open_db(pg_empty)

    with database.connection_context():
        assert migrations.schema_version(database) == len(migrations.MIGRATIONS)


def test_db_check_names_postgres_with_the_password_masked(pg_empty):
    url = pg_empty.replace("postgres@", "postgres:hunter2@")  # trust auth: any password

    result = CliRunner().invoke(
        main, ["db", "check"], env={"LLMBENCH_DB": url, "LLMBENCH_MASTER_KEY_BASE64": TEST_KEY_B64}
    )

    assert result.exit_code == 0, result.output
    assert "postgres:****@127.0.0.1" in result.output and "hunter2" not in result.output
    assert "server version: PostgreSQL " in result.output
    assert f"schema version: {len(migrations.MIGRATIONS)} of {len(migrations.MIGRATIONS)}" in (
        result.output
    )


def sqlite_with_a_secret(tmp_path):
    """A SQLite database holding a provider with a secret header and a task; its path."""
    app = make_app(tmp_path, DB=str(tmp_path / "source.db"))
    client = app.test_client()
    for name in ("first", "kept"):
        assert client.post("/api/providers", json=provider_data(name=name)).status_code == 201
    assert client.delete("/api/providers/1").status_code in (200, 204)
    with database.connection_context():
        Task.create(task_id="t1", category="c", difficulty="easy", question="Why?")
    database.close()
    return str(tmp_path / "source.db")


def test_copy_keeps_ids_and_secrets_readable_with_the_same_key(tmp_path, pg_empty):
    source = sqlite_with_a_secret(tmp_path)

    counts = copy_database(source, pg_empty)

    assert counts["provider"] == 1 and counts["task"] == 1
    with database.connection_context():
        provider = Provider.get(Provider.name == "kept")
        assert provider.id == 2  # id 1 was deleted before the copy: ids are kept, not renumbered
        stored = ProviderHeader.get(ProviderHeader.key == "Authorization").value
        assert SECRET not in stored  # still encrypted
        assert provider_config(provider).headers["Authorization"] == SECRET


def test_after_a_copy_new_rows_get_new_ids(tmp_path, pg_empty):
    copy_database(sqlite_with_a_secret(tmp_path), pg_empty)

    with database.connection_context():
        task = Task.create(task_id="t2", category="c", difficulty="easy", question="How?")
        assert task.id == 2


def test_copy_refuses_a_target_that_holds_rows(tmp_path, pg_empty):
    source = sqlite_with_a_secret(tmp_path)
    copy_database(source, pg_empty)

    with pytest.raises(Conflict, match="not empty"):
        copy_database(source, pg_empty)


def test_db_copy_command_copies_into_postgres(tmp_path, pg_empty):
    source = sqlite_with_a_secret(tmp_path)
    env = {"LLMBENCH_MASTER_KEY_BASE64": TEST_KEY_B64}

    result = CliRunner().invoke(main, ["db", "copy", "--from", source, "--to", pg_empty], env=env)

    assert result.exit_code == 0, result.output
    assert "copied " in result.output


def test_a_write_transaction_holds_off_another_until_it_ends(pg_empty):
    """atomic() is SQLite's one writer on PostgreSQL too: one advisory lock per transaction."""
    migrations.open_db(pg_empty)
    other = PostgresDatabase(
        pg_empty, options=pg_databases.bounded_options(lock_timeout_ms=200), connect_timeout=10
    )
    try:
        with database.atomic():
            with pytest.raises(OperationalError, match="lock timeout"):
                with other.atomic():
                    pass
        with other.atomic():  # free again once the first one ended
            other.execute_sql("SELECT 1")
    finally:
        other.close()
        database.close()


def test_a_deferred_transaction_takes_no_write_lock(pg_empty):
    migrations.open_db(pg_empty)
    other = PostgresDatabase(
        pg_empty, options=pg_databases.bounded_options(lock_timeout_ms=200), connect_timeout=10
    )
    try:
        with database.atomic():
            with other.atomic("DEFERRED"):
                other.execute_sql("SELECT 1")
    finally:
        other.close()
        database.close()


def _backend_pid(client):
    """The server session that answered a request (it reads the run list, then its pid)."""
    assert client.get("/api/runs").status_code == 200
    with database.connection_context():
        return database.execute_sql("SELECT pg_backend_pid()").fetchone()[0]


def test_requests_reuse_a_kept_connection(tmp_path, pg_empty):
    client = make_app(tmp_path, DB=pg_empty).test_client()

    assert _backend_pid(client) == _backend_pid(client)


def test_a_kept_connection_the_server_ended_is_replaced_not_handed_to_a_request(tmp_path, pg_empty):
    client = make_app(tmp_path, DB=pg_empty).test_client()
    first = _backend_pid(client)
    with pg_databases.admin_connection(pg_empty) as admin:  # a restart, an idle timeout
        admin.execute("SELECT pg_terminate_backend(%s)", (first,))

    assert client.get("/api/runs").status_code == 200
    assert _backend_pid(client) != first
