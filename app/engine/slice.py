"""One tick's work on one run: the judge's warm-up, groups with their warm-ups, then judging.

Judging is the judge stage: the task's scorer that needs a call, asked with the run's judge
model (scoring/registry.py); rule scorers score an answer as it is stored (engine/rules.py), and
without a scorer that needs a call the judge is not warmed up.

The slice composes the parts, each in its own module and each handed the same RunContext
(context.py): the worker pool (workers.py), the item worker (items.py), the model groups
(groups.py), the warm-ups (warmup.py) and the claims (claims.py). Anything unexpected ends as a
recorded failure (an item FAILED, a group failed, or the run paused with the reason and an ERROR
line in the run log), never as a silent retry loop.
"""

import logging
import time

from peewee import fn

from ..db.connection import database
from ..db.connection import storage_full
from ..db.models import BENCHMARKING
from ..db.models import CANT_BE_FINISHED
from ..db.models import COMPLETED
from ..db.models import CONTROL_PAUSED
from ..db.models import CONTROL_RUNNING
from ..db.models import FAILED
from ..db.models import FINISHED
from ..db.models import JUDGING
from ..db.models import NEW
from ..db.models import PENDING
from ..db.models import WAITING_FOR_JUDGE
from ..db.models import Item
from ..db.models import Run
from ..runs import creation
from ..runs.state import run_state
from ..scoring import registry
from . import call_claims
from . import claims
from . import groups
from . import lease
from . import load_steps
from . import warmup
from .calls import CallWorker
from .calls import cant_finish_job
from .context import RunContext
from .items import ItemWorker
from .memory import memory_for
from .workers import ClaimFeed
from .workers import WorkerPool

log = logging.getLogger(__name__)

RUN_STATE_SQL = 'SELECT "status", "control" FROM "run" WHERE "id" = ?'
SLICE_SECONDS = 5.0  # a tick works at most this long before returning (pause/stop stay prompt)


