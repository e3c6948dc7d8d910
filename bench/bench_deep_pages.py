"""Server time of the results table (every sort and filter, first and deep page), the live view's
poll, /api/runs and the history page, on one run of 100 000 and one of 1 000 000 items.

The items are seeded straight into a SQLite file (insert_many in bulk, realistic rows: attempt,
answer and judgement times spread over the run, answers, reasons, scores, 1 % judge and 0.5 %
answer failures, a few percent still NEW or waiting for the judge, like a run being watched).
The file is kept (--db) so the same data can be measured by another source tree:

    .venv/bin/python bench/bench_deep_pages.py --db /tmp/deep.db [--sizes 100000,1000000]
    git archive main | tar -x -C /tmp/main
    BENCH_SRC=/tmp/main .venv/bin/python bench/bench_deep_pages.py --db /tmp/deep.db

With --postgres the same items go to a throwaway PostgreSQL instead (tests/pg_server.py:
Debian's postgresql binaries, a new cluster on /dev/shm with fsync off, removed at the end;
nothing is kept, so --db does not apply). The seeding's count deltas are folded into the kept
counts, as the engine's supervisor folds them while a run works (app/runs/counts.py), and
VACUUM ANALYZE makes what autovacuum would within a minute of so many inserts on a real server:
the planner's statistics, and the visibility map that lets an index be read without its rows.

    .venv/bin/python bench/bench_deep_pages.py --postgres --sizes 100000

--db also takes a postgresql:// URL: a server you keep up is seeded once (folded and analyzed as
above) and measured again by each source tree, as a SQLite file is.

A "deep page" is what a Next click loads from the middle page (the page is opened by number,
untimed, and its rel=next link timed): an OFFSET on code that pages by number, a keyset seek on
code that pages after an item. "page N by number" times the middle page opened by its number.
Every figure is the median (and p90) of --requests GETs after one warm-up, through the test
client (server time). The machine's load average is printed at the start and the end.
"""

import argparse
import base64
import datetime as dt
import json
import os
import random
import re
import statistics
import sys
import tempfile
import time
from html import unescape
from pathlib import Path

ROOT = Path(os.environ.get("BENCH_SRC") or Path(__file__).resolve().parent.parent)
sys.path.insert(0, str(ROOT))

from peewee import fn

from app.db.connection import database
from app.db.models import PENDING
from app.db.models import Item
from app.db.models import Run
from app.db.models import RunTarget
from app.factory import create_app
from app.runs import counts
from tests import pg_server

SORTS = ("model", "task", "category", "difficulty", "status", "time", "ttft", "tokens")
SORTS += ("tps", "score", "cost")
FILTERS = (
    ("status judge_failed", "status=judge_failed"),
    ("status COMPLETED", "status=COMPLETED"),
    ("model 1", "model={target}"),
    ("category math", "category=math"),
    ("difficulty hard", "difficulty=hard"),
    ("score 20-90", "min_score=20&max_score=90"),
    ("model + score>=50", "model={target}&min_score=50"),
)
MARKS = re.compile(r"hx-vals='([^']+)'")
NEXT = re.compile(r'rel="next" href="([^"]+)"')
T0 = dt.datetime(2026, 1, 5, 9, 0, 0)
WORDS = "the model answer is correct because tokens latency judge score reference rubric".split()


