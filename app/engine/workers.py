"""Worker threads and their supervisor: claims in flight, their extension, stop and pause.

Worker threads (as many as the provider's max_concurrency) claim and process items; the tick's
own thread supervises them: it watches the run's control (pause, stop) in the database, the time
slice and the lease, and keeps the claims of requests still in flight from expiring.
"""

import collections
import datetime as dt
import logging
import threading
import time

from ..db.connection import database
from ..db.connection import storage_full
from ..db.models import CONTROL_STOPPED
from ..db.models import PENDING
from ..db.models import WAITING_FOR_JUDGE
from ..db.models import Run
from ..runs import counts
from . import claims
from . import wal

log = logging.getLogger(__name__)

POLL_SECONDS = 0.1  # how often the supervisor looks at the run's control while work is in flight
CLAIM_MARGIN_SECONDS = 30.0  # claim deadline = provider timeout + this (then claimable again)
EXTEND_EVERY_SECONDS = 5.0  # how often the deadlines of claims still in flight are pushed on
STOP_GRACE_SECONDS = 0.5  # how long a stop waits for abandoned requests to notice the cancel
FULL_WAIT_SECONDS = 0.1  # how often a thread asks again while its provider has no slot free
WORKER_FAILURES_TO_PAUSE = 3  # slices in a row whose worker crashed before the run is paused
INTERRUPTED = "interrupted (the command was stopped); continue it when ready"


class InFlight:
    """One claim being worked on: what guards its writes and how to extend or release it.

    `store` is the claims module of the claimed row's table: claims (items) or call_claims
    (judge calls); both offer extend() and release().
    """

    __slots__ = ("attempts", "status", "seconds", "label", "store")

    def __init__(self, attempts, status, seconds, label, store=claims):
        self.attempts, self.status, self.seconds, self.label = attempts, status, seconds, label
        self.store = store


class ClaimFeed:
    """The pool threads' `claim_next`: claims in batches and waits while the provider is full.

    `claim(now, deadline, k)` returns a claims.Batch. The feed claims as many items as threads
    are asking at that moment (at most `k`) in one transaction and hands the rest to the threads
    queued behind it; a Batch that is `full` (PostgreSQL: the provider's max_concurrency is
    taken by other processes) makes the asking thread wait FULL_WAIT_SECONDS and ask again until
    the pool halts. `leftover()` gives back what no thread took (call it after supervise).

    `ahead`: claim k even when fewer threads are asking, the rest kept for the next ones. The
    orchestrator does so on SQLite, where a claim is a write transaction of its own (BEGIN
    IMMEDIATE, commit) and one process claims: k claims cost one transaction, and an item sits
    claimed unsent only until a thread finishes its current request. On PostgreSQL claims held
    ahead would take slots of the provider's max_concurrency across processes, so only the
    threads asking share a batch. Whatever is left when the pool halts goes back by leftover().
    """

    def __init__(self, pool, claim, k=1, ahead=False):
        self.pool, self.claim, self.k, self.ahead = pool, claim, max(1, int(k)), ahead
        self._buffer = collections.deque()
        self._claiming = threading.Lock()
        self._count = threading.Lock()
        self._asking = 0

    def __call__(self, now, deadline):
        span = deadline - now
        with self._count:
            self._asking += 1
        try:
            while True:
                with self._claiming:
                    if self._buffer:
                        return self._buffer.popleft()
                    with self._count:
                        k = self.k if self.ahead else min(self.k, self._asking)
                    batch = self.claim(now, deadline, k)
                    if batch:
                        self._buffer.extend(batch[1:])
                        return batch[0]
                    if not batch.full:
                        return None
                if self.pool.ctx.halt.wait(FULL_WAIT_SECONDS):
                    return None
                now = self.pool.ctx.now()
                deadline = now + span
        finally:
            with self._count:
                self._asking -= 1

    def leftover(self, store=claims):
        """Give back the claims no thread took (the pool halted first); returns how many."""
        given = 0
        while self._buffer:
            row = self._buffer.popleft()
            given += store.release(row.id, row.attempts)
        return given


