"""A full disk: the API says so (507) and keeps nothing half-written; a run waits and finishes
once there is room again, with no item failed for our own storage error.

The disk is "full" by SQLite's max_page_count on every connection opened from then on: the
database file may not grow, so a write that needs a new page fails with SQLITE_FULL, as it
would on a full disk (and it runs as root in CI, where a small tmpfs would need mounting).
"""

import pytest

from app.db.connection import close_idle
from app.db.connection import database
from app.db.models import COMPLETED
from app.db.models import FAILED
from app.db.models import NEW
from app.db.models import Item
from app.db.models import Provider
from app.db.models import Run
from app.engine import lease
from app.engine.orchestrator import tick
from tests.engine_helpers import FakeClock
from tests.engine_helpers import calls
from tests.engine_helpers import drive
from tests.engine_helpers import make_provider
from tests.engine_helpers import make_tasks
from tests.engine_helpers import start_run

ROOM = 1_073_741_823  # SQLite's own largest max_page_count: as much room as the disk has


def set_room(pages):
    """Open every connection from now on with max_page_count = `pages`."""
    db = database.obj
    db._pragmas = [(k, v) for k, v in db._pragmas if k != "max_page_count"]
    db._pragmas.append(("max_page_count", pages))
    database.close()
    close_idle()


def fill_disk():
    """No room left: the file may not grow past its size now."""
    pages = database.execute_sql("PRAGMA page_count").fetchone()[0]
    set_room(pages)


@pytest.fixture
def run_body(app, fake):
    lease.acquire("test-holder", 15.0)
    provider = make_provider(fake)
    collection = make_tasks(300)
    return {
        "judgeProviderId": provider.id,
        "judgeModel": "judge",
        "collectionIds": [collection.id],
        "targets": [{"providerId": provider.id, "model": "m1"}],
    }


def test_a_run_created_on_a_full_disk_answers_507_and_keeps_nothing(client, run_body):
    fill_disk()
    response = client.post("/api/runs", json={**run_body, "runId": "full-1"})
    assert response.status_code == 507, response.get_data(as_text=True)
    assert "full" in response.get_json()["error"]
    assert Run.select().count() == 0 and Item.select().count() == 0


def test_a_provider_created_on_a_full_disk_answers_507_and_keeps_nothing(client, fake):
    make_provider(fake, name="first")
    fill_disk()
    headers = [{"key": f"X-H{i}", "value": "v" * 4000, "isSecret": True} for i in range(4)]
    body = {"name": "second", "type": "OPENAI", "baseUrl": fake.url, "headers": headers}
    response = client.post("/api/providers", json=body)
    assert response.status_code == 507, response.get_data(as_text=True)
    assert Provider.select().count() == 1


def test_a_run_whose_disk_fills_waits_fails_no_item_and_finishes_with_room(app, fake):
    config = dict(app.config)
    # A long timeout: on a busy machine a 28 kB answer from the in-process fake can take seconds,
    # and a timed-out attempt is not what this test is about.
    provider = make_provider(fake, max_concurrency=2, timeout=120.0)
    run = start_run(provider, [(provider, "m1")], make_tasks(40))
    fake.default_text = "a long answer " * 2000  # 28 kB: each answer needs pages of its own
    fill_disk()
    clock = FakeClock()
    for _ in range(5):
        assert tick(config, holder="test-holder", now=clock)["state"] == "running"
        clock.advance(60)
    assert calls(fake, "answer")  # the answers came, and found no room
    assert Item.select().where(Item.status == NEW).count() > 0
    assert Item.select().where(Item.status == FAILED).count() == 0
    set_room(ROOM)
    assert drive(config, clock)["state"] == "finished"
    statuses = {s for (s,) in Item.select(Item.status).where(Item.run == run).tuples()}
    assert statuses == {COMPLETED}
