"""Claims: `claimed_until` marks an item in flight; `next_retry_at` only ever means a backoff."""

import datetime as dt

from app.db.models import NEW
from app.db.models import PENDING
from app.db.models import WAITING_FOR_JUDGE
from app.db.models import Item
from app.engine import claims
from tests.factories import T0
from tests.factories import add_item
from tests.factories import make_run

LATER = T0 + dt.timedelta(seconds=60)


def _pending_run(n=2):
    run, (target,) = make_run("claims", status=PENDING, control="running")
    items = [add_item(run, target, f"t{i}", status=NEW) for i in range(n)]
    return run, target, items


def test_a_claim_marks_the_item_in_flight_until_its_deadline(app):
    run, target, (first, _second) = _pending_run()
    claimed = claims.claim(run.id, NEW, T0, LATER, target.id)
    item = Item.get_by_id(claimed.id)
    assert claimed.id == first.id and item.attempts == 1
    assert item.claimed_until == LATER and item.next_retry_at is None
    assert Item.select().where(Item.in_flight(T0)).count() == 1


def test_an_item_in_flight_is_not_claimed_twice(app):
    run, target, (first, second) = _pending_run()
    claims.claim(run.id, NEW, T0, LATER, target.id)
    assert claims.claim(run.id, NEW, T0, LATER, target.id).id == second.id
    assert claims.claim(run.id, NEW, T0, LATER, target.id) is None


def test_a_claim_past_its_deadline_can_be_claimed_again(app):
    # The holder died with the request out: after the deadline another claim takes it.
    run, target, (first,) = _pending_run(1)
    claims.claim(run.id, NEW, T0, LATER, target.id)
    again = claims.claim(
        run.id, NEW, LATER + dt.timedelta(seconds=1), LATER + dt.timedelta(minutes=2), target.id
    )
    assert again.id == first.id and again.attempts == 2


def test_a_recorded_outcome_ends_the_claim(app):
    run, target, (first,) = _pending_run(1)
    claimed = claims.claim(run.id, NEW, T0, LATER, target.id)
    assert claims.update_claimed(claimed.id, NEW, 1, {"status": WAITING_FOR_JUDGE, "answer": "a"})
    item = Item.get_by_id(first.id)
    assert item.status == WAITING_FOR_JUDGE and item.claimed_until is None
    assert not Item.select().where(Item.in_flight(T0)).exists()


def test_an_outcome_after_the_claim_was_released_is_not_written(app):
    run, target, (first,) = _pending_run(1)
    claimed = claims.claim(run.id, NEW, T0, LATER, target.id)
    assert claims.release(claimed.id, claimed.attempts) == 1
    assert claims.update_claimed(claimed.id, NEW, 1, {"answer": "late"}) == 0
    item = Item.get_by_id(first.id)
    assert item.attempts == 0 and item.claimed_until is None and item.answer is None


def test_an_item_in_backoff_waits_without_a_claim(app):
    run, target, (first,) = _pending_run(1)
    Item.update(next_retry_at=LATER, attempts=1, error_msg="503").where(
        Item.id == first.id
    ).execute()
    assert not Item.select().where(Item.in_flight(T0)).exists()
    assert claims.claim(run.id, NEW, T0, LATER, target.id) is None
    assert claims.next_wake(run) == LATER
    assert claims.claim(run.id, NEW, LATER, LATER + dt.timedelta(seconds=60), target.id)


def test_a_dead_holders_claims_are_given_back_uncounted(app):
    run, target, (first, second) = _pending_run()
    claims.claim(run.id, NEW, T0, LATER, target.id)
    assert claims.release_all([run.id]) == 1
    item = Item.get_by_id(first.id)
    assert item.attempts == 0 and item.claimed_until is None


def _retried(run, target):
    """An item whose failed attempt left values behind, claimed again (attempt 2)."""
    item = add_item(
        run,
        target,
        "again",
        status=NEW,
        attempts=1,
        error_msg="503",
        error_stage="answer",
        next_retry_at=T0,
        cost_usd=0.25,
        response_raw="half",
    )
    claimed = claims.claim(run.id, NEW, LATER, LATER + dt.timedelta(seconds=60), target.id)
    assert claimed.id == item.id and claimed.attempts == 2
    return item


def test_an_outcome_clears_the_values_an_earlier_attempt_left(app):
    run, target, _ = _pending_run(0)
    item = _retried(run, target)
    outcome = {
        "status": WAITING_FOR_JUDGE,
        "answer": "a",
        "error_msg": None,
        "error_stage": None,
        "next_retry_at": None,
        "cost_usd": None,
        "response_raw": None,
    }
    assert claims.update_claimed(item.id, NEW, 2, outcome) == 1
    row = Item.get_by_id(item.id)
    assert (row.status, row.answer, row.claimed_until) == (WAITING_FOR_JUDGE, "a", None)
    assert row.error_msg is None and row.error_stage is None and row.next_retry_at is None
    assert row.cost_usd is None and row.response_raw is None


def test_an_outcome_that_is_not_ours_clears_nothing(app):
    run, target, _ = _pending_run(0)
    item = _retried(run, target)
    late = {"status": WAITING_FOR_JUDGE, "error_msg": None, "cost_usd": None}
    assert claims.update_claimed(item.id, NEW, 1, late) == 0  # the first attempt's, too late
    row = Item.get_by_id(item.id)
    assert (row.status, row.error_msg, row.cost_usd) == (NEW, "503", 0.25)
    assert row.claimed_until is not None


def test_an_outcome_with_every_value_null_already_is_recorded_once(app):
    run, target, (first,) = _pending_run(1)
    claimed = claims.claim(run.id, NEW, T0, LATER, target.id)
    fields = {"status": WAITING_FOR_JUDGE, "error_msg": None, "cost_usd": None}
    assert claims.update_claimed(claimed.id, NEW, 1, fields) == 1
    assert claims.update_claimed(claimed.id, NEW, 1, fields) == 0  # no longer NEW: not ours
    row = Item.get_by_id(first.id)
    assert row.status == WAITING_FOR_JUDGE and row.error_msg is None and row.cost_usd is None
