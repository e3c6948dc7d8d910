"""Claims on items: take the next k in one UPDATE, extend them while in flight, give them back.

One module, two dialects: SQLite claims under BEGIN IMMEDIATE (one process writes); PostgreSQL
picks the ids FOR UPDATE SKIP LOCKED, so the orchestrator and any number of `llmbench worker`
processes claim at once, and counts a provider's claims in flight across all of them.
A claim sets `claimed_until` and `claimed_by` (and counts the attempt); every write after it is
guarded by
`status` and the claimed `attempts` and clears `claimed_until` (update_claimed), so an answer
that arrives after its claim was released (stop) or re-claimed (crash recovery) is never written.
`next_retry_at` only ever means "a failed attempt waits until then".
"""

import contextlib
import datetime as dt
import threading
from types import SimpleNamespace

from peewee import BooleanField
from peewee import Field

from ..clock import db_text
from ..db.connection import database
from ..db.models import NEW
from ..db.models import WAITING_FOR_JUDGE
from ..db.models import Item
from ..scoring.score import FACTS
from ..scoring.score import TASK_FIELDS

# One statement claims the next k items. It claims nothing once the run is no longer running,
# so a pause committed by any process stops new claims at once: only the items in flight finish.
# The status is written into the SQL, not bound: SQLite uses a partial index (models.py,
# item_claim_new / item_claim_judge) only when the query names its WHERE literally, and with it
# the claim reads the run's first items still to take, not every item already done (O(log N)).
# INDEXED BY (SQLite only) makes that plan certain; SQLite serialises claims by BEGIN IMMEDIATE.
# PostgreSQL has no hints: its planner picks the partial indexes in id order
# (item_claim_new_by_id / item_claim_judge_by_id) from the literal WHERE; FOR UPDATE SKIP LOCKED
# lets any number of processes claim at once without waiting on each other's rows, and the
# outer WHERE checks the row again once it is locked (a row changed since the snapshot is never
# claimed twice).
CLAIM_SQL = (
    "UPDATE item SET attempts = attempts + 1, last_attempt_at = ?, "
    "first_attempt_at = COALESCE(first_attempt_at, ?), claimed_until = ?, claimed_by = ? "
    "WHERE id {pick}(SELECT id FROM item{hint} WHERE run_id = ? AND status = '{status}' "
    "{target} AND (next_retry_at IS NULL OR next_retry_at <= ?) "
    "AND (claimed_until IS NULL OR claimed_until <= ?) ORDER BY id LIMIT ?{lock}){close} "
    "{recheck}"
    "AND EXISTS (SELECT 1 FROM run WHERE id = ? AND status = 'PENDING' AND control = 'running') "
    "RETURNING {returning}"
)
# What a claim returns: what answering needs (Claimed), or what judging reads (ClaimedAnswer:
# the answer and its tool calls, the task's snapshot, the answer's call facts), so a judgement
# reads no row of its own.
ANSWERING = (
    "id",
    "attempts",
    "task_key",
    "question",
    "system_prompt",
    "answer",
    "first_attempt_at",
    "target_id",
    "seed",
)
# The task as the item snapshots it: what its rule scorers and its call read (rules.RunTasks).
TASK_SNAPSHOT = ("task_key", *TASK_FIELDS, "tools")
JUDGING = tuple(
    dict.fromkeys(  # each column once (task_key and tool_calls are in two of them)
        (
            "id",
            "attempts",
            "target_id",
            "first_attempt_at",
            "answer",
            *TASK_SNAPSHOT,
            *FACTS,  # the answer's call facts (tool_calls among them), for the rule scorers
        )
    )
)
RETURNING = {NEW: ANSWERING, WAITING_FOR_JUDGE: JUDGING}
CLAIM_INDEX = {NEW: "item_claim_new", WAITING_FOR_JUDGE: "item_claim_judge"}
PG_LOCK = " FOR UPDATE SKIP LOCKED"
# `id IN (SELECT … FOR UPDATE SKIP LOCKED LIMIT k)` is not safe on PostgreSQL: the planner may
# run the subquery again for every row the UPDATE looks at, and each run skips the rows this
# statement already updated and locks the next k: one claim took every item. ARRAY(…) is an
# InitPlan, evaluated once.
PG_PICK = ("= ANY(ARRAY", ")")
SQLITE_PICK = ("IN ", "")
PG_RECHECK = "AND status = '{status}' AND (claimed_until IS NULL OR claimed_until <= ?) "

