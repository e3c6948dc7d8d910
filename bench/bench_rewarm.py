"""The compare page's first view after a later change: a baseline pinned after its collection's
runs finished (--case pin), or a run re-judged after it finished (--case rejudge).

--case pin: run
full-a pinned as the baseline of a collection full-b ran, then the server's next warm pass
(exports/warm.warm_due, as its scheduler thread calls it), then GET
/compare?a=full-a-N&b=full-b-N, each step in a fresh process (nothing cached in memory: another
worker, or the server after a restart). Prints each step's CPU and wall time, and a second pass
in the pass's process (an idle server's: nothing changed since).

Set up once per source (not timed): full-a and full-b join one collection, full-a's digest gets
another judge key (so it is not full-b's previous comparable run: only the pin makes the pair
likely), both runs warmed by that source's code. Each repeat unpins, drops every kept compare,
pins full-a again, and times the pass and the view. With BENCH_SRC=/work/main the pass does
not know about pins, and the view works the compare out: the figure before.

--case rejudge: full-a is full-b's previous comparable run (their digests share a judge key; no
baseline pinned); each repeat re-judges one of full-a's items (it gets another score, the run
finishes again, as the engine leaves it), times the next warm pass, then the view of
/compare?a=full-a-N&b=full-b-N. On main the pass warms full-a's own figures (its turn comes
first in a fresh process) but not that compare.

--case rating: full-a and full-b warmed beside FILLERS small finished runs (2 targets x 100
items each, seeded once), as on a server with 50 finished runs. Each repeat, in a fresh process:
a first pass (the server's earlier ones: untimed), then a person's rating of one of full-a's
answers (a value that differs from its last: its report, labels and judge check change), then
the next pass, timed, with recheck=0: the pass right after a rating when it is not the run's
turn (RECHECK=3 of 50 runs a pass: 47 times in 50 on a server); then the first view of
full-a's pages a rating changes (VIEWS: the report, the results page, a report chart, Evaluate,
the downloads), each after a rating of its own, in a fresh process. --case idle: 15 passes in
one process, nothing changed (default recheck), median CPU.

    cp /tmp/walk41_100k.db /tmp/rewarm100k.db
    .venv/bin/python bench/bench_rewarm.py --db /tmp/rewarm100k.db --items 100000
    BENCH_SRC=/work/main .venv/bin/python bench/bench_rewarm.py --db /tmp/rewarm100k.db
    .venv/bin/python bench/bench_rewarm.py --db /tmp/rewarm100k.db --case rejudge

Measured 2026-11-28, 100k items a run, medians of 3, load average 11-17 on 2 cores (shared):
main: the pass after the pin 49 ms CPU (warms nothing), the page's first view 3 305 ms CPU /
10 200 ms wall, one row added. This branch: the pass after the pin 3 649 ms CPU (the compare,
in the background), the page's first view 185 ms CPU / 472 ms wall (a fresh process:
templates compiled too), no row added; the same 26 366 bytes. An idle pass (nothing changed):
main 18-26 ms CPU, this branch 14-25 ms (medians of 15 in one process, two sittings each:
within the noise). (--case pin counted rows added then; rowsWritten counts replaced ones too.)

--case rejudge, the same sitting, load average 16-20: main: the pass 18 032 ms CPU (full-a's
own figures), the compare's first view 3 399 ms CPU / 13 932 ms wall (worked out, one row
replaced). This branch: the pass 22 600 ms CPU (its figures and the compare with full-b), the
view 190 ms CPU / 793 ms wall, no row written; the same 26 366 bytes.

--case rating, measured 2026-11-28, 100k items a run, 48 small runs beside, load average 5-14
on 2 cores (shared), five sittings of each source alternated (main: BENCH_SRC=a detached main
worktree), CPU ms of each first view after a rating, median of the five: main / this branch:
report.html 1 667 / 47, summary.json 1 242 / 31, the report's ratings chart 487 / 9, results.md
294 / 28, the in-app report 160 / 93, Evaluate 121 / 105, the results page 260 / 260 (a rating
changes little there: its judge check is cheap). The pass right after the rating (not the run's
turn): main 2 ms (warms nothing), this branch 7 538 ms in the background (three sittings), then
3 360 ms (two) once the report's charts read the kept answer times. --case idle, median of 15
passes in one process, three sittings each: main 17.0 / 15.6 / 15.7 ms, this branch 16.7 /
15.3 / 14.2 / 17.4 ms (within the noise: one statement of four primary-key maxima, 0.4 ms).
"""

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = Path(os.environ.get("BENCH_SRC") or HERE.parent)
sys.path.insert(0, str(ROOT))
sys.path.insert(1, str(HERE))

