"""A real PostgreSQL for tests: Peewee creates our tables there, and SKIP LOCKED claims differ.

Skipped (with the fix named) when Debian's postgresql package or the psycopg driver is missing.
"""

import datetime as dt

import pytest
from peewee import fn

from app.db.models import ALL_MODELS
from app.db.models import NEW
from app.db.models import Item
from app.db.models import Run
from app.db.models import RunTarget
from tests import pg_databases
from tests import pg_server

TEMPLATE = "llmbench_template"
NOW = dt.datetime(2025, 1, 2, 3, 4, 5)
CLAIM_SECONDS = 60


@pytest.fixture(scope="session")
def pg_url():
    """One PostgreSQL for the session, with a template database holding our tables."""
    status = pg_server.available()
    if not status:
        pytest.skip(status.reason)
    with pg_server.running_postgres() as url:
        template = pg_databases.create_database(url, TEMPLATE)
        db = pg_databases.peewee_database(template)
        try:
            with db.bind_ctx(ALL_MODELS):
                db.create_tables(ALL_MODELS)
        finally:
            db.close()
        yield url


@pytest.fixture
def pg_db(pg_url):
    """A fresh copy of the template for this test, our models bound to it."""
    with pg_databases.fresh_database(pg_url, template=TEMPLATE) as url:
        db = pg_databases.peewee_database(url)
        try:
            with db.bind_ctx(ALL_MODELS):
                yield db
        finally:
            db.close()


def claim_query(run_id, k, now=NOW):
    """The worker claim: UPDATE … WHERE id IN (SELECT … FOR UPDATE SKIP LOCKED LIMIT k) RETURNING.

    Two workers never take the same item: rows locked by another open claim are skipped, not
    waited for.
    """
    claimable = (
        Item.select(Item.id)
        .where(
            (Item.run == run_id)
            & (Item.status == NEW)
            & (Item.next_retry_at.is_null() | (Item.next_retry_at <= now))
        )
        .order_by(Item.id)
        .limit(k)
        .for_update(skip_locked=True)
    )
    return (
        Item.update(
            attempts=Item.attempts + 1,
            last_attempt_at=now,
            first_attempt_at=fn.COALESCE(Item.first_attempt_at, now),
            next_retry_at=now + dt.timedelta(seconds=CLAIM_SECONDS),
            error_msg=None,
        )
        .where(Item.id.in_(claimable))
        .returning(Item.id, Item.attempts, Item.next_retry_at)
        .tuples()
    )


def make_items(count):
    run = Run.create(run_id="pg-run", judge_provider_name="p", judge_model="judge")
    target = RunTarget.create(run=run, provider_name="p", model="m")
    Item.insert_many(
        [{"run": run, "target": target, "task_key": f"t{i}", "question": "?"} for i in range(count)]
    ).execute()
    return run


def test_available_names_the_fix_when_the_binaries_are_missing(tmp_path):
    status = pg_server.available(path="", globs=(str(tmp_path / "*" / "bin"),))

    assert not status
    assert "apt-get install -y postgresql" in status.reason


@pytest.mark.postgres
def test_peewee_creates_our_tables_on_postgres(pg_db):
    tables = set(pg_db.get_tables())

    assert {model._meta.table_name for model in ALL_MODELS} <= tables
    assert pg_db.server_version >= 130000  # DROP DATABASE … WITH (FORCE) needs 13+


@pytest.mark.postgres
def test_claim_returns_the_claimed_rows_with_postgres_types(pg_db):
    run = make_items(3)

    rows = list(claim_query(run.id, 2).execute(pg_db))

    assert [(attempts, retry) for _, attempts, retry in rows] == [
        (1, NOW + dt.timedelta(seconds=CLAIM_SECONDS))
    ] * 2
    assert Item.select().where(Item.attempts == 0).count() == 1


@pytest.mark.postgres
def test_skip_locked_gives_two_open_claims_different_items(pg_db):
    run = make_items(5)
    # A second worker: its own connection (a second Database object) to the same database.
    other = pg_databases.peewee_database(
        pg_db.database, options=pg_databases.bounded_options(lock_timeout_ms=5_000)
    )
    try:
        with pg_db.atomic():
            first = [row[0] for row in claim_query(run.id, 2).execute(pg_db)]
            # The first claim is still open (its rows locked, uncommitted) while the second
            # runs: without SKIP LOCKED it would wait (and fail at lock_timeout) or re-claim.
            with other.atomic():
                second = [row[0] for row in claim_query(run.id, 2).execute(other)]
        third = [row[0] for row in claim_query(run.id, 2).execute(other)]
    finally:
        other.close()

    assert len(first) == len(second) == 2
    assert not set(first) & set(second)
    assert len(third) == 1 and third[0] not in first + second
    assert Item.select().where(Item.attempts != 1).count() == 0
