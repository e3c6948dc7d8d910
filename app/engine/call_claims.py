"""Claims on judge calls (JudgeCall rows): the same rules as claims.py has for items.

A claim counts the attempt and sets `claimed_until` in one UPDATE … RETURNING, and only while
the call's run is running (a pause or stop ends new claims at once); every later write is
guarded by the status and the claimed attempts (update_claimed), so an outcome that arrives after
the claim was released or taken over is never written. WorkerPool takes this module as the
`store` of the claims it supervises (extend, release).
"""

from ..clock import db_text
from ..db.connection import database
from ..db.models import NEW
from ..db.models import JudgeCall
from . import claims

# The same shape as claims.CLAIM_SQL: on PostgreSQL the chosen row is locked with SKIP LOCKED
# (processes claiming at once never wait on each other) and checked again once locked.
CLAIM_SQL = (
    "UPDATE judgecall SET attempts = attempts + 1, last_attempt_at = ?, "
    "first_attempt_at = COALESCE(first_attempt_at, ?), claimed_until = ?, claimed_by = ? "
    "WHERE id {pick}(SELECT id FROM judgecall WHERE run_id = ? AND status = 'NEW' AND job_id = ? "
    "AND (next_retry_at IS NULL OR next_retry_at <= ?) "
    "AND (claimed_until IS NULL OR claimed_until <= ?) ORDER BY id LIMIT 1{lock}){close} "
    "{recheck}"
    "AND EXISTS (SELECT 1 FROM run WHERE id = ? AND status = 'PENDING' AND control = 'running') "
    "RETURNING id, attempts, first_attempt_at, job_id"
)
PG_RECHECK = "AND status = 'NEW' AND (claimed_until IS NULL OR claimed_until <= ?) "


class ClaimedCall:
    """What the claim returned: the call's id, its attempts and when it was first tried."""

    __slots__ = ("id", "attempts", "first_attempt_at", "job_id")

    def __init__(self, row):
        self.id, self.attempts, first, self.job_id = row
        self.first_attempt_at = JudgeCall.first_attempt_at.python_value(first)


def _claimable(run, now):
    return (
        (JudgeCall.run == run)
        & (JudgeCall.status == NEW)
        & (JudgeCall.next_retry_at.is_null() | (JudgeCall.next_retry_at <= now))
        & (JudgeCall.claimed_until.is_null() | (JudgeCall.claimed_until <= now))
    )


def claimable_job(run, now):
    """The id of the oldest job of the run with a call that can be claimed now, or None."""
    row = (
        JudgeCall.select(JudgeCall.job)
        .where(_claimable(run, now))
        .order_by(JudgeCall.id)
        .tuples()
        .first()
    )
    return row[0] if row else None


def any_open(run):
    """True while a call of the run is not settled (waiting, in backoff or in flight)."""
    return JudgeCall.select().where((JudgeCall.run == run) & (JudgeCall.status == NEW)).exists()


def next_wake(run):
    """The earliest time a waiting call (backoff or claim) becomes claimable, or None."""
    unsettled = (JudgeCall.run == run) & (JudgeCall.status == NEW)
    times = []
    for column in (JudgeCall.next_retry_at, JudgeCall.claimed_until):
        row = (
            JudgeCall.select(column)
            .where(unsettled & column.is_null(False))
            .order_by(column)
            .tuples()
            .first()
        )
        if row:
            times.append(row[0])
    return min(times) if times else None


def claim(run_id, job_id, now, deadline, holder=None, provider_id=None, limit=None):
    """Claim the next claimable call of one job of a running run: ClaimedCall or None."""
    batch = claim_batch(run_id, job_id, now, deadline, holder, provider_id, limit)
    return batch[0] if batch else None


def claim_batch(run_id, job_id, now, deadline, holder=None, provider_id=None, limit=None):
    """The next claimable call as a claims.Batch of one (workers.ClaimFeed takes it).

    With `provider_id` and `limit` on PostgreSQL the call counts against the judge provider's
    max_concurrency across every process (claims.fit_to_limit); the Batch is `full` when the
    provider had no slot left.
    """
    postgres = database.is_postgres
    pick, close = claims.PG_PICK if postgres else claims.SQLITE_PICK
    sql = CLAIM_SQL.format(
        lock=claims.PG_LOCK if postgres else "",
        recheck=PG_RECHECK if postgres else "",
        pick=pick,
        close=close,
    )
    params = [
        db_text(now),
        db_text(now),
        db_text(deadline),
        holder,
        run_id,
        job_id,
        db_text(now),
        db_text(now),
    ]
    if postgres:
        params.append(db_text(now))
    params.append(run_id)
    if not postgres:
        with claims.writing():
            row = database.execute_sql(sql, params).fetchone()
        return claims.Batch([ClaimedCall(row)] if row else [])
    counted = provider_id is not None and limit
    if counted and claims.slots_left(provider_id, limit, now, 1) == 0:
        return claims.full_batch()
    row = database.execute_sql(sql, params).fetchone()  # autocommit: the count below sees it
    if row is None:
        return claims.Batch()
    calls = [ClaimedCall(row)]
    if counted and not claims.fit_to_limit(calls, provider_id, limit, now, release):
        return claims.full_batch()
    return claims.Batch(calls)


def release(call_id, attempts):
    """Give a claim back without counting it (a stop abandoned the request)."""
    with claims.writer():
        return (
            JudgeCall.update(
                attempts=JudgeCall.attempts - 1, claimed_until=None, first_attempt_at=None
            )
            .where(
                (JudgeCall.id == call_id)
                & (JudgeCall.attempts == attempts)
                & (JudgeCall.status == NEW)
                & JudgeCall.claimed_until.is_null(False)
            )
            .execute()
        )


def release_all(runs, holder=None):
    """Give back every claim on the calls of `runs` made by `holder` (a dead orchestrator) or by
    no one named (claims.release_all says why); returns how many."""
    mine = JudgeCall.claimed_by.is_null()
    if holder is not None:
        mine |= JudgeCall.claimed_by == holder
    return (
        JudgeCall.update(
            attempts=JudgeCall.attempts - 1,
            claimed_until=None,
            first_attempt_at=None,
            claimed_by=None,
        )
        .where(
            JudgeCall.run.in_(runs)
            & (JudgeCall.status == NEW)
            & (JudgeCall.attempts > 0)
            & JudgeCall.claimed_until.is_null(False)
            & mine
        )
        .execute()
    )


def extend(call_id, status, attempts, deadline):
    """Push on the deadline of a claim still in flight; 1 when it is still ours."""
    with claims.writer():
        return database.execute_sql(
            "UPDATE judgecall SET claimed_until = ? WHERE id = ? AND status = ? AND attempts = ? "
            "AND claimed_until IS NOT NULL",
            (db_text(deadline), call_id, status, attempts),
        ).rowcount


def update_claimed(call_id, attempts, fields):
    """Record an outcome while the call is still ours; the claim ends with it. 1 if ours."""
    fields = {**fields, "claimed_until": None}
    return (
        JudgeCall.update(**fields)
        .where(
            (JudgeCall.id == call_id) & (JudgeCall.status == NEW) & (JudgeCall.attempts == attempts)
        )
        .execute()
    )
