"""Login attempts, rate-limited per account name and per address: after LIMIT failures within
WINDOW seconds, more attempts are refused until the oldest of them is WINDOW old.

Kept in the serving process's memory (`llmbench serve` is one process): a restart forgets
them, which costs a guesser a restart of the server they cannot cause."""

import threading
import time
from collections import deque

LIMIT = 5
WINDOW = 300.0


class LoginThrottle:
    """Failures per key ("account:<name>", "address:<ip>"); `clock` is injectable for tests."""

    def __init__(self, limit=LIMIT, window=WINDOW, clock=time.monotonic):
        self.limit = limit
        self.window = window
        self.clock = clock
        self._failures = {}
        self._lock = threading.Lock()

    def _recent(self, key, now):
        times = self._failures.get(key)
        if times is None:
            return deque()
        while times and now - times[0] >= self.window:
            times.popleft()
        if not times:
            del self._failures[key]
        return times

    def retry_after(self, keys):
        """Seconds until the keys may try again (0: now)."""
        now = self.clock()
        wait = 0.0
        with self._lock:
            for key in keys:
                times = self._recent(key, now)
                if len(times) >= self.limit:
                    wait = max(wait, times[-self.limit] + self.window - now)
        return wait

    def failed(self, keys):
        now = self.clock()
        with self._lock:
            for key in keys:
                self._recent(key, now)
                self._failures.setdefault(key, deque()).append(now)

    def succeeded(self, account_key):
        """A right password clears the account's failures (not the address's: one good
        account must not reset a guesser's count on the others)."""
        with self._lock:
            self._failures.pop(account_key, None)


def keys(name, address):
    """The throttle's keys of one attempt."""
    return (f"account:{(name or '').strip().lower()}", f"address:{address or '?'}")
