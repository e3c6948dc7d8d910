"""Goodput of a big run: run_goodput() and GET /api/runs/<id>/speed (which carries it) on the
100 000-item run bench_speed_page.py seeds, against an SLO with and without an ITL bound (the ITL
bound decodes every answer's gaps). Cold: the cache emptied first; warm: the run unchanged since.

    .venv/bin/python bench/bench_goodput.py [--items 100000] [--repeat 5] [--db PATH]
"""

import argparse
import base64
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_speed_page import RUN_ID  # noqa: E402
from bench_speed_page import seed  # noqa: E402

from app.db.connection import database  # noqa: E402
from app.db.models import Run  # noqa: E402
from app.factory import create_app  # noqa: E402
from app.results.goodput import _cache as goodput_cache  # noqa: E402
from app.results.goodput import run_goodput  # noqa: E402
from app.results.speed import run_speed  # noqa: E402

SLOS = (
    {"ttftP90Ms": 300, "e2eP95Ms": 20_000, "minScore": 50},
    {"ttftP90Ms": 300, "itlP90Ms": 40, "e2eP95Ms": 20_000, "minScore": 50},
)


def timed(call, repeat, clear=None):
    """(median, min, max) ms of `call`, `clear()` before each (cold) or after one warm-up."""
    if clear is None:
        call()
    times = []
    for _ in range(repeat):
        if clear is not None:
            clear()
        started = time.perf_counter()
        call()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times), min(times), max(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--db", help="reuse (or create) this SQLite file")
    args = parser.parse_args()
    db_path = Path(args.db) if args.db else Path(tempfile.mkdtemp()) / "bench.db"
    reuse = db_path.exists()
    app = create_app(
        {
            "TESTING": True,
            "DB": str(db_path),
            "SCHEDULER_ENABLED": False,
            "LOAD_DEFAULTS": False,
            "SECRET_KEY": "bench",
            "MASTER_KEY_BASE64": base64.b64encode(b"b" * 32).decode(),
        }
    )
    with database.connection_context():
        run = Run.get(Run.run_id == RUN_ID) if reuse else seed(args.items, random.Random(1))
        speed = run_speed(run)  # its own cache: what follows times goodput alone
        for slo in SLOS:
            found = run_goodput(run, slo=slo, speed=speed)
            for t in found["targets"]:
                print(
                    f"  {t['label']}: {t['good']:,} of {t['answers']:,} good, goodput "
                    f"{t['goodput']:.3f} answers/s; {t['sentence']}"
                )
            for name, clear in (("cold", goodput_cache.clear), ("warm", None)):
                med, low, high = timed(
                    lambda slo=slo: run_goodput(run, slo=slo, speed=speed), args.repeat, clear
                )
                print(
                    f"run_goodput, SLO {sorted(slo)}, {name}: median {med:.0f} ms "
                    f"(min {low:.0f}, max {high:.0f})"
                )
        run.settings = {**(run.settings or {}), "slo": SLOS[1]}
        run.save()
    client = app.test_client()

    def api():
        assert client.get(f"/api/runs/{RUN_ID}/speed").status_code == 200

    med, low, high = timed(api, args.repeat)
    print(f"GET /api/runs/{RUN_ID}/speed with the run's SLO, warm: median {med:.0f} ms")
    verdict = "met" if med <= 200 else "NOT met"
    print(f"goal <= 200 ms for the speed figures and goodput, warm: {verdict}")
    print(f"load average while measuring: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
