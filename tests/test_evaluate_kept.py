"""Evaluate's counts and its pickers' categories are kept with the picked run: the same as
counted today for every filter (a run alone included, which was counted on every view), and
they follow a new rating and a new item."""

import random

import pytest

from app.db.models import NEW
from app.ratings import cards
from app.ratings.kept import kept_choices
from app.ratings.kept import kept_progress
from app.ratings.store import save_rating
from app.results.kept import forget
from tests.factories import add_item
from tests.factories import make_run

CATEGORIES = ("math", "code", "", "prose")


@pytest.fixture
def run(app):
    rng = random.Random(7)
    run, targets = make_run("ev", targets=[("local", "m1"), ("local", "m2")])
    items = []
    for n in range(40):
        status = NEW if rng.random() < 0.2 else "COMPLETED"
        fields = {"category": rng.choice(CATEGORIES)}
        items.append(add_item(run, rng.choice(targets), f"t{n}", status=status, **fields))
    for item in rng.sample(items, 15):
        for person in ("human", "human:ann"):
            if rng.random() < 0.7:
                save_rating(item, rng.choice((None, 1, 3, 5)), [], "", rater=person)
    return run, targets, items


def filters_for(query, person="human"):
    filters = cards.parse_filters(query)
    filters.person = person
    return filters


@pytest.mark.parametrize(
    "query",
    [
        {"run": "ev"},
        {"run": "ev", "unrated": "1"},
        {"run": "ev", "blind": "1"},
        {"run": "ev", "category": "math"},
        {"run": "ev", "model": "m2"},
        {"run": "ev", "rating": "none"},
        {"run": "ev", "rating": "5", "unrated": "1"},
    ],
)
@pytest.mark.parametrize("person", ["human", "human:ann"])
def test_evaluates_kept_counts_equal_todays_count(run, query, person):
    filters = filters_for(query, person)
    today = cards.progress(filters)
    assert kept_progress(filters) == today
    forget()  # read back from the database as another process would
    assert kept_progress(filters) == today


def test_the_counts_of_a_run_follow_a_new_rating(run):
    _run, _targets, items = run
    filters = filters_for({"run": "ev"})
    before = kept_progress(filters)
    unrated = next(
        i for i in items if i.status == "COMPLETED" and cards.Rating.get_or_none(item=i.id) is None
    )
    save_rating(unrated, 4, [], "", rater="human")
    assert kept_progress(filters) == {**before, "rated": before["rated"] + 1}
    assert kept_progress(filters) == cards.progress(filters)


def test_the_kept_categories_equal_todays(run):
    filters = filters_for({"run": "ev"})
    today = cards.choices(filters)
    assert kept_choices(filters) == today
    forget()
    assert kept_choices(filters) == today
    assert kept_choices(filters)["categories"] == ["code", "math", "prose"]


def test_a_new_category_is_offered(run):
    the_run, targets, _items = run
    filters = filters_for({"run": "ev"})
    kept_choices(filters)
    add_item(the_run, targets[0], "t99", category="art")
    assert kept_choices(filters)["categories"] == ["art", "code", "math", "prose"]


def test_the_pickers_without_a_run_are_todays(run):
    filters = filters_for({})
    assert kept_choices(filters) == cards.choices(filters)
