"""What a holder keeps between ticks (group, warm-ups, adapters); this process's stop signals."""

import threading

from ..catalog.providers import provider_config
from ..providers import get_adapter
from . import warmup

_lock = threading.Lock()
_states = {}  # holder -> RunState kept between ticks (current group, warm-ups, adapters)
_stop_signals = {}  # run pk -> Event set by a stop in this process (abandon requests at once)


def signal_stop(run_pk):
    """Called by stop_run: abandon this run's in-flight requests now (same process)."""
    with _lock:
        event = _stop_signals.get(run_pk)
    if event is not None:
        event.set()


def listen_for_stop(run_pk, event):
    """Have a stop of this run set `event` (the cancel of the slice working on it)."""
    with _lock:
        _stop_signals[run_pk] = event


def stop_listening(run_pk, event):
    """Forget `event` for this run, unless a newer slice has put its own in its place."""
    with _lock:
        if _stop_signals.get(run_pk) is event:
            del _stop_signals[run_pk]


class RunState:
    """What one holder remembers about the run it works on, between ticks."""

    def __init__(self, key):
        self.key = key
        self.group = None  # RunTarget id whose model is warm (loaded)
        self.adapters = {}  # provider id -> (updated_at, adapter)
        self.warmups = warmup.Warmups()
        self.worker_failures = 0  # slices in a row whose worker crashed

    def adapter(self, provider):
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


def state_for(holder, run):
    """The holder's remembered state for this run (a fresh one when the run changed)."""
    # The pk alone is not enough: a run deleted and another created may reuse it.
    key = None if run is None else (run.id, run.run_id, run.created_at)
    with _lock:
        state = _states.get(holder)
        if state is None or state.key != key:
            if state is not None:
                state.close()
            state = _states[holder] = RunState(key) if key is not None else None
        return state
