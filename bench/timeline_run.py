"""Where one `llmbench run -c config.yml --quiet` spends its wall time, start to exit.

A run of N tasks x 2 targets, judged (4 N calls), against the fake server in this process; the
command runs in a child process (from this tree, or --tree DIR) whose marks are printed as
seconds since the child was spawned: imports done, database open (migrations), config loaded,
run created, run_in_foreground entered, first item claimed and the run finished (the run's own
columns and log), conclude's steps, and process exit. Medians of --runs. Prints numbers; not
a test.

    .venv/bin/python bench/timeline_run.py [--tasks 300] [--runs 3] [--tree DIR]
        [--baseline DIR] [--psycopg]
"""

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_overhead import KEY  # noqa: E402
from bench.bench_overhead import start_fake  # noqa: E402
from bench.bench_overhead import write_config  # noqa: E402

# The child: wall-clock marks (time.time) at each step, written as JSON at exit. Wrapping the
# steps' functions where the command looks them up is the bench's business, not the app's.
CHILD = r"""
import time
MARKS = [("python up", time.time())]
import atexit, json, os, sys
if os.environ.get("BENCH_NO_PSYCOPG"):
    sys.modules["psycopg"] = None
def mark(name):
    MARKS.append((name, time.time()))
def save():
    mark("atexit")
    open(os.environ["BENCH_MARKS"], "w").write(json.dumps(MARKS))
atexit.register(save)
import app.cli
mark("app.cli imported")
import app.cli.runs as runs
mark("app.cli.runs imported")
def wrap(module, name, label=None):
    fn = getattr(module, name, None)
    if fn is None:  # not in this tree
        return
    def wrapped(*args, **kwargs):
        mark((label or name) + " start")
        try:
            return fn(*args, **kwargs)
        finally:
            mark((label or name) + " end")
    setattr(module, name, wrapped)
import app.cli.watched_run as fg
wrap(runs, "open_db")
wrap(runs.reader, "load", "config load")
wrap(runs.run_plan, "apply", "run_plan.apply")
wrap(runs, "run_in_foreground")
wrap(runs, "conclude")
wrap(fg, "after_run")
wrap(fg, "write_outputs")
wrap(fg, "load", "lazy load")
wrap(fg, "averages")
wrap(fg, "run_summary")
app.cli.main()
"""


def _epoch(text):
    if text is None:
        return None
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


def db_marks(db):
    con = sqlite3.connect(db)
    try:
        created, started, finished = con.execute(
            "SELECT created_at, started_at, finished_at FROM run"
        ).fetchone()
        first_log = con.execute("SELECT MIN(created_at) FROM runlog").fetchone()[0]
        first_done = con.execute(
            "SELECT MIN(created_at) FROM runlog WHERE event = 'item_done'"
        ).fetchone()[0]
    finally:
        con.close()
    return [
        ("run.created_at", _epoch(created)),
        ("run.started_at", _epoch(started)),
        ("first runlog", _epoch(first_log)),
        ("first item_done", _epoch(first_done)),
        ("run.finished_at", _epoch(finished)),
    ]


def one(fake, tasks, tree, psycopg):
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        path = write_config(folder, fake, tasks, 4)
        db = folder / "llmbench.db"
        env = {
            **os.environ,
            "LLMBENCH_DB": str(db),
            "LLMBENCH_MASTER_KEY_BASE64": KEY,
            "PYTHONPATH": str(tree),
            "BENCH_MARKS": str(folder / "marks.json"),
        }
        if not psycopg:
            env["BENCH_NO_PSYCOPG"] = "1"
        spawned = time.time()
        proc = subprocess.run(
            [sys.executable, "-c", CHILD, "run", "-c", str(path), "-q"],
            env=env,
            cwd=tree,
            capture_output=True,
        )
        ended = time.time()
        if proc.returncode not in (0, 4):
            raise SystemExit(proc.stderr.decode()[-3000:])
        marks = [("spawned", spawned)] + json.loads((folder / "marks.json").read_text())
        marks += db_marks(db) + [("process exited", ended)]
    return {name: t - spawned for name, t in marks if t is not None}


def table(results, label):
    """One column of medians per mark, in the order they happen."""
    return {
        name: statistics.median(r[name] for r in results if name in r)
        for name in sorted(
            results[0], key=lambda k: statistics.median(r.get(k, 0) for r in results)
        )
    }


def fixed(results):
    return statistics.median(
        r["process exited"] - (r["run.finished_at"] - r["run.created_at"]) for r in results
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=300)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--tree", default=str(ROOT))
    parser.add_argument("--baseline", help="another source tree, run alternately with --tree")
    parser.add_argument("--psycopg", action="store_true", help="let psycopg be imported")
    args = parser.parse_args()
    trees = [Path(args.tree)] + ([Path(args.baseline)] if args.baseline else [])
    fake = start_fake()
    try:
        results = {tree: [] for tree in trees}
        for n in range(args.runs):
            for tree in trees if n % 2 == 0 else trees[::-1]:
                fake.calls.clear()
                results[tree].append(one(fake, args.tasks, tree, args.psycopg))
    finally:
        fake.stop()
    print(
        f"{args.tasks} tasks ({4 * args.tasks} calls), medians of {args.runs}, "
        f"load average {os.getloadavg()[0]:.1f}; seconds since spawn (+ since the mark before)"
    )
    columns = {tree: table(got, tree) for tree, got in results.items()}
    names = list(columns[trees[0]])
    names += [n for t in trees[1:] for n in columns[t] if n not in names]
    print("  " + " | ".join(f"{str(t)[-24:]:>24}" for t in trees) + " | mark")
    previous = {t: 0.0 for t in trees}
    for name in names:
        cells = []
        for t in trees:
            at = columns[t].get(name)
            if at is None:
                cells.append(f"{'':>24}")
                continue
            cells.append(f"{at:9.3f} (+{at - previous[t]:6.3f})      ")
            previous[t] = at
        print("  " + " | ".join(cells) + " | " + name)
    print(
        "  fixed (wall - created_at->finished_at): "
        + ", ".join(f"{str(t)[-24:]} {fixed(results[t]):.3f} s" for t in trees)
    )


if __name__ == "__main__":
    main()
