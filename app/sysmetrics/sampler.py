"""The sampler: one daemon thread taking a system-metrics sample every few seconds of a run."""

import logging
import threading
import time

from .sample import take_sample
from .series import peaks

log = logging.getLogger(__name__)

INTERVAL_SECONDS = 2.0
# A tick is bounded by nvidia-smi's 2 s timeout plus the model server's own deadline.
STOP_TIMEOUT_SECONDS = 5.0


class Sampler:
    """Calls take_sample every `interval` seconds in one daemon thread and hands each sample,
    stamped with "t" (epoch seconds from `clock`), to `store(sample)`.

    Tests drive it without sleeps: call sample_once() directly, or run() with an injected
    `wait(seconds) -> bool` that returns True to end the loop. An exception in a tick (from
    take, store or loaded_models) is logged and counted in `errors`; the thread goes on.
    """

    def __init__(
        self,
        store,
        *,
        loaded_models=None,
        interval=INTERVAL_SECONDS,
        take=take_sample,
        clock=time.time,
        wait=None,
        name="sysmetrics-sampler",
    ):
        self.store = store
        self.loaded_models = loaded_models
        self.interval = interval
        self.take = take
        self.clock = clock
        self.name = name
        self._stop = threading.Event()
        self._wait = wait or self._stop.wait
        self._thread = None
        self.samples = 0
        self.errors = 0
        self.latest = None
        self.peaks = peaks([])

    @property
    def running(self):
        """Whether the sampling thread is alive."""
        return self._thread is not None and self._thread.is_alive()

    def sample_once(self):
        """Take, stamp and store one sample; returns it, or None when the tick failed."""
        try:
            sample = {"t": self.clock(), **self.take(self.loaded_models)}
            self.store(sample)
        except Exception:
            self.errors += 1
            # 1st, 2nd, 4th, 8th ... failure: a fault that repeats every 2 s for hours
            # stays visible without flooding the log.
            if self.errors & (self.errors - 1) == 0:
                log.exception("system metrics sample failed (%d so far)", self.errors)
            return None
        self.samples += 1
        self.latest = sample
        self.peaks = peaks([self.peaks, sample])
        return sample

    def run(self):
        """The thread's loop: sample, then wait `interval` until stopped."""
        while not self._stop.is_set():
            self.sample_once()
            # Waiting after the tick lets the period drift by the tick's own length (a few
            # ms, up to nvidia-smi's timeout): harmless for a chart, and never a burst of
            # catch-up ticks after a slow one.
            if self._wait(self.interval):
                break

    def start(self):
        """Start the thread; False when it is already running."""
        if self.running:
            return False
        self._stop.clear()
        self._thread = threading.Thread(target=self.run, name=self.name, daemon=True)
        self._thread.start()
        return True

    def stop(self, timeout=STOP_TIMEOUT_SECONDS):
        """Ask the thread to end and join it for at most `timeout` s; True when it ended."""
        self._stop.set()
        if self._thread is None:
            return True
        self._thread.join(timeout)
        return not self._thread.is_alive()
