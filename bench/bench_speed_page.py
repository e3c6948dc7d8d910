"""Speed figures of a big run: run_speed() and GET /api/runs/<id>/speed on a seeded temp DB.

Seeds one finished run of 100 000 items (2 targets x 50 000) with realistic timing columns
(send times at a concurrency of 8, TTFT, first answer token, e2e, tokens, decode rate, chunks,
queue time on one target, a packed ITL histogram per streamed answer, a few one-chunk answers
and timeouts) and realistic answer / raw response sizes, then times run_speed(run), the API
endpoint and the results page (median of 5 after one warm-up). Goal: the speed figures of a
100 000-item run answer in <= 200 ms.

    .venv/bin/python bench/bench_speed_page.py [--items 100000] [--repeat 5] [--db PATH]
"""

import argparse
import base64
import datetime as dt
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.db.connection import database
from app.db.models import COMPLETED
from app.db.models import FAILED
from app.db.models import FINISHED
from app.db.models import Item
from app.db.models import Run
from app.db.models import RunTarget
from app.factory import create_app
from app.latency import histogram
from app.latency import pack
from app.results.speed import _cache as speed_cache
from app.results.speed import run_speed

RUN_ID = "bench-speed"
TIMEOUT = "No answer from http://x/v1 within 120 s (read timeout)"
FIELDS = [
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
    Item.time_taken_ms,
    Item.ttft_ms,
    Item.first_answer_ms,
    Item.tokens_generated,
    Item.prompt_tokens,
    Item.tokens_per_second,
    Item.sent_ts,
    Item.chunks,
    Item.itl_hist,
    Item.queue_ms,
    Item.evaluation_score,
    Item.last_attempt_at,
    Item.updated_at,
]


def gap_histograms(rng, count):
    """`count` packed ITL histograms of answers of 50-600 tokens near 20-40 ms a token."""
    blobs = []
    for _ in range(count):
        rate = rng.uniform(20, 40)
        gaps = [max(0.1, rng.gauss(rate, rate * 0.15)) for _ in range(rng.randint(50, 600))]
        gaps += [rng.uniform(150, 400) for _ in range(rng.randint(0, 3))]  # a few stalls
        blobs.append(pack(histogram(gaps)))
    return blobs


