"""The A/B page's pairs are found by one index seek per pair, whatever the run's size: B's item is
sought by (run, target, task id), not by scanning B's answers for each of A's
(pair_queue.pairs_query, judge_jobs.unjudged_pairs), and the page's pairs from an index alone,
no item row read. Checked on SQLite's plan, with no table statistics, as a fresh database has."""

import datetime as dt

import pytest

from app.db.connection import database
from app.ratings import votes
from app.ratings.pair_queue import pairs_query
from app.runs.judge_jobs import unjudged_pairs
from tests.factories import add_item
from tests.factories import make_run

T = dt.datetime(2026, 1, 5, 9, 0, 0)


@pytest.fixture
def scope(app):
    run, (ta, tb) = make_run("pairs", targets=[("local", "m1"), ("local", "m2")])
    for n in range(3):
        for target in (ta, tb):
            add_item(run, target, f"t{n}", score=50, answered_at=T)
    return votes.scope("pairs", str(ta.id), None, str(tb.id))


def plan(query):
    sql, params = query.sql()
    return [row[-1] for row in database.execute_sql(f"EXPLAIN QUERY PLAN {sql}", params)]


def test_each_pairs_b_item_is_sought_by_its_task(scope):
    seeks = [step for step in plan(pairs_query(scope)) if step.startswith("SEARCH b ")]
    assert seeks and "task_key=?" in seeks[0]


def test_the_pages_pairs_are_read_from_an_index_alone(scope):
    steps = [step for step in plan(pairs_query(scope)) if step.startswith("SEARCH ")]
    assert [step.split()[1] for step in steps] == ["a", "b"]
    assert all("USING COVERING INDEX item_answered_task" in step for step in steps), steps


def test_the_pairs_are_counted(scope):
    assert votes.pair_count(scope) == 3


def test_the_pending_pairs_are_each_task_once(scope):
    pending = unjudged_pairs(scope.target_a, scope.target_b, "human")
    assert [task for _a, _b, task in pending] == ["t0", "t1", "t2"]
