"""app.schedules.regression: Wilcoxon p-values, the paired-drop alert, cluster vs naive bootstrap.

Every random draw is seeded, so rates asserted here are fixed numbers, not flaky estimates.
"""

import itertools
import random

import numpy as np
import pytest

from app.results.clustered import cluster_bootstrap_mean_ci
from app.results.clustered import cluster_sums_mean_ci
from app.schedules.regression import EXACT_MAX_N
from app.schedules.regression import paired_drop
from app.schedules.regression import wilcoxon_signed_rank

REPLICATIONS = 200


def _brute_force_p(diffs):
    """Two-sided exact p by enumerating all 2**n sign assignments over average ranks."""
    d = [x for x in diffs if x != 0]
    magnitudes = sorted(abs(x) for x in d)

    def average_rank(value):
        positions = [i + 1 for i, m in enumerate(magnitudes) if m == value]
        return sum(positions) / len(positions)

    ranks = [average_rank(abs(x)) for x in d]
    observed = sum(r for r, x in zip(ranks, d, strict=True) if x > 0)
    sums = [
        sum(r for r, positive in zip(ranks, signs, strict=True) if positive)
        for signs in itertools.product((False, True), repeat=len(d))
    ]
    lower = sum(s <= observed for s in sums)
    upper = sum(s >= observed for s in sums)
    return min(1.0, 2 * min(lower, upper) / len(sums))


