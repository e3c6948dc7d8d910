"""What an orchestrator holder remembers about its run between ticks: the warm model group, the
adapters (with their kept-alive connections) and the warm-ups' backoff.

Only a cache of this process: everything that must survive a restart is in the database.
"""

import datetime as dt
import threading

from ..catalog.providers import provider_config
from ..providers.registry import get_adapter
from .rules import RunTasks

_lock = threading.Lock()
_memories = {}  # holder -> HolderMemory
ROOM_WAIT_SECONDS = 5.0  # how long a run waits after the database had no room to write


class Warmups:
    """The warm-ups' backoff: when each (target id, or JUDGE) may be tried again."""

    def __init__(self):
        self.backoff = {}  # key -> {"attempts", "first", "next"}
        self.judge_ready = False

    def waiting(self, key, now):
        """True while the key's warm-up waits for its retry time."""
        entry = self.backoff.get(key)
        return entry is not None and entry["next"] > now

    def wake_at(self, now):
        """The earliest time a waiting warm-up is due, or None. One already due is left out:
        its target is held by something else (its server's breaker), which says when."""
        times = [e["next"] for e in self.backoff.values() if e["next"] > now]
        return min(times) if times else None

    def forget(self, key):
        """Drop the key's backoff (it succeeded, failed for good, or is queued anew)."""
        self.backoff.pop(key, None)


class HolderMemory:
    """What one holder remembers about the run it works on, between ticks."""

    def __init__(self, key):
        self.key = key
        self.group = None  # RunTarget id whose model is warm (loaded)
        self.adapters = {}  # provider id -> (updated_at, adapter)
        self.warmups = Warmups()
        self.worker_failures = 0  # slices in a row whose worker crashed
        self.unusable_judgements = 0  # judgements in a row whose output fit no schema
        self.sampler = None  # the run's system-metrics sampler (engine/sampling.py)
        self.room_at = None  # when to try writing again after the database was full
        self.tasks = RunTasks()  # the run's task snapshots, read once per task (rules.py)

    def no_room(self, now):
        """The database was full: no claims before ROOM_WAIT_SECONDS from `now`."""
        self.room_at = now + dt.timedelta(seconds=ROOM_WAIT_SECONDS)

    def waiting_for_room(self, now):
        """True while a full database's wait is on."""
        return self.room_at is not None and now < self.room_at

    def adapter(self, provider, max_answer_chars=None):
        """The provider's adapter, built again when the provider was edited."""
        cached = self.adapters.get(provider.id)
        if cached and cached[0] == provider.updated_at:
            return cached[1]
        config = provider_config(provider)
        if max_answer_chars:
            config.max_answer_chars = int(max_answer_chars)
        adapter = get_adapter(config)
        self.adapters[provider.id] = (provider.updated_at, adapter)
        return adapter

    def close(self):
        """Stop the run's sampler and close the adapters' connections."""
        if self.sampler is not None:
            self.sampler.stop()
            self.sampler = None
        for _stamp, adapter in self.adapters.values():
            close = getattr(adapter, "close", None)
            if close:
                close()
        self.adapters.clear()


def memory_for(holder, run):
    """The holder's memory of this run (a fresh one when the run changed; None without a run)."""
    # The pk alone is not enough: a run deleted and another created may reuse it.
    key = None if run is None else (run.id, run.run_id, run.created_at)
    with _lock:
        memory = _memories.get(holder)
        if memory is None or memory.key != key:
            if memory is not None:
                memory.close()
            memory = _memories[holder] = HolderMemory(key) if key is not None else None
        return memory
