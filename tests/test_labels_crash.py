"""People's labels survive a restart and a kill -9 in the middle of a session: every rating and
vote the server acknowledged is there after it comes back, and nothing is stored twice."""

import os
import signal
import subprocess
import sys
import threading

import pytest
import requests

from app.config import REPO_ROOT
from app.db.connection import database
from app.db.models import Item
from tests.factories import add_item
from tests.factories import make_run
from tests.factories import shown_pair

TASKS = 60


def _start(db):
    env = {k: v for k, v in os.environ.items() if not k.startswith("LLMBENCH_")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.labels_server", db],
        cwd=REPO_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    line = proc.stdout.readline()  # blocks until the server listens (or the process died)
    if not line.startswith("port "):
        proc.kill()
        proc.wait(timeout=10)
        proc.stdout.close()
        raise AssertionError(f"the server did not start: {line!r}")
    return proc, f"http://127.0.0.1:{int(line.split()[1])}"


@pytest.fixture
def seeded(app, tmp_path):
    """A finished run of two targets x TASKS answered tasks in the app's database file."""
    run, (a, b) = make_run("crash", targets=[("local", "m1"), ("local", "m2")])
    for target in (a, b):
        for n in range(TASKS):
            add_item(run, target, f"t{n:02d}", score=50.0)
    pairs = [
        (x.id, y.id, shown_pair(x.id, y.id))
        for x, y in zip(
            Item.select().where(Item.target == a).order_by(Item.task_key),
            Item.select().where(Item.target == b).order_by(Item.task_key),
            strict=True,
        )
    ]
    database.close()
    return app.config["DB"], pairs


@pytest.mark.slow
def test_acknowledged_ratings_and_votes_survive_kill_9_and_a_restart(seeded):
    db, pairs = seeded
    proc, base = _start(db)
    acked_votes, acked_ratings = [], []
    enough = threading.Event()

    def session():
        with requests.Session() as http:
            for n, (left, right, token) in enumerate(pairs):
                try:
                    vote = http.post(
                        f"{base}/api/pairwise/votes",
                        json={"pairToken": token, "winner": "LEFT"},
                        timeout=10,
                    )
                    rating = http.put(
                        f"{base}/api/runs/crash/items/{left}/rating",
                        json={"rating": 1 + n % 5, "tags": [f"t{n}"]},
                        timeout=10,
                    )
                except requests.RequestException:
                    return  # the server was killed under this request
                if vote.status_code == 201:
                    acked_votes.append((left, right, token))
                if rating.status_code == 200:
                    acked_ratings.append((left, 1 + n % 5))
                if n == TASKS // 2:
                    enough.set()

    worker = threading.Thread(target=session)
    worker.start()
    assert enough.wait(timeout=60), "the session never got half way"
    os.kill(proc.pid, signal.SIGKILL)  # mid-session: requests are still coming
    proc.wait(timeout=10)
    proc.stdout.close()
    worker.join(timeout=30)
    assert TASKS // 2 <= len(acked_votes) < TASKS

    proc, base = _start(db)  # the restart
    try:
        votes = requests.get(f"{base}/api/pairwise/votes?format=json", timeout=10).json()
        ratings = requests.get(f"{base}/api/ratings?format=json", timeout=10).json()
        stored_votes = [(v["leftItemId"], v["rightItemId"]) for v in votes]
        assert {(left, right) for left, right, _token in acked_votes} <= set(stored_votes)
        assert len(stored_votes) == len(set(stored_votes))  # nothing twice
        by_item = {r["itemId"]: r["rating"] for r in ratings}
        assert all(by_item.get(item) == stars for item, stars in acked_ratings)
        # The session goes on after the restart: the same pair token again answers with the
        # vote already stored, not a second one.
        _left, _right, token = acked_votes[0]
        again = requests.post(
            f"{base}/api/pairwise/votes", json={"pairToken": token, "winner": "RIGHT"}, timeout=10
        )
        assert again.status_code == 200 and again.json()["winner"] == "LEFT"
        after = requests.get(f"{base}/api/pairwise/votes?format=json", timeout=10).json()
        assert len(after) == len(votes)
    finally:
        proc.kill()
        proc.wait(timeout=10)
        proc.stdout.close()
