"""Every page a person visits for a big run, as a browser gets it, over HTTP from `llmbench serve`.

Seeds two runs of --items items (realistic rows as bench_deep_pages.seed makes them: a few percent
still waiting or failed; plus a few hundred ratings and A/B votes, and the digest a finished run
gets) into a fresh SQLite file, or with --pg into a throwaway PostgreSQL (tests/pg_server.py:
initdb in /dev/shm, its own port, removed at the end). Then starts `python -m app.cli serve`
(gunicorn, as the README does) on a free port and times each page's first load (the first GET
after the server started) and warm (the median of --repeat GETs after it): the dashboard, the
runs list, the run's own page, the results page (page 1, a deep page by its Next link, sorted,
filtered) and the charts it shows, an item's page, the in-app report, the judge check, Evaluate
and Labels on the run, Compare and A/B of the two runs, the leaderboard, trends, and the files
people download (results CSV, averages CSV, Markdown, summary.json, report.html, report CSV,
compare Markdown). After each page: the server worker's RSS; at the end its peak (VmHWM).

    .venv/bin/python bench/bench_full_pages.py                 # 100 000 items, SQLite
    .venv/bin/python bench/bench_full_pages.py --items 1000000 --repeat 3
    .venv/bin/python bench/bench_full_pages.py --pg            # the same on PostgreSQL
    .venv/bin/python bench/bench_full_pages.py --db /tmp/full.db   # kept, reused by a 2nd run
    BENCH_SRC=/work/main .venv/bin/python bench/bench_full_pages.py --db /tmp/full.db
    .venv/bin/python bench/bench_full_pages.py --db postgresql://postgres@127.0.0.1:PORT/db

Seeding streams the rows in chunks (bounded memory): prepared multi-row INSERTs on SQLite
(db.connection.insert_rows), COPY on PostgreSQL (then the kept counts folded and VACUUM ANALYZE,
as a live server's autovacuum would have done). A page whose first load takes longer than
--slow seconds gets one warm GET instead of --repeat (a 1M-row CSV takes minutes).

On PostgreSQL the server worker's CPU leaves out the database's own work, so each page also
gets "pg CPU": the CPU time of the postmaster of the URL's port and every process under it
(backends, parallel workers, their exited children), read from /proc, over the same GET.
"""

import argparse
import base64
import contextlib
import datetime as dt
import importlib
import json
import os
import random
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from html import unescape
from pathlib import Path

import psutil
import requests

ROOT = Path(os.environ.get("BENCH_SRC") or Path(__file__).resolve().parent.parent)
sys.path.insert(0, str(ROOT))
sys.path.insert(1, str(Path(__file__).resolve().parent))

from bench_deep_pages import T0  # noqa: E402
from bench_deep_pages import WORDS  # noqa: E402
from bench_deep_pages import first_target_of  # noqa: E402

from app.db.connection import database  # noqa: E402
from app.db.connection import insert_rows  # noqa: E402
from app.db.models import FINISHED  # noqa: E402
from app.db.models import HUMAN  # noqa: E402
from app.db.models import JUDGING  # noqa: E402
from app.db.models import PENDING  # noqa: E402
from app.db.models import Item  # noqa: E402
from app.db.models import Rating  # noqa: E402
from app.db.models import Run  # noqa: E402
from app.db.models import RunTarget  # noqa: E402
from app.db.models import Vote  # noqa: E402
from app.factory import create_app  # noqa: E402
from app.results.composite import settings_from  # noqa: E402
from app.runs import counts  # noqa: E402
from app.schedules.digest import digest_run  # noqa: E402
from tests import pg_server  # noqa: E402

