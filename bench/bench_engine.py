"""Engine figures against the fake server (in this process, real HTTP on 127.0.0.1).

1. Overhead: 1000 items, the fake answering in 0 ms, concurrency 1 -> ms per item spent outside
   the fake server (wall time minus the fake's own request handling time), answers and judge
   calls counted apart; median of 3 runs. Goal <= 2 ms per answer.
2. Throughput: the fake answering in 200 ms, max_concurrency 4 -> answers per second against the
   limit 4 / 0.2 s = 20/s. Goal >= 0.9 of it.

    .venv/bin/python bench/bench_engine.py [--items 1000] [--runs 3]
    .venv/bin/python bench/bench_engine.py --real-llm http://127.0.0.1:18080 smollm2-135m-instruct
      (a few tasks on a real model server, which is both target and judge; prints the run log)
"""

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.db import connection as db
from app.db import migrations
from app.db.models import COMPLETED
from app.db.models import Collection
from app.db.models import CollectionTask
from app.db.models import Item
from app.db.models import Provider
from app.db.models import Task
from app.engine.foreground import run_foreground
from app.engine.items import ItemWorker
from app.runs.lifecycle import create_run
from app.runs.queries import list_logs
from tests import fakeserver

CONFIG = {
    "LEASE_SECONDS": 15.0,
    "MAX_ATTEMPTS": 3,
    "BACKOFF_BASE_SECONDS": 2.0,
    "BACKOFF_MAX_SECONDS": 60.0,
    "MAX_RETRY_SECONDS": 900.0,
}


class TimedHandler(fakeserver._Handler):
    """The fake's handler, timing its own work per request (what we subtract as 'not ours')."""

    spent = {"answer": 0.0, "judge": 0.0}
    lock = threading.Lock()

    def _dispatch(self, method):
        started = time.perf_counter()
        try:
            super()._dispatch(method)
        finally:
            took = time.perf_counter() - started
            raw = getattr(self, "_bench_raw", b"")
            kind = "judge" if b"response_format" in raw else "answer"
            with self.lock:
                self.spent[kind] += took

    def _chat(self, call, fmt):
        self._bench_raw = call["raw"].encode()
        return super()._chat(call, fmt)


CPU = {"answer": 0.0, "judge": 0.0}


def _cpu_timed(kind, loop):
    """Wrap a worker loop to add up the CPU time of its thread (the fake's threads are apart)."""

    def timed(self, *args, **kwargs):
        started = time.thread_time()
        try:
            return loop(self, *args, **kwargs)
        finally:
            CPU[kind] += time.thread_time() - started

    return timed


ItemWorker.answer = _cpu_timed("answer", ItemWorker.answer)
ItemWorker.judge = _cpu_timed("judge", ItemWorker.judge)


def _fresh_db(folder, n_tasks, concurrency, url):
    path = str(Path(folder) / "bench.db")
    migrations.open_db(path)
    db.database.connect(reuse_if_open=True)
    provider = Provider.create(
        name="fake",
        type="OPENAI",
        base_url=url,
        models_endpoint="/v1/models",
        inference_endpoint="/v1/chat/completions",
        timeout_seconds=30,
        max_concurrency=concurrency,
    )
    coll = Collection.create(name="bench")
    tasks = [
        {
            "task_id": f"b{i}",
            "category": "bench",
            "question": f"Question {i}?",
            "excellent": "e",
            "good": "g",
            "pass_answer": "p",
            "incorrect_direction": "x",
        }
        for i in range(n_tasks)
    ]
    with db.database.atomic():
        for start in range(0, n_tasks, 200):
            Task.insert_many(tasks[start : start + 200]).execute()
        CollectionTask.insert_many(
            [{"collection": coll.id, "task": t.id} for t in Task.select()]
        ).execute()
    run = create_run(
        {
            "judgeProviderId": provider.id,
            "judgeModel": "judge",
            "targets": [{"providerId": provider.id, "model": "m1"}],
            "collectionIds": [coll.id],
        },
        source="cli",
    )
    return run


def _one(n_items, concurrency, latency, server):
    """Run one benchmark; returns timings of the answer and judge phases."""
    server.reset()
    server.models = ["m1", "judge"]  # a run checks that its models are served
    server.default_latency = latency
    TimedHandler.spent.update(answer=0.0, judge=0.0)
    CPU.update(answer=0.0, judge=0.0)
    marks = {}

    def on_event(event):
        marks.setdefault(event["event"], time.perf_counter())
        if event["event"] == "phase_changed":
            marks["answers_end"] = time.perf_counter()

    with tempfile.TemporaryDirectory() as folder:
        run = _fresh_db(folder, n_items, concurrency, server.url)
        started = time.perf_counter()
        state = run_foreground(run.run_id, CONFIG, on_event=on_event, holder="bench")
        ended = time.perf_counter()
        done = Item.select().where(Item.status == COMPLETED).count()
        adapter_ms = sum(t for (t,) in Item.select(Item.time_taken_ms).tuples())
        db.database.close()
    assert state == "finished" and done == n_items, (state, done)
    answers_s = marks["answers_end"] - marks["warmup"]
    judge_s = ended - marks["answers_end"]
    return {
        "wall": ended - started,
        "answers_s": answers_s,
        "judge_s": judge_s,
        "fake_answer_s": TimedHandler.spent["answer"],
        "fake_judge_s": TimedHandler.spent["judge"],
        "adapter_answer_s": adapter_ms / 1000.0,
        "cpu_answer_s": CPU["answer"],
        "cpu_judge_s": CPU["judge"],
    }


