"""Peak memory of importing a big JSONL dataset (seed 004) through the import path the API and
the web page use, in a fresh process per run: the process's peak RSS minus its RSS before.

    .venv/bin/python bench/bench_import_memory.py [--mb 50] [--runs 3] [--whole]

Prints the median over the runs, and the file's size for scale. `--whole` hands the importer
the file's bytes (the upload read whole, as before imports were streamed), for a baseline
measured the same way.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CHILD = """
import base64, resource, sys
sys.path.insert(0, {root!r})
from app.factory import create_app
from app.datasets import importer
app = create_app({{"DB": {db!r}, "MASTER_KEY_BASE64": base64.b64encode(b"m" * 32).decode(),
                  "LOAD_DEFAULTS": False}})
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
with open({path!r}, "rb") as handle:
    source = handle.read() if {whole!r} else handle
    result = importer.import_tasks(source, fmt="jsonl", filename="bank.jsonl")
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(before, after, result.created)
"""


def generate(path, megabytes):
    """Seed 004 lines of about 1 kB each until the file is `megabytes` MB."""
    filler = "Describe the steps, the risks and what to do when it goes wrong. " * 8
    with open(path, "w", encoding="utf-8") as handle:
        n = 0
        while handle.tell() < megabytes * 1_000_000:
            line = {
                "id": f"task-{n:07d}",
                "category": ("water", "fire", "food", "shelter")[n % 4],
                "difficulty": ("Easy", "Medium", "Hard")[n % 3],
                "scenario": [f"Situation {n}.", "You have little time."],
                "prompt": f"Question {n}: {filler}",
                "rubric": [{"id": "a", "text": "names the main step", "weight": 2}],
                "auto_fail": ["recommends something dangerous"],
            }
            handle.write(json.dumps(line) + "\n")
            n += 1
    return n


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mb", type=int, default=50)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--whole", action="store_true", help="pass the bytes, not the stream")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "bank.jsonl")
        lines = generate(path, args.mb)
        size = os.path.getsize(path) / 1e6
        grew = []
        for run in range(args.runs):
            db = os.path.join(tmp, f"bench-{run}.db")
            code = CHILD.format(root=str(ROOT), db=db, path=path, whole=args.whole)
            out = subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, check=True
            ).stdout.split()
            before, after, created = (int(x) for x in out)
            assert created == lines, (created, lines)
            grew.append((after - before) / 1024)  # ru_maxrss is in KiB on Linux
    how = "bytes read whole" if args.whole else "a stream"
    print(f"file: {size:.1f} MB, {lines} tasks (seed 004 JSONL), given as {how}")
    print(f"peak RSS growth while importing: median {statistics.median(grew):.0f} MiB")
    print("  runs: " + ", ".join(f"{g:.0f}" for g in grew) + " MiB")


if __name__ == "__main__":
    main()
