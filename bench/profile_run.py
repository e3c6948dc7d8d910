"""Where `llmbench run` spends its CPU per call: py-spy over one run on the instant fake server.

Runs `llmbench run -c config.yml --quiet` (as bench_overhead.py does: N tasks x 2 targets,
each answer judged) in a child under `py-spy record --threads` (idle samples left out), then
prints the functions with the most self time and the most inclusive time, as % of the
non-idle samples. Needs py-spy (`.venv/bin/pip install py-spy`).

    .venv/bin/python bench/profile_run.py [--tasks 1500] [--rate 200] [--top 40]
        [--keep out.txt] [--filter app/]

Kept out of the test suite.
"""

import argparse
import collections
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import bench_overhead

ROOT = Path(__file__).resolve().parent.parent


def frames(stack):
    """(function, file:line) per frame of one collapsed stack, thread name first dropped."""
    parts = stack.split(";")
    out = []
    for part in parts[1:]:
        name, _, where = part.partition(" (")
        where = where.rstrip(")")
        file = where.rsplit(":", 1)[0]
        out.append((name, file))
    return out


def short(file):
    for marker in ("site-packages/", "/lib/python3", str(ROOT) + "/"):
        if marker in file:
            return file.split(marker, 1)[1]
    return file


def report(raw, top, only):
    """Print self and inclusive tables of a py-spy raw (collapsed) file."""
    self_time = collections.Counter()
    inclusive = collections.Counter()
    total = 0
    for line in Path(raw).read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        count = int(count)
        total += count
        stack_frames = frames(stack)
        if not stack_frames:
            continue
        name, file = stack_frames[-1]
        self_time[(name, short(file))] += count
        for key in {(n, short(f)) for n, f in stack_frames}:
            inclusive[key] += count
    print(f"{total} non-idle samples\n")
    for title, counter in (("self", self_time), ("inclusive", inclusive)):
        print(f"| {title} % | function | file |\n|---|---|---|")
        shown = 0
        for (name, file), count in counter.most_common():
            if only and only not in file:
                continue
            print(f"| {100.0 * count / total:.1f} | {name} | {file} |")
            shown += 1
            if shown >= top:
                break
        print()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=1500)
    parser.add_argument("--rate", type=int, default=200)
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--keep", help="also keep py-spy's raw output here")
    parser.add_argument("--filter", help="only functions whose file contains this")
    parser.add_argument("--gil", action="store_true", help="only samples holding the GIL")
    args = parser.parse_args()
    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    fake = bench_overhead.start_fake()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            config = bench_overhead.write_config(folder, fake, args.tasks, 4)
            raw = args.keep or str(folder / "raw.txt")
            env = {
                **os.environ,
                "LLMBENCH_DB": str(folder / "llmbench.db"),
                "LLMBENCH_MASTER_KEY_BASE64": bench_overhead.KEY,
                "PYTHONPATH": str(ROOT),
                "BENCH_HWM": str(folder / "status"),
            }
            command = [
                spy,
                "record",
                "-r",
                str(args.rate),
                "-f",
                "raw",
                "--threads",
                "-o",
                raw,
                *(["--gil"] if args.gil else []),
                "--",
                *bench_overhead.llmbench_command(True),
                "run",
                "-c",
                str(config),
                "-q",
            ]
            subprocess.run(command, env=env, cwd=ROOT, check=False, capture_output=True)
            report(raw, args.top, args.filter)
    finally:
        fake.stop()


if __name__ == "__main__":
    main()
