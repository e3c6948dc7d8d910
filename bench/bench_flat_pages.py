"""Server time of the pages polled or paged on a big run, at several run sizes: is it flat in N?

Seeds one finished run per size (4 targets, realistic payloads: bench_results.seed_run), then
through the test client (p50 / p90 ms of --requests GETs after one warm-up):

- the live view's poll (/runs/<id>/progress, every second while a run runs)
- /api/runs (every run with its counts) and the run history page (/runs/)
- the results table fragment for every sort, first and last page, and the filters

Run it from another source tree (e.g. `git archive main | tar -x -C /tmp/main`) to compare:

    .venv/bin/python bench/bench_flat_pages.py [--sizes 3000,30000,100000] [--requests 15]
    BENCH_SRC=/tmp/main .venv/bin/python bench/bench_flat_pages.py ...
"""

import argparse
import base64
import importlib
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(os.environ.get("BENCH_SRC") or Path(__file__).resolve().parent.parent)
sys.path.insert(0, str(ROOT))
sys.path.insert(1, str(Path(__file__).resolve().parent))

from app.db.connection import database
from app.factory import create_app

SORTS = ("model", "task", "category", "difficulty", "status", "time", "ttft", "tokens")
SORTS += ("tps", "score", "cost")


def timed_get(client, url, repeat):
    response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        assert client.get(url).status_code == 200
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    return statistics.median(times), times[max(0, int(len(times) * 0.9) - 1)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="3000,30000,100000")
    parser.add_argument("--requests", type=int, default=15)
    parser.add_argument("--quick", action="store_true", help="poll, api, 3 table views only")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    tmp = Path(tempfile.mkdtemp(prefix="llmbench-bench-flat-"))
    app = create_app(
        {
            "TESTING": True,
            "DB": str(tmp / "bench.db"),
            "SCHEDULER_ENABLED": False,
            "LOAD_DEFAULTS": False,
            "SECRET_KEY": "bench",
            "MASTER_KEY_BASE64": base64.b64encode(b"b" * 32).decode(),
            "SYSMETRICS_SECONDS": 0,
        }
    )
    # After `app` is imported from ROOT: bench_results puts this tree first on sys.path.
    seed_run = importlib.import_module("bench_results").seed_run
    rng = random.Random(1)
    print(f"source: {ROOT}")
    results = {}
    try:
        with database.connection_context():
            for size in sizes:
                started = time.perf_counter()
                seed_run(f"flat-{size}", 4, size // 4, rng)
                print(f"seeded {size:,} items in {time.perf_counter() - started:.1f} s", flush=True)
        client = app.test_client()
        cases = [("live poll", "/runs/{r}/progress"), ("/api/runs", "/api/runs")]
        cases += [("history page", "/runs/")]
        table = "/runs/{r}/results/table"
        sorts = ("model", "time", "score") if args.quick else SORTS
        for sort in sorts:
            cases.append((f"table sort {sort}, page 1", f"{table}?sort={sort}"))
            cases.append((f"table sort {sort} desc, last page", f"{table}?sort={sort}&dir=desc"))
        cases += [
            ("table status judge_failed", f"{table}?status=judge_failed"),
            ("table model + score 20-90, page 5", f"{table}?model=1&min_score=20&page=5"),
            ("table category, sort cost desc", f"{table}?category=math&sort=cost&dir=desc"),
        ]
        for size in sizes:
            run_id = f"flat-{size}"
            last = max(1, size // 50)
            for label, url in cases:
                url = url.format(r=run_id)
                if "last page" in label:
                    url += f"&page={last}"
                p50, p90 = results[(label, size)] = timed_get(client, url, args.requests)
                print(f"  {size:>7,} {label:40} p50 {p50:7.1f} ms", flush=True)
        print(f"\np50 ms (p90) of {args.requests} requests; source {ROOT}\n")
        print("| page | " + " | ".join(f"{s:,} items" for s in sizes) + " |")
        print("|---|" + "---|" * len(sizes))
        for label, _url in cases:
            cells = [f"{results[(label, s)][0]:.1f} ({results[(label, s)][1]:.0f})" for s in sizes]
            print(f"| {label} | " + " | ".join(cells) + " |")
    finally:
        if not database.is_closed():
            database.close()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