from bench_full_pages import run_child  # noqa: E402

COLLECTION = "rewarm-bench"
FILLERS = 48  # small finished runs beside full-a and full-b (--case rating and idle)
IDLE_PASSES = 15
# --case rating: what a rating changes, each page's first view in a fresh process.
VIEWS = {
    "view-report": "/runs/{a}/report",
    "view-results": "/runs/{a}/results",
    "view-ratings-chart": "/runs/{a}/report/ratings.svg",
    "view-evaluate": "/evaluate?run={a}",
    "view-summary": "/runs/{a}/summary.json",
    "view-report-html": "/runs/{a}/report.html",
    "view-results-md": "/runs/{a}/results.md",
}


def _timed(work):
    cpu, wall = time.process_time(), time.perf_counter()
    result = work()
    return result, {"cpu": time.process_time() - cpu, "wall": time.perf_counter() - wall}


def child(args):
    """One step in this (fresh) process; prints one JSON line."""
    from bench_full_pages import bench_app

    from app.db.connection import database
    from app.db.models import FINISHED
    from app.db.models import Collection
    from app.db.models import Run
    from app.db.models import RunCollection
    from app.db.models import RunDigest
    from app.db.models import RunFigures
    from app.exports import warm
    from app.results.composite import settings_from
    from app.runs.queries import get_run
    from app.schedules.baselines import pin_baseline
    from app.schedules.baselines import unpin_baseline
    from app.schedules.digest import digest_finished

    app = bench_app(args.db)
    settings = settings_from(app.config)
    a, b = f"full-a-{args.items}", f"full-b-{args.items}"
    if args.child == "setup-rejudge":
        with app.app_context(), database.connection_context():
            digest_finished()
            key = RunDigest.get(RunDigest.run == get_run(b).id).judge_key
            RunDigest.update(judge_key=key).where(RunDigest.run == get_run(a).id).execute()
            collection = Collection.get_or_none(Collection.name == COLLECTION)
            if collection is not None:
                unpin_baseline(collection.id)
            for run_id in (a, b):
                warm.keep_warm(get_run(run_id), settings)
        print(json.dumps({"setup": True}))
        return
    if args.child == "rejudge":
        with app.app_context(), database.connection_context():
            _rejudge(get_run(a))
            warmed, took = _timed(lambda: warm.warm_due(settings))
            idle, took_idle = _timed(lambda: warm.warm_due(settings))
            took.update(warmed=warmed, idleCpu=took_idle["cpu"], idleWarmed=idle)
        print(json.dumps(took))
        return
    if args.child == "setup-rating":
        with app.app_context(), database.connection_context():
            _fillers()
            digest_finished()
            for run in Run.select().where(Run.status == FINISHED).order_by(Run.id):
                warm.keep_warm(run, settings)
        print(json.dumps({"setup": True}))
        return
    if args.child == "rating":
        with app.app_context(), database.connection_context():
            warm.warm_due(settings, recheck=0)  # the passes before the rating
            _rate(get_run(a))
            warmed, took = _timed(lambda: warm.warm_due(settings, recheck=0))
            idle, took_idle = _timed(lambda: warm.warm_due(settings, recheck=0))
            took.update(warmed=warmed, idleCpu=took_idle["cpu"], idleWarmed=idle)
        print(json.dumps(took))
        return
    if args.child == "idle":
        with app.app_context(), database.connection_context():
            warm.warm_due(settings)  # a first pass: whatever a process looks at once
            passes = [_timed(lambda: warm.warm_due(settings)) for _ in range(IDLE_PASSES)]
        cpus = [took["cpu"] for _, took in passes]
        print(json.dumps({"cpu": statistics.median(cpus), "warmed": [w for w, _ in passes]}))
        return
    if args.child == "setup":
        with app.app_context(), database.connection_context():
            collection, _ = Collection.get_or_create(name=COLLECTION)
            for run_id in (a, b):
                run = get_run(run_id)
                RunCollection.get_or_create(
                    run=run.id, collection=collection.id, defaults={"collection_name": COLLECTION}
                )
            digest_finished()
            RunDigest.update(judge_key="rewarm-bench-other").where(
                RunDigest.run == get_run(a).id
            ).execute()
            unpin_baseline(collection.id)
            for run_id in (a, b):
                warm.keep_warm(get_run(run_id), settings)
        print(json.dumps({"setup": True}))
        return
    if args.child == "pass":
        with app.app_context(), database.connection_context():
            collection = Collection.get(Collection.name == COLLECTION)
            unpin_baseline(collection.id)
            RunFigures.delete().where(RunFigures.name.startswith("compare:")).execute()
            pin_baseline(collection.id, a)
            warmed, took = _timed(lambda: warm.warm_due(settings))
            idle, took_idle = _timed(lambda: warm.warm_due(settings))
            took.update(warmed=warmed, idleCpu=took_idle["cpu"], idleWarmed=idle)
        print(json.dumps(took))
        return
    url = f"/compare?a={a}&b={b}" if args.child == "view" else VIEWS[args.child].format(a=a)
    # The request opens and closes its own connection (the app's teardown), as a server's does.
    with app.app_context():
        rows = set(RunFigures.select(RunFigures.run, RunFigures.name, RunFigures.stamp).tuples())
        client = app.test_client()
        response, took = _timed(lambda: client.get(url))
        took.update(status=response.status_code, bytes=len(response.get_data()))
        after = RunFigures.select(RunFigures.run, RunFigures.name, RunFigures.stamp).tuples()
        took["rowsWritten"] = len(set(after) - rows)  # added, or replaced under a new stamp
        if not database.is_closed():
            database.close()
    print(json.dumps(took))


