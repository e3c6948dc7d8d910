"""Seed 003 acceptance: import 1 000 generated tasks (timed, goal < 2 s, median of 3), then run them
on 3 models against the fake server twice: through the CLI (`llmbench run -c`, a subprocess that
drives orchestrator.run_foreground) and through the server path (app.scheduler ticking, as in
`llmbench serve`). Prints both wall times, the CLI's overhead ratio, and that nothing failed.

    .venv/bin/python bench/bench_import.py [--tasks 1000] [--concurrency 4]
"""

import argparse
import base64
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app import crypto
from app.config import load
from app.db import connection as db
from app.db import migrations
from app.db.models import COMPLETED
from app.db.models import Item
from app.db.models import Run
from app.db.models import Task

KEY_B64 = base64.b64encode(b"b" * 32).decode()
MODELS = ["m1", "m2", "m3"]
# The fake server runs in its own process for both paths, so neither shares a GIL with it.
FAKE_SERVER = f"""
import sys
sys.path.insert(0, {str(ROOT)!r})
from tests.fakeserver import FakeServer
server = FakeServer()
server.start()
server.models = {[*MODELS, "judge"]!r}
print(server.url, flush=True)
sys.stdin.read()  # until the bench closes our stdin
server.stop()
"""


def generate(path, n):
    """A seed 003 CSV: templates with vars, half with an input text, references and tags."""
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(
            [
                "task_id",
                "template_version",
                "prompt_template",
                "input_text",
                "vars_json",
                "category",
                "difficulty",
                "excellent",
                "tags_json",
            ]
        )
        for i in range(n):
            with_input = i % 2 == 0
            writer.writerow(
                [
                    f"gen-{i:05d}",
                    f"v{i % 3}",
                    "You are a {role}. Answer briefly."
                    if with_input
                    else "What is {a} plus {b}? Answer with a number.",
                    f"Explain item {i} in one sentence." if with_input else "",
                    json.dumps({"role": "tutor"} if with_input else {"a": str(i), "b": "2"}),
                    ("math", "code", "writing", "facts")[i % 4],
                    ("easy", "medium", "hard")[i % 3],
                    "A short correct answer." if with_input else str(i + 2),
                    json.dumps(["generated", f"batch-{i // 100}"]),
                ]
            )


def time_import(path, folder, rounds=3):
    """Seconds for import_tasks into a fresh database, `rounds` times."""
    from app.datasets import importer

    times = []
    for n in range(rounds):
        migrations.open_db(str(folder / f"import-{n}.db"))
        with db.database.connection_context():
            start = time.perf_counter()
            result = importer.import_tasks(str(path), collection="bench")
            times.append(time.perf_counter() - start)
            assert result.created == Task.select().count()
    return times


def config_text(fake_url, concurrency, name):
    return f"""
run:
  name: {name}
  collections: [bench]
  max_attempts: 3
providers:
  - name: fake
    type: OPENAI
    base_url: {fake_url}
    max_concurrency: {concurrency}
judge:
  provider: fake
  model: judge
targets:
""" + "".join(f"  - {{provider: fake, model: {m}}}\n" for m in MODELS)


