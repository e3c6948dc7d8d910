"""What one claim costs as a run grows: N items already done, then claims of the items left.

For each size: a run of 2 targets with N items already COMPLETED, then as many NEW (the
middle of a run; at least 2 per claim); times each claim (the UPDATE ... RETURNING in its
IMMEDIATE transaction) with today's statement (engine/claims.py, partial indexes) and with
the statement before m024 on the plan SQLite chose for it on main (EXPLAIN QUERY PLAN: the
item_target_id index, forced here with INDEXED BY since this database has better ones), which
walks the target's items in id order past the done ones.
Both on the same database, alternating; median ms per claim.

    .venv/bin/python bench/bench_claims.py [--sizes 600,6000,60000] [--claims 200]
"""

import argparse
import base64
import datetime as dt
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.clock import db_text
from app.db.connection import database
from app.db.models import COMPLETED
from app.db.models import NEW
from app.db.models import PENDING
from app.db.models import Item
from app.db.models import Run
from app.db.models import RunTarget
from app.engine import claims
from app.factory import create_app

OLD_CLAIM_SQL = (
    "UPDATE item SET attempts = attempts + 1, last_attempt_at = ?, "
    "first_attempt_at = COALESCE(first_attempt_at, ?), claimed_until = ? "
    "WHERE id = (SELECT id FROM item INDEXED BY item_target_id WHERE run_id = ? AND status = ? "
    "AND target_id = ? "
    "AND (next_retry_at IS NULL OR next_retry_at <= ?) "
    "AND (claimed_until IS NULL OR claimed_until <= ?) ORDER BY id LIMIT 1) "
    "AND EXISTS (SELECT 1 FROM run WHERE id = ? AND status = 'PENDING' AND control = 'running') "
    "RETURNING id, attempts, task_key, question, system_prompt, answer, first_attempt_at, "
    "target_id"
)
T0 = dt.datetime(2026, 1, 1)


def old_claim(run_id, now, deadline, target_id):
    params = [db_text(now), db_text(now), db_text(deadline), run_id, NEW, target_id]
    params += [db_text(now), db_text(now), run_id]
    with database.atomic("IMMEDIATE"):
        return database.execute_sql(OLD_CLAIM_SQL, params).fetchone()


def seed(size, left):
    run = Run.create(
        run_id=f"claims-{size}",
        name="claims",
        judge_provider_name="judge",
        judge_model="j",
        status=PENDING,
        control="running",
    )
    targets = [
        RunTarget.create(run=run, provider_name="p", model=m, label=m, position=i)
        for i, m in enumerate(("m1", "m2"))
    ]
    fields = [Item.run, Item.target, Item.task_key, Item.question, Item.status]
    with database.atomic():
        rows = []
        for n in range(size):
            rows.append((run.id, targets[n % 2].id, f"t{n}", f"Q {n}?", COMPLETED))
            if len(rows) == 5000:
                Item.insert_many(rows, fields=fields).execute()
                rows = []
        # The items left, after the done ones as in a run (2 per claim of target 1, at least).
        for n in range(max(4 * left, size)):
            rows.append((run.id, targets[n % 2].id, f"l{n}", f"Q {n}?", NEW))
            if len(rows) == 5000:
                Item.insert_many(rows, fields=fields).execute()
                rows = []
        if rows:
            Item.insert_many(rows, fields=fields).execute()
    return run, targets


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="600,6000,60000")
    parser.add_argument("--claims", type=int, default=200)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="llmbench-bench-claims-"))
    create_app(
        {
            "TESTING": True,
            "DB": str(tmp / "bench.db"),
            "SCHEDULER_ENABLED": False,
            "LOAD_DEFAULTS": False,
            "SECRET_KEY": "bench",
            "MASTER_KEY_BASE64": base64.b64encode(b"b" * 32).decode(),
            "SYSMETRICS_SECONDS": 0,
        }
    )
    print("| items done in the run | claim now (ms, median) | claim before m024 | ratio |")
    print("|---|---|---|---|")
    try:
        with database.connection_context():
            for size in (int(s) for s in args.sizes.split(",")):
                run, (t1, _t2) = seed(size, args.claims)
                new, old = [], []
                deadline = T0 + dt.timedelta(hours=1)
                for k in range(args.claims):
                    # Alternate which goes first; each claims the next item of target 1.
                    for which in ("new", "old") if k % 2 == 0 else ("old", "new"):
                        started = time.perf_counter()
                        if which == "new":
                            claims.claim(run.id, NEW, T0, deadline, t1.id)
                        else:
                            old_claim(run.id, T0, deadline, t1.id)
                        (new if which == "new" else old).append(time.perf_counter() - started)
                n_ms, o_ms = (1000 * statistics.median(x) for x in (new, old))
                print(f"| {size:,} | {n_ms:.3f} | {o_ms:.3f} | {o_ms / n_ms:.0f}x |", flush=True)
    finally:
        if not database.is_closed():
            database.close()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
