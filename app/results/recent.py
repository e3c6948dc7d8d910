"""A small, thread-safe cache of the figures last worked out (speed, goodput, speed charts),
each kept under a key that holds the run's stamp (results/speed.py stamp), so a changed run is
simply a key not found; the oldest entries go first."""

import threading


class Recent:
    """At most `size` values by key; the one put longest ago is dropped first."""

    def __init__(self, size):
        self.size = size
        self._values = {}
        self._lock = threading.Lock()

    def get(self, key):
        with self._lock:
            return self._values.get(key)

    def put(self, key, value):
        with self._lock:
            self._values.pop(key, None)
            self._values[key] = value
            while len(self._values) > self.size:
                self._values.pop(next(iter(self._values)))

    def clear(self):
        with self._lock:
            self._values.clear()
