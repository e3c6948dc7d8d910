"""How long a person's next A/B pair and next Evaluate card take on a large run: the queues go
in each person's shuffled order, which reads the pending pairs' ids (A/B) or sorts the filtered
items by a computed position (Evaluate) instead of walking an index.

    PYTHONPATH=. python bench/bench_label_queues.py [TASKS]
"""

import sys
import tempfile
import time
from pathlib import Path

from app.db.connection import database
from app.ratings import cards
from app.ratings import votes
from tests.conftest import make_app
from tests.factories import bulk_items
from tests.factories import make_run


def _time(what, fn, repeat=5):
    started = time.perf_counter()
    for _ in range(repeat):
        fn()
    print(f"{what}: {(time.perf_counter() - started) / repeat * 1000:.0f} ms")


def main(tasks):
    with tempfile.TemporaryDirectory() as folder:
        app = make_app(Path(folder))
        with app.app_context(), database.connection_context():
            run, (a, b) = make_run("big", targets=[("local", "m1"), ("local", "m2")])
            for target in (a, b):
                bulk_items(run, target, tasks)
            scope = votes.scope("big", a.id, None, b.id)
            print(f"{tasks} tasks x 2 targets")
            _time("next A/B pair (my order)", lambda: votes.next_pair(scope, "human:ann"))
            queue = cards.Filters({"run": "big", "unrated": True})
            queue.person = "human:ann"
            queue.run_pk = run.id
            first = cards.next_id(queue)
            _time("next Evaluate card (my queue)", lambda: cards.next_id(queue, first))
            plain = cards.Filters({"run": "big"})
            plain.run_pk = run.id
            _time("next Evaluate card (item order)", lambda: cards.next_id(plain, first))
        database.close()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20_000)
