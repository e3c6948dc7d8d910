"""Defaults: created once on an empty database; reset restores them and keeps the user's data."""

import collections
import sys

import pytest
import yaml
from bs4 import BeautifulSoup
from click.testing import CliRunner

from app.catalog import defaults
from app.catalog.collections import add_tasks_to_collection
from app.catalog.collections import collection_tasks
from app.catalog.collections import create_collection
from app.catalog.collections import remove_task_from_collection
from app.catalog.providers import create_provider
from app.catalog.providers import delete_provider
from app.catalog.providers import list_providers
from app.catalog.providers import update_provider
from app.catalog.tasks import create_task
from app.catalog.tasks import delete_task
from app.catalog.tasks import update_task
from app.db.connection import database
from app.db.models import Collection
from app.db.models import CollectionTask
from app.db.models import Provider
from app.db.models import Task
from app.errors import ValidationError
from app.scoring.checks.spec import parse_checks
from tests.conftest import TEST_KEY_B64
from tests.conftest import make_app


def bank(n=12, quick=10):
    tasks = [
        {
            "task_id": f"b_{i:02d}",
            "category": f"Cat{i % 3}",
            "subcategory": "s",
            "difficulty": ("easy", "medium", "hard")[i % 3],
            "question": f"Question {i}?",
            "excellent": "e",
            "good": "g",
            "pass": "p",
            "incorrect_direction": "wrong",
        }
        for i in range(n)
    ]
    tasks[0]["rubric"] = [{"id": "r1", "text": "t", "weight": 1, "max_score": 10}]
    return {"collections": {"quick": [t["task_id"] for t in tasks[:quick]]}, "tasks": tasks}


@pytest.fixture
def bank_file(tmp_path, monkeypatch):
    """A small built-in bank in place of app/data/builtin_tasks.yaml."""
    path = tmp_path / "bank.yaml"
    path.write_text(yaml.safe_dump(bank()))
    monkeypatch.setattr(defaults, "BUILTIN_TASKS_PATH", path)
    return path


def members(name):
    c = Collection.get(Collection.name == name)
    return sorted(t.task_id for t in collection_tasks(c))


def test_an_empty_database_gets_the_defaults(app, bank_file):
    assert defaults.ensure_defaults() is True
    assert [p.name for p in list_providers()] == [
        "local-ollama",
        "local-openai-compatible",
    ]
    ollama = Provider.get(Provider.name == "local-ollama")
    assert (ollama.type, ollama.base_url, ollama.models_endpoint) == (
        "OLLAMA",
        "http://localhost:11434",
        "/api/tags",
    )
    example = Provider.get(Provider.name == "local-openai-compatible")
    assert (example.type, example.base_url) == ("OPENAI", "http://127.0.0.1:18080")
    assert Task.select().count() == 12
    assert len(members("quick")) == 10 and len(members("full")) == 12
    assert Task.get(Task.task_id == "b_00").pass_answer == "p"


def test_ensure_defaults_runs_only_once(app, bank_file):
    defaults.ensure_defaults()
    assert defaults.ensure_defaults() is False
    assert Provider.select().count() == 2 and Task.select().count() == 12


def test_a_database_with_user_data_gets_no_defaults(app, bank_file):
    create_provider({"name": "mine", "type": "OLLAMA", "baseUrl": "http://h:1"})
    assert defaults.ensure_defaults() is False
    assert Task.select().count() == 0 and Provider.select().count() == 1


def test_the_factory_loads_defaults_on_first_start(tmp_path, bank_file):
    make_app(tmp_path, LOAD_DEFAULTS=True)
    with database.connection_context():
        assert Provider.select().count() == 2 and Task.select().count() == 12


def test_reset_restores_deleted_and_edited_built_ins_and_keeps_user_data(app, bank_file):
    defaults.ensure_defaults()
    mine = create_task({"taskId": "mine_1", "category": "Mine", "question": "q", "excellent": "a"})
    my_collection = create_collection("mine", "")
    add_tasks_to_collection(my_collection.id, [mine.id, "b_00"])
    quick = Collection.get(Collection.name == "quick")
    add_tasks_to_collection(quick.id, [mine.id])
    delete_task(Task.get(Task.task_id == "b_01").id)
    remove_task_from_collection(quick.id, Task.get(Task.task_id == "b_02").id)
    update_task(Task.get(Task.task_id == "b_03").id, {"question": "edited"})
    delete_provider(Provider.get(Provider.name == "local-ollama").id)
    create_provider({"name": "my-server", "type": "OPENAI", "baseUrl": "http://h:1"})

    summary = defaults.reset_defaults()

    assert "1 providers created" in summary and "1 built-in tasks created" in summary
    assert Task.get(Task.task_id == "b_03").question == "Question 3?"
    assert "b_01" in members("full") and "b_01" in members("quick")
    assert "b_02" in members("quick")
    assert "mine_1" in members("quick") and members("mine") == ["b_00", "mine_1"]
    assert Task.get_or_none(Task.task_id == "mine_1") is not None
    assert {p.name for p in Provider.select()} == {
        "local-ollama",
        "local-openai-compatible",
        "my-server",
    }


def test_reset_twice_changes_nothing_the_second_time(app, bank_file):
    defaults.reset_defaults()
    rows = CollectionTask.select().count()
    summary = defaults.reset_defaults()
    assert summary.startswith("defaults: 0 providers created, 0 built-in tasks created, 0 restored")
    assert CollectionTask.select().count() == rows


