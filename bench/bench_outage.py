"""A model server that goes away in the middle of a run, on the real clock.

A 400-item run (200 tasks x 2 targets) works against a fake model server in its own process;
after 100 answers the server process is killed, and started again on the same port after
`--outage` seconds (20 by default). The run goes on in the foreground loop (`llmbench run`'s),
with the default probe backoff (5 s doubling to 60 s). Then a second run loses its server for
good, with a short `--limit` for the pause. Prints, for each: items COMPLETED / FAILED /
waiting, the outage, when work resumed, the probes, and how the run ended.

    .venv/bin/python bench/bench_outage.py [--tasks 200] [--outage 20] [--limit 30]
"""

import argparse
import base64
import socket
import subprocess
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
from app.db.models import NEW
from app.db.models import WAITING_FOR_JUDGE
from app.db.models import Item
from app.db.models import Run
from app.db.models import RunLog
from app.engine.foreground import run_foreground
from app.factory import create_app
from tests.engine_helpers import make_provider
from tests.engine_helpers import make_tasks
from tests.engine_helpers import start_run

SERVER = """
import sys, time
sys.path.insert(0, {root!r})
from tests.fakeserver import FakeServer
server = FakeServer(port={port})
server.start()
server.models = ["m1", "m2", "m3", "judge"]
server.default_latency = 0.01
print("ready", flush=True)
sys.stdin.read()
"""


class Server:
    """The fake model server in a child process that can be killed and started again."""

    def __init__(self, port):
        self.port, self.proc = port, None

    def start(self):
        code = SERVER.format(root=str(ROOT), port=self.port)
        self.proc = subprocess.Popen(
            [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        assert self.proc.stdout.readline().strip() == "ready"

    def kill(self):
        self.proc.kill()
        self.proc.wait()

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.stdin.close()
            self.kill()


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def one_run(app, name, tasks, outage, kill_after=100):
    """Kill the server after `kill_after` answers; start it again after `outage` s (None:
    never). Returns the figures."""
    port = free_port()
    server = Server(port)
    server.start()
    marks = {}
    answers = []

    def back():
        server.start()
        marks["back"] = time.monotonic()

    def listener(event):
        if event["event"] == "item_done":
            answers.append(time.monotonic())
            if len(answers) == kill_after:
                server.kill()
                marks["down"] = time.monotonic()
                if outage is not None:
                    threading.Timer(outage, back).start()
            elif "back" in marks and "resumed" not in marks:
                marks["resumed"] = time.monotonic()

    with database.connection_context():
        provider = make_provider(
            None, name=f"fake-{name}", timeout=10.0, url=f"http://127.0.0.1:{port}"
        )
        collection = make_tasks(tasks, collection=name, prefix=f"{name}-")
        run = start_run(
            provider, [(provider, "m1"), (provider, "m2")], collection, holder=f"bench-{name}"
        )
        started = time.monotonic()
        state = run_foreground(run.run_id, app.config, on_event=listener, holder=f"bench-{name}")
        ended = time.monotonic()
        items = Item.select().where(Item.run == run)
        counts = {
            s: items.where(Item.status == s).count()
            for s in (NEW, WAITING_FOR_JUDGE, COMPLETED, FAILED)
        }
        spent = sum(i.answer_attempts for i in items.where(Item.status == COMPLETED))
        waits = RunLog.select().where((RunLog.run == run) & (RunLog.event == "provider_waiting"))
        reason = Run.get_by_id(run.id).control_reason
    server.stop()
    return {
        "state": state,
        "counts": counts,
        "answer_attempts": spent,
        "probes": waits.count(),
        "run_s": ended - started,
        "down_s": (marks.get("back", ended) - marks["down"]) if "down" in marks else None,
        "resumed_after_s": (marks["resumed"] - marks["down"]) if "resumed" in marks else None,
        "reason": reason,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--outage", type=float, default=20.0)
    parser.add_argument("--limit", type=float, default=30.0, help="pause limit for run 2 (s)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        app = create_app(
            {
                "DB": str(Path(tmp) / "outage.db"),
                "MASTER_KEY_BASE64": base64.b64encode(b"o" * 32).decode(),
                "LOAD_DEFAULTS": False,
                "OUTAGE_LIMIT_SECONDS": 600.0,
            }
        )
        items = 2 * args.tasks
        a = one_run(app, "comes-back", args.tasks, args.outage)
        print(f"run 1: {items} items, the server away for {a['down_s']:.1f} s after 100 answers")
        print(f"  ended {a['state']} in {a['run_s']:.1f} s; counts {a['counts']}")
        print(
            f"  answer attempts spent by the {a['counts'][COMPLETED]} completed items: "
            f"{a['answer_attempts']} (1 each = none spent on the outage)"
        )
        print(
            f"  probes while away: {a['probes']}; work resumed {a['resumed_after_s']:.1f} s "
            "after the server went away"
        )
        app.config["OUTAGE_LIMIT_SECONDS"] = args.limit
        b = one_run(app, "gone", args.tasks, None)
        print(
            f"run 2: {items} items, the server gone for good after 100 answers "
            f"(pause limit {args.limit:g} s)"
        )
        print(f"  ended {b['state']} after {b['run_s']:.1f} s; counts {b['counts']}")
        print(f"  probes: {b['probes']}; reason: {b['reason']}")


if __name__ == "__main__":
    main()
