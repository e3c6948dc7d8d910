"""The results page's first view, in-process, with CPU time beside wall time: each figure the
page works out from every item (nothing kept), then the whole page (and the in-app report)
first (nothing kept, nothing cached: a run's first view ever), warm (its figures kept), and
live (a running run with one item re-judged before each view: its stamp changes, as every
completed item changes it).

Through Flask's test client (server time, no HTTP), so a busy machine's figures still compare:
CPU time is what the page costs, wall time what it waited besides. Medians of --repeat views.
The database is one bench_full_pages.py seeded (--db); each source tree migrates it to its own
schema, so give each tree its own copy:

    cp /tmp/full.db /tmp/full-main.db
    BENCH_SRC=/work/main .venv/bin/python bench/bench_cold_page.py --db /tmp/full-main.db
    .venv/bin/python bench/bench_cold_page.py --db /tmp/full.db
"""

import argparse
import base64
import datetime as dt
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(os.environ.get("BENCH_SRC") or Path(__file__).resolve().parent.parent)
sys.path.insert(0, str(ROOT))

from app.db.connection import database  # noqa: E402
from app.db.models import COMPLETED  # noqa: E402
from app.db.models import CONTROL_RUNNING  # noqa: E402
from app.db.models import PENDING  # noqa: E402
from app.db.models import Item  # noqa: E402
from app.db.models import Run  # noqa: E402
from app.factory import create_app  # noqa: E402
from app.results import averages  # noqa: E402
from app.results import kept  # noqa: E402
from app.results import kept_speed  # noqa: E402
from app.results import speed  # noqa: E402

KEY = base64.b64encode(b"b" * 32).decode()


def nothing_kept():
    """A run's first view ever in a fresh process: no stored figures, no per-process cache."""
    for table in ("runfigures", "runspeed"):
        database.execute_sql(f"DELETE FROM {table}")
    kept.forget()
    kept_speed._cache.clear()
    for name in ("_CI_CACHE", "_GROUPS"):  # (a tree may have either)
        cache = getattr(averages, name, None)
        if cache is not None:
            cache.clear()


def timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return (time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000


def figures(run):
    """Each figure a results page works out from every item, by the functions of this tree."""
    from app.ratings.judge_check import judge_check
    from app.results.composite_figures import _time_figures
    from app.results.system import throughput

    out = [("averages (CIs included)", lambda: averages.compute_averages(run))]
    for by in ("category", "difficulty"):
        out.append((f"breakdown by {by}", lambda by=by: averages.breakdown(run, by)))
    out += [
        ("answer times (composite)", lambda: _time_figures(run)),
        ("throughput", lambda: throughput(run)),
        ("speed", lambda: speed.compute_speed(run)),
        ("judge check", lambda: judge_check(run.run_id)),
    ]
    return out


def median_of(samples):
    return statistics.median(w for w, _ in samples), statistics.median(c for _, c in samples)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True, help="a SQLite file bench_full_pages.py seeded")
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
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
    run_id = f"full-a-{args.items}"
    url = f"/runs/{run_id}/results"
    print(f"source: {ROOT}\ndatabase: {args.db}\nload average at start: {os.getloadavg()}")
    rows = []
    with app.app_context():
        database.connect(reuse_if_open=True)
        client = app.test_client()
        for address in (url, f"/runs/{run_id}/report"):  # templates compiled, modules imported
            client.get(address)
        run = Run.get(Run.run_id == run_id)
        for label, fn in figures(run):
            samples = []
            for _ in range(args.repeat):
                nothing_kept()
                samples.append(timed(fn))
            rows.append((f"figure: {label}", *median_of(samples)))
            print(
                f"  {rows[-1][0]:50} wall {rows[-1][1]:9.1f} ms  CPU {rows[-1][2]:8.1f} ms",
                flush=True,
            )

        def page():
            assert client.get(url).status_code == 200

        for name, address in (("results", url), ("report", f"/runs/{run_id}/report")):

            def view(address=address):
                assert client.get(address).status_code == 200

            samples = []
            for _ in range(args.repeat):
                nothing_kept()
                samples.append(timed(view))
            rows.append((f"{name} page: first view (nothing kept)", *median_of(samples)))
            warm = [timed(view) for _ in range(args.repeat)]
            rows.append((f"{name} page: warm", *median_of(warm)))
            for row in rows[-2:]:
                print(f"  {row[0]:50} wall {row[1]:9.1f} ms  CPU {row[2]:8.1f} ms", flush=True)

        # Live: the run working, one of its items re-judged before each view.
        was = (run.status, run.control, run.finished_at)
        Run.update(status=PENDING, control=CONTROL_RUNNING, finished_at=None).where(
            Run.id == run.id
        ).execute()
        item = Item.select().where((Item.run == run) & (Item.status == COMPLETED)).first()
        samples = []
        try:
            for n in range(args.repeat):
                Item.update(
                    evaluation_score=float(n % 100), updated_at=dt.datetime(2030, 1, 1, 0, 0, n)
                ).where(Item.id == item.id).execute()
                samples.append(timed(page))
        finally:
            Item.update(evaluation_score=item.evaluation_score, updated_at=item.updated_at).where(
                Item.id == item.id
            ).execute()
            Run.update(status=was[0], control=was[1], finished_at=was[2]).where(
                Run.id == run.id
            ).execute()
        rows.append(("results page: live (stamp changed before each view)", *median_of(samples)))
    print(f"load average at the end: {os.getloadavg()}")
    print(f"\n{args.items:,} items a run; medians of {args.repeat}; source {ROOT}\n")
    print("| what | wall ms | CPU ms |\n|---|---|---|")
    for label, wall, cpu in rows:
        print(f"| {label} | {wall:.1f} | {cpu:.1f} |")


if __name__ == "__main__":
    main()
