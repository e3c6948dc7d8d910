"""`llmbench run` of a big run (its items made as the engine goes: runs/creation.py) prints,
counts and exits as a run whose items were all made at its start."""

import pytest

from app.db.models import COMPLETED
from app.db.models import Item
from app.db.models import PendingItems
from app.db.models import Run
from app.runs import creation
from app.runs import lifecycle
from tests.cli_helpers import events
from tests.cli_helpers import make_cli
from tests.cli_helpers import rows
from tests.cli_helpers import write_config

TASKS = 5


@pytest.fixture
def cli(tmp_path):
    return make_cli(tmp_path)


@pytest.fixture
def small_batches(monkeypatch):
    """A 'big' run of a few tasks: 1 made at the start, 2 more per batch after."""
    monkeypatch.setattr(lifecycle, "FIRST_TASKS", 1)
    monkeypatch.setattr(creation, "BATCH_TASKS", 2)


def test_a_big_run_finishes_every_item_once_and_exits_0(cli, tmp_path, fake, small_batches):
    result = cli("run", "-c", write_config(tmp_path, fake, tasks=TASKS), "--quiet")
    assert (result.exit_code, result.output) == (0, "")
    items = rows(Item)
    assert len(items) == TASKS * 2 and {i.status for i in items} == {COMPLETED}
    assert len({(i.target_id, i.task_key) for i in items}) == TASKS * 2
    assert rows(PendingItems) == [] and rows(Run)[0].dataset_hash


def test_a_big_run_starts_counted_in_full(cli, tmp_path, fake, small_batches):
    result = cli("run", "-c", write_config(tmp_path, fake, tasks=TASKS), "--json")
    assert result.exit_code == 0
    started = events(result)[0]
    assert started["event"] == "run_started"
    assert started["totalItems"] == TASKS * 2
    assert events(result)[-1]["exitCode"] == 0
