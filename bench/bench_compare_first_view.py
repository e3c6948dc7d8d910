"""The compare of two runs (results.compare.compare_runs) as the first view of a new pair works
it out, each repeat in a fresh process: its CPU and wall time and the process's peak RSS
(ru_maxrss) before and after the one call.

By default the two runs' own figures (per-target averages, composites, speed) are kept, as a
finished run's are (exports/warm.py works them out when it finishes): the pairing, the paired
statistics and the task changes are what is timed. --cold drops every kept figure before each
repeat, so the runs' own figures are worked out too.

Seeds runs full-a-N and full-b-N of --items items into --db as bench_full_pages does (only
once per file). --check writes compare_runs' JSON and that of the computation before numpy
(tests/compare_before.py) to files and compares their bytes. --profile prints a cProfile of one
more call.

    .venv/bin/python bench/bench_compare_first_view.py --db /tmp/cmp100k.db --items 100000
    BENCH_SRC=/work/main .venv/bin/python bench/bench_compare_first_view.py --db /tmp/cmp100k.db
    .venv/bin/python bench/bench_compare_first_view.py --db /tmp/cmp100k.db --check
"""

import argparse
import cProfile
import filecmp
import json
import os
import pstats
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = Path(os.environ.get("BENCH_SRC") or HERE.parent)
sys.path.insert(0, str(ROOT))
sys.path.insert(1, str(HERE))

from bench_full_pages import run_child  # noqa: E402

DERIVED = ("runfigures", "runspeed", "keptfigures")


def _peak_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _open(db, items):
    """The app on `db` and the two runs (in an app context the caller keeps open)."""
    from bench_full_pages import bench_app

    from app.db.connection import database
    from app.db.models import Run

    app = bench_app(db)
    context = app.app_context()
    context.push()
    database.connect(reuse_if_open=True)
    runs = [Run.get(Run.run_id == f"full-{side}-{items}") for side in ("a", "b")]
    return database, runs


def child(args):
    """One measurement in this (fresh) process; prints one JSON line."""
    database, (run_a, run_b) = _open(args.db, args.items)
    from app.results.compare import compare_runs

    if args.mode == "warm":  # the runs' own kept figures, as a finished run has them
        from app.results import compare
        from app.results.compare_speed import speed_by_target
        from app.results.composite import DEFAULT_SETTINGS

        for run in (run_a, run_b):  # each reads its kept rows, or works them out and keeps them
            compare._keyed(run, DEFAULT_SETTINGS)
            speed_by_target(run)
        print(json.dumps({"warmed": True}))
        return
    if args.mode == "cold":
        for table in DERIVED:
            if database.table_exists(table):
                database.execute_sql(f"DELETE FROM {table}")
    if args.mode == "check":
        sys.path.insert(0, str(HERE.parent))  # tests/compare_before.py of this tree
        from tests import compare_before

        out = Path(args.out)
        cpu = time.process_time()
        (out / "new.json").write_text(json.dumps(compare_runs(run_a, run_b), default=str))
        new_cpu = time.process_time() - cpu
        cpu = time.process_time()
        old = compare_before.compare_runs(run_a, run_b)
        (out / "before.json").write_text(json.dumps(old, default=str))
        print(json.dumps({"newCpu": new_cpu, "beforeCpu": time.process_time() - cpu}))
        return
    before = _peak_mib()
    profile = cProfile.Profile() if args.mode == "profile" else None
    cpu, wall = time.process_time(), time.perf_counter()
    if profile:
        profile.enable()
    compare_runs(run_a, run_b)
    if profile:
        profile.disable()
        pstats.Stats(profile, stream=sys.stderr).sort_stats("tottime").print_stats(30)
    result = {
        "cpu": time.process_time() - cpu,
        "wall": time.perf_counter() - wall,
        "rssBefore": before,
        "rssPeak": _peak_mib(),
    }
    print(json.dumps(result))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True)
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--cold", action="store_true", help="work out the runs' figures too")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--check", action="store_true", help="bytes equal to the old computation")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--out", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        args.mode = args.child
        child(args)
        return
    from bench_full_pages import seeded

    seeded(args.db, args.items, kept=True)
    print(f"source: {ROOT}\ndatabase: {args.db}\nload average at start: {os.getloadavg()}")
    if args.check:
        with tempfile.TemporaryDirectory() as out:
            took = run_child(__file__, args, "check", out)
            same = filecmp.cmp(f"{out}/new.json", f"{out}/before.json", shallow=False)
            size = os.path.getsize(f"{out}/new.json")
            print(
                f"compare_runs JSON ({size} bytes) {'identical to' if same else 'DIFFERS from'}"
                f" the computation before: cpu {took['newCpu']:.2f} s now,"
                f" {took['beforeCpu']:.2f} s before"
            )
        if not same:
            sys.exit(1)
        return
    mode = "cold" if args.cold else "pair"
    if not args.cold:
        run_child(__file__, args, "warm")
    results = []
    for n in range(args.repeat):
        result = run_child(__file__, args, mode)
        results.append(result)
        print(
            f"repeat {n + 1}: cpu {result['cpu']:.2f} s, wall {result['wall']:.2f} s, peak RSS"
            f" {result['rssBefore']:.0f} -> {result['rssPeak']:.0f} MiB",
            flush=True,
        )
    median = {k: statistics.median(r[k] for r in results) for k in results[0]}
    print(
        f"compare full-a-{args.items} vs full-b-{args.items}, first view ({mode}):"
        f" median cpu {median['cpu']:.2f} s, wall {median['wall']:.2f} s,"
        f" peak RSS {median['rssPeak']:.0f} MiB (load {os.getloadavg()[0]:.1f})"
    )
    if args.profile:
        run_child(__file__, args, "profile", show_stderr=True)


if __name__ == "__main__":
    main()
