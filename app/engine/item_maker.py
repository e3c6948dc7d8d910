"""A big run's next items (runs/creation.make_more) are made on one thread of the process, the
same one every time, whichever worker found nothing left to claim.

Why one thread: glibc gives the threads that allocate at once arenas of their own and keeps
what each frees in its arena for that arena's next use. Making a batch's items (1 000 tasks'
snapshots and rows) on whichever worker asked left a batch's worth of freed memory in each
worker's arena; on one thread it is the same arena every time, reused by the next batch.
The caller waits for the batch as it did when it made it itself.
"""

import threading
from concurrent.futures import ThreadPoolExecutor

from ..db.connection import database
from ..runs import creation

_lock = threading.Lock()
_executor = []  # the one ThreadPoolExecutor, made on first use


def make_more(run, target_id=None):
    """creation.make_more(run, target_id) on the item-making thread; its result (or error)."""
    return _the_executor().submit(_make, run, target_id).result()


def _make(run, target_id):
    # A connection for this batch only: the thread outlives any one database the process binds
    # (a test binds one per app), and a kept connection would point at the first.
    with database.connection_context():
        return creation.make_more(run, target_id)


def _the_executor():
    with _lock:
        if not _executor:
            _executor.append(ThreadPoolExecutor(1, thread_name_prefix="llmbench-items"))
        return _executor[0]
