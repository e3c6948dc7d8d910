"""Ratings figures on a seeded temp DB: next card and next pair on a 30 000-item run, and the
leaderboard of 50 000 stored votes between 20 targets.

1. Next card (Evaluate) and next pair (A/B): p50 / p95 server time through the test client over
   a run of 30 000 items (2 targets x 15 000 tasks, realistic answers), with 10 000 items rated
   and 7 500 pairs voted already, so "not rated yet" and "next unvoted pair" have to skip them.
   Goal <= 50 ms p95. Then the writes behind a key press (rate, vote): measured as the test
   client runs them (each request opens and closes its connection, and the last connection's
   close checkpoints the WAL) and again with another connection kept open.
2. Leaderboard: 20 targets, 50 000 votes in the database, 1 000 bootstrap rounds; the whole path
   (read the votes as arrays + fit + bootstrap + matrix) against the in-memory fit alone on the
   same votes (the baseline, measured in the same run). Goal <= 1 s.

    .venv/bin/python bench/bench_ratings.py [--tasks 15000] [--requests 200] [--db FILE] [--keep]
"""

import argparse
import base64
import random
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.db.connection import database
from app.db.models import COMPLETED
from app.db.models import FINISHED
from app.db.models import Item
from app.db.models import Rating
from app.db.models import RatingTag
from app.db.models import Run
from app.db.models import RunTarget
from app.db.models import Vote
from app.factory import create_app
from app.ratings import bradley_terry as bt
from app.ratings.leaderboard import leaderboard
from app.ratings.leaderboard import scope_targets
from app.ratings.leaderboard import vote_arrays

ANSWER = ("The answer is 42 because the question asks for it, " * 12).strip()
T0 = "2025-01-02 03:04:05"


def seed_run(run_id, targets, tasks):
    """A finished run: `targets` targets x `tasks` answered items (bulk insert); target ids."""
    run = Run.create(
        run_id=run_id, name=run_id, judge_provider_name="j", judge_model="j", status=FINISHED
    )
    made = [
        RunTarget.create(run=run, provider_name="local", model=f"m{t}", position=t)
        for t in range(targets)
    ]
    fields = [
        Item.run,
        Item.target,
        Item.task_key,
        Item.category,
        Item.question,
        Item.status,
        Item.answer,
        Item.answered_at,
        Item.evaluation_score,
        Item.evaluation_reason,
        Item.time_taken_ms,
        Item.tokens_generated,
    ]
    with database.atomic():
        for target in made:
            rows = [
                (
                    run.id,
                    target.id,
                    f"task-{n:06d}",
                    ("math", "code", "facts")[n % 3],
                    f"Question {n}: what is the answer?",
                    COMPLETED,
                    ANSWER,
                    T0,
                    float(n % 101),
                    "fine",
                    500.0 + n % 900,
                    40 + n % 60,
                )
                for n in range(tasks)
            ]
            for start in range(0, len(rows), 2000):
                Item.insert_many(rows[start : start + 2000], fields=fields).execute()
    return run, made


def items_of(target):
    """task key -> item id of one target."""
    return dict(Item.select(Item.task_key, Item.id).where(Item.target == target).tuples())


def seed_labels(target_a, target_b, rated, voted):
    """`rated` ratings (with a tag each) on A's first items, `voted` human votes on A-B pairs."""
    a, b = items_of(target_a), items_of(target_b)
    keys = sorted(a)
    with database.atomic():
        Rating.insert_many(
            [
                {"item": a[k], "run": target_a.run_id, "rating": 1 + n % 5, "tags": ["bench"]}
                for n, k in enumerate(keys[:rated])
            ]
        ).execute()
        ratings = dict(Rating.select(Rating.item, Rating.id).tuples())
        RatingTag.insert_many(
            [{"rating": ratings[a[k]], "item": a[k], "tag": "bench"} for k in keys[:rated]]
        ).execute()
        rows = []
        for k in keys[:voted]:
            left, right = a[k], b[k]
            rows.append(
                {
                    "left_item": left,
                    "right_item": right,
                    "item_low": min(left, right),
                    "item_high": max(left, right),
                    "left_target": target_a.id,
                    "right_target": target_b.id,
                    "task_key": k,
                    "winner": "LEFT",
                    "winner_target": target_a.id,
                    "source": "human",
                    "voter": "human",
                }
            )
        for start in range(0, len(rows), 2000):
            Vote.insert_many(rows[start : start + 2000]).execute()


