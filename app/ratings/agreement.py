"""The judge check's agreement numbers: weighted kappa, Spearman's rho, and judge score to Likert.

Small samples (a person's ratings), so plain Python: exact integer arithmetic where it matters.
"""

import math
from collections import Counter

LIKERT = (1, 2, 3, 4, 5)
# (lowest judge score, Likert): 0-19 -> 1, 20-39 -> 2, 40-59 -> 3, 60-79 -> 4, 80-100 -> 5.
# A fractional score falls in the bin of its floor (19.5 -> 1), so equal-width bins of 20.
LIKERT_BINS = ((0, 1), (20, 2), (40, 3), (60, 4), (80, 5))


def score_to_likert(score):
    """The judge's 0-100 score as a Likert 1-5 per LIKERT_BINS; None stays None (no score)."""
    if score is None:
        return None
    if not 0 <= score <= 100:
        raise ValueError(f"a judge score must be in 0..100, got {score!r}")
    return max(likert for lowest, likert in LIKERT_BINS if score >= lowest)


def weighted_kappa(a, b, categories=LIKERT, weights="quadratic"):
    """Cohen's weighted kappa between two raters' labels of the same items, or None if undefined.

    kappa = 1 - sum(w * observed) / sum(w * expected by chance from each rater's own mix), with
    disagreement weights on the categories' positions: "quadratic" (i - j)^2, the usual choice for
    an ordinal scale like Likert (it approximates the intraclass correlation; Fleiss and Cohen
    1973), or "linear" |i - j|.
    None when there are no items, or when both raters put every item in the same one category:
    chance then explains everything and kappa is 0/0. A single constant rater against a varying
    one gives exactly 0 (their labels are independent of the other's).
    """
    if len(a) != len(b):
        raise ValueError("both raters must label the same items")
    position = {category: k for k, category in enumerate(categories)}
    unknown = sorted({v for v in (*a, *b) if v not in position}, key=repr)
    if unknown:
        raise ValueError(f"labels {unknown!r} are not among the categories {tuple(categories)!r}")
    power = {"quadratic": 2, "linear": 1}.get(weights)
    if power is None:
        raise ValueError('weights must be "quadratic" or "linear"')
    n = len(a)
    observed = Counter((position[x], position[y]) for x, y in zip(a, b, strict=True))
    rows = Counter(position[x] for x in a)
    cols = Counter(position[y] for y in b)
    # Integer weights (the usual 1/(k-1)^2 scaling cancels) keep both sums exact, so O = E gives
    # exactly 0: n * sum(w O) and sum(w r c) are both over n^2.
    disagreement = n * sum(abs(i - j) ** power * count for (i, j), count in observed.items())
    chance = sum(abs(i - j) ** power * rows[i] * cols[j] for i in rows for j in cols)
    if chance == 0:
        return None
    return 1.0 - disagreement / chance


def spearman(x, y):
    """Spearman's rho (Pearson on ranks, ties get their average rank); None if n < 2 or constant."""
    if len(x) != len(y):
        raise ValueError("x and y must have the same length")
    if len(x) < 2:
        return None
    rx, ry = _average_ranks(x), _average_ranks(y)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    sxy = sum((u - mx) * (v - my) for u, v in zip(rx, ry, strict=True))
    sxx = sum((u - mx) ** 2 for u in rx)
    syy = sum((v - my) ** 2 for v in ry)
    if sxx == 0 or syy == 0:
        return None
    # Clamp: rounding can land a perfect correlation a hair outside [-1, 1].
    return max(-1.0, min(1.0, sxy / math.sqrt(sxx * syy)))


def _average_ranks(values):
    """1-based ranks; a run of equal values shares the mean of the ranks it spans."""
    order = sorted(range(len(values)), key=lambda k: values[k])
    ranks = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for k in order[start : end + 1]:
            ranks[k] = (start + end) / 2.0 + 1.0
        start = end + 1
    return ranks