KEY = base64.b64encode(b"b" * 32).decode()
NEXT = re.compile(r'rel="next" href="([^"]+)"')
IMAGES = re.compile(r'<img src="([^"]+\.svg[^"]*)"')
CHUNK = 5000  # rows a statement (SQLite) or a COPY batch: memory stays flat at any size
RATINGS = 400
VOTES = 300


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def item_rows(run_pk, target_pks, size, rng):
    """Dicts of `size` items over the targets, generated lazily (as bench_deep_pages.seed)."""
    answers = [" ".join(rng.choice(WORDS) for _ in range(60)) for _ in range(64)]
    reasons = [" ".join(rng.choice(WORDS) for _ in range(25)) for _ in range(64)]
    targets = len(target_pks)
    per_target = size // targets
    done_until = int(per_target * 0.955)  # the rest: waiting for the judge, then NEW
    for t, target in enumerate(target_pks):
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
            yield {
                "run": run_pk,
                "target": target,
                "task_key": f"task-{n:07d}",
                "category": ("math", "code", "writing", "facts", "safety")[n % 5],
                "difficulty": ("easy", "medium", "hard")[n % 3],
                "question": f"Question {n}: {answers[(n + 7) % 64][:200]}",
                "status": status,
                "error_stage": "judge" if judge_failed else "answer" if answer_failed else None,
                "error_msg": "judge returned invalid JSON"
                if judge_failed
                else "HTTP 500 from the server"
                if answer_failed
                else None,
                "attempts": 0 if kind == "new" else 1 + (n % 50 == 0),
                "answer": answers[n % 64] if answered else None,
                "time_taken_ms": rng.uniform(200, 9000) if answered else None,
                "ttft_ms": rng.uniform(20, 400) if answered else None,
                "tokens_generated": rng.randint(20, 800) if answered else None,
                "prompt_tokens": rng.randint(20, 300) if answered else None,
                "tokens_per_second": rng.uniform(5, 120) if answered else None,
                "cost_usd": rng.uniform(0, 0.002) if answered else None,
                "evaluation_score": float(rng.randint(0, 100)) if scored else None,
                "evaluation_reason": reasons[n % 64] if scored else None,
                "judge_ms": rng.uniform(300, 3000) if scored else None,
                "last_attempt_at": None if kind == "new" else at,
                "answered_at": at if answered else None,
                "judged_at": at + dt.timedelta(seconds=2) if scored else None,
                "created_at": T0,
                "updated_at": T0 if kind == "new" else at + dt.timedelta(seconds=2),
            }


def chunks(rows, size=CHUNK):
    chunk = []
    for row in rows:
        chunk.append(row)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def copy_rows(model, rows):
    """PostgreSQL: COPY dicts (every row the same keys) into `model`'s table, defaults filled
    in as insert_rows fills them; the fastest way in, a chunk at a time."""
    meta = model._meta
    first = next(rows, None)
    if first is None:
        return
    keys = {meta.fields[key]: key for key in first}
    given = [f for f in meta.sorted_fields if f in keys]
    absent = [f for f in meta.sorted_fields if f not in keys and f in meta.defaults]
    defaults = [
        (f, meta.defaults[f]() if callable(meta.defaults[f]) else meta.defaults[f]) for f in absent
    ]
    columns = ", ".join(f'"{f.column_name}"' for f in given + absent)
    own = [(keys[f], f.db_value) for f in given]
    constants = tuple(f.db_value(value) for f, value in defaults)
    cursor = database.cursor()
    with cursor.copy(f'COPY "{meta.table_name}" ({columns}) FROM STDIN') as copy:
        for row in _chain(first, rows):
            copy.write_row(tuple(db_value(row[key]) for key, db_value in own) + constants)


def _chain(first, rest):
    yield first
    yield from rest


def copy_items(source, run_pk, target, salt):
    """Copy target `source`'s items to `target` of run `run_pk` in one INSERT … SELECT (no
    Python per row), the scores, times and rates changed a little by the item's id and `salt`
    (an expression both SQLite and PostgreSQL compute alike)."""
    changed = {
        "run_id": "?",
        "target_id": "?",
        "evaluation_score": f"CASE WHEN evaluation_score IS NULL THEN NULL ELSE "
        f"(CAST(evaluation_score AS INTEGER) + (id * 7919 + {salt * 13}) % 41 + 81) % 101 END",
        "time_taken_ms": f"time_taken_ms * (0.6 + ((id + {salt}) % 9) * 0.1)",
        "ttft_ms": f"ttft_ms * (0.7 + ((id + {salt}) % 7) * 0.1)",
        "tokens_per_second": f"tokens_per_second * (0.7 + ((id * 3 + {salt}) % 7) * 0.1)",
    }
    columns = [f.column_name for f in Item._meta.sorted_fields if f.column_name != "id"]
    names = ", ".join(f'"{c}"' for c in columns)
    values = ", ".join(changed.get(c, f'"{c}"') for c in columns)
    sql = f'INSERT INTO "item" ({names}) SELECT {values} FROM "item" WHERE target_id = ?'
    database.execute_sql(sql, (run_pk, target, source))


