"""A slice's worker threads and their supervisor: claims in flight, their extension, stop.

Worker threads (as many as the provider's max_concurrency) claim and process items; the tick's
own thread supervises them: it watches the run's control (pause, stop) in the database, the time
slice and the lease, and keeps the claims of requests still in flight from expiring.
"""

import datetime as dt
import logging
import threading
import time

from ..db import database
from ..models import CONTROL_PAUSED
from ..models import CONTROL_RUNNING
from ..models import CONTROL_STOPPED
from ..models import NEW
from ..models import PENDING
from ..models import WAITING_FOR_JUDGE
from ..models import Run
from . import claims

log = logging.getLogger(__name__)

POLL_SECONDS = 0.1  # how often the supervisor looks at the run's control while work is in flight
CLAIM_MARGIN_SECONDS = 30.0  # claim deadline = provider timeout + this (then claimable again)
EXTEND_EVERY_SECONDS = 5.0  # how often the deadlines of claims still in flight are pushed on
STOP_GRACE_SECONDS = 0.5  # how long a stop waits for abandoned requests to notice the cancel
WORKER_FAILURES_TO_PAUSE = 3  # slices in a row whose worker crashed before the run is paused
INTERRUPTED = "interrupted (the command was stopped); continue it when ready"


class InFlight:
    """One claim being worked on: what guards its writes and how to extend or release it."""

    __slots__ = ("attempts", "status", "seconds", "label")

    def __init__(self, attempts, status, seconds, label):
        self.attempts, self.status, self.seconds, self.label = attempts, status, seconds, label


