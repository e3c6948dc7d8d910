"""Goodput against the truth: a real run through the engine on the paced server, its goodput
(results/goodput.py) beside what the server's own log says.

The paced server (tests/pacedserver.py: OpenAI SSE, TTFT 150 ms, 32 tokens 20 ms apart) has
`--slots` slots: at a concurrency above them the rest queue, so their TTFT grows by whole
answer times. The run's SLO bounds TTFT (`--ttft-ms`, default 500): an answer is good when it
started within it. Truth, from the server's log: good = requests whose first token went out
within the bound after the request came in; goodput = good / (first request received -> last
token sent). llmbench's: the same from its items (sent_ts, ttft_ms, time_taken_ms).

    .venv/bin/python bench/bench_goodput_paced.py [--requests 16] [--concurrency 2 8] [--slots 2]
"""

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.db import connection as db  # noqa: E402
from app.db import migrations  # noqa: E402
from app.db.models import Collection  # noqa: E402
from app.db.models import CollectionTask  # noqa: E402
from app.db.models import Provider  # noqa: E402
from app.db.models import Task  # noqa: E402
from app.engine.foreground import run_foreground  # noqa: E402
from app.results.goodput import run_goodput  # noqa: E402
from app.runs.lifecycle import create_run  # noqa: E402
from tests.pacedserver import PacedServer  # noqa: E402

TTFT_S, TOKENS, ITL_S = 0.15, 32, 0.02
CONFIG = {
    "LEASE_SECONDS": 15.0,
    "MAX_ATTEMPTS": 3,
    "BACKOFF_BASE_SECONDS": 2.0,
    "BACKOFF_MAX_SECONDS": 60.0,
    "MAX_RETRY_SECONDS": 900.0,
}


def run_once(url, n, concurrency, ttft_ms):
    """One real run (N tasks with a check, no judge) with settings.slo; its goodput figures."""
    with tempfile.TemporaryDirectory() as folder:
        migrations.open_db(str(Path(folder) / "goodput.db"))
        db.database.connect(reuse_if_open=True)
        provider = Provider.create(
            name="paced",
            type="OPENAI",
            base_url=url,
            models_endpoint="/v1/models",
            inference_endpoint="/v1/chat/completions",
            timeout_seconds=60,
            max_concurrency=concurrency,
        )
        collection = Collection.create(name="goodput")
        for i in range(n):
            task = Task.create(
                task_id=f"g{i}",
                category="speed",
                question=f"Question {i}?",
                excellent="e",
                good="g",
                pass_answer="p",
                incorrect_direction="x",
                checks=[{"type": "icontains", "value": "t0"}],  # the answer is "t0 t1 ..."
            )
            CollectionTask.create(collection=collection, task=task)
        run = create_run(
            {
                "targets": [{"providerId": provider.id, "model": "paced"}],
                "collectionIds": [collection.id],
                "settings": {"concurrency": concurrency, "slo": {"ttftP90Ms": ttft_ms}},
            },
            source="cli",
        )
        state = run_foreground(run.run_id, CONFIG, holder="bench-goodput")
        run = type(run).get_by_id(run.id)
        (figures,) = run_goodput(run)["targets"]
        db.database.close()
    if state != "finished":
        raise SystemExit(f"the run ended {state}")
    return figures


def truth(log, ttft_ms):
    """(good, goodput) by the server's own clock."""
    good = sum((e["first_sent"] - e["received"]) * 1000 <= ttft_ms for e in log)
    window = max(e["last_sent"] for e in log) - min(e["received"] for e in log)
    return good, good / window


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=16)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[2, 8])
    parser.add_argument("--slots", type=int, default=2)
    parser.add_argument("--ttft-ms", type=float, default=500.0)
    args = parser.parse_args()
    print(
        f"paced server: TTFT {TTFT_S * 1000:.0f} ms, {TOKENS} tokens {ITL_S * 1000:.0f} ms apart, "
        f"{args.slots} slots; SLO p90 TTFT <= {args.ttft_ms:g} ms; {args.requests} requests"
    )
    print(
        f"{'concurrency':>11} | {'good (truth)':>12} {'good (ours)':>11} | "
        f"{'goodput truth':>13} {'goodput ours':>12} {'diff':>6} | sentence"
    )
    for concurrency in args.concurrency:
        server = PacedServer(ttft=TTFT_S, tokens=TOKENS, itl=ITL_S, slots=args.slots).start()
        try:
            ours = run_once(server.url, args.requests, concurrency, args.ttft_ms)
            log = [e for e in server.log if e.get("completed", True)][-args.requests :]
        finally:
            server.stop()
        good, rate = truth(log, args.ttft_ms)
        diff = 100 * (ours["goodput"] - rate) / rate if rate else float("nan")
        print(
            f"{concurrency:>11} | {good:>12} {ours['good']:>11} | {rate:>13.3f} "
            f"{ours['goodput']:>12.3f} {diff:>+5.1f}% | {ours['sentence']}"
        )


if __name__ == "__main__":
    main()
