"""A database file the CLI cannot use (damaged, another program's, locked by someone else):
`llmbench serve` and the other commands say which file, why and what to do in a few lines,
exit without a traceback (only with --debug) and leave the file as it was."""

import os
import sqlite3
import subprocess
import sys

import pytest

from app.config import REPO_ROOT
from app.db import migrations
from app.db.connection import database
from tests.cli_helpers import cli_env


def _corrupted(path):
    path.write_bytes(os.urandom(16384))


def _foreign(path):
    other = sqlite3.connect(path)
    other.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
    other.execute("INSERT INTO customers VALUES (1, 'Ada')")
    other.commit()
    other.close()


def _locked(path):
    """Our own database; another connection will hold an exclusive lock on it."""
    migrations.open_db(str(path))
    database.close()
    database.obj.close_all()
    return _hold


def _hold(path):
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    return holder


FILES = {
    "corrupted": (_corrupted, "it is not a SQLite database"),
    "foreign": (_foreign, "it is another program's SQLite database (tables customers"),
    "locked": (_locked, "another program holds a lock on it"),
}
# serve exits 3 as gunicorn did when its worker could not open the database; the other
# commands exit 1 ("anything else" in their documented exit codes: 3 there means resumable).
COMMANDS = [(("serve",), 3), (("runs",), 1), (("db", "check"), 1)]


def llmbench(tmp_path, *args):
    """`llmbench ARGS` in its own process on tmp_path/cli.db: a serve that did start (the bug)
    ends at the timeout instead of holding the test run."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LLMBENCH_")}
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args],
        cwd=REPO_ROOT,
        env={**env, **cli_env(tmp_path), "LLMBENCH_PORT": "0"},
        capture_output=True,
        text=True,
        timeout=60,
    )


def _name(value):
    return " ".join(value) if isinstance(value, tuple) else None


@pytest.mark.parametrize(("args", "code"), COMMANDS, ids=_name)
@pytest.mark.parametrize("kind", FILES)
def test_a_database_we_cannot_open_is_named_with_its_cause_and_fix_in_a_few_lines(
    tmp_path, kind, args, code
):
    path = tmp_path / "cli.db"
    make, cause = FILES[kind]
    lock = make(path)
    # Read before the lock is taken: closing any file of the database in this process would
    # drop this process's SQLite locks on it (POSIX locks belong to the process).
    before = path.read_bytes()
    holder = lock(path) if lock else None
    try:
        result = llmbench(tmp_path, *args)
    finally:
        if holder is not None:
            holder.close()
    lines = result.stderr.splitlines()
    assert result.returncode == code, result.stderr
    assert 1 <= len(lines) <= 6, result.stderr
    assert f"cannot open the database {path}: {cause}" in lines[0]
    assert any(line.startswith("Fix: ") for line in lines), result.stderr
    assert "Traceback" not in result.stderr
    assert path.read_bytes() == before


def test_debug_adds_the_traceback_behind_the_message(tmp_path):
    _corrupted(tmp_path / "cli.db")
    result = llmbench(tmp_path, "--debug", "runs")
    assert result.returncode == 1
    assert "Traceback (most recent call last)" in result.stderr
    assert "not a SQLite database" in result.stderr.splitlines()[-2]
