"""Every full page of a big run as a browser gets it, over HTTP from `llmbench serve`.

Seeds two runs of --items items (bench_deep_pages.seed: realistic rows, a few percent still
running) into a fresh SQLite file, starts `python -m app.cli serve` (gunicorn, as the README
does) on a free port, and times each page's first load (the first GET after the server
started) and warm (the median of --repeat GETs after it): the results page (page 1, a deep page
by its Next link, sorted, filtered), the in-app report, Evaluate on the run, Compare of the two
runs, the speed API. Then the server's peak RSS (its gunicorn worker's VmHWM).

    .venv/bin/python bench/bench_full_pages.py                 # 100 000 items
    .venv/bin/python bench/bench_full_pages.py --items 1000000
    .venv/bin/python bench/bench_full_pages.py --db /tmp/full.db   # kept, reused by a 2nd run
    BENCH_SRC=/tmp/main .venv/bin/python bench/bench_full_pages.py --db /tmp/full.db
"""

import argparse
import base64
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from html import unescape
from pathlib import Path

import psutil
import requests

ROOT = Path(os.environ.get("BENCH_SRC") or Path(__file__).resolve().parent.parent)
sys.path.insert(0, str(ROOT))
sys.path.insert(1, str(Path(__file__).resolve().parent))

import random  # noqa: E402

from bench_deep_pages import T0  # noqa: E402
from bench_deep_pages import first_target_of  # noqa: E402
from bench_deep_pages import seed  # noqa: E402

from app.db.connection import database  # noqa: E402
from app.db.models import FINISHED  # noqa: E402
from app.db.models import JUDGING  # noqa: E402
from app.db.models import Run  # noqa: E402
from app.factory import create_app  # noqa: E402

KEY = base64.b64encode(b"b" * 32).decode()
NEXT = re.compile(r'rel="next" href="([^"]+)"')


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def seeded(db, items, kept=False):
    """Seed runs full-a and full-b of `items` items into `db` unless they are there."""
    app = create_app(
        {
            "TESTING": True,
            "DB": str(db),
            "SCHEDULER_ENABLED": False,
            "LOAD_DEFAULTS": False,
            "SECRET_KEY": "bench",
            "MASTER_KEY_BASE64": KEY,
            "SYSMETRICS_SECONDS": 0,
        }
    )
    rng = random.Random(1)
    runs = (f"full-a-{items}", f"full-b-{items}")
    with app.app_context(), database.connection_context():
        for run_id in runs:
            if first_target_of(run_id) is None:
                started = time.perf_counter()
                seed(run_id, items, rng)
                # Finished, as a run people look back at (the server's orchestrator leaves it).
                Run.update(status=FINISHED, phase=JUDGING, finished_at=T0).where(
                    Run.run_id == run_id
                ).execute()
                print(f"seeded {run_id} in {time.perf_counter() - started:.0f} s", flush=True)
        if not kept:  # derived rows (a source tree without them has no such tables)
            for table in ("runfigures", "runspeed"):
                if database.table_exists(table):
                    database.execute_sql(f"DELETE FROM {table}")
    if not database.is_closed():
        database.close()
    return runs


def start_server(db, port, log):
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "LLMBENCH_DB": str(db),
        "LLMBENCH_MASTER_KEY_BASE64": KEY,
        "LLMBENCH_SYSMETRICS_SECONDS": "0",
    }
    command = [sys.executable, "-m", "app.cli", "serve", "--port", str(port)]
    server = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=log)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if requests.get(f"http://127.0.0.1:{port}/runs/", timeout=5).status_code == 200:
                return server
        except requests.ConnectionError:
            time.sleep(0.1)
    server.kill()
    sys.exit(f"the server did not start: see {log.name}")


def worker_hwm_mib(server):
    """Peak RSS of the server's processes (gunicorn's arbiter and its worker), the largest."""
    peaks = []
    for proc in [psutil.Process(server.pid), *psutil.Process(server.pid).children(True)]:
        status = Path(f"/proc/{proc.pid}/status").read_text()
        peaks.append(int(re.search(r"VmHWM:\s+(\d+)", status)[1]) / 1024)
    return max(peaks)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--db", default=None, help="SQLite file to seed or reuse (kept)")
    parser.add_argument(
        "--kept",
        action="store_true",
        help="keep the figures stored by an earlier run of the bench (first load: after a "
        "restart), else drop them (first load: the run's first view ever)",
    )
    parser.add_argument("--skip", default="", help="comma-separated words of pages to leave out")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="llmbench-full-"))
    db = Path(args.db) if args.db else tmp / "full.db"
    print(f"source: {ROOT}\ndatabase: {db}\nload average at start: {os.getloadavg()}")
    run_a, run_b = seeded(db, args.items, args.kept)
    port = free_port()
    log = open(tmp / "server.log", "w")  # noqa: SIM115 - open for the server's whole life
    server = start_server(db, port, log)
    base = f"http://127.0.0.1:{port}"
    session = requests.Session()
    middle = args.items // 50 // 2
    results = base + f"/runs/{run_a}/results"
    pages = [
        ("results page 1", results),
        ("results deep page (Next)", None),
        ("results sorted score desc", results + "?sort=score&dir=desc"),
        ("results filtered category", results + "?category=math"),
        ("results filtered status", results + "?status=judge_failed"),
        ("report", base + f"/runs/{run_a}/report"),
        ("evaluate (run)", base + f"/evaluate?run={run_a}"),
        ("compare a/b", base + f"/compare?a={run_a}&b={run_b}"),
        ("speed API", base + f"/api/runs/{run_a}/speed"),
    ]
    skipped = [word for word in args.skip.split(",") if word]
    pages = [(label, url) for label, url in pages if not any(w in label for w in skipped)]
    rows = []
    try:
        for label, url in pages:
            if url is None:
                html = session.get(f"{results}?page={middle}").text
                url = base + unescape(NEXT.search(html)[1])
            started = time.perf_counter()
            response = session.get(url)
            first = (time.perf_counter() - started) * 1000
            assert response.status_code == 200, (url, response.status_code)
            warm = []
            for _ in range(args.repeat):
                started = time.perf_counter()
                assert session.get(url).status_code == 200
                warm.append((time.perf_counter() - started) * 1000)
            rows.append((label, first, statistics.median(warm)))
            print(f"  {label:30} first {first:8.1f} ms  warm p50 {rows[-1][2]:8.1f} ms", flush=True)
        peak = worker_hwm_mib(server)
    finally:
        server.terminate()
        server.wait(30)
        log.close()
    print(f"\nload average at the end: {os.getloadavg()}")
    print(f"{args.items:,} items a run; warm = median of {args.repeat}; source {ROOT}\n")
    print("| page | first load ms | warm p50 ms |\n|---|---|---|")
    for label, first, warm in rows:
        print(f"| {label} | {first:.1f} | {warm:.1f} |")
    print(f"\nserver peak RSS: {peak:.0f} MiB")


if __name__ == "__main__":
    main()
