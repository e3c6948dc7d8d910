"""Which runs people's labels changed in since a point, read from the labels tables themselves.

Every change of a rating or a vote adds a row somewhere: a new rating a Rating row, a changed or
cleared one a RatingHistory row, a new vote a Vote row, a changed or undone one a VoteHistory
row. So the newest id of each of the four tables (latest_ids: their primary keys, one statement)
moves with every change, whichever process made it, and the rows past the ids last seen name the
runs changed (changed_runs: a primary key range each). The warm pass (exports/warm.py) re-warms
those runs at once instead of when their turn comes; a pass with nothing new reads one row.

Ids are not times: on PostgreSQL a transaction may commit a row after a higher id was seen, and
SQLite gives the id of a deleted newest row (an undone vote) to the next one; such a change is
missed here and left to the pass's turns, as every change was before.
"""

from peewee import Select
from peewee import fn

from ..db.connection import database
from ..db.models import Item
from ..db.models import Rating
from ..db.models import RatingHistory
from ..db.models import RunTarget
from ..db.models import Vote
from ..db.models import VoteHistory

TABLES = (Rating, RatingHistory, Vote, VoteHistory)


def latest_ids():
    """The newest id of each of TABLES (0 for an empty one), read in one statement."""
    newest = [table.select(fn.MAX(table.id)) for table in TABLES]
    row = Select(columns=newest).bind(database).tuples().first()  # four sub-selects, no FROM
    return tuple(n or 0 for n in row)


def changed_runs(after, upto):
    """The ids of the runs that the rows of TABLES with ids past `after` and up to `upto` (as
    latest_ids gives them) touched, each once, in the order of the tables."""
    runs = {}
    readers = (_rated, _rerated, _voted, _revoted)
    for read, low, high in zip(readers, after, upto, strict=True):
        if high > low:
            runs.update(dict.fromkeys(read(low, high)))
    return list(runs)


def _between(table, low, high):
    return (table.id > low) & (table.id <= high)


def _rated(low, high):
    rows = Rating.select(Rating.run).where(_between(Rating, low, high)).distinct()
    return (run for (run,) in rows.tuples())


def _rerated(low, high):
    rows = (
        Item.select(Item.run)
        .join(RatingHistory, on=(RatingHistory.item == Item.id))
        .where(_between(RatingHistory, low, high))
        .distinct()
    )
    return (run for (run,) in rows.tuples())


def _voted(low, high):
    sides = (RunTarget.id == Vote.left_target) | (RunTarget.id == Vote.right_target)
    rows = (
        RunTarget.select(RunTarget.run)
        .join(Vote, on=sides)
        .where(_between(Vote, low, high))
        .distinct()
    )
    return (run for (run,) in rows.tuples())


def _revoted(low, high):
    # A history row keeps the vote's items, not its targets (the vote may be gone).
    sides = (Item.id == VoteHistory.old_left_item) | (Item.id == VoteHistory.old_right_item)
    rows = (
        Item.select(Item.run)
        .join(VoteHistory, on=sides)
        .where(_between(VoteHistory, low, high))
        .distinct()
    )
    return (run for (run,) in rows.tuples())