def seed_votes(targets, tasks, n_votes, seed=1):
    """`n_votes` judge votes between random target pairs on random tasks, from known ratings."""
    rng = np.random.default_rng(seed)
    true = 1000.0 + rng.normal(0.0, 150.0, len(targets))
    ids = [items_of(t) for t in targets]
    keys = sorted(ids[0])
    seen = set()
    rows = []
    while len(rows) < n_votes:
        i, j = rng.choice(len(targets), 2, replace=False)
        task = keys[int(rng.integers(len(keys)))]
        left, right = ids[i][task], ids[j][task]
        pair = (min(left, right), max(left, right))
        if pair in seen:
            continue
        seen.add(pair)
        p_left = 1.0 / (1.0 + 10.0 ** ((true[j] - true[i]) / 400.0))
        roll = rng.random()
        winner = "TIE" if roll < 0.1 else ("LEFT" if rng.random() < p_left else "RIGHT")
        rows.append(
            {
                "left_item": left,
                "right_item": right,
                "item_low": pair[0],
                "item_high": pair[1],
                "left_target": targets[i].id,
                "right_target": targets[j].id,
                "task_key": task,
                "winner": winner,
                "winner_target": {"LEFT": targets[i].id, "RIGHT": targets[j].id}.get(winner),
                "source": "judge",
                "voter": "judge:bench/j",
            }
        )
    with database.atomic():
        for start in range(0, len(rows), 2000):
            Vote.insert_many(rows[start : start + 2000]).execute()


