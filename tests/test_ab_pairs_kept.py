"""The A/B page's pairs are kept: the next pair a person is offered and the pair count are the
same as going through every pair row (judge_jobs.unjudged_pairs, min by the person's shuffled
position) on random small runs, repeats, unanswered sides, other voters and two runs included;
and they follow a new answer and an undone vote."""

import random

import pytest

from app.db.models import NEW
from app.ratings import votes
from app.ratings.people import position
from app.ratings.people import queue_order
from app.runs.judge_jobs import unjudged_pairs
from tests.factories import add_item
from tests.factories import make_run

VOTERS = ("human", "human:ann", "human:bob")


def old_next(scope, voter):
    """The next pair as it was picked before: every pending pair read, the lowest position."""
    pending = unjudged_pairs(scope.target_a, scope.target_b, voter)
    if not pending:
        return None
    a, b = queue_order(voter)
    item_a, item_b, _task = min(pending, key=lambda p: position(min(p[0], p[1]), a, b))
    return item_a, item_b


def old_count(scope):
    """The pair count as it was: every pair of the two targets' answers to one task."""
    return len(unjudged_pairs(scope.target_a, scope.target_b, "nobody votes"))


def shown(pair):
    """(A's item id, B's item id) of a pair as the page shows it (left and right)."""
    return None if pair is None else (pair.left.id, pair.right.id)


def as_a_b(scope, pair):
    if pair is None:
        return None
    left, right = pair.left, pair.right
    return (left.id, right.id) if left.target_id == scope.target_a.id else (right.id, left.id)


def random_items(rng, run, target, tasks):
    """Answers to a random part of `tasks`, a few repeated, a few not answered (yet)."""
    for task in tasks:
        for _repeat in range(rng.choice((0, 1, 1, 1, 2))):
            if rng.random() < 0.15:
                add_item(run, target, task, status=NEW)
            else:
                add_item(run, target, task, score=rng.randrange(101))


def random_scope(seed, across_runs):
    rng = random.Random(seed)
    tasks = [f"t{n:02d}" for n in range(rng.randrange(1, 25))]
    rng.shuffle(tasks)  # ids in another order than the tasks'
    run_a, (ta, other) = make_run(f"a{seed}", targets=[("local", "m1"), ("local", "m2")])
    if across_runs:
        run_b, (tb,) = make_run(f"b{seed}", targets=[("local", "m3")])
    else:
        run_b, tb = run_a, other
    # Interleaved: sometimes B's item has the lower id of a pair, sometimes A's.
    for task in tasks:
        first, second = (
            ((run_a, ta), (run_b, tb)) if rng.random() < 0.5 else ((run_b, tb), (run_a, ta))
        )
        random_items(rng, *first, [task])
        random_items(rng, *second, [task])
    return rng, votes.scope(run_a.run_id, str(ta.id), run_b.run_id, str(tb.id))


def vote_on(pair, voter, rng):
    votes.record_vote(
        {"pairToken": pair.token, "winner": rng.choice(("LEFT", "RIGHT", "TIE"))}, voter
    )


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("across_runs", [False, True], ids=["one run", "two runs"])
def test_every_next_pair_and_the_count_equal_todays_computation(app, seed, across_runs):
    rng, scope = random_scope(seed, across_runs)
    assert votes.pair_count(scope) == old_count(scope)
    # Each person votes through their queue, one pair at a time, in turns; every pair offered
    # is the one the old computation picks for them.
    done = set()
    while len(done) < len(VOTERS):
        for voter in VOTERS:
            expected = old_next(scope, voter)
            pair = votes.next_pair(scope, voter)
            assert as_a_b(scope, pair) == expected
            if pair is None:
                done.add(voter)
            elif rng.random() < 0.8:
                vote_on(pair, voter, rng)
    assert votes.pair_count(scope) == old_count(scope)


def test_a_repeated_tasks_pairs_are_offered_in_todays_order(app):
    run, (ta, tb) = make_run("rep", targets=[("local", "m1"), ("local", "m2")])
    for target in (ta, tb, ta, tb, ta):
        add_item(run, target, "same", score=50)
    scope = votes.scope("rep", str(ta.id), None, str(tb.id))
    rng = random.Random(3)
    assert votes.pair_count(scope) == 6
    while (pair := votes.next_pair(scope, "human")) is not None:
        assert as_a_b(scope, pair) == old_next(scope, "human")
        vote_on(pair, "human", rng)
    assert old_next(scope, "human") is None


def test_a_new_answer_is_counted_and_offered(app):
    run, (ta, tb) = make_run("grow", targets=[("local", "m1"), ("local", "m2")])
    for target in (ta, tb):
        add_item(run, target, "t1", score=50)
    scope = votes.scope("grow", str(ta.id), None, str(tb.id))
    first = votes.next_pair(scope, "human")
    vote_on(first, "human", random.Random(1))
    assert votes.pair_count(scope) == 1
    assert votes.next_pair(scope, "human") is None
    for target in (ta, tb):
        add_item(run, target, "t2", score=50)
    scope = votes.scope("grow", str(ta.id), None, str(tb.id))  # the next request's
    assert votes.pair_count(scope) == 2
    assert votes.next_pair(scope, "human").task_key == "t2"


def test_an_undone_vote_brings_its_pair_back(app):
    _rng, scope = random_scope(11, across_runs=False)
    pair = votes.next_pair(scope, "human")
    vote_on(pair, "human", random.Random(2))
    assert shown(votes.next_pair(scope, "human")) != shown(pair)
    votes.undo_last_vote("human")
    assert shown(votes.next_pair(scope, "human")) == shown(pair)


def test_the_count_of_a_scope_without_pairs_is_zero(app):
    run, (ta, tb) = make_run("none", targets=[("local", "m1"), ("local", "m2")])
    add_item(run, ta, "t1", score=50)
    add_item(run, tb, "t1", status=NEW)
    scope = votes.scope("none", str(ta.id), None, str(tb.id))
    assert votes.pair_count(scope) == 0
    assert votes.next_pair(scope, "human") is None