def _exact_by_counting(diffs):
    """Exact p for larger n by counting rank sums in a dict (doubled ranks, as whole numbers)."""
    d = [x for x in diffs if x != 0]
    magnitudes = sorted(abs(x) for x in d)
    doubled = []
    for x in d:
        positions = [i + 1 for i, m in enumerate(magnitudes) if m == abs(x)]
        doubled.append(2 * sum(positions) // len(positions))
    observed = sum(r for r, x in zip(doubled, d, strict=True) if x > 0)
    counts = {0: 1}
    for r in doubled:
        step = dict(counts)
        for s, c in counts.items():
            step[s + r] = step.get(s + r, 0) + c
        counts = step
    lower = sum(c for s, c in counts.items() if s <= observed)
    upper = sum(c for s, c in counts.items() if s >= observed)
    return min(1.0, 2 * min(lower, upper) / 2 ** len(d))


@pytest.mark.parametrize(
    ("diffs", "expected"),
    [
        ([1, 2, 3], 2 / 8),  # W+ = 6 is the largest of 8 equally likely sums
        ([-1, -2, -3, -4], 2 / 16),
        ([5], 1.0),
        ([0, 0, 1, 2, 3], 2 / 8),  # zeros dropped (Wilcoxon's method), not ranked
        ([1, -1], 1.0),
        ([2, 2, 2, -2], 10 / 16),  # all tied: ranks 2.5; W+ = 7.5, P(W+ >= 7.5) = 5/16
    ],
)
def test_wilcoxon_matches_hand_computed_exact_values(diffs, expected):
    assert wilcoxon_signed_rank(diffs) == pytest.approx(expected, abs=1e-15)


def test_wilcoxon_textbook_example_darwin_zea_mays():
    # Darwin's cross- vs self-fertilised Zea mays height differences (Fisher, Design of
    # Experiments): W- = 10 + 14 = 24, n = 15, exact two-sided p = 2 * 676 / 2**15.
    diffs = [6, 8, 14, 16, 23, 24, 28, 29, 41, -48, 49, 56, 60, -67, 75]
    assert wilcoxon_signed_rank(diffs) == 0.041259765625


@pytest.mark.parametrize("diffs", [[], [0, 0, 0], [0.1 + 0.2 - 0.3]])
def test_wilcoxon_is_none_when_every_difference_is_zero(diffs):
    assert wilcoxon_signed_rank(diffs) is None


@pytest.mark.parametrize("seed", range(12))
def test_exact_wilcoxon_with_ties_equals_enumerating_every_sign_assignment(seed):
    rng = random.Random(seed)
    n = rng.randint(1, 12)
    # Few distinct magnitudes: plenty of ties, some zeros.
    diffs = [rng.choice([-3, -2, -1.5, -1, 0, 1, 1.5, 2, 3, 4]) for _ in range(n)]
    if all(x == 0 for x in diffs):
        diffs.append(1)
    assert wilcoxon_signed_rank(diffs) == pytest.approx(_brute_force_p(diffs), abs=1e-12)


def test_exact_wilcoxon_is_used_up_to_the_limit_and_matches_counting():
    rng = random.Random(99)
    diffs = [rng.choice([-4, -2, -1, 1, 2, 3, 5, 6]) for _ in range(EXACT_MAX_N)]
    assert wilcoxon_signed_rank(diffs) == pytest.approx(_exact_by_counting(diffs), abs=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_normal_approximation_is_close_to_the_exact_p_past_the_limit(seed):
    rng = random.Random(seed)
    diffs = [rng.choice([-5, -3, -2, -1, 0, 1, 2, 3, 4, 6]) for _ in range(40)]
    assert wilcoxon_signed_rank(diffs) == pytest.approx(_exact_by_counting(diffs), abs=0.01)


def _runs(seed, drop, n=30, noise=8.0):
    """(previous, current) judge scores on n tasks: per-task difficulty, seeded judge noise,
    whole-number scores clipped to 0-100 (so zeros and ties occur, as with a real judge)."""
    rng = np.random.default_rng(seed)
    base = rng.uniform(20, 90, n)
    previous = np.clip(np.round(base + rng.normal(0, noise, n)), 0, 100)
    current = np.clip(np.round(base - drop + rng.normal(0, noise, n)), 0, 100)
    return list(zip(previous.tolist(), current.tolist(), strict=True))


def test_paired_drop_returns_the_documented_shape():
    result = paired_drop(_runs(0, drop=10))
    assert set(result) == {
        "n",
        "meanDiff",
        "ciLow",
        "ciHigh",
        "wilcoxonP",
        "signP",
        "drop",
        "alert",
    }
    assert result["n"] == 30
    assert result["drop"] == -result["meanDiff"]
    assert result["ciLow"] <= result["meanDiff"] <= result["ciHigh"]


def test_paired_drop_is_deterministic_for_a_seed():
    pairs = _runs(1, drop=3)
    assert paired_drop(pairs, seed=5) == paired_drop(list(pairs), seed=5)


def test_alert_fires_on_a_ten_point_drop_in_nearly_every_replication():
    # Seed 002 §9.2 scenario 3: "New adapter scores 10% worse, warning emitted".
    fired = sum(paired_drop(_runs(s, drop=10))["alert"] for s in range(REPLICATIONS))
    assert fired / REPLICATIONS >= 0.9


@pytest.mark.parametrize("threshold", [5.0, 0.0])
def test_alert_rarely_fires_on_noise_alone(threshold):
    # threshold 0 leaves only the statistical guards (CI below 0, p < alpha): about alpha / 2,
    # the one-sided share of a two-sided 5 % test.
    fired = sum(
        paired_drop(_runs(s, drop=0), threshold=threshold)["alert"] for s in range(REPLICATIONS)
    )
    assert fired / REPLICATIONS <= 0.1


def test_alert_needs_the_minimum_number_of_pairs():
    pairs = [(80, 60)] * 9 + [(70, 55)]
    assert paired_drop(pairs)["alert"] is True
    assert paired_drop(pairs[:9])["alert"] is False


def test_alert_needs_the_drop_to_reach_the_threshold():
    pairs = [(80, 77), (70, 66), (60, 58)] * 10
    result = paired_drop(pairs, threshold=5.0)
    assert result["ciHigh"] < 0 and result["wilcoxonP"] < 0.05
    assert result["alert"] is False


def test_an_improvement_never_alerts():
    assert paired_drop(_runs(2, drop=-10))["alert"] is False


def test_paired_drop_leaves_out_pairs_without_a_score_and_handles_none_at_all():
    assert paired_drop([(None, 50), (60, None), (70, 60)])["n"] == 1
    empty = paired_drop([])
    assert empty["n"] == 0 and empty["alert"] is False and empty["meanDiff"] is None


def _repeats(seed, tasks=40, k=5, mu=60.0, task_sd=15.0, noise=5.0):
    """K answers per task sharing the task's own level: strongly correlated repeats."""
    rng = np.random.default_rng(seed)
    levels = rng.normal(mu, task_sd, tasks)
    return [(level + rng.normal(0, noise, k)).tolist() for level in levels]


def _width(ci):
    return ci["ciHigh"] - ci["ciLow"]


def _naive(clusters):
    """The bootstrap that resamples single answers as if independent: every answer a cluster."""
    return cluster_bootstrap_mean_ci([[x] for c in clusters for x in c])


def test_naive_ci_is_narrower_than_the_cluster_ci_on_correlated_repeats():
    clusters = _repeats(0)
    cluster = cluster_bootstrap_mean_ci(clusters)
    naive = _naive(clusters)
    assert cluster["mean"] == pytest.approx(naive["mean"])
    assert cluster["n"] == naive["n"] == naive["clusters"] == 200 and cluster["clusters"] == 40
    # Design effect 1 + (K - 1) * ICC = 1 + 4 * 0.9 = 4.6: the honest CI is ~2.1x wider.
    assert _width(naive) < 0.6 * _width(cluster)


def test_cluster_ci_covers_the_true_mean_at_about_the_stated_rate():
    cluster_hits = naive_hits = 0
    for seed in range(REPLICATIONS):
        clusters = _repeats(seed)
        cluster = cluster_bootstrap_mean_ci(clusters)
        naive = _naive(clusters)
        cluster_hits += cluster["ciLow"] <= 60.0 <= cluster["ciHigh"]
        naive_hits += naive["ciLow"] <= 60.0 <= naive["ciHigh"]
    assert 0.88 <= cluster_hits / REPLICATIONS <= 0.99
    # Treating 5 repeats as 5 independent answers: nowhere near 95 %.
    assert naive_hits / REPLICATIONS <= 0.8


def test_singleton_clusters_give_the_ordinary_bootstrap_of_the_mean():
    values = np.random.default_rng(3).uniform(0, 100, 50)
    ci = cluster_bootstrap_mean_ci([[v] for v in values.tolist()])
    assert ci["n"] == ci["clusters"] == 50
    assert ci["mean"] == pytest.approx(values.mean())
    assert ci["ciLow"] < ci["mean"] < ci["ciHigh"]
    # One answer a task: the width of the usual 95 % interval of a mean, 2 × 1.96 × sd / √n.
    expected = 2 * 1.96 * values.std(ddof=1) / np.sqrt(values.size)
    assert _width(ci) == pytest.approx(expected, rel=0.15)


def test_cluster_mean_is_over_every_answer_and_ignores_empty_clusters():
    ci = cluster_bootstrap_mean_ci([[1, 2, 3], [], [10]])
    assert ci["mean"] == 4.0 and ci["n"] == 4 and ci["clusters"] == 2
    assert cluster_bootstrap_mean_ci([[], []]) is None
    assert cluster_sums_mean_ci([], []) is None


def test_cluster_ci_does_not_depend_on_task_order():
    clusters = _repeats(4)
    shuffled = list(clusters)
    random.Random(5).shuffle(shuffled)
    assert cluster_bootstrap_mean_ci(clusters) == cluster_bootstrap_mean_ci(shuffled)
