"""A run's kept counts: items per status and failed stage, per target, and their sums.

Triggers keep them in the transaction that inserts, changes or deletes an item, so the live
view's poll, progress, the ETA, history and /api/runs read a few rows per run, whatever the
run's size. `recount` counts the items themselves (what the kept counts must always equal).

- SQLite: the triggers add each change to its `item_count` row (models.ItemCount; the
  triggers' SQL is in db/ddl.py). SQLite has one writer at a time, so that row is never contended.
- PostgreSQL: many writers, so a row every change updates would be a lock they all queue on.
  Its triggers append each statement's changes to `item_count_delta` instead, `fold`
  moves them into `item_count` twice a second while a run works (the engine's supervisor,
  engine/workers.py) and when it ends, and the readers here read
  `item_count_now` (models.ItemCountNow): item_count plus the deltas not folded yet, in one
  statement, so what they see is as current as on SQLite.
"""

import logging

from peewee import SQL
from peewee import fn

from ..db.connection import built_once
from ..db.connection import database
from ..db.models import CANT_BE_FINISHED
from ..db.models import FAILED
from ..db.models import ITEM_STATUSES
from ..db.models import NEW
from ..db.models import Item
from ..db.models import ItemCount
from ..db.models import ItemCountNow
from ..db.models import PendingItems
from ..db.models import RunTarget
from ..db.pg_sql import WRITE_LOCK_KEY

log = logging.getLogger(__name__)

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
        # {target id: [score sum, scored items]}: each target's own average (a run's targets
        # are not blended into one number where people compare them).
        self.score_by_target = {}

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
        if values["score_n"]:
            kept = self.score_by_target.setdefault(target_id, [0.0, 0])
            kept[0] += values["score"]
            kept[1] += values["score_n"]

    def target_mean(self, target_id):
        """One target's average score over its scored items, or None."""
        total, n = self.score_by_target.get(target_id, (0.0, 0))
        return total / n if n else None


def _kept_counts():
    """The model the readers read the kept counts from (the module's docstring says why)."""
    return ItemCountNow if database.is_postgres else ItemCount


def tallies(run_ids):
    """{run pk: Tally} for the given runs, from the kept counts (one indexed query)."""
    out = {pk: Tally() for pk in run_ids}
    if not run_ids:
        return out
    pks = list(run_ids)
    # Plain ints, texts and sums: read as the database returns them, no conversion.
    rows = database.execute_sql(built_once(("tallies", len(pks)), lambda: _kept(pks)), pks)
    for run_pk, target_id, status, stage, *values in rows:
        out[run_pk].add(target_id, status, stage, dict(zip(SUMS, values, strict=True)))
    _add_pending(out, pks)
    return out


def _add_pending(out, pks):
    """A big run's items not made yet (creation.py) are NEW to whoever counts: its total,
    progress and each target's items left read as when every item was made at its start."""
    query = PendingItems.select(
        PendingItems.run, PendingItems.target, PendingItems.remaining, PendingItems.per_target
    ).where(PendingItems.run.in_(pks))
    pending = {row[0]: row[1:] for row in query.tuples()}
    if not pending:
        return
    targets = RunTarget.select(RunTarget.run, RunTarget.id, RunTarget.position)
    positions = {}
    for run_pk, target_id, position in targets.where(RunTarget.run.in_(list(pending))).tuples():
        positions.setdefault(run_pk, []).append((position, target_id))
    for run_pk, (at, remaining, per_target) in pending.items():
        kept = out[run_pk]
        kept.by_status[NEW] = kept.by_status.get(NEW, 0) + remaining
        kept.sums["n"] += remaining
        later = sorted(positions.get(run_pk, []))[at:]
        for n, (_position, target_id) in enumerate(later):
            # The cursor's target has what is left of it; each one after it all of its items.
            left = per_target if n else remaining - per_target * (len(later) - 1)
            kept.new_by_target[target_id] = kept.new_by_target.get(target_id, 0) + left


def _kept(pks):
    """The kept counts' rows of the runs `pks`: run, target, status, stage and the sums."""
    counts = _kept_counts()
    columns = [getattr(counts, name) for name in SUMS]
    return counts.select(counts.run, counts.target_id, counts.status, counts.stage, *columns).where(
        counts.run.in_(pks)
    )


def tally(run):
    """The kept counts of one run (a Run or its pk)."""
    pk = getattr(run, "id", run)
    return tallies([pk])[pk]


def count_items(run, target_ids=None, status=None, stage=None):
    """How many of the run's items (of `target_ids`, in `status`, failed at `stage`: "judge",
    or "answer" for any other failure) there are, from the kept counts."""
    pk = getattr(run, "id", run)
    counts = _kept_counts()
    query = counts.select(fn.COALESCE(fn.SUM(counts.n), 0)).where(counts.run == pk)
    if target_ids is not None:
        query = query.where(counts.target_id.in_(list(target_ids)))
    if status is not None:
        statuses = [status] if isinstance(status, str) else list(status)
        query = query.where(counts.status.in_(statuses))
    if stage == "judge":
        query = query.where(counts.stage == "judge")
    elif stage is not None:
        query = query.where(counts.stage != "judge")
    return query.scalar() or 0


