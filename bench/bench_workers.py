"""`llmbench worker` on PostgreSQL: throughput with 1-8 worker processes, claim latency with 8
claimers on 100 000 items, and kill -9 during a run (lost items, answers asked twice).

Starts a throwaway PostgreSQL (tests/pg_server.py: fsync off, as the tests run it) and the fake
model server in this process; workers are real `python -m app.cli worker` processes.

    .venv/bin/python bench/bench_workers.py [--only throughput,latency,kills] [--repeats 3]

Prints numbers (medians of --repeats) and the load average, not pass/fail: the machine is shared.
"""

import argparse
import datetime as dt
import multiprocessing
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.clock import utcnow
from app.db.connection import database
from app.db.models import NEW
from app.db.models import WAITING_FOR_JUDGE
from app.db.models import Item
from app.db.models import Run
from app.db.models import RunTarget
from app.engine import claims
from app.engine import lease
from tests import pg_databases
from tests import pg_server
from tests.conftest import TEST_KEY_B64
from tests.conftest import make_app
from tests.engine_helpers import calls
from tests.engine_helpers import make_provider
from tests.engine_helpers import make_tasks
from tests.engine_helpers import start_run
from tests.factories import make_run
from tests.fakeserver import FakeServer

PER_WORKER = 4
LATENCY = 0.2


def load():
    one, five, fifteen = os.getloadavg()
    return f"load {one:.2f} {five:.2f} {fifteen:.2f}"