def percentiles(times):
    times = sorted(times)
    return statistics.median(times), times[max(0, int(len(times) * 0.95) - 1)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=15_000, help="tasks per target (2 targets)")
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--votes", type=int, default=50_000)
    parser.add_argument("--keep", action="store_true", help="keep the temp DB")
    parser.add_argument("--db", help="reuse (or create) this DB file instead of a temp one")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="llmbench-bench-ratings-"))
    db_path = Path(args.db) if args.db else tmp / "bench.db"
    reuse = db_path.exists()
    app = create_app(
        {
            "TESTING": True,
            "DB": str(db_path),
            "SCHEDULER_ENABLED": False,
            "LOAD_DEFAULTS": False,
            "WTF_CSRF_ENABLED": False,
            "SECRET_KEY": "bench",
            "MASTER_KEY_BASE64": base64.b64encode(b"b" * 32).decode(),
        }
    )
    try:
        with database.connection_context():
            started = time.perf_counter()
            if reuse:
                ta, tb = (
                    RunTarget.select()
                    .join(Run)
                    .where(Run.run_id == "cards")
                    .order_by(RunTarget.position)
                )
            else:
                _run, (ta, tb) = seed_run("cards", 2, args.tasks)
                seed_labels(ta, tb, rated=10_000, voted=7_500)
                _board, lb_targets = seed_run("board", 20, args.votes // 20)
                seed_votes(lb_targets, args.votes // 20, args.votes)
            print(
                f"{'reused' if reuse else 'seeded'} {2 * args.tasks:,} + {args.votes:,} items, "
                f"10 000 ratings, 7 500 + {args.votes:,} votes in "
                f"{time.perf_counter() - started:.1f} s"
            )
            first_items = sorted(items_of(ta).values())
        client = app.test_client()
        htmx = {"HX-Request": "true"}
        rng = random.Random(2)

        def status_call():
            return client.get("/api/status")

        scope = f"runA=cards&targetA={ta.id}&targetB={tb.id}"
        print(
            f"\n== next card / next pair on a {2 * args.tasks:,}-item run: p50 / p95 of "
            f"{args.requests} requests, ms (goal p95 <= 50) =="
        )
        rated = first_items[:5000]  # rated by the seed: 1 + n % 5, tag "bench", no note
        stored = {item: 1 + n % 5 for n, item in enumerate(rated)}
        cases = [
            (
                "Evaluate page, first unrated card (skips 10 000 rated)",
                lambda: client.get("/evaluate?run=cards&unrated=1"),
            ),
            (
                "J: card fragment of a random card (GET)",
                lambda: client.get(
                    f"/evaluate/card?run=cards&item={rng.choice(first_items)}", headers=htmx
                ),
            ),
            (
                "J: next card, the card saved already (POST then=next)",
                lambda: _next_card(client, rng.choice(rated), stored, htmx),
            ),
            (
                "next pair: GET /api/pairwise/next (skips 7 500 voted)",
                lambda: client.get(f"/api/pairwise/next?{scope}"),
            ),
            ("A/B page with the next pair", lambda: client.get(f"/ab?{scope}")),
        ]
        cases.insert(0, ("baseline: GET /api/status (the app's cheapest page)", status_call))
        for name, (p50, p95) in interleaved(cases, args.requests):
            print(f"  {name:58} {p50:6.1f} / {p95:6.1f}")

        print(
            "\n== the writes behind a key press (p50 / p95 ms): each request closes its "
            "connection, and the last connection's close checkpoints the WAL =="
        )
        writes = [
            (
                "1-5: rate the card (POST then=stay)",
                lambda: (
                    lambda: client.post(
                        f"/evaluate/items/{rng.choice(first_items[10_000:])}",
                        data={"rating": str(rng.randint(1, 5)), "then": "stay", "f_run": "cards"},
                        headers=htmx,
                    )
                ),
            ),
            (
                "Q/W/E: vote, answered with the next pair (POST)",
                lambda: _vote_call(client, ta, tb, scope, htmx),
            ),
        ]
        for name, (p50, p95) in interleaved(writes, args.requests, prepared=True):
            print(f"  {name:58} {p50:6.1f} / {p95:6.1f}")
        keeper = sqlite3.connect(
            str(db_path)
        )  # another connection open: closes skip the checkpoint
        try:
            for name, (p50, p95) in interleaved(writes, args.requests, prepared=True):
                print(f"  {name + ', WAL kept':58} {p50:6.1f} / {p95:6.1f}")
        finally:
            keeper.close()

        print(
            f"\n== leaderboard: 20 targets, {args.votes:,} votes in the DB, "
            f"{bt.ROUNDS} bootstrap rounds (median of 5, s; goal <= 1) =="
        )
        with database.connection_context():
            runs = [Run.get(Run.run_id == "board")]
            ids = [t.id for t in scope_targets(runs)]
            arrays = vote_arrays(ids)
            read = statistics.median([_seconds(lambda: vote_arrays(ids)) for _ in range(5)])
            fit_only = statistics.median(
                [_seconds(lambda: bt.leaderboard(len(ids), *arrays)) for _ in range(5)]
            )
            whole = statistics.median([_seconds(lambda: leaderboard(runs)) for _ in range(5)])
        api = statistics.median(
            [_seconds(lambda: client.get("/api/leaderboard?runs=board")) for _ in range(5)]
        )
        print(f"  read the votes as arrays (one query)      {read:6.3f}")
        print(f"  baseline: fit + bootstrap on arrays       {fit_only:6.3f}")
        print(
            f"  leaderboard() from the DB                 {whole:6.3f}"
            f"  ({whole / fit_only:.2f}x the baseline)"
        )
        print(f"  GET /api/leaderboard (test client)        {api:6.3f}")
        status = statistics.median([_seconds(lambda: client.get("/api/status")) for _ in range(20)])
        print(f"\nfor scale, this machine now: GET /api/status takes {status * 1000:.1f} ms")
    finally:
        if args.keep:
            print(f"\nkept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def _next_card(client, item, stored, headers):
    """J on a card whose rating is stored already: nothing to write, the next card comes back."""
    return client.post(
        f"/evaluate/items/{item}",
        data={"rating": str(stored[item]), "tags": "bench", "then": "next", "f_run": "cards"},
        headers=headers,
    )


def _vote_call(client, ta, tb, scope, headers):
    """Fetch the next pair (not timed), then return the vote's POST (timed)."""
    pair = client.get(f"/api/pairwise/next?{scope}").get_json()
    form = {
        "runA": "cards",
        "targetA": ta.id,
        "targetB": tb.id,
        "pairs": "15000",
        "leftItemId": pair["left"]["itemId"],
        "rightItemId": pair["right"]["itemId"],
        "winner": "TIE",
    }
    return lambda: client.post("/ab/votes", data=form, headers=headers)


def interleaved(cases, repeat, prepared=False, rounds=5):
    """[(name, (p50, p95))] for each case, its `repeat` calls spread over `rounds` rounds that
    take the cases in turn, so a busy spell on the machine falls on every case alike."""
    times = {name: [] for name, _call in cases}
    for _name, call in cases:  # one warm-up each
        call()() if prepared else call()
    for _ in range(rounds):
        for name, call in cases:
            for _ in range(max(1, repeat // rounds)):
                run = call() if prepared else call
                started = time.perf_counter()
                run()
                times[name].append((time.perf_counter() - started) * 1000)
    return [(name, percentiles(times[name])) for name, _call in cases]


def _seconds(call):
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


if __name__ == "__main__":
    main()
