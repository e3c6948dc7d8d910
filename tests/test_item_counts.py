"""Kept counts (runs/counts.py): after any mix of item changes, claims given back, rolled-back
writes (a crash mid-transaction), deletions and (PostgreSQL) folds of the deltas, the kept
counts equal a recount of the items. The module runs on SQLite and PostgreSQL (conftest.py)."""

import datetime as dt
import random
import threading

import pytest

from app.db import ddl
from app.db import migrations
from app.db.admin import copy_database
from app.db.connection import database
from app.db.models import CANT_BE_FINISHED
from app.db.models import COMPLETED
from app.db.models import FAILED
from app.db.models import NEW
from app.db.models import PENDING
from app.db.models import WAITING_FOR_JUDGE
from app.db.models import Item
from app.db.models import ItemCount
from app.db.models import Run
from app.db.pg_sql import WRITE_LOCK_KEY
from app.engine import claims
from app.engine import scheduler
from app.results.table import results_page
from app.runs import counts
from app.runs import retries
from app.runs.progress import progress
from tests.engine_helpers import FakeClock
from tests.engine_helpers import drive
from tests.engine_helpers import make_provider
from tests.engine_helpers import make_tasks
from tests.engine_helpers import start_run
from tests.factories import T0
from tests.factories import add_item
from tests.factories import make_run

TARGETS = (("local", "m1"), ("local", "m2"))


def _same(kept, counted):
    assert kept.keys() == counted.keys()
    for key, sums in counted.items():
        assert kept[key] == pytest.approx(sums, abs=1e-6), key


def _pending_run(run_id, n):
    run, targets = make_run(run_id, targets=TARGETS, status=PENDING, control="running")
    for i in range(n):
        add_item(run, targets[i % 2], f"t{i}", status=NEW)
    return run, targets


def _outcome(rng):
    """Fields of a random recorded outcome (answer, judgement or failure)."""
    status = rng.choice([WAITING_FOR_JUDGE, COMPLETED, FAILED, CANT_BE_FINISHED, NEW])
    fields = {"status": status}
    if rng.random() < 0.7:
        fields["time_taken_ms"] = rng.uniform(1, 900)
        fields["tokens_generated"] = rng.randint(1, 400)
        fields["prompt_tokens"] = rng.randint(1, 90)
        fields["cost_usd"] = rng.choice([None, rng.uniform(0, 0.01)])
    if status == COMPLETED:
        fields["evaluation_score"] = rng.uniform(0, 100)
        fields["judge_ms"] = rng.uniform(1, 500)
        fields["judge_cost_usd"] = rng.uniform(0, 0.01)
    if status in (FAILED, CANT_BE_FINISHED):
        fields["error_stage"] = rng.choice(["answer", "judge", "warmup", None])
    return fields


def _step(rng, run, targets, now):
    """One random operation on the run's items."""
    until = now + dt.timedelta(seconds=30)
    action = rng.choice(
        ["claim_record", "claim_abandon", "crash", "edit", "add", "delete", "release", "fold"]
    )
    status = rng.choice([NEW, WAITING_FOR_JUDGE])
    target = rng.choice(targets).id if status == NEW else None
    if action in ("claim_record", "claim_abandon", "crash"):
        got = claims.claim(run.id, status, now, until, target)
        if got is None:
            return
        if action == "claim_record":
            claims.update_claimed(got.id, status, got.attempts, _outcome(rng))
        elif action == "claim_abandon":  # a stop gave the claim back
            claims.release(got.id, got.attempts)
        else:  # the process died mid-write: its transaction never committed
            with database.atomic() as tx:
                claims.update_claimed(got.id, status, got.attempts, _outcome(rng))
                tx.rollback()
    elif action == "edit":  # a re-judge, a retry reset, a person's edit
        item = rng.choice(list(Item.select(Item.id).where(Item.run == run)))
        Item.update(**_outcome(rng)).where(Item.id == item.id).execute()
    elif action == "add":
        add_item(run, rng.choice(targets), f"x{rng.random()}", **_outcome(rng))
    elif action == "release":  # a dead holder's claims given back, many rows in one statement
        claims.release_all([run.id])
    elif action == "fold":
        counts.fold()
    else:
        Item.delete().where(Item.id == rng.choice(list(Item.select(Item.id)))).execute()


