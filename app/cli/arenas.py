"""The malloc arenas of a process that works a run: at most two, on glibc.

glibc gives threads that allocate at the same time arenas of their own (up to 8 per core) and
keeps what a thread frees in its arena for that arena's next use, unreturned to the system. A
run's worker threads each build and drop requests, replies and rows, so each arena kept its
own high-water mark: over a 60k-call run's calls RSS crept from 74 to 82 MiB, with two arenas
to 76.5 (bench/bench_first_call.py, sampled). Python's small objects come from pymalloc, not
malloc, and the GIL lets one thread run Python at a time: two arenas cost no measurable wait.
"""

import ctypes
import os
import sys

M_ARENA_MAX = -8  # glibc's malloc.h
ARENAS = 2


def cap_arenas(arenas=ARENAS):
    """Limit this process's malloc arenas (glibc's mallopt) before its worker threads start;
    True when set. Elsewhere (musl, macOS, Windows) nothing is done: the arena per thread is
    glibc's. A MALLOC_ARENA_MAX in the environment is left to rule."""
    if not sys.platform.startswith("linux") or os.environ.get("MALLOC_ARENA_MAX"):
        return False
    try:
        libc = ctypes.CDLL(None)  # the process's own symbols: the C library it runs on
        libc.gnu_get_libc_version  # noqa: B018 - glibc's only: musl has mallopt, no arenas
        return libc.mallopt(M_ARENA_MAX, int(arenas)) == 1
    except (OSError, AttributeError):
        return False