def outcome(run_id):
    with db.database.connection_context():
        run = Run.get(Run.run_id == run_id)
        items = Item.select().where(Item.run == run)
        done = items.where(Item.status == COMPLETED).count()
        return {
            "items": items.count(),
            "completed": done,
            "failed": items.count() - done,
            "runSeconds": (run.finished_at - run.started_at).total_seconds()
            if run.finished_at
            else None,
        }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=1000)
    parser.add_argument(
        "--concurrency", type=int, default=4, help="the fake provider's max_concurrency"
    )
    parser.add_argument(
        "--cli-output",
        choices=["json", "quiet"],
        default="json",
        help="--json (JSONL events, what CI reads) or --quiet for the CLI run",
    )
    args = parser.parse_args()
    crypto.set_key(base64.b64decode(KEY_B64))
    folder = Path(tempfile.mkdtemp(prefix="llmbench-bench-"))
    dataset = folder / "tasks.csv"
    generate(dataset, args.tasks)
    times = time_import(dataset, folder)
    print(
        f"import {args.tasks} tasks (seed 003 CSV, {dataset.stat().st_size / 1024:.0f} KiB): "
        f"median {statistics.median(times):.3f} s of {', '.join(f'{t:.3f}' for t in times)} "
        f"(goal < 2 s)"
    )

    bench_db = str(folder / "import-0.db")
    env = {**os.environ, "LLMBENCH_DB": bench_db, "LLMBENCH_MASTER_KEY_BASE64": KEY_B64}
    fake = subprocess.Popen(
        [sys.executable, "-c", FAKE_SERVER],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    fake_url = fake.stdout.readline().strip()
    try:
        cli_config = folder / "cli.yml"
        cli_config.write_text(config_text(fake_url, args.concurrency, "bench-cli"))
        start = time.perf_counter()
        proc = subprocess.run(
            [
                str(ROOT / ".venv/bin/llmbench"),
                "run",
                "-c",
                str(cli_config),
                f"--{args.cli_output}",
            ],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        cli_wall = time.perf_counter() - start
        if proc.returncode != 0:
            sys.exit(f"CLI run failed ({proc.returncode}): {proc.stderr[-2000:]}")
        migrations.open_db(bench_db)
        with db.database.connection_context():
            cli_run_id = Run.get(Run.name == "bench-cli").run_id

        server_wall, server_run_id = server_path(fake_url, args.concurrency)
    finally:
        fake.stdin.close()
        fake.wait(timeout=10)
    cli, server = outcome(cli_run_id), outcome(server_run_id)
    calls = 3 + 2 * cli["items"]
    print(
        f"run {args.tasks} tasks x {len(MODELS)} models = {cli['items']} items "
        f"(~{calls} HTTP calls each way), provider max_concurrency {args.concurrency}"
    )
    print(
        f"  CLI    (llmbench run -c --{args.cli_output}, whole command): {cli_wall:7.2f} s wall, "
        f"run {cli['runSeconds']:.2f} s, {cli['completed']} completed, {cli['failed']} failed"
    )
    print(
        f"  server (scheduler ticks, create -> finished): {server_wall:7.2f} s wall, "
        f"run {server['runSeconds']:.2f} s, {server['completed']} completed, "
        f"{server['failed']} failed"
    )
    print(
        f"  CLI overhead ratio: {cli_wall / server_wall:.2f}x wall "
        f"(run only: {cli['runSeconds'] / server['runSeconds']:.2f}x)"
    )
    ok = cli["failed"] == 0 and server["failed"] == 0
    print("no failures" if ok else "FAILURES: see above")
    sys.exit(0 if ok else 1)


def server_path(fake_url, concurrency):
    """Create the run while the scheduler holds the lease (as the web app does), time to finish."""
    from app.engine import scheduler
    from app.runconfig import reader
    from app.runconfig import run_plan

    cfg = load({"DB": db.database.database})
    scheduler.start(cfg)
    try:
        with db.database.connection_context():
            # Let the first tick take the lease while idle, as a running server would have.
            deadline = time.monotonic() + 10
            from app.engine import lease

            while (
                lease.current() is None or lease.current().holder != lease.process_holder()
            ) and time.monotonic() < deadline:
                time.sleep(0.05)
            plan = reader.parse(config_text(fake_url, concurrency, "bench-server"))
            start = time.perf_counter()
            run = run_plan.apply(plan, source="web")
        while True:
            with db.database.connection_context():
                if Run.get_by_id(run.id).status == "FINISHED":
                    break
            time.sleep(0.05)
        return time.perf_counter() - start, run.run_id
    finally:
        scheduler.shutdown()


if __name__ == "__main__":
    main()