def test_kept_counts_equal_a_recount_after_random_operations_and_crashes(app):
    rng = random.Random(9)
    run, targets = _pending_run("counts", 40)
    now = T0
    for _ in range(400):
        now += dt.timedelta(seconds=rng.choice([0, 1, 40]))  # 40 s: claims held lapse
        _step(rng, run, targets, now)
    claims.release_all([run.id])  # a dead holder's claims given back
    _same(counts.kept(run), counts.recount(run))


def test_counts_already_read_give_what_count_items_and_the_retry_count_give(app):
    rng = random.Random(4)
    run, targets = _pending_run("read-once", 30)
    now = T0
    for _ in range(200):
        now += dt.timedelta(seconds=rng.choice([0, 1, 40]))
        _step(rng, run, targets, now)
    claims.release_all([run.id])
    counts.fold()
    kept = counts.kept(run)
    one = [targets[0].id]
    for target_ids in (None, one):
        for status in (None, FAILED, (FAILED, CANT_BE_FINISHED), COMPLETED, NEW):
            for stage in (None, "judge", "answer"):
                expected = counts.count_items(run, target_ids, status, stage)
                assert counts.count_in(kept, target_ids, status, stage) == expected
    assert retries.retryable_in(kept) == retries.retryable_answer_failures(run)


def test_a_deleted_run_leaves_no_counts(app):
    run, _ = _pending_run("gone", 6)
    other, _ = _pending_run("kept", 4)
    counts.fold()
    Run.delete().where(Run.id == run.id).execute()
    assert counts.kept(run) == {}
    counts.fold()
    assert not ItemCount.select().where(ItemCount.run == run.id).exists()
    assert counts.kept(run) == {}
    _same(counts.kept(other), counts.recount(other))


def _counting_migration():
    return "m032_item_counts_on_postgres" if database.is_postgres else "m025_item_counts"


def test_the_migration_counts_the_items_a_database_already_had(app):
    run, _ = _pending_run("before", 10)
    database.execute_sql("DELETE FROM item_count")
    database.execute_sql("DELETE FROM _migrations WHERE name = ?", (_counting_migration(),))
    migrations.apply(database)
    _same(counts.kept(run), counts.recount(run))


def test_an_item_changed_in_place_adds_only_the_difference(app):
    # Same (target, status, stage), other sums: one row changes (m031's item_count_change).
    run, (target, _) = make_run("in-place", targets=TARGETS)
    item = add_item(run, target, "t", score=40.0, judge_ms=100.0, cost_usd=None)
    add_item(run, target, "u", score=60.0)
    Item.update(evaluation_score=90.0, judge_ms=None, cost_usd=0.5).where(
        Item.id == item.id
    ).execute()
    _same(counts.kept(run), counts.recount(run))
    assert counts.tally(run).mean("score") == pytest.approx(75.0)


def test_an_item_moved_to_a_status_no_item_had_gets_a_row(app):
    run, targets = _pending_run("new-key", 3)
    got = claims.claim(run.id, NEW, T0, T0 + dt.timedelta(seconds=30), targets[0].id)
    fields = {"status": CANT_BE_FINISHED, "error_stage": "warmup", "time_taken_ms": 5.0}
    assert claims.update_claimed(got.id, NEW, got.attempts, fields) == 1
    _same(counts.kept(run), counts.recount(run))
    assert counts.count_items(run, status=CANT_BE_FINISHED, stage="answer") == 1


