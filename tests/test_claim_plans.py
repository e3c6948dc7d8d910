"""Claims cost O(log N): SQLite's plan for every claim query seeks an index of the items still
to take, never scans the run (EXPLAIN QUERY PLAN, read on a migrated database)."""

import pytest

from app.db.connection import database
from app.db.models import NEW
from app.db.models import WAITING_FOR_JUDGE
from app.db.models import Item
from app.engine.claims import claim_sql
from app.engine.claims import wake_query

# SQLite's plans (EXPLAIN QUERY PLAN) and its INDEXED BY: PostgreSQL has neither.
pytestmark = pytest.mark.sqlite_only

# The shapes the engine sends (engine/slice.py): answers per target, judgements per run; a
# judgement of one target's items is allowed too.
SHAPES = [(NEW, True), (WAITING_FOR_JUDGE, False), (WAITING_FOR_JUDGE, True)]


def _plan(sql):
    rows = database.execute_sql("EXPLAIN QUERY PLAN " + sql, [1] * sql.count("?"))
    return [row[-1] for row in rows]


@pytest.mark.parametrize(("status", "by_target"), SHAPES)
def test_a_claim_seeks_the_partial_index_of_its_status(app, status, by_target):
    plan = _plan(claim_sql(status, by_target))
    item_steps = [step for step in plan if " item " in f"{step} "]
    assert not [s for s in item_steps if s.startswith("SCAN")], plan
    assert not [s for s in plan if "TEMP B-TREE" in s], plan
    wanted = "item_claim_new" if status == NEW else "item_claim_judge"
    assert any(f"USING INDEX {wanted} " in s for s in item_steps), plan
    assert not any("item_run_id " in s or "item_target_id " in s for s in item_steps), plan


@pytest.mark.parametrize("target_id", [None, 1])
def test_the_next_wake_reads_the_claims_in_flight_from_their_own_index(app, target_id):
    sql, params = wake_query(1, Item.claimed_until, target_id).limit(1).sql()
    rows = database.execute_sql("EXPLAIN QUERY PLAN " + sql, params)
    plan = [row[-1] for row in rows]
    assert any("item_claimed_until" in s for s in plan), plan
    assert not [s for s in plan if s.startswith("SCAN")], plan
