"""Per-call overhead, peak memory and throughput of `llmbench run`, against the HTTP floor.

N tasks x 2 targets, each answer judged once (4 N calls), on the fake server in this process
(real HTTP on 127.0.0.1). Every measured program runs in a child process of its own, so its CPU
time (rusage) is its own and the fake server's is not in it:

- floor: a plain `requests.Session` per thread (4 threads) sending the same 4 N calls;
- llmbench: `llmbench run -c config.yml --quiet` (provider max_concurrency 4) on a fresh db;
- baseline (--baseline DIR): the same from another source tree (`git archive main | tar -x`).

They alternate, medians of --runs. Calls are of two kinds, as many of each: answers (llmbench
streams them, SSE) and judgements (plain JSON); every figure per call is over both kinds.

The first table is the whole command: wall ms (start-up and the end included, as issue 9
counts it), the engine's own ms (the run's created_at -> finished_at in its database), CPU ms
(user + sys of the child, from rusage), each over the floor. Its CPU and wall include what is
not per call (imports, the dataset import, the end's warm exports: ~20 % of a 12k-call run's
CPU), while the floor times only its calls. Peak RSS is the child's own.

The second table is llmbench's own process while it calls (issue 33's per-call figure): the
child samples its CPU (time.process_time, every thread of it) beside the wall clock every
20 ms, and its CPU from its first model call to its last (their arrival at the fake server)
is divided by the calls between them. Against two floors, each timing only its calls: every
call plain JSON, and the answers streamed as llmbench asks for them (each SSE event's JSON
read), the judgements plain. The fake server's CPU is in none of the figures.

Throughput: the fake answering in 200 ms, concurrency 16 for answers and judgements: calls per
second in each phase against the limit 16 / 0.2 s = 80/s (issue 9: >= 0.9 of it).

    .venv/bin/python bench/bench_overhead.py [--tasks 300,1500,3000] [--runs 3]
        [--baseline DIR] [--throughput-tasks 400] [--no-throughput] [--no-psycopg]

With two sizes or more it also prints each tool's cost per call over the floor between the
smallest and the largest: (its growth - the floor's growth) / calls added, so start-up, the
dataset import and the end cancel out and what is left is the engine's own cost per call.

Measured 2026-11-28 (issue 33), `--tasks 3000 --runs 2` and `--tasks 15000 --baseline main`
at load 4-10: CPU ms per call over the floor at 12k calls +0.88 against main's +2.41, at 60k
+0.82 against +2.38 (wall +1.04 / +2.62 and +0.51 / +2.37); between the sizes +0.81 against
+2.37. At load 15-30 wall time doubled within one run and said nothing; CPU still did.

Measured 2026-11-28 15:37-15:47 (branch percall3 against main at 3e45272, `--tasks 750,3000
--runs 3`, load 2-7), llmbench's own CPU per call while it calls: 3k calls 2.26 ms (main 2.35)
against the floor's 1.75 (+0.51 / +0.60), the streamed floor's 1.62 (+0.64 / +0.72); 12k calls
2.29 (main 2.40) against 1.38 (+0.92 / +1.03) and 1.41 (+0.89 / +1.00). Run-to-run spread
+-0.3 ms: the two trees are within it. Most of what is left is the SQLite record and claim
(~0.9 ms of worker-thread CPU per call at load ~20, each section timed by its thread's CPU
clock), not the Python around them.

--no-psycopg runs llmbench as a SQLite-only install would (psycopg not importable): peewee and
app/db.py import psycopg when it is installed, and its libpq and OpenSSL cost ~20 MiB of RSS.
Kept out of the test suite.
"""

import argparse
import base64
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests import fakeserver

KEY = base64.b64encode(b"k" * 32).decode()
CONCURRENCY = 4
LATENCY = 0.2
WIDE = 16
JUDGEMENT = '{"score": 80, "reason": "fake judge"}'
NO_PSYCOPG = "import sys; sys.modules['psycopg'] = None; "