def _rejudge(run):
    """One of the run's completed items re-judged to another score, the run finished again."""
    from app.clock import utcnow
    from app.db.models import COMPLETED
    from app.db.models import FINISHED
    from app.db.models import Item
    from app.db.models import Run
    from app.runs.retries import rejudge_item

    item = Item.select().where((Item.run == run.id) & (Item.status == COMPLETED)).first()
    rejudge_item(run.run_id, item.id)
    now = utcnow()
    score = 100.0 - (item.evaluation_score or 0.0)
    Item.update(
        status=COMPLETED, evaluation_score=score, judged_at=now, updated_at=now, last_attempt_at=now
    ).where(Item.id == item.id).execute()
    Run.update(status=FINISHED, finished_at=now).where(Run.id == run.id).execute()


def _fillers():
    """FILLERS small finished runs (2 targets x 100 answered, judged items), unless there."""
    import datetime as dt

    from app.db.connection import insert_rows
    from app.db.models import COMPLETED
    from app.db.models import FINISHED
    from app.db.models import Item
    from app.db.models import Run
    from app.db.models import RunTarget

    start = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    for n in range(FILLERS):
        run_id = f"rewarm-small-{n:02d}"
        if Run.get_or_none(Run.run_id == run_id) is not None:
            continue
        at = start + dt.timedelta(hours=n)
        run = Run.create(
            run_id=run_id,
            name="rewarm-small",
            judge_provider_name="local",
            judge_model="judge-1",
            status=FINISHED,
            phase="JUDGING",
            created_at=at,
            started_at=at,
            finished_at=at + dt.timedelta(minutes=5),
            dataset_hash="d" * 64,
            prompt_hash="p" * 64,
        )
        for position in range(2):
            target = RunTarget.create(
                run=run, provider_name="local", model=f"small-{position}", position=position
            )
            rows = [
                {
                    "run": run.id,
                    "target": target.id,
                    "task_key": f"t{k:03d}",
                    "category": ("math", "code")[k % 2],
                    "question": f"Question {k}?",
                    "status": COMPLETED,
                    "answer": "an answer",
                    "time_taken_ms": 500.0 + k,
                    "evaluation_score": float((k * 37 + position * 11) % 101),
                    "answered_at": at,
                    "judged_at": at,
                    "last_attempt_at": at,
                    "created_at": at,
                    "updated_at": at,
                }
                for k in range(100)
            ]
            insert_rows(Item, rows)