def test_a_failed_stage_given_as_empty_or_null_is_one_key(app):
    run, (target, _) = make_run("stage", targets=TARGETS)
    item = add_item(run, target, "t", status=FAILED, error_stage=None, time_taken_ms=3.0)
    Item.update(error_stage="", time_taken_ms=4.0).where(Item.id == item.id).execute()
    _same(counts.kept(run), counts.recount(run))


@pytest.mark.sqlite_only  # m025's triggers: PostgreSQL never had them
def test_the_migration_to_kept_count_writes_recounts_a_database_with_the_old_triggers(app):
    run, targets = _pending_run("m031", 6)
    got = claims.claim(run.id, NEW, T0, T0 + dt.timedelta(seconds=30), targets[0].id)
    claims.update_claimed(got.id, NEW, got.attempts, {"status": WAITING_FOR_JUDGE})
    # Back to m025's update trigger, the counts gone stale.
    for name in ("item_count_move", "item_count_change", "item_count_run_delete"):
        database.execute_sql(f"DROP TRIGGER {name}")
    database.execute_sql(ddl.ITEM_COUNT_TRIGGERS[2])
    database.execute_sql("UPDATE item_count SET n = n + 5")
    database.execute_sql("DELETE FROM _migrations WHERE name = 'm031_item_count_writes'")
    migrations.apply(database)
    _same(counts.kept(run), counts.recount(run))
    assert "item_count_update" not in {row[0] for row in database.execute_sql(TRIGGERS)}


TRIGGERS = "SELECT name FROM sqlite_master WHERE type = 'trigger'"


def _deltas():
    """PostgreSQL: the rows of item_count_delta (m032), what the triggers appended unfolded."""
    return database.execute_sql("SELECT COUNT(*) FROM item_count_delta").fetchone()[0]


def _postgres_only():
    if not database.is_postgres:
        pytest.skip("SQLite's triggers keep item_count itself: no deltas to fold")


def test_a_fold_moves_the_deltas_into_the_kept_rows_and_changes_no_count(app):
    _postgres_only()
    run, targets = _pending_run("fold", 8)
    got = claims.claim(run.id, NEW, T0, T0 + dt.timedelta(seconds=30), targets[0].id)
    claims.update_claimed(got.id, NEW, got.attempts, {"status": WAITING_FOR_JUDGE})
    before = counts.kept(run)
    assert _deltas() > 0 and not ItemCount.select().exists()

    counts.fold()

    assert _deltas() == 0
    assert counts.kept(run) == before
    _same(before, counts.recount(run))


def test_a_claim_and_its_extension_append_no_delta(app):
    _postgres_only()
    run, targets = _pending_run("claims", 4)
    counts.fold()
    got = claims.claim(run.id, NEW, T0, T0 + dt.timedelta(seconds=30), targets[0].id)
    Item.update(claimed_until=T0 + dt.timedelta(seconds=90)).where(Item.id == got.id).execute()
    assert _deltas() == 0


def test_one_statement_changing_many_items_appends_one_delta_per_key(app):
    _postgres_only()
    run, _ = _pending_run("bulk", 40)
    assert _deltas() <= 40  # one per insert statement
    counts.fold()
    Item.update(status=FAILED, error_stage="answer").where(Item.run == run.id).execute()
    assert _deltas() == 4  # NEW taken back and FAILED added, for each of the two targets
    _same(counts.kept(run), counts.recount(run))


def test_a_run_the_engine_worked_ends_with_its_deltas_folded(app, fake):
    _postgres_only()
    p = make_provider(fake)
    run = start_run(p, [(p, "m1"), (p, "m2")], make_tasks(3))
    assert drive(dict(app.config), FakeClock())["state"] == "finished"
    assert _deltas() == 0
    assert counts.tally(run).by_status[COMPLETED] == 6
    _same(counts.kept(run), counts.recount(run))


