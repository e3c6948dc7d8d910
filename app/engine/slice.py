"""One tick's work on one run: the judge's warm-up, groups with their warm-ups, then judging.

The worker threads and their supervisor live in run_workers.py, the model groups in
run_groups.py, the warm-ups in warmup.py, what a holder keeps between ticks in slice_state.py.
Anything unexpected ends as a recorded failure (an item FAILED, a group failed, or the run
paused with the reason and an ERROR line in the run log), never as a silent retry loop.
"""

import logging
import threading
import time

from peewee import fn

from ..models import BENCHMARKING
from ..models import CANT_BE_FINISHED
from ..models import COMPLETED
from ..models import CONTROL_PAUSED
from ..models import CONTROL_RUNNING
from ..models import FAILED
from ..models import FINISHED
from ..models import JUDGING
from ..models import NEW
from ..models import PENDING
from ..models import WAITING_FOR_JUDGE
from ..models import Item
from ..models import Run
from ..models import RunTarget
from ..runlog import log_event
from ..runs.queries import spent_usd
from ..runs.state import run_state
from . import lease
from . import retry
from . import warmup
from .groups import Groups
from .items import ItemWork
from .memory import listen_for_stop
from .memory import state_for
from .memory import stop_listening
from .metrics import price_for
from .workers import Workers

log = logging.getLogger(__name__)

SLICE_SECONDS = 5.0  # a tick works at most this long before returning (pause/stop stay prompt)
KEEP_ALIVE = "10m"  # Ollama keeps the group's model loaded while the group runs


