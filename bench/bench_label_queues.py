"""How long a person's next A/B pair and next Evaluate card take on a large run: the queues go
in each person's shuffled order, which works it out over the scope's kept pair ids (A/B) or sorts
the filtered items by a computed position (Evaluate) instead of walking an index. The first A/B
call finds the pairs and keeps them; the figure is of the calls after it (each a new scope, as
each request has). Wall and CPU time, per call.

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
    started, cpu = time.perf_counter(), time.process_time()
    for _ in range(repeat):
        fn()
    wall = (time.perf_counter() - started) / repeat * 1000
    print(f"{what}: {wall:.0f} ms (CPU {(time.process_time() - cpu) / repeat * 1000:.0f} ms)")


def main(tasks):
    with tempfile.TemporaryDirectory() as folder:
        app = make_app(Path(folder))
        with app.app_context(), database.connection_context():
            run, (a, b) = make_run("big", targets=[("local", "m1"), ("local", "m2")])
            for target in (a, b):
                bulk_items(run, target, tasks)
            print(f"{tasks} tasks x 2 targets")
            pair = lambda: votes.next_pair(votes.scope("big", a.id, None, b.id), "human:ann")  # noqa: E731
            _time("first A/B pair (the pairs found and kept)", pair, repeat=1)
            _time("next A/B pair (my order)", pair)
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