def seed(run_id, size, rng, targets=4, clone_of=None):
    """One finished run of `size` items over `targets` targets, with ratings and votes. The
    first target's items are made row by row, the others are copies with their figures changed
    (copy_items); with `clone_of` (the target ids of a seeded run) every target is a copy."""
    run = Run.create(
        run_id=run_id,
        name=run_id,
        judge_provider_name="judge",
        judge_model="j1",
        status=PENDING,
        phase="BENCHMARKING",
        created_at=T0,
        started_at=T0,
        max_concurrency=4,
    )
    target_pks = [
        RunTarget.create(
            run=run, provider_name="local" if m % 2 else "remote", model=f"model-{m}", position=m
        ).id
        for m in range(targets)
    ]
    with database.atomic():
        if clone_of is None:
            # The first target's items made in Python, the others copied from them in SQL.
            rows = item_rows(run.id, target_pks[:1], size // targets, rng)
            if database.is_postgres:
                copy_rows(Item, rows)
            else:
                for chunk in chunks(rows):
                    insert_rows(Item, chunk)
            sources = {target_pks[0]: target_pks[1:]}
        else:
            sources = {old: [new] for old, new in zip(clone_of, target_pks, strict=True)}
        for source, copies in sources.items():
            for n, target in enumerate(copies, 1):
                copy_items(source, run.id, target, n)
    # A few hundred ratings (the judge check, human agreement) and A/B votes (the leaderboard).
    done = (
        Item.select(Item.id, Item.target, Item.task_key, Item.evaluation_score)
        .where((Item.run == run.id) & (Item.status == "COMPLETED"))
        .order_by(Item.id)
        .limit(RATINGS)
        .tuples()
    )
    ratings = [
        {
            "item": item_id,
            "run": run.id,
            "rating": 1 + int(score or 0) // 21 if rng.random() < 0.8 else rng.randint(1, 5),
            "rater": HUMAN,
            "created_at": T0,
            "updated_at": T0,
        }
        for item_id, _target, _task, score in done
    ]
    insert_rows(Rating, ratings)
    per_target = size // targets
    pairs = (
        Item.select(Item.id, Item.target, Item.task_key)
        .where((Item.run == run.id) & Item.target.in_(target_pks[:2]))
        .where(Item.task_key.in_([f"task-{n:07d}" for n in range(min(VOTES, per_target))]))
        .order_by(Item.task_key, Item.target)
        .tuples()
    )
    by_task = {}
    for item_id, target, task in pairs:
        by_task.setdefault(task, []).append((item_id, target))
    votes = []
    for task, found in by_task.items():
        if len(found) != 2:
            continue
        (left, left_t), (right, right_t) = found
        winner = rng.choice(("LEFT", "RIGHT", "TIE"))
        votes.append(
            {
                "left_item": left,
                "right_item": right,
                "item_low": min(left, right),
                "item_high": max(left, right),
                "left_target": left_t,
                "right_target": right_t,
                "task_key": task,
                "winner": winner,
                "winner_target": {"LEFT": left_t, "RIGHT": right_t}.get(winner),
                "source": HUMAN,
                "voter": HUMAN,
                "created_at": T0,
            }
        )
    insert_rows(Vote, votes)
    # Finished, as a run people look back at, and digested as the scheduler digests it (its
    # aggregates feed trends; doing it here keeps the scheduler out of the timed walk).
    Run.update(status=FINISHED, phase=JUDGING, finished_at=T0).where(Run.id == run.id).execute()
    counts.fold()
    digest_run(Run.get_by_id(run.id))
    return target_pks


def run_child(script, args, mode, out=None, show_stderr=False):
    """The JSON a bench `script`'s child printed last: the script run again as
    `--child MODE --db DB --items N [--out OUT]` (a process of its own, so its CPU and memory
    are the step's alone); exits with its stderr when it failed."""
    command = [sys.executable, str(script), "--child", mode, "--db", args.db]
    command += ["--items", str(args.items)] + (["--out", out] if out else [])
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode:
        sys.exit(f"{mode} failed:\n{done.stderr[-4000:]}")
    if show_stderr:
        print(done.stderr)
    return json.loads(done.stdout.strip().splitlines()[-1])


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


def seeded(db, items, kept=False):
    """Seed runs full-a and full-b of `items` items into `db` unless they are there; returns
    their ids and run a's first two target ids."""
    app = bench_app(db)
    rng = random.Random(1)
    runs = (f"full-a-{items}", f"full-b-{items}")
    with app.app_context(), database.connection_context():
        if not database.is_postgres:
            # A million rows' index entries: SQLite's 8 MB page cache turned the copy into
            # random disk I/O (40 min for one run); 1 GB keeps the indexes in memory.
            database.execute_sql("PRAGMA cache_size = -1000000")
        source = None
        for run_id in runs:
            if first_target_of(run_id) is None:
                started = time.perf_counter()
                source = seed(run_id, items, rng, clone_of=source)
                print(f"seeded {run_id} in {time.perf_counter() - started:.0f} s", flush=True)
                if database.is_postgres:
                    started = time.perf_counter()
                    database.execute_sql("VACUUM ANALYZE")
                    print(f"VACUUM ANALYZE in {time.perf_counter() - started:.0f} s", flush=True)
        first = first_target_of(runs[0])
        if not kept:  # derived rows (a source tree without them has no such tables)
            for table in ("runfigures", "runspeed", "keptfigures"):
                if database.table_exists(table):
                    database.execute_sql(f"DELETE FROM {table}")
        item = (
            Item.select(Item.id)
            .where((Item.target == first) & (Item.status == "COMPLETED"))
            .order_by(Item.id.desc())
            .scalar()
        )
    if not database.is_closed():
        database.close()
    return runs, (first, first + 1), item


def warm_runs(db, runs):
    """Warm both runs as the scheduler's pass does when a run finishes (exports/warm.py), timed:
    work the machine does before anyone looks, not while a person waits. A source without it
    (main before) is timed cold."""
    try:
        warming = importlib.import_module("app.exports.warm")
    except ImportError:
        print("no warm step in this source: first loads are cold", flush=True)
        return
    app = bench_app(db)
    with app.app_context(), database.connection_context():
        for run_id in runs:
            run = Run.get(Run.run_id == run_id)
            cpu, started = time.process_time(), time.perf_counter()
            warming.keep_warm(run, settings_from(app.config))
            print(
                f"warmed {run_id} in {time.perf_counter() - started:.1f} s"
                f" (CPU {time.process_time() - cpu:.1f} s)",
                flush=True,
            )
    if not database.is_closed():
        database.close()


def start_server(db, port, log):
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "LLMBENCH_DB": str(db),
        "LLMBENCH_MASTER_KEY_BASE64": KEY,
        "LLMBENCH_SYSMETRICS_SECONDS": "0",
    }
    command = [sys.executable, "-m", "app.cli", "serve", "--port", str(port)]
    server = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=log)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            probe = requests.get(f"http://127.0.0.1:{port}/static/app.css", timeout=30)
            if probe.status_code < 500:
                return server
        except (requests.ConnectionError, requests.Timeout):  # not up yet, or busy starting
            time.sleep(0.2)
    server.kill()
    sys.exit(f"the server did not start: see {log.name}")


