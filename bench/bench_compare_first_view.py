"""The compare of two runs (results.compare.compare_runs) as its first view works it out: the
kept figures it reads (per-target averages, composites, speed) dropped and the per-process
caches emptied before each repeat, so every repeat pays what a view after a change pays.

Seeds runs full-a and full-b of --items items into --db as bench_full_pages does (only once
per file; a file seeded by bench_more_pages.py works too), then calls compare_runs in-process
--repeat times and prints each repeat's CPU and wall time and their medians (the machine is
shared: CPU time holds up when it is busy). --profile prints a cProfile of one more call.

    .venv/bin/python bench/bench_compare_first_view.py --db /tmp/more.db
    BENCH_SRC=/work/main .venv/bin/python bench/bench_compare_first_view.py --db /tmp/more.db
"""

import argparse
import cProfile
import os
import pstats
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(os.environ.get("BENCH_SRC") or Path(__file__).resolve().parent.parent)
sys.path.insert(0, str(ROOT))
sys.path.insert(1, str(Path(__file__).resolve().parent))

from bench_full_pages import seeded  # noqa: E402
from bench_more_pages import bench_app  # noqa: E402

from app.db.connection import database  # noqa: E402
from app.db.models import Run  # noqa: E402
from app.results import goodput  # noqa: E402
from app.results import kept  # noqa: E402
from app.results import speed  # noqa: E402
from app.results.compare import compare_runs  # noqa: E402


def first_view(run_a, run_b):
    """CPU and wall seconds of one compare_runs with nothing kept."""
    for table in ("runfigures", "runspeed"):
        if database.table_exists(table):
            database.execute_sql(f"DELETE FROM {table}")
    # Speed and goodput keep their own per-process caches beside kept's.
    for cache in (kept._cache, speed._cache, goodput._cache):
        cache.clear()
    cpu, wall = time.process_time(), time.perf_counter()
    compare_runs(run_a, run_b)
    return time.process_time() - cpu, time.perf_counter() - wall


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True)
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    name_a, name_b = seeded(args.db, args.items)
    print(f"source: {ROOT}\ndatabase: {args.db}\nload average at start: {os.getloadavg()}")
    app = bench_app(args.db)
    with app.app_context(), database.connection_context():
        run_a = Run.get(Run.run_id == name_a)
        run_b = Run.get(Run.run_id == name_b)
        cpus, walls = [], []
        for n in range(args.repeat):
            cpu, wall = first_view(run_a, run_b)
            cpus.append(cpu)
            walls.append(wall)
            print(f"repeat {n + 1}: cpu {cpu:.2f} s, wall {wall:.2f} s", flush=True)
        print(
            f"compare {name_a} vs {name_b}, first view: median cpu {statistics.median(cpus):.2f} s,"
            f" wall {statistics.median(walls):.2f} s (load {os.getloadavg()[0]:.1f})"
        )
        if args.profile:
            profile = cProfile.Profile()
            profile.enable()
            first_view(run_a, run_b)
            profile.disable()
            pstats.Stats(profile).sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    main()
