"""The results table's keyset pages (results/keyset.py): Next, Previous, First, Last and a
page named by number read the same rows, in the same order, as one sort of the whole run."""

import random

import pytest

from app.clock import utcnow
from app.db.models import DIFFICULTIES
from app.db.models import FAILED
from app.db.models import Item
from app.results import table
from app.results.keyset import NULLABLE
from app.results.keyset import SORTS
from app.results.table import results_page
from tests.factories import bulk_items
from tests.factories import make_run

PER_PAGE = 7
COLUMN = {
    "task": ("task_key",),
    "category": ("category", "task_key"),
    "status": ("status",),
    "time": ("time_taken_ms",),
    "ttft": ("ttft_ms",),
    "tokens": ("tokens_generated",),
    "tps": ("tokens_per_second",),
    "score": ("evaluation_score",),
    "cost": ("cost_usd",),
}


@pytest.fixture
def mixed(app):
    """Three targets (two with the same provider and label), ties, empty values, difficulties
    outside the usual three, a few failures."""
    run, targets = make_run(targets=[("b", "m2"), ("a", "m1"), ("a", "m1", {"temperature": 1})])
    for n, target in enumerate(targets):
        bulk_items(run, target, 20, start=n * 20, score_of=lambda k: float(k % 5))
    rng = random.Random(7)
    items = list(Item.select().where(Item.run == run))
    blanked = ("time_taken_ms", "ttft_ms", "tokens_generated", "evaluation_score")
    for item in items:
        for name in blanked:
            if rng.random() < 0.2:
                setattr(item, name, None)
        item.cost_usd = rng.choice([None, 0.001, 0.002])
        item.difficulty = rng.choice([*DIFFICULTIES, "", "expert"])
        item.task_key = f"t{rng.randrange(15):02d}"
        item.status = FAILED if rng.random() < 0.1 else item.status
    changed = [*blanked, "cost_usd", "difficulty", "task_key", "status"]
    Item.bulk_update(items, fields=[getattr(Item, name) for name in changed])
    return run


def _expected(run, sort, desc, filters=None):
    """The whole table's order, sorted in Python the way the page promises."""
    items = list(Item.select().where(Item.run == run).order_by(Item.id))
    if filters and "status" in filters:
        items = [i for i in items if i.status == filters["status"]]
    if filters and "model" in filters:
        items = [i for i in items if i.target_id == int(filters["model"])]
    if filters and "min_score" in filters:
        low, high = filters["min_score"], filters["max_score"]
        items = [i for i in items if i.evaluation_score is not None]
        items = [i for i in items if low <= i.evaluation_score <= high]
    if sort == "model":
        target = {i.target_id: i.target for i in items}

        def key(i):
            t = target[i.target_id]
            return (t.provider_name, t.label, i.target_id, i.id)
    elif sort == "difficulty":
        rank = {d: (n, "") for n, d in enumerate(DIFFICULTIES)}
        key = lambda i: (rank.get(i.difficulty, (9, i.difficulty)), i.task_key, i.id)  # noqa: E731
    else:
        names = COLUMN[sort]
        key = lambda i: (*(getattr(i, n) for n in names), i.id)  # noqa: E731
    if sort in NULLABLE:
        (name,) = COLUMN[sort]
        have = sorted((i for i in items if getattr(i, name) is not None), key=key, reverse=desc)
        empty = sorted((i for i in items if getattr(i, name) is None), key=key, reverse=desc)
        return [i.id for i in have + empty]
    return [i.id for i in sorted(items, key=key, reverse=desc)]


def _ids(page):
    return [r["id"] for r in page.rows]


@pytest.mark.parametrize("desc", [False, True], ids=["asc", "desc"])
@pytest.mark.parametrize("sort", SORTS)
def test_next_links_read_the_whole_sorted_table(mixed, sort, desc):
    direction = "desc" if desc else "asc"
    page = results_page(mixed, sort, {}, 1, PER_PAGE, direction=direction)
    seen = _ids(page)
    while page.has_next:
        page = results_page(mixed, sort, {}, page.page + 1, PER_PAGE, direction, after=page.after)
        seen += _ids(page)
    assert seen == _expected(mixed, sort, desc)
    assert page.page == page.pages


@pytest.mark.parametrize("desc", [False, True], ids=["asc", "desc"])
@pytest.mark.parametrize("sort", SORTS)
def test_previous_links_from_the_last_page_read_it_backwards(mixed, sort, desc):
    direction = "desc" if desc else "asc"
    last = results_page(mixed, sort, {}, 99, PER_PAGE, direction=direction)
    pages = [_ids(last)]
    page = last
    while page.has_prev:
        page = results_page(mixed, sort, {}, page.page - 1, PER_PAGE, direction, before=page.before)
        pages.insert(0, _ids(page))
    expected = _expected(mixed, sort, desc)
    assert [len(p) for p in pages] == [len(expected[n : n + PER_PAGE]) for n in range(0, 60, 7)]
    assert sum(pages, []) == expected
    assert page.page == 1


