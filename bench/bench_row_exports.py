"""The downloads with one row per item (results.md, the detailed results.csv, results.jsonl),
report.csv and the results.csv `llmbench report` writes (results_csv), made in-process from a
seeded database, timed by CPU and wall time per download.

Reads an existing file seeded by bench_full_pages.py (runs full-a-N and full-b-N); its kept
heads and figures are used as a warm server would (the first download of each kind warms them
and is not counted). --out writes each body to a folder, so two source trees' bytes can be
compared with `cmp`.

    .venv/bin/python bench/bench_row_exports.py --db /tmp/md100k.db --run full-a-100000
    BENCH_SRC=/work/main .venv/bin/python bench/bench_row_exports.py --db /tmp/md100k.db \
        --run full-a-100000 --out /tmp/md-main
    PROFILE=1 .venv/bin/python bench/bench_row_exports.py --db ... --kinds markdown --repeat 1
"""

import argparse
import base64
import os
import statistics
import sys
import time
from contextlib import nullcontext
from pathlib import Path

ROOT = Path(os.environ.get("BENCH_SRC") or Path(__file__).resolve().parent.parent)
sys.path.insert(0, str(ROOT))

from app.db.connection import database  # noqa: E402
from app.db.models import Run  # noqa: E402
from app.exports import files  # noqa: E402
from app.exports.item_results import results_csv  # noqa: E402
from app.factory import create_app  # noqa: E402
from app.results.composite import settings_from  # noqa: E402

KEY = base64.b64encode(b"b" * 32).decode()
KINDS = ("markdown", "detailed_csv", "report_csv", "results_jsonl", "results_csv")
# With --http: each kind's page, as the web app serves it (masking and the streamed reply too).
ROUTES = {
    "markdown": "/runs/{}/results.md",
    "detailed_csv": "/runs/{}/results.csv",
    "report_csv": "/runs/{}/report.csv",
}


def body(run, kind, settings, out=None):
    """Make the download whole; (CPU s, wall s, bytes)."""
    cpu, started = time.process_time(), time.perf_counter()
    if kind == "results_csv":  # the CLI's file (llmbench report), not a web download
        chunks, filename = results_csv(run), "results.csv"
    else:
        chunks, filename, _ = files.download(run, kind, settings)
    size = 0
    sink = open(out / filename, "wb") if out else None  # noqa: SIM115 - closed below
    try:
        for chunk in chunks:
            data = chunk.encode()
            size += len(data)
            if sink:
                sink.write(data)
    finally:
        if sink:
            sink.close()
    return time.process_time() - cpu, time.perf_counter() - started, size


def page(client, run, kind, settings, out=None):
    """GET the kind's page through the app (a test client: no socket); (CPU s, wall s, bytes)."""
    cpu, started = time.process_time(), time.perf_counter()
    response = client.get(ROUTES[kind].format(run.run_id), buffered=False)
    size = 0
    for data in response.response:
        size += len(data)
    response.close()
    return time.process_time() - cpu, time.perf_counter() - started, size


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True, help="a SQLite file or postgresql:// URL")
    parser.add_argument("--run", default="full-a-100000")
    parser.add_argument("--kinds", default=",".join(KINDS), help=f"comma-separated: {KINDS}")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, help="a folder to write each body to (for cmp)")
    parser.add_argument(
        "--http", action="store_true", help="GET the web pages in-process (masking included)"
    )
    args = parser.parse_args()
    app = create_app(
        {
            "TESTING": True,
            "DB": args.db,
            "SCHEDULER_ENABLED": False,
            "LOAD_DEFAULTS": False,
            "SECRET_KEY": "bench",
            "MASTER_KEY_BASE64": KEY,
            "SYSMETRICS_SECONDS": 0,
        }
    )
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
    settings = settings_from(app.config)
    print(f"ROOT {ROOT}; {args.db}; run {args.run}; load {os.getloadavg()}")
    print("| download | CPU s (median) | wall s (median) | MiB | runs |")
    print("|---|---|---|---|---|")
    # A request of the test client closes the connection it used: a GET has its own.
    with app.app_context(), nullcontext() if args.http else database.connection_context():
        run = Run.get(Run.run_id == args.run)
        client = app.test_client()
        for kind in args.kinds.split(","):
            body(run, kind, settings, args.out)  # warms its kept parts; written once for cmp
            made = page if args.http else body
            if os.environ.get("PROFILE"):
                import cProfile  # noqa: PLC0415 - only when profiling
                import pstats  # noqa: PLC0415

                profile = cProfile.Profile()
                profile.runcall(made, *((client,) if args.http else ()), run, kind, settings)
                pstats.Stats(profile).sort_stats("tottime").print_stats(25)
            times = [
                made(*((client,) if args.http else ()), run, kind, settings)
                for _ in range(args.repeat)
            ]
            cpu = statistics.median(t[0] for t in times)
            wall = statistics.median(t[1] for t in times)
            print(f"| {kind} | {cpu:.2f} | {wall:.2f} | {times[0][2] / 2**20:.1f} | {len(times)} |")


if __name__ == "__main__":
    main()
