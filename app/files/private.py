"""Files we write hold run data (answers, prompts) or secrets: owner-only, like the master key.

`open_private` opens a file for writing with mode 0600 (a file that already exists is narrowed
to 0600 first), whatever the umask; the SQLite database is made the same way before SQLite opens
it, and SQLite gives its -wal and -shm files the database's mode.
"""

import os
from pathlib import Path

MODE = 0o600


def make_private(path):
    """Create `path` empty with mode 0600 if it does not exist, else narrow it to 0600."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, MODE)
    try:
        os.fchmod(fd, MODE)
    finally:
        os.close(fd)


def narrow(path):
    """Mode 0600 for `path` if it exists (a -wal or -shm file left by an older version)."""
    if Path(path).exists():
        os.chmod(path, MODE)


def open_private(path, mode="w", **kwargs):
    """`open(path, mode)` for writing a file only its owner may read (0600)."""
    flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if "a" in mode else os.O_TRUNC)
    fd = os.open(path, flags, MODE)
    os.fchmod(fd, MODE)  # an existing file keeps its old mode through os.open
    return os.fdopen(fd, mode, **kwargs)