def seed(items, rng):
    """A finished run of 2 targets x items/2, inserted in bulk."""
    run = Run.create(
        run_id=RUN_ID,
        name=RUN_ID,
        judge_provider_name="judge",
        judge_model="j1",
        status=FINISHED,
        phase="JUDGING",
    )
    targets = [
        RunTarget.create(run=run, provider_name="local", model=f"model-{m}", position=m)
        for m in range(2)
    ]
    answers = [" ".join(rng.choice(("tok", "en", "answer", "x")) for _ in range(120))] * 1
    blobs = gap_histograms(rng, 300)
    start = 1_760_000_000.0
    with database.atomic():
        for m, target in enumerate(targets):
            rows = []
            for n in range(items // 2):
                failed = n % 211 == 0
                one_chunk = n % 53 == 0
                ttft = rng.lognormvariate(5.3, 0.4)  # ~200 ms
                tokens = rng.randint(50, 600)
                decode_ms = tokens * rng.uniform(20, 40)
                e2e = ttft + decode_ms
                sent = start + (n // 8) * 9.0 + rng.uniform(0, 0.5)
                answer = answers[0]
                tried = dt.datetime.fromtimestamp(sent, dt.UTC).replace(tzinfo=None)
                rows.append(
                    (
                        run.id,
                        target.id,
                        f"task-{n:06d}",
                        ("math", "code", "writing", "facts", "safety")[n % 5],
                        ("easy", "medium", "hard")[n % 3],
                        f"Question {n}: " + answer[:200],
                        FAILED if failed else COMPLETED,
                        "answer" if failed else None,
                        "No answer from http://x/v1 within 120 s (read timeout)"
                        if failed
                        else None,
                        None if failed else answer,
                        None if failed else json.dumps({"choices": [{"text": answer}]}),
                        None if failed else e2e,
                        None if failed else ttft,
                        None if failed else ttft,
                        None if failed else tokens,
                        40,
                        None if failed else 1000.0 * (tokens - 1) / max(1.0, e2e - ttft),
                        sent,
                        None if failed else (1 if one_chunk else tokens),
                        None if failed or one_chunk else rng.choice(blobs),
                        ttft * rng.uniform(0.1, 0.3) if m == 0 and not failed else None,
                        None if failed else float(rng.randint(0, 100)),
                        tried,
                        tried,
                    )
                )
                if len(rows) == 2000:
                    Item.insert_many(rows, fields=FIELDS).execute()
                    rows = []
            if rows:
                Item.insert_many(rows, fields=FIELDS).execute()
    return run


def median_ms(call, repeat):
    call()  # warm-up
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        call()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times), min(times), max(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--db", help="reuse (or create) this SQLite file")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="llmbench-bench-speed-"))
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
    with database.connection_context():
        started = time.perf_counter()
        run = Run.get(Run.run_id == RUN_ID) if reuse else seed(args.items, random.Random(1))
        items = Item.select().where(Item.run == run).count()
        print(
            f"{'reused' if reuse else 'seeded'} {items:,} items in "
            f"{time.perf_counter() - started:.1f} s ({db_path.stat().st_size / 2**20:.0f} MiB)"
        )
        figures = run_speed(run)
        for t in figures["targets"]:
            w = t["window"]
            print(
                f"  {t['label']}: {t['answers']:,} answers, TTFT p50 {t['ttftMs']['p50']:.0f} ms, "
                f"ITL p50 {t['itlMs']['p50']:.1f} ms over {t['itlMs']['n']:,} gaps, "
                f"e2e p90 {t['e2eMs']['p90']:.0f} ms, {w['outputTokensPerSecond']:.0f} out tok/s, "
                f"{w['requestsPerSecond']:.2f} req/s, concurrency {w['achievedConcurrency']:.2f}, "
                f"errors {t['failed']} ({t['timeouts']} timed out), flags {t['flags']}"
            )
        # Cold: every item read and worked out (the cache emptied first); warm: the figures of
        # a run whose items have not changed since (its cache stamp is one index seek).
        times = []
        for _ in range(args.repeat):
            speed_cache.clear()
            started = time.perf_counter()
            run_speed(run)
            times.append((time.perf_counter() - started) * 1000)
        print(
            f"run_speed(run), cold: median {statistics.median(times):.0f} ms "
            f"(min {min(times):.0f}, max {max(times):.0f})"
        )
        med, low, high = median_ms(lambda: run_speed(run), args.repeat)
        print(f"run_speed(run), warm: median {med:.0f} ms (min {low:.0f}, max {high:.0f})")
    client = app.test_client()

    def api():
        assert client.get(f"/api/runs/{RUN_ID}/speed").status_code == 200

    def page():
        assert client.get(f"/runs/{RUN_ID}/results").status_code == 200

    cold = []
    for _ in range(args.repeat):
        speed_cache.clear()
        started = time.perf_counter()
        api()
        cold.append((time.perf_counter() - started) * 1000)
    cold_ms = statistics.median(cold)
    print(f"GET /api/runs/{RUN_ID}/speed, cold: median {cold_ms:.0f} ms")
    med, low, high = median_ms(api, args.repeat)
    print(
        f"GET /api/runs/{RUN_ID}/speed, warm: median {med:.0f} ms (min {low:.0f}, max {high:.0f})"
    )
    for name, value in (("cold", cold_ms), ("warm", med)):
        verdict = "met" if value <= 200 else "NOT met"
        print(f"goal <= 200 ms for the speed figures of a {items:,}-item run, {name}: {verdict}")
    print(f"load average while measuring: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    med, low, high = median_ms(page, args.repeat)
    page_text = f"GET /runs/{RUN_ID}/results (whole page)"
    print(f"{page_text}: median {med:.0f} ms (min {low:.0f}, max {high:.0f})")
    print(f"database: {db_path}")


if __name__ == "__main__":
    main()
