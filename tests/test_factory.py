"""The app factory: config layering (defaults → env → test_config), instance path, no scheduler."""

from app.config import INSTANCE_PATH
from app.config import load
from app.db.connection import database
from app.factory import compile_templates
from app.factory import create_app
from tests.conftest import TEST_KEY_B64


def _app(**overrides):
    config = {
        "TESTING": True,
        "MASTER_KEY_BASE64": TEST_KEY_B64,
        "LOAD_DEFAULTS": False,
        "SECRET_KEY": "test",
    }
    config.update(overrides)
    app = create_app(config)
    if not database.is_closed():
        database.close()
    return app


def test_defaults_apply_without_env_or_overrides():
    cfg = load(environ={})
    assert cfg["HOST"] == "127.0.0.1" and cfg["PORT"] == 8080
    assert cfg["DB"].endswith("instance/llmbench.db")
    assert cfg["SCHEDULER_ENABLED"] is False


def test_env_values_are_read_and_typed():
    cfg = load(
        environ={
            "LLMBENCH_PORT": "9090",
            "LLMBENCH_MAX_ATTEMPTS": "5",
            "LLMBENCH_LEASE_SECONDS": "7.5",
        }
    )
    assert cfg["PORT"] == 9090 and cfg["MAX_ATTEMPTS"] == 5 and cfg["LEASE_SECONDS"] == 7.5


def test_llmbench_db_env_is_respected(tmp_path, monkeypatch):
    path = tmp_path / "from-env.db"
    monkeypatch.setenv("LLMBENCH_DB", str(path))
    app = _app()
    assert app.config["DB"] == str(path)
    assert path.exists()


def test_test_config_wins_over_env(tmp_path, monkeypatch):
    monkeypatch.setenv("LLMBENCH_DB", str(tmp_path / "env.db"))
    app = _app(DB=str(tmp_path / "test.db"))
    assert app.config["DB"] == str(tmp_path / "test.db")
    assert (tmp_path / "test.db").exists() and not (tmp_path / "env.db").exists()


def test_master_key_env_is_used(tmp_path, monkeypatch):
    from app import crypto

    monkeypatch.setenv("LLMBENCH_MASTER_KEY_BASE64", TEST_KEY_B64)
    create_app({"TESTING": True, "DB": str(tmp_path / "t.db"), "LOAD_DEFAULTS": False})
    database.close()
    assert crypto.get_key() == b"k" * 32


def test_instance_path_is_absolute_and_in_the_repo(app):
    assert app.instance_path == str(INSTANCE_PATH)
    assert INSTANCE_PATH.is_absolute()


def test_the_scheduler_is_off_in_tests(app):
    assert app.config["SCHEDULER_ENABLED"] is False


def test_every_settings_blueprint_is_registered(app):
    assert {"providers", "tasks", "collections", "settings", "api"} <= set(app.blueprints)


def test_compile_templates_puts_every_page_template_in_the_cache_before_a_view(app):
    names = app.jinja_env.list_templates()
    assert compile_templates(app) == len(names) > 50
    cached = {name for _loader, name in app.jinja_env.cache.keys()}
    assert set(names) <= cached
