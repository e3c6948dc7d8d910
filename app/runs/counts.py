"""A run's kept counts: items per status and failed stage, per target, and their sums.

SQLite triggers keep the `item_count` rows (models.ItemCount, migrations m025, m031) in the same
transaction that inserts, changes or deletes an item, so the live view's poll, progress, the
ETA, history and /api/runs read a few rows per run, whatever the run's size. `recount` counts
the items themselves (what the kept rows must always equal).

On PostgreSQL there are no triggers and `item_count` stays empty: every reader here computes the
same rows with one GROUP BY over the run's items (`recount`'s query). Why not PL/pgSQL triggers:
the SQLite trigger bodies do not carry over (IS NOT, summed booleans, BEGIN ... END), and on a
server with many writers each item change would update one of a few hot `item_count` rows, a
lock every worker queues on (and a deadlock risk for multi-row updates such as release_all).
The price, measured (bench_deep_pages.py --postgres, 100 000 items): the live view's poll takes
130-175 ms there against 5-9 ms on SQLite, /api/runs 325 ms, the history page 215 ms; at
1 000 000 items 0.8-1.4 s. Kept counts on PostgreSQL would need writes that do not contend,
e.g. triggers appending deltas that a periodic step folds in.
"""

from peewee import SQL
from peewee import fn

from ..db import built_once
from ..db import database
from ..models import CANT_BE_FINISHED
from ..models import FAILED
from ..models import ITEM_STATUSES
from ..models import NEW
from ..models import Item
from ..models import ItemCount

SUMS = (
    "n",
    "answer_ms",
    "answer_ms_n",
    "judge_ms",
    "judge_ms_n",
    "prompt_tokens",
    "tokens_generated",
    "cost_usd",
    "judge_cost_usd",
    "score",
    "score_n",
)


class Tally:
    """One run's counts: by status, failures by stage, NEW items per target, and the sums."""

    def __init__(self):
        self.by_status = dict.fromkeys(ITEM_STATUSES, 0)
        self.answer_failed = 0
        self.judge_failed = 0
        self.new_by_target = {}
        self.sums = dict.fromkeys(SUMS, 0)

    @property
    def total(self):
        return self.sums["n"]

    @property
    def failed(self):
        return self.by_status[FAILED] + self.by_status[CANT_BE_FINISHED]

    def mean(self, name):
        """The mean of a summed column (answer_ms, judge_ms, score) over the items that have
        it, or None."""
        n = self.sums[f"{name}_n"]
        return self.sums[name] / n if n else None

    def add(self, target_id, status, stage, values):
        n = values["n"]
        self.by_status[status] = self.by_status.get(status, 0) + n
        if status in (FAILED, CANT_BE_FINISHED):
            if stage == "judge":
                self.judge_failed += n
            else:
                self.answer_failed += n
        if status == NEW:
            self.new_by_target[target_id] = self.new_by_target.get(target_id, 0) + n
        for name in SUMS:
            self.sums[name] += values[name]


def counted_from_items():
    """True where the counts are computed from the items (PostgreSQL: no triggers keep them)."""
    return database.is_postgres


def tallies(run_ids):
    """{run pk: Tally} for the given runs, from the kept counts (one indexed query)."""
    out = {pk: Tally() for pk in run_ids}
    if not run_ids:
        return out
    if counted_from_items():
        rows = _item_sums(Item.run.in_(list(run_ids)), Item.run)
    else:
        pks = list(run_ids)
        # Plain ints, texts and sums: read as SQLite returns them, no conversion.
        rows = database.execute_sql(built_once(("tallies", len(pks)), lambda: _kept(pks)), pks)
    for run_pk, target_id, status, stage, *values in rows:
        out[run_pk].add(target_id, status, stage, dict(zip(SUMS, values, strict=True)))
    return out


def _kept(pks):
    """The kept counts' rows of the runs `pks`: run, target, status, stage and the sums."""
    columns = [getattr(ItemCount, name) for name in SUMS]
    return ItemCount.select(
        ItemCount.run, ItemCount.target_id, ItemCount.status, ItemCount.stage, *columns
    ).where(ItemCount.run.in_(pks))


def tally(run):
    """The kept counts of one run (a Run or its pk)."""
    pk = getattr(run, "id", run)
    return tallies([pk])[pk]


