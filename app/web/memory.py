"""Memory a page freed goes back to the system, so the server's RSS follows what it holds.

The first view of a big run works its figures out from every item (a results page of a 1M-item
run reads hundreds of MiB of rows), then frees them. glibc keeps freed memory for reuse, in the
arena of the thread that freed it: the server stayed at the peak of its biggest page, once per
serving thread (gunicorn's 8), and grew with what it had shown (110 -> 568 MiB over a page
suite, issue 33). So: at most ARENAS arenas (set before the serving threads start; Python's
threads take turns on the GIL, so more arenas bought little), and after a response is sent,
malloc_trim when the RSS grew by TRIM_STEP_MIB since the last trim (a trim walks the heap: not
after every poll). Elsewhere than glibc on Linux it does nothing.
"""

import ctypes
import ctypes.util
import os
import threading

from flask import Flask

ARENAS = 2
M_ARENA_MAX = -8  # glibc's mallopt parameter number
TRIM_STEP_MIB = 16
_PAGE_MIB = os.sysconf("SC_PAGE_SIZE") / 2**20 if hasattr(os, "sysconf") else 0


def _libc():
    """glibc when this process runs on it (mallopt and malloc_trim), else None."""
    name = ctypes.util.find_library("c")
    if not name:
        return None
    try:
        libc = ctypes.CDLL(name)
        return libc if hasattr(libc, "malloc_trim") and hasattr(libc, "mallopt") else None
    except OSError:
        return None


def rss_mib():
    """This process's resident memory in MiB (Linux's /proc), or None where there is none."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * _PAGE_MIB
    except (OSError, ValueError, IndexError):
        return None


def should_trim(rss, trimmed_at, step=TRIM_STEP_MIB):
    """Whether RSS `rss` grew `step` MiB or more past `trimmed_at`, the RSS right after the last
    trim (None before the first)."""
    if rss is None:
        return False
    return trimmed_at is None or rss - trimmed_at >= step


class Trimmer:
    """Gives freed memory back (malloc_trim) once the RSS grew TRIM_STEP_MIB since last time."""

    def __init__(self, libc, step=TRIM_STEP_MIB, rss=rss_mib):
        self.libc = libc
        self.step = step
        self.rss = rss
        self.trimmed_at = None
        self._lock = threading.Lock()

    def after_response(self):
        if self.libc is None or not self._lock.acquire(blocking=False):
            return  # another thread is trimming: one at a time is enough
        try:
            if should_trim(self.rss(), self.trimmed_at, self.step):
                self.libc.malloc_trim(0)
                self.trimmed_at = self.rss()
        finally:
            self._lock.release()


def init_app(app: Flask):
    """Fewer arenas from now on, and a trim check after each response is sent."""
    libc = _libc()
    if libc is not None:
        libc.mallopt(M_ARENA_MAX, ARENAS)
    trimmer = Trimmer(libc)
    app.extensions["memory_trimmer"] = trimmer

    @app.after_request
    def _trim_when_sent(response):
        # On close: after the last byte of a streamed export, not before its first.
        response.call_on_close(trimmer.after_response)
        return response
