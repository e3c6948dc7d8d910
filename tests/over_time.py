"""Builders for the over-time tests: finished runs with chosen scores, and a webhook receiver."""

import datetime as dt
import json
import threading
from http.server import BaseHTTPRequestHandler
from http.server import ThreadingHTTPServer

from app.db.models import COMPLETED
from app.db.models import FINISHED
from app.db.models import Collection
from app.db.models import Item
from app.db.models import Run
from app.db.models import RunCollection
from app.db.models import RunTarget

T0 = dt.datetime(2025, 4, 1, 3, 0)


def finished_run(
    run_id,
    scores,
    *,
    finished_at=T0,
    judge_model="judge-1",
    dataset_hash="d" * 64,
    collection=None,
    template=None,
    settings=None,
    tps=40.0,
    ttft=100.0,
    category_of=None,
):
    """A FINISHED run whose targets are the keys of `scores` ("provider/model") and whose
    items score as given: {series: [score of task 0, task 1, ...]} or, with repeats,
    {series: [[repeat scores of task 0], ...]}. Returns the run."""
    collection = collection or Collection.get_or_none(Collection.name == "bench")
    if collection is None:
        collection = Collection.create(name="bench")
    run = Run.create(
        run_id=run_id,
        name=run_id,
        judge_provider_name="judgeprov",
        judge_model=judge_model,
        status=FINISHED,
        phase="JUDGING",
        created_at=finished_at - dt.timedelta(minutes=5),
        started_at=finished_at - dt.timedelta(minutes=5),
        finished_at=finished_at,
        dataset_hash=dataset_hash,
        prompt_hash="p" * 64,
        template=template,
        settings=settings,
    )
    RunCollection.create(run=run, collection=collection, collection_name=collection.name)
    rows = []
    for position, (series, per_task) in enumerate(scores.items()):
        provider, model = series.split("/", 1)
        target = RunTarget.create(run=run, provider_name=provider, model=model, position=position)
        for task, task_scores in enumerate(per_task):
            if not isinstance(task_scores, list | tuple):
                task_scores = [task_scores]
            for repeat, score in enumerate(task_scores):
                rows.append(
                    {
                        "run": run.id,
                        "target": target.id,
                        "task_key": f"t{task:04d}",
                        "category": category_of(task) if category_of else "general",
                        "question": f"Question {task}?",
                        "status": COMPLETED,
                        "repeat": repeat,
                        "evaluation_score": score,
                        "answer": "a",
                        "time_taken_ms": 1000.0,
                        "ttft_ms": ttft,
                        "tokens_per_second": tps,
                        "answered_at": finished_at,
                        "judged_at": finished_at,
                    }
                )
    for start in range(0, len(rows), 500):
        Item.insert_many(rows[start : start + 500]).execute()
    return run


class Receiver:
    """A local HTTP server that records JSON POSTs and answers with scripted statuses."""

    def __init__(self):
        self.posts = []
        self.statuses = []  # answered in order; 200 once they run out
        self._changed = threading.Condition()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"null")
                with receiver._changed:
                    status = receiver.statuses.pop(0) if receiver.statuses else 200
                    receiver.posts.append({"path": self.path, "body": body, "status": status})
                    receiver._changed.notify_all()
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self):
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/hooks/secret-token-9876"

    def wait_for_posts(self, n, timeout=10.0):
        """Wait (bounded) until `n` POSTs arrived; returns them."""
        with self._changed:
            self._changed.wait_for(lambda: len(self.posts) >= n, timeout)
            return list(self.posts)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)