def worker(server):
    """The gunicorn worker (the arbiter's child), where the pages are made."""
    children = psutil.Process(server.pid).children(True)
    return children[-1] if children else psutil.Process(server.pid)


def settled(proc, quiet_ms=20, limit_s=60):
    """Wait until the worker's start-up work is done (it compiles every page template on a
    thread, about 1.5 s of CPU): the walk times what a person arriving then waits for, not
    that thread's CPU, which the worker's CPU counts too."""
    deadline = time.monotonic() + limit_s
    last = cpu_mark(proc)
    while time.monotonic() < deadline:
        time.sleep(1.0)
        if cpu_ms(proc, since=last) < quiet_ms:
            return
        last = cpu_mark(proc)


def memory_mib(proc):
    """(RSS now, peak RSS) of `proc` in MiB."""
    status = Path(f"/proc/{proc.pid}/status").read_text()
    now = int(re.search(r"VmRSS:\s+(\d+)", status)[1]) / 1024
    peak = int(re.search(r"VmHWM:\s+(\d+)", status)[1]) / 1024
    return now, peak


def thread_cpu_ns(proc):
    """{thread id: nanoseconds it ran} of `proc`'s live threads (schedstat), or None where the
    kernel gives no schedstat."""
    times = {}
    for task in Path(f"/proc/{proc.pid}/task").iterdir():
        try:
            times[task.name] = int((task / "schedstat").read_text().split()[0])
        except (OSError, ValueError, IndexError):  # a thread gone meanwhile, or no schedstat
            continue
    return times or None