def seed(run_id, size, rng, targets=4):
    """One run of `size` items over `targets` targets, most of them done, seeded in bulk."""
    now = T0
    run = Run.create(
        run_id=run_id,
        name=run_id,
        judge_provider_name="judge",
        judge_model="j1",
        status=PENDING,
        phase="BENCHMARKING",
        created_at=now,
        started_at=now,
        max_concurrency=4,
    )
    run_pk = run.id
    target_pks = [
        RunTarget.create(
            run=run, provider_name="local" if m % 2 else "remote", model=f"model-{m}", position=m
        ).id
        for m in range(targets)
    ]
    answers = [" ".join(rng.choice(WORDS) for _ in range(60)) for _ in range(64)]
    reasons = [" ".join(rng.choice(WORDS) for _ in range(25)) for _ in range(64)]
    fields = [
        getattr(Item, name)
        for name in (
            "run target task_key category difficulty question status error_stage error_msg "
            "attempts answer time_taken_ms ttft_ms tokens_generated prompt_tokens "
            "tokens_per_second cost_usd evaluation_score evaluation_reason judge_ms "
            "last_attempt_at answered_at judged_at created_at updated_at"
        ).split()
    ]
    per_target = size // targets
    # PostgreSQL takes at most 65 535 parameters a statement, and Peewee adds Item's defaulted
    # columns to the fields above (~35 a row): 2 000 rows would be 70 000.
    batch = 1000 if database.is_postgres else 2000
    done_until = int(per_target * 0.955)  # the rest: waiting for the judge, then NEW
    with database.atomic():
        for t, target in enumerate(target_pks):
            rows = []
            for n in range(per_target):
                at = T0 + dt.timedelta(seconds=(n * targets + t) * 0.05)
                kind = "done" if n < done_until else ("judge" if n < per_target * 0.965 else "new")
                judge_failed = kind == "done" and n % 97 == 0
                answer_failed = kind == "done" and n % 199 == 0 and not judge_failed
                answered = kind != "new" and not answer_failed
                status = (
                    "NEW"
                    if kind == "new"
                    else "WAITING_FOR_JUDGE"
                    if kind == "judge"
                    else "FAILED"
                    if judge_failed or answer_failed
                    else "COMPLETED"
                )
                scored = status == "COMPLETED"
                rows.append(
                    (
                        run_pk,
                        target,
                        f"task-{n:07d}",
                        ("math", "code", "writing", "facts", "safety")[n % 5],
                        ("easy", "medium", "hard")[n % 3],
                        f"Question {n}: {answers[(n + 7) % 64][:200]}",
                        status,
                        "judge" if judge_failed else "answer" if answer_failed else None,
                        "judge returned invalid JSON"
                        if judge_failed
                        else "HTTP 500 from the server"
                        if answer_failed
                        else None,
                        0 if kind == "new" else 1 + (n % 50 == 0),
                        answers[n % 64] if answered else None,
                        rng.uniform(200, 9000) if answered else None,
                        rng.uniform(20, 400) if answered else None,
                        rng.randint(20, 800) if answered else None,
                        rng.randint(20, 300) if answered else None,
                        rng.uniform(5, 120) if answered else None,
                        rng.uniform(0, 0.002) if answered else None,
                        float(rng.randint(0, 100)) if scored else None,
                        reasons[n % 64] if scored else None,
                        rng.uniform(300, 3000) if scored else None,
                        None if kind == "new" else at,
                        at if answered else None,
                        at + dt.timedelta(seconds=2) if scored else None,
                        now,
                        now if kind == "new" else at + dt.timedelta(seconds=2),
                    )
                )
                if len(rows) == batch:
                    Item.insert_many(rows, fields=fields).execute()
                    rows = []
            if rows:
                Item.insert_many(rows, fields=fields).execute()
    return target_pks[0]


def timed(client, url, repeat):
    response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        assert client.get(url).status_code == 200
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    return statistics.median(times), times[max(0, int(len(times) * 0.9) - 1)]


def next_link(client, url):
    """The rel=next link of the page at `url` (the fragment's own URL form)."""
    html = client.get(url).get_data(as_text=True)
    found = NEXT.search(html)
    assert found, url
    return unescape(found.group(1)).replace("/results?", "/results/table?")


def first_target_of(run_id):
    """The first target's id of the seeded run `run_id`, or None when it is not seeded yet."""
    query = RunTarget.select(fn.MIN(RunTarget.id)).join(Run).where(Run.run_id == run_id)
    return query.scalar()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--requests", type=int, default=7)
    parser.add_argument(
        "--db",
        default=None,
        help="SQLite file, or postgresql:// URL of a server you run, to seed or reuse (kept)",
    )
    parser.add_argument(
        "--postgres",
        action="store_true",
        help="seed and measure a throwaway PostgreSQL (tests/pg_server.py; removed at the end, "
        "not with --db)",
    )
    parser.add_argument("--quick", action="store_true", help="4 sorts, 3 filters")
    parser.add_argument("--sorts", default=None, help="comma-separated sorts (default: all)")
    args = parser.parse_args()
    if args.postgres and args.db:
        parser.error("--db names a kept database; --postgres seeds a throwaway one instead")
    if args.db and args.db.startswith(("postgres://", "postgresql://")):
        bench(args, args.db)
        return
    if not args.postgres:
        bench(args, Path(args.db or Path(tempfile.mkdtemp(prefix="llmbench-deep-")) / "deep.db"))
        return
    status = pg_server.available()
    if not status:
        sys.exit(status.reason)
    with pg_server.running_postgres(database="llmbench_deep") as url:
        bench(args, url)


