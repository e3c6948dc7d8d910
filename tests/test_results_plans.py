"""Results pages by index: SQLite's plan for every query a page of the results table sends —
every sort, both directions, the common filters, the first page and a page after an item —
seeks an index of the run's items and reads it in order: no temp B-tree, no scan of the items
(EXPLAIN QUERY PLAN, read on a migrated database)."""

import pytest

from app.db.connection import database
from app.db.models import Item
from app.results.keyset import INDEXES
from app.results.keyset import SORTS
from app.results.keyset import Segment
from app.results.keyset import keys_query
from app.results.keyset import seek_queries
from app.results.keyset import segments
from app.results.table import _conditions
from app.results.table import count_query
from tests.factories import make_run

# SQLite's plans: PostgreSQL has none of these (its own planner reads its statistics).
pytestmark = pytest.mark.sqlite_only

FILTERS = {
    "none": {},
    "model": {"model": "1"},
    "status": {"status": "COMPLETED"},
    "judge_failed": {"status": "judge_failed"},
    "category": {"category": "math"},
    "difficulty": {"difficulty": "hard"},
    "min_score": {"min_score": 20.0},
    "score_range": {"min_score": 20.0, "max_score": 80.0},
}


@pytest.fixture
def run(app):
    run, _targets = make_run(targets=[("a", "m1"), ("b", "m2")])
    return run


def _plan(query):
    sql, params = query.sql()
    return [row[-1] for row in database.execute_sql("EXPLAIN QUERY PLAN " + sql, params)]


def _item_scans(plan):
    """The plan's steps that sort in a temp B-tree or read the item table whole."""
    return [s for s in plan if "TEMP B-TREE" in s or s.startswith(("SCAN t1", "SCAN item"))]


@pytest.mark.parametrize("filter_name", FILTERS)
@pytest.mark.parametrize("desc", [False, True], ids=["asc", "desc"])
@pytest.mark.parametrize("sort", SORTS)
def test_every_sort_and_filter_reads_an_index_in_order(run, sort, desc, filter_name):
    filters = FILTERS[filter_name]
    cond = _conditions(run, filters, score="none" if sort == "score" else "hidden")
    order = segments(run, sort, desc, filters)
    if sort == "difficulty":  # an empty run has no difficulty values yet: name one
        order = [Segment(Item.difficulty, "hard", (Item.task_key,))]
    assert order
    for segment in order:
        for key in (None, (1,) * (len(segment.columns) + 1)):
            for reverse in (desc, not desc):  # Next walks forwards, Previous backwards
                for query in seek_queries(cond, segment, reverse, key, INDEXES[sort]):
                    plan = _plan(query.limit(51))
                    assert not _item_scans(plan), (segment, key, plan)
                    assert any(f"INDEX {INDEXES[sort]} (" in s for s in plan), plan


@pytest.mark.parametrize("filter_name", [f for f in FILTERS if f != "none"])
def test_a_small_filtered_set_is_read_by_its_filter_index(run, filter_name):
    plan = _plan(keys_query(_conditions(run, FILTERS[filter_name]), "task"))
    assert not [s for s in plan if s.startswith(("SCAN t1", "SCAN item"))], plan


@pytest.mark.parametrize(
    "filters",
    [
        {"category": "math"},
        {"difficulty": "hard"},
        {"min_score": 20.0, "max_score": 80.0},
        {"model": "1", "min_score": 50.0},
    ],
    ids=["category", "difficulty", "score_range", "model_score"],
)
def test_a_filter_the_kept_counts_do_not_hold_is_counted_over_an_index_alone(run, filters):
    targets = [1] if "model" in filters else None
    cond = _conditions(run, filters, targets=targets)
    plan = _plan(count_query(cond))
    assert any("USING COVERING INDEX" in s for s in plan), plan
    assert not _item_scans(plan), plan
