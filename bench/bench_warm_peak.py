"""The warm of a big run alone (exports/warm.warm_run), in a fresh process: its peak RSS and the
step of warm_run each part of it was reached in.

Works on a copy of a database bench_full_pages.py seeded (--seed-only), with every kept figure
dropped (as after an upgrade: the code's stamps changed, nothing kept holds), then warms
--run (default: both full runs, a then b, in this one process, as the server's pass does one
run a pass). A thread samples the process's RSS every --every ms and the call of warm_run (or
of the function it called) the main thread is in, so each step gets the highest RSS seen while
it ran, and the CPU it took.

    .venv/bin/python bench/bench_full_pages.py --items 1000000 --db /tmp/1m.db --seed-only
    .venv/bin/python bench/bench_warm_peak.py --db /tmp/1m.db --items 1000000
    BENCH_SRC=/work/main .venv/bin/python bench/bench_warm_peak.py --db /tmp/1m.db ...

Measured 2026-11-28, 1M items a run (4 targets), SQLite, load average 6-14 on 2 shared cores,
base and branch in the same sitting; the bench process holds 88 MiB before the warm (its
imports and the app). main: warm_run(full-a) peak RSS 306 MiB (run_speed 247, summary.json and
report.html 303, A/B pairs 298), CPU 158 s; warm_run(full-b) 309 MiB, 167 s. warmpeak: full-a
peak 204 MiB (run_speed 204, then 139 after give_back; summary/report 161-163; A/B pairs 147),
RSS after 130 MiB, CPU 146 s; its 51 kept rows the same bytes as main's (pygal's chart ids
aside). full-b alone in a fresh process: peak 235 MiB in its compare with full-a (which works
out full-a's compare figures there: main's 278 came after full-a's warm in the same process, so
the two are not alike), its 51 own kept rows the same bytes as main's. The run's speed columns
(~115 MiB over the start) and the compare are now the peaks.

--trace adds tracemalloc (slower, and its own records count in RSS): the Python heap's peak per
step and, with --top N, the biggest allocation sites at the highest peak.
"""

import argparse
import hashlib
import os
import re
import resource
import shutil
import sys
import tempfile
import threading
import time
import tracemalloc
from pathlib import Path

ROOT = Path(os.environ.get("BENCH_SRC") or Path(__file__).resolve().parent.parent)
sys.path.insert(0, str(ROOT))
sys.path.insert(1, str(Path(__file__).resolve().parent))

from bench_full_pages import bench_app  # noqa: E402

from app.db.connection import database  # noqa: E402
from app.db.models import Run  # noqa: E402
from app.db.models import RunFigures  # noqa: E402
from app.db.models import RunSpeed  # noqa: E402
from app.exports import warm  # noqa: E402
from app.results.composite import settings_from  # noqa: E402

