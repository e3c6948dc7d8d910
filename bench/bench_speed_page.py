"""Speed figures of a big run: run_speed() and GET /api/runs/<id>/speed on a seeded temp DB.

Seeds one finished run of 100 000 items (2 targets x 50 000) with realistic timing columns
(send times at a concurrency of 8, TTFT, first answer token, e2e, tokens, decode rate, chunks,
queue time on one target, a packed ITL histogram per streamed answer, a few one-chunk answers
and timeouts) and realistic answer / raw response sizes, then times (median of --repeat):

- cold without a stored row: the per-process cache emptied and the run's RunSpeed row
  deleted, so every item is read and worked out (then stored), as for a run from before
  RunSpeed or whose items changed; and the computation alone (compute_speed), and the
  gap histograms' decoding in Python (unpack_lists) against numpy (app/latency_arrays.py);
- cold from the database: the cache emptied, the row there (as in another gunicorn worker or
  the CLI, or after a restart); and the first call in a new process;
- warm: the per-process cache;
- the API endpoint and the whole results page.

Goal: the speed figures of a 100 000-item run answer in <= 200 ms.

    .venv/bin/python bench/bench_speed_page.py [--items 100000] [--repeat 5] [--db PATH]
"""

import argparse
import base64
import datetime as dt
import json
import os
import random
import statistics
import subprocess
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
from app.db.models import RunSpeed
from app.db.models import RunTarget
from app.factory import create_app
from app.latency import histogram
from app.latency import pack
from app.latency import unpack_lists
from app.latency_arrays import merged_by_group
from app.results.kept_speed import _cache as speed_cache
from app.results.speed import _read
from app.results.speed import compute_speed
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


def cold_ms(call, repeat, before):
    """Median, min and max ms of `call` with `before` run (untimed) before each."""
    times = []
    for _ in range(repeat):
        before()
        started = time.perf_counter()
        call()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times), min(times), max(times)


def show(name, figures):
    med, low, high = figures
    print(f"{name}: median {med:.0f} ms (min {low:.0f}, max {high:.0f})")
    return med


def open_app(db_path):
    return create_app(
        {
            "TESTING": True,
            "DB": str(db_path),
            "SCHEDULER_ENABLED": False,
            "LOAD_DEFAULTS": False,
            "SECRET_KEY": "bench",
            "MASTER_KEY_BASE64": base64.b64encode(b"b" * 32).decode(),
        }
    )


def new_process(db_path):
    """The first run_speed() of a new process (its row stored): ms, timed in the child after
    its app is built."""
    code = (
        "import sys, time; sys.path.insert(0, sys.argv[1]); import bench.bench_speed_page as b; "
        "b.open_app(sys.argv[2]); from app.db.connection import database; "
        "from app.db.models import Run; from app.results.speed import run_speed\n"
        "with database.connection_context():\n"
        "    run = Run.get(Run.run_id == b.RUN_ID); t = time.perf_counter(); run_speed(run)\n"
        "    print((time.perf_counter() - t) * 1000)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(ROOT), str(db_path)],
        capture_output=True,
        text=True,
        check=True,
    )
    return float(out.stdout.strip().splitlines()[-1])


def decoding(run, repeat):
    """(Python ms, numpy ms): the run's gap histograms decoded and merged per target."""
    answers, _ = _read(run)
    blobs = [row[10] for row in answers]
    targets = {}
    group_of = [targets.setdefault(row[0], len(targets)) for row in answers]

    def python():
        merged = [{} for _ in targets]
        for blob, group in zip(blobs, group_of, strict=True):
            into = merged[group]
            for b, n in zip(*unpack_lists(blob), strict=True):
                into[b] = into.get(b, 0) + n

    return (
        median_ms(python, repeat)[0],
        median_ms(lambda: merged_by_group(blobs, group_of, len(targets)), repeat)[0],
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--db", help="reuse (or create) this SQLite file")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="llmbench-bench-speed-"))
    db_path = Path(args.db) if args.db else tmp / "bench.db"
    reuse = db_path.exists()
    app = open_app(db_path)
    print(f"load average before: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
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

        def no_row():
            speed_cache.clear()
            RunSpeed.delete().where(RunSpeed.run == run).execute()

        results = {}
        results["cold, no stored row"] = show(
            "run_speed(run), cold, no stored row (every item read, worked out, stored)",
            cold_ms(lambda: run_speed(run), args.repeat, no_row),
        )
        show("  of which compute_speed(run)", median_ms(lambda: compute_speed(run), args.repeat))
        python_ms, numpy_ms = decoding(run, args.repeat)
        print(
            f"  gap histograms decoded and merged: Python (unpack_lists) {python_ms:.0f} ms, "
            f"numpy (latency_arrays) {numpy_ms:.0f} ms"
        )
        results["cold, from the database"] = show(
            "run_speed(run), cold from the database (cache emptied, row there)",
            cold_ms(lambda: run_speed(run), args.repeat, speed_cache.clear),
        )
        results["warm"] = show(
            "run_speed(run), warm", median_ms(lambda: run_speed(run), args.repeat)
        )
    child = statistics.median(new_process(db_path) for _ in range(args.repeat))
    print(f"run_speed(run), first call of a new process (row there): median {child:.0f} ms")
    results["new process"] = child
    client = app.test_client()

    def api():
        assert client.get(f"/api/runs/{RUN_ID}/speed").status_code == 200

    def api_no_row():
        with database.connection_context():
            speed_cache.clear()
            RunSpeed.delete().execute()

    show(
        f"GET /api/runs/{RUN_ID}/speed, cold, no stored row", cold_ms(api, args.repeat, api_no_row)
    )
    results["API cold, from the database"] = show(
        f"GET /api/runs/{RUN_ID}/speed, cold from the database",
        cold_ms(api, args.repeat, speed_cache.clear),
    )
    show(f"GET /api/runs/{RUN_ID}/speed, warm", median_ms(api, args.repeat))
    for name, value in results.items():
        verdict = "met" if value <= 200 else "NOT met"
        print(f"goal <= 200 ms for the speed figures of a {items:,}-item run, {name}: {verdict}")

    def page():
        assert client.get(f"/runs/{RUN_ID}/results").status_code == 200

    show(f"GET /runs/{RUN_ID}/results (whole page, warm)", median_ms(page, args.repeat))
    show(
        f"GET /runs/{RUN_ID}/results (whole page, speed from the database)",
        cold_ms(page, args.repeat, speed_cache.clear),
    )
    print(f"load average after: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"database: {db_path}")


if __name__ == "__main__":
    main()
