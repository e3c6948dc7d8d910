"""An A/B scope's pairs, kept, and a voter's next pair picked from them without loading each one.

The pairs of two targets (each task both answered: A's item and B's) come from one join over the
index item_answered_task, in task order (then A's item id, then B's), kept as two packed arrays
of item ids under both runs' stamps (results/kept.py): they change only with the runs' items, so
a view of unchanged runs reads one row, whoever votes. A voter's next pair is the pending one
first in their shuffled order (people.position of the pair's lower item id; on a tie the first
in task order): worked out over the arrays at once, with the voter's own votes in the scope left
out. The same pair, and the same count, as going through every pair row (judge_jobs'
unjudged_pairs) gives, without reading them through the ORM: 4 s at a million items a run.
"""

import base64
from array import array

import numpy as np

from ..db.connection import database
from ..db.connection import stream_rows
from ..db.models import Item
from ..db.models import Vote
from ..results.kept import code_stamp
from ..results.kept import kept_across
from ..results.kept import stamp
from ..results.recent import Recent
from .people import QUEUE_PRIME
from .people import position

_CODE = code_stamp(__file__, ("pair_queue.py", "people.py"))
# Ids at or above this would overflow position's products in int64: such a scope's pairs go
# through Python's integers instead.
_PACKED_BELOW = QUEUE_PRIME
# The last scopes' pairs as read back (two int64 arrays: 4 MB at a million items a run), by
# database, scope, both runs' stamps and the code: a view of an unchanged scope decodes nothing.
# Two of them, so a server holds little.
_read = Recent(2)
_CHUNK = 5_000  # pair rows read at a time


def pairs_query(scope):
    """The scope's pairs as (A's item id, B's item id, task id) in task order: a query. A
    repeated task's pairs come in any order (_pairs_now puts them in A's then B's id order):
    asked for in SQL, that order would have SQLite read every pair's two item rows instead of
    the index item_answered_task alone."""
    a, b = Item.alias("a"), Item.alias("b")
    return (
        a.select(a.id, b.id, a.task_key)
        .join(
            b,
            on=(
                (b.run == scope.run_b.id)
                & (b.target == scope.target_b.id)
                & (b.task_key == a.task_key)
            ),
        )
        # Both sides as item_answered_task has them (answered only): the join reads no item row.
        .where(
            (a.run == scope.run_a.id)
            & (a.target == scope.target_a.id)
            & a.answered_at.is_null(False)
            & b.answered_at.is_null(False)
        )
        .order_by(a.task_key)
    )


def _pairs_now(scope):
    """The scope's pairs from the database, packed: {"dtype", "ids": base64 of (A, B) rows}."""
    # Read a chunk at a time into packed integers: every row's tuple and task text held at
    # once were ~70 MiB at a million items a run, the largest part of a warm's peak. Streamed
    # (stream_rows): on PostgreSQL a plain cursor's fetchmany still had the whole result read.
    pairs, group = array("q"), array("q")
    task_number, last_task = -1, None
    for a_id, b_id, task in stream_rows(pairs_query(scope), _CHUNK):
        if task != last_task or task_number < 0:
            task_number, last_task = task_number + 1, task
        pairs.append(a_id)
        pairs.append(b_id)
        group.append(task_number)
    ids = np.frombuffer(pairs, dtype=np.int64).reshape(-1, 2)
    if len(ids) > 1:
        # Within a task (as the database orders tasks) by A's item id, then B's.
        ids = ids[np.lexsort((ids[:, 1], ids[:, 0], np.frombuffer(group, dtype=np.int64)))]
    # Four bytes an id while they fit (half the row a view reads), else eight.
    dtype = "<u4" if not len(ids) or int(ids.max()) < 2**32 else "<i8"
    return {"dtype": dtype, "ids": base64.b64encode(ids.astype(dtype).tobytes()).decode("ascii")}


def scope_pairs(scope):
    """(A's item ids, B's item ids): the scope's pairs in task order, as int64 arrays, kept
    while both runs' items hold (stored only: megabytes at a million items a run)."""
    if scope.pairs is not None:  # a page asks twice (the count, the next pair): read once
        return scope.pairs
    runs = [scope.run_a] if scope.run_a.id == scope.run_b.id else [scope.run_a, scope.run_b]
    name = f"ab-pairs:{scope.target_a.id}:{scope.target_b.id}"
    key = (database.database, name, *(r.id for r in runs), *(stamp(r) for r in runs), _CODE)
    pairs = _read.get(key)
    if pairs is None:
        kept = kept_across(runs, name, lambda: _pairs_now(scope), also=_CODE, memory=False)
        packed = np.frombuffer(base64.b64decode(kept["ids"]), dtype=kept["dtype"])
        ids = packed.astype(np.int64).reshape(-1, 2)
        ids.setflags(write=False)  # shared by the views that read it
        pairs = (ids[:, 0], ids[:, 1])
        _read.put(key, pairs)
    scope.pairs = pairs
    return pairs


def _voted(scope, voter):
    """The voter's votes in the scope as (lower item id, higher item id) rows."""
    a_id, b_id = scope.target_a.id, scope.target_b.id
    in_scope = ((Vote.left_target == a_id) & (Vote.right_target == b_id)) | (
        (Vote.left_target == b_id) & (Vote.right_target == a_id)
    )
    return list(
        Vote.select(Vote.item_low, Vote.item_high).where(in_scope & (Vote.voter == voter)).tuples()
    )


def next_unvoted(scope, voter, order):
    """(A's item id, B's item id) of the voter's next pair: the pair without their vote whose
    lower item id comes first in `order` (people.queue_order), ties in task order; or None."""
    a_ids, b_ids = scope_pairs(scope)
    if not len(a_ids):
        return None
    low, high = np.minimum(a_ids, b_ids), np.maximum(a_ids, b_ids)
    voted = _voted(scope, voter)
    if int(high.max()) >= _PACKED_BELOW:
        return _next_in_python(a_ids.tolist(), b_ids.tolist(), set(voted), order)
    qa, qb = order
    keys = position(low, qa, qb)  # every product below 2^62: int64 holds it
    # The pairs in (position, task order) order: the answer is the first without a vote, so
    # among the first len(voted) + 1 of them (one vote a pair). Those are the pairs whose
    # position is at most the (len(voted) + 1)-th smallest: one partition, no full sort.
    nth = min(len(voted), len(keys) - 1)
    bound = np.partition(keys, nth)[nth]
    near = np.flatnonzero(keys <= bound)  # in task order
    voted = set(voted)
    for index in near[np.argsort(keys[near], kind="stable")].tolist():
        if (int(low[index]), int(high[index])) not in voted:
            return int(a_ids[index]), int(b_ids[index])
    return None


def _next_in_python(a_ids, b_ids, voted, order):
    """next_unvoted with Python's integers (ids too large for the packed arithmetic)."""
    best, found = None, None
    for a, b in zip(a_ids, b_ids, strict=True):
        pair = (min(a, b), max(a, b))
        if pair in voted:
            continue
        key = position(pair[0], *order)
        if best is None or key < best:
            best, found = key, (a, b)
    return found


def pair_total(scope):
    """How many pairs the scope has (both targets answered the task): the kept arrays' length."""
    return len(scope_pairs(scope)[0])
