"""The pages that read every item (or vote) of several runs, as a browser gets them over HTTP
from `llmbench serve`: the leaderboard, the multi-run compare, Trends, Evaluate's filters, the
dashboard, and their Markdown and API twins.

Seeds (bench_full_pages.seeded, then here) three finished runs of --items items each into a
SQLite file: full-a and full-b as bench_full_pages does, and full-c; the three get a latency
target and an SLO, join one collection and are digested (Trends reads their aggregates), and
people and a judge vote on pairs of answers of full-a and full-b (--votes) and people rate
answers of full-a (--ratings), so the leaderboard and Evaluate's rating filters have work.
Then it starts `python -m app.cli serve` on a free port and times each page's first load (the
first GET after the server started) and warm (the median of --repeat GETs after it), with the
server's CPU time beside each wall time (the machine is shared; psutil's CPU times tick in
10 ms steps, so a small figure is rough).

    .venv/bin/python bench/bench_more_pages.py --db /tmp/more.db           # 100 000 items
    BENCH_SRC=/work/main .venv/bin/python bench/bench_more_pages.py --db /tmp/more.db

Without --kept the kept figures (RunFigures, RunSpeed) are dropped first, so the first load is
a run's first view ever; with --kept it is the first view after a restart.
"""

import argparse
import datetime as dt
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import psutil
import requests

ROOT = Path(os.environ.get("BENCH_SRC") or Path(__file__).resolve().parent.parent)
sys.path.insert(0, str(ROOT))
sys.path.insert(1, str(Path(__file__).resolve().parent))

from bench_deep_pages import T0  # noqa: E402
from bench_deep_pages import first_target_of  # noqa: E402
from bench_deep_pages import seed  # noqa: E402
from bench_full_pages import KEY  # noqa: E402
from bench_full_pages import free_port  # noqa: E402
from bench_full_pages import seeded  # noqa: E402
from bench_full_pages import start_server  # noqa: E402
from bench_full_pages import worker_hwm_mib  # noqa: E402

from app.db.connection import database  # noqa: E402
from app.db.models import COMPLETED  # noqa: E402
from app.db.models import FINISHED  # noqa: E402
from app.db.models import JUDGING  # noqa: E402
from app.db.models import Collection  # noqa: E402
from app.db.models import Item  # noqa: E402
from app.db.models import Rating  # noqa: E402
from app.db.models import Run  # noqa: E402
from app.db.models import RunCollection  # noqa: E402
from app.db.models import RunDigest  # noqa: E402
from app.db.models import RunTarget  # noqa: E402
from app.db.models import Vote  # noqa: E402
from app.factory import create_app  # noqa: E402
from app.schedules.digest import digest_run  # noqa: E402

COLLECTION = "bench-more"
SETTINGS = {"latencyTargetMs": 4000.0, "slo": {"ttftP90Ms": 350.0, "minScore": 40.0}}
JUDGE = "judge:judge/j1"


