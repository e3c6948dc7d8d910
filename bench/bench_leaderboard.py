"""Leaderboard figures: Bradley–Terry fit + 1000 bootstrap rounds over seeded synthetic votes.

Times `leaderboard()` (median of 5 calls) for 20 targets and 50 000 votes, 10 % ties, in three
shapes: ratings close together (sd 100 points), spread out (sd 350), and three tiny targets that
almost never win (the near-separated case that makes fixed-point iterations crawl). Also times
the point fit alone and `win_rate_matrix`. Goal <= 1 s for the leaderboard.

    .venv/bin/python bench/bench_leaderboard.py [--targets 20] [--votes 50000] [--repeats 5]
"""

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.ratings import bradley_terry as bt  # noqa: E402


def synthetic_votes(true_ratings, n_votes, seed):
    """Uniform random pairs, outcomes on the Elo curve, 10 % of votes ties."""
    rng = np.random.default_rng(seed)
    n = len(true_ratings)
    left = rng.integers(0, n, n_votes)
    right = (left + rng.integers(1, n, n_votes)) % n
    p_left = 1.0 / (1.0 + 10.0 ** ((true_ratings[right] - true_ratings[left]) / 400.0))
    won = np.where(rng.random(n_votes) < p_left, bt.LEFT, bt.RIGHT)
    return left, right, np.where(rng.random(n_votes) < 0.1, bt.TIE, won)


def median_seconds(call, repeats):
    """Median wall time of `repeats` calls after one warm-up call."""
    call()
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", type=int, default=20)
    parser.add_argument("--votes", type=int, default=50_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    n = args.targets
    rng = np.random.default_rng(1)
    shapes = {
        "close (sd 100)": 1000.0 + rng.normal(0.0, 100.0, n),
        "spread (sd 350)": 1000.0 + rng.normal(0.0, 350.0, n),
        "3 tiny targets": np.concatenate([1000.0 + rng.normal(0.0, 80.0, n - 3), [-1000.0] * 3]),
    }
    print(
        f"{n} targets, {args.votes} votes, {bt.ROUNDS} bootstrap rounds, median of {args.repeats}"
    )
    for seed, (name, ratings) in enumerate(shapes.items()):
        votes = synthetic_votes(ratings, args.votes, seed)
        board = median_seconds(lambda v=votes: bt.leaderboard(n, *v), args.repeats)
        point = median_seconds(lambda v=votes: bt.fit(n, *v), args.repeats)
        matrix = median_seconds(lambda v=votes: bt.win_rate_matrix(n, *v), args.repeats)
        print(
            f"  {name:16} leaderboard {board * 1000:7.1f} ms (goal <= 1000)"
            f"   fit alone {point * 1000:6.1f} ms   win-rate matrix {matrix * 1000:5.1f} ms"
        )


if __name__ == "__main__":
    main()
