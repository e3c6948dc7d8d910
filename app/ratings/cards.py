"""The Evaluate queue: answered items one card at a time, filtered, each person's own.

Filters live in the URL (bookmarkable): run, model, target, category, rating (1-5 or "none"),
tag, unrated, since/until (the run's start date) and blind. Ratings are the person's own (the
filters' `person`): "not rated yet" is "not rated by me", the card shows my rating. Browsing
goes in item order: next and previous are one indexed query each (id > current / id < current,
LIMIT 1). My queue (unrated) and blind mode go in my own shuffled order instead (people.py:
a stable permutation of the ids, stored per person), which mixes the targets so the order gives
no model away; next is then the smallest shuffled position above the current one (a scan of the
filtered items' ids, no index). "Previous" ignores `unrated`: going back shows the card just
rated.
"""

import datetime as dt
from dataclasses import dataclass

from peewee import fn

from ..db.models import HUMAN
from ..db.models import Item
from ..db.models import Rating
from ..db.models import RatingTag
from ..db.models import Run
from ..db.models import RunTarget
from ..errors import NotFound
from ..errors import ValidationError
from ..ids import is_db_id
from ..ids import whole_number
from ..runs.queries import get_run
from .people import QUEUE_PRIME
from .people import position
from .people import queue_order
from .people import shuffle_key
from .store import clean_body
from .store import save_rating

FILTER_KEYS = ("run", "model", "target", "category", "rating", "tag", "unrated", "since", "until")
FLAG_KEYS = ("blind", "stay")  # stay: a rating key keeps the card (by default it moves on)
RATING_FILTERS = ("1", "2", "3", "4", "5", "none")
CARD_COLUMNS = (
    Item.id,
    Item.run,
    Item.target,
    Item.task_key,
    Item.category,
    Item.question,
    Item.answer,
    Item.excellent,
    Item.good,
    Item.pass_answer,
    Item.incorrect_direction,
    Item.status,
    Item.error_stage,
    Item.evaluation_score,
    Item.evaluation_reason,
    # The checks beside the judge, and whether a judge saw the answer (as the item page says).
    Item.check_score,
    Item.check_results,
    Item.judge_scores,
    Item.judge_ms,
    Item.judge_raw,
    RunTarget.id,
    RunTarget.provider_name,
    RunTarget.model,
    RunTarget.label,
    Run.id,
    Run.run_id,
    Run.judge_provider_name,
    Run.judge_model,
)


class Filters(dict):
    """The queue's filters as the URL gives them, plus the picked run's row id (looked up once
    per request, not once per query) and whose queue it is (the edge sets `person`)."""

    run_pk = None
    person = HUMAN


def _person(filters):
    return getattr(filters, "person", HUMAN)


def shuffled(filters):
    """True when the queue goes in the person's shuffled order: my queue, or blind mode."""
    return bool(filters.get("unrated") or filters.get("blind"))


def _run_pk(filters):
    run_pk = getattr(filters, "run_pk", None)
    return run_pk if run_pk is not None else get_run(filters["run"]).id


@dataclass
class Card:
    """One item to rate, its neighbours in the queue and where it stands."""

    item: object
    target: object
    run: object
    rating: object
    prev_id: int | None
    next_id: int | None


def _date(value, field):
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise ValidationError.field(field, "use a date as YYYY-MM-DD") from None


def parse_filters(args, prefix=""):
    """The queue's filters from a query string, or from a card form where they carry `prefix`
    (its own fields are named rating, tags, notes); whitelisted, 400 names a bad one."""
    filters = Filters()
    errors = []
    for key in FILTER_KEYS + FLAG_KEYS:
        value = (args.get(prefix + key) or "").strip()
        if not value:
            continue
        try:
            if key == "run":
                filters.run_pk = get_run(value).id  # 404 for an unknown run
            elif key == "target":
                value = whole_number(value, "target", low=1)
            elif key == "rating" and value not in RATING_FILTERS:
                raise ValidationError.field("rating", "use 1-5, or none for rated without a number")
            elif key in ("unrated", "blind", "stay"):
                value = value not in ("0", "false", "off")
            elif key in ("since", "until"):
                _date(value, key)
        except ValidationError as exc:
            errors += exc.errors
            continue
        filters[key] = value
    if errors:
        raise ValidationError(errors)
    return filters


