"""Results figures on a seeded temp DB: results page server time, detailed CSV speed and memory.

Seeds one finished run of 3 models x 1000 tasks and one of 100 000 items (4 models x 25 000),
with realistic payload sizes (answer, judge reason, raw response and raw judge output), then:

1. Results page server time through the test client (median of 20 requests after one warm-up),
   for the default view and for the heaviest sorts/filters. Goal <= 150 ms p50 on 3 000 items.
2. Detailed CSV export: rows/s (goal >= 50 000) and peak Python memory (tracemalloc) while
   streaming, on the 100 000-item run vs the 3 000-item run (goal: flat).

    .venv/bin/python bench/bench_results.py [--big 100000] [--requests 20] [--keep]
"""

import argparse
import base64
import json
import random
import shutil
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app import latency
from app.db.connection import database
from app.db.models import COMPLETED
from app.db.models import FAILED
from app.db.models import FINISHED
from app.db.models import Item
from app.db.models import Run
from app.db.models import RunTarget
from app.exports.csvfiles import csv_detailed
from app.factory import create_app

# Proposed to the lead: Item's metric columns sit after its large text columns, so every
# aggregate over a run walks the rows' overflow pages; this index answers them on its own.
COVERING_INDEX = (
    "CREATE INDEX IF NOT EXISTS item_run_target_metrics ON item (run_id, target_id, status, "
    "error_stage, category, difficulty, evaluation_score, time_taken_ms, ttft_ms, "
    "tokens_per_second, tokens_generated, prompt_tokens, cost_usd)"
)
WORDS = (
    "the",
    "model",
    "answer",
    "is",
    "correct",
    "because",
    "tokens",
    "latency",
    "judge",
    "score",
    "reference",
    "rubric",
    "category",
    "ünïcødé",
    "comma,",
    '"quote"',
    "line\n",
)


def _text(rng, words):
    return " ".join(rng.choice(WORDS) for _ in range(words))


def seed_run(run_id, models, per_model, rng):
    """A finished run with `models` targets x `per_model` items, inserted in bulk."""
    run = Run.create(
        run_id=run_id,
        name=run_id,
        judge_provider_name="judge",
        judge_model="j1",
        status=FINISHED,
        phase="JUDGING",
    )
    targets = [
        RunTarget.create(
            run=run, provider_name="local" if m % 2 else "remote", model=f"model-{m}", position=m
        )
        for m in range(models)
    ]
    payload = [_text(rng, 90) for _ in range(50)]
    reasons = [_text(rng, 35) for _ in range(50)]
    # Each answer's token gaps as the engine keeps them (a packed histogram of 255 gaps at
    # its own rate, jittered), so the CSV reads ITL percentiles as it does for a real run.
    gap_histograms = [
        latency.pack(latency.histogram([max(0.0, rng.gauss(itl, itl * 0.15)) for _ in range(255)]))
        for itl in (rng.uniform(8.0, 60.0) for _ in range(50))
    ]
    fields = [
        Item.run,
        Item.target,
        Item.task_key,
        Item.category,
        Item.difficulty,
        Item.question,
        Item.status,
        Item.error_stage,
        Item.error_msg,
        Item.answer,
        Item.response_raw,
        Item.judge_raw,
        Item.time_taken_ms,
        Item.ttft_ms,
        Item.tokens_generated,
        Item.prompt_tokens,
        Item.tokens_per_second,
        Item.cost_usd,
        Item.evaluation_score,
        Item.evaluation_reason,
        Item.first_answer_ms,
        Item.sent_ts,
        Item.itl_hist,
    ]
    with database.atomic():
        for target in targets:
            rows = []
            for n in range(per_model):
                judge_failed = n % 97 == 0
                answer = payload[n % 50]
                rows.append(
                    (
                        run.id,
                        target.id,
                        f"task-{n:06d}",
                        ("math", "code", "writing", "facts", "safety")[n % 5],
                        ("easy", "medium", "hard")[n % 3],
                        f"Question {n}: {payload[(n + 7) % 50]}",
                        FAILED if judge_failed else COMPLETED,
                        "judge" if judge_failed else None,
                        "judge returned invalid JSON" if judge_failed else None,
                        answer,
                        json.dumps({"choices": [{"message": {"content": answer}}], "usage": {}}),
                        '{"score": 80, "reason": "fine"}',
                        rng.uniform(200, 9000),
                        rng.uniform(20, 400),
                        rng.randint(20, 800),
                        rng.randint(20, 300),
                        rng.uniform(5, 120),
                        rng.uniform(0, 0.002),
                        None if judge_failed else float(rng.randint(0, 100)),
                        reasons[n % 50],
                        rng.uniform(20, 400),
                        1_764_000_000.0 + n,
                        gap_histograms[n % 50],
                    )
                )
                if len(rows) == 2000:
                    Item.insert_many(rows, fields=fields).execute()
                    rows = []
            if rows:
                Item.insert_many(rows, fields=fields).execute()
    return run


