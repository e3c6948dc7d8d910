"""The same foreground run on SQLite and on PostgreSQL: wall time (median of --repeats) and
whether the results are the same (summary.json per model, timings aside; results.csv columns).

Starts a throwaway PostgreSQL (tests/pg_server.py: Debian's postgresql package) and the fake
model server; runs `llmbench run -c` (a subprocess, as a user would) then `llmbench report`.

    .venv/bin/python bench/bench_postgres.py [--tasks 50] [--repeats 3] [--latency 0.01]
"""

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests import pg_databases
from tests import pg_server
from tests.cli_helpers import judge_scores
from tests.cli_helpers import write_config
from tests.conftest import TEST_KEY_B64
from tests.fakeserver import FakeServer

LLMBENCH = str(Path(sys.executable).parent / "llmbench")
TIMING = {"avgTimeMs", "avgTtftMs", "latencyMs", "ttftMs"}


def run_once(work, server, db, run_id, tasks):
    config = write_config(work, server, name=f"{run_id}.yml", tasks=tasks, id=run_id)
    env = {**os.environ, "LLMBENCH_DB": db, "LLMBENCH_MASTER_KEY_BASE64": TEST_KEY_B64}
    env["FAKE_KEY"] = "sk-bench"
    started = time.monotonic()
    done = subprocess.run([LLMBENCH, "run", "-c", str(config), "--quiet"], env=env, cwd=work)
    seconds = time.monotonic() - started
    assert done.returncode == 0, f"run on {db} exited {done.returncode}"
    out = work / f"report-{run_id}"
    subprocess.run([LLMBENCH, "report", run_id, "--out", str(out)], env=env, cwd=work, check=True)
    summary = json.loads((out / "summary.json").read_text())
    with open(out / "results.csv", newline="") as f:
        columns = next(csv.reader(f))
    models = [{k: v for k, v in m.items() if k not in TIMING} for m in summary["models"]]
    return seconds, models, columns


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--latency", type=float, default=0.01)
    args = parser.parse_args()
    status = pg_server.available()
    if not status:
        sys.exit(status.reason)
    server = FakeServer()
    server.start()
    server.responder = judge_scores({"m1": 90, "m2": 60})
    server.default_latency = args.latency
    times = {"sqlite": [], "postgres": []}
    results = {}
    try:
        with pg_server.running_postgres() as url, tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            for i in range(args.repeats):
                databases = {
                    "sqlite": str(work / f"bench-{i}.db"),
                    "postgres": pg_databases.create_database(url, f"bench_{i}"),
                }
                for name, db in databases.items():
                    seconds, models, columns = run_once(work, server, db, f"{name}-{i}", args.tasks)
                    times[name].append(seconds)
                    results[name] = (models, columns)
    finally:
        server.stop()
    items = args.tasks * 2
    for name, values in times.items():
        median = statistics.median(values)
        print(
            f"{name:8s} {items} items (2 targets + judge): median {median:.2f} s "
            f"over {len(values)} runs ({', '.join(f'{v:.2f}' for v in values)})"
        )
    (m_sqlite, c_sqlite), (m_pg, c_pg) = results["sqlite"], results["postgres"]
    print(f"results.csv columns the same: {c_sqlite == c_pg}")
    print(f"summary.json per model the same (timings aside): {m_sqlite == m_pg}")
    print("avgScore:", {m["model"]: m["avgScore"] for m in m_pg})


if __name__ == "__main__":
    main()
