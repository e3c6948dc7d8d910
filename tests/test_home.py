"""A home of its own: the database and its master key live in the home (LLMBENCH_HOME, the
per-user folder, or a checkout's instance/), the key beside the database it opens, and a
database whose key is missing or wrong refuses to start, naming both files."""

import base64
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from app import config
from app.catalog.providers import create_provider
from app.cli import main
from app.db.connection import database
from app.factory import create_app

OTHER_KEY = base64.b64encode(b"o" * 32).decode()


def _cli(env, *args):
    # No built-in tasks (~1 s a new database): nothing here needs them.
    env = {"LLMBENCH_LOAD_DEFAULTS": "0", **env}
    return CliRunner().invoke(main, [str(a) for a in args], env=env)


def _database_with_a_secret(db):
    """A database at `db` holding one secret header, its key generated beside it."""
    create_app({"TESTING": True, "DB": str(db), "LOAD_DEFAULTS": False, "SECRET_KEY": "t"})
    with database.connection_context():
        create_provider(
            {
                "name": "remote",
                "type": "OPENAI",
                "baseUrl": "http://127.0.0.1:9",
                "headers": [{"key": "Authorization", "value": "Bearer sk-x1234", "isSecret": True}],
            }
        )
    database.close()
    return db.parent / "master.key"


def test_llmbench_home_holds_the_database_and_its_config(tmp_path):
    (tmp_path / "config.py").write_text("PORT = 9191\n")
    cfg = config.load(environ={"LLMBENCH_HOME": str(tmp_path)})
    assert cfg["HOME"] == str(tmp_path)
    assert cfg["DB"] == str(tmp_path / "llmbench.db")
    assert cfg["PORT"] == 9191


def test_an_installed_tool_keeps_its_data_in_the_per_user_folder(tmp_path, monkeypatch):
    monkeypatch.setattr(config, "INSTANCE_PATH", tmp_path / "no-checkout" / "instance")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    cfg = config.load(environ={})
    assert cfg["DB"] == str(tmp_path / "data" / "llmbench" / "llmbench.db")


def test_a_checkout_with_instance_keeps_using_it():
    assert config.INSTANCE_PATH.is_dir()
    assert config.load(environ={})["DB"] == str(config.INSTANCE_PATH / "llmbench.db")


def test_the_key_is_written_beside_a_database_elsewhere_not_into_the_checkout(tmp_path):
    checkout_key = config.INSTANCE_PATH / "master.key"
    before = checkout_key.stat().st_mtime_ns if checkout_key.exists() else None
    db = tmp_path / "elsewhere" / "bench.db"
    result = _cli({"LLMBENCH_DB": str(db)}, "runs")
    assert result.exit_code == 0, result.output
    assert (db.parent / "master.key").exists()
    after = checkout_key.stat().st_mtime_ns if checkout_key.exists() else None
    assert after == before


def test_a_database_with_secrets_whose_key_is_missing_refuses_naming_both_files(tmp_path):
    db = tmp_path / "bench.db"
    key = _database_with_a_secret(db)
    key.unlink()
    result = _cli({"LLMBENCH_DB": str(db)}, "runs")
    assert result.exit_code == 1
    assert str(db) in result.stderr and str(key) in result.stderr
    assert "missing" in result.stderr and "Traceback" not in result.output
    assert not key.exists()  # never a silent new key


def test_a_database_whose_key_is_not_its_own_refuses_naming_both_files(tmp_path):
    db = tmp_path / "bench.db"
    key = _database_with_a_secret(db)
    key.write_text(OTHER_KEY + "\n")
    result = _cli({"LLMBENCH_DB": str(db)}, "runs")
    assert result.exit_code == 1
    assert str(db) in result.stderr and str(key) in result.stderr
    assert "does not open the secrets" in result.stderr


def test_serve_refuses_a_database_whose_key_is_missing(tmp_path):
    db = tmp_path / "bench.db"
    key = _database_with_a_secret(db)
    key.unlink()
    result = _cli({"LLMBENCH_DB": str(db)}, "serve", "--port", "1")
    assert result.exit_code == 3
    assert str(key) in result.stderr and "Traceback" not in result.output


def test_the_web_app_refuses_a_wrong_key_too(tmp_path):
    from app.crypto import KeyError_

    db = tmp_path / "bench.db"
    _database_with_a_secret(db)
    with pytest.raises(KeyError_, match="does not open the secrets"):
        create_app({"TESTING": True, "DB": str(db), "MASTER_KEY_BASE64": OTHER_KEY})
    database.close()


def test_a_wrong_master_key_path_is_one_line_not_a_traceback(tmp_path):
    env = {"LLMBENCH_DB": str(tmp_path / "x.db"), "LLMBENCH_MASTER_KEY_PATH": "/nope/master.key"}
    result = _cli(env, "runs")
    assert result.exit_code == 1
    assert result.stderr.strip().count("\n") == 0, result.stderr
    assert "LLMBENCH_MASTER_KEY_PATH (/nope/master.key) cannot be read" in result.stderr


def test_a_key_in_the_home_still_opens_a_database_moved_elsewhere(tmp_path, caplog):
    home = tmp_path / "home"
    db = tmp_path / "elsewhere" / "bench.db"
    key = _database_with_a_secret(db)
    home.mkdir()
    key.rename(home / "master.key")
    result = _cli({"LLMBENCH_HOME": str(home), "LLMBENCH_DB": str(db)}, "runs")
    assert result.exit_code == 0, result.output
    assert "move it beside the database" in caplog.text


def test_info_prints_home_database_key_version_and_schema(tmp_path):
    env = {"LLMBENCH_HOME": str(tmp_path)}
    before = json.loads(_cli(env, "info", "--json").stdout)
    assert not (tmp_path / "llmbench.db").exists()  # info creates nothing
    assert before["home"] == str(tmp_path) and before["schema"] is None
    assert _cli(env, "runs").exit_code == 0
    result = _cli(env, "info")
    assert result.exit_code == 0
    for line in (
        f"home:      {tmp_path}",
        f"database:  {tmp_path / 'llmbench.db'}",
        f"key file:  {tmp_path / 'master.key'} (present)",
        "version:   ",
        "schema:    m0",
    ):
        assert line in result.stdout, result.stdout
    assert "up to date" in result.stdout


def test_serve_writes_no_gunicorn_control_socket_into_the_users_home(tmp_path):
    from tests.serve_helpers import Served

    user_home = tmp_path / "user"
    user_home.mkdir()
    with Served(tmp_path / "lh", extra_env={"HOME": str(user_home)}) as served:
        assert served.get("/api/status").status_code == 200
    assert list(Path(user_home).iterdir()) == []