# The child writes its own peak RSS (VmHWM) when it exits: ru_maxrss from wait4 also counts the
# pages a child was forked with, before its exec, so a parent grown by the fake server's calls
# would floor every figure. It also samples its own CPU time (time.process_time: every thread
# of its process, none of the fake server's) beside the wall clock every SAMPLE_SECONDS, and
# writes the samples at exit: the CPU it spent between its first model call and its last is
# read from them (cpu_between), without its start-up, dataset import and end.
SAMPLE_SECONDS = 0.02
PRELUDE = f"""
import atexit, os, threading, time
_samples = []
def _sample():
    while True:
        _samples.append((time.time(), time.process_time()))
        time.sleep({SAMPLE_SECONDS})
threading.Thread(target=_sample, daemon=True, name="bench-cpu-sampler").start()
def _write():
    _samples.append((time.time(), time.process_time()))
    with open(os.environ['BENCH_CPU'], 'w') as out:
        out.write(''.join(f'{{w!r}} {{c!r}}\\n' for w, c in _samples))
    with open(os.environ['BENCH_HWM'], 'w') as out:
        out.write(open('/proc/self/status').read())
atexit.register(_write)
"""


def llmbench_command(no_psycopg):
    return [
        sys.executable,
        "-c",
        PRELUDE + (NO_PSYCOPG if no_psycopg else "") + "from app.cli import main; main()",
    ]


def cpu_samples(path):
    """[(wall time.time(), CPU s)] the child sampled, in order."""
    return [tuple(map(float, line.split())) for line in Path(path).read_text().splitlines()]


def cpu_at(samples, when):
    """The child's CPU seconds at wall time `when`, between the two samples around it."""
    for (w0, c0), (w1, c1) in zip(samples, samples[1:], strict=False):
        if w0 <= when <= w1:
            return c0 + (c1 - c0) * ((when - w0) / (w1 - w0) if w1 > w0 else 0.0)
    return samples[0][1] if when < samples[0][0] else samples[-1][1]


def cpu_between(samples, calls):
    """(wall s, CPU s, calls) from the first of `calls` to the last as the fake server got
    them (their arrival, time.time() there): the child's own time while it made them."""
    times = sorted(c["wall"] for c in calls)
    if len(times) < 2:
        return 0.0, 0.0, 0
    first, last = times[0], times[-1]
    return last - first, cpu_at(samples, last) - cpu_at(samples, first), len(times) - 1


def own_peak(path):
    """VmHWM (MiB) from the /proc/self/status the child wrote at exit."""
    for line in Path(path).read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024.0
    raise SystemExit(f"no VmHWM in {path}")


