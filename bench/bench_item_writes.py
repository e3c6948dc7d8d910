"""SQLite pages written per claim, recorded answer and recorded judgement: what the item table's
indexes cost every call of `llmbench run`.

A fresh database (migrations.open_db) holds an earlier finished run (--history items, so the
indexes have their real depth) and the measured run (--items NEW items over 4 targets, realistic
payloads). Each item is claimed, answered and judged through engine/claims.py as the engine does
it (claim_batch, then update_claimed with the fields engine/items.py records, and its run-log
line, in one transaction each). Pages written = WAL frames appended (checkpoints off while
measuring), each commit separately; the medians and the time per write are printed.

    .venv/bin/python bench/bench_item_writes.py [--items 1000] [--history 20000]
    BENCH_SRC=/tmp/base-main .venv/bin/python bench/bench_item_writes.py   # another tree
    .venv/bin/python bench/bench_item_writes.py --drop item_run_id_ttft_ms   # one index's cost

Measured (2026-11-27, medians of 3 alternating runs of --items 1000): before m030 a claim wrote
3 pages, an answer 33 (0.83 ms), a judgement 20 (0.59 ms); after it 3, 27 (0.73 ms), 14 (0.38 ms).
--batch N writes N records per transaction, as the engine's group commit does when N workers
finish together (claims.record); times are CPU ms per item. 2026-11-28, load ~28: 1 per
transaction, an answer 27 pages (0.80 ms), a judgement 14 (0.54 ms); 2: 16.5 (0.51), 8 (0.37);
4: 10.5 (0.44), 5 (0.25).
"""

import argparse
import datetime as dt
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(os.environ.get("BENCH_SRC") or Path(__file__).resolve().parent.parent)
sys.path.insert(0, str(ROOT))

from app.db.connection import database
from app.db.migrations import open_db
from app.db.models import FINISHED
from app.db.models import NEW
from app.db.models import PENDING
from app.db.models import WAITING_FOR_JUDGE
from app.db.models import Item
from app.db.models import Run
from app.db.models import RunTarget
from app.engine import claims
from app.runlog import log_event

TARGETS = 4
WORDS = "the model answer is correct because tokens latency judge score reference rubric".split()


def _text(rng, words):
    return " ".join(rng.choice(WORDS) for _ in range(words))


def seed(run, n, rng, done):
    """`n` items of `run` over its targets; answered and judged when `done`."""
    targets = [RunTarget.create(run=run, provider_name="p", model=f"m{m}") for m in range(TARGETS)]
    rows = []
    for k in range(n):
        row = {
            "run": run.id,
            "target": targets[k % TARGETS].id,
            "task_key": f"task-{k // TARGETS:06d}",
            "category": ("math", "code", "writing", "facts")[k % 4],
            "difficulty": ("easy", "medium", "hard")[k % 3],
            "question": f"Question {k}: {_text(rng, 60)}",
            "context_hash": f"{k:064x}",
        }
        if done:
            row.update(
                status="COMPLETED",
                answer=_text(rng, 90),
                response_raw=_text(rng, 120),
                time_taken_ms=rng.uniform(200, 9000),
                ttft_ms=rng.uniform(20, 400),
                tokens_generated=rng.randint(20, 800),
                tokens_per_second=rng.uniform(5, 120),
                cost_usd=rng.uniform(0, 0.002),
                evaluation_score=float(rng.randint(0, 100)),
                answered_at=dt.datetime(2026, 1, 1) + dt.timedelta(seconds=k),
                judged_at=dt.datetime(2026, 1, 2) + dt.timedelta(seconds=k),
                last_attempt_at=dt.datetime(2026, 1, 2) + dt.timedelta(seconds=k),
            )
        rows.append(row)
    with database.atomic():
        for start in range(0, n, 1000):
            Item.insert_many(rows[start : start + 1000]).execute()


def answer_fields(rng, now):
    """What engine/items.py records with an answer."""
    text = _text(rng, 90)
    return dict(
        status=WAITING_FOR_JUDGE,
        attempts=0,
        answer_attempts=1,
        next_retry_at=None,
        first_attempt_at=None,
        error_msg=None,
        error_stage=None,
        answer=text,
        response_raw=_text(rng, 120),
        request_json={"model": "m", "messages": [{"role": "user", "content": "q"}]},
        time_taken_ms=rng.uniform(200, 9000),
        ttft_ms=rng.uniform(20, 400),
        prompt_ms=None,
        decode_ms=None,
        load_ms=None,
        prompt_tokens=rng.randint(20, 300),
        tokens_generated=rng.randint(20, 800),
        tokens_per_second=rng.uniform(5, 120),
        tps_source="usage",
        tokens_estimated=False,
        cost_usd=rng.uniform(0, 0.002),
        cost_source="price_table",
        finish_reason="stop",
        answer_cut=False,
        answered_at=now,
        updated_at=now,
    )