def cpu_ms(proc, since=None):
    """The worker's CPU time in ms (since=None), or its CPU since `since` (an earlier
    cpu_mark): per thread, so a thread that ended in between (serve's scheduler starts a
    short-lived warm pass every 2 s) takes nothing away: a sum of the live threads'
    times went down by that thread's whole time and read a page's CPU as -3 ms. Its user +
    system time in 10 ms ticks where there is no schedstat (a page of 20 ms then reads 10 or
    30, and medians of a few GETs hide a change of a few ms)."""
    now = cpu_mark(proc)
    if since is None:
        return now[1] if now[0] is None else sum(now[0].values()) / 1e6
    before, after = since[0], now[0]
    if before is None or after is None:
        return now[1] - since[1]
    return sum(ns - before.get(tid, 0) for tid, ns in after.items()) / 1e6


def cpu_mark(proc):
    """What cpu_ms(proc, since=...) measures from: each thread's ns, and the process's ms."""
    times = proc.cpu_times()
    return thread_cpu_ns(proc), (times.user + times.system) * 1000


def postmaster_of(db):
    """The postmaster serving PostgreSQL URL `db` (a local one: its port on our command
    line), or None for SQLite or a server this machine does not run."""
    port = re.search(r"@[^:/]+:(\d+)/", str(db))
    if not str(db).startswith("postgresql") or not port:
        return None
    for proc in psutil.process_iter(["name", "cmdline"]):
        cmdline = proc.info["cmdline"] or []
        if proc.info["name"] == "postgres" and port[1] in cmdline and "-p" in cmdline:
            return proc
    return None


def cluster_cpu_ms(postmaster):
    """CPU ms of the postmaster, its exited children (cutime) and its live children: all the
    work PostgreSQL did, backends and parallel workers alike. 0 without a postmaster."""
    if postmaster is None:
        return 0.0
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    pids = [postmaster.pid]
    with contextlib.suppress(psutil.NoSuchProcess):
        pids += [child.pid for child in postmaster.children()]
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # a parallel worker gone since: its time is in the cutime read next
            continue
        # utime stime cutime cstime: fields 14-17 of stat, 12-15 after "pid (comm)"
        total += sum(int(v) for v in fields[11 : 15 if pid == postmaster.pid else 13])
    return total * 1000 / ticks


def get(session, url, proc, postmaster=None):
    """GET `url` whole (a download streamed to the end); (ms, status, size, server CPU ms,
    PostgreSQL CPU ms)."""
    cpu, pg = cpu_mark(proc), cluster_cpu_ms(postmaster)
    started = time.perf_counter()
    response = session.get(url, stream=True)
    size = 0
    for block in response.iter_content(1 << 16):
        size += len(block)
    ms = (time.perf_counter() - started) * 1000
    pg = cluster_cpu_ms(postmaster) - pg
    return ms, response.status_code, size, cpu_ms(proc, since=cpu), pg


