"""LLMBENCH_DB: a SQLite path, sqlite:///…, or postgresql://…; anything else is a clear error."""

import socket

import pytest
from click.testing import CliRunner
from peewee import OperationalError

from app.cli import main
from app.db import urls as dburl
from app.db.pg_sql import pg_placeholders
from app.db.urls import DatabaseUrlError
from app.db.urls import mask_password
from app.db.urls import parse
from app.factory import create_app
from tests.conftest import TEST_KEY_B64

ISSUE_URL = "postgresql://postgres@127.0.0.1:5432/llmbench"


def closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_plain_path_is_a_sqlite_file():
    target = parse("instance/llmbench.db", environ={})

    assert (target.kind, target.path) == ("sqlite", "instance/llmbench.db")


@pytest.mark.parametrize(
    "url, path",
    [("sqlite:///rel/bench.db", "rel/bench.db"), ("sqlite:////abs/bench.db", "/abs/bench.db")],
)
def test_a_sqlite_url_names_its_file(url, path):
    assert parse(url, environ={}).path == path


def test_a_postgres_url_gives_libpq_its_parts():
    target = parse("postgresql://bench:p%40ss@db.lan:5433/llmbench?sslmode=require", environ={})

    assert target.is_postgres
    assert target.params == {
        "dbname": "llmbench",
        "host": "db.lan",
        "port": 5433,
        "user": "bench",
        "password": "p@ss",
        "sslmode": "require",
    }


def test_the_password_may_come_from_LLMBENCH_DB_PASSWORD():
    target = parse(ISSUE_URL, environ={"LLMBENCH_DB_PASSWORD": "from-env"})

    assert target.params["password"] == "from-env"
    assert "from-env" not in target.masked


def test_without_a_password_libpq_reads_pgpass_itself():
    assert "password" not in parse(ISSUE_URL, environ={}).params


def test_the_password_is_masked_and_not_in_the_repr():
    target = parse("postgresql://bench:hunter2@db:5432/llmbench", environ={})

    assert target.masked == "postgresql://bench:****@db:5432/llmbench"
    assert "hunter2" not in repr(target)


def test_mask_password_leaves_a_url_without_one_as_it_is():
    assert mask_password(ISSUE_URL) == ISSUE_URL


@pytest.mark.parametrize("value", ["mysql://u:hunter2@db/llmbench", "http://db/x", "sqlite:/x"])
def test_another_scheme_is_an_error_naming_LLMBENCH_DB(value):
    with pytest.raises(DatabaseUrlError) as caught:
        parse(value, environ={})

    assert "LLMBENCH_DB" in caught.value.message
    assert "hunter2" not in caught.value.message


def test_a_postgres_url_without_a_database_name_is_an_error():
    with pytest.raises(DatabaseUrlError, match="name the database"):
        parse("postgresql://bench@db:5432/", environ={})


def test_a_postgres_url_without_the_driver_names_the_fix(monkeypatch):
    monkeypatch.setattr(dburl, "driver_available", lambda: False)

    with pytest.raises(DatabaseUrlError, match=r"LLMBENCH_DB=.*psycopg\[binary\]"):
        parse(ISSUE_URL, environ={})


def app_config(db):
    return {"TESTING": True, "DB": db, "MASTER_KEY_BASE64": TEST_KEY_B64, "LOAD_DEFAULTS": False}


def test_the_issue_url_without_the_driver_fails_at_start_and_makes_no_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(dburl, "driver_available", lambda: False)

    with pytest.raises(DatabaseUrlError, match="LLMBENCH_DB"):
        create_app(app_config(ISSUE_URL))

    assert list(tmp_path.iterdir()) == []


def test_a_postgres_url_nobody_serves_fails_at_start_and_makes_no_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)

    with pytest.raises(OperationalError):
        create_app(app_config(f"postgresql://postgres@127.0.0.1:{closed_port()}/llmbench"))

    assert not (tmp_path / "postgresql:").exists()
    assert list(tmp_path.iterdir()) == []


def cli(tmp_path, db, *args):
    env = {"LLMBENCH_DB": db, "LLMBENCH_MASTER_KEY_BASE64": TEST_KEY_B64}
    return CliRunner().invoke(main, list(args), env=env)


def test_serve_with_an_unknown_scheme_exits_2_naming_LLMBENCH_DB(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)

    result = cli(tmp_path, "mysql://u:hunter2@db/llmbench", "serve")

    assert result.exit_code == 2
    assert "LLMBENCH_DB=mysql://u:****@db/llmbench" in result.output
    assert list(tmp_path.iterdir()) == []


def test_db_check_on_an_unreachable_server_masks_the_password(tmp_path):
    url = f"postgresql://bench:hunter2@127.0.0.1:{closed_port()}/llmbench"

    result = cli(tmp_path, url, "db", "check")

    assert result.exit_code == 1
    assert "bench:****@127.0.0.1" in result.output
    assert "hunter2" not in result.output


def test_db_check_on_sqlite_names_the_file_and_the_schema_version(tmp_path):
    result = cli(tmp_path, f"sqlite:///{tmp_path}/bench.db", "db", "check")

    assert result.exit_code == 0, result.output
    assert f"database: sqlite:///{tmp_path}/bench.db (sqlite)" in result.output
    assert "server version: SQLite 3." in result.output
    assert "schema version: " in result.output
    assert (tmp_path / "bench.db").exists()


def test_question_marks_become_psycopg_placeholders_outside_quotes():
    sql = "SELECT '?%', \"a?\" FROM t WHERE a = ? AND b LIKE 'x%'"

    assert pg_placeholders(sql) == "SELECT '?%%', \"a?\" FROM t WHERE a = %s AND b LIKE 'x%%'"