def bench_app(db):
    return create_app(
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


def _answered(run, tasks):
    """{(target id, task key): item id} of the run's answered items of the first `tasks` tasks."""
    query = (
        Item.select(Item.id, Item.target, Item.task_key)
        .where((Item.run == run) & Item.answered_at.is_null(False))
        .where(Item.task_key < f"task-{tasks:07d}")
        .tuples()
    )
    return {(target, task): pk for pk, target, task in query}


def seed_votes(runs, votes, rng):
    """`votes` votes, half people's and half a judge's, between answers of the runs' targets."""
    answered = {}
    for run in runs:
        answered.update(_answered(run, votes // 4 + 10))
    targets = sorted({target for target, _ in answered})
    tasks = sorted({task for _, task in answered})
    rows, seen = [], set()
    while len(rows) < votes:
        task = rng.choice(tasks)
        left, right = rng.sample(targets, 2)
        voter = rng.choice(("human", JUDGE))
        a, b = answered.get((left, task)), answered.get((right, task))
        if a is None or b is None or (min(a, b), max(a, b), voter) in seen:
            continue
        seen.add((min(a, b), max(a, b), voter))
        # The first target of each run is the strongest: a board with an order to find.
        edge = (targets.index(right) % 4 - targets.index(left) % 4) * 0.08
        roll = rng.random()
        winner = "TIE" if roll < 0.1 else "LEFT" if roll < 0.55 + edge else "RIGHT"
        rows.append(
            {
                "left_item": a,
                "right_item": b,
                "item_low": min(a, b),
                "item_high": max(a, b),
                "left_target": left,
                "right_target": right,
                "task_key": task,
                "winner": winner,
                "winner_target": {"LEFT": left, "RIGHT": right}.get(winner),
                "source": voter.split(":")[0],
                "voter": voter,
                "created_at": T0,
            }
        )
    with database.atomic():
        for start in range(0, len(rows), 500):
            Vote.insert_many(rows[start : start + 500]).execute()


def seed_ratings(run, ratings, rng):
    """`ratings` ratings of the run's scored answers, most by "human", a tenth by alice."""
    items = [
        pk
        for (pk,) in Item.select(Item.id)
        .where((Item.run == run) & (Item.status == COMPLETED))
        .order_by(Item.id)
        .limit(ratings * 3)
        .tuples()
    ]
    rows = []
    for pk in rng.sample(items, ratings):
        rater = "human:alice" if rng.random() < 0.1 else "human"
        rows.append({"item": pk, "run": run.id, "rating": rng.randint(1, 5), "rater": rater})
    with database.atomic():
        for start in range(0, len(rows), 500):
            Rating.insert_many(rows[start : start + 500]).execute()


def prepared(db, items, votes, ratings, kept):
    """Runs full-a, full-b, full-c of `items` items, digested, in one collection, voted on and
    rated (each step only once per database file)."""
    run_a, run_b = seeded(db, items, kept)
    run_c = f"full-c-{items}"
    app = bench_app(db)
    rng = random.Random(2)
    with app.app_context(), database.connection_context():
        if first_target_of(run_c) is None:
            started = time.perf_counter()
            seed(run_c, items, rng)
            Run.update(status=FINISHED, phase=JUDGING, finished_at=T0).where(
                Run.run_id == run_c
            ).execute()
            print(f"seeded {run_c} in {time.perf_counter() - started:.0f} s", flush=True)
        runs = [Run.get(Run.run_id == r) for r in (run_a, run_b, run_c)]
        collection = Collection.get_or_none(Collection.name == COLLECTION)
        if collection is None:
            collection = Collection.create(name=COLLECTION)
        for n, run in enumerate(runs):
            member = RunCollection.select().where(
                (RunCollection.run == run) & (RunCollection.collection == collection)
            )
            if not member.exists():
                Run.update(settings=SETTINGS, finished_at=T0 + dt.timedelta(days=n)).where(
                    Run.id == run.id
                ).execute()
                RunCollection.create(run=run, collection=collection, collection_name=COLLECTION)
        for run in runs:
            if RunDigest.get_or_none(RunDigest.run == run) is None:
                started = time.perf_counter()
                digest_run(Run.get_by_id(run.id))
                print(f"digested {run.run_id} in {time.perf_counter() - started:.0f} s")
        targets = RunTarget.select().where(RunTarget.run.in_([r.id for r in runs[:2]]))
        if not Vote.select().where(Vote.left_target.in_(targets)).exists():
            seed_votes(runs[:2], votes, rng)
            print(f"seeded {votes} votes", flush=True)
        if not Rating.select().where(Rating.run == runs[0]).exists():
            seed_ratings(runs[0], ratings, rng)
            print(f"seeded {ratings} ratings", flush=True)
        if not kept:
            for table in ("runfigures", "runspeed"):
                if database.table_exists(table):
                    database.execute_sql(f"DELETE FROM {table}")
        collection_id = collection.id
    if not database.is_closed():
        database.close()
    return run_a, run_b, run_c, collection_id


def server_cpu(server):
    """CPU seconds of the server's processes so far (user + system)."""
    procs = [psutil.Process(server.pid), *psutil.Process(server.pid).children(True)]
    return sum(p.cpu_times().user + p.cpu_times().system for p in procs)


def pages(base, a, b, c, collection_id):
    runs = f"runs={a},{b}"
    return [
        ("leaderboard a+b", f"{base}/leaderboard?{runs}"),
        ("leaderboard a+b one person", f"{base}/leaderboard?{runs}&source=human:alice"),
        ("API leaderboard details", f"{base}/api/leaderboard/details?{runs}"),
        ("compare a vs b+c", f"{base}/compare?run={a}&run={b}&run={c}"),
        ("compare chart a vs b+c", f"{base}/compare/chart.svg?base={a}&run={b}&run={c}"),
        ("compare.md a/b", f"{base}/compare.md?a={a}&b={b}"),
        ("API compare a/b", f"{base}/api/compare?a={a}&b={b}"),
        ("trends collection", f"{base}/trends?collection={COLLECTION}"),
        ("trends all", f"{base}/trends"),
        ("API trends collection", f"{base}/api/trends?collection={COLLECTION}"),
        ("API collection summary", f"{base}/api/collections/{collection_id}/summary"),
        ("evaluate run+category", f"{base}/evaluate?run={a}&category=math"),
        ("evaluate run+rating 4", f"{base}/evaluate?run={a}&rating=4"),
        ("evaluate run+model", f"{base}/evaluate?run={a}&model=model-1"),
        ("evaluate category (all runs)", f"{base}/evaluate?category=math"),
        ("API judge check (one rater)", f"{base}/api/runs/{a}/judge-check?rater=human:alice"),
        ("dashboard", f"{base}/"),
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--votes", type=int, default=20_000)
    parser.add_argument("--ratings", type=int, default=3_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--db", default=None, help="SQLite file to seed or reuse (kept)")
    parser.add_argument("--kept", action="store_true", help="keep stored figures (see above)")
    parser.add_argument("--only", default="", help="comma-separated words: only pages with one")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="llmbench-more-"))
    db = Path(args.db) if args.db else tmp / "more.db"
    print(f"source: {ROOT}\ndatabase: {db}\nload average at start: {os.getloadavg()}")
    a, b, c, collection_id = prepared(db, args.items, args.votes, args.ratings, args.kept)
    port = free_port()
    log = open(tmp / "server.log", "w")  # noqa: SIM115 - open for the server's whole life
    server = start_server(db, port, log)
    base = f"http://127.0.0.1:{port}"
    session = requests.Session()
    wanted = [w for w in args.only.split(",") if w]
    chosen = [
        p
        for p in pages(base, a, b, c, collection_id)
        if not wanted or any(w in p[0] for w in wanted)
    ]
    rows = []
    try:
        for label, url in chosen:
            cpu = server_cpu(server)
            started = time.perf_counter()
            response = session.get(url)
            first = (time.perf_counter() - started) * 1000
            first_cpu = (server_cpu(server) - cpu) * 1000
            assert response.status_code == 200, (url, response.status_code, response.text[:300])
            warm, warm_cpu = [], []
            for _ in range(args.repeat):
                cpu = server_cpu(server)
                started = time.perf_counter()
                assert session.get(url).status_code == 200
                warm.append((time.perf_counter() - started) * 1000)
                warm_cpu.append((server_cpu(server) - cpu) * 1000)
            rows.append(
                (label, first, first_cpu, statistics.median(warm), statistics.median(warm_cpu))
            )
            print(
                f"  {label:30} first {first:8.1f} ms (server CPU {first_cpu:7.1f})"
                f"  warm p50 {rows[-1][3]:8.1f} ms (server CPU {rows[-1][4]:7.1f})",
                flush=True,
            )
        peak = worker_hwm_mib(server)
    finally:
        server.terminate()
        server.wait(30)
        log.close()
    print(f"\nload average at the end: {os.getloadavg()}")
    print(f"{args.items:,} items a run, {args.votes:,} votes, {args.ratings:,} ratings; ")
    print(f"warm = median of {args.repeat}; source {ROOT}\n")
    print("| page | first load ms | its server CPU ms | warm p50 ms | its server CPU ms |")
    print("|---|---|---|---|---|")
    for label, first, cpu, warm, warm_cpu in rows:
        print(f"| {label} | {first:.1f} | {cpu:.1f} | {warm:.1f} | {warm_cpu:.1f} |")
    print(f"\nserver peak RSS: {peak:.0f} MiB")


if __name__ == "__main__":
    main()
