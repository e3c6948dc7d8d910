"""One tick's work on one run: groups, warm-ups, worker threads and their supervisor.

Worker threads (as many as the provider's max_concurrency) claim and process items; the tick's
own thread supervises them: it watches the run's control (pause, stop) in the database, the time
slice and the lease.
"""

import datetime as dt
import logging
import threading
import time

from peewee import fn

from . import item_work
from . import lease
from . import metrics
from . import retry
from .db import database
from .models import BENCHMARKING
from .models import COMPLETED
from .models import CONTROL_PAUSED
from .models import CONTROL_RUNNING
from .models import CONTROL_STOPPED
from .models import FAILED
from .models import FINISHED
from .models import JUDGING
from .models import NEW
from .models import PENDING
from .models import WAITING_FOR_JUDGE
from .models import Item
from .models import Run
from .models import RunTarget
from .providers import ProviderError
from .providers import get_adapter
from .runs import log_event
from .runs import run_state

log = logging.getLogger(__name__)

SLICE_SECONDS = 5.0  # a tick works at most this long before returning (pause/stop stay prompt)
POLL_SECONDS = 0.1  # how often the supervisor looks at the run's control while work is in flight
CLAIM_MARGIN_SECONDS = 30.0  # claim deadline = provider timeout + this (then claimable again)
STICKY_SECONDS = 30.0  # wait this long for a group's backoffs before switching model groups
KEEP_ALIVE = "10m"  # Ollama keeps the group's model loaded while the group runs
STOP_GRACE_SECONDS = 0.5  # how long a stop waits for abandoned requests to notice the cancel
WARMUP_MESSAGES = [{"role": "user", "content": "Reply with the single word OK."}]
WARMUP_PARAMS = {"max_tokens": 4}

_lock = threading.Lock()
_states = {}  # holder -> RunState kept between ticks (current group, warmed targets, adapters)
_stop_signals = {}  # run pk -> Event set by a stop in this process (abandon requests at once)


def signal_stop(run_pk):
    """Called by stop_run: abandon this run's in-flight requests now (same process)."""
    with _lock:
        event = _stop_signals.get(run_pk)
    if event is not None:
        event.set()


class RunState:
    """What one holder remembers about the run it works on, between ticks."""

    def __init__(self, run_pk):
        self.run_pk = run_pk
        self.group = None  # RunTarget id whose model is warm (loaded)
        self.adapters = {}  # provider id -> (updated_at, adapter)

    def adapter(self, provider):
        from .provider_store import provider_config

        cached = self.adapters.get(provider.id)
        if cached and cached[0] == provider.updated_at:
            return cached[1]
        adapter = get_adapter(provider_config(provider))
        self.adapters[provider.id] = (provider.updated_at, adapter)
        return adapter

    def close(self):
        for _stamp, adapter in self.adapters.values():
            close = getattr(adapter, "close", None)
            if close:
                close()
        self.adapters.clear()


def state_for(holder, run_pk):
    """The holder's remembered state for this run (a fresh one when the run changed)."""
    with _lock:
        state = _states.get(holder)
        if state is None or state.run_pk != run_pk:
            if state is not None:
                state.close()
            state = _states[holder] = RunState(run_pk) if run_pk is not None else None
        return state