def pages_of(base, runs, targets, item, items):
    run_a, run_b = runs
    results = base + f"/runs/{run_a}/results"
    t_a, t_b = targets
    return [
        ("dashboard", base + "/"),
        ("runs list", base + "/runs/"),
        ("run page", base + f"/runs/{run_a}"),
        ("results page 1", results),
        ("results deep page (Next)", ("next", f"{results}?page={items // 50 // 2}")),
        ("results sorted score desc", results + "?sort=score&dir=desc"),
        ("results filtered category", results + "?category=math"),
        ("results filtered status", results + "?status=judge_failed"),
        ("results charts (each img)", ("images", results)),
        ("item page", base + f"/runs/{run_a}/items/{item}"),
        ("report", base + f"/runs/{run_a}/report"),
        ("judge check", base + f"/runs/{run_a}/judge-check"),
        ("evaluate (run)", base + f"/evaluate?run={run_a}"),
        ("labels (run)", base + f"/labels?run={run_a}"),
        ("compare a/b", base + f"/compare?a={run_a}&b={run_b}"),
        ("A/B", base + f"/ab?runA={run_a}&targetA={t_a}&targetB={t_b}"),
        ("leaderboard", base + "/leaderboard"),
        ("trends", base + "/trends"),
        ("speed API", base + f"/api/runs/{run_a}/speed"),
        ("export averages.csv", base + f"/runs/{run_a}/averages.csv"),
        ("export summary.json", base + f"/runs/{run_a}/summary.json"),
        ("export report.csv", base + f"/runs/{run_a}/report.csv"),
        ("export compare.md", base + f"/compare.md?a={run_a}&b={run_b}"),
        ("export report.html", base + f"/runs/{run_a}/report.html"),
        ("export results.md", base + f"/runs/{run_a}/results.md"),
        ("export results.csv", base + f"/runs/{run_a}/results.csv"),
    ]


def walk(base, pages, proc, repeat, slow, postmaster=None):
    """Time every page (first load, warm median); prints a line each, with the worker's RSS
    (and PostgreSQL's CPU, given its postmaster)."""
    session = requests.Session()
    rows = []
    for label, url in pages:
        urls = [url]
        if isinstance(url, tuple):
            kind, source = url
            html = session.get(source).text
            if kind == "next":
                urls = [base + unescape(NEXT.search(html)[1])]
            else:
                urls = [base + unescape(src) for src in dict.fromkeys(IMAGES.findall(html))]
        for target in urls:
            name = label if len(urls) == 1 else f"  img {target.split('/')[-1]}"
            first, status, size, first_cpu, first_pg = get(session, target, proc, postmaster)
            assert status == 200, (target, status)
            warm, warm_cpu, warm_pg = [], [], []
            for _ in range(1 if first > slow * 1000 else repeat):
                ms, status, _size, cpu, pg = get(session, target, proc, postmaster)
                assert status == 200, (target, status)
                warm.append(ms)
                warm_cpu.append(cpu)
                warm_pg.append(pg)
            rss, peak = memory_mib(proc)
            row = (name, first, first_cpu, statistics.median(warm), statistics.median(warm_cpu))
            pg_cpu = (first_pg, statistics.median(warm_pg))
            rows.append((*row, len(warm), size, rss, pg_cpu))
            pg_note = f" pg {first_pg:6.0f}/{pg_cpu[1]:6.0f}" if postmaster else ""
            print(
                f"  {name:30} first {first:8.0f} ms (cpu {first_cpu:7.0f})  warm p50 {row[3]:8.0f}"
                f" ms (cpu {row[4]:7.0f}, n={len(warm)}){pg_note}  {size / 1024:7.0f} KiB"
                f"  RSS {rss:4.0f} MiB (peak {peak:.0f})",
                flush=True,
            )
    return rows


