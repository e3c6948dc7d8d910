"""A folder in RAM for the tests' files, when this machine has one with room.

Test databases live a test long: on a RAM disk their fsyncs (each WAL checkpoint, each last
connection's close) cost nothing, which on a disk was ~10 % of the fast loop."""

import os

SHM = "/dev/shm"
MIN_FREE = 1 << 30  # a Docker default /dev/shm (64 MB) is too small: use the temp dir there


def ram_folder():
    """/dev/shm when it is writable with at least MIN_FREE bytes free, else None."""
    try:
        shm = os.statvfs(SHM)
    except OSError:
        return None
    if os.access(SHM, os.W_OK) and shm.f_bavail * shm.f_frsize >= MIN_FREE:
        return SHM
    return None