# Provider max_concurrency across processes (PostgreSQL): the claims are the slots. A claim is
# in flight exactly while its `claimed_until` is ahead, so the provider's claims in flight
# (answers of its targets, judgements and judge calls it judges) are counted in the database,
# and a killed worker's slot frees itself when its claim expires: no second table to keep in
# step, nothing to clean up. The count is optimistic rather than under a lock: look (no claim at
# all when the provider is full), claim (autocommit), count again and give back what does not
# fit. That holds the limit: of the claims sent at once, the last one committed counted every
# other one still held and kept only what fit beside them. A per-provider advisory lock around
# count-then-claim did the same but queued every claimer of the provider behind one transaction
# of five round trips (8 claimers: p50 97 ms against 18 ms without it, bench_workers.py).
IN_FLIGHT_SQL = (
    "SELECT (SELECT COUNT(*) FROM item i JOIN runtarget t ON t.id = i.target_id "
    "WHERE i.claimed_until > ? AND i.status = 'NEW' AND t.provider_id = ?) "
    "+ (SELECT COUNT(*) FROM item i JOIN run r ON r.id = i.run_id "
    "WHERE i.claimed_until > ? AND i.status = 'WAITING_FOR_JUDGE' AND r.judge_provider_id = ?) "
    "+ (SELECT COUNT(*) FROM judgecall c JOIN judgejob j ON j.id = c.job_id "
    "WHERE c.claimed_until > ? AND c.status = 'NEW' AND j.judge_provider_id = ?)"
)


# SQLite has one writer at a time, and every engine thread holds a connection of its own: they
# met at BEGIN IMMEDIATE, where SQLite's busy handler sleeps 1, 2, 5, 10 ... ms before it tries
# again (a 1500-task run: 45 % of its 12k BEGINs waited over 1 ms, 44 s of waiting in all). The
# engine's writes queue on this lock instead, which hands over at once; other processes (the web
# app, a CLI command) still meet the busy timeout as before. Re-entrant: a write inside a write
# is a savepoint of the same transaction. PostgreSQL needs none of it.
_WRITER = threading.RLock()


def claim_sql(status, by_target, postgres=None, by_step=False):
    """The claim statement for items in `status` (NEW or WAITING_FOR_JUDGE), of one target or
    of the whole run, in the dialect of the bound database (or of `postgres` when given);
    `by_step`: only the items of one load step of the target (load_steps.py)."""
    if postgres is None:
        postgres = database.is_postgres
    key = (status, bool(by_target), postgres, bool(by_step))
    sql = _CLAIM_SQL.get(key)
    if sql is None:
        sql = _CLAIM_SQL[key] = _claim_sql(status, by_target, postgres, by_step)
    return sql


_CLAIM_SQL = {}  # (status, by target, postgres, by step) -> the statement: built once


def _claim_sql(status, by_target, postgres, by_step=False):
    return CLAIM_SQL.format(
        returning=", ".join(RETURNING[status]),
        hint="" if postgres else f" INDEXED BY {CLAIM_INDEX[status]}",
        status=status,
        target=("AND target_id = ? " if by_target else "") + ("AND step = ?" if by_step else ""),
        lock=PG_LOCK if postgres else "",
        recheck=PG_RECHECK.format(status=status) if postgres else "",
        pick=(PG_PICK if postgres else SQLITE_PICK)[0],
        close=(PG_PICK if postgres else SQLITE_PICK)[1],
    )


def in_flight_for(provider_id, now):
    """How many claims of every run are in flight now on `provider_id` (answers, judgements,
    judge calls)."""
    stamp = db_text(now)
    row = database.execute_sql(
        IN_FLIGHT_SQL, (stamp, provider_id, stamp, provider_id, stamp, provider_id)
    ).fetchone()
    return int(row[0] or 0)


def slots_left(provider_id, limit, now, k):
    """How many of `k` claims fit beside the provider's claims in flight (its limit across
    every process)."""
    return max(0, min(k, int(limit) - in_flight_for(provider_id, now)))


