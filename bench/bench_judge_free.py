"""A judge-free run against the same run with a judge, on the instant fake server.

6 000 answers: 60 tasks with 3 text checks each (contains, icontains, regex), 5 targets x 20
repeats. Judge-free, each item completes in the answer step (its checks are its score); with a
judge (the fake, answering a valid judgement at once) each answer is judged too and the checks
weigh half. Each run is a child process of its own (the engine in it, the fake server in this
one), so its CPU time (user + sys, from getrusage in the child) is the engine's alone. The two
kinds alternate; medians of --runs. Issue 28's goal: judge-free / with judge <= 0.5.

    PYTHONPATH=$PWD .venv/bin/python bench/bench_judge_free.py [--tasks 60] [--targets 5]
        [--repeats 20] [--runs 3] [--profile out.prof]

--profile runs one judge-free run under py-spy (every thread; cProfile sees only the main one),
keeps its raw samples there and prints the functions with the most self and inclusive time
(--filter app/ for ours only). Kept out of the test suite.
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests import fakeserver

ANSWER = "Working it out: 6 x 7 = 42. The answer is 42."
JUDGEMENT = '{"score": 80, "reason": "fake judge"}'
CHECKS = [
    {"type": "contains", "value": "42"},
    {"type": "icontains", "value": "THE ANSWER"},
    {"type": "regex", "value": r"\b42\b"},
]
CONFIG = {
    "LEASE_SECONDS": 15.0,
    "MAX_ATTEMPTS": 3,
    "BACKOFF_BASE_SECONDS": 2.0,
    "BACKOFF_MAX_SECONDS": 60.0,
    "MAX_RETRY_SECONDS": 900.0,
}
CONCURRENCY = 4


def start_fake(targets):
    fake = fakeserver.FakeServer().start()
    fake.models = ["judge", *(f"m{i}" for i in range(targets))]
    fake.default_text = ANSWER
    fake.responder = lambda call: (
        {"text": JUDGEMENT}
        if isinstance(call["body"], dict) and call["body"].get("model") == "judge"
        else None
    )
    return fake


def make_run(folder, url, tasks, targets, repeats, judge):
    """A fresh database in `folder` with the tasks, a provider on the fake and the run."""
    from app.db import connection as db
    from app.db import migrations
    from app.db.models import Collection
    from app.db.models import CollectionTask
    from app.db.models import Provider
    from app.db.models import Task
    from app.runs.lifecycle import create_run

    migrations.open_db(str(Path(folder) / "bench.db"))
    db.database.connect(reuse_if_open=True)
    provider = Provider.create(
        name="fake",
        type="OPENAI",
        base_url=url,
        models_endpoint="/v1/models",
        inference_endpoint="/v1/chat/completions",
        timeout_seconds=30,
        max_concurrency=CONCURRENCY,
    )
    coll = Collection.create(name="bench")
    with db.database.atomic():
        Task.insert_many(
            [
                {
                    "task_id": f"t{i:02d}",
                    "category": "bench",
                    "question": f"What is 6 x 7? (variant {i})",
                    "excellent": "42",
                    "good": "42, roughly explained",
                    "pass_answer": "42",
                    "incorrect_direction": "any other number",
                    "checks": CHECKS,
                }
                for i in range(tasks)
            ]
        ).execute()
        CollectionTask.insert_many(
            [{"collection": coll.id, "task": t.id} for t in Task.select(Task.id)]
        ).execute()
    spec = {
        "name": "judge" if judge else "free",
        "targets": [{"providerId": provider.id, "model": f"m{i}"} for i in range(targets)],
        "collectionIds": [coll.id],
        "settings": {"repeats": repeats},
    }
    if judge:
        spec.update(judgeProviderId=provider.id, judgeModel="judge")
    return create_run(spec, source="cli")


def child(args):
    """One run in this process: prints {wall, cpu, completed} as JSON."""
    from app.db import connection as db
    from app.db.models import COMPLETED
    from app.db.models import Item
    from app.engine.foreground import run_foreground

    with tempfile.TemporaryDirectory() as folder:
        run = make_run(
            folder, args.url, args.tasks, args.targets, args.repeats, args.child == "judge"
        )
        usage = resource.getrusage(resource.RUSAGE_SELF)
        cpu0 = usage.ru_utime + usage.ru_stime
        started = time.perf_counter()
        state = run_foreground(run.run_id, CONFIG, holder="bench")
        wall = time.perf_counter() - started
        usage = resource.getrusage(resource.RUSAGE_SELF)
        cpu = usage.ru_utime + usage.ru_stime - cpu0
        done = Item.select().where(Item.status == COMPLETED).count()
        db.database.close()
    print(json.dumps({"state": state, "wall": wall, "cpu": cpu, "completed": done}))


def child_command(kind, fake, args):
    return [
        sys.executable,
        __file__,
        "--child",
        kind,
        "--url",
        fake.url,
        "--tasks",
        str(args.tasks),
        "--targets",
        str(args.targets),
        "--repeats",
        str(args.repeats),
    ]


def one(kind, fake, args):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = child_command(kind, fake, args)
    out = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True, check=False)
    if out.returncode:
        raise SystemExit(f"{kind} run exited {out.returncode}:\n{out.stderr[-3000:]}")
    result = json.loads(out.stdout.strip().splitlines()[-1])
    expected = args.tasks * args.targets * args.repeats
    assert result["state"] == "finished" and result["completed"] == expected, result
    return result


def profile(fake, args):
    """One judge-free run in a child under py-spy (every thread, idle samples left out): the
    functions with the most self and inclusive time (profile_run.report)."""
    import shutil

    import profile_run

    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    command = [spy, "record", "-r", "200", "-f", "raw", "--threads", "-o", args.profile, "--"]
    command += child_command("free", fake, args)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    subprocess.run(command, env=env, cwd=ROOT, check=True, capture_output=True)
    profile_run.report(args.profile, 40, args.filter)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=60)
    parser.add_argument("--targets", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--profile", help="profile one judge-free run (py-spy raw output here)")
    parser.add_argument("--filter", help="with --profile: only functions whose file has this")
    parser.add_argument("--child", choices=("free", "judge"), help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args)
    fake = start_fake(args.targets)
    try:
        if args.profile:
            return profile(fake, args)
        answers = args.tasks * args.targets * args.repeats
        results = {"free": [], "judge": []}
        for n in range(args.runs):
            for kind in ("free", "judge"):
                r = one(kind, fake, args)
                results[kind].append(r)
                print(f"  run {n + 1} {kind:<5}: wall {r['wall']:6.2f} s, CPU {r['cpu']:6.2f} s")
    finally:
        fake.stop()
    wall = {k: statistics.median(r["wall"] for r in v) for k, v in results.items()}
    cpu = {k: statistics.median(r["cpu"] for r in v) for k, v in results.items()}
    print(
        f"{answers} answers ({args.tasks} tasks x 3 text checks, {args.targets} targets x "
        f"{args.repeats} repeats), instant fake server, concurrency {CONCURRENCY}, "
        f"median of {args.runs}"
    )
    print("                  wall s    CPU s   wall ms/answer")
    for kind, label in (("free", "judge-free"), ("judge", "with judge")):
        print(
            f"  {label:<14} {wall[kind]:7.2f}  {cpu[kind]:7.2f}   "
            f"{1000 * wall[kind] / answers:6.2f}"
        )
    print(
        f"  ratio judge-free / with judge: wall {wall['free'] / wall['judge']:.2f}, "
        f"CPU {cpu['free'] / cpu['judge']:.2f}  (goal <= 0.5)"
    )


if __name__ == "__main__":
    main()