class Pool:
    """Worker subprocesses on `url`, each logging to a file in `tmp`."""

    def __init__(self, url, tmp, **env):
        self.url, self.tmp = url, Path(tmp)
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("LLMBENCH_")}
        self.env.update(LLMBENCH_MASTER_KEY_BASE64=TEST_KEY_B64, LLMBENCH_SYSMETRICS_SECONDS="0")
        self.env.update({f"LLMBENCH_{k}": str(v) for k, v in env.items()})
        self.procs = []

    def start(self, concurrency=PER_WORKER):
        log = self.tmp / f"worker-{len(self.procs)}.log"
        with open(log, "w") as out:
            proc = subprocess.Popen(
                [sys.executable, "-m", "app.cli", "worker", "--db", self.url, "--quiet"]
                + ["--concurrency", str(concurrency)],
                cwd=ROOT,
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        proc.log = log
        self.procs.append(proc)
        return proc

    def wait_ready(self, procs, timeout=60):
        deadline = time.monotonic() + timeout
        for proc in procs:
            while "llmbench worker" not in proc.log.read_text():
                if proc.poll() is not None or time.monotonic() > deadline:
                    sys.exit(f"a worker did not start: {proc.log.read_text()}")
                time.sleep(0.02)

    def close(self):
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def answered(run):
    return Item.select().where((Item.run == run) & (Item.status == WAITING_FOR_JUDGE)).count()


def fresh(server_url, name, tmp):
    url = pg_databases.create_database(server_url, name)
    make_app(Path(tmp), DB=url)  # migrates; binds this process's database
    return url


def paused_run(fake, items, max_concurrency=64, timeout=30.0):
    """A run of `items` answers waiting (control paused until the workers are up)."""
    provider = make_provider(fake, max_concurrency=max_concurrency, timeout=timeout)
    run = start_run(provider, [(provider, "m1")], make_tasks(items))
    lease.acquire("bench", 3600.0)  # a live orchestrator's lease: the run is not interrupted
    Run.update(control="paused").where(Run.id == run.id).execute()
    return run


def throughput(server_url, fake, tmp, workers, repeat):
    total = workers * PER_WORKER
    items = max(200, int(total / LATENCY * 6))  # about 6 s of work at the limit
    url = fresh(server_url, f"tp_{workers}_{repeat}", tmp)
    fake.reset()
    fake.default_latency = LATENCY
    run = paused_run(fake, items)
    pool = Pool(url, tmp)
    procs = [pool.start() for _ in range(workers)]
    pool.wait_ready(procs)
    Run.update(control="running").where(Run.id == run.id).execute()
    marks = {}
    low, high = int(items * 0.1), int(items * 0.9)
    while True:
        done = answered(run)
        now = time.monotonic()
        if done >= low and "low" not in marks:
            marks["low"] = (now, done)
            cpu0 = psutil.cpu_times()
        if done >= high:
            marks["high"] = (now, done)
            cpu1 = psutil.cpu_times()
            break
        time.sleep(0.01)
    pool.close()
    (t0, d0), (t1, d1) = marks["low"], marks["high"]
    rate = (d1 - d0) / (t1 - t0)
    # The whole machine's CPU over the measured window (workers, PostgreSQL, the fake server,
    # anything else running): near 100 % busy means the cores, not a lock, set the pace.
    spent = sum(cpu1) - sum(cpu0)
    busy = spent - ((cpu1.idle - cpu0.idle) + (cpu1.iowait - cpu0.iowait))
    return rate, rate / (total / LATENCY), fake.max_active, busy / spent, busy / (d1 - d0)


def claim_latency_worker(url, run_id, target_id, provider_id, n, out, limit=64):
    """One claimer process: n claims of one item each, each settled at once; their latencies."""
    from app.db.connection import init_db

    init_db(url)
    times = []
    holder = f"bench:{os.getpid()}"
    with database.connection_context():
        for _ in range(n):
            now = utcnow()
            started = time.perf_counter()
            batch = claims.claim_batch(
                run_id,
                NEW,
                now,
                now + dt.timedelta(seconds=60),
                target_id,
                1,
                holder,
                provider_id,
                limit,
            )
            times.append(time.perf_counter() - started)
            for row in batch:
                claims.update_claimed(row.id, NEW, row.attempts, {"status": WAITING_FOR_JUDGE})
    out.put(times)


SEED_SQL = (
    "INSERT INTO item (run_id, target_id, task_key, category, subcategory, difficulty, question, "
    "excellent, good, pass_answer, incorrect_direction, status, attempts, answer_attempts, "
    "repeat, answer_cut, tokens_estimated, created_at, updated_at) "
    "SELECT ?, ?, 't' || g, '', '', '', 'Question ' || g, '', '', '', '', 'NEW', 0, 0, 0, "
    "false, false, now(), now() FROM generate_series(1, ?) g"
)


def claim_latency(server_url, fake, tmp, claimers=8, items=100_000, per=500, limit=64):
    """`claimers` processes claiming one item at a time (each settled at once) from a run of
    `items`; with `limit` the provider's slots are counted (None: no count, no lock)."""
    url = fresh(server_url, f"latency_{claimers}_{limit or 0}", tmp)
    provider = make_provider(fake, max_concurrency=64)
    run, (target,) = make_run("latency", status="PENDING", control="running", phase="BENCHMARKING")
    RunTarget.update(provider=provider).where(RunTarget.id == target.id).execute()
    database.execute_sql(SEED_SQL, (run.id, target.id, items))
    database.execute_sql("ANALYZE item")
    database.close()
    queue = multiprocessing.Queue()
    procs = [
        multiprocessing.Process(
            target=claim_latency_worker,
            args=(url, run.id, target.id, provider.id, per, queue, limit),
        )
        for _ in range(claimers)
    ]
    for p in procs:
        p.start()
    times = sorted(t for _ in procs for t in queue.get())
    for p in procs:
        p.join()
    p50 = times[len(times) // 2] * 1000
    p99 = times[int(len(times) * 0.99)] * 1000
    return p50, p99, len(times)


def kills(server_url, fake, tmp, items=2000, workers=4, times=5):
    url = fresh(server_url, "kills", tmp)
    fake.reset()
    fake.default_latency = LATENCY
    run = paused_run(fake, items, timeout=5.0)
    pool = Pool(url, tmp, CLAIM_MARGIN_SECONDS=2)
    procs = [pool.start() for _ in range(workers)]
    pool.wait_ready(procs)
    Run.update(control="running").where(Run.id == run.id).execute()
    killed = 0
    in_flight_at_kills = 0
    step = items // (times + 2)
    while killed < times:
        target = step * (killed + 1)
        while answered(run) < target:
            time.sleep(0.01)
        victim = procs[killed % len(procs)]
        in_flight_at_kills += (
            Item.select()
            .where(
                (Item.run == run)
                & (Item.status == NEW)
                & Item.claimed_until.is_null(False)
                & (Item.claimed_by.startswith(f"{os.uname().nodename}:{victim.pid}:"))
            )
            .count()
        )
        victim.send_signal(signal.SIGKILL)
        victim.wait()
        killed += 1
        procs[procs.index(victim)] = pool.start()
    started = time.monotonic()
    while answered(run) < items:
        if time.monotonic() - started > 300:
            break
        time.sleep(0.05)
    lost = items - answered(run)
    pool.close()
    asked = Counter(text for kind, _m, text in calls(fake) if kind == "answer")
    twice = sum(1 for n in asked.values() if n > 1)
    return killed, lost, twice, in_flight_at_kills, len(asked)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", default="throughput,latency,kills")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workers", default="1,2,4,8")
    args = parser.parse_args()
    only = set(args.only.split(","))
    status = pg_server.available()
    if not status:
        sys.exit(status.reason)
    fake = FakeServer()
    fake.start()
    try:
        with pg_server.running_postgres() as server_url, tempfile.TemporaryDirectory() as tmp:
            if "throughput" in only:
                print(f"throughput: N workers x {PER_WORKER}, fake latency {LATENCY * 1000:.0f} ms")
                for n in [int(x) for x in args.workers.split(",")]:
                    results = []
                    for r in range(args.repeats):
                        results.append(throughput(server_url, fake, tmp, n, r))
                    rate = statistics.median(x[0] for x in results)
                    ratio = statistics.median(x[1] for x in results)
                    peak = max(x[2] for x in results)
                    busy = statistics.median(x[3] for x in results)
                    cpu_ms = statistics.median(x[4] for x in results) * 1000
                    print(
                        f"  {n} workers: {rate:7.1f} answers/s = {ratio:.2f} x N/L "
                        f"(N/L {n * PER_WORKER / LATENCY:.0f}/s; "
                        f"runs {[round(x[1], 2) for x in results]}; "
                        f"peak in flight {peak}); CPU {busy:.0%} busy, "
                        f"{cpu_ms:.1f} CPU-ms per answer; {load()}",
                        flush=True,
                    )
            if "latency" in only:
                for claimers in (1, 8):
                    for limit in (64, None):
                        p50, p99, n = claim_latency(server_url, fake, tmp, claimers, limit=limit)
                        how = "provider slots counted" if limit else "no provider count"
                        print(
                            f"claim latency, {claimers} claimer processes in a tight loop, "
                            f"100 000 items, {how}: p50 {p50:.2f} ms, p99 {p99:.2f} ms over "
                            f"{n} claims; {load()}",
                            flush=True,
                        )
            if "kills" in only:
                killed, lost, twice, held, distinct = kills(server_url, fake, tmp)
                print(
                    f"kill -9 one of 4 workers {killed} times during a 2000-item run: lost {lost}, "
                    f"answers asked twice {twice} (claims in flight at the kills: {held}; "
                    f"questions asked {distinct}); {load()}",
                    flush=True,
                )
    finally:
        fake.stop()


if __name__ == "__main__":
    main()
