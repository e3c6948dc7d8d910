"""How the engine writes on SQLite: claims taken ahead given back, checkpoints off the workers'
commits."""

import datetime as dt
from types import SimpleNamespace

import pytest

from app.db.connection import database
from app.db.models import NEW
from app.db.models import PENDING
from app.db.models import Item
from app.engine import claims
from app.engine import wal
from app.engine.workers import ClaimFeed
from tests.factories import T0
from tests.factories import add_item
from tests.factories import make_run

LATER = T0 + dt.timedelta(seconds=60)


def test_a_feed_claiming_ahead_keeps_the_rest_for_later_and_gives_it_back(app):
    run, (target,) = make_run("ahead", status=PENDING, control="running", phase="BENCHMARKING")
    items = [add_item(run, target, f"t{i}", status=NEW) for i in range(5)]
    feed = ClaimFeed(
        SimpleNamespace(ctx=None),
        lambda now, until, k: claims.claim_batch(run.id, NEW, now, until, target.id, k, "h"),
        k=3,
        ahead=True,
    )
    assert feed(T0, LATER).id == items[0].id  # one thread asked; three were claimed
    assert Item.select().where(Item.claimed_until.is_null(False)).count() == 3
    assert feed.leftover() == 2
    claimed = Item.select().where(Item.attempts > 0)
    assert [i.id for i in claimed] == [items[0].id]
    assert (
        not Item.select()
        .where(Item.claimed_until.is_null(False) & (Item.id != items[0].id))
        .exists()
    )


def test_a_worker_connection_does_not_checkpoint_until_it_is_done(app):
    if database.is_postgres:
        pytest.skip("SQLite's WAL only")
    before = database.execute_sql("PRAGMA wal_autocheckpoint").fetchone()[0]
    with wal.worker_connection():
        assert database.execute_sql("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
    assert database.execute_sql("PRAGMA wal_autocheckpoint").fetchone()[0] == before > 0
