"""`llmbench worker`: a process beside the web app that claims items of the running run.

The web app's orchestrator keeps the run's lifecycle (phases, warm-ups, judge jobs, budget,
pause/stop, the finish); a worker only claims and answers. In BENCHMARKING it takes the NEW
items of the run's targets whose provider it serves, one target at a time in run order (as the
orchestrator does, so an Ollama box loads one model at a time); in JUDGING, the answers waiting
for the judge when it serves the judge's provider. It claims through engine/claims.py
(claim_batch: FOR UPDATE SKIP LOCKED, a provider's max_concurrency counted in the database
across every process), works through the orchestrator's own WorkerPool and ItemWorker (so an
answer, a retry or a failure is recorded by the same code, guarded by the claim), and its
WorkerPool extends the claims in flight.

Pause and stop: a claim refuses once the run's control is not `running` (pause: the requests in
flight finish); the pool reads the control every 0.1 s and a stop abandons the requests in flight
and gives their claims back. The worker's own stop (Ctrl-C, SIGTERM) gives its claims back the
same way, without touching the run. A worker killed outright leaves claims that expire after the
provider's timeout plus CLAIM_MARGIN_SECONDS; the next claimer counts a new attempt, so a late
write of the dead claim can never be recorded (the claimed attempts guard every write).

Judge jobs (JudgeCall rows) stay with the orchestrator.
"""

import logging
import time

from ..clock import utcnow
from ..db.models import CONTROL_RUNNING
from ..db.models import JUDGING
from ..db.models import NEW
from ..db.models import PENDING
from ..db.models import WAITING_FOR_JUDGE
from ..db.models import Provider
from ..db.models import Run
from . import claims
from . import lease
from . import load_steps
from .context import RunContext
from .items import ItemWorker
from .memory import memory_for
from .workers import ClaimFeed
from .workers import WorkerPool

log = logging.getLogger(__name__)

IDLE_SECONDS = 0.5  # how long a worker with nothing to claim waits before it looks again
ROUND_SECONDS = 30.0  # a round on one target ends then (budget, provider edits read again)
DEFAULT_CONCURRENCY = 4


class UnknownProviders(ValueError):
    """--providers named providers the database does not have."""


def provider_ids(names):
    """The ids of the providers named (None: every provider); UnknownProviders for a typo."""
    if not names:
        return None
    rows = Provider.select(Provider.name, Provider.id).where(Provider.name.in_(names))
    found = dict(rows.tuples())
    missing = [n for n in names if n not in found]
    if missing:
        known = ", ".join(sorted(p.name for p in Provider.select(Provider.name))) or "none"
        raise UnknownProviders(f"no provider named {', '.join(missing)} (there are: {known})")
    return set(found.values())


def running_run():
    """The run the orchestrator works on: the oldest running one, or None."""
    return (
        Run.select()
        .where((Run.status == PENDING) & (Run.control == CONTROL_RUNNING))
        .order_by(Run.created_at, Run.id)
        .first()
    )