def timed_get(client, url, repeat):
    """Median and p90 server time (ms) of `repeat` GETs, after one warm-up request."""
    response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        response = client.get(url)
        times.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.9) - 1]


def cold_get(client, url):
    started = time.perf_counter()
    assert client.get(url).status_code == 200
    return (time.perf_counter() - started) * 1000


def csv_speed(run):
    """Rows per second streaming the detailed CSV (bytes are produced, nothing is kept)."""
    started = time.perf_counter()
    size = 0
    lines = 0
    for chunk in csv_detailed(run):
        size += len(chunk)
        lines += chunk.count("\r\n")
    took = time.perf_counter() - started
    return (lines - 1) / took, took, size


def csv_peak_memory(run):
    """Peak traced Python memory (KiB) while streaming the detailed CSV."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    for _chunk in csv_detailed(run):
        pass
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return (peak - base) / 1024


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--big", type=int, default=100_000, help="items in the big run")
    parser.add_argument("--requests", type=int, default=20)
    parser.add_argument("--keep", action="store_true", help="keep the temp DB")
    parser.add_argument("--db", help="reuse (or create) this DB file instead of a temp one")
    parser.add_argument(
        "--covering-index",
        action="store_true",
        help="add the covering index proposed to the lead, then measure",
    )
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="llmbench-bench-results-"))
    db_path = Path(args.db) if args.db else tmp / "bench.db"
    reuse = db_path.exists()
    app = create_app(
        {
            "TESTING": True,
            "DB": str(db_path),
            "SCHEDULER_ENABLED": False,
            "LOAD_DEFAULTS": False,
            "SECRET_KEY": "bench",
            "MASTER_KEY_BASE64": base64.b64encode(b"b" * 32).decode(),
        }
    )
    rng = random.Random(1)
    try:
        with database.connection_context():
            started = time.perf_counter()
            if reuse:
                small = Run.get(Run.run_id == "bench-3k")
                big = Run.get(Run.run_id == "bench-100k")
            else:
                small = seed_run("bench-3k", 3, 1000, rng)
                big = seed_run("bench-100k", 4, args.big // 4, rng)
            action = "reused" if reuse else "seeded"
            print(
                f"{action} 3 000 + {args.big:,} items in {time.perf_counter() - started:.1f} s "
                f"({db_path.stat().st_size / 2**20:.0f} MiB)"
            )
            if args.covering_index:
                database.execute_sql(COVERING_INDEX)
                database.execute_sql("ANALYZE")
                print("with the proposed covering index:", COVERING_INDEX)
        client = app.test_client()
        print(
            "\n== results page server time (test client; p50 / p90 of "
            f"{args.requests} requests, ms) =="
        )
        for run_id in ("bench-3k", "bench-100k"):
            base = f"/runs/{run_id}/results"
            print(f"{run_id}: first view (cold score CIs): {cold_get(client, base):.0f} ms")
            last = 3000 // 50 if run_id == "bench-3k" else args.big // 50
            cases = [
                ("default view", base),
                ("sort ttft desc, last page", f"{base}?sort=ttft&dir=desc&page={last}"),
                (
                    "sort cost desc + score 20-90 + category, page 5",
                    f"{base}?sort=cost&dir=desc&min_score=20&max_score=90&category=math&page=5",
                ),
                (
                    "sort difficulty + model + judge failures",
                    f"{base}?sort=difficulty&model=remote/model-0&status=judge_failed",
                ),
                (
                    "table fragment, sort score asc, page 10, 200/page",
                    f"{base}/table?sort=score&per_page=200&page=10",
                ),
            ]
            for label, url in cases:
                p50, p90 = timed_get(client, url, args.requests)
                print(f"  {run_id:11} {label:52} p50 {p50:7.1f}  p90 {p90:7.1f}")

        print("\n== detailed CSV export ==")
        with database.connection_context():
            for run in (small, big):
                rows_per_s, took, size = csv_speed(run)
                peak = csv_peak_memory(run)
                print(
                    f"  {run.run_id:11} {rows_per_s:9,.0f} rows/s  ({took:.2f} s, "
                    f"{size / 2**20:.1f} MiB of CSV)  peak traced memory {peak:,.0f} KiB"
                )
        started = time.perf_counter()
        response = client.get(f"/runs/{big.run_id}/results.csv")
        size = sum(len(chunk) for chunk in response.response)
        took = time.perf_counter() - started
        print(
            f"  through the test client (HTTP streaming): {args.big / took:,.0f} rows/s, "
            f"{size / 2**20:.1f} MiB"
        )
    finally:
        if database.is_closed() is False:
            database.close()
        if args.keep:
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
