"""Trends figures on a seeded temp DB: 200 finished runs x 5 models x 1 000 items (1 M items).

Each run is digested as in production (schedules/digest.py: aggregates per target and
category, then the regression check), timed per run. Then, through the test client (median of
N requests after one warm-up):

1. GET /trends (all runs), with a collection (adds current vs previous vs baseline and the
   radar), with a model filter, and GET /api/trends. Goal: <= 300 ms p50 for the Trends page.
2. The baseline measured in the same run: the same per-run, per-model averages computed from
   the items (one GROUP BY over the 1 M rows), i.e. what a page without stored aggregates
   would have to do before drawing anything.

    .venv/bin/python bench/bench_trends.py [--runs 200] [--models 5] [--items 1000]
        [--requests 15] [--keep]
"""

import argparse
import base64
import datetime as dt
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.db.connection import database
from app.db.models import COMPLETED
from app.db.models import FINISHED
from app.db.models import Collection
from app.db.models import Run
from app.db.models import RunAggregate
from app.db.models import RunCollection
from app.db.models import RunTarget
from app.factory import create_app
from app.schedules.digest import digest_run

CATEGORIES = ("math", "code", "facts", "writing", "logic")
T0 = dt.datetime(2025, 1, 1, 3, 0)
COLUMNS = (
    "run_id, target_id, task_key, category, question, status, answer, time_taken_ms, ttft_ms, "
    "tokens_per_second, evaluation_score, answered_at, created_at, updated_at"
)
# The NOT NULL columns whose defaults peewee fills in (executemany bypasses it).
FIXED = {
    "subcategory": "''",
    "difficulty": "'medium'",
    "excellent": "''",
    "good": "''",
    "pass_answer": "''",
    "incorrect_direction": "''",
    "repeat": "0",
    "attempts": "1",
    "answer_attempts": "1",
    "tokens_estimated": "0",
}
INSERT_SQL = (
    f"INSERT INTO item ({COLUMNS}, {', '.join(FIXED)}) "
    f"VALUES ({', '.join('?' * 14)}, {', '.join(FIXED.values())})"
)


def seed(runs, models, items, rng):
    """`runs` finished runs of one collection, each `models` targets x `items` tasks."""
    collection = Collection.create(name="bench")
    levels = [rng.uniform(50, 85) for _ in range(models)]
    task_effects = [rng.gauss(0, 12) for _ in range(items)]
    digest_seconds = []
    for r in range(runs):
        finished = T0 + dt.timedelta(days=r)
        judge = "judge-2" if r == runs // 2 else "judge-1"  # one run with another judge
        run = Run.create(
            run_id=f"nightly-{r:04d}",
            name="nightly",
            judge_provider_name="local",
            judge_model=judge,
            status=FINISHED,
            phase="JUDGING",
            created_at=finished - dt.timedelta(minutes=30),
            started_at=finished - dt.timedelta(minutes=30),
            finished_at=finished,
            dataset_hash="d" * 64,
            prompt_hash="p" * 64,
        )
        RunCollection.create(run=run, collection=collection, collection_name="bench")
        with database.atomic():
            for m in range(models):
                target = RunTarget.create(
                    run=run, provider_name="local", model=f"model-{m}", position=m
                )
                drift = rng.gauss(0, 1.5)
                stamp = finished.isoformat(" ")
                rows = [
                    (
                        run.id,
                        target.id,
                        f"t{n:05d}",
                        CATEGORIES[n % len(CATEGORIES)],
                        f"Question {n}?",
                        COMPLETED,
                        "an answer",
                        800.0 + rng.random() * 400,
                        80.0 + rng.random() * 60,
                        30.0 + m * 5 + rng.random() * 4,
                        min(100.0, max(0.0, levels[m] + task_effects[n] + drift + rng.gauss(0, 6))),
                        stamp,
                        stamp,
                        stamp,
                    )
                    for n in range(items)
                ]
                # Straight to sqlite3 (executemany): peewee builds SQL per row, too slow for 1 M.
                database.connection().executemany(INSERT_SQL, rows)
        started = time.perf_counter()
        digest_run(run, now=finished)
        digest_seconds.append(time.perf_counter() - started)
        if (r + 1) % 20 == 0:
            print(f"  seeded and digested {r + 1}/{runs} runs", flush=True)
    return collection, digest_seconds


def median_ms(client, url, requests):
    """Median server time (ms) of GET `url` over `requests` calls, after one warm-up."""
    assert client.get(url).status_code == 200, url
    times = []
    for _ in range(requests):
        started = time.perf_counter()
        response = client.get(url)
        times.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200
    return statistics.median(times), len(response.get_data())


def scan_ms(repeats):
    """The baseline: per run and model averages straight from the items (one GROUP BY)."""
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        database.execute_sql(
            "SELECT run_id, target_id, AVG(evaluation_score), COUNT(*), AVG(tokens_per_second) "
            "FROM item GROUP BY run_id, target_id"
        ).fetchall()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--models", type=int, default=5)
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--requests", type=int, default=15)
    parser.add_argument("--keep", action="store_true", help="keep the temp database")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="llmbench-trends-"))
    app = create_app(
        {
            "TESTING": True,
            "DB": str(folder / "bench.db"),
            "MASTER_KEY_BASE64": base64.b64encode(b"b" * 32).decode(),
            "LOAD_DEFAULTS": False,
            "SECRET_KEY": "bench",
        }
    )
    total = args.runs * args.models * args.items
    print(f"Seeding {args.runs} runs x {args.models} models x {args.items} items = {total:,}")
    with database.connection_context():
        collection, digests = seed(args.runs, args.models, args.items, random.Random(12))
        print(
            f"Digest per run (aggregates + regression check), {args.models * args.items} items: "
            f"p50 {statistics.median(digests) * 1000:.0f} ms, max {max(digests) * 1000:.0f} ms"
        )
        print(f"Stored aggregates: {RunAggregate.select().count():,} rows for {total:,} items")
    client = app.test_client()
    pages = [
        ("Trends page, all runs", "/trends"),
        ("Trends page, one collection (+ summary, radar)", f"/trends?collection={collection.id}"),
        ("Trends page, one model", "/trends?model=model-0"),
        ("Trends page, one category", "/trends?category=math"),
        ("GET /api/trends", "/api/trends"),
        ("GET /api/collections/{id}/summary", f"/api/collections/{collection.id}/summary"),
    ]
    results = {}
    for label, url in pages:
        ms, size = median_ms(client, url, args.requests)
        results[label] = ms
        print(f"{label:52} p50 {ms:7.1f} ms  ({size / 1024:.0f} KB)")
    with database.connection_context():
        scan = scan_ms(max(3, args.requests // 5))
    page = results["Trends page, all runs"]
    print(f"{'Baseline: per-run averages from the items (scan)':52} p50 {scan:7.1f} ms")
    print(f"Trends page / item scan alone: {page / scan:.2f}x (goal: page <= 300 ms p50)")
    if args.keep:
        print(f"kept: {folder}")
    else:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