def fit_to_limit(rows, provider_id, limit, now, give_back):
    """After a claim (committed): give back the newest of `rows` that do not fit under `limit`
    now that every claim committed so far is counted; the rows kept."""
    over = in_flight_for(provider_id, now) - int(limit)
    if over <= 0 or not rows:
        return rows
    keep = rows[: max(0, len(rows) - over)]
    for row in rows[len(keep) :]:
        give_back(row.id, row.attempts)
    return keep


def stored_time(value):
    """A datetime column as RETURNING or a plain SELECT gives it (text on SQLite): what
    Item's DateTimeField reads, without its strptime for the form we write (db_text)."""
    if isinstance(value, str):
        try:
            return dt.datetime.fromisoformat(value)
        except ValueError:
            pass
    return Item.first_attempt_at.python_value(value)


class Batch(list):
    """The items one claim took (in id order); `full` when the provider had no slot left."""

    full = False


def _reader(name):
    """How a claim turns column `name` as RETURNING gives it into Item's value, or None where
    it is taken as it comes (text and numbers: peewee's python_value would only call the type
    again). Times are read by stored_time, JSON and booleans by their field."""
    field = Item._meta.columns[name]
    if name.endswith("_at"):
        return stored_time
    if type(field).python_value is not Field.python_value or isinstance(field, BooleanField):
        return field.python_value
    return None


class _Claim:
    """One claimed row as its claim returned it (COLUMNS, in that order): plain attributes,
    no 60-column model to build. `task_snapshot()` says whether the claim carried the item's
    task (TASK_SNAPSHOT) or the task is to be read (rules.RunTasks)."""

    __slots__ = ()
    COLUMNS = ()
    READERS = ()  # (index, name, reader) of the columns that need one

    def __init__(self, row):
        for name, value in zip(self.COLUMNS, row, strict=True):
            setattr(self, name, value)
        for index, name, reader in self.READERS:
            value = row[index]
            if value is not None:
                setattr(self, name, reader(value))

    @classmethod
    def reading(cls, columns):
        """The class's COLUMNS and their READERS, worked out once."""
        cls.COLUMNS = columns
        cls.READERS = tuple(
            (i, name, reader)
            for i, name in enumerate(columns)
            if (reader := _reader(name)) is not None
        )
        return cls

    def task_snapshot(self):
        """The item's task as the claim carried it (TASK_SNAPSHOT's fields), or None."""
        return None


class Claimed(_Claim):
    """What an answer's claim returned (ANSWERING): enough of the item to answer it. Its task
    is not among them: rules.RunTasks reads it once per task in the run."""

    __slots__ = ANSWERING


class ClaimedAnswer(_Claim):
    """What a judgement's claim returned (JUDGING): the answer as the judge sees it, its task
    and its call's facts."""

    __slots__ = JUDGING

    def task_snapshot(self):
        return SimpleNamespace(**{name: getattr(self, name) for name in TASK_SNAPSHOT})


Claimed.reading(ANSWERING)
ClaimedAnswer.reading(JUDGING)
CLAIMED = {NEW: Claimed, WAITING_FOR_JUDGE: ClaimedAnswer}


def claimable(run, status, now):
    """WHERE an item of `run` in `status` may be claimed now (no backoff, no live claim)."""
    return (
        (Item.run == run)
        & (Item.status == status)
        & (Item.next_retry_at.is_null() | (Item.next_retry_at <= now))
        & ~Item.in_flight(now)
    )


def any_claimable(run, status, now, target_id=None, step=None):
    """True when an item of the run (optionally of one target, and of one load step) can be
    claimed now."""
    query = Item.select().where(claimable(run, status, now))
    if target_id is not None:
        query = query.where(Item.target == target_id)
    if step is not None:
        query = query.where(Item.step == step)
    return query.exists()


def next_wake(run, target_id=None):
    """The earliest time a waiting item (backoff or claim) becomes claimable, or None."""
    times = []
    for column in (Item.next_retry_at, Item.claimed_until):
        row = wake_query(run, column, target_id).first()
        if row:
            times.append(row[0])
    return min(times) if times else None


