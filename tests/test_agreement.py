"""app.ratings.agreement: weighted kappa, Spearman's rho and the judge score's Likert bins."""

import math

import pytest

from app.ratings.agreement import LIKERT_BINS
from app.ratings.agreement import score_to_likert
from app.ratings.agreement import spearman
from app.ratings.agreement import weighted_kappa

# Hand case for kappa, categories (1, 2, 3) at positions 0, 1, 2:
#   a = 1 2 3 3, b = 1 3 3 2 -> pairs (0,0) (1,2) (2,2) (2,1); n = 4
#   rows (a): 0:1 1:1 2:2    cols (b): 0:1 1:1 2:2
A = [1, 2, 3, 3]
B = [1, 3, 3, 2]


def test_quadratic_kappa_matches_the_hand_computation():
    # w = (i - j)^2. Observed: w over the pairs = 0 + 1 + 0 + 1 = 2 -> 2/4 = 0.5.
    # Expected: sum w r_i c_j = (1*1*1 + 4*1*2) + (1*1*1 + 1*1*2) + (4*2*1 + 1*2*1) = 22 -> 22/16.
    # kappa = 1 - 0.5 / (22/16) = 1 - 8/22 = 7/11.
    assert weighted_kappa(A, B, categories=(1, 2, 3)) == pytest.approx(7 / 11)


def test_linear_kappa_matches_the_hand_computation():
    # w = |i - j|. Observed: 0 + 1 + 0 + 1 = 2 -> 0.5.
    # Expected: (1*1*1 + 2*1*2) + (1*1*1 + 1*1*2) + (2*2*1 + 1*2*1) = 14 -> 14/16.
    # kappa = 1 - 0.5 / (14/16) = 1 - 8/14 = 3/7.
    assert weighted_kappa(A, B, categories=(1, 2, 3), weights="linear") == pytest.approx(3 / 7)


def test_kappa_is_1_for_perfect_agreement():
    assert weighted_kappa([1, 3, 5, 2], [1, 3, 5, 2]) == 1.0


def test_kappa_is_0_when_one_rater_is_constant():
    # O[c, j] = cols[j] = rows[c] * cols[j] / n exactly: observed equals chance.
    assert weighted_kappa([3, 3, 3, 3], [1, 2, 4, 5]) == 0.0


def test_kappa_is_none_when_both_raters_use_one_and_the_same_category():
    # Expected disagreement is 0, so kappa is 0/0.
    assert weighted_kappa([4, 4, 4], [4, 4, 4]) is None


def test_kappa_is_none_without_items():
    assert weighted_kappa([], []) is None


def test_kappa_refuses_labels_outside_the_categories():
    with pytest.raises(ValueError, match="not among the categories"):
        weighted_kappa([1, 6], [1, 2])


def test_kappa_refuses_unknown_weights():
    with pytest.raises(ValueError, match="quadratic"):
        weighted_kappa([1, 2], [1, 2], weights="cubic")


def test_spearman_with_ties_matches_the_hand_computation():
    # x ranks 1 2 3 4 5. y = 5 6 7 8 7 sorts to 5 6 7 7 8: the two 7s share (3 + 4) / 2 = 3.5,
    # so y ranks 1 2 3.5 5 3.5. Deviations from 3: dx = -2 -1 0 1 2, dy = -2 -1 0.5 2 0.5.
    # sxy = 4 + 1 + 0 + 2 + 1 = 8, sxx = 10, syy = 4 + 1 + 0.25 + 4 + 0.25 = 9.5.
    # rho = 8 / sqrt(10 * 9.5) = 8 / sqrt(95).
    assert spearman([1, 2, 3, 4, 5], [5, 6, 7, 8, 7]) == pytest.approx(8 / math.sqrt(95))


@pytest.mark.parametrize(("y", "rho"), [([10, 20, 30, 40], 1.0), ([9, 7, 3, 1], -1.0)])
def test_spearman_is_plus_or_minus_1_for_monotone_data(y, rho):
    assert spearman([1, 2, 3, 4], y) == rho


@pytest.mark.parametrize(("x", "y"), [([1, 2, 3], [4, 4, 4]), ([2, 2], [1, 5]), ([1], [1])])
def test_spearman_is_none_for_a_constant_side_or_fewer_than_2_items(x, y):
    assert spearman(x, y) is None


def test_spearman_refuses_unequal_lengths():
    with pytest.raises(ValueError, match="same length"):
        spearman([1, 2], [1, 2, 3])


@pytest.mark.parametrize(
    ("score", "likert"),
    [(0, 1), (19, 1), (19.5, 1), (20, 2), (39, 2), (40, 3), (59.9, 3), (60, 4), (79, 4)]
    + [(80, 5), (100, 5)],
)
def test_score_to_likert_bins_by_twenty(score, likert):
    assert score_to_likert(score) == likert


def test_likert_bins_start_at_0_and_are_20_wide():
    assert [lowest for lowest, _ in LIKERT_BINS] == [0, 20, 40, 60, 80]
    assert [likert for _, likert in LIKERT_BINS] == [1, 2, 3, 4, 5]


def test_score_to_likert_keeps_a_missing_score_missing():
    assert score_to_likert(None) is None


@pytest.mark.parametrize("score", [-1, 100.5, float("nan")])
def test_score_to_likert_refuses_scores_outside_0_to_100(score):
    with pytest.raises(ValueError, match="0..100"):
        score_to_likert(score)
