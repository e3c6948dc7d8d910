"""The items a big run makes as it goes: create_run (lifecycle.py) writes the first tasks'
items and a PendingItems row; the engine calls `make_more` when it finds no item to claim, and
each call writes the next tasks' items with the cursor moved on, in one transaction. A crash
between two calls leaves a run that goes on where it stopped, each item made once. Items are
made in the order create_run made them all before (target by target, task by task, each task's
repeats together), so their ids, and the order they are answered in, are the same.

The last call also writes what needed every task: the dataset hash and the run log's lines for
the tasks that cannot be rendered.
"""

from ..clock import utcnow
from ..db.connection import database
from ..db.connection import in_values
from ..db.models import PendingItems
from ..db.models import Provider
from ..db.models import Run
from ..db.models import RunTarget
from ..db.models import Task
from .lifecycle import TASK_CHUNK
from .lifecycle import _dataset_hash
from .lifecycle import _item_rows
from .lifecycle import _log_unrenderable
from .lifecycle import _snapshots
from .lifecycle import insert_items

# Tasks whose items one call makes: ~2 000 item rows at most per transaction on two targets'
# worth of repeats, short enough that the engine's own writes hardly wait for it.
BATCH_TASKS = 1000


def pending(run):
    """Whether the run has items still to make."""
    return PendingItems.select().where(PendingItems.run == getattr(run, "id", run)).exists()


def make_more(run, target_id=None, tasks=None, now=None):
    """Make the items of the run's next `tasks` tasks; True when some were made. With
    `target_id`, only while the next items are that target's (a claim that found none of its
    items has nothing to gain from the next target's)."""
    pk = getattr(run, "id", run)
    now, tasks = now or utcnow(), tasks or BATCH_TASKS
    with database.atomic("IMMEDIATE"):
        # Read inside the write lock: another engine process may have made this batch.
        cursor = PendingItems.get_or_none(PendingItems.run == pk)
        if cursor is None:
            return False
        targets = list(RunTarget.select().where(RunTarget.run == pk).order_by(RunTarget.position))
        rt = targets[cursor.target] if cursor.target < len(targets) else None
        if target_id is not None and (rt is None or rt.id != target_id):
            return False
        run = Run.get_by_id(pk)
        made = 0
        if rt is not None:
            chunk = cursor.tasks[cursor.next_task : cursor.next_task + tasks]
            repeats = int((run.settings or {}).get("repeats") or 1)
            rows = _item_rows(run, rt, _target_of(rt), _snapshots(chunk), repeats, now)
            made = insert_items(rows)
            cursor.next_task += len(chunk)
            if cursor.next_task >= len(cursor.tasks):
                cursor.target, cursor.next_task = cursor.target + 1, 0
        if cursor.target >= len(targets):
            _finish(run, cursor.tasks, len(targets), now)
            cursor.delete_instance()
            return True
        # The cursor's columns only: `tasks` stays as written.
        PendingItems.update(
            target=cursor.target,
            next_task=cursor.next_task,
            remaining=max(0, cursor.remaining - made),
        ).where(PendingItems.id == cursor.id).execute()
    return True


def _target_of(rt):
    """What create_run's spec said of a target, as _item_rows reads it, from its RunTarget."""
    provider = Provider.get_or_none(Provider.id == rt.provider_id)
    if provider is None:  # deleted since: the engine settles its items as it would the others
        provider = Provider(name=rt.provider_name, base_url="")
    return {"provider": provider, "params": rt.params or {}}


def _finish(run, pks, targets, now):
    """The last items are made: the run's dataset hash and the tasks that cannot be rendered."""
    keys = {}
    for start in range(0, len(pks), TASK_CHUNK):
        chunk = pks[start : start + TASK_CHUNK]
        query = Task.select(Task.id, Task.task_id).where(in_values(Task.id, chunk)).tuples()
        found = dict(query)
        keys.update((pk, found[pk]) for pk in chunk if pk in found)
    digest, bad = _dataset_hash(keys)
    Run.update(dataset_hash=digest).where(Run.id == run.id).execute()
    repeats = int((run.settings or {}).get("repeats") or 1)
    _log_unrenderable(run, bad, targets * repeats, now)
