"""What speed adds to comparing two big runs: compare_runs(a, b) with each run's speed figures
cold (no kept RunSpeed row: every item read), from the kept row (cache emptied), and warm; and
the speed part alone (speed_by_target of both runs). Seeds two finished runs of --items each
(bench_speed_page's seed: 2 targets, realistic timing columns) on a temp SQLite file.

    .venv/bin/python bench/bench_compare_speed.py [--items 5000] [--repeat 3]
"""

import argparse
import os
import random
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.db.connection import database
from app.db.models import RunSpeed
from app.results.compare import compare_runs
from app.results.compare_speed import speed_by_target
from app.results.kept_speed import _cache as speed_cache
from bench import bench_speed_page as seeded


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=5_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    db_path = Path(tempfile.mkdtemp(prefix="llmbench-bench-compare-")) / "bench.db"
    seeded.open_app(db_path)
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    with database.connection_context():
        runs = []
        for run_id, seed in (("bench-a", 1), ("bench-b", 2)):
            seeded.RUN_ID = run_id
            runs.append(seeded.seed(args.items, random.Random(seed)))
        a, b = runs
        print(f"two runs of {args.items:,} items each")

        def no_rows():
            speed_cache.clear()
            RunSpeed.delete().where(RunSpeed.run.in_([a.id, b.id])).execute()

        def both_speeds():
            speed_by_target(a), speed_by_target(b)

        seeded.show(
            "compare_runs(a, b), speed cold (no kept row: items read)",
            seeded.cold_ms(lambda: compare_runs(a, b), args.repeat, no_rows),
        )
        seeded.show(
            "compare_runs(a, b), speed from the kept rows",
            seeded.cold_ms(lambda: compare_runs(a, b), args.repeat, speed_cache.clear),
        )
        seeded.show(
            "compare_runs(a, b), warm", seeded.median_ms(lambda: compare_runs(a, b), args.repeat)
        )
        seeded.show(
            "  of which the speed of both runs, cold (items read)",
            seeded.cold_ms(both_speeds, args.repeat, no_rows),
        )
        seeded.show(
            "  of which the speed of both runs, from the kept rows",
            seeded.cold_ms(both_speeds, args.repeat, speed_cache.clear),
        )
        speed = compare_runs(a, b)["models"][0]["speed"]
        print(f"  {speed['verdict']}: {speed['why']}")


if __name__ == "__main__":
    main()
