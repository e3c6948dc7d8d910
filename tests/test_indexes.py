"""Indexes: every one costs each write that sets its columns a page or two (an answer or a
judgement writes up to a dozen of the item table's; bench/bench_item_writes.py), so none may
merely begin another, and a migrated database has the same ones as a fresh database."""

import datetime as dt

import pytest

from app.db import migrations
from app.db.connection import database
from app.db.models import NEW
from app.db.models import WAITING_FOR_JUDGE
from app.db.models import Item
from app.engine.claims import claimable
from app.engine.claims import wake_query
from app.results import keyset
from app.results import table
from app.runs.progress import progress
from app.runs.watch import latest_scores
from tests.factories import add_item
from tests.factories import bulk_items
from tests.factories import make_run

# Indexes allowed to begin another one with the same WHERE: name -> why it is still there.
# Foreign keys' indexes that Peewee made beside a longer index of the same table: written only
# when a row is added (none per call of a run), left for a later migration.
LATER = "a foreign key's index on a table no call writes; a later migration may drop it"
ID_ORDER = "ends with the rowid: reads the items of one value in id order (no answer writes it)"
PREFIX_ALLOWED = {
    "item_run_id": ID_ORDER + ": API item pages, the Evaluate queue, the labels export",
    "item_run_id_category": ID_ORDER + ": the Evaluate queue's category filter",
    "item_run_id_status": "ends with the rowid: the results table's status sort reads one "
    "status's items in id order (keyset.py names it); item_figures' entries go on by target",
    "alert_run_id": LATER,
    "collectiontask_collection_id": LATER,
    "judgecall_job_id": LATER,
    "judgecall_run_id": LATER,
    "outage_run_id": LATER,
    "providerheader_provider_id": LATER,
    "rating_run_id": LATER,
    "ratingtag_rating_id": LATER,
    "runaggregate_run_id": LATER,
    "runtarget_run_id": LATER,
    "samplechunk_run_id": LATER,
    "vote_left_target_id": LATER,
    "vote_right_target_id": LATER,
}


def _where(index):
    """The index's WHERE as the database spells it ('' for a whole-table index)."""
    sql = index.sql or ""
    at = sql.upper().find(" WHERE ")
    return sql[at + 7 :].strip() if at >= 0 else ""


def _indexes(table):
    return {i.name: (tuple(i.columns), _where(i), i.unique) for i in database.get_indexes(table)}


def _item_indexes():
    return {**_indexes("item"), **_indexes("runlog")}


def redundant_prefixes(indexes):
    """[(shorter, longer)]: a non-unique index whose columns begin a longer index's columns,
    with the same WHERE: the longer one serves every query the shorter one does, but one that
    reads the shorter one's rows in id order (SQLite ends every index with the rowid)."""
    found = []
    for short, (columns, where, unique) in indexes.items():
        for long, (others, other_where, _) in indexes.items():
            if unique or short == long or where != other_where:
                continue
            if len(columns) < len(others) and others[: len(columns)] == columns:
                found.append((short, long))
    return sorted(found)


def test_the_prefix_check_finds_an_index_that_begins_another():
    indexes = {
        "a_run": (("run_id",), "", False),
        "a_run_status": (("run_id", "status"), "", False),
        "a_run_new": (("run_id",), "status = 'NEW'", False),
        "a_run_unique": (("run_id",), "", True),
    }
    assert redundant_prefixes(indexes) == [("a_run", "a_run_status")]


def test_no_item_index_begins_another_with_the_same_where(app):
    found = [
        (s, long) for s, long in redundant_prefixes(_item_indexes()) if s not in PREFIX_ALLOWED
    ]
    assert not found, f"redundant item indexes (shorter, longer): {found}"


def test_a_database_from_before_m030_ends_with_the_fresh_databases_indexes(app):
    fresh = _item_indexes()
    # What m029's code left: the indexes m030 drops, and not its own.
    database.execute_sql("DELETE FROM _migrations WHERE name = 'm030_redundant_indexes'")
    for name in ("item_next_retry_at", "item_answered_at", "item_target_answered_at"):
        database.execute_sql(f"DROP INDEX {name}")
    database.execute_sql("DROP INDEX item_judged_at")
    database.execute_sql("CREATE INDEX runlog_run_id ON runlog (run_id)")
    old = {
        "item_run_id_updated_at": "(run_id, updated_at)",
        "item_run_id_status_target_id_next_retry_at": "(run_id, status, target_id, next_retry_at)",
        "item_run_id_answered_at": "(run_id, answered_at)",
        "item_run_id_target_id_answered_at": "(run_id, target_id, answered_at)",
        "item_run_id_judged_at": "(run_id, judged_at)",
    }
    for name, columns in old.items():
        database.execute_sql(f"CREATE INDEX {name} ON item {columns}")
    if database.is_postgres:
        database.execute_sql(
            "CREATE INDEX item_claim_new ON item (run_id, target_id) WHERE status = 'NEW'"
        )
        database.execute_sql(
            "CREATE INDEX item_claim_judge ON item (run_id) WHERE status = 'WAITING_FOR_JUDGE'"
        )
    migrations.apply(database)
    assert _item_indexes() == fresh
    assert migrations.applied(database)[-1] == "m030_redundant_indexes"