def _rate(run):
    """A person's rating of the run's first completed answer: one point up (5 back to 1)."""
    from app.db.models import COMPLETED
    from app.db.models import HUMAN
    from app.db.models import Item
    from app.db.models import Rating
    from app.ratings.store import put_rating

    item = Item.select().where((Item.run == run.id) & (Item.status == COMPLETED)).first()
    now = Rating.get_or_none((Rating.item == item.id) & (Rating.rater == HUMAN))
    value = 1 if now is None or now.rating in (None, 5) else now.rating + 1
    put_rating(run.run_id, item.id, {"rating": value})


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True)
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--case", choices=("pin", "rejudge", "rating", "idle"), default="pin")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    print(f"source: {ROOT}\ndatabase: {args.db}\nload average at start: {os.getloadavg()}")
    print(f"case: {args.case}")
    if args.case in ("rating", "idle"):
        _rating_case(args)
        return
    run_child(__file__, args, "setup" if args.case == "pin" else "setup-rejudge")
    passes, views = [], []
    for _ in range(args.repeat):
        passes.append(run_child(__file__, args, "pass" if args.case == "pin" else "rejudge"))
        views.append(run_child(__file__, args, "view"))
        print(f"  pass {json.dumps(passes[-1])}\n  view {json.dumps(views[-1])}", flush=True)
    labels = (f"warm pass after the {args.case}", "compare page, first view")
    for label, runs in zip(labels, (passes, views), strict=True):
        cpu = statistics.median(r["cpu"] for r in runs) * 1000
        wall = statistics.median(r["wall"] for r in runs) * 1000
        print(f"{label}: median of {len(runs)}: cpu {cpu:,.0f} ms, wall {wall:,.0f} ms")
    idle = statistics.median(r["idleCpu"] for r in passes) * 1000
    print(f"the next (idle) pass: median cpu {idle:,.1f} ms")
    print(f"load average at end: {os.getloadavg()}")


def _rating_case(args):
    """--case rating: the pass after a rating and the report's and results page's first views;
    --case idle: an idle server's passes."""
    run_child(__file__, args, "setup-rating")
    if args.case == "idle":
        for _ in range(args.repeat):
            print(f"  idle passes {json.dumps(run_child(__file__, args, 'idle'))}", flush=True)
        return
    took = {step: [] for step in ("rating", *VIEWS)}
    for _ in range(args.repeat):
        for view in VIEWS:  # a rating before each: every view is its page's first after one
            for step in ("rating", view):
                took[step].append(run_child(__file__, args, step))
                print(f"  {step} {json.dumps(took[step][-1])}", flush=True)
    for step in took:
        cpu = statistics.median(r["cpu"] for r in took[step]) * 1000
        wall = statistics.median(r["wall"] for r in took[step]) * 1000
        print(f"{step}: median of {len(took[step])}: cpu {cpu:,.0f} ms, wall {wall:,.0f} ms")
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