def count_items(run, target_ids=None, status=None, stage=None):
    """How many of the run's items (of `target_ids`, in `status`, failed at `stage`: "judge",
    or "answer" for any other failure) there are, from the kept counts."""
    pk = getattr(run, "id", run)
    if counted_from_items():
        return _count_from_items(pk, target_ids, status, stage)
    query = ItemCount.select(fn.COALESCE(fn.SUM(ItemCount.n), 0)).where(ItemCount.run == pk)
    if target_ids is not None:
        query = query.where(ItemCount.target_id.in_(list(target_ids)))
    if status is not None:
        statuses = [status] if isinstance(status, str) else list(status)
        query = query.where(ItemCount.status.in_(statuses))
    if stage == "judge":
        query = query.where(ItemCount.stage == "judge")
    elif stage is not None:
        query = query.where(ItemCount.stage != "judge")
    return query.scalar() or 0


def _count_from_items(pk, target_ids, status, stage):
    """count_items on PostgreSQL: the same filters on the items themselves."""
    query = Item.select(fn.COUNT(Item.id)).where(Item.run == pk)
    if target_ids is not None:
        query = query.where(Item.target.in_(list(target_ids)))
    if status is not None:
        statuses = [status] if isinstance(status, str) else list(status)
        query = query.where(Item.status.in_(statuses))
    if stage == "judge":
        query = query.where(Item.error_stage == "judge")
    elif stage is not None:
        query = query.where(fn.COALESCE(Item.error_stage, "") != "judge")
    return query.scalar() or 0


def run_totals():
    """A subquery of every run's (rid, n items, avg score), for sorting the history by them."""
    if counted_from_items():
        return Item.select(
            Item.run.alias("rid"),
            fn.COUNT(Item.id).alias("n"),
            fn.AVG(Item.evaluation_score).alias("avg"),
        ).group_by(Item.run)
    return ItemCount.select(
        ItemCount.run.alias("rid"),
        fn.SUM(ItemCount.n).alias("n"),
        (fn.SUM(ItemCount.score) / fn.NULLIF(fn.SUM(ItemCount.score_n), 0)).alias("avg"),
    ).group_by(ItemCount.run)


def kept(run):
    """{(target id, status, stage): {sum: value}} as kept, rows of no items left out (on
    PostgreSQL, as counted: nothing is kept there)."""
    pk = getattr(run, "id", run)
    if counted_from_items():
        return recount(pk)
    columns = [getattr(ItemCount, name) for name in SUMS]
    rows = (
        ItemCount.select(ItemCount.target_id, ItemCount.status, ItemCount.stage, *columns)
        .where(ItemCount.run == pk)
        .tuples()
    )
    return {tuple(row[:3]): dict(zip(SUMS, row[3:], strict=True)) for row in rows if row[3] != 0}


def recount(run):
    """The same as kept(run), counted from the items themselves (the slow, sure way)."""
    pk = getattr(run, "id", run)
    rows = _item_sums(Item.run == pk)
    return {tuple(row[:3]): dict(zip(SUMS, row[3:], strict=True)) for row in rows}


def _item_sums(where, *leading):
    """Rows of (*leading, target id, status, stage, *SUMS) over the items matching `where`,
    one per (*leading, target, status, stage): item_count's rows, counted."""
    # '' written into the SQL, not bound: PostgreSQL matches the selected expression with the
    # grouped one only when they are the same text (two bound '' are two parameters).
    stage = fn.COALESCE(Item.error_stage, SQL("''"))

    def total(column):
        return fn.COALESCE(fn.SUM(column), 0)

    def present(column):
        return fn.COUNT(column)

    return (
        Item.select(
            *leading,
            Item.target,
            Item.status,
            stage,
            fn.COUNT(Item.id),
            total(Item.time_taken_ms),
            present(Item.time_taken_ms),
            total(Item.judge_ms),
            present(Item.judge_ms),
            total(Item.prompt_tokens),
            total(Item.tokens_generated),
            total(Item.cost_usd),
            total(Item.judge_cost_usd),
            total(Item.evaluation_score),
            present(Item.evaluation_score),
        )
        .where(where)
        .group_by(*leading, Item.target, Item.status, stage)
        .tuples()
    )