def _where(filters):
    """The items the filters select: answered ones only (there is nothing to rate otherwise).

    `answered_at` is set with every answer the engine records (never for an empty one), and it
    is in an index beside run_id, so the queue's counts need not read the items' rows.
    """
    cond = Item.answered_at.is_null(False)
    if filters.get("run"):
        cond &= Item.run == _run_pk(filters)
    if filters.get("target"):
        cond &= Item.target == filters["target"]
    if filters.get("model"):
        cond &= Item.target.in_(
            RunTarget.select(RunTarget.id).where(RunTarget.model == filters["model"])
        )
    if filters.get("category"):
        cond &= Item.category == filters["category"]
    since, until = filters.get("since"), filters.get("until")
    if since or until:
        runs = Run.select(Run.id)
        if since:
            runs = runs.where(Run.created_at >= dt.datetime.fromisoformat(since))
        if until:
            end = dt.datetime.fromisoformat(until) + dt.timedelta(days=1)
            runs = runs.where(Run.created_at < end)
        cond &= Item.run.in_(runs)
    rated = Rating.select(Rating.id).where(
        (Rating.item == Item.id) & (Rating.rater == _person(filters))
    )
    if filters.get("rating") == "none":
        cond &= fn.EXISTS(rated.where(Rating.rating.is_null()))
    elif filters.get("rating"):
        cond &= fn.EXISTS(rated.where(Rating.rating == int(filters["rating"])))
    if filters.get("tag"):
        cond &= fn.EXISTS(
            RatingTag.select(RatingTag.id).where(
                (RatingTag.item == Item.id) & (RatingTag.tag == filters["tag"])
            )
        )
    if filters.get("unrated"):
        cond &= ~fn.EXISTS(rated.where(Rating.rating.is_null(False)))
    return cond


def _without(filters, key):
    """A copy of the filters without one of them (the run's row id kept)."""
    out = Filters({k: v for k, v in filters.items() if k != key})
    out.run_pk = getattr(filters, "run_pk", None)
    out.person = _person(filters)
    return out


def _first_id(cond, order):
    row = Item.select(Item.id).where(cond).order_by(order).limit(1).tuples().first()
    return row[0] if row else None


def _position(filters):
    """The person's shuffled position of an item, as SQL: (id * a + b) mod P."""
    a, b = queue_order(_person(filters))
    # x - (x / P) * P with integer division: no `%` (Peewee reads it as LIKE, psycopg as a
    # placeholder) and no MOD() (not every SQLite has it).
    return position(Item.id, a, b, mod=lambda x: x - (x / QUEUE_PRIME) * QUEUE_PRIME)


def next_id(filters, after=None):
    """The next item id in the queue after `after` (or the first), or None."""
    cond = _where(filters)
    if shuffled(filters):
        position = _position(filters)
        if after is not None:
            cond &= position > shuffle_key(_person(filters), after)
        return _first_id(cond, position.asc())
    if after is not None:
        cond &= Item.id > after
    return _first_id(cond, Item.id.asc())


def prev_id(filters, before):
    """The previous item id before `before` (rated or not: `unrated` is not applied), or None."""
    cond = _where(_without(filters, "unrated"))
    if shuffled(filters):
        position = _position(filters)
        cond &= position < shuffle_key(_person(filters), before)
        return _first_id(cond, position.desc())
    return _first_id(cond & (Item.id < before), Item.id.desc())