def test_m030_again_changes_no_index(app):
    before = _item_indexes()
    migrations.m030_redundant_indexes(database)
    assert _item_indexes() == before


def _plan(query):
    sql, params = query.sql()
    return [row[-1] for row in database.execute_sql("EXPLAIN QUERY PLAN " + sql, params)]


def _pg_plan(query, *disabled):
    """PostgreSQL's EXPLAIN of `query`, with the planner methods `disabled` (enable_sort, …)
    turned off while it plans."""
    sql, params = query.sql()
    for setting in disabled:
        database.execute_sql(f"SET {setting} = off")
    try:
        return [row[0] for row in database.execute_sql("EXPLAIN " + sql, params)]
    finally:
        for setting in disabled:
            database.execute_sql(f"RESET {setting}")


@pytest.mark.sqlite_only  # SQLite's EXPLAIN QUERY PLAN
@pytest.mark.parametrize("target_id", [None, 1])
def test_the_next_wake_reads_the_backoffs_from_their_own_index(app, target_id):
    plan = _plan(wake_query(1, Item.next_retry_at, target_id).limit(1))
    assert any("item_next_retry_at" in s for s in plan), plan
    assert not [s for s in plan if s.startswith("SCAN") or "TEMP B-TREE" in s], plan


@pytest.mark.sqlite_only  # SQLite's EXPLAIN QUERY PLAN
@pytest.mark.parametrize("category", [None, "math"])
def test_a_runs_items_are_read_in_id_order_by_an_index(app, category):
    # The API's item pages and the Evaluate queue's next card: why (run_id) and
    # (run_id, category) stay beside the longer indexes they begin.
    cond = (Item.run == 1) & (Item.id > 5)
    if category:
        cond &= Item.category == category
    plan = _plan(Item.select(Item.id).where(cond).order_by(Item.id).limit(1))
    assert not [s for s in plan if s.startswith("SCAN") or "TEMP B-TREE" in s], plan


# The shapes engine/groups.py, slice.py and remote.py ask: answers of one target, judgements of
# the run, answers of the run.
CLAIMABLE_SHAPES = [(NEW, 1), (WAITING_FOR_JUDGE, None), (NEW, None)]


@pytest.mark.sqlite_only  # SQLite's EXPLAIN QUERY PLAN
@pytest.mark.parametrize(("status", "target_id"), CLAIMABLE_SHAPES)
def test_is_anything_claimable_seeks_the_items_of_its_status(app, status, target_id):
    # Without the claim index from before m024 (run, status, target, next_retry_at): the items
    # of the status are sought by (run, status), or by the partial claim index of the status
    # when a target is named (SQLite matches the bound status to its WHERE).
    query = Item.select(Item.id).where(claimable(1, status, dt.datetime(2026, 1, 1)))
    if target_id is not None:
        query = query.where(Item.target == target_id)
    plan = _plan(query.limit(1))
    assert not [s for s in plan if s.startswith("SCAN")], plan
    if target_id is None:
        assert any("(run_id=? AND status=?)" in s for s in plan), plan
    else:
        assert any("INDEX item_claim_new (run_id=? AND target_id=?)" in s for s in plan), plan


def _sent_while(call):
    """The statements SQLite ran during `call()` (bound values written in)."""
    sent = []
    database.connection().set_trace_callback(sent.append)
    try:
        call()
    finally:
        database.connection().set_trace_callback(None)
    return sent


def _time_ordered(statements, column):
    return [
        s for s in statements if s.startswith("SELECT") and f"{column}" in s.split("ORDER BY")[-1]
    ]


@pytest.mark.sqlite_only  # SQLite's EXPLAIN QUERY PLAN
@pytest.mark.parametrize(
    ("read", "column", "indexes"),
    [
        # Every target's latest answers, the run's among them (progress._latest_answers).
        (lambda run: progress(run), "answered_at", {"item_target_answered_at"}),
        (lambda run: progress(run), "judged_at", {"item_judged_at"}),
        (lambda run: latest_scores(run), "judged_at", {"item_judged_at"}),
    ],
    ids=["progress-answers", "progress-judgements", "watch-latest-scores"],
)
def test_the_latest_answers_and_judgements_are_read_from_their_partial_index(
    app, read, column, indexes
):
    run, (target,) = make_run(status="PENDING")
    add_item(run, target, "t1", score=80.0)
    add_item(run, target, "t2", status=NEW)
    statements = _time_ordered(_sent_while(lambda: read(run)), column)
    assert statements
    used = set()
    for sql in statements:
        plan = [row[-1] for row in database.execute_sql("EXPLAIN QUERY PLAN " + sql)]
        assert not [s for s in plan if "TEMP B-TREE" in s or s.startswith("SCAN t1")], plan
        used |= {name for name in indexes if any(f"INDEX {name} " in s for s in plan)}
    assert used == indexes