class Slice:
    """One tick's work on one run."""

    def __init__(self, run, config, holder, clock, on_event, interrupt, seconds):
        self.run, self.config, self.holder = run, config, holder
        self.now, self.on_event, self.interrupt = clock, on_event, interrupt
        self.deadline = time.monotonic() + seconds
        self.state = state_for(holder, run.id)
        self.max_attempts = retry.max_attempts(run, config)
        self.budget = (run.settings or {}).get("maxBudgetUsd")
        self.spent = None
        self.cancel = threading.Event()  # set on stop: adapters abandon their requests
        self.halt = threading.Event()  # set on pause/deadline/budget: no new claims
        self.inflight = {}  # item id -> claimed attempts
        self.targets = {t.id: t for t in RunTarget.select().where(RunTarget.run == run)}
        self.prices = {}
        self.done = 0
        self.lock = threading.Lock()
        self.work_ = item_work.ItemWork(self)
        self.lease_renewed = time.monotonic()
        with _lock:
            _stop_signals[run.id] = self.cancel

    # ---- helpers used by item_work ---------------------------------------------------------
    def emit(self, event, message, level="INFO", data=None, now=None):
        log_event(self.run, event, message, level=level, data=data, now=now or self.now())
        if event in ("item_done", "item_judged", "item_failed"):
            with self.lock:
                self.done += 1
        if self.on_event is not None:
            with self.lock:
                self.on_event({"event": event, "runId": self.run.run_id, "message": message,
                               "level": level, **(data or {})})

    def keep_alive(self, provider):
        return KEEP_ALIVE if provider is not None and provider.type == "OLLAMA" else None

    def price(self, target):
        if target.id not in self.prices:
            self.prices[target.id] = metrics.price_for(target.provider_name, target.model)
        return self.prices[target.id]

    def target_label(self, target_id):
        t = self.targets.get(target_id)
        return f"{t.provider_name}/{t.model}" if t else f"target {target_id}"

    def add_cost(self, usd):
        if usd and self.spent is not None:
            with self.lock:
                self.spent += usd

    # ---- the slice -------------------------------------------------------------------------
    def work(self):
        try:
            while True:
                outcome = self._step()
                if outcome is not None:
                    break
        finally:
            with _lock:
                if _stop_signals.get(self.run.id) is self.cancel:
                    del _stop_signals[self.run.id]
        run = Run.get_by_id(self.run.id)
        return {"held": True, "runId": run.run_id, "state": run_state(run), "phase": run.phase,
                "idle": outcome == "idle", "outcome": outcome, "done": self.done,
                "wakeAt": self._next_retry() if outcome == "idle" else None}

    def _step(self):
        """Do one unit of work; return None to go on, or why the slice ends."""
        if time.monotonic() >= self.deadline:
            return "slice"
        if not self._still_running():
            return "halted"
        run = self.run
        has_new = Item.select().where((Item.run == run) & (Item.status == NEW)).exists()
        if has_new:
            if run.phase != BENCHMARKING:
                self._set_phase(BENCHMARKING, "Phase BENCHMARKING: answers still missing")
            target = self._pick_group()
            if target is None:
                return "idle"  # only backoff waits left: come back later
            if self.state.group != target.id:
                self._leave_group()
                self._warm_up(target)
                return None  # look at control again before claiming anything
            provider = target.provider
            if provider is None:  # deleted while its group ran
                self._fail_group(target, "the target's provider was deleted")
                self.state.group = None
                return None
            if self.budget is not None and self._over_budget():
                return "budget"
            return self._supervise(provider.max_concurrency,
                                   lambda: self._answer_loop(target, provider))
        self._leave_group()
        if run.phase != JUDGING:
            waiting = Item.select().where((Item.run == run)
                                          & (Item.status == WAITING_FOR_JUDGE)).count()
            self._set_phase(JUDGING, f"Phase JUDGING: {waiting} answers to judge with "
                            f"{run.judge_provider_name}/{run.judge_model}")
        if self._claimable(WAITING_FOR_JUDGE):
            if run.judge_provider is None:
                return self._judge_provider_gone()
            return self._supervise(run.judge_provider.max_concurrency,
                                   lambda: self._judge_loop(run.judge_provider))
        if Item.select().where((Item.run == run) & (Item.status == WAITING_FOR_JUDGE)).exists():
            return "idle"
        self._finish()
        return "finished"

    def _still_running(self):
        row = (Run.select(Run.status, Run.control).where(Run.id == self.run.id).tuples().first())
        if row is None or row[0] != PENDING or row[1] != CONTROL_RUNNING:
            return False
        if self.interrupt is not None and self.interrupt.is_set():
            return False
        if time.monotonic() - self.lease_renewed > float(self.config.get("LEASE_SECONDS", 15)) / 3:
            self.lease_renewed = time.monotonic()
            if not lease.acquire(self.holder, float(self.config.get("LEASE_SECONDS", 15.0)),
                                 self.now()):
                return False
        return True

    def _set_phase(self, phase, message):
        Run.update(phase=phase, updated_at=self.now()).where(Run.id == self.run.id).execute()
        self.run.phase = phase
        self.emit("phase_changed", message, data={"phase": phase})

    def _claimable(self, status, target_id=None):
        now = self.now()
        query = Item.select().where((Item.run == self.run) & (Item.status == status)
                                    & (Item.next_retry_at.is_null() | (Item.next_retry_at <= now)))
        if target_id is not None:
            query = query.where(Item.target == target_id)
        return query.exists()

    def _next_retry(self, target_id=None):
        query = Item.select(Item.next_retry_at).where(
            (Item.run == self.run) & Item.status.in_([NEW, WAITING_FOR_JUDGE])
            & Item.next_retry_at.is_null(False))
        if target_id is not None:
            query = query.where(Item.target == target_id)
        row = query.order_by(Item.next_retry_at).tuples().first()
        return row[0] if row else None

    def _pick_group(self):
        """The target to work on: the current group while it has work soon, else the first
        target (in run order) with a claimable item."""
        current = self.state.group
        if current is not None:
            if self._claimable(NEW, current):
                return self.targets[current]
            wake = self._next_retry(current)
            if wake is not None and (wake - self.now()).total_seconds() <= STICKY_SECONDS:
                return None  # a short backoff: keep the model loaded and wait for it
        for target in sorted(self.targets.values(), key=lambda t: (t.position, t.id)):
            if self._claimable(NEW, target.id):
                return target
        return None

    def _leave_group(self):
        """Unload the current group's Ollama model so the next model gets the memory."""
        current = self.targets.get(self.state.group) if self.state.group else None
        self.state.group = None
        if current is None or current.provider is None or current.provider.type != "OLLAMA":
            return
        try:
            error = self.state.adapter(current.provider).unload(current.model)
        except ProviderError as exc:
            error = exc.message
        if error:
            self.emit("unload_failed", f"Could not unload {current.provider_name}/"
                      f"{current.model}: {error}", level="WARNING")
        else:
            self.emit("unloaded", f"Unloaded {current.provider_name}/{current.model}")

    def _warm_up(self, target):
        """One tiny call loads the group's model; failure fails the group, the run goes on."""
        now = self.now()
        if target.provider is None:
            self._fail_group(target, "the target's provider was deleted")
            return False
        adapter = self.state.adapter(target.provider)
        outcome = {}

        def call():
            for attempt in (1, 2):
                try:
                    outcome["c"] = adapter.chat(target.model, WARMUP_MESSAGES, params=WARMUP_PARAMS,
                                                stream=False,
                                                keep_alive=self.keep_alive(target.provider),
                                                cancel=self.cancel)
                    return
                except ProviderError as exc:
                    outcome["e"] = exc
                    # One immediate second try for a blip; a timeout already waited long enough.
                    if attempt == 2 or not exc.transient or exc.kind == "timeout":
                        return

        self._supervise(1, call)
        if self.cancel.is_set() or ("c" not in outcome and "e" not in outcome):
            return False
        if "c" not in outcome:
            self._fail_group(target, outcome["e"].message)
            return False
        completion = outcome["c"]
        RunTarget.update(warmup_ms=completion.wall_ms, load_ms=completion.load_ms,
                         warmup_error=None).where(RunTarget.id == target.id).execute()
        load = f" (model load {completion.load_ms:.0f} ms)" if completion.load_ms else ""
        self.emit("warmup", f"Warm-up {target.provider_name}/{target.model}: "
                  f"{completion.wall_ms:.0f} ms{load}",
                  data={"targetId": target.id, "warmupMs": round(completion.wall_ms, 1),
                        "loadMs": completion.load_ms}, now=now)
        self.state.group = target.id
        return True

    def _fail_group(self, target, message):
        now = self.now()
        RunTarget.update(warmup_error=message).where(RunTarget.id == target.id).execute()
        count = (Item.update(status=FAILED, error_stage="warmup",
                             error_msg=f"warm-up failed: {message}", next_retry_at=None,
                             updated_at=now)
                 .where((Item.run == self.run) & (Item.target == target) & (Item.status == NEW))
                 .execute())
        self.emit("warmup_failed", f"Warm-up of {target.provider_name}/{target.model} failed: "
                  f"{message}; its {count} items failed, the run goes on", level="ERROR",
                  data={"targetId": target.id, "failed": count, "error": message}, now=now)

    def _over_budget(self):
        if self.spent is None:
            from .runs import spent_usd

            self.spent = float(spent_usd(self.run))
        if self.spent < float(self.budget):
            return False
        reason = (f"budget reached: spent ${self.spent:.4f} of the ${float(self.budget):.4f} "
                  "limit (settings.maxBudgetUsd); continue with a higher budget to go on")
        Run.update(control=CONTROL_PAUSED, control_reason=reason, updated_at=self.now()).where(
            Run.id == self.run.id).execute()
        self.emit("budget_reached", f"Paused: {reason}", level="WARNING",
                  data={"spentUsd": self.spent, "budgetUsd": float(self.budget)})
        return True

    def _judge_provider_gone(self):
        now = self.now()
        message = "the judge's provider was deleted; pick another judge in a new run"
        count = (Item.update(status=FAILED, error_stage="judge", error_msg=message,
                             next_retry_at=None, updated_at=now)
                 .where((Item.run == self.run) & (Item.status == WAITING_FOR_JUDGE)).execute())
        self.emit("item_failed", f"{count} items cannot be judged: {message}", level="ERROR",
                  data={"stage": "judge", "failed": count})
        return None

    def _finish(self):
        now = self.now()
        counts = dict(Item.select(Item.status, fn.COUNT(Item.id)).where(Item.run == self.run)
                      .group_by(Item.status).tuples())
        Run.update(status=FINISHED, finished_at=now, control_reason=None, updated_at=now).where(
            Run.id == self.run.id).execute()
        judge = self.run.judge_provider
        if judge is not None and judge.type == "OLLAMA":
            try:
                self.state.adapter(judge).unload(self.run.judge_model)
            except ProviderError:
                pass  # the run is done either way; the model unloads itself after keep_alive
        self.emit("run_finished", f"Run finished: {counts.get(COMPLETED, 0)} completed, "
                  f"{counts.get(FAILED, 0)} failed", data={"counts": counts}, now=now)
        state_for(self.holder, None)

    # ---- workers ---------------------------------------------------------------------------
    def _answer_loop(self, target, provider):
        adapter = self.state.adapter(provider)
        claim_seconds = float(provider.timeout_seconds) + CLAIM_MARGIN_SECONDS
        while not (self.halt.is_set() or self.cancel.is_set()):
            if self.budget is not None and self._over_budget_soft():
                return
            now = self.now()
            row = item_work.claim(self.run.id, NEW, now,
                                  now + dt.timedelta(seconds=claim_seconds), target.id)
            if row is None:
                return
            self._run_claimed(row, lambda r=row: self.work_.answer(r, target, adapter))

    def _judge_loop(self, provider):
        adapter = self.state.adapter(provider)
        # Two calls at most per judgement (the repair), so twice the timeout.
        claim_seconds = 2 * float(provider.timeout_seconds) + CLAIM_MARGIN_SECONDS
        while not (self.halt.is_set() or self.cancel.is_set()):
            now = self.now()
            row = item_work.claim(self.run.id, WAITING_FOR_JUDGE, now,
                                  now + dt.timedelta(seconds=claim_seconds))
            if row is None:
                return
            self._run_claimed(row, lambda r=row: self.work_.judge(r.id, r.attempts, adapter))

    def _run_claimed(self, claimed, process):
        with self.lock:
            self.inflight[claimed.id] = claimed.attempts
        try:
            process()
        finally:
            with self.lock:
                mine = self.inflight.pop(claimed.id, None) is not None
            if mine and self.cancel.is_set():
                # Stopped: the answer (if any) was discarded; the claim goes back uncounted.
                item_work.release(claimed.id, claimed.attempts)

    def _over_budget_soft(self):
        # Workers only stop claiming; the supervisor's next step pauses the run and logs why.
        with self.lock:
            over = self.spent is not None and self.spent >= float(self.budget)
        if over:
            self.halt.set()
        return over

    def _supervise(self, count, body):
        """Run `body` in `count` worker threads; watch control, deadline and lease meanwhile."""
        done = threading.Event()
        alive = [max(1, int(count or 1))]

        def worker():
            try:
                with database.connection_context():
                    body()
            except Exception:  # e.g. the database stayed locked: the claim expires, tried again
                log.exception("orchestrator worker failed")
            finally:
                with self.lock:
                    alive[0] -= 1
                    if alive[0] == 0:
                        done.set()

        self.halt.clear()
        threads = [threading.Thread(target=worker, daemon=True, name=f"llmbench-worker-{i}")
                   for i in range(alive[0])]
        for t in threads:
            t.start()
        while not done.wait(POLL_SECONDS):
            if not self._still_running():
                run = Run.get_by_id(self.run.id)
                if run.control == CONTROL_STOPPED or run.status != PENDING or (
                        self.interrupt is not None and self.interrupt.is_set()):
                    self._abandon(done)
                    return "halted"
                self.halt.set()  # paused (or lease lost): let the items in flight finish
            elif time.monotonic() >= self.deadline:
                self.halt.set()
        return None

    def _abandon(self, done):
        """Stop: cancel requests, give their claims back now, don't wait long for the threads."""
        self.cancel.set()
        self.halt.set()
        with self.lock:
            claims = list(self.inflight.items())
        done.wait(STOP_GRACE_SECONDS)
        # Requests still blocked (waiting for a first byte) are left behind: release their
        # claims now; the threads discard whatever arrives later.
        with self.lock:
            stuck = list(self.inflight.items())
            self.inflight.clear()
        for item_id, attempts in stuck:
            item_work.release(item_id, attempts)
        if self.interrupt is not None and self.interrupt.is_set():
            Run.update(control=CONTROL_STOPPED, updated_at=self.now(),
                       control_reason="interrupted (the command was stopped); continue it when "
                       "ready").where((Run.id == self.run.id) & (Run.status == PENDING)).execute()
        if claims:
            self.emit("abandoned", f"Stopped: {len(claims)} request(s) in flight abandoned; "
                      "their items stay claimable", data={"itemIds": [c[0] for c in claims]})
