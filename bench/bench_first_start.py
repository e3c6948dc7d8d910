"""What a new database costs its first command now that every one gets the built-in tasks and
collections (catalog/startup.py): migrating an empty SQLite file, then the default providers
and the built-in bank, median over the runs; and `llmbench info` (reads the schema, migrates
nothing) as a fresh process.

    .venv/bin/python bench/bench_first_start.py [--runs 5]
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app import crypto
from app.catalog import defaults
from app.db import migrations
from app.db.connection import database


def first_start(folder):
    """(seconds to migrate a new database, seconds to add the built-ins)."""
    started = time.perf_counter()
    migrations.open_db(str(Path(folder) / "llmbench.db"))
    migrated = time.perf_counter()
    with database.connection_context():
        defaults.ensure_defaults()
    done = time.perf_counter()
    database.close()
    return migrated - started, done - migrated


def info_seconds(home):
    env = {k: v for k, v in os.environ.items() if not k.startswith("LLMBENCH_")}
    env.update({"LLMBENCH_HOME": str(home), "PYTHONPATH": str(ROOT)})
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "app.cli", "info"], env=env, check=True, stdout=-3)
    return time.perf_counter() - started


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    crypto.set_key(b"k" * 32)
    migrate, builtins, info = [], [], []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory() as folder:
            m, b = first_start(folder)
            migrate.append(m)
            builtins.append(b)
            info.append(info_seconds(folder))
    print(f"migrate a new database:   {statistics.median(migrate):.3f} s (median of {args.runs})")
    print(f"built-in tasks on it:     {statistics.median(builtins):.3f} s")
    print(f"llmbench info (process):  {statistics.median(info):.3f} s")


if __name__ == "__main__":
    main()
