"""What one tick's work on one run shares: the run, its clock, the run log, the stop and pause
signals, prices and the budget.

The slice builds one RunContext per tick and hands it to the worker pool, the item worker, the
model groups and the warm-ups; none of them reaches into another's attributes.
"""

import threading

from ..db.models import CONTROL_PAUSED
from ..db.models import CONTROL_RUNNING
from ..db.models import PENDING
from ..db.models import Run
from ..db.models import RunTarget
from ..db.target_name import target_name
from ..providers import formats
from ..runlog import log_event
from ..runs.queries import spent_usd
from . import retry
from .breaker import Breaker
from .metrics import price_for

KEEP_ALIVE = "10m"  # Ollama keeps the group's model loaded while the group runs
COUNTED_EVENTS = ("item_done", "item_judged", "item_failed")


class Budget:
    """The run's spending limit (settings.maxBudgetUsd) and what was spent, shared by workers."""

    def __init__(self, run):
        limit = (run.settings or {}).get("maxBudgetUsd")
        self.limit = float(limit) if limit is not None else None
        self._run = run
        self._spent = None  # read from the items on first use, then kept up to date
        self._lock = threading.Lock()

    @property
    def spent(self):
        """USD spent so far (answers and judgements)."""
        with self._lock:
            if self._spent is None:
                self._spent = float(spent_usd(self._run))
            return self._spent

    def add(self, usd):
        """Count a call's cost (once it is recorded)."""
        if usd:
            with self._lock:
                if self._spent is not None:
                    self._spent += usd

    def reached(self):
        """True when a limit is set and spending has reached it."""
        return self.limit is not None and self.spent >= self.limit


class RunContext:
    """The explicit context of one tick's work on one run."""

    def __init__(self, run, config, *, clock, memory, on_event=None):
        self.run = run
        self.config = config
        self.now = clock
        self.memory = memory  # what the holder keeps between ticks (engine/memory.py)
        self.on_event = on_event
        self.cancel = threading.Event()  # set on stop: adapters abandon their requests
        self.halt = threading.Event()  # set on pause, deadline or budget: no new claims
        self.max_attempts = retry.max_attempts(run, config)
        settings = run.settings or {}
        self.repeats = int(settings.get("repeats") or 1)  # answers per task and target
        self.judge_repeats = int(settings.get("judgeRepeats") or 1)  # judgements per answer
        self.budget = Budget(run)
        self.targets = {t.id: t for t in RunTarget.select().where(RunTarget.run == run)}
        self.breaker = Breaker(self)  # model servers that cannot be reached now (breaker.py)
        self.done = 0  # items settled in this tick (answered, judged or failed)
        self._prices = {}
        self._lock = threading.Lock()

    def emit(self, event, message, level="INFO", data=None, now=None):
        """One line in the run log, and the same event to the CLI's listener (if any)."""
        self.log_line(event, message, level, data, now)
        self.announce(event, message, level, data)

    def log_line(self, event, message, level="INFO", data=None, now=None):
        """emit's line in the run log alone (inside a record's transaction: claims.record)."""
        log_event(self.run, event, message, level=level, data=data, now=now or self.now())

    def announce(self, event, message, level="INFO", data=None):
        """emit's count and listener alone, once its line is committed (log_line)."""
        with self._lock:
            if event in COUNTED_EVENTS:
                self.done += 1
            if self.on_event is not None:
                self.on_event(
                    {
                        "event": event,
                        "runId": self.run.run_id,
                        "message": message,
                        "level": level,
                        **(data or {}),
                    }
                )

    def pause(self, reason, event="paused"):
        """Pause the run with a reason a person can act on, as an ERROR line in the run log."""
        Run.update(control=CONTROL_PAUSED, control_reason=reason, updated_at=self.now()).where(
            (Run.id == self.run.id) & (Run.status == PENDING) & (Run.control == CONTROL_RUNNING)
        ).execute()
        self.emit(event, f"Paused: {reason}", level="ERROR")

    def concurrency(self, provider, judge=False):
        """Requests in flight: the run's own setting (settings.concurrency for answers,
        judgeConcurrency for judgements), else the provider's max_concurrency."""
        own = (self.run.settings or {}).get("judgeConcurrency" if judge else "concurrency")
        return int(own) if own else provider.max_concurrency

    def keeps_loaded(self, provider):
        """True when the provider's server keeps a model loaded after a call (Ollama's), so
        calls say for how long and the model is unloaded when its turn is over."""
        return provider is not None and formats.wire_format(provider.type).keeps_models_loaded

    def keep_alive(self, provider):
        """How long Ollama keeps a model loaded after a call (None for servers that do not)."""
        return KEEP_ALIVE if self.keeps_loaded(provider) else None

    def price(self, target):
        """The price-table row for a target (provider name + model), or None."""
        return self._price_row(target.id, target.provider_name, target.model)

    def judge_price(self):
        """The price-table row for the run's judge (provider name + model), or None."""
        return self._price_row("judge", self.run.judge_provider_name, self.run.judge_model)

    def _price_row(self, key, provider_name, model):
        with self._lock:
            if key not in self._prices:
                self._prices[key] = price_for(provider_name, model)
            return self._prices[key]

    def target_label(self, target_id):
        """'provider/label' of one of the run's targets (the label names its params too)."""
        t = self.targets.get(target_id)
        return target_name(t.provider_name, t.label) if t else f"target {target_id}"

    def adapter_for(self, provider):
        """The provider's adapter, or None after pausing the run with why it cannot be built
        (a secret the master key cannot decrypt, an unknown type): the person fixes it."""
        try:
            return self.memory.adapter(provider, self.config.get("MAX_ANSWER_CHARS"))
        except Exception as exc:
            message = getattr(exc, "message", None) or repr(exc)
            self.pause(
                f"provider {provider.name} cannot be used: {message}; fix it in "
                "Settings, then continue",
                event="provider_error",
            )
            return None