PAGE = os.sysconf("SC_PAGE_SIZE")
PYGAL_ID = re.compile(r"chart-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def rss_mib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE / 2**20


def step_of(frame, top_code):
    """The function warm_run (or a helper of warm.py it called) is in: 'name@line'."""
    chain = []
    while frame is not None:
        chain.append(frame)
        frame = frame.f_back
    chain.reverse()
    for n, f in enumerate(chain):
        if f.f_code is top_code and n + 1 < len(chain):
            inner = chain[n + 1]
            if inner.f_code.co_filename == top_code.co_filename and n + 2 < len(chain):
                inner = chain[n + 2]  # a helper of warm.py (_warm_ratings…): its callee
                return f"{chain[n + 1].f_code.co_name}>{inner.f_code.co_name}"
            return f"{inner.f_code.co_name}@{f.f_lineno}"
    return "-"


class Sampler(threading.Thread):
    def __init__(self, every_ms, main_ident, top_code):
        super().__init__(daemon=True)
        self.every = every_ms / 1000
        self.main = main_ident
        self.top = top_code
        self.steps = {}  # step -> [peak RSS, first seen order]
        self.stop = threading.Event()

    def run(self):
        while not self.stop.wait(self.every):
            frame = sys._current_frames().get(self.main)
            step = step_of(frame, self.top) if frame is not None else "-"
            rss = rss_mib()
            if tracemalloc.is_tracing():
                rss = (rss, tracemalloc.get_traced_memory()[1] / 2**20)
                tracemalloc.reset_peak()
            else:
                rss = (rss, 0.0)
            seen = self.steps.setdefault(step, [0.0, 0.0, len(self.steps)])
            seen[0] = max(seen[0], rss[0])
            seen[1] = max(seen[1], rss[1])


def figures_digest(run_ids, dump=None):
    """A hash of every figure and body the warm kept (not their stamps, which hold the code's
    hash, nor the marker's timings): the same on two sources when they keep the same."""
    digest = hashlib.sha256()
    pks = [Run.get(Run.run_id == r).id for r in run_ids]
    rows = (
        RunFigures.select(RunFigures.run, RunFigures.name, RunFigures.figures)
        .where(RunFigures.run.in_(pks) & (RunFigures.name != warm.WARM))
        .order_by(RunFigures.run, RunFigures.name)
        .tuples()
    )
    count = 0
    lines = []
    for run_pk, name, figures in rows:
        figures = PYGAL_ID.sub("chart-*", figures)  # pygal draws each chart with a new uuid
        digest.update(f"{run_pk}|{name}|{figures}\n".encode())
        lines.append(f"{run_pk} {name} {hashlib.sha256(figures.encode()).hexdigest()[:16]}")
        count += 1
    speeds = RunSpeed.select(RunSpeed.run, RunSpeed.figures).where(RunSpeed.run.in_(pks))
    for run_pk, figures in speeds.order_by(RunSpeed.run).tuples():
        digest.update(f"{run_pk}|speed|{figures}\n".encode())
        lines.append(f"{run_pk} speed {hashlib.sha256(figures.encode()).hexdigest()[:16]}")
        count += 1
    if dump:
        Path(dump).write_text("\n".join(lines) + "\n")
    return f"{count} rows, sha256 {digest.hexdigest()[:16]}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", required=True, help="a bench_full_pages.py SQLite file (copied)")
    parser.add_argument("--items", type=int, default=1_000_000)
    parser.add_argument("--run", action="append", help="run ids to warm (default: full-a, full-b)")
    parser.add_argument("--every", type=float, default=5, help="ms between samples")
    parser.add_argument("--trace", action="store_true", help="tracemalloc on")
    parser.add_argument("--top", type=int, default=0, help="with --trace: biggest sites")
    parser.add_argument("--dump", help="a file: each kept row's name and hash")
    parser.add_argument("--keep", action="store_true", help="work on --db itself, not a copy")
    args = parser.parse_args()
    print(f"source: {ROOT}\nload average at start: {os.getloadavg()}", flush=True)
    if args.keep:
        db = Path(args.db)
    else:
        db = Path(tempfile.mkdtemp(prefix="warmpeak-", dir=Path(args.db).parent)) / "w.db"
        shutil.copyfile(args.db, db)
    runs = args.run or [f"full-a-{args.items}", f"full-b-{args.items}"]
    try:
        app = bench_app(db)
        with app.app_context(), database.connection_context():
            for table in ("runfigures", "runspeed"):
                if database.table_exists(table):
                    database.execute_sql(f"DELETE FROM {table}")
            settings = settings_from(app.config)
            start = rss_mib()
            print(f"RSS before the warm: {start:.0f} MiB", flush=True)
            if args.trace:
                tracemalloc.start(25 if args.top else 1)
            for run_id in runs:
                run = Run.get(Run.run_id == run_id)
                sampler = Sampler(args.every, threading.get_ident(), warm.warm_run.__code__)
                sampler.start()
                cpu, wall = time.process_time(), time.perf_counter()
                warm.warm_run(run, settings)
                cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
                sampler.stop.set()
                sampler.join()
                peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
                print(
                    f"\nwarm_run({run_id}): CPU {cpu:.1f} s, wall {wall:.1f} s, "
                    f"RSS after {rss_mib():.0f} MiB, process peak so far {peak:.0f} MiB"
                )
                print("  step                                          peak RSS  py heap")
                for step, (rss, heap, _order) in sorted(
                    sampler.steps.items(), key=lambda kv: kv[1][2]
                ):
                    print(f"  {step:44} {rss:7.0f}   {heap:6.0f}")
                sys.stdout.flush()
            print(f"\nkept figures: {figures_digest(runs, args.dump)}")
            if args.trace and args.top:
                snapshot = tracemalloc.take_snapshot()
                for stat in snapshot.statistics("traceback")[: args.top]:
                    print(stat)
                    for line in stat.traceback.format()[-12:]:
                        print("   ", line)
        if not database.is_closed():
            database.close()
    finally:
        if not args.keep:
            shutil.rmtree(db.parent, ignore_errors=True)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\nprocess peak RSS (ru_maxrss): {peak:.0f} MiB; load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
