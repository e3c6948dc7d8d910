"""People's ratings: a Likert 1-5 per item with tags and notes, stored, cleared and read.

One Rating row per item and rater (`evaluations`); its tags are also RatingTag rows so the
Evaluate page can filter by a tag and autocomplete from the tags used before.
"""

from peewee import fn

from ..clock import isoformat
from ..clock import utcnow
from ..db.connection import database
from ..db.models import HUMAN
from ..db.models import Item
from ..db.models import Rating
from ..db.models import RatingHistory
from ..db.models import RatingTag
from ..errors import NotFound
from ..errors import ValidationError
from ..ids import digits_number
from ..ids import is_db_id
from ..runs.queries import get_run

LIKERT = (1, 2, 3, 4, 5)
TAG_MAX = 100
TAGS_MAX = 30
NOTES_MAX = 20_000


def get_item(run_id, item_id):
    """The item `item_id` of run `run_id`, or NotFound naming what is missing."""
    run = get_run(run_id)
    item = Item.get_or_none((Item.id == item_id) & (Item.run == run)) if is_db_id(item_id) else None
    if item is None:
        raise NotFound(f"Run {run_id!r} has no item {item_id}.")
    return item


def clean_rating(value, field="rating"):
    """A Likert value 1-5, or None for "not rated"; ValidationError naming the field."""
    if value in (None, ""):
        return None
    if isinstance(value, str) and digits_number(value) is not None:
        value = digits_number(value)
    if isinstance(value, bool) or not isinstance(value, int) or value not in LIKERT:
        raise ValidationError.field(field, "must be a whole number from 1 to 5 (or null)")
    return value


def clean_tags(value, field="tags"):
    """Tags as a list of distinct short texts (a comma-separated text is split)."""
    if value in (None, ""):
        return []
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
        raise ValidationError.field(field, "must be a list of texts")
    tags = list(dict.fromkeys(t.strip() for t in value if t.strip()))
    for tag in tags:
        if len(tag) > TAG_MAX or "," in tag:
            raise ValidationError.field(
                field, f"{tag[:40]!r}: a tag has at most {TAG_MAX} characters and no comma"
            )
    if len(tags) > TAGS_MAX:
        raise ValidationError.field(field, f"at most {TAGS_MAX} tags per item")
    return tags


def clean_notes(value, field="notes"):
    """Notes as text (None is empty)."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ValidationError.field(field, "must be text")
    if len(value) > NOTES_MAX:
        raise ValidationError.field(field, f"must be at most {NOTES_MAX} characters")
    return value


def clean_body(body):
    """(rating, tags, notes) from a JSON body or a form; every problem named at once."""
    if not isinstance(body, dict):
        raise ValidationError.field("body", 'send {"rating": 1-5, "tags": [...], "notes": "..."}')
    unknown = sorted(set(body) - {"rating", "tags", "notes"})
    errors = [{"field": k, "message": "unknown field; use rating, tags, notes"} for k in unknown]
    values = []
    for name, clean in (("rating", clean_rating), ("tags", clean_tags), ("notes", clean_notes)):
        try:
            values.append(clean(body.get(name)))
        except ValidationError as exc:
            errors += exc.errors
            values.append(None)
    if errors:
        raise ValidationError(errors)
    return tuple(values)


def _keep_history(current, changed_by, action, now):
    """The rating as it was, before `action` (change | clear) by `changed_by`."""
    RatingHistory.create(
        rating_id=current.id,
        item=current.item_id,
        rater=current.rater,
        changed_by=changed_by,
        changed_at=now,
        action=action,
        old_rating=current.rating,
        old_tags=current.tags or [],
        old_notes=current.notes or "",
    )


def save_rating(item, rating, tags, notes, now=None, rater=HUMAN, changed_by=None):
    """Store `rater`'s rating, tags and notes of the item (replacing theirs); the Rating, or
    None when everything is empty (nothing stored, their earlier rating cleared). Every change
    keeps the old value in RatingHistory (who changed it, when)."""
    now = now or utcnow()
    changed_by = changed_by or rater
    with database.atomic():
        current = Rating.get_or_none((Rating.item == item.id) & (Rating.rater == rater))
        if rating is None and not tags and not notes:
            if current is not None:
                _keep_history(current, changed_by, "clear", now)
                current.delete_instance()
            return None
        if current is not None and (current.rating, current.tags or [], current.notes) == (
            rating,
            tags,
            notes,
        ):
            return current  # unchanged: moving on from a card writes nothing
        if current is None:
            current = Rating.create(
                item=item.id,
                run=item.run_id,
                rating=rating,
                tags=tags,
                notes=notes,
                created_at=now,
                updated_at=now,
                rater=rater,
            )
        else:
            _keep_history(current, changed_by, "change", now)
            Rating.update(rating=rating, tags=tags, notes=notes, updated_at=now).where(
                Rating.id == current.id
            ).execute()
            RatingTag.delete().where(RatingTag.rating == current.id).execute()
        if tags:
            RatingTag.insert_many(
                [{"rating": current.id, "item": item.id, "tag": t} for t in tags]
            ).execute()
    return Rating.get_by_id(current.id)


def put_rating(run_id, item_id, body, now=None, rater=HUMAN):
    """PUT a rating: check the body, then store it as `rater`'s on the run's item; the Rating
    or None."""
    item = get_item(run_id, item_id)
    rating, tags, notes = clean_body(body)
    if item.answered_at is None:
        raise ValidationError.field(
            "itemId", f"item {item_id} has no answer to rate (status {item.status})"
        )
    return save_rating(item, rating, tags, notes, now, rater=rater)


def clear_rating(run_id, item_id, rater=HUMAN):
    """Remove `rater`'s rating, tags and notes of the item (nothing to remove is fine); the old
    value goes to the history."""
    item = get_item(run_id, item_id)
    save_rating(item, None, [], "", rater=rater)


def rating_history(item_id, rater=None):
    """An item's rating changes, newest first (of one rater when given), as JSON."""
    query = RatingHistory.select().where(RatingHistory.item == item_id)
    if rater is not None:
        query = query.where(RatingHistory.rater == rater)
    return [
        {
            "rater": h.rater,
            "changedBy": h.changed_by,
            "changedAt": isoformat(h.changed_at),
            "action": h.action,
            "oldRating": h.old_rating,
            "oldTags": h.old_tags or [],
            "oldNotes": h.old_notes,
        }
        for h in query.order_by(RatingHistory.id.desc())
    ]


def rating_to_dict(rating):
    """A rating as JSON (humanRating in the item DTO, the PUT reply)."""
    if rating is None:
        return None
    return {
        "itemId": rating.item_id,
        "rater": rating.rater,
        "rating": rating.rating,
        "tags": rating.tags or [],
        "notes": rating.notes,
        "createdAt": isoformat(rating.created_at),
        "updatedAt": isoformat(rating.updated_at),
    }


def ratings_for(item_ids, rater=HUMAN):
    """{item id: rating dict} of `rater` for the items that have one (one query)."""
    ids = [i for i in item_ids if is_db_id(i)]
    if not ids:
        return {}
    query = Rating.select().where(Rating.item.in_(ids) & (Rating.rater == rater))
    return {r.item_id: rating_to_dict(r) for r in query}


def tags_used(limit=300):
    """The tags used before, most used first (the tag input's autocomplete)."""
    count = fn.COUNT(RatingTag.id)
    return [
        tag
        for tag, _n in RatingTag.select(RatingTag.tag, count)
        .group_by(RatingTag.tag)
        .order_by(count.desc(), RatingTag.tag)
        .limit(limit)
        .tuples()
    ]