def bench(args, db):
    """Seed the runs `args.sizes` asks for into `db` (a SQLite path or a PostgreSQL URL) unless
    they are there, then measure and print every page."""
    sizes = [int(s) for s in args.sizes.split(",")]
    app = create_app(
        {
            "TESTING": True,
            "DB": str(db),
            "SCHEDULER_ENABLED": False,
            "LOAD_DEFAULTS": False,
            "SECRET_KEY": "bench",
            "MASTER_KEY_BASE64": base64.b64encode(b"b" * 32).decode(),
            "SYSMETRICS_SECONDS": 0,
        }
    )
    print(f"source: {ROOT}\ndatabase: {db}\nload average at start: {os.getloadavg()}")
    rng = random.Random(1)
    first_target = {}
    with database.connection_context():
        for size in sizes:
            run_id = f"deep-{size}"
            first = first_target_of(run_id)
            if first is None:
                started = time.perf_counter()
                first = seed(run_id, size, rng)
                took = time.perf_counter() - started
                print(f"seeded {size:,} items in {took:.0f} s", flush=True)
                if database.is_postgres:
                    started = time.perf_counter()
                    counts.fold()
                    database.execute_sql("VACUUM ANALYZE")
                    took = time.perf_counter() - started
                    print(f"fold and VACUUM ANALYZE in {took:.1f} s", flush=True)
            first_target[size] = first
    client = app.test_client()
    sorts = ("model", "difficulty", "status", "score") if args.quick else SORTS
    sorts = args.sorts.split(",") if args.sorts else sorts
    filters = FILTERS[:3] if args.quick else FILTERS
    results = {}
    labels = []

    def measure(label, size, url):
        if label not in labels:
            labels.append(label)
        p50, p90 = results[(label, size)] = timed(client, url, args.requests)
        print(f"  {size:>9,} {label:44} p50 {p50:8.1f} ms  p90 {p90:8.1f}", flush=True)

    for size in sizes:
        run = f"deep-{size}"
        table = f"/runs/{run}/results/table"
        middle = size // 50 // 2
        poll = f"/runs/{run}/progress"
        measure("live poll, log + items resent", size, poll)
        vals = json.loads(unescape(MARKS.search(client.get(poll).get_data(as_text=True))[1]))
        steady = f"{poll}?log_mark={vals['log_mark']}&items_mark={vals['items_mark']}"
        measure("live poll, marks current (steady)", size, steady)
        measure("/api/runs", size, "/api/runs")
        measure("history page (/runs/)", size, "/runs/")
        for sort in sorts:
            for direction in ("asc", "desc"):
                base = f"{table}?sort={sort}&dir={direction}"
                measure(f"sort {sort} {direction}, page 1", size, base)
                deep = next_link(client, f"{base}&page={middle}")
                measure(f"sort {sort} {direction}, deep page (Next)", size, deep)
        measure(
            "sort score desc, page N by number", size, f"{table}?sort=score&dir=desc&page={middle}"
        )
        for label, query in filters:
            query = query.format(target=first_target[size])
            measure(f"filter {label}, page 1", size, f"{table}?{query}")
            measure(f"filter {label}, sort time desc", size, f"{table}?{query}&sort=time&dir=desc")
    print(f"\nload average at the end: {os.getloadavg()}")
    print(f"p50 ms (p90) of {args.requests} requests; source {ROOT}\n")
    print("| page | " + " | ".join(f"{s:,} items" for s in sizes) + " |")
    print("|---|" + "---|" * len(sizes))
    for label in labels:
        cells = [
            f"{results[(label, s)][0]:.1f} ({results[(label, s)][1]:.0f})"
            if (label, s) in results
            else "–"
            for s in sizes
        ]
        print(f"| {label} | " + " | ".join(cells) + " |")
    if not database.is_closed():
        database.close()


if __name__ == "__main__":
    main()
