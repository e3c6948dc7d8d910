"""How long the speed charts take to draw on a big run, cold (nothing kept) and warm (kept per run
and latest item change), and how big each SVG is.

Uses bench_speed_page's seeded run (100 000 items, 2 targets with send times, queue times and
token gaps), seeding it when the database is new.

    .venv/bin/python bench/bench_speed_charts.py [--items 100000] [--db PATH]
"""

import argparse
import base64
import random
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
from app.db.models import RunTarget  # noqa: E402
from app.factory import create_app  # noqa: E402
from app.results.run_speed_charts import speed_chart  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--db", help="reuse (or create) this SQLite file")
    args = parser.parse_args()
    db_path = Path(args.db) if args.db else Path(tempfile.mkdtemp()) / "bench.db"
    reuse = db_path.exists()
    create_app(
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
        target = RunTarget.select().where(RunTarget.run == run).first()
        charts = [("quality-speed", {}), ("ttft", {}), ("itl", {})]
        charts.append(("timeline", {"target": target.id}))
        for attempt in ("cold", "warm"):
            for name, extra in charts:
                started = time.perf_counter()
                svg = speed_chart(run, name, **extra)
                took = 1000 * (time.perf_counter() - started)
                print(f"{attempt:4} {name:13} {took:7.0f} ms  {len(svg) / 1024:4.0f} KiB")


if __name__ == "__main__":
    main()
