"""How long people's agreement takes (Krippendorff's alpha and Fleiss' kappa, with their 1000
bootstrap rounds) for N items rated, and N pairs voted, by three people: the judge check, the
results page and the leaderboard compute it on each view.

    PYTHONPATH=. python bench/bench_labels_agreement.py [N ...]
"""

import random
import sys
import time

from app.ratings.agreement import fleiss_kappa
from app.ratings.agreement import krippendorff_alpha


def main(sizes):
    rng = random.Random(7)
    for n in sizes:
        units = [[rng.randint(1, 5) for _ in range(3)] for _ in range(n)]
        started = time.perf_counter()
        alpha = krippendorff_alpha(units)
        middle = time.perf_counter()
        votes = [[rng.choice(("low", "high", "tie")) for _ in range(3)] for _ in range(n)]
        kappa = fleiss_kappa(votes, ("low", "high", "tie"))
        done = time.perf_counter()
        print(
            f"n={n:>6}: alpha {alpha['alpha']:+.3f} in {middle - started:.2f} s, "
            f"kappa {kappa['kappa']:+.3f} in {done - middle:.2f} s"
        )


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [100, 1000, 10000])