@pytest.mark.parametrize("sort", ["model", "difficulty", "score", "category"])
def test_a_page_named_by_number_matches_the_sorted_table(mixed, sort):
    expected = _expected(mixed, sort, True)
    for number in range(1, 10):
        page = results_page(mixed, sort, {}, number, PER_PAGE, direction="desc")
        assert _ids(page) == expected[(number - 1) * PER_PAGE : number * PER_PAGE], number


@pytest.mark.parametrize("small_set", [0, 5000], ids=["index-walk", "in-memory"])
@pytest.mark.parametrize(
    "filters", [{"status": FAILED}, {"model": "first"}, {"min_score": 1.0, "max_score": 3.0}]
)
@pytest.mark.parametrize("sort", ["model", "score", "difficulty", "status", "time"])
def test_keyset_pages_keep_the_filters(mixed, sort, filters, small_set, monkeypatch):
    # Both ways of reading a filtered page: walking the sort's index, or (few matches) sorting
    # them in memory (table.SMALL_SET).
    monkeypatch.setattr(table, "SMALL_SET", small_set)
    if filters.get("model") == "first":
        filters = {"model": str(Item.select().where(Item.run == mixed).first().target_id)}
    page = results_page(mixed, sort, filters, 1, 3)
    seen = _ids(page)
    while page.has_next:
        page = results_page(mixed, sort, filters, page.page + 1, 3, after=page.after)
        seen += _ids(page)
    assert seen == _expected(mixed, sort, False, filters)
    assert len(seen) == page.total


def test_a_cursor_from_another_run_is_refused(mixed):
    other, (target,) = make_run("run-2")
    bulk_items(other, target, 3)
    stranger = Item.select().where(Item.run == other).first().id
    with pytest.raises(Exception, match="not in this run"):
        results_page(mixed, "task", {}, 2, PER_PAGE, after=stranger)


@pytest.mark.parametrize("sort", ["model", "score", "difficulty", "task"])
def test_previous_links_of_a_few_filtered_items_read_them_backwards(mixed, sort):
    # A filter's few matches are sorted in memory and kept: read backwards from the last page.
    filters = {"min_score": 1.0, "max_score": 3.0}
    expected = _expected(mixed, sort, True, filters)
    page = results_page(mixed, sort, filters, 99, 3, direction="desc")
    seen = _ids(page)
    while page.has_prev:
        page = results_page(mixed, sort, filters, page.page - 1, 3, "desc", before=page.before)
        seen = _ids(page) + seen
    assert seen == expected


def test_a_cursor_outside_the_filter_continues_after_its_place(mixed):
    # A Next link kept from before the filter changed: its item matches no more, and the page
    # goes on after its place in the sort.
    filters = {"min_score": 1.0, "max_score": 3.0}
    expected = _expected(mixed, "score", False, filters)
    outside = Item.select().where((Item.run == mixed) & (Item.evaluation_score == 0)).first()
    page = results_page(mixed, "score", filters, 2, 3, after=outside.id)
    assert _ids(page) == expected[:3]


def test_a_filtered_table_follows_a_change_of_the_run(mixed):
    filters = {"status": FAILED}
    shown = _ids(results_page(mixed, "task", filters, 1, 100))
    item = Item.select().where((Item.run == mixed) & (Item.status != FAILED)).first()
    Item.update(status=FAILED, updated_at=utcnow()).where(Item.id == item.id).execute()
    now = _ids(results_page(mixed, "task", filters, 1, 100))
    assert sorted(now) == sorted([*shown, item.id])
    assert now == _expected(mixed, "task", False, filters)


def test_the_count_of_a_model_or_status_filter_is_the_items_it_matches(mixed):
    # Read from the kept counts: the same number as counting the items the filter matches.
    failed = Item.select().where((Item.run == mixed) & (Item.status == FAILED))
    Item.update(error_stage="judge").where(Item.id.in_([i.id for i in failed][:2])).execute()
    target = str(Item.select().where(Item.run == mixed).first().target_id)
    for status in ("", FAILED, "COMPLETED", "NEW", "judge_failed", "answer_failed"):
        for model in ("", target):
            filters = {k: v for k, v in (("status", status), ("model", model)) if v}
            counted = Item.select().where(table._conditions(mixed, filters)).count()
            assert results_page(mixed, "task", filters, 1, 5).total == counted, filters