def wake_query(run, column, target_id=None):
    """The earliest `column` (next_retry_at or claimed_until) of the run's unsettled items."""
    unsettled = (Item.run == run) & Item.status.in_([NEW, WAITING_FOR_JUDGE])
    if target_id is not None:
        unsettled &= Item.target == target_id
    return Item.select(column).where(unsettled & column.is_null(False)).order_by(column).tuples()


def claim(run_id, status, now, deadline, target_id=None, holder=None):
    """Claim the next claimable item of a run (optionally of one target): Claimed or None."""
    rows = claim_batch(run_id, status, now, deadline, target_id, holder=holder)
    return rows[0] if rows else None


def claim_batch(
    run_id,
    status,
    now,
    deadline,
    target_id=None,
    k=1,
    holder=None,
    provider_id=None,
    limit=None,
    step=None,
):
    """Claim up to `k` claimable items of a run (optionally of one target) in one short
    transaction, for `holder` (who may release them all if it dies): a Batch of Claimed (NEW)
    or of ClaimedAnswer (WAITING_FOR_JUDGE).

    With `provider_id` and `limit` on PostgreSQL, at most the provider's free slots are kept
    (fit_to_limit above); the Batch is `full` when none was. SQLite has one process claiming,
    whose threads are the provider's concurrency: it needs no count. `step` (with a target):
    only the items of that load step.
    """
    by_step = target_id is not None and step is not None
    sql = claim_sql(status, target_id is not None, by_step=by_step)
    params = [db_text(now), db_text(now), db_text(deadline), holder, run_id]
    if target_id is not None:
        params.append(target_id)
    if by_step:
        params.append(int(step))
    params += [db_text(now), db_text(now)]
    if not database.is_postgres:
        params += [int(k), run_id]
        with writing():
            rows = database.execute_sql(sql, params).fetchall()
        return Batch(sorted(map(CLAIMED[status], rows), key=lambda c: c.id))
    counted = provider_id is not None and limit
    if counted:
        k = slots_left(provider_id, limit, now, k)
        if k == 0:
            return full_batch()
    # One statement, committed on its own (autocommit), so the count below sees it.
    params += [int(k), db_text(now), run_id]  # LIMIT, the re-check once locked, the run
    rows = database.execute_sql(sql, params).fetchall()
    batch = Batch(sorted(map(CLAIMED[status], rows), key=lambda c: c.id))
    if counted and batch:
        batch = Batch(fit_to_limit(batch, provider_id, limit, now, release))
        if not batch:
            return full_batch()
    return batch


def full_batch():
    """An empty Batch that says the provider had no slot left."""
    batch = Batch()
    batch.full = True
    return batch


def release(item_id, attempts):
    """Give a claim back without counting it (the request was abandoned by a stop).

    The retry-time cap starts again with the next attempt: a run continued hours later must
    not give up on its first transient error because of when it was first tried.
    """
    with writer():
        # Records waiting to be written go first (a stop gives back the claims of requests in
        # flight): an answer that came back before the stop is kept, not asked again.
        write_waiting()
        return (
            Item.update(attempts=Item.attempts - 1, claimed_until=None, first_attempt_at=None)
            .where(
                (Item.id == item_id)
                & (Item.attempts == attempts)
                & Item.status.in_([NEW, WAITING_FOR_JUDGE])
                & Item.claimed_until.is_null(False)
            )
            .execute()
        )


def release_all(runs, holder=None):
    """Give back every claim on the items of `runs` made by `holder` (a dead orchestrator), and
    claims that name no holder (made by an older version): its attempts never finished, so they
    are not counted. Claims of other holders (live `llmbench worker` processes) are left alone: they
    expire by themselves if their worker died. Returns how many."""
    mine = Item.claimed_by.is_null()
    if holder is not None:
        mine |= Item.claimed_by == holder
    return (
        Item.update(
            attempts=Item.attempts - 1, claimed_until=None, first_attempt_at=None, claimed_by=None
        )
        .where(
            Item.run.in_(runs)
            & Item.status.in_([NEW, WAITING_FOR_JUDGE])
            & (Item.attempts > 0)
            & Item.claimed_until.is_null(False)
            & mine
        )
        .execute()
    )


def extend(item_id, status, attempts, deadline):
    """Push on the deadline of a claim still in flight; 1 when it is still ours."""
    with writer():
        return database.execute_sql(
            "UPDATE item SET claimed_until = ? WHERE id = ? AND status = ? AND attempts = ? "
            "AND claimed_until IS NOT NULL",
            (db_text(deadline), item_id, status, attempts),
        ).rowcount


