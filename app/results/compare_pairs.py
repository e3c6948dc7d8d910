"""The paired rows of a compare (compare.compare_runs): every task both runs gave one target, read
from a plain cursor into numpy arrays, one target at a time.

A 1M-item compare pairs a million tasks: held as Python tuples and dicts, and looked at one by one,
they took minutes and hundreds of MiB. Here a target's pairs are seven numbers a row (the two item
ids, a code the query works out, both scores and both times), ~14 MiB at 250 000 tasks, let go
before the next target's; the counts, the differences and the few changes a page lists come out
of them with numpy.
"""

from itertools import islice

import numpy as np
from peewee import Case

from ..db.connection import in_values
from ..db.connection import stream_rows
from ..db.models import COMPLETED
from ..db.models import Item
from ..db.models import RunTarget
from ..runs.outcomes import FAILED_STATUSES

# A side's outcome (compare's words for them), the low bits of the code: scored, the judge
# failed, the answer failed, not settled yet.
OUTCOMES = ("scored", "judge_failed", "answer_failed", "pending")
SCORED, JUDGE_FAILED, ANSWER_FAILED = 0, 1, 2
# The rest of the code: asked differently (both context hashes set and unlike), and which of
# the four numbers is NULL (told apart in SQL: a NaN stored on PostgreSQL is a number).
_ASKED_DIFFERENTLY = 16
_NULL_BITS = {"score_a": 32, "score_b": 64, "time_a": 128, "time_b": 256}
_CHUNK = 5_000  # rows turned into an array at a time (their tuples: ~1.5 MiB)
_IDS_PER_QUERY = 500


def _outcome(item):
    """The side's outcome as SQL: a failure not at the judge stage (none given too) is the
    answer's, anything neither completed nor failed is pending (3)."""
    failed = item.status.in_(FAILED_STATUSES)
    whens = [
        (item.status == COMPLETED, SCORED),
        (failed & (item.error_stage == "judge"), JUDGE_FAILED),
        (failed, ANSWER_FAILED),
    ]
    return Case(None, whens, 3)


def _null(field, bit):
    return Case(None, [(field.is_null(), bit)], 0)


class Pairs:
    """One target's paired tasks, in the order compare has always read them (task key, then the
    item ids: repeats of a task pair every answer with every answer), as arrays: `id_a`, `id_b`,
    `outcome_a`, `outcome_b`, `asked_differently` and the values where they are set."""

    def __init__(self, columns):
        # Each column's chunks joined and let go in turn: the chunks and one joined column are
        # held at a time, not every chunk beside a joined table (~12 MiB more at 250 000).
        joined = [_join(columns, n) for n in range(len(columns))]
        self.id_a, self.id_b, code, self.score_a, self.score_b, self.time_a, self.time_b = joined
        self.outcome_a = (code & 3).astype(np.int8)
        self.outcome_b = ((code >> 2) & 3).astype(np.int8)
        self.asked_differently = (code & _ASKED_DIFFERENTLY) != 0
        self._code = code

    def __len__(self):
        return len(self.id_a)

    def set(self, name):
        """Where the value `name` (score_a, score_b, time_a, time_b) is not NULL."""
        return (self._code & _NULL_BITS[name]) == 0


def read_pairs(run_a, run_b, target_a, target_b):
    """Pairs of every task of target `target_a` (an id) in run A and `target_b` in run B: one
    join, each side found by the (run, target, task key) index, read 5 000 rows at a time."""
    ia, ib = Item.alias("ia"), Item.alias("ib")
    hashes_differ = (ia.context_hash != "") & (ib.context_hash != "")
    hashes_differ &= ia.context_hash != ib.context_hash
    code = _outcome(ia) + _outcome(ib) * 4 + Case(None, [(hashes_differ, _ASKED_DIFFERENTLY)], 0)
    code += _null(ia.evaluation_score, _NULL_BITS["score_a"])
    code += _null(ib.evaluation_score, _NULL_BITS["score_b"])
    code += _null(ia.time_taken_ms, _NULL_BITS["time_a"])
    code += _null(ib.time_taken_ms, _NULL_BITS["time_b"])
    query = (
        ia.select(
            ia.id,
            ib.id,
            code,
            ia.evaluation_score,
            ib.evaluation_score,
            ia.time_taken_ms,
            ib.time_taken_ms,
        )
        .join(
            ib,
            on=((ib.run == run_b.id) & (ib.target == target_b) & (ib.task_key == ia.task_key)),
        )
        .where((ia.run == run_a.id) & (ia.target == target_a))
        .order_by(ia.task_key, ia.id, ib.id)
    )
    rows = stream_rows(query, size=_CHUNK)
    columns = [[] for _ in range(7)]
    while chunk := list(islice(rows, _CHUNK)):
        table = np.array(chunk, dtype=np.float64)  # NULLs become NaN; the code says which
        del chunk
        for n, column in enumerate(columns):
            # ids (below 2**53: exact as floats) and the code as integers
            column.append(table[:, n].astype(np.int64 if n < 3 else np.float64))
    return Pairs(columns)


def _join(columns, n):
    kind = np.int64 if n < 3 else np.float64
    joined = np.concatenate(columns[n]) if columns[n] else np.zeros(0, dtype=kind)
    columns[n] = None
    return joined


def first(mask, limit):
    """The positions where `mask` holds, the first `limit` of them (all when limit is None)."""
    where = np.flatnonzero(mask)
    return where if limit is None else where[:limit]


def smallest(keys, limit):
    """Positions of `keys` (a 1-D array) that can be among the `limit` smallest once ties are
    broken further: every one below the limit-th smallest value and every one equal to it. In
    their order (all of them when limit is None)."""
    if limit is None or len(keys) <= limit:
        return np.arange(len(keys))
    if limit <= 0:
        return np.arange(0)
    bound = np.partition(keys, limit - 1)[limit - 1]
    return np.flatnonzero(keys <= bound)


def item_keys(ids):
    """{item id: (task key, category)} of the items `ids` (a few hundred a query)."""
    ids = sorted(set(ids))
    out = {}
    for start in range(0, len(ids), _IDS_PER_QUERY):
        query = (
            Item.select(Item.id, Item.task_key, Item.category)
            .where(in_values(Item.id, ids[start : start + _IDS_PER_QUERY]))
            .tuples()
        )
        out.update((id_, (task_key, category)) for id_, task_key, category in query)
    return out


def rank_in_sql(ids):
    """{item id: rank} of the items `ids` in compare's row order (the target's position, the task
    key in the database's own collation, the id), from the database's ORDER BY: where two
    targets share a position their tasks interleave by key, which PostgreSQL may order
    otherwise than Python."""
    query = (
        Item.select(Item.id)
        .join(RunTarget, on=(Item.target == RunTarget.id))
        .where(in_values(Item.id, sorted(set(ids))))
        .order_by(RunTarget.position, Item.task_key, Item.id)
        .tuples()
    )
    return {id_: rank for rank, (id_,) in enumerate(query)}
