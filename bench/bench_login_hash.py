"""What one sign-in costs: the scrypt check of a password (n=2**14, r=8, p=1: 16 MiB), median
over the runs, and how many guesses a second that allows one core before the throttle
(5 failures per account and per address in 5 minutes) steps in.

    .venv/bin/python bench/bench_login_hash.py [--runs 20]

Measured (2026-11-28, 2 cores shared with other jobs, 20 runs): median 256 ms a check, so at
most 4 guesses a second a core, and 5 per account or address in 5 minutes with the throttle.
"""

import argparse
import statistics
import time

from app.accounts.passwords import hash_password
from app.accounts.passwords import verify_password


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    stored = hash_password("correct horse battery")
    times = []
    for _ in range(args.runs):
        start = time.perf_counter()
        verify_password("wrong horse battery", stored)
        times.append(time.perf_counter() - start)
    median = statistics.median(times)
    print(f"scrypt check: median {median * 1000:.1f} ms over {args.runs} runs")
    print(f"one core, no throttle: {1 / median:.0f} guesses/s at most")


if __name__ == "__main__":
    main()