def writer():
    """What an engine thread holds while it writes outside writing(): on SQLite the engine's
    write lock (_WRITER), on PostgreSQL nothing."""
    return contextlib.nullcontext() if database.is_postgres else _WRITER


@contextlib.contextmanager
def writing():
    """A write transaction of the engine: on SQLite IMMEDIATE under the engine's write lock
    (_WRITER, one engine thread at a time), on PostgreSQL database.atomic() (its global write
    lock, db.py)."""
    if database.is_postgres:
        with database.atomic():
            yield
        return
    with _WRITER, database.atomic("IMMEDIATE"):
        yield


def recording():
    """The transaction that records a claimed row's outcome (update_claimed and its run-log
    line): the write is guarded by the row itself (status, claimed attempts), so on PostgreSQL
    it takes no global write lock (db.py) and the workers' records do not queue on each other.
    SQLite has one writer anyway: writing()."""
    return database.atomic("DEFERRED") if database.is_postgres else writing()


class _Record:
    """One thread's record waiting for a transaction (record())."""

    __slots__ = ("write", "done", "result", "error")

    def __init__(self, write):
        self.write, self.done, self.result, self.error = write, False, None, None


_PENDING = []  # records waiting for the next transaction (SQLite), guarded by _PENDING_LOCK
_PENDING_LOCK = threading.Lock()


def record(write):
    """Run `write()`, the statements that record one claimed row's outcome (update_claimed
    and its run-log line; nothing kept in memory), in a write transaction; its result once
    committed. The caller sends nothing more until then: an answer is stored before the next
    request goes out, so a crash loses only what was in flight (tests/test_crash.py).

    SQLite: a group commit. Records that arrive while another thread holds the engine's write
    lock wait for it, and the first of them to get it writes every record waiting in one
    transaction: a transaction costs its pages once (the item indexes' inner pages, the kept
    counts' row, the run log's last page) however many records it holds, half of an answer's
    write with two in it (bench/bench_item_writes.py --batch). One record that fails is written
    again alone, each other one too, so no record is lost to another's error. PostgreSQL
    records in a transaction of their own (recording()): they do not queue there.
    """
    if database.is_postgres or database.in_transaction():
        with recording():
            return write()
    entry = _Record(write)
    with _PENDING_LOCK:
        _PENDING.append(entry)
    with _WRITER:
        if not entry.done:
            _write_pending()
    if entry.error is not None:
        raise entry.error
    return entry.result


def write_waiting():
    """Write now the records waiting for a transaction (record()), before a claim is given
    back (release): SQLite only, and not inside a transaction of the caller's."""
    if database.is_postgres or database.in_transaction():
        return
    with _WRITER:
        if _PENDING:
            _write_pending()


def records_waiting():
    """How many records wait for a transaction now (a test sees a batch form)."""
    with _PENDING_LOCK:
        return len(_PENDING)


def _write_pending():
    """Write every waiting record in one transaction (under _WRITER); each marked done."""
    with _PENDING_LOCK:
        batch = _PENDING[:]
        _PENDING.clear()
    written = False
    try:
        try:
            with database.atomic("IMMEDIATE"):
                results = [entry.write() for entry in batch]
        except Exception as exc:
            if len(batch) == 1:
                batch[0].error = exc
            else:
                for entry in batch:  # rolled back whole: each again alone, its error its own
                    try:
                        with database.atomic("IMMEDIATE"):
                            entry.result = entry.write()
                    except Exception as own:
                        entry.error = own
            written = True
            return
        for entry, result in zip(batch, results, strict=True):
            entry.result = result
        written = True
    finally:
        for entry in batch:
            if not written and entry.error is None:  # interrupted: its owner must not go on
                entry.error = RuntimeError("the record was not written")
            entry.done = True