def count_in(counts, target_ids=None, status=None, stage=None):
    """count_items over counts already read in kept()'s shape ({(target id, status, stage):
    {"n": …}}): for a page whose stamp read them anyway, no statement of its own."""
    statuses = None if status is None else ({status} if isinstance(status, str) else set(status))
    return sum(
        sums["n"]
        for (target, item_status, at), sums in counts.items()
        if (target_ids is None or target in target_ids)
        and (statuses is None or item_status in statuses)
        and (stage is None or (at == "judge") == (stage == "judge"))
    )


def run_totals():
    """A subquery of every run's (rid, n items), for sorting the history by them."""
    counts = _kept_counts()
    return counts.select(counts.run.alias("rid"), fn.SUM(counts.n).alias("n")).group_by(counts.run)


def run_best_scores():
    """A subquery of every run's (rid, best): the best of its targets' own average scores, for
    sorting the history by the score the list shows (one target's, never a blend of targets)."""
    counts = _kept_counts()
    per_target = counts.select(
        counts.run.alias("rid"),
        (fn.SUM(counts.score) / fn.NULLIF(fn.SUM(counts.score_n), 0)).alias("avg"),
    ).group_by(counts.run, counts.target_id)
    return per_target.select_from(
        per_target.c.rid, fn.MAX(per_target.c.avg).alias("best")
    ).group_by(per_target.c.rid)


def kept(run):
    """{(target id, status, stage): {sum: value}} as kept, rows of no items left out."""
    pk = getattr(run, "id", run)
    counts = _kept_counts()
    columns = [getattr(counts, name) for name in SUMS]
    rows = (
        counts.select(counts.target_id, counts.status, counts.stage, *columns)
        .where(counts.run == pk)
        .tuples()
    )
    return {tuple(row[:3]): dict(zip(SUMS, row[3:], strict=True)) for row in rows if row[3] != 0}


def recount(run):
    """The same as kept(run), counted from the items themselves (the slow, sure way)."""
    pk = getattr(run, "id", run)
    rows = _item_sums(Item.run == pk)
    return {tuple(row[:3]): dict(zip(SUMS, row[3:], strict=True)) for row in rows}


def _item_sums(where):
    """Rows of (target id, status, stage, *SUMS) over the items matching `where`, one per
    (target, status, stage): item_count's rows, counted."""
    # '' written into the SQL, not bound: PostgreSQL matches the selected expression with the
    # grouped one only when they are the same text (two bound '' are two parameters).
    stage = fn.COALESCE(Item.error_stage, SQL("''"))

    def total(column):
        return fn.COALESCE(fn.SUM(column), 0)

    def present(column):
        return fn.COUNT(column)

    return (
        Item.select(
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
        .group_by(Item.target, Item.status, stage)
        .tuples()
    )


_FOLD = (
    "WITH moved AS (DELETE FROM item_count_delta RETURNING *), "
    "summed AS (SELECT run_id, target_id, status, stage, "
    + ", ".join(f"SUM({c}) AS {c}" for c in SUMS)
    + " FROM moved GROUP BY run_id, target_id, status, stage) "
    f"INSERT INTO item_count (run_id, target_id, status, stage, {', '.join(SUMS)}) "
    f"SELECT run_id, target_id, status, stage, {', '.join(SUMS)} FROM summed "
    # The deltas of a deleted run's items are dropped: its counts went with it.
    "WHERE EXISTS (SELECT 1 FROM run WHERE run.id = summed.run_id) "
    "ON CONFLICT (run_id, target_id, status, stage) DO UPDATE SET "
    + ", ".join(f"{c} = item_count.{c} + excluded.{c}" for c in SUMS)
)


def fold():
    """PostgreSQL: move the deltas its triggers appended into item_count, so a reader sums a few
    rows per run again. One transaction: a reader sees the deltas or their sum, never both or
    neither; deltas committed meanwhile wait for the next fold. A no-op on SQLite.

    It takes the write lock (db.WRITE_LOCK_KEY) only if it is free, so it never waits on a long
    write (a large run's creation, a deletion): its callers are the supervisor between polls
    and the scheduler's tick, and a later fold takes what this one skipped."""
    if not database.is_postgres:
        return
    try:
        with database.atomic("DEFERRED"):
            free = database.execute_sql("SELECT pg_try_advisory_xact_lock(?)", (WRITE_LOCK_KEY,))
            if free.fetchone()[0]:
                database.execute_sql(_FOLD)
    except Exception as exc:  # any database error: the deltas stay, and readers still count them
        log.warning("kept counts not folded: %s", exc)