class Workers:
    """Mixin for Slice: answer/judge loops in worker threads under one supervisor."""

    def claim_seconds(self, provider, calls=1):
        """How long a claim holds: the provider timeout per call plus a margin."""
        margin = float(self.config.get("CLAIM_MARGIN_SECONDS", CLAIM_MARGIN_SECONDS))
        return calls * float(provider.timeout_seconds) + margin

    def answer_loop(self, target, adapter):
        seconds = self.claim_seconds(target.provider)
        label = f"{target.provider_name}/{target.model}"
        while not (self.halt.is_set() or self.cancel.is_set()):
            if self.budget is not None and self._over_budget_soft():
                return
            now = self.now()
            row = claims.claim(
                self.run.id, NEW, now, now + dt.timedelta(seconds=seconds), target.id
            )
            if row is None:
                return
            self._run_claimed(
                row,
                NEW,
                seconds,
                f"{row.task_key} on {label}",
                lambda r=row: self.work_.answer(r, target, adapter),
            )

    def judge_loop(self, provider, adapter):
        # Two calls at most per judgement (the repair), so twice the timeout.
        seconds = self.claim_seconds(provider, calls=2)
        while not (self.halt.is_set() or self.cancel.is_set()):
            if self.budget is not None and self._over_budget_soft():
                return
            now = self.now()
            row = claims.claim(
                self.run.id, WAITING_FOR_JUDGE, now, now + dt.timedelta(seconds=seconds)
            )
            if row is None:
                return
            label = f"judging {row.task_key} on {self.target_label(row.target_id)}"
            self._run_claimed(
                row,
                WAITING_FOR_JUDGE,
                seconds,
                label,
                lambda r=row: self.work_.judge(r.id, r.attempts, adapter),
            )

    def _run_claimed(self, claimed, status, seconds, label, process):
        with self.lock:
            self.inflight[claimed.id] = InFlight(claimed.attempts, status, seconds, label)
        try:
            process()
        except Exception as exc:  # a bug past the adapter: fail the item, never retry it blindly
            log.exception("unexpected error working on item %s", claimed.id)
            self.work_.internal_failure(claimed, status, exc, label)
        finally:
            with self.lock:
                mine = self.inflight.pop(claimed.id, None)
            if mine is not None and self.cancel.is_set():
                self._give_back(claimed.id, mine)

    def _give_back(self, item_id, claim):
        """A stop abandoned this claim: release it uncounted and say so in the run log."""
        if claims.release(item_id, claim.attempts):
            what = "judged" if claim.status == WAITING_FOR_JUDGE else "asked"
            self.emit(
                "abandoned",
                f"abandoned: {claim.label} (run stopped); it will be {what} again on continue",
                level="WARNING",
                data={"itemId": item_id},
            )

    def _over_budget_soft(self):
        # Workers only stop claiming; the supervisor's next step pauses the run and logs why.
        with self.lock:
            over = self.spent is not None and self.spent >= float(self.budget)
        if over:
            self.halt.set()
        return over

    def supervise(self, count, body):
        """Run `body` in `count` worker threads; watch control, deadline and lease meanwhile."""
        done = threading.Event()
        alive = [max(1, int(count or 1))]
        failures = []

        def worker():
            try:
                with database.connection_context():
                    body()
            except Exception as exc:  # e.g. the database stayed locked: the claim expires
                log.exception("orchestrator worker failed")
                failures.append(exc)
                self.halt.set()
            finally:
                with self.lock:
                    alive[0] -= 1
                    if alive[0] == 0:
                        done.set()

        self.halt.clear()
        threads = [
            threading.Thread(target=worker, daemon=True, name=f"llmbench-worker-{i}")
            for i in range(alive[0])
        ]
        for t in threads:
            t.start()
        extended = time.monotonic()
        while not done.wait(POLL_SECONDS):
            if not self._still_running():
                run = Run.get_by_id(self.run.id)
                if (
                    run.control == CONTROL_STOPPED
                    or run.status != PENDING
                    or (self.interrupt is not None and self.interrupt.is_set())
                ):
                    self._abandon(done)
                    return "halted"
                self.halt.set()  # paused (or lease lost): let the items in flight finish
            elif time.monotonic() >= self.deadline:
                self.halt.set()
            if time.monotonic() - extended >= self._extend_every():
                extended = time.monotonic()
                self._extend_claims()
        self._worker_outcome(failures)
        return None

    def _extend_every(self):
        with self.lock:
            shortest = min((c.seconds for c in self.inflight.values()), default=None)
        if shortest is None:
            return EXTEND_EVERY_SECONDS
        return max(POLL_SECONDS, min(EXTEND_EVERY_SECONDS, shortest / 3))

    def _extend_claims(self):
        """Push on the deadline of every claim still in flight (a slow stream outlives its
        first deadline; a sibling worker must not claim and send it a second time)."""
        now = self.now()
        with self.lock:
            held = list(self.inflight.items())
        for item_id, claim in held:
            claims.extend(
                item_id, claim.status, claim.attempts, now + dt.timedelta(seconds=claim.seconds)
            )

    def _worker_outcome(self, failures):
        """A crashed worker is logged; crashing slice after slice pauses the run (no loop)."""
        if not failures:
            self.state.worker_failures = 0
            return
        self.state.worker_failures += 1
        error = repr(failures[0])[:300]
        if self.state.worker_failures >= WORKER_FAILURES_TO_PAUSE:
            self.state.worker_failures = 0
            self.pause(
                f"internal error in the orchestrator ({error}), "
                f"{WORKER_FAILURES_TO_PAUSE} times in a row; see the server log, then "
                "continue",
                event="internal_error",
            )
        else:
            self.emit(
                "internal_error",
                f"A worker failed: {error}; its item is tried again when its claim expires",
                level="ERROR",
            )

    def _abandon(self, done):
        """Stop: cancel requests, give their claims back now, don't wait long for the threads."""
        self.cancel.set()
        self.halt.set()
        done.wait(STOP_GRACE_SECONDS)
        # Requests still blocked (waiting for a first byte) are left behind: release their
        # claims now; the threads discard whatever arrives later.
        with self.lock:
            stuck = list(self.inflight.items())
            self.inflight.clear()
        for item_id, claim in stuck:
            self._give_back(item_id, claim)
        if self.interrupt is not None and self.interrupt.is_set():
            Run.update(
                control=CONTROL_STOPPED, updated_at=self.now(), control_reason=INTERRUPTED
            ).where((Run.id == self.run.id) & (Run.status == PENDING)).execute()

    def pause(self, reason, event="paused"):
        """Pause the run with a reason a person can act on, as an ERROR line in the run log."""
        Run.update(control=CONTROL_PAUSED, control_reason=reason, updated_at=self.now()).where(
            (Run.id == self.run.id) & (Run.status == PENDING) & (Run.control == CONTROL_RUNNING)
        ).execute()
        self.emit(event, f"Paused: {reason}", level="ERROR")
