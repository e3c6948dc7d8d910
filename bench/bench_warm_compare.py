"""The compare page's first view of a run against its previous comparable run, after the run
was warmed (exports/warm.py, as the scheduler's pass and `llmbench run` warm a finished run):
the warm's CPU and wall time, then the page's, each in a fresh process (nothing cached in
memory: another worker, or the server after a restart).

Each repeat drops every kept compare, warms run full-b-N (its own figures are read back where
kept; on this branch the compare of full-a-N -> full-b-N, its previous comparable run, is worked
out too), then GETs /compare?a=full-a-N&b=full-b-N in a new process. With BENCH_SRC=/work/main
the warm does not work the compare out, and the page does: the figure before.

    cp /tmp/walk41_100k.db /tmp/cmpwarm100k.db
    .venv/bin/python bench/bench_warm_compare.py --db /tmp/cmpwarm100k.db --items 100000
    BENCH_SRC=/work/main .venv/bin/python bench/bench_warm_compare.py --db /tmp/cmpwarm100k.db

Measured 2026-11-28, 100k items a run, medians of 3, load average ~8 on 2 cores (full-a and
full-b share a judge key and have no dataset hash, so full-a is full-b's previous comparable):
main: warm_run 111 ms CPU (its own figures already kept, no compare), the page's first view
2 974 ms CPU / 4 168 ms wall, one row added. This branch: warm_run 2 701 ms CPU (the compare),
the page's first view 103 ms CPU / 128 ms wall (a fresh process: templates compiled too), no
row added; the same 26 366 bytes.
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


def child(args):
    """One step in this (fresh) process; prints one JSON line."""
    from bench_full_pages import bench_app

    from app.db.connection import database
    from app.db.models import RunFigures
    from app.results.composite import settings_from
    from app.runs.queries import get_run

    app = bench_app(args.db)
    a, b = f"full-a-{args.items}", f"full-b-{args.items}"
    if args.child == "warm":
        from app.exports import warm

        with app.app_context(), database.connection_context():
            RunFigures.delete().where(RunFigures.name.startswith("compare:")).execute()
            cpu, wall = time.process_time(), time.perf_counter()
            warm.warm_run(get_run(b), settings_from(app.config))
            took = {"cpu": time.process_time() - cpu, "wall": time.perf_counter() - wall}
            took["compares"] = (
                RunFigures.select().where(RunFigures.name.startswith("compare:")).count()
            )
        print(json.dumps(took))
        return
    # The request opens and closes its own connection (the app's teardown), as a server's does.
    with app.app_context():
        rows = RunFigures.select().count()
        client = app.test_client()
        cpu, wall = time.process_time(), time.perf_counter()
        response = client.get(f"/compare?a={a}&b={b}")
        body = response.get_data()
        took = {"cpu": time.process_time() - cpu, "wall": time.perf_counter() - wall}
        took.update(status=response.status_code, bytes=len(body))
        took["rowsAdded"] = RunFigures.select().count() - rows
        if not database.is_closed():
            database.close()
    print(json.dumps(took))


def comparable(args):
    """Whether full-b's previous comparable run is full-a (by their digests), printed."""
    from bench_full_pages import bench_app

    from app.db.connection import database
    from app.db.models import RunDigest
    from app.runs.queries import get_run

    app = bench_app(args.db)
    a, b = f"full-a-{args.items}", f"full-b-{args.items}"
    with app.app_context(), database.connection_context():
        for run_id in (a, b):
            d = RunDigest.get_or_none(RunDigest.run == get_run(run_id).id)
            print(
                f"{run_id}: "
                + (
                    f"judge {d.judge_key[:12]}… tasks {d.tasks_key} finished {d.finished_at}"
                    if d
                    else "no digest"
                )
            )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True)
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    print(f"source: {ROOT}\ndatabase: {args.db}\nload average at start: {os.getloadavg()}")
    comparable(args)
    run_child(__file__, args, "warm")  # the runs' own figures kept by this code, as after a finish
    warms, views = [], []
    for _ in range(args.repeat):
        warms.append(run_child(__file__, args, "warm"))
        views.append(run_child(__file__, args, "view"))
        print(f"  warm {json.dumps(warms[-1])}\n  view {json.dumps(views[-1])}", flush=True)
    for label, runs in (("warm_run(full-b)", warms), ("compare page, first view", views)):
        cpu = statistics.median(r["cpu"] for r in runs) * 1000
        wall = statistics.median(r["wall"] for r in runs) * 1000
        print(f"{label}: median of {len(runs)}: cpu {cpu:,.0f} ms, wall {wall:,.0f} ms")
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