def measure(db, args):
    started = time.perf_counter()
    runs, targets, item = seeded(db, args.items, args.kept)
    print(f"ready in {time.perf_counter() - started:.0f} s", flush=True)
    if args.seed_only:
        return
    if not args.cold:
        warm_runs(db, runs)
    port = free_port()
    log_path = Path(tempfile.mkdtemp(prefix="llmbench-full-")) / "server.log"
    log = open(log_path, "w")  # noqa: SIM115 - open for the server's whole life
    server = start_server(db, port, log)
    base = f"http://127.0.0.1:{port}"
    pages = pages_of(base, runs, targets, item, args.items)
    skipped = [word for word in args.skip.split(",") if word]
    pages = [(label, url) for label, url in pages if not any(w in label for w in skipped)]
    only = [word for word in args.only.split(",") if word]
    pages = [(label, url) for label, url in pages if not only or any(w in label for w in only)]
    postmaster = postmaster_of(db)
    try:
        proc = worker(server)
        settled(proc)
        start_rss, _ = memory_mib(proc)
        print(f"server worker RSS after start: {start_rss:.0f} MiB", flush=True)
        cpu_before = proc.cpu_times()
        rows = walk(base, pages, proc, args.repeat, args.slow, postmaster)
        cpu_after = proc.cpu_times()
        end_rss, peak = memory_mib(proc)
    finally:
        server.terminate()
        server.wait(30)
        log.close()
    cpu = (cpu_after.user - cpu_before.user) + (cpu_after.system - cpu_before.system)
    print(f"\nload average at the end: {os.getloadavg()}")
    kind = "PostgreSQL" if str(db).startswith("postgresql") else "SQLite"
    print(f"{args.items:,} items a run, {kind}; warm = median of up to {args.repeat}; ROOT {ROOT}")
    print(f"server CPU over the walk: {cpu:.1f} s\n")
    print("server CPU: the worker's CPU time over the GET (not PostgreSQL's own), from schedstat")
    if postmaster:
        print("pg CPU: PostgreSQL's CPU over the same GET (postmaster and every backend)")
    pg_head = " pg CPU first / warm ms |" if postmaster else ""
    print(
        f"\n| page | first load ms (CPU) | warm p50 ms (CPU) |{pg_head} size KiB"
        " | worker RSS after, MiB |"
    )
    print("|---|---|---|---|---|" + ("---|" if postmaster else ""))
    for label, first, first_cpu, warm, warm_cpu, n, size, rss, pg_cpu in rows:
        pg_cell = f" {pg_cpu[0]:.0f} / {pg_cpu[1]:.0f} |" if postmaster else ""
        print(
            f"| {label.strip()} | {first:.0f} ({first_cpu:.0f}) | {warm:.0f} ({warm_cpu:.0f})"
            f"{'' if n > 1 else ' n=1'} |{pg_cell} {size / 1024:.0f} | {rss:.0f} |"
        )
    print(
        f"\nserver worker RSS: {start_rss:.0f} MiB after start, {end_rss:.0f} MiB after the "
        f"walk, peak {peak:.0f} MiB"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--db",
        default=None,
        help="SQLite file, or a postgresql:// URL, to seed or reuse (kept)",
    )
    parser.add_argument(
        "--pg",
        action="store_true",
        help="seed and serve a throwaway PostgreSQL (tests/pg_server.py), removed at the end",
    )
    parser.add_argument(
        "--kept",
        action="store_true",
        help="keep the figures stored by an earlier run of the bench (first load: after a "
        "restart), else drop them (first load: the run's first view ever)",
    )
    parser.add_argument("--skip", default="", help="comma-separated words of pages to leave out")
    parser.add_argument("--only", default="", help="comma-separated words: only these pages")
    parser.add_argument(
        "--slow", type=float, default=20, help="seconds: a slower first load gets one warm GET"
    )
    parser.add_argument("--seed-only", action="store_true", help="seed --db, time nothing")
    parser.add_argument(
        "--cold",
        action="store_true",
        help="do not warm the runs before the walk (exports/warm.py, as a finished run is)",
    )
    args = parser.parse_args()
    print(f"source: {ROOT}\nload average at start: {os.getloadavg()}", flush=True)
    if args.db and args.db.startswith("postgresql"):
        print(f"database: {args.db}", flush=True)
        measure(args.db, args)
        return
    if not args.pg:
        db = Path(args.db or Path(tempfile.mkdtemp(prefix="llmbench-full-")) / "full.db")
        print(f"database: {db}", flush=True)
        measure(db, args)
        return
    status = pg_server.available()
    if not status:
        sys.exit(status.reason)
    with pg_server.running_postgres(database="llmbench_full") as url:
        print(f"database: {url}", flush=True)
        measure(url, args)


if __name__ == "__main__":
    main()