def judgement_fields(rng, now):
    """What engine/items.py records with a judgement."""
    return dict(
        status="COMPLETED",
        next_retry_at=None,
        error_msg=None,
        error_stage=None,
        evaluation_score=float(rng.randint(0, 100)),
        evaluation_reason=_text(rng, 35),
        rubric_scores={"accuracy": 4},
        auto_fail=False,
        judge_request_json={"model": "j"},
        judge_raw='{"score": 80, "reason": "fine"}',
        judge_ms=rng.uniform(100, 900),
        judge_cost_usd=0.0001,
        judged_at=now,
        updated_at=now,
    )


class Wal:
    """Frames appended to the WAL since the last call (checkpoints are off)."""

    def __init__(self, path):
        self.path = f"{path}-wal"
        self.page = database.execute_sql("PRAGMA page_size").fetchone()[0]
        self.last = self._frames()

    def _frames(self):
        size = os.path.getsize(self.path) if os.path.exists(self.path) else 0
        return max(0, size - 32) // (self.page + 24)

    def delta(self):
        now = self._frames()
        found, self.last = now - self.last, now
        return found


def measure(path, n, rng, batch=1):
    run = Run.get(Run.run_id == "measured")
    database.execute_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    database.execute_sql("PRAGMA wal_autocheckpoint = 0")
    wal = Wal(path)
    pages = {"claim": [], "answer": [], "judgement": []}
    ms = {"claim": [], "answer": [], "judgement": []}
    clock = dt.datetime(2026, 3, 1)
    for status, kind, fields in (
        (NEW, "answer", answer_fields),
        (WAITING_FOR_JUDGE, "judgement", judgement_fields),
    ):
        for _ in range(0, n, batch):
            clock += dt.timedelta(milliseconds=50)
            started = time.process_time()
            took = claims.claim_batch(
                run.id, status, clock, clock + dt.timedelta(minutes=5), k=batch, holder="b"
            )
            ms["claim"].append((time.process_time() - started) * 1000 / len(took))
            pages["claim"].append(wal.delta() / len(took))
            values = [fields(rng, clock) for _ in took]
            started = time.process_time()
            # --batch N: N records in one transaction, as the engine's group commit writes
            # the records of the workers that finish together (claims.Recorder).
            with claims.recording():
                for got, fields_of in zip(took, values, strict=True):
                    assert claims.update_claimed(got.id, status, got.attempts, fields_of) == 1
                    log_event(run, f"item_{kind}", f"{got.task_key}: done", data={"itemId": got.id})
            ms[kind].append((time.process_time() - started) * 1000 / len(took))
            pages[kind].append(wal.delta() / len(took))
        database.execute_sql("PRAGMA wal_checkpoint(TRUNCATE)")
        wal.last = 0
    return pages, ms


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=1000, help="items claimed, answered, judged")
    parser.add_argument("--history", type=int, default=20_000, help="items of an earlier run")
    parser.add_argument(
        "--drop", action="append", default=[], help="drop this index first (what would it save?)"
    )
    parser.add_argument("--batch", type=int, default=1, help="records per transaction")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="llmbench-bench-writes-"))
    path = tmp / "bench.db"
    rng = random.Random(1)
    try:
        open_db(str(path))
        with database.connection_context():
            for name in args.drop:
                database.execute_sql(f"DROP INDEX {name}")
            old = Run.create(
                run_id="old", name="old", judge_provider_name="j", judge_model="j", status=FINISHED
            )
            seed(old, args.history, rng, done=True)
            run = Run.create(
                run_id="measured",
                name="m",
                judge_provider_name="j",
                judge_model="j",
                status=PENDING,
                control="running",
            )
            seed(run, args.items, rng, done=False)
            indexes = [i.name for i in database.get_indexes("item")]
            print(f"source: {ROOT}")
            print(
                f"item indexes: {len(indexes)}" + (f" (dropped {args.drop})" if args.drop else "")
            )
            pages, ms = measure(path, args.items, rng, args.batch)
        print(
            f"{args.items} items (+{args.history:,} of an earlier run), {args.batch} per "
            "transaction; per item, median (p90), CPU ms:"
        )
        for kind in ("claim", "answer", "judgement"):
            p, t = sorted(pages[kind]), sorted(ms[kind])
            print(
                f"  {kind:<9} pages written {statistics.median(p):5.1f} "
                f"({p[int(len(p) * 0.9)]:5.1f})"
                f"   {statistics.median(t):6.3f} ms ({t[int(len(t) * 0.9)]:.3f})"
            )
    finally:
        database.close()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
