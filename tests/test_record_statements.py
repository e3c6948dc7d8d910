"""What a record's UPDATE names (claims.update_claimed): a field to be NULL whose every index the
UPDATE rewrites anyway is set in it; one with an index of its own is cleared apart, only where
it is not NULL yet (SQLite rewrites an index for each column its SET names). Both end with the
same row."""

import datetime as dt

import pytest

from app.db.connection import database
from app.db.models import NEW
from app.db.models import PENDING
from app.db.models import WAITING_FOR_JUDGE
from app.db.models import Item
from app.engine import claims
from tests.factories import T0
from tests.factories import add_item
from tests.factories import make_run

LATER = T0 + dt.timedelta(seconds=60)


def _claimed(status=NEW, **left):
    """An item in `status` claimed (attempt 1), with what an earlier attempt `left` on it."""
    run, (target,) = make_run("records", status=PENDING, control="running")
    item = add_item(run, target, "t0", status=status, **left)
    claimed = claims.claim(run.id, status, T0, LATER, target.id if status == NEW else None)
    assert claimed.id == item.id
    return item, claimed.attempts


def _updates(call):
    """The UPDATE statements of the item SQLite ran during `call()` (each once more per trigger
    it fires), and its result."""
    seen = []
    database.connection().set_trace_callback(seen.append)
    try:
        result = call()
    finally:
        database.connection().set_trace_callback(None)
    return [s for s in seen if s.lstrip().upper().startswith("UPDATE") and '"item"' in s], result


def test_error_stage_is_rewritten_with_the_status_so_it_is_set_in_the_same_update():
    assert claims.rewritten_anyway("error_stage", ("status", "answer"))


def test_error_stage_alone_would_rewrite_the_figures_index_so_it_is_not():
    assert not claims.rewritten_anyway("error_stage", ("answer", "error_msg"))


def test_cost_has_an_index_of_its_own_so_it_is_cleared_apart():
    assert not claims.rewritten_anyway("cost_usd", ("status", "answer", "time_taken_ms"))


def test_a_field_in_a_partial_index_is_never_set_with_the_rest():
    assert not claims.rewritten_anyway("answered_at", ("status", "answer", "run"))


def test_a_judgement_with_no_error_left_is_recorded_by_one_update(app):
    if database.is_postgres:
        pytest.skip("SQLite's statements (PostgreSQL's: every record one UPDATE)")
    item, attempts = _claimed(status=WAITING_FOR_JUDGE)
    fields = {"status": "COMPLETED", "evaluation_score": 80.0, "error_stage": None}
    updates, ours = _updates(
        lambda: claims.update_claimed(item.id, WAITING_FOR_JUDGE, attempts, fields)
    )
    assert ours == 1 and len(set(updates)) == 1


@pytest.mark.parametrize(
    "left", [{}, {"error_stage": "answer", "cost_usd": 0.25}], ids=["nothing", "an error"]
)
def test_an_answer_clears_what_an_earlier_attempt_left_however_it_is_written(app, left):
    item, attempts = _claimed(**left)
    fields = {"status": WAITING_FOR_JUDGE, "answer": "a", "error_stage": None, "cost_usd": None}
    assert claims.update_claimed(item.id, NEW, attempts, fields) == 1
    row = Item.get_by_id(item.id)
    assert (row.status, row.answer, row.error_stage, row.cost_usd) == (
        WAITING_FOR_JUDGE,
        "a",
        None,
        None,
    )
    assert row.claimed_until is None
