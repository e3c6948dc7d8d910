"""`llmbench run` end to end, as CI runs it: a subprocess against the fake server (in this
process, real HTTP on 127.0.0.1), N tasks x 2 targets, the fake answering in 0 ms.

1. Plain `run --quiet`: wall time and the child's peak RSS (median of --runs).
2. The same with every CI output: gates, `--junit`, out_dir (summary.json, report.html,
   results.jsonl, results.csv): the ratio against 1 is what the outputs cost.
3. `run --reuse` of the same config (every answer and judgement taken from run 1): wall time.
4. The run screen's database read (runs/watch.snapshot, once a second on a terminal): median ms
   per call on the finished run.

    .venv/bin/python bench/bench_cli.py [--tasks 1000] [--runs 3]
"""

import argparse
import base64
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.db import migrations
from app.db.connection import database
from app.db.models import Run
from app.runs.watch import snapshot
from tests import fakeserver
from tests.cli_helpers import write_bank

LLMBENCH = Path(sys.executable).with_name("llmbench")
KEY = base64.b64encode(b"k" * 32).decode()


def config(folder, fake, tasks, out_dir=None):
    bank = write_bank(folder / "bank.jsonl", tasks)
    doc = {
        "run": {"name": "bench", "dataset": str(bank), "max_attempts": 1},
        "providers": [{"name": "fake", "type": "OPENAI", "base_url": fake.url}],
        "judge": {"provider": "fake", "model": "judge"},
        "targets": [{"provider": "fake", "model": "m1"}, {"provider": "fake", "model": "m2"}],
    }
    if out_dir:
        doc["run"]["out_dir"] = str(out_dir)
    path = folder / f"config-{out_dir is not None}.yml"
    path.write_text(yaml.safe_dump(doc))
    return path


def run_cli(db, args):
    """(seconds, exit code, peak RSS MB of this child) of one `llmbench` call."""
    env = {**os.environ, "LLMBENCH_DB": str(db), "LLMBENCH_MASTER_KEY_BASE64": KEY}
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    started = time.perf_counter()
    proc = subprocess.run([str(LLMBENCH), *args], env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if proc.returncode not in (0, 4):
        raise SystemExit(f"llmbench {' '.join(args)} exited {proc.returncode}:\n{proc.stderr}")
    # ru_maxrss of children is the largest of any child so far: report it only when it grew.
    return seconds, proc.returncode, max(peak, before) / 1024.0


def measure(fake, tasks, runs):
    """Per repetition: plain and with outputs, each on a fresh database (same work: import,
    run); then --reuse on the second one. The order alternates against drift."""
    times = {"plain": [], "outputs": [], "reuse": []}
    rss = {"plain": 0.0, "outputs": 0.0}
    reads = []
    for n in range(runs):
        kinds = ("plain", "outputs") if n % 2 == 0 else ("outputs", "plain")
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            for kind in kinds:
                db = folder / f"{kind}.db"
                args = ["run", "-q"]
                if kind == "outputs":
                    args += ["-c", str(config(folder, fake, tasks, folder / "out"))]
                    args += ["--junit", str(folder / "junit.xml"), "--fail-under", "50"]
                    args += ["--max-failed-pct", "5", "--max-auto-fail-pct", "0"]
                else:
                    args += ["-c", str(config(folder, fake, tasks))]
                seconds, _code, peak = run_cli(db, args)
                times[kind].append(seconds)
                rss[kind] = max(rss[kind], peak)
            db = folder / "outputs.db"
            reused = ["run", "-c", str(config(folder, fake, tasks)), "-q", "--reuse"]
            times["reuse"].append(run_cli(db, reused)[0])
            migrations.open_db(str(db))
            with database.connection_context():
                run = Run.select().order_by(Run.id).first()
                for _ in range(20):
                    started = time.perf_counter()
                    snapshot(run, None)
                    reads.append((time.perf_counter() - started) * 1000)
            database.close()
    return times, reads, rss


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    fake = fakeserver.FakeServer().start()
    fake.models = ["judge", "m1", "m2"]
    try:
        times, reads, rss = measure(fake, args.tasks, args.runs)
    finally:
        fake.stop()
    items = 2 * args.tasks
    p, o, r = (statistics.median(times[k]) for k in ("plain", "outputs", "reuse"))
    shown = {k: " ".join(f"{v:.1f}" for v in vs) for k, vs in times.items()}
    print(f"llmbench run, {args.tasks} tasks x 2 targets = {items} items, median of {args.runs}")
    print(
        f"  plain run --quiet:               {p:7.2f} s  ({1000 * p / items:.2f} ms/item)"
        f"  [{shown['plain']}]"
    )
    print(
        f"  + gates, --junit, out_dir files: {o:7.2f} s  (x{o / p:.2f} of plain)"
        f"  [{shown['outputs']}]"
    )
    print(
        f"  run --reuse (all reused):        {r:7.2f} s  (x{r / p:.2f} of plain)"
        f"  [{shown['reuse']}]"
    )
    print(
        f"  peak RSS of a child: plain {rss['plain']:.0f} MB, with outputs {rss['outputs']:.0f} MB"
    )
    print(
        f"  run screen snapshot on {items} items: median {statistics.median(reads):.1f} ms "
        f"(max {max(reads):.1f} ms), once a second"
    )


if __name__ == "__main__":
    main()
