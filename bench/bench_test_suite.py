"""How long the test suite takes: the fast loop and the whole suite, several runs each.

    python bench/bench_test_suite.py --runs 3                     # fast loop, then everything
    python bench/bench_test_suite.py --runs 3 --busy 2            # beside 2 busy CPU loops
    python bench/bench_test_suite.py --only fast --runs 3

Prints each run's wall time, its pytest summary line and the load average, then the median.
Not part of the test run; nothing here passes or fails on a time.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMMANDS = {
    "fast": ["-m", "unit or app"],
    "all": [],
}
SUMMARY = re.compile(r"^=*\s*(\d+ (?:passed|failed).*?)\s*=*$", re.M)


def busy_loops(n):
    """n processes spinning on a CPU each (the busy machine a CI runner can be)."""
    code = "while True: pass"
    return [subprocess.Popen([sys.executable, "-c", code]) for _ in range(n)]


def one_run(args):
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args]
    start = time.monotonic()
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    wall = time.monotonic() - start
    failed = [line for line in done.stdout.splitlines() if line.startswith(("FAILED", "ERROR"))]
    for line in failed:
        print("   ", line)
    found = SUMMARY.findall(done.stdout)
    summary = found[-1] if found else f"no summary (exit {done.returncode})"
    return wall, done.returncode, summary


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--only", choices=sorted(COMMANDS), action="append")
    parser.add_argument("--busy", type=int, default=0, help="busy CPU loops beside the runs")
    options = parser.parse_args()
    loops = busy_loops(options.busy)
    try:
        for name in options.only or ["fast", "all"]:
            walls = []
            for i in range(options.runs):
                wall, code, summary = one_run(COMMANDS[name])
                walls.append(wall)
                load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
                print(f"{name} run {i + 1}: {wall:.1f} s  exit {code}  {summary}  (load {load})")
                sys.stdout.flush()
            print(f"{name}: median {statistics.median(walls):.1f} s over {len(walls)} runs\n")
    finally:
        for loop in loops:
            loop.kill()


if __name__ == "__main__":
    main()