def write_bank(path, n):
    """A seed 004 JSONL bank of n tasks, as tests/cli_helpers.write_bank writes it. Not
    imported from there: that imports the app, and a child's peak RSS (ru_maxrss) counts the
    parent's pages it was forked with, so a heavy parent inflates every figure."""
    lines = [
        json.dumps(
            {
                "id": f"q{i:02d}",
                "category": ("Water", "Fire")[i % 2],
                "difficulty": "Easy",
                "scenario": [],
                "prompt": f"Question {i}?",
                "rubric": [],
                "auto_fail": ["Gives dangerous advice"],
            }
        )
        for i in range(n)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def start_fake():
    fake = fakeserver.FakeServer().start()
    fake.models = ["judge", "m1", "m2"]
    fake.responder = lambda call: (
        {"text": JUDGEMENT, "latency": fake.default_latency}
        if isinstance(call["body"], dict) and call["body"].get("model") == "judge"
        else None
    )
    return fake


def timed_child(args, env=None, cwd=None):
    """(wall s, CPU s, peak RSS MiB, stdout) of one child, from os.wait4's rusage."""
    started = time.perf_counter()
    proc = subprocess.Popen(args, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out_chunks, err_chunks = [], []
    readers = [
        threading.Thread(target=lambda: out_chunks.append(proc.stdout.read())),
        threading.Thread(target=lambda: err_chunks.append(proc.stderr.read())),
    ]
    for r in readers:
        r.start()
    _pid, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    for r in readers:
        r.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 4):  # 4: a quality gate
        err = b"".join(err_chunks).decode(errors="replace")
        raise SystemExit(f"{args[:3]} exited {proc.returncode}:\n{err[-3000:]}")
    cpu = usage.ru_utime + usage.ru_stime
    return wall, cpu, usage.ru_maxrss / 1024.0, b"".join(out_chunks).decode()


def write_config(folder, fake, tasks, concurrency):
    bank = write_bank(folder / "bank.jsonl", tasks)
    doc = {
        "run": {"name": "bench", "dataset": str(bank), "max_attempts": 1},
        "providers": [
            {
                "name": "fake",
                "type": "OPENAI",
                "base_url": fake.url,
                "max_concurrency": concurrency,
            }
        ],
        "judge": {"provider": "fake", "model": "judge"},
        "targets": [{"provider": "fake", "model": "m1"}, {"provider": "fake", "model": "m2"}],
    }
    path = folder / "llmbench.yml"
    path.write_text(yaml.safe_dump(doc))
    return path


def _at(text):
    return datetime.fromisoformat(text)


def run_facts(db):
    """The run's engine span (s) and its phases from the run log: (span, answers s, judge s)."""
    con = sqlite3.connect(db)
    try:
        created, finished = con.execute("SELECT created_at, finished_at FROM run").fetchone()
        marks = dict(
            con.execute(
                "SELECT event, MIN(created_at) FROM runlog WHERE event IN "
                "('item_done', 'phase_changed', 'item_judged') GROUP BY event"
            ).fetchall()
        )
        last_done = con.execute(
            "SELECT MAX(created_at) FROM runlog WHERE event = 'item_done'"
        ).fetchone()[0]
    finally:
        con.close()
    span = (_at(finished) - _at(created)).total_seconds()
    answers = (_at(last_done) - _at(marks["item_done"])).total_seconds()
    judging = (_at(finished) - _at(marks["item_judged"])).total_seconds()
    return span, answers, judging


def run_llmbench(fake, tasks, root, concurrency=CONCURRENCY, no_psycopg=False):
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        path = write_config(folder, fake, tasks, concurrency)
        db = folder / "llmbench.db"
        env = {
            **os.environ,
            "LLMBENCH_DB": str(db),
            "LLMBENCH_MASTER_KEY_BASE64": KEY,
            "PYTHONPATH": str(root),
            "BENCH_HWM": str(folder / "status"),
            "BENCH_CPU": str(folder / "cpu"),
        }
        # cwd is the tree itself: `python -c` puts the working directory first on sys.path,
        # ahead of PYTHONPATH, so from any other tree's folder --baseline ran this one.
        wall, cpu, rss, _out = timed_child(
            [*llmbench_command(no_psycopg), "run", "-c", str(path), "-q"], env, cwd=root
        )
        rss = own_peak(folder / "status")
        span, answers, judging = run_facts(db)
        samples = cpu_samples(folder / "cpu")
    return {
        "wall": wall,
        "cpu": cpu,
        "rss": rss,
        "span": span,
        "ans": answers,
        "jud": judging,
        "calls": cpu_between(samples, fake.chat_calls()),
    }


FLOOR = """
import json, sys, threading, time
import requests
url, tasks, width, streamed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4] == "1"
bodies = []
for i in range(tasks):
    for model in ("m1", "m2"):
        answer = {"model": model, "messages": [{"role": "user", "content": f"Q {i}?"}]}
        if streamed:
            answer.update(stream=True, stream_options={"include_usage": True})
        bodies.append(answer)
        bodies.append({"model": "judge", "messages": [{"role": "user", "content": f"Judge {i}"}],
                       "response_format": {"type": "json_object"}})
def send(chunk):
    with requests.Session() as session:
        for body in chunk:
            if body.get("stream"):  # read as a client reads a stream: each event's JSON
                with session.post(url, json=body, timeout=30, stream=True) as reply:
                    reply.raise_for_status()
                    for line in reply.iter_lines():
                        if line.startswith(b"data: ") and line != b"data: [DONE]":
                            json.loads(line[6:])
            else:
                reply = session.post(url, json=body, timeout=30)
                reply.raise_for_status()
                reply.json()
threads = [threading.Thread(target=send, args=(bodies[k::width],)) for k in range(width)]
cpu, started = time.process_time(), time.perf_counter()
for t in threads:
    t.start()
for t in threads:
    t.join()
print(time.perf_counter() - started, time.process_time() - cpu)
for line in open("/proc/self/status"):
    if line.startswith("VmHWM:"):
        print(int(line.split()[1]) / 1024.0)
"""


def run_floor(fake, tasks, streamed=False):
    """The same 4 N calls from CONCURRENCY threads, each with its own requests.Session, in a
    child process: its wall and CPU seconds for the calls alone (imports left out). Every
    call plain JSON, or (`streamed`) the answers streamed as llmbench asks for them (SSE,
    each event's JSON read) and the judgements plain."""
    url = f"{fake.url}/v1/chat/completions"
    _wall, _cpu, _rss, out = timed_child(
        [sys.executable, "-c", FLOOR, url, str(tasks), str(CONCURRENCY), "1" if streamed else "0"]
    )
    wall, cpu, rss = (float(x) for x in out.split())
    return {"wall": wall, "cpu": cpu, "rss": rss}


def sizes_table(fake, sizes, runs, baseline, no_psycopg):
    tools = [("llmbench", ROOT)] + ([("baseline", Path(baseline))] if baseline else [])
    rows = []
    for tasks in sizes:
        got = {name: [] for name, _ in tools}
        floor, streamed = [], []
        for n in range(runs):
            order = tools if n % 2 == 0 else tools[::-1]
            for name, root in order:
                fake.calls.clear()
                got[name].append(run_llmbench(fake, tasks, root, no_psycopg=no_psycopg))
                fake.calls.clear()
            floor.append(run_floor(fake, tasks))
            fake.calls.clear()
            streamed.append(run_floor(fake, tasks, streamed=True))
            fake.calls.clear()
            print(
                f"  {tasks} tasks run {n + 1} (load {os.getloadavg()[0]:.1f}): "
                + ", ".join(
                    f"{k} {v[-1]['wall']:.2f} s wall / {v[-1]['cpu']:.2f} s CPU "
                    f"/ {v[-1]['rss']:.0f} MiB"
                    for k, v in got.items()
                )
                + f"; floor {floor[-1]['wall']:.2f} s / {floor[-1]['cpu']:.2f} s CPU"
                + f"; streamed floor {streamed[-1]['wall']:.2f} s / {streamed[-1]['cpu']:.2f} s",
                flush=True,
            )
            if n + 1 < runs:  # what is measured so far, in case a long run is cut short
                print_during_calls([*rows, (tasks, got, floor, streamed)])
        rows.append((tasks, got, floor, streamed))
        if tasks != sizes[-1]:
            print_sizes(rows, runs, no_psycopg)
    print_sizes(rows, runs, no_psycopg)


def print_sizes(rows, runs, no_psycopg):
    """The table of every size measured, then each tool's per-call cost over the floor
    between the sizes (start-up and the end cancel out: the engine's own cost per call)."""
    print(
        f"\nmedians of {runs}, concurrency {CONCURRENCY}, instant fake server, "
        f"load average now {' '.join(f'{x:.1f}' for x in os.getloadavg())}"
        + (" (llmbench without psycopg: a SQLite-only install)" if no_psycopg else "")
        + "\n"
    )
    print(
        "| tasks (calls) | tool | wall ms/call | over floor | engine ms/call | over floor "
        "| CPU ms/call | over floor CPU | fixed s (wall - engine) | peak RSS |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for tasks, got, floor, _streamed in rows:
        calls = 4 * tasks
        f_wall = statistics.median(r["wall"] for r in floor) * 1000 / calls
        f_cpu = statistics.median(r["cpu"] for r in floor) * 1000 / calls
        print(
            f"| {tasks} ({calls / 1000:g}k) | floor | {f_wall:.2f} | | {f_wall:.2f} | "
            f"| {f_cpu:.2f} | | | {max(r['rss'] for r in floor):.0f} MiB |"
        )
        for name, results in got.items():

            def med(key, results=results):
                return statistics.median(r[key] for r in results)

            wall = med("wall") * 1000 / calls
            span = med("span") * 1000 / calls
            cpu = med("cpu") * 1000 / calls
            fixed = statistics.median(r["wall"] - r["span"] for r in results)
            print(
                f"| {tasks} ({calls / 1000:g}k) | {name} | {wall:.2f} | {wall - f_wall:+.2f} "
                f"| {span:.2f} | {span - f_wall:+.2f} | {cpu:.2f} | {cpu - f_cpu:+.2f} "
                f"| {fixed:.2f} | {max(r['rss'] for r in results):.0f} MiB |"
            )
    print_during_calls(rows)
    if len(rows) < 2:
        return
    (small, got_a, floor_a, _), (large, got_b, floor_b, _) = rows[0], rows[-1]
    calls = 4 * (large - small)
    print(
        f"\nper call over the floor between {4 * small / 1000:g}k and {4 * large / 1000:g}k "
        "calls ((tool's growth - floor's growth) / calls added; start-up and the end cancel):\n"
    )
    print("| tool | wall ms/call over floor | CPU ms/call over floor |")
    print("|---|---|---|")
    for name in got_b:
        over = {}
        for key in ("wall", "cpu"):

            def med(results, key=key):
                return statistics.median(r[key] for r in results)

            grown = med(got_b[name]) - med(got_a[name])
            floor_grown = med(floor_b) - med(floor_a)
            over[key] = (grown - floor_grown) * 1000 / calls
        print(f"| {name} | {over['wall']:+.3f} | {over['cpu']:+.3f} |")


def print_during_calls(rows):
    """llmbench's own wall and CPU per call from its first model call to its last (start-up,
    the dataset import and the end left out; answers and judgements together, as many of
    each), against each floor's, which times only its calls too."""
    print(
        "\nwhile the calls are made (llmbench's own process, from its first model call to its "
        "last: no start-up, dataset import or end; per call of either kind, half answers "
        "streamed, half judgements; the fake server's CPU is in none of them). Floors: every "
        "call plain JSON, or the answers streamed as llmbench asks for them (SSE):\n"
    )
    print(
        "| tasks (calls) | tool | wall ms/call | CPU ms/call | over floor CPU "
        "| over streamed floor CPU | over floor wall | over streamed floor wall |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for tasks, got, floor, streamed in rows:
        calls = 4 * tasks
        plain = {k: statistics.median(r[k] for r in floor) * 1000 / calls for k in ("wall", "cpu")}
        sse = {k: statistics.median(r[k] for r in streamed) * 1000 / calls for k in ("wall", "cpu")}
        for name, figures in (("floor", plain), ("streamed floor", sse)):
            print(
                f"| {tasks} ({calls / 1000:g}k) | {name} | {figures['wall']:.3f} "
                f"| {figures['cpu']:.3f} | | | | |"
            )
        for name, results in got.items():
            wall = statistics.median(r["calls"][0] * 1000 / r["calls"][2] for r in results)
            cpu = statistics.median(r["calls"][1] * 1000 / r["calls"][2] for r in results)
            print(
                f"| {tasks} ({calls / 1000:g}k) | {name} | {wall:.3f} | {cpu:.3f} "
                f"| {cpu - plain['cpu']:+.3f} | {cpu - sse['cpu']:+.3f} "
                f"| {wall - plain['wall']:+.3f} | {wall - sse['wall']:+.3f} |"
            )


def throughput(fake, tasks, runs, baseline, no_psycopg):
    fake.default_latency = LATENCY
    limit = WIDE / LATENCY
    tools = [("llmbench", ROOT)] + ([("baseline", Path(baseline))] if baseline else [])
    got = {name: [] for name, _ in tools}
    try:
        for n in range(runs):
            for name, root in tools if n % 2 == 0 else tools[::-1]:
                fake.calls.clear()
                got[name].append(run_llmbench(fake, tasks, root, WIDE, no_psycopg))
    finally:
        fake.default_latency = 0.0
    print(
        f"\nthroughput: {tasks} tasks x 2 targets + judge, fake latency {LATENCY * 1000:.0f} ms, "
        f"concurrency {WIDE}: calls/s against {limit:.0f}/s (medians of {runs}; "
        f"load average {os.getloadavg()[0]:.1f})\n"
    )
    print("| tool | answers/s | ratio | judgements/s | ratio | whole run calls/s | ratio |")
    print("|---|---|---|---|---|---|---|")
    for name, results in got.items():
        answers = statistics.median(2 * tasks / r["ans"] for r in results)
        judged = statistics.median(2 * tasks / r["jud"] for r in results)
        whole = statistics.median(4 * tasks / r["span"] for r in results)
        print(
            f"| {name} | {answers:.1f} | {answers / limit:.2f} | {judged:.1f} "
            f"| {judged / limit:.2f} | {whole:.1f} | {whole / limit:.2f} |"
        )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default="300,1500,3000", help="comma-separated task counts")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--baseline", help="also run llmbench from this source tree")
    parser.add_argument("--throughput-tasks", type=int, default=400)
    parser.add_argument("--no-throughput", action="store_true")
    parser.add_argument("--no-sizes", action="store_true")
    parser.add_argument("--no-psycopg", action="store_true", help="as a SQLite-only install")
    args = parser.parse_args()
    fake = start_fake()
    try:
        if not args.no_sizes:
            sizes = [int(s) for s in args.tasks.split(",")]
            sizes_table(fake, sizes, args.runs, args.baseline, args.no_psycopg)
        if not args.no_throughput:
            throughput(fake, args.throughput_tasks, args.runs, args.baseline, args.no_psycopg)
    finally:
        fake.stop()


if __name__ == "__main__":
    main()
