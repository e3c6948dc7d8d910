"""Batched claims (claims.claim_batch) and claims that name their holder (m027), on SQLite and
on PostgreSQL (this module is in conftest.ALSO_ON_POSTGRES)."""

import datetime as dt

from app.db.models import NEW
from app.db.models import PENDING
from app.db.models import WAITING_FOR_JUDGE
from app.db.models import Item
from app.engine import claims
from app.engine import lease
from tests.factories import T0
from tests.factories import add_item
from tests.factories import make_run

LATER = T0 + dt.timedelta(seconds=60)


def _pending_run(n):
    run, (target,) = make_run("batches", status=PENDING, control="running", phase="BENCHMARKING")
    items = [add_item(run, target, f"t{i}", status=NEW) for i in range(n)]
    return run, target, items


def test_a_batch_claims_k_items_in_id_order(app):
    run, target, items = _pending_run(6)
    batch = claims.claim_batch(run.id, NEW, T0, LATER, target.id, k=4, holder="w1")
    assert [c.id for c in batch] == [i.id for i in items[:4]]
    assert {c.attempts for c in batch} == {1}
    rows = Item.select(Item.claimed_by, Item.claimed_until).where(Item.claimed_until.is_null(False))
    assert set(rows.tuples()) == {("w1", LATER)}


def test_a_batch_takes_only_what_is_claimable(app):
    run, target, items = _pending_run(5)
    claims.claim_batch(run.id, NEW, T0, LATER, target.id, k=2)  # in flight
    Item.update(next_retry_at=LATER).where(Item.id == items[2].id).execute()  # in backoff
    batch = claims.claim_batch(run.id, NEW, T0, LATER, target.id, k=10)
    assert [c.id for c in batch] == [items[3].id, items[4].id]
    assert not claims.claim_batch(run.id, NEW, T0, LATER, target.id, k=10)


def test_a_batch_claims_nothing_once_the_run_is_paused(app):
    run, target, _items = _pending_run(3)
    run.control = "paused"
    run.save()
    assert not claims.claim_batch(run.id, NEW, T0, LATER, target.id, k=3)
    assert not Item.select().where(Item.attempts > 0).exists()


def test_a_takeover_gives_back_only_the_dead_orchestrators_claims(app):
    assert lease.acquire("dead-holder", 5.0, T0)  # (the first lease stops running runs)
    run, target, (mine, theirs, _rest) = _pending_run(3)
    claims.claim_batch(run.id, NEW, T0, LATER, target.id, k=1, holder="dead-holder")
    claims.claim_batch(run.id, NEW, T0, LATER, target.id, k=1, holder="host:1:worker")
    assert lease.acquire("new-holder", 15.0, T0 + dt.timedelta(seconds=10))  # stale: taken over
    dead, live = Item.get_by_id(mine.id), Item.get_by_id(theirs.id)
    assert (dead.attempts, dead.claimed_until) == (0, None)
    assert (live.attempts, live.claimed_until, live.claimed_by) == (1, LATER, "host:1:worker")


def test_a_late_outcome_of_an_expired_claim_is_not_recorded_after_another_claimed_it(app):
    run, target, (item,) = _pending_run(1)
    (first,) = claims.claim_batch(run.id, NEW, T0, LATER, target.id, holder="w1")
    after = LATER + dt.timedelta(seconds=1)
    (second,) = claims.claim_batch(
        run.id, NEW, after, after + dt.timedelta(seconds=60), target.id, holder="w2"
    )
    assert second.attempts == first.attempts + 1
    assert claims.update_claimed(item.id, NEW, first.attempts, {"answer": "late"}) == 0
    assert claims.update_claimed(item.id, NEW, second.attempts, {"answer": "mine"}) == 1
    assert Item.get_by_id(item.id).answer == "mine"


def test_a_judgement_claim_carries_the_answer_and_the_references(app):
    run, (target,) = make_run("judged", status=PENDING, control="running", phase="JUDGING")
    item = add_item(
        run,
        target,
        "t1",
        status=WAITING_FOR_JUDGE,
        answer="forty-two",
        excellent="42",
        rubric=[{"criterion": "exact", "weight": 1}],
    )
    (claimed,) = claims.claim_batch(run.id, WAITING_FOR_JUDGE, T0, LATER, k=1, holder="w1")
    assert (claimed.id, claimed.attempts, claimed.answer) == (item.id, 1, "forty-two")
    assert (claimed.question, claimed.excellent) == ("Question t1?", "42")
    assert claimed.rubric == [{"criterion": "exact", "weight": 1}]