class WorkerPool:
    """Runs claim loops in worker threads under one supervisor, for one tick of one run.

    `still_running()` tells whether the run may go on (control, lease, interrupt); `deadline`
    (time.monotonic) ends the tick's slice; `interrupt` is the CLI's Ctrl-C event, or None.
    `stops_run`: an interrupt stops the run (the orchestrator's CLI), or only this process's
    work (a `llmbench worker`: its claims are given back and the run goes on elsewhere).
    """

    def __init__(self, ctx, still_running, deadline, interrupt=None, stops_run=True):
        self.ctx = ctx
        self.still_running = still_running
        self.deadline = deadline
        self.interrupt = interrupt
        self.stops_run = stops_run
        self.inflight = {}  # item id -> InFlight
        self._lock = threading.Lock()

    def claim_seconds(self, provider, calls=1):
        """How long a claim holds: the provider timeout per call plus a margin."""
        margin = float(self.ctx.config.get("CLAIM_MARGIN_SECONDS", CLAIM_MARGIN_SECONDS))
        return calls * float(provider.timeout_seconds) + margin

    def claim_loop(self, status, seconds, claim_next, label_of, process, on_error, store=claims):
        """Claim and process items until halted, stopped, out of budget or out of items.

        `claim_next(now, deadline)` claims one item (or None), `process(row)` works on it, and
        `on_error(row, status, exc, label)` records a bug past the adapter as the item's failure.
        `store` extends and releases the claims (claims for items, call_claims for judge calls).
        """
        ctx = self.ctx
        while not (ctx.halt.is_set() or ctx.cancel.is_set()):
            if ctx.budget.reached():
                # Workers only stop claiming; the slice's next step pauses the run and says why.
                ctx.halt.set()
                return
            now = ctx.now()
            row = claim_next(now, now + dt.timedelta(seconds=seconds))
            if row is None:
                return
            self._run_claimed(row, status, seconds, label_of(row), process, on_error, store)

    def _run_claimed(self, row, status, seconds, label, process, on_error, store=claims):
        with self._lock:
            self.inflight[row.id] = InFlight(row.attempts, status, seconds, label, store)
        try:
            process(row)
        except Exception as exc:  # a bug past the adapter: fail the item, never retry it blindly
            if not storage_full(exc):
                log.exception("unexpected error working on item %s", row.id)
                on_error(row, status, exc, label)
            else:
                self._no_room(row, store)
        finally:
            with self._lock:
                mine = self.inflight.pop(row.id, None)
            if mine is not None and self.ctx.cancel.is_set():
                self._give_back(row.id, mine)

    def _no_room(self, row, store):
        """The database was full when recording `row`: not the item's fault, so it goes back
        unfinished (its attempt uncounted) and the run waits for room (HolderMemory.no_room)."""
        log.warning("the database is full: item %s goes back unfinished", row.id)
        self.ctx.memory.no_room(self.ctx.now())
        self.ctx.halt.set()
        try:
            store.release(row.id, row.attempts)
        except Exception as exc:
            if not storage_full(exc):
                raise
            # Not even that fits: the claim expires by itself and the item is asked again.

    def _give_back(self, item_id, claim):
        """A stop abandoned this claim: release it uncounted and say so in the run log."""
        if claim.store.release(item_id, claim.attempts):
            what = "judged" if claim.status == WAITING_FOR_JUDGE else "asked"
            left = not self.stops_run and self.interrupt is not None and self.interrupt.is_set()
            why, when = ("worker stopped", "soon") if left else ("run stopped", "on continue")
            self.ctx.emit(
                "abandoned",
                f"abandoned: {claim.label} ({why}); it will be {what} again {when}",
                level="WARNING",
                data={"itemId": item_id},
            )

    def supervise(self, count, body):
        """Run `body` in `count` worker threads; watch control, deadline and lease meanwhile.

        Returns "halted" when a stop abandoned the work, else None.
        """
        ctx = self.ctx
        done = threading.Event()
        alive = [max(1, int(count or 1))]
        failures = []

        def worker():
            try:
                with database.connection_context(), wal.worker_connection():
                    body()
            except Exception as exc:  # e.g. the database stayed locked: the claim expires
                if storage_full(exc):  # a claim found no room: the run waits for some
                    log.warning("the database is full: the run's workers wait")
                    ctx.memory.no_room(ctx.now())
                else:
                    log.exception("orchestrator worker failed")
                    failures.append(exc)
                ctx.halt.set()
            finally:
                with self._lock:
                    alive[0] -= 1
                    if alive[0] == 0:
                        done.set()

        ctx.halt.clear()
        threads = [
            threading.Thread(target=worker, daemon=True, name=f"llmbench-worker-{i}")
            for i in range(alive[0])
        ]
        for t in threads:
            t.start()
        extended = checkpointed = time.monotonic()
        while not done.wait(POLL_SECONDS):
            if time.monotonic() - checkpointed >= wal.CHECKPOINT_SECONDS:
                checkpointed = time.monotonic()
                wal.checkpoint()
                counts.fold()  # PostgreSQL's count deltas, at the same pace
            if not self.still_running():
                run = Run.get_by_id(ctx.run.id)
                if (
                    run.control == CONTROL_STOPPED
                    or run.status != PENDING
                    or (self.interrupt is not None and self.interrupt.is_set())
                ):
                    self._abandon(done)
                    counts.fold()
                    return "halted"
                ctx.halt.set()  # paused (or lease lost): let the items in flight finish
            elif time.monotonic() >= self.deadline:
                ctx.halt.set()
            if time.monotonic() - extended >= self._extend_every():
                extended = time.monotonic()
                self._extend_claims()
        wal.checkpoint()
        counts.fold()
        self._worker_outcome(failures)
        return None

    def _extend_every(self):
        with self._lock:
            shortest = min((c.seconds for c in self.inflight.values()), default=None)
        if shortest is None:
            return EXTEND_EVERY_SECONDS
        return max(POLL_SECONDS, min(EXTEND_EVERY_SECONDS, shortest / 3))

    def _extend_claims(self):
        """Push on the deadline of every claim still in flight (a slow stream outlives its
        first deadline; a sibling worker must not claim and send it a second time)."""
        now = self.ctx.now()
        with self._lock:
            held = list(self.inflight.items())
        for item_id, claim in held:
            claim.store.extend(
                item_id, claim.status, claim.attempts, now + dt.timedelta(seconds=claim.seconds)
            )

    def _worker_outcome(self, failures):
        """A crashed worker is logged; crashing slice after slice pauses the run (no loop)."""
        memory = self.ctx.memory
        if not failures:
            memory.worker_failures = 0
            return
        memory.worker_failures += 1
        error = repr(failures[0])[:300]
        if memory.worker_failures >= WORKER_FAILURES_TO_PAUSE:
            memory.worker_failures = 0
            self.ctx.pause(
                f"internal error in the orchestrator ({error}), "
                f"{WORKER_FAILURES_TO_PAUSE} times in a row; see the server log, then "
                "continue",
                event="internal_error",
            )
        else:
            self.ctx.emit(
                "internal_error",
                f"A worker failed: {error}; its item is tried again when its claim expires",
                level="ERROR",
            )

    def _abandon(self, done):
        """Stop: cancel requests, give their claims back now, don't wait long for the threads."""
        ctx = self.ctx
        ctx.cancel.set()
        ctx.halt.set()
        done.wait(STOP_GRACE_SECONDS)
        # Requests still blocked (waiting for a first byte) are left behind: release their
        # claims now; the threads discard whatever arrives later.
        with self._lock:
            stuck = list(self.inflight.items())
            self.inflight.clear()
        for item_id, claim in stuck:
            self._give_back(item_id, claim)
        if self.stops_run and self.interrupt is not None and self.interrupt.is_set():
            Run.update(
                control=CONTROL_STOPPED, updated_at=ctx.now(), control_reason=INTERRUPTED
            ).where((Run.id == ctx.run.id) & (Run.status == PENDING)).execute()
