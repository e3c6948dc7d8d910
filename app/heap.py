"""Memory a finished piece of work freed, handed back to the system between pieces.

glibc keeps what a process frees for its own next allocations, above all what a big piece of
work (a run's digest, reading every item) freed in small blocks: the next piece then grew from
the last one's peak, not from what was still held. At the end of a 60k-call `llmbench run` the
digest's aggregates, its speed figures and the warm of the run's pages each added their own
peak on top of the one before (issue 33: 114 MiB, goal 100). give_back() between them makes a
run's peak the largest of them instead. Elsewhere than glibc on Linux it does nothing.
"""

import ctypes
import sys

_trim = []  # [glibc's malloc_trim or None], looked up on the first call


def _malloc_trim():
    if not _trim:
        _trim.append(_find_trim())
    return _trim[0]


def _find_trim():
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None)  # the process's own symbols: the C library it runs on
        libc.gnu_get_libc_version  # noqa: B018 - glibc's only: musl has no malloc_trim
        return libc.malloc_trim
    except (OSError, AttributeError):
        return None


def give_back():
    """Return the heap's free pages to the system (glibc's malloc_trim; a fraction of a
    millisecond for a CLI run's heap); True when done. No gc.collect(): what a digest or a
    warm frees has no cycles to find, and a full collection of the CLI's objects cost
    ~0.15 s."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True
