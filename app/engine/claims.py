"""Claims on items: take the next one in one UPDATE, extend it while in flight, give it back.

Every write after a claim is guarded by `status` and the claimed `attempts` (update_claimed), so an
answer that arrives after its claim was released (stop) or re-claimed (crash recovery) is never
written.
"""

from ..clock import db_text
from ..db import database
from ..models import NEW
from ..models import WAITING_FOR_JUDGE
from ..models import Item

# One statement claims the next item: attempts counted, a claim deadline in next_retry_at (so a
# crashed in-flight item becomes claimable again) and error_msg cleared (marks "in flight").
# It claims nothing once the run is no longer running, so a pause committed by any process
# stops new claims at once: only the items already in flight finish.
CLAIM_SQL = (
    "UPDATE item SET attempts = attempts + 1, last_attempt_at = ?, "
    "first_attempt_at = COALESCE(first_attempt_at, ?), next_retry_at = ?, error_msg = NULL "
    "WHERE id = (SELECT id FROM item WHERE run_id = ? AND status = ? {target} "
    "AND (next_retry_at IS NULL OR next_retry_at <= ?) ORDER BY id LIMIT 1) "
    "AND EXISTS (SELECT 1 FROM run WHERE id = ? AND status = 'PENDING' AND control = 'running') "
    "RETURNING id, attempts, task_key, question, system_prompt, answer, first_attempt_at, "
    "target_id"
)


class Claimed:
    """What the claim returned: enough of the item to answer it (no 60-column model to build)."""

    __slots__ = (
        "id",
        "attempts",
        "task_key",
        "question",
        "system_prompt",
        "answer",
        "first_attempt_at",
        "target_id",
    )

    def __init__(self, row):
        (
            self.id,
            self.attempts,
            self.task_key,
            self.question,
            self.system_prompt,
            self.answer,
            first,
            self.target_id,
        ) = row
        self.first_attempt_at = Item.first_attempt_at.python_value(first)


def claim(run_id, status, now, deadline, target_id=None):
    """Claim the next claimable item of a run (optionally of one target): Claimed or None."""
    sql = CLAIM_SQL.format(target="AND target_id = ?" if target_id is not None else "")
    params = [db_text(now), db_text(now), db_text(deadline), run_id, status]
    if target_id is not None:
        params.append(target_id)
    params += [db_text(now), run_id]
    with database.atomic("IMMEDIATE"):
        row = database.execute_sql(sql, params).fetchone()
    return Claimed(row) if row else None


def release(item_id, attempts):
    """Give a claim back without counting it (the request was abandoned by a stop).

    The retry-time cap starts again with the next attempt: a run continued hours later must
    not give up on its first transient error because of when it was first tried.
    """
    return (
        Item.update(attempts=Item.attempts - 1, next_retry_at=None, first_attempt_at=None)
        .where(
            (Item.id == item_id)
            & (Item.attempts == attempts)
            & Item.status.in_([NEW, WAITING_FOR_JUDGE])
            & Item.error_msg.is_null()
        )
        .execute()
    )


def extend(item_id, status, attempts, deadline):
    """Push on the deadline of a claim still in flight; 1 when it is still ours."""
    return database.execute_sql(
        "UPDATE item SET next_retry_at = ? WHERE id = ? AND status = ? AND attempts = ? "
        "AND error_msg IS NULL",
        (db_text(deadline), item_id, status, attempts),
    ).rowcount


_UPDATE_SQL = {}  # field names -> SQL text: built once, an item is recorded per request


def update_claimed(item_id, status, attempts, fields):
    """Update the item only while it is still ours (status and claimed attempts); 1 if it was."""
    names = tuple(fields)
    sql = _UPDATE_SQL.get(names)
    if sql is None:
        columns = ", ".join(f'"{Item._meta.fields[n].column_name}" = ?' for n in names)
        sql = _UPDATE_SQL[names] = (
            f'UPDATE "item" SET {columns} WHERE "id" = ? AND "status" = ? AND "attempts" = ?'
        )
    values = [Item._meta.fields[n].db_value(fields[n]) for n in names]
    return database.execute_sql(sql, (*values, item_id, status, attempts)).rowcount