def test_a_fold_does_not_wait_for_a_write_that_holds_the_lock(app):
    _postgres_only()
    import psycopg  # only the PostgreSQL half needs the driver

    _pending_run("busy", 4)
    holder = psycopg.connect(app.config["DB"])  # a long write: a large run's creation
    holder.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK_KEY,))
    try:
        folding = threading.Thread(target=counts.fold)
        folding.start()
        folding.join(timeout=60)
        assert not folding.is_alive(), "the fold waited for the write lock"
        assert _deltas() > 0  # left to a later fold
    finally:
        holder.rollback()
        holder.close()
    counts.fold()
    assert _deltas() == 0


def test_the_schedulers_tick_folds_the_deltas_of_writes_outside_a_run(app):
    _postgres_only()
    run, _ = _pending_run("edited", 4)
    Item.update(status=FAILED, error_stage="answer").where(Item.run == run.id).execute()
    assert _deltas() > 0

    scheduler._tick(dict(app.config))

    assert _deltas() == 0
    _same(counts.kept(run), counts.recount(run))


def test_progress_reads_the_kept_counts(app):
    run, targets = _pending_run("read", 5)
    first = claims.claim(run.id, NEW, T0, T0 + dt.timedelta(seconds=30), targets[0].id)
    claims.update_claimed(first.id, NEW, first.attempts, {"status": WAITING_FOR_JUDGE})
    # Only the kept rows changed: the live view shows what they say.
    ItemCount.update(n=ItemCount.n + 100).where(
        (ItemCount.run == run.id) & (ItemCount.status == COMPLETED)
    ).execute()
    ItemCount.insert(run=run.id, target_id=targets[0].id, status=COMPLETED, n=7).on_conflict(
        conflict_target=[ItemCount.run, ItemCount.target_id, ItemCount.status, ItemCount.stage],
        update={ItemCount.n: 7},
    ).execute()
    p = progress(run)
    assert p["counts"][COMPLETED] == 7 and p["counts"][WAITING_FOR_JUDGE] == 1
    assert p["total"] == 12


def test_the_tally_equals_the_items_counted_one_by_one(app):
    run, targets = _pending_run("tally", 8)
    got = claims.claim(run.id, NEW, T0, T0 + dt.timedelta(seconds=30), targets[0].id)
    claims.update_claimed(got.id, NEW, got.attempts, {"status": FAILED, "error_stage": "judge"})
    got = claims.claim(run.id, NEW, T0, T0 + dt.timedelta(seconds=30), targets[1].id)
    claims.update_claimed(got.id, NEW, got.attempts, {"status": WAITING_FOR_JUDGE})

    kept = counts.tally(run)

    assert kept.by_status[NEW] == 6 and kept.by_status[WAITING_FOR_JUDGE] == 1
    assert (kept.judge_failed, kept.answer_failed, kept.total) == (1, 0, 8)
    assert kept.new_by_target == {targets[0].id: 3, targets[1].id: 3}
    assert counts.count_items(run, status=FAILED, stage="judge") == 1


@pytest.mark.sqlite_only  # SQLite into SQLite: the target's triggers do the counting
def test_a_copied_database_counts_each_item_once(app, tmp_path):
    run, _ = _pending_run("copied", 6)
    database.close()
    copy_database(app.config["DB"], str(tmp_path / "copy.db"))
    with database.connection_context():
        _same(counts.kept(run.id), counts.recount(run.id))
        assert counts.tally(run.id).total == 6


@pytest.mark.parametrize(
    "filters",
    [
        {},
        {"status": COMPLETED},
        {"status": "judge_failed"},
        {"status": "answer_failed"},
        {"model": "m2"},
        {"model": "m1", "status": "answer_failed"},
    ],
)
def test_the_results_table_total_from_kept_counts_equals_its_rows(app, filters):
    rng = random.Random(3)
    run, targets = make_run("table", targets=TARGETS)
    for i in range(60):
        add_item(run, targets[i % 2], f"t{i}", **_outcome(rng))
    page = results_page(run, filters=filters, per_page=200)
    assert page.total == len(page.rows)
