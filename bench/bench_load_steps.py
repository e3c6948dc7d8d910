"""Load steps on the paced server: what each step put on the server and what llmbench measured.

Runs one run with load steps on tests/pacedserver.py (real HTTP, `slots` requests served at
once, the rest queue as llama.cpp's do) through the real engine, then prints per step: the
load asked, the most requests the server saw in service at once (its own log), the slot wait
it saw, and llmbench's per-step figures (run_speed's `steps`): TTFT p50/p99, e2e p50, achieved
concurrency, requests/s, output tok/s and the average score. Past `slots`, TTFT should grow by
the queue while the server's in-service count stays at `slots`.

    .venv/bin/python bench/bench_load_steps.py [--mode concurrency|rate] [--steps 1,2,4,8]
        [--slots 4] [--tasks 16]
"""

import argparse
import base64
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.db.connection import database
from app.db.models import Collection
from app.db.models import CollectionTask
from app.db.models import Item
from app.db.models import Provider
from app.db.models import Task
from app.engine import lease
from app.engine.orchestrator import tick
from app.factory import create_app
from app.results.speed import run_speed
from app.runs.lifecycle import create_run
from tests.pacedserver import MODEL
from tests.pacedserver import PacedServer


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", default="concurrency", choices=("concurrency", "rate"))
    parser.add_argument("--steps", default=None, help="default 1,2,4,8 (rate: 5,10,20,40)")
    parser.add_argument("--slots", type=int, default=4)
    parser.add_argument("--tasks", type=int, default=16)
    args = parser.parse_args()
    steps = [
        float(s) if args.mode == "rate" else int(s)
        for s in (args.steps or ("5,10,20,40" if args.mode == "rate" else "1,2,4,8")).split(",")
    ]
    tmp = Path(tempfile.mkdtemp(prefix="llmbench-bench-load-"))
    app = create_app(
        {
            "TESTING": True,
            "DB": str(tmp / "bench.db"),
            "SCHEDULER_ENABLED": False,
            "LOAD_DEFAULTS": False,
            "SECRET_KEY": "bench",
            "MASTER_KEY_BASE64": base64.b64encode(b"b" * 32).decode(),
        }
    )
    server = PacedServer(ttft=0.05, tokens=32, itl=0.01, slots=args.slots).start()
    try:
        with database.connection_context():
            run = start(server, args, steps)
            config = dict(app.config)
            while tick(config, holder="bench")["state"] == "running":
                pass
            report(run, server, steps, args)
    finally:
        server.stop()


def start(server, args, steps):
    lease.acquire("bench", 15.0)
    provider = Provider.create(
        name="paced",
        type="OPENAI",
        base_url=server.url,
        models_endpoint="/v1/models",
        inference_endpoint="/v1/chat/completions",
        timeout_seconds=60,
        max_concurrency=1,
    )
    coll = Collection.create(name="bench")
    for n in range(args.tasks):
        task = Task.create(
            task_id=f"t{n}",
            category="Speed",
            question=f"Count {n}?",
            checks=[{"type": "contains", "value": "t31"}],  # the whole answer came back
        )
        CollectionTask.create(collection=coll, task=task)
    load = {"mode": args.mode, "steps": steps}
    if args.mode == "rate":
        load["arrivals"] = "poisson"
    return create_run(
        {
            "runId": "bench-load",
            "targets": [{"providerId": provider.id, "model": MODEL}],
            "collectionIds": [coll.id],
            "settings": {"load": load},
        }
    )


def report(run, server, steps, args):
    items = list(Item.select().where(Item.run == run).order_by(Item.id))
    entries = sorted(
        (e for e in server.log if e["completed"] and e["channels"] != ["whole"]),
        key=lambda e: e["received"],
    )
    (target,) = run_speed(run)["targets"]
    print(
        f"{args.mode} steps {steps} on the paced server (slots {args.slots}, TTFT 50 ms, "
        f"32 tokens x 10 ms), {args.tasks} tasks per step"
    )
    unit = "req/s" if args.mode == "rate" else "in flight"
    print(
        f"{'step':>4} {unit:>9} {'server max':>10} {'slot wait':>9} {'TTFT p50':>8} "
        f"{'TTFT p99':>8} {'e2e p50':>7} {'achieved':>8} {'req/s':>6} {'tok/s':>6} {'score':>5}"
    )
    at = 0
    for s in target["steps"]:
        size = sum(1 for i in items if i.step == s["step"])
        mine = entries[at : at + size]
        at += size
        w = s["window"]
        print(
            f"{s['step'] + 1:>4} {s['load']:>9g} {max(e['in_service'] for e in mine):>10} "
            f"{1000 * statistics.mean(e['slot_wait'] for e in mine):>7.0f}ms "
            f"{s['ttftMs']['p50']:>8.0f} {s['ttftMs']['p99']:>8.0f} {s['e2eMs']['p50']:>7.0f} "
            f"{w['achievedConcurrency']:>8.2f} {w['requestsPerSecond']:>6.2f} "
            f"{w['outputTokensPerSecond']:>6.0f} {s['meanScore']:>5.0f}"
        )


if __name__ == "__main__":
    main()