class Slice(Groups, Workers):
    """One tick's work on one run."""

    def __init__(self, run, config, holder, clock, on_event, interrupt, seconds):
        self.run, self.config, self.holder = run, config, holder
        self.now, self.on_event, self.interrupt = clock, on_event, interrupt
        self.deadline = time.monotonic() + seconds
        self.state = state_for(holder, run)
        self.max_attempts = retry.max_attempts(run, config)
        self.budget = (run.settings or {}).get("maxBudgetUsd")
        self.spent = None
        self.cancel = threading.Event()  # set on stop: adapters abandon their requests
        self.halt = threading.Event()  # set on pause/deadline/budget: no new claims
        self.inflight = {}  # item id -> run_workers.InFlight
        self.targets = {t.id: t for t in RunTarget.select().where(RunTarget.run == run)}
        self.prices = {}
        self.done = 0
        self.lock = threading.Lock()
        self.work_ = ItemWork(self)
        self.lease_renewed = time.monotonic()
        listen_for_stop(run.id, self.cancel)

    # ---- helpers used by item_work, run_groups, run_workers and warmup ---------------------
    def emit(self, event, message, level="INFO", data=None, now=None):
        log_event(self.run, event, message, level=level, data=data, now=now or self.now())
        if event in ("item_done", "item_judged", "item_failed"):
            with self.lock:
                self.done += 1
        if self.on_event is not None:
            with self.lock:
                self.on_event(
                    {
                        "event": event,
                        "runId": self.run.run_id,
                        "message": message,
                        "level": level,
                        **(data or {}),
                    }
                )

    def keep_alive(self, provider):
        return KEEP_ALIVE if provider is not None and provider.type == "OLLAMA" else None

    def price(self, target):
        if target.id not in self.prices:
            self.prices[target.id] = price_for(target.provider_name, target.model)
        return self.prices[target.id]

    def judge_price(self):
        """The price-table row for the run's judge (provider name + model), or None."""
        if "judge" not in self.prices:
            self.prices["judge"] = price_for(self.run.judge_provider_name, self.run.judge_model)
        return self.prices["judge"]

    def target_label(self, target_id):
        t = self.targets.get(target_id)
        return f"{t.provider_name}/{t.model}" if t else f"target {target_id}"

    def add_cost(self, usd):
        if usd and self.spent is not None:
            with self.lock:
                self.spent += usd

    def adapter_for(self, provider):
        """The provider's adapter, or None after pausing the run with why it cannot be built
        (a secret the master key cannot decrypt, an unknown type): the person fixes it."""
        try:
            return self.state.adapter(provider)
        except Exception as exc:
            message = getattr(exc, "message", None) or repr(exc)
            self.pause(
                f"provider {provider.name} cannot be used: {message}; fix it in "
                "Settings, then continue",
                event="provider_error",
            )
            return None

    # ---- the slice -------------------------------------------------------------------------
    def work(self):
        try:
            while True:
                outcome = self._step()
                if outcome is not None:
                    break
        except Exception as exc:  # never a silent loop: the run pauses with the reason
            log.exception("orchestrator slice failed")
            self.pause(
                f"internal error in the orchestrator ({repr(exc)[:300]}); see the "
                "server log, then continue",
                event="internal_error",
            )
            outcome = "halted"
        finally:
            stop_listening(self.run.id, self.cancel)
        run = Run.get_by_id(self.run.id)
        return {
            "held": True,
            "runId": run.run_id,
            "state": run_state(run),
            "phase": run.phase,
            "idle": outcome == "idle",
            "outcome": outcome,
            "done": self.done,
            "wakeAt": self._next_retry() if outcome == "idle" else None,
        }

    def _step(self):
        """Do one unit of work; return None to go on, or why the slice ends."""
        if time.monotonic() >= self.deadline:
            return "slice"
        if not self._still_running():
            return "halted"
        run = self.run
        has_new = Item.select().where((Item.run == run) & (Item.status == NEW)).exists()
        waiting = (
            has_new
            or Item.select().where((Item.run == run) & (Item.status == WAITING_FOR_JUDGE)).exists()
        )
        if waiting and not self.state.warmups.judge_ready:
            if self.state.warmups.waiting(warmup.JUDGE, self.now()):
                return "idle"
            warmup.warm_up_judge(self)
            return None  # look at control again before anything else
        if has_new:
            return self._benchmark()
        self._leave_group()
        if run.phase != JUDGING:
            waiting = (
                Item.select().where((Item.run == run) & (Item.status == WAITING_FOR_JUDGE)).count()
            )
            self._set_phase(
                JUDGING,
                f"Phase JUDGING: {waiting} answers to judge with "
                f"{run.judge_provider_name}/{run.judge_model}",
            )
        if self._claimable(WAITING_FOR_JUDGE):
            provider = run.judge_provider
            if provider is None:
                return self._judge_provider_gone()
            if self.budget is not None and self._over_budget():
                return "budget"  # judge calls cost money too: items stay WAITING_FOR_JUDGE
            adapter = self.adapter_for(provider)
            if adapter is None:
                return None
            return self.supervise(
                provider.max_concurrency, lambda: self.judge_loop(provider, adapter)
            )
        if waiting:
            return "idle"
        self._finish()
        return "finished"

    def _benchmark(self):
        if self.run.phase != BENCHMARKING:
            self._set_phase(BENCHMARKING, "Phase BENCHMARKING: answers still missing")
        target = self._pick_group()
        if target is None:
            return "idle"  # only backoff waits left: come back later
        if target.provider is None:  # deleted (before or while its group ran)
            self._cant_finish_group(target, "the target's provider was deleted")
            self.state.group = None
            return None
        if self.state.group != target.id:
            self._leave_group()
            warmup.warm_up_target(self, target)
            return None  # look at control again before claiming anything
        if self.budget is not None and self._over_budget():
            return "budget"
        adapter = self.adapter_for(target.provider)
        if adapter is None:
            return None
        return self.supervise(
            target.provider.max_concurrency, lambda: self.answer_loop(target, adapter)
        )

    def _still_running(self):
        row = Run.select(Run.status, Run.control).where(Run.id == self.run.id).tuples().first()
        if row is None or row[0] != PENDING or row[1] != CONTROL_RUNNING:
            return False
        if self.interrupt is not None and self.interrupt.is_set():
            return False
        if time.monotonic() - self.lease_renewed > float(self.config.get("LEASE_SECONDS", 15)) / 3:
            self.lease_renewed = time.monotonic()
            if not lease.acquire(
                self.holder, float(self.config.get("LEASE_SECONDS", 15.0)), self.now()
            ):
                return False
        return True

    def _set_phase(self, phase, message):
        Run.update(phase=phase, updated_at=self.now()).where(Run.id == self.run.id).execute()
        self.run.phase = phase
        self.emit("phase_changed", message, data={"phase": phase})

    def _claimable(self, status, target_id=None):
        now = self.now()
        query = Item.select().where(
            (Item.run == self.run)
            & (Item.status == status)
            & (Item.next_retry_at.is_null() | (Item.next_retry_at <= now))
        )
        if target_id is not None:
            query = query.where(Item.target == target_id)
        return query.exists()

    def _next_retry(self, target_id=None):
        query = Item.select(Item.next_retry_at).where(
            (Item.run == self.run)
            & Item.status.in_([NEW, WAITING_FOR_JUDGE])
            & Item.next_retry_at.is_null(False)
        )
        if target_id is not None:
            query = query.where(Item.target == target_id)
        row = query.order_by(Item.next_retry_at).tuples().first()
        times = [row[0]] if row else []
        if target_id is None and self.state.warmups.wake_at() is not None:
            times.append(self.state.warmups.wake_at())
        return min(times) if times else None

    def _over_budget(self):
        if self.spent is None:
            self.spent = float(spent_usd(self.run))
        if self.spent < float(self.budget):
            return False
        reason = (
            f"budget reached: spent ${self.spent:.4f} of the ${float(self.budget):.4f} "
            "limit (settings.maxBudgetUsd); continue with a higher budget to go on"
        )
        Run.update(control=CONTROL_PAUSED, control_reason=reason, updated_at=self.now()).where(
            Run.id == self.run.id
        ).execute()
        self.emit(
            "budget_reached",
            f"Paused: {reason}",
            level="WARNING",
            data={"spentUsd": self.spent, "budgetUsd": float(self.budget)},
        )
        return True

    def _judge_provider_gone(self):
        now = self.now()
        message = (
            "can't be finished: the judge's provider was deleted; start a new run with "
            "another judge"
        )
        count = self._settle(
            Item.status == WAITING_FOR_JUDGE, CANT_BE_FINISHED, "judge", message, now
        )
        self.emit(
            "cant_be_finished",
            f"{count} items {message}",
            level="ERROR",
            data={"stage": "judge", "count": count},
        )
        return None

    def _finish(self):
        now = self.now()
        counts = dict(
            Item.select(Item.status, fn.COUNT(Item.id))
            .where(Item.run == self.run)
            .group_by(Item.status)
            .tuples()
        )
        Run.update(status=FINISHED, finished_at=now, control_reason=None, updated_at=now).where(
            Run.id == self.run.id
        ).execute()
        judge = self.run.judge_provider
        if judge is not None and judge.type == "OLLAMA":
            try:
                self.state.adapter(judge).unload(self.run.judge_model)
            except Exception:  # noqa: BLE001 - done either way; it unloads after keep_alive
                pass
        cant = counts.get(CANT_BE_FINISHED, 0)
        self.emit(
            "run_finished",
            f"Run finished: {counts.get(COMPLETED, 0)} completed, "
            f"{counts.get(FAILED, 0)} failed" + (f", {cant} can't be finished" if cant else ""),
            data={"counts": counts},
            now=now,
        )
        state_for(self.holder, None)