def overhead(server, n_items, repeats):
    results = [_one(n_items, 1, 0.0, server) for _ in range(repeats)]
    per_answer = [(r["answers_s"] - r["fake_answer_s"]) * 1000 / n_items for r in results]
    per_judge = [(r["judge_s"] - r["fake_judge_s"]) * 1000 / n_items for r in results]
    engine_only = [(r["answers_s"] - r["adapter_answer_s"]) * 1000 / n_items for r in results]
    wall = [r["answers_s"] * 1000 / n_items for r in results]
    cpu = [r["cpu_answer_s"] * 1000 / n_items for r in results]
    cpu_judge = [r["cpu_judge_s"] * 1000 / n_items for r in results]
    print(f"1. overhead, {n_items} items, fake latency 0 ms, concurrency 1 (median of {repeats})")
    print(f"   answer phase wall time per item:             {statistics.median(wall):6.2f} ms")
    print(
        f"   - minus the fake server's own time:          {statistics.median(per_answer):6.2f} ms"
        "  (goal <= 2 ms)"
    )
    print(
        "   - minus the whole HTTP call (adapter time):  "
        f"{statistics.median(engine_only):6.2f} ms"
        "  (claim + record + log only)"
    )
    print(
        f"   CPU time of the worker thread per answer:    {statistics.median(cpu):6.2f} ms"
        "  (our code incl. the HTTP client; not the fake; load-independent)"
    )
    print(
        f"   judge phase, minus the fake's time:          {statistics.median(per_judge):6.2f} ms"
        f" per judgement (CPU {statistics.median(cpu_judge):.2f} ms)"
    )
    return statistics.median(per_answer)


def throughput(server, n_items):
    r = _one(n_items, 4, 0.2, server)
    rate = n_items / r["answers_s"]
    print(f"2. throughput, {n_items} items, fake latency 200 ms, max_concurrency 4")
    print(f"   answers: {rate:5.2f} items/s against the limit 20/s = {rate / 20:.2f} (goal >= 0.9)")
    print(f"   judgements (same latency, judge concurrency 4): {n_items / r['judge_s']:5.2f}/s")
    return rate / 20


REAL_TASKS = [
    (
        "capital",
        "What is the capital of France? Answer in one word.",
        "Paris",
        "Paris.",
        "Paris, with some extra words",
        "any city other than Paris",
    ),
    (
        "arith",
        "What is 7 + 5? Reply with the number only.",
        "12",
        "12",
        "twelve",
        "any number other than 12",
    ),
    (
        "colour",
        "What colour is a clear daytime sky? One word.",
        "Blue",
        "blue",
        "light blue",
        "any colour other than blue",
    ),
    (
        "opposite",
        "Give the opposite of the word 'hot'. One word.",
        "Cold",
        "cold",
        "chilly",
        "a word that does not mean cold",
    ),
]


def real_llm(base_url, model):
    """A small benchmark against a real OpenAI-compatible server: target and judge are `model`."""
    with tempfile.TemporaryDirectory() as folder:
        path = str(Path(folder) / "real.db")
        migrations.open_db(path)
        db.database.connect(reuse_if_open=True)
        provider = Provider.create(
            name="local-llm",
            type="OPENAI",
            base_url=base_url,
            models_endpoint="/v1/models",
            inference_endpoint="/v1/chat/completions",
            timeout_seconds=120,
            max_concurrency=1,
        )
        coll = Collection.create(name="real")
        for task_id, question, excellent, good, passing, wrong in REAL_TASKS:
            task = Task.create(
                task_id=task_id,
                category="basics",
                question=question,
                excellent=excellent,
                good=good,
                pass_answer=passing,
                incorrect_direction=wrong,
            )
            CollectionTask.create(collection=coll, task=task)
        run = create_run(
            {
                "name": "real-llm",
                "judgeProviderId": provider.id,
                "judgeModel": model,
                "judgeParams": {"max_tokens": 300},
                "targets": [
                    {
                        "providerId": provider.id,
                        "model": model,
                        "params": {"temperature": 0, "max_tokens": 60},
                    }
                ],
                "collectionIds": [coll.id],
            },
            source="cli",
        )
        started = time.perf_counter()
        state = run_foreground(run.run_id, CONFIG, holder="bench-real")
        print(f"run {run.run_id}: {state} in {time.perf_counter() - started:.1f} s")
        for line in list_logs(run.run_id, limit=1000):
            print(f"  {line.created_at:%H:%M:%S} {line.level:<7} {line.event:<15} {line.message}")
        print("  task       status      ms   ttft  tokens  tok/s (source)        score  answer")
        for item in Item.select().order_by(Item.id):
            print(
                f"  {item.task_key:<10} {item.status:<9} {item.time_taken_ms or 0:6.0f} "
                f"{item.ttft_ms or 0:6.0f} {item.tokens_generated or 0:6} "
                f"{item.tokens_per_second or 0:6.1f} ({item.tps_source}) "
                f"{item.evaluation_score if item.evaluation_score is not None else '-':>6}  "
                f"{(item.answer or '').strip()[:40]!r}"
            )
            if item.evaluation_reason or item.error_msg:
                print(f"             judge: {item.evaluation_reason or item.error_msg}")
        db.database.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--throughput-items", type=int, default=100)
    parser.add_argument("--real-llm", nargs=2, metavar=("BASE_URL", "MODEL"))
    args = parser.parse_args()
    if args.real_llm:
        return real_llm(*args.real_llm)
    server = fakeserver.FakeServer()
    server.start()
    server._httpd.RequestHandlerClass = TimedHandler
    try:
        overhead(server, args.items, args.runs)
        throughput(server, args.throughput_items)
    finally:
        server.stop()


if __name__ == "__main__":
    main()
