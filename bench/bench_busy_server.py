"""A model server that is busy for 20 s in the middle of a run, on the real clock.

A 200-item run (100 tasks x 2 targets, the judge on the same server) works in the foreground
loop (`llmbench run`'s) against an in-process fake model server. After 90 answers, so that the
second target's warm-up falls in it, the server is busy for `--busy` seconds (20 by default):

  429          every call answered 429 with Retry-After 1
  503 loading  every call answered llama.cpp's 503 {"error": {"message": "Loading model"}}
  restart      the server down (connection refused) for half the spell, then 503 "Loading
               model" for the spell (down 10 s, then 503 for 20 s)

Each run is bounded: a server busy past `--limit` seconds (120 by default) pauses it. Prints,
per scenario: how the run ended, items FAILED / finished, what the run said it waited for, the
answer attempts spent, and the wall time.

    .venv/bin/python bench/bench_busy_server.py [--tasks 100] [--busy 20] [--limit 120]
"""

import argparse
import base64
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.db.connection import database
from app.db.models import COMPLETED
from app.db.models import FAILED
from app.db.models import Item
from app.db.models import Run
from app.db.models import RunLog
from app.engine.foreground import run_foreground
from app.factory import create_app
from tests.engine_helpers import make_provider
from tests.engine_helpers import make_tasks
from tests.engine_helpers import start_run
from tests.fakeserver import FakeServer

LOADING = {"error": {"code": 503, "message": "Loading model", "type": "unavailable_error"}}
SCENARIOS = {
    "429": ({"status": 429, "retry_after": 1, "text": "slow down"}, 0.0),
    "503 loading": ({"status": 503, "body": LOADING}, 0.0),
    "restart": ({"status": 503, "body": LOADING}, 0.5),  # down for half the spell first
}


class Spell:
    """The server's busy spell: begins on the n-th answer, answers `reply` for `seconds`
    (after `down` seconds of being stopped, for a restart)."""

    def __init__(self, server, reply, seconds, down):
        self.server, self.reply, self.seconds, self.down = server, reply, seconds, down
        self.began = None
        server.responder = self.respond

    def begin(self):
        self.began = time.monotonic()
        if self.down:
            self.server.stop()
            threading.Timer(self.down, self.server.restart).start()

    def respond(self, call):
        if self.began is not None and time.monotonic() - self.began < self.down + self.seconds:
            return dict(self.reply)
        return None


def one_run(app, name, tasks, busy, after):
    """One 2-target run with a busy spell after `after` answers; its figures."""
    reply, down_share = SCENARIOS[name]
    server = FakeServer().start()
    server.default_latency = 0.005
    spell = Spell(server, reply, busy, busy * down_share)
    answers = []

    def listener(event):
        if event["event"] == "item_done":
            answers.append(event)
            if len(answers) == after:
                spell.begin()

    tag = name.replace(" ", "-")
    with database.connection_context():
        provider = make_provider(server, name=f"fake-{tag}", timeout=10.0)
        collection = make_tasks(tasks, collection=tag, prefix=f"{tag}-")
        run = start_run(
            provider, [(provider, "m1"), (provider, "m2")], collection, holder=f"bench-{tag}"
        )
        started = time.monotonic()
        state = run_foreground(run.run_id, app.config, on_event=listener, holder=f"bench-{tag}")
        wall = time.monotonic() - started
        items = Item.select().where(Item.run == run)
        failed = items.where(Item.status == FAILED).count()
        finished = items.where(Item.status == COMPLETED).count()
        spent = sum(i.answer_attempts or 0 for i in items)
        waits = RunLog.select().where((RunLog.run == run) & (RunLog.event == "provider_waiting"))
        whys = list(dict.fromkeys(w.data["error"] for w in waits))
        reason = Run.get_by_id(run.id).control_reason
    server.stop()
    return {
        "state": state,
        "total": 2 * tasks,
        "failed": failed,
        "finished": finished,
        "spent": spent,
        "probes": waits.count(),
        "whys": whys,
        "wall": wall,
        "reason": reason,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=100, help="tasks per target (2 targets)")
    parser.add_argument("--busy", type=float, default=20.0, help="the busy spell (s)")
    parser.add_argument("--after", type=int, default=90, help="answers before the spell")
    parser.add_argument("--limit", type=float, default=120.0, help="pause past this (s)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        app = create_app(
            {
                "DB": str(Path(tmp) / "busy.db"),
                "MASTER_KEY_BASE64": base64.b64encode(b"b" * 32).decode(),
                "LOAD_DEFAULTS": False,
                "OUTAGE_LIMIT_SECONDS": args.limit,
            }
        )
        for name in SCENARIOS:
            r = one_run(app, name, args.tasks, args.busy, args.after)
            print(
                f"{name:12} {r['total']} items: ended {r['state']}, FAILED {r['failed']}, "
                f"finished {r['finished']}; answer attempts {r['spent']}; "
                f"waited for: {', '.join(r['whys']) or '-'} ({r['probes']} probes); "
                f"wall {r['wall']:.1f} s"
            )
            if r["reason"]:
                print(f"{'':12} paused: {r['reason']}")


if __name__ == "__main__":
    main()