@pytest.mark.parametrize("desc", [False, True])
@pytest.mark.parametrize("sort", keyset.SORTS)
def test_each_results_sort_reads_its_segments_in_order_from_an_index_on_postgres(app, sort, desc):
    # SQLite's indexes end with the rowid, so (run_id, status) reads one status's items in id
    # order; PostgreSQL's end with the id since m033. Sorting made too dear, a plan that still
    # sorts names no index in the order of (columns, id); one that reads the primary key would
    # walk past other targets' items (keyset._lead).
    if not database.is_postgres:
        pytest.skip("SQLite: its sort indexes end with the rowid (and INDEXED BY names them)")
    run, targets = make_run("sorted", targets=(("p", "a"), ("p", "b")))
    for i in range(6):
        add_item(run, targets[i % 2], f"t{i}", difficulty=["easy", "hard"][i % 2])
    for cond in (Item.run == run.id, (Item.run == run.id) & (Item.status == NEW)):
        for segment in keyset.segments(run.id, sort, desc):
            query = keyset.seek_queries(cond, segment, desc)[0].limit(50)
            plan = _pg_plan(query, "enable_sort", "enable_seqscan")
            assert not [line for line in plan if "Sort" in line], (segment, plan)
            # Not the primary key filtered: it walks past every item of other targets.
            assert not [line for line in plan if "item_pkey" in line], (segment, plan)


def test_a_later_targets_model_sort_page_reads_its_index_not_the_primary_key(app):
    # A run's items are made target by target: read in id order through the primary key, the
    # second target's first page walked past all of the first target's items (keyset._lead).
    if not database.is_postgres:
        pytest.skip("SQLite: INDEXED BY names the sort's index")
    run, (first, second) = make_run("clustered", targets=(("p", "a"), ("p", "b")))
    bulk_items(run, first, 5000)
    bulk_items(run, second, 5000, start=5000)
    database.execute_sql("ANALYZE item")
    for filters in ({}, {"status": "COMPLETED"}):
        segment = keyset.segments(run.id, "model", False, filters)[-1]
        assert segment.value == second.id
        cond = Item.run == run.id
        if filters:
            cond &= Item.status == filters["status"]
        plan = _pg_plan(keyset.seek_queries(cond, segment, False)[0].limit(50))
        assert not [line for line in plan if "item_pkey" in line], plan


def test_a_small_runs_model_sort_page_reads_its_target_index_beside_a_big_run(app):
    # The planner took run_id and target_id as independent: it expected a few of the small
    # run's items per target, and read the page through another index and sorted it (m034).
    if not database.is_postgres:
        pytest.skip("SQLite: INDEXED BY names the sort's index")
    small, small_targets = make_run("small", targets=(("p", "a"), ("p", "b")))
    big, big_targets = make_run("big", targets=(("p", "c"), ("p", "d")))
    for n, target in enumerate(small_targets):
        bulk_items(small, target, 2000, start=2000 * n)
    for n, target in enumerate(big_targets):
        bulk_items(big, target, 20000, start=20000 * n)
    database.execute_sql("ANALYZE item")
    segment = keyset.segments(small.id, "model", False)[-1]
    assert segment.value == small_targets[1].id
    plan = _pg_plan(keyset.seek_queries(Item.run == small.id, segment, False)[0].limit(50))
    assert [line for line in plan if "using item_target_id on item" in line], plan
    assert not [line for line in plan if "Sort" in line], plan


def test_a_filtered_results_count_reads_only_the_filters_index_on_postgres(app):
    # COUNT(id) made PostgreSQL read each match's row for its id where the index has none.
    if not database.is_postgres:
        pytest.skip("SQLite: every index holds the rowid")
    run, (target, other) = make_run("counted", targets=(("p", "a"), ("p", "b")))
    bulk_items(run, target, 2000)
    bulk_items(run, other, 2000, start=2000)
    database.execute_sql("VACUUM ANALYZE item")
    filters = {"model": str(target.id), "min_score": 50}
    cond = table._conditions(run.id, filters, targets=[target.id])
    plan = _pg_plan(table.count_query(cond), "enable_seqscan", "enable_bitmapscan")
    assert [line for line in plan if "Index Only Scan" in line], plan
