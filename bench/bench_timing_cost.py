"""What keeping each answer's stream timing costs (issue 29's budget: <= 64 bytes of gaps per
answer on average at 256 tokens, <= 0.1 ms of CPU per answer).

(a) Bytes per answer: 1 000 answers of 256 tokens (255 gaps) each, every answer at its own
    rate (ITL drawn from 8..60 ms, as local models run), with jitter around it. The gaps are
    kept as app.latency's packed histogram (Item.itl_hist); the other new columns are counted
    at 8 bytes each when set (first_answer_ms, last_token_ms, sent_ts, chunks, queue_ms;
    reasoning_tokens only for a reasoning answer, not here). Three jitter shapes:
      steady    gaps normal, sd 5 % of the ITL
      jittered  sd 15 %, and 1 % of gaps a stall 3-6x the ITL (a scheduler hiccup)
      network   sd 15 %, and 10 % of gaps near 0 ms (two tokens in one read) with the next gap
                twice as long (the network or a proxy coalescing events)
(b) CPU per answer (process time: other processes on the machine do not count): the 257
    token instants -> gaps (app.latency.gaps) -> histogram -> pack, the median of --runs runs
    over the same 1 000 answers.

    .venv/bin/python bench/bench_timing_cost.py [--answers 1000] [--runs 7]
"""

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app import latency

TOKENS = 256
OTHER_COLUMNS = ("first_answer_ms", "last_token_ms", "sent_ts", "chunks", "queue_ms")
BYTES_PER_NUMBER = 8


def steady(rng, itl):
    return [max(0.0, rng.gauss(itl, itl * 0.05)) for _ in range(TOKENS - 1)]


def jittered(rng, itl):
    out = []
    for _ in range(TOKENS - 1):
        if rng.random() < 0.01:
            out.append(itl * rng.uniform(3, 6))
        else:
            out.append(max(0.0, rng.gauss(itl, itl * 0.15)))
    return out


def network(rng, itl):
    out, owed = [], 0.0
    for _ in range(TOKENS - 1):
        if owed:
            out.append(owed)
            owed = 0.0
        elif rng.random() < 0.10:
            out.append(rng.uniform(0.0, 0.3))
            owed = max(0.0, rng.gauss(2 * itl, itl * 0.15))
        else:
            out.append(max(0.0, rng.gauss(itl, itl * 0.15)))
    return out


SHAPES = {"steady": steady, "jittered": jittered, "network": network}


def answers(shape, count, seed=29):
    """`count` answers' gaps in ms, each at its own ITL."""
    rng = random.Random(seed)
    return [SHAPES[shape](rng, rng.uniform(8.0, 60.0)) for _ in range(count)]


def instants(gaps_ms, start=1000.0):
    """The perf_counter instants (s) of a stream whose gaps are `gaps_ms`."""
    out, at = [start], start
    for gap in gaps_ms:
        at += gap / 1000.0
        out.append(at)
    return out


def bytes_per_answer(all_gaps):
    sizes = [len(latency.pack(latency.histogram(g)) or b"") for g in all_gaps]
    return statistics.fmean(sizes), max(sizes)


def cpu_per_answer_ms(all_times, runs):
    per_run = []
    for _ in range(runs):
        start = time.process_time()
        for times in all_times:
            latency.pack(latency.histogram(latency.gaps(times)))
        per_run.append((time.process_time() - start) * 1000.0 / len(all_times))
    return statistics.median(per_run), min(per_run), max(per_run)


def p90_error_ms(all_gaps):
    """The worst difference, over the answers, between the histogram's p90 and the exact one."""
    worst = 0.0
    for g in all_gaps:
        exact = latency.summary(g)["p90"]
        kept = latency.histogram_summary(latency.unpack(latency.pack(latency.histogram(g))))
        worst = max(worst, abs(kept["p90"] - exact))
    return worst


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    others = len(OTHER_COLUMNS) * BYTES_PER_NUMBER
    print(f"{args.answers} answers of {TOKENS} tokens; ITL 8..60 ms per answer")
    print()
    print(
        f"{'shape':<10} {'gaps B avg':>10} {'gaps B max':>10} {'+ columns':>10} "
        f"{'total B':>8} {'p90 err ms':>10} {'CPU ms/answer (median, min-max)':>34}"
    )
    for shape in SHAPES:
        all_gaps = answers(shape, args.answers)
        mean, biggest = bytes_per_answer(all_gaps)
        median, low, high = cpu_per_answer_ms([instants(g) for g in all_gaps], args.runs)
        print(
            f"{shape:<10} {mean:>10.1f} {biggest:>10d} {others:>10d} {mean + others:>8.1f} "
            f"{p90_error_ms(all_gaps):>10.2f} {median:>17.4f} ({low:.4f}-{high:.4f})"
        )
    print()
    print("goals: gaps <= 64 B per answer on average; CPU <= 0.1 ms per answer")


if __name__ == "__main__":
    main()