def test_reset_keeps_an_edited_default_provider(app, bank_file):
    defaults.reset_defaults()
    p = Provider.get(Provider.name == "local-ollama")
    update_provider(p.id, {"baseUrl": "http://gpu-box:11434"})
    defaults.reset_defaults()
    assert Provider.get_by_id(p.id).base_url == "http://gpu-box:11434"


def test_a_missing_bank_file_still_creates_the_providers(app, tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(defaults, "BUILTIN_TASKS_PATH", tmp_path / "missing.yaml")
    assert defaults.ensure_defaults() is True
    assert Provider.select().count() == 2 and Task.select().count() == 0
    assert "missing.yaml" in caplog.text


def test_a_broken_bank_names_the_task_and_field(app, tmp_path, monkeypatch):
    data = bank()
    data["tasks"][4]["difficulty"] = "legendary"
    path = tmp_path / "broken.yaml"
    path.write_text(yaml.safe_dump(data))
    monkeypatch.setattr(defaults, "BUILTIN_TASKS_PATH", path)
    with pytest.raises(ValidationError) as info:
        defaults.reset_defaults()
    assert info.value.errors[0]["field"] == "tasks[4].difficulty"
    assert info.value.errors[0]["file"] == "broken.yaml"
    assert Provider.select().count() == 0


def test_a_broken_bank_does_not_stop_the_first_start(app, tmp_path, monkeypatch, caplog):
    data = bank()
    data["collections"]["quick"].append("no_such_task")
    path = tmp_path / "broken.yaml"
    path.write_text(yaml.safe_dump(data))
    monkeypatch.setattr(defaults, "BUILTIN_TASKS_PATH", path)
    assert defaults.ensure_defaults() is True
    assert Provider.select().count() == 2 and "no_such_task" in caplog.text


def test_the_settings_button_resets_and_flashes_the_summary(tmp_path, bank_file):
    app = make_app(tmp_path)
    client = app.test_client()
    page = BeautifulSoup(client.get("/settings/defaults").get_data(as_text=True), "html.parser")
    form = page.select_one("form[action='/settings/reset-defaults']")
    assert "Restore" in form["data-confirm"]
    response = client.post("/settings/reset-defaults", follow_redirects=True)
    flash = (
        BeautifulSoup(response.get_data(as_text=True), "html.parser")
        .select_one(".flash--success")
        .get_text()
    )
    assert "2 providers created" in flash and "12 built-in tasks created" in flash
    if not database.is_closed():
        database.close()


def test_the_cli_command_resets_defaults(tmp_path, bank_file, monkeypatch):
    from app.cli import main

    monkeypatch.setenv("LLMBENCH_DB", str(tmp_path / "cli.db"))
    monkeypatch.setenv("LLMBENCH_MASTER_KEY_BASE64", TEST_KEY_B64)
    result = CliRunner().invoke(main, ["reset-defaults"])
    assert result.exit_code == 0, result.output
    assert "2 providers created" in result.output
    if not database.is_closed():
        database.close()


# -- the real built-in bank (app/data/builtin_tasks.yaml) ----------------------------------


@pytest.fixture
def real_bank():
    path = defaults.BUILTIN_TASKS_PATH
    if not path.exists():
        pytest.skip("app/data/builtin_tasks.yaml not written yet")
    return defaults.load_builtin(path)


def test_the_built_in_bank_is_valid_and_big_enough(real_bank):
    tasks, quick = real_bank
    assert len(tasks) >= 50
    assert len({t["category"] for t in tasks}) >= 5
    assert {t["difficulty"] for t in tasks} == {"easy", "medium", "hard"}
    assert len(quick) == 10 and len(set(quick)) == 10
    assert len({t["task_id"] for t in tasks}) == len(tasks)


def test_every_built_in_task_has_references_and_a_direction(real_bank):
    tasks, _ = real_bank
    missing = [
        t["task_id"]
        for t in tasks
        if not (t["excellent"] and t["good"] and t["pass_answer"] and t["incorrect_direction"])
    ]
    assert missing == []
    assert sum(1 for t in tasks if t["rubric"]) >= 5


def test_every_category_has_tasks_of_several_difficulties(real_bank):
    tasks, _ = real_bank
    by_category = collections.defaultdict(set)
    for t in tasks:
        by_category[t["category"]].add(t["difficulty"])
    assert all(len(d) >= 2 for d in by_category.values())


def test_the_built_in_bank_loads_without_the_json_schema_library(monkeypatch):
    # A new database stores the bank on its first start: importing jsonschema to check its
    # three schemas was 0.13 s of a first `llmbench run`. None in sys.modules: importing fails.
    monkeypatch.setitem(sys.modules, "jsonschema", None)
    tasks, _ = defaults.load_builtin()
    schemas = [c for t in tasks for c in t["checks"] or () if c["type"] == "json-schema"]
    assert schemas  # the bank has some: they are stored as given


def test_every_json_schema_of_the_built_in_bank_passes_the_full_check(real_bank):
    # The check a new database leaves out (check_schemas=False), done here instead.
    tasks, _ = real_bank
    schemas = 0
    for task in tasks:
        for check in parse_checks(task["checks"] or [], has_reference=bool(task["excellent"])):
            if check.type == "json-schema":
                assert check.compiled is not None, task["task_id"]
                schemas += 1
    assert schemas >= 3