class Slice:
    """One tick's work on one run."""

    def __init__(self, run, config, holder, clock, on_event, interrupt, seconds):
        self.holder = holder
        self.interrupt = interrupt
        self.deadline = time.monotonic() + seconds
        self.lease_renewed = time.monotonic()
        self.ctx = RunContext(
            run, config, clock=clock, memory=memory_for(holder, run), on_event=on_event
        )
        self.pool = WorkerPool(self.ctx, self._still_running, self.deadline, interrupt)
        self.worker = ItemWorker(self.ctx)
        self.calls = CallWorker(self.ctx)

    def work(self):
        """Work until the slice ends; a summary of the tick for the orchestrator."""
        ctx = self.ctx
        try:
            while True:
                outcome = self._step()
                if outcome is not None:
                    break
        except Exception as exc:  # never a silent loop: the run pauses with the reason
            if storage_full(exc):  # not a fault of the run's: it waits for room, then goes on
                log.warning("the database is full: run %s waits for room", ctx.run.run_id)
                ctx.memory.no_room(ctx.now())
                outcome = "idle"
            else:
                log.exception("orchestrator slice failed")
                ctx.pause(
                    f"internal error in the orchestrator ({repr(exc)[:300]}); see the "
                    "server log, then continue",
                    event="internal_error",
                )
                outcome = "halted"
        run = Run.get_by_id(ctx.run.id)
        return {
            "held": True,
            "runId": run.run_id,
            "state": run_state(run),
            "phase": run.phase,
            "idle": outcome == "idle",
            "outcome": outcome,
            "done": ctx.done,
            "wakeAt": self._wake_at() if outcome == "idle" else None,
        }

    def _step(self):
        """Do one unit of work; return None to go on, or why the slice ends."""
        ctx = self.ctx
        if time.monotonic() >= self.deadline:
            return "slice"
        if not self._still_running():
            return "halted"
        if ctx.memory.waiting_for_room(ctx.now()):
            return "idle"
        run = ctx.run
        has_new = Item.select().where((Item.run == run) & (Item.status == NEW)).exists()
        waiting = (
            has_new
            or Item.select().where((Item.run == run) & (Item.status == WAITING_FOR_JUDGE)).exists()
        )
        if not has_new and creation.pending(run):
            # A big run's next items (runs/creation.py): none left to claim, more to make.
            creation.make_more(run)
            return None
        warmups = ctx.memory.warmups
        if waiting and registry.has_call(bool(run.judge_model)) and not warmups.judge_ready:
            if warmups.waiting(warmup.JUDGE, ctx.now()) or ctx.breaker.waiting(
                run.judge_provider_id, ctx.now()
            ):
                return "idle"
            warmup.warm_up_judge(ctx, self.pool)
            return None  # look at control again before anything else
        # Judge calls (a reference check, pairwise comparisons) come first: a judge check asked
        # for in the spec is done before any answer. Calls waiting for a retry do not block.
        job_id = call_claims.claimable_job(run, ctx.now())
        if job_id is not None:
            return self._calls(job_id)
        if has_new:
            return self._benchmark()
        groups.leave_group(ctx)
        # A run without a judge model has no judging phase: its checks scored every answer.
        if run.phase != JUDGING and run.judge_model:
            waiting = (
                Item.select().where((Item.run == run) & (Item.status == WAITING_FOR_JUDGE)).count()
            )
            self._set_phase(
                JUDGING,
                f"Phase JUDGING: {waiting} answers to judge with "
                f"{run.judge_provider_name}/{run.judge_model}",
            )
        if claims.any_claimable(run, WAITING_FOR_JUDGE, ctx.now()):
            return self._judge()
        if waiting or call_claims.any_open(run):
            return "idle"
        self._finish()
        return "finished"

    def _benchmark(self):
        ctx = self.ctx
        if ctx.run.phase != BENCHMARKING:
            self._set_phase(BENCHMARKING, "Phase BENCHMARKING: answers still missing")
        target = groups.pick_group(ctx)
        if target is None:
            return "idle"  # only backoff waits left: come back later
        if target.provider is None:  # deleted (before or while its group ran)
            groups.cant_finish_group(ctx, target, "the target's provider was deleted")
            ctx.memory.group = None
            return None
        if ctx.memory.group != target.id:
            groups.leave_group(ctx)
            warmup.warm_up_target(ctx, self.pool, target)
            return None  # look at control again before claiming anything
        if self._over_budget():
            return "budget"
        adapter = ctx.adapter_for(target.provider)
        if adapter is None:
            return None
        seconds = self.pool.claim_seconds(target.provider)
        label = ctx.target_label(target.id)
        limit = ctx.concurrency(target.provider)
        load, step, answer = load_steps.load_of(ctx.run), None, self.worker.answer
        if load:
            # One load step at a time, at the step's own load (load_steps.py).
            step = load_steps.current_step(ctx.run, target.id)
            if step is None:
                return None
            limit = load_steps.limit_of(ctx.run, load, step)
            load_steps.begin(ctx, target, adapter, load, step)
            answer = self._step_answer(load, step, target)
            # The slice's end would drain the step to nothing in flight every few seconds (a
            # load test must hold its load); pause and stop are still watched every 0.1 s.
            self.pool.deadline = max(
                self.pool.deadline, time.monotonic() + load_steps.STEP_SLICE_SECONDS
            )

        def claim(now, until, k):
            def take():
                return claims.claim_batch(
                    ctx.run.id,
                    NEW,
                    now,
                    until,
                    target.id,
                    k,
                    self.holder,
                    target.provider_id,
                    limit,
                    step,
                )

            batch = take()
            # A big run's items are made as they are needed (runs/creation.py): here, while
            # the requests in flight go on.
            while not batch and not batch.full and creation.make_more(ctx.run, target.id):
                batch = take()
            return batch

        feed = ClaimFeed(
            self.pool,
            claim,
            k=limit,
            ahead=not database.is_postgres,
        )
        return self._supervise(
            feed,
            limit,
            lambda: self.pool.claim_loop(
                NEW,
                seconds,
                lambda now, until: (
                    None if ctx.breaker.waiting(target.provider_id, now) else feed(now, until)
                ),
                lambda row: f"{row.task_key} on {label}",
                lambda row: answer(row, target, adapter),
                self.worker.internal_failure,
            ),
        )

    def _step_answer(self, load, step, target):
        """ItemWorker.answer for one load step: a rate step's request waits for its arrival
        first, and a step the judge does not score (judgeSteps "first") is settled by its
        rules alone."""
        ctx = self.ctx
        arrivals = load_steps.arrivals_for(ctx, target, load, step)
        judged = load_steps.judged(load, step)

        def answer(row, target, adapter):
            if arrivals is not None and not load_steps.wait_for_arrival(ctx, arrivals):
                # Halted before its time came: unsent, so the claim goes back uncounted (on a
                # stop the supervisor gives it back itself).
                if not ctx.cancel.is_set():
                    claims.release(row.id, row.attempts)
                return
            self.worker.answer(row, target, adapter, judged=judged)

        return answer

    def _judge(self):
        ctx = self.ctx
        provider = ctx.run.judge_provider
        if provider is None:
            return self._judge_provider_gone()
        if ctx.breaker.waiting(provider.id, ctx.now()):
            return "idle"  # the judge's server is down: the answers wait for it
        if self._over_budget():
            return "budget"  # judge calls cost money too: items stay WAITING_FOR_JUDGE
        adapter = ctx.adapter_for(provider)
        if adapter is None:
            return None
        # Two calls at most per judgement (the repair), so twice the timeout, per judgement.
        seconds = self.pool.claim_seconds(provider, calls=2 * ctx.judge_repeats)
        limit = ctx.concurrency(provider, judge=True)
        feed = ClaimFeed(
            self.pool,
            lambda now, until, k: claims.claim_batch(
                ctx.run.id, WAITING_FOR_JUDGE, now, until, None, k, self.holder, provider.id, limit
            ),
            k=limit,
            ahead=not database.is_postgres,
        )
        return self._supervise(
            feed,
            limit,
            lambda: self.pool.claim_loop(
                WAITING_FOR_JUDGE,
                seconds,
                lambda now, until: (
                    None if ctx.breaker.waiting(provider.id, now) else feed(now, until)
                ),
                lambda row: f"judging {row.task_key} on {ctx.target_label(row.target_id)}",
                lambda row: self.worker.judge(row, adapter),
                self.worker.internal_failure,
            ),
        )

    def _calls(self, job_id):
        """Make one job's claimable judge calls (engine/calls.py) with the job's judge."""
        ctx = self.ctx
        provider = self.calls.job(job_id).judge_provider
        if provider is None:
            cant_finish_job(ctx, self.calls.job(job_id))
            return None
        if ctx.breaker.waiting(provider.id, ctx.now()):
            return "idle"  # the judge's server is down: the calls wait for it
        if self._over_budget():
            return "budget"
        adapter = ctx.adapter_for(provider)
        if adapter is None:
            return None
        seconds = self.pool.claim_seconds(provider, calls=2)  # one repair at most
        limit = provider.max_concurrency
        feed = ClaimFeed(
            self.pool,
            lambda now, until, _k: call_claims.claim_batch(
                ctx.run.id, job_id, now, until, self.holder, provider.id, limit
            ),
        )
        return self.pool.supervise(
            limit,
            lambda: self.pool.claim_loop(
                NEW,
                seconds,
                lambda now, until: (
                    None if ctx.breaker.waiting(provider.id, now) else feed(now, until)
                ),
                self.calls.label,
                lambda row: self.calls.process(row, adapter),
                self.calls.internal_failure,
                store=call_claims,
            ),
        )

    def _supervise(self, feed, limit, body):
        """The pool's supervise(limit, body), then the feed's batched claims no thread took
        (the pool halted first) given back uncounted."""
        try:
            return self.pool.supervise(limit, body)
        finally:
            feed.leftover()

    def _still_running(self):
        """The run is still running, not interrupted, and the lease is still ours."""
        ctx = self.ctx
        # Plain SQL: the supervisor asks ten times a second while requests are in flight.
        row = database.execute_sql(RUN_STATE_SQL, (ctx.run.id,)).fetchone()
        if row is None or row[0] != PENDING or row[1] != CONTROL_RUNNING:
            return False
        if self.interrupt is not None and self.interrupt.is_set():
            return False
        seconds = float(ctx.config.get("LEASE_SECONDS", 15.0))
        if time.monotonic() - self.lease_renewed > seconds / 3:
            self.lease_renewed = time.monotonic()
            if not lease.acquire(self.holder, seconds, ctx.now()):
                return False
        return True

    def _set_phase(self, phase, message):
        ctx = self.ctx
        Run.update(phase=phase, updated_at=ctx.now()).where(Run.id == ctx.run.id).execute()
        ctx.run.phase = phase
        ctx.emit("phase_changed", message, data={"phase": phase})

    def _wake_at(self):
        """When the slice has work again: a backoff, an expiring claim, a warm-up retry, a
        probe of a server that could not be reached or another try at a full database."""
        times = [
            claims.next_wake(self.ctx.run),
            call_claims.next_wake(self.ctx.run),
            self.ctx.memory.warmups.wake_at(self.ctx.now()),
            self.ctx.breaker.wake_at(),
            self.ctx.memory.room_at if self.ctx.memory.waiting_for_room(self.ctx.now()) else None,
        ]
        times = [t for t in times if t is not None]
        return min(times) if times else None

    def _over_budget(self):
        """Pause the run when its budget is reached (True); the items wait for a higher one."""
        ctx = self.ctx
        budget = ctx.budget
        if not budget.reached():
            return False
        reason = (
            f"budget reached: spent ${budget.spent:.4f} of the ${budget.limit:.4f} "
            "limit (settings.maxBudgetUsd); continue with a higher budget to go on"
        )
        Run.update(control=CONTROL_PAUSED, control_reason=reason, updated_at=ctx.now()).where(
            Run.id == ctx.run.id
        ).execute()
        ctx.emit(
            "budget_reached",
            f"Paused: {reason}",
            level="WARNING",
            data={"spentUsd": budget.spent, "budgetUsd": budget.limit},
        )
        return True

    def _judge_provider_gone(self):
        ctx = self.ctx
        message = (
            "can't be finished: the judge's provider was deleted; start a new run with "
            "another judge"
        )
        count = groups.settle(
            ctx, Item.status == WAITING_FOR_JUDGE, CANT_BE_FINISHED, "judge", message
        )
        ctx.emit(
            "cant_be_finished",
            f"{count} items {message}",
            level="ERROR",
            data={"stage": "judge", "count": count},
        )
        return None

    def _finish(self):
        ctx = self.ctx
        now = ctx.now()
        counts = dict(
            Item.select(Item.status, fn.COUNT(Item.id))
            .where(Item.run == ctx.run)
            .group_by(Item.status)
            .tuples()
        )
        # A run reopened for a judge check or a pairwise job kept its finished time: that work
        # has its own times (runs/judge_jobs.job_progress), the run's stay its own.
        Run.update(
            status=FINISHED,
            finished_at=fn.COALESCE(Run.finished_at, now),
            control_reason=None,
            updated_at=now,
        ).where(Run.id == ctx.run.id).execute()
        judge = ctx.run.judge_provider
        if ctx.keeps_loaded(judge):
            try:
                ctx.memory.adapter(judge).unload(ctx.run.judge_model)
            except Exception:  # noqa: BLE001 - done either way; it unloads after keep_alive
                pass
        cant = counts.get(CANT_BE_FINISHED, 0)
        ctx.emit(
            "run_finished",
            f"Run finished: {counts.get(COMPLETED, 0)} completed, "
            f"{counts.get(FAILED, 0)} failed" + (f", {cant} can't be finished" if cant else ""),
            data={"counts": counts},
            now=now,
        )
        memory_for(self.holder, None)