def card(filters, item_id=None):
    """The card for `item_id` (or the queue's first item); None when the queue is empty."""
    if item_id in (None, ""):
        item_id = next_id(filters)
        if item_id is None:
            return None
    else:
        item_id = whole_number(item_id, "item", low=1)
    item = (
        # Only what a card shows: an item row has 60 columns, a card needs these.
        Item.select(*CARD_COLUMNS)
        .join(RunTarget, on=(Item.target == RunTarget.id))
        .switch(Item)
        .join(Run, on=(Item.run == Run.id))
        .where(Item.id == item_id)
        .first()
        if is_db_id(item_id)
        else None
    )
    if item is None or item.answer in (None, ""):
        raise NotFound(f"No answered item {item_id} to rate.")
    return Card(
        item=item,
        target=item.target,
        run=item.run,
        rating=Rating.get_or_none((Rating.item == item.id) & (Rating.rater == _person(filters))),
        prev_id=prev_id(filters, item.id),
        next_id=next_id(filters, item.id),
    )


FAST_PROGRESS = {"run", "unrated", "blind"}  # filters progress() counts from indexes alone


def progress(filters):
    """{"total", "rated"}: the answers the filters select (rated or not) and how many of them
    have a rating number. With at most a run picked, two index counts (items by run and answer
    time, ratings by run); other filters count through the queue's own conditions."""
    if set(filters) <= FAST_PROGRESS:
        items, rated = Item.select(), Rating.select()
        if filters.get("run"):
            run_pk = _run_pk(filters)
            items, rated = items.where(Item.run == run_pk), rated.where(Rating.run == run_pk)
        rated = rated.where(Rating.rater == _person(filters))
        return {
            "total": items.where(Item.answered_at.is_null(False)).count(),
            "rated": rated.where(Rating.rating.is_null(False)).count(),
        }
    cond = _where(_without(filters, "unrated"))
    rated = Rating.select(Rating.id).where(
        (Rating.item == Item.id) & Rating.rating.is_null(False) & (Rating.rater == _person(filters))
    )
    return {
        "total": Item.select().where(cond).count(),
        "rated": Item.select().where(cond & fn.EXISTS(rated)).count(),
    }


def run_categories(run_pk):
    """The categories of a run's items, in order (a walk of the index (run, category))."""
    query = Item.select(Item.category).distinct().where(Item.run == run_pk)
    return [c for (c,) in query.order_by(Item.category).tuples() if c]


def choices(filters=None, categories=run_categories):
    """What the filter pickers offer: runs (newest first), models, and the picked run's targets
    and categories (`categories(run_pk)`: ratings/kept.py passes the kept ones)."""
    runs = list(
        Run.select(Run.run_id, Run.created_at).order_by(Run.created_at.desc()).limit(200).tuples()
    )
    models = [
        m
        for (m,) in RunTarget.select(RunTarget.model).distinct().order_by(RunTarget.model).tuples()
    ]
    targets = []
    if (filters or {}).get("run"):
        run_pk = _run_pk(filters)
        found = categories(run_pk)
        targets = list(
            RunTarget.select(RunTarget.id, RunTarget.provider_name, RunTarget.label)
            .where(RunTarget.run == run_pk)
            .order_by(RunTarget.position)
            .tuples()
        )
    else:
        query = Item.select(Item.category).distinct().order_by(Item.category)
        found = [c for (c,) in query.tuples() if c]
    return {"runs": runs, "models": models, "categories": found, "targets": targets}


def save_and_move(item_id, form, filters, then="stay"):
    """Store the card's rating, tags and notes as submitted, then the id of the card to show:
    this one (stay), the next or the previous (None past either end). ValidationError names
    the field and stores nothing."""
    item = (
        Item.select(Item.id, Item.run, Item.answered_at).where(Item.id == item_id).first()
        if is_db_id(item_id)
        else None
    )
    if item is None or item.answered_at is None:
        raise NotFound(f"No answered item {item_id} to rate.")
    if form.get("clear"):
        rating, tags, notes = None, [], ""
    else:
        rating, tags, notes = clean_body(
            {"rating": form.get("rating"), "tags": form.get("tags"), "notes": form.get("notes")}
        )
    save_rating(item, rating, tags, notes, rater=_person(filters))
    if then == "next":
        return next_id(filters, item.id)
    if then == "prev":
        return prev_id(filters, item.id)
    return item.id
