"""Who a label belongs to, and each person's queue order.

A person's ratings and votes are stored under "human" when nobody signs in (one person, local
first), else "human:<account name>" (the account the web app signed in: issue 30's contract).
The judge's votes stay "judge:<provider>/<model>".
"""

import random

from peewee import IntegrityError

from ..db.connection import database
from ..db.models import HUMAN
from ..db.models import LabelQueue

# A prime above any row id we will see. A person's queue position of an id is y^5 mod P with
# y = (id * a + b) mod P: both steps are permutations of 0..P-1 (gcd(5, P - 1) = 1), so every id
# below P has its own position, and the power scrambles what the linear step alone leaves in
# order (consecutive ids, one target's answers, would come out evenly spaced). Every product
# stays below 2^62: plain 64-bit integer arithmetic the database can sort by, on SQLite and
# PostgreSQL alike.
QUEUE_PRIME = 2_147_483_647
POOLED = "people"  # every person's labels together (the leaderboard's and agreement's switch)


def person_of(account):
    """The rater/voter name for a signed-in account (None: nobody signs in, "human")."""
    name = getattr(account, "name", None) if account is not None else None
    return f"{HUMAN}:{name}" if name else HUMAN


def is_person(name):
    """True for "human" and "human:<name>" (a person), False for a judge."""
    return name == HUMAN or (
        isinstance(name, str) and name.startswith(HUMAN + ":") and len(name) > 6
    )


def display_name(person):
    """How a page names a person: the account name, or "you" without accounts."""
    return person.split(":", 1)[1] if ":" in person else "you"


def queue_order(person):
    """(a, b): this person's shuffle of ids (see QUEUE_PRIME), kept in the database so it is
    the same on every request."""
    row = LabelQueue.get_or_none(LabelQueue.person == person)
    if row is None:
        try:
            with database.atomic():
                row = LabelQueue.create(person=person, seed=random.randrange(1, 2**31))
        except IntegrityError:  # two first requests at once: one row wins
            row = LabelQueue.get(LabelQueue.person == person)
    rng = random.Random(row.seed)
    return rng.randrange(1, QUEUE_PRIME), rng.randrange(0, QUEUE_PRIME)


def position(value, a, b, mod=lambda v: v % QUEUE_PRIME):
    """The queue position of `value` (an id) for the order (a, b): (y^5) mod P with
    y = (value * a + b) mod P. `mod` lets the database build the same arithmetic as SQL."""
    y = mod(value * a + b)
    y2 = mod(y * y)
    return mod(mod(y2 * y2) * y)


def shuffle_key(person, value):
    """A stable pseudo-random position of `value` (an id) in this person's queue."""
    a, b = queue_order(person)
    return position(int(value), a, b)