class RemoteWorker:
    """One `llmbench worker` process: rounds of claims on the running run until `stop` is set.

    `concurrency` is this process's requests in flight at most; `providers` a set of provider
    ids it may call (None: all); `on_event` gets the run-log events of its work.
    """

    def __init__(
        self, config, stop, concurrency=DEFAULT_CONCURRENCY, providers=None, on_event=None
    ):
        self.config = config
        self.stop = stop
        self.concurrency = max(1, int(concurrency))
        self.providers = providers
        self.on_event = on_event
        self.holder = lease.process_holder()
        self.rounds = 0

    def serve(self):
        """Work rounds until stopped; the caller holds a database connection."""
        try:
            while not self.stop.is_set():
                if not self.round():
                    self.stop.wait(IDLE_SECONDS)
        finally:
            memory_for(self.holder, None)  # closes the adapters' connections

    def round(self):
        """Claim and work one target's items (or the judgements) for a while; False when there
        was nothing this worker may take."""
        run = running_run()
        if run is None:
            return False
        ctx = RunContext(
            run,
            self.config,
            clock=utcnow,
            memory=memory_for(self.holder, run),
            on_event=self.on_event,
        )
        if run.phase == JUDGING:
            worked = self._judge(ctx)
        else:
            worked = self._answer(ctx)
        if worked:
            self.rounds += 1
        return worked

    def _serves(self, provider_id):
        return self.providers is None or provider_id in self.providers

    def _answer(self, ctx):
        now = ctx.now()
        for target in sorted(ctx.targets.values(), key=lambda t: (t.position, t.id)):
            if target.provider_id is None or not self._serves(target.provider_id):
                continue
            if ctx.breaker.waiting(target.provider_id, now):
                continue
            load, step, limit, judged = load_steps.load_of(ctx.run), None, None, True
            if load:
                # Concurrency steps: the current step's items, at its concurrency (counted
                # across processes like a provider's). A rate step keeps one schedule: the
                # orchestrator's alone.
                if load["mode"] == "rate":
                    continue
                step = load_steps.current_step(ctx.run, target.id)
                if step is None:
                    continue
                limit = load_steps.limit_of(ctx.run, load, step)
                judged = load_steps.judged(load, step)
            if not claims.any_claimable(ctx.run, NEW, now, target.id, step):
                continue
            provider = target.provider
            adapter = self._adapter(ctx, provider)
            if adapter is None:
                continue
            worker = ItemWorker(ctx)
            label = ctx.target_label(target.id)
            self._work(
                ctx,
                provider,
                NEW,
                target.id,
                limit or ctx.concurrency(provider),
                1,
                lambda row, label=label: f"{row.task_key} on {label}",
                lambda row, w=worker, t=target, a=adapter, j=judged: w.answer(row, t, a, j),
                worker,
                step,
            )
            return True
        return False

    def _judge(self, ctx):
        provider = ctx.run.judge_provider
        now = ctx.now()
        if provider is None or not self._serves(provider.id):
            return False
        if ctx.breaker.waiting(provider.id, now):
            return False
        if not claims.any_claimable(ctx.run, WAITING_FOR_JUDGE, now):
            return False
        adapter = self._adapter(ctx, provider)
        if adapter is None:
            return False
        worker = ItemWorker(ctx)
        self._work(
            ctx,
            provider,
            WAITING_FOR_JUDGE,
            None,
            ctx.concurrency(provider, judge=True),
            2 * ctx.judge_repeats,  # a repair at most per judgement
            lambda row: f"judging {row.task_key} on {ctx.target_label(row.target_id)}",
            lambda row, w=worker, a=adapter: w.judge(row, a),
            worker,
        )
        return True

    def _adapter(self, ctx, provider):
        """The provider's adapter, or None (logged) when this machine cannot build it (a secret
        its master key cannot decrypt): the worker leaves that provider to the others."""
        try:
            return ctx.memory.adapter(provider, self.config.get("MAX_ANSWER_CHARS"))
        except Exception as exc:  # noqa: BLE001 - the run must not pause for one worker's key
            log.error("provider %s cannot be used on this worker: %r", provider.name, exc)
            return None

    def _work(
        self, ctx, provider, status, target_id, limit, calls, label_of, process, worker, step=None
    ):
        """One round: up to `concurrency` threads claim and work items of `status` (of one load
        `step`, when given) until none is left, the round's time is up, the run pauses or stops,
        or this worker stops."""
        run_id = ctx.run.id
        pool = WorkerPool(
            ctx,
            lambda: self._still_running(run_id),
            time.monotonic() + float(self.config.get("WORKER_ROUND_SECONDS", ROUND_SECONDS)),
            interrupt=self.stop,
            stops_run=False,
        )
        seconds = pool.claim_seconds(provider, calls=calls)
        count = min(self.concurrency, max(1, int(limit)))
        feed = ClaimFeed(
            pool,
            lambda now, until, k: claims.claim_batch(
                run_id, status, now, until, target_id, k, self.holder, provider.id, limit, step
            ),
            k=count,
        )
        try:
            pool.supervise(
                count,
                lambda: pool.claim_loop(
                    status,
                    seconds,
                    lambda now, until: (
                        None if ctx.breaker.waiting(provider.id, now) else feed(now, until)
                    ),
                    label_of,
                    process,
                    worker.internal_failure,
                ),
            )
        finally:
            feed.leftover()

    def _still_running(self, run_id):
        """The run is still running and this worker was not told to stop."""
        if self.stop.is_set():
            return False
        row = Run.select(Run.status, Run.control).where(Run.id == run_id).tuples().first()
        return row is not None and row[0] == PENDING and row[1] == CONTROL_RUNNING