# SQLite: OR FAIL, so that the record keeps no statement journal. A statement that fires a
# trigger (the kept counts, db/ddl.py) and may abort saves each page it changes first,
# and an answer changes more pages than the journal keeps in memory: a temp file written and
# unlinked per answer (~140 us). FAIL differs from ABORT only in what a failing statement leaves
# of its own changes, and every caller records inside a transaction that rolls back on error.
UPDATE_VERB = {False: "UPDATE OR FAIL", True: "UPDATE"}
# Item's fields in an index over all its rows (a partial index skips a row its WHERE leaves out,
# so a NULL kept NULL costs it nothing). claimed_until is not among them: it is ours, so set.
INDEXED = frozenset(
    field.name
    for index in Item._meta.fields_to_index()
    if index._where is None
    for field in index._expressions
    if hasattr(field, "name")
)
# Item's indexes: (its fields, the text of its WHERE or None).
_INDEXES = tuple(
    (
        frozenset(f.name for f in index._expressions if hasattr(f, "name")),
        None if index._where is None else getattr(index._where, "sql", str(index._where)),
    )
    for index in Item._meta.fields_to_index()
)
_UPDATE_SQL = {}  # (set, cleared, postgres) -> both statements: built once, used per record


def update_claimed(item_id, status, attempts, fields):
    """Record an outcome while the item is still ours (status and claimed attempts); the claim
    ends with it. 1 if it was ours.

    Indexed fields to be NULL (INDEXED) are left out of the UPDATE and cleared by a second one
    that changes the row only where one of them is not NULL yet: SQLite rewrites every index on
    a column the SET names, whatever the value, and they are mostly NULL already (an answer
    with no price has no cost_usd, and had none before). Not those whose every index the UPDATE
    rewrites anyway (error_stage: only in item_figures, which the status rewrites): they are
    set in it, and most records are then one statement. PostgreSQL sets them all in one
    statement: an index entry changes there only when its value does, and each statement is a
    round trip."""
    columns = Item._meta.fields
    values = {n: columns[n].db_value(v) for n, v in fields.items()}
    values["claimed_until"] = None  # ours, so set: the claim ends here
    cleared = tuple(n for n, v in values.items() if v is None and n in INDEXED)
    names = tuple(n for n in values if n not in cleared)
    key = (names, cleared, database.is_postgres)
    sql = _UPDATE_SQL.get(key)
    if sql is None:
        sql = _UPDATE_SQL[key] = _update_sql(names, cleared, database.is_postgres)
    set_sql, clear_sql = sql
    ours = database.execute_sql(
        set_sql, (*(values[n] for n in names), item_id, status, attempts)
    ).rowcount
    if ours and clear_sql:
        # Guarded as the row now is (in the caller's transaction nothing came between).
        now_status = values.get("status", status)
        now_attempts = values.get("attempts", attempts)
        database.execute_sql(clear_sql, (item_id, now_status, now_attempts))
    return ours


def _update_sql(names, cleared, postgres):
    """The record's UPDATE setting `names` (and the fields of `cleared` it rewrites no index
    for: rewritten_anyway), and the one clearing the rest of `cleared` (None if none)."""
    verb = UPDATE_VERB[postgres]
    guard = '"id" = ? AND "status" = ? AND "attempts" = ?'
    folded = cleared if postgres else tuple(n for n in cleared if rewritten_anyway(n, names))
    cleared = tuple(n for n in cleared if n not in folded)
    sets = [f"{_column(n)} = ?" for n in names] + [f"{_column(n)} = NULL" for n in folded]
    set_sql = f'{verb} "item" SET {", ".join(sets)} WHERE {guard}'
    if not cleared:
        return set_sql, None
    nulls = ", ".join(f"{_column(n)} = NULL" for n in cleared)
    some_set = " OR ".join(f"{_column(n)} IS NOT NULL" for n in cleared)
    return set_sql, f'{verb} "item" SET {nulls} WHERE {guard} AND ({some_set})'


def rewritten_anyway(name, names):
    """True when SQLite rewrites every index over field `name` for an UPDATE that sets `names`
    (each holds one of them too) and no partial index has it in its columns or WHERE: setting
    `name` as well costs no index work of its own."""
    column = Item._meta.fields[name].column_name
    for fields, where in _INDEXES:
        if where is not None and (name in fields or column in where):
            return False
        if where is None and name in fields and not fields.intersection(names):
            return False
    return True


def _column(name):
    """The quoted column of Item's field `name`."""
    return f'"{Item._meta.fields[name].column_name}"'
