"""`llmbench run` reads its dataset file once: each task is checked and stored in the same pass,
in the transaction that makes the run, so a problem anywhere (a bad line near the end, the
config after it, the run itself) leaves no run and no task behind."""

import json

import pytest
from click.testing import CliRunner

from app.cli import main
from app.datasets import streaming
from app.db.connection import close_idle
from app.db.connection import database
from app.db.models import Collection
from app.db.models import CollectionTask
from app.db.models import Item
from app.db.models import PendingItems
from app.db.models import Run
from app.db.models import Task
from app.runs.control import pause_run
from tests import pg_databases
from tests.cli_helpers import cli_env
from tests.cli_helpers import make_cli
from tests.cli_helpers import rows
from tests.cli_helpers import write_bank
from tests.cli_helpers import write_config

TASKS = 450  # more than lifecycle.FIRST_TASKS: the run's items are made as the engine goes


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def cli(request, tmp_path):
    """`llmbench` on a SQLite file, or on a fresh PostgreSQL database (LLMBENCH_DB=postgresql)."""
    if request.param == "sqlite":
        yield make_cli(tmp_path)
        return
    server = request.getfixturevalue("pg_server_url")
    with pg_databases.fresh_database(server, template="llmbench_migrated") as url:
        runner, env = CliRunner(), {**cli_env(tmp_path), "LLMBENCH_DB": url}
        yield lambda *args: runner.invoke(main, [str(a) for a in args], env=env)
        database.close()
        close_idle()


def spoil_line(bank, number):
    """Line `number` of the bank gets a prompt that is a number, not text."""
    lines = bank.read_text().splitlines()
    task = json.loads(lines[number - 1])
    lines[number - 1] = json.dumps({**task, "prompt": 5})
    bank.write_text("\n".join(lines) + "\n")


def test_a_run_reads_its_dataset_file_once(cli, tmp_path, fake, monkeypatch):
    reads = []
    real = streaming.text_lines
    monkeypatch.setattr(
        streaming, "text_lines", lambda *a: reads.append(1) or real(*a), raising=True
    )
    result = cli("run", "-c", write_config(tmp_path, fake, tasks=6), "--quiet")
    assert result.exit_code == 0
    assert len(reads) == 1
    assert len(rows(Task)) == 6 and len(rows(Item)) == 12


def test_a_bad_line_near_the_end_leaves_no_run_and_no_tasks(cli, tmp_path, fake):
    config = write_config(tmp_path, fake, tasks=TASKS)
    bank = tmp_path / "bank.jsonl"
    spoil_line(bank, TASKS - 1)
    result = cli("run", "-c", config, "--quiet")
    assert result.exit_code == 2
    assert f"{bank}, line {TASKS - 1}: prompt: must be text" in result.stderr
    assert rows(Task) == [] and rows(Collection) == [] and rows(CollectionTask) == []
    assert rows(Run) == [] and rows(Item) == [] and rows(PendingItems) == []
    assert fake.calls == []


def test_a_config_problem_after_the_dataset_leaves_its_tasks_unstored(cli, tmp_path, fake):
    config = write_config(tmp_path, fake, tasks=TASKS)
    text = config.read_text().replace("provider: fake\n  model: m2", "provider: nope\n  model: m2")
    config.write_text(text)
    result = cli("run", "-c", config, "--quiet")
    assert result.exit_code == 2
    assert "nope" in result.stderr
    assert rows(Task) == [] and rows(Collection) == [] and rows(Run) == []


def test_a_run_refused_after_its_dataset_was_read_leaves_its_tasks_unstored(cli, tmp_path, fake):
    # No judge, and tasks without checks: the run's creation refuses it, after the import.
    config = write_config(tmp_path, fake, tasks=TASKS)
    head, targets = config.read_text().split("targets:")
    config.write_text(head.split("judge:")[0] + "targets:" + targets)
    result = cli("run", "-c", config, "--quiet")
    assert result.exit_code == 2
    assert "a run needs a judge unless every task has checks" in result.stderr
    assert rows(Task) == [] and rows(Collection) == [] and rows(Run) == []


def test_the_dataset_stored_by_a_run_is_what_an_import_stores(cli, tmp_path, fake):
    result = cli("run", "-c", write_config(tmp_path, fake, tasks=TASKS), "--quiet")
    assert result.exit_code == 0
    tasks = rows(Task)
    assert [t.task_id for t in tasks] == [f"q{i:02d}" for i in range(TASKS)]
    assert tasks[3].question == "Question 3?" and tasks[3].category == "Fire"
    (collection,) = rows(Collection)
    assert collection.name == "bank" and len(rows(CollectionTask)) == TASKS
    assert len(rows(Item)) == TASKS * 2 and rows(PendingItems) == []


def test_a_second_run_of_the_same_dataset_skips_its_stored_tasks(cli, tmp_path, fake):
    config = write_config(tmp_path, fake, tasks=6, on_duplicate="skip")
    assert cli("run", "-c", config, "--quiet").exit_code == 0
    assert cli("run", "-c", config, "--quiet").exit_code == 0
    assert len(rows(Task)) == 6 and len(rows(CollectionTask)) == 6
    assert [len(rows(Item, Item.run == run.id)) for run in rows(Run)] == [12, 12]


def test_a_run_continued_by_resume_stores_nothing_of_its_dataset(cli, tmp_path, fake):
    config = write_config(tmp_path, fake, tasks=4, resume=True)
    paused = []

    def pause_at_the_first_call(call):
        if not paused:  # the run ends paused: unfinished, so `resume: true` continues it
            with database.connection_context():
                paused.append(pause_run(rows(Run)[0].run_id))
        return None

    fake.responder = pause_at_the_first_call
    assert cli("run", "-c", config, "--quiet").exit_code != 0
    fake.responder = None
    write_bank(tmp_path / "bank.jsonl", 5)  # a task more: a new run would import it
    result = cli("run", "-c", config, "--quiet")
    assert result.exit_code == 0
    assert len(rows(Run)) == 1 and len(rows(Task)) == 4
