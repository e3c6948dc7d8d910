"""app.ratings.bradley_terry: the fit, its references, the prior, ties, intervals and ranks."""

import math

import numpy as np
import pytest

from app.ratings import bradley_terry as bt

# Spaced so the synthetic data below can order them; mean 1000, like the fitted ratings.
TRUE_RATINGS = np.array([850.0, 930.0, 980.0, 1000.0, 1040.0, 1200.0])
TRUE_RATINGS += 1000.0 - TRUE_RATINGS.mean()


def _votes(true_ratings, n_votes, seed, tie_rate=0.0):
    """Votes drawn from the Bradley–Terry model: uniform random pairs, P(left) on the Elo curve."""
    rng = np.random.default_rng(seed)
    n = len(true_ratings)
    left = rng.integers(0, n, n_votes)
    right = (left + rng.integers(1, n, n_votes)) % n
    p_left = 1.0 / (1.0 + 10.0 ** ((true_ratings[right] - true_ratings[left]) / 400.0))
    tie = rng.random(n_votes) < tie_rate
    outcome = np.where(tie, bt.TIE, np.where(rng.random(n_votes) < p_left, bt.LEFT, bt.RIGHT))
    return left, right, outcome


def _log_strengths(ratings):
    """Centred ln p from Elo-scale ratings."""
    theta = (np.asarray(ratings) - bt.ANCHOR) * math.log(10.0) / 400.0
    return theta - theta.mean()


def _zermelo_mm(n, left, right, outcome, prior):
    """Reference 1: Hunter's MM (Zermelo) from the raw votes, p_i <- W_i / sum_j n_ij/(p_i+p_j)."""
    wins = [[0.0] * n for _ in range(n)]
    for i, j, o in zip(left, right, outcome, strict=True):
        wins[i][j] += o
        wins[j][i] += 1.0 - o
    for i in range(n):
        for j in range(n):
            if i != j and wins[i][j] + wins[j][i] > 0:
                wins[i][j] += prior
    p = [1.0] * n
    for _ in range(100_000):
        new = []
        for i in range(n):
            games = sum((wins[i][j] + wins[j][i]) / (p[i] + p[j]) for j in range(n) if j != i)
            new.append(sum(wins[i]) / games)
        theta = np.log(new) - np.log(new).mean()
        done = np.max(np.abs(theta - np.log(p))) < 1e-13
        p = list(np.exp(theta))
        if done:
            return theta
    raise AssertionError("reference MM did not converge")


def _irls_logistic(n, left, right, outcome, prior):
    """Reference 2: IRLS logistic regression on the vote-level design matrix (+1 left, -1 right).

    Model 0 is the baseline column; a tie is a response of 0.5; the prior is one 0.5-response row
    of weight 2 * prior per pair that met.
    """
    rows, ys, ws = [], [], []
    for i, j, o in zip(left, right, outcome, strict=True):
        rows.append((i, j))
        ys.append(o)
        ws.append(1.0)
    for i, j in sorted({(min(a, b), max(a, b)) for a, b in zip(left, right, strict=True)}):
        if prior:
            rows.append((i, j))
            ys.append(0.5)
            ws.append(2.0 * prior)
    x = np.zeros((len(rows), n))
    for k, (i, j) in enumerate(rows):
        x[k, i], x[k, j] = 1.0, -1.0
    x = x[:, 1:]
    y, w = np.array(ys), np.array(ws)
    beta = np.zeros(n - 1)
    for _ in range(100):
        mu = 1.0 / (1.0 + np.exp(-(x @ beta)))
        info = x.T @ (x * (w * mu * (1.0 - mu))[:, None])
        delta = np.linalg.solve(info, x.T @ (w * (y - mu)))
        beta += delta
        if np.max(np.abs(delta)) < 1e-14:
            break
    theta = np.concatenate([[0.0], beta])
    return theta - theta.mean()


@pytest.mark.parametrize("reference", [_zermelo_mm, _irls_logistic])
@pytest.mark.parametrize("prior", [0.0, bt.PRIOR_WINS])
def test_fit_agrees_with_an_independent_reference_to_1e6(reference, prior):
    left, right, outcome = _votes(TRUE_RATINGS, 600, seed=11, tie_rate=0.15)
    fitted = _log_strengths(bt.fit(len(TRUE_RATINGS), left, right, outcome, prior=prior))
    expected = reference(len(TRUE_RATINGS), left, right, outcome, prior)
    np.testing.assert_allclose(fitted, expected, rtol=0, atol=1e-6)


def test_fitted_order_matches_the_true_order():
    left, right, outcome = _votes(TRUE_RATINGS, 6000, seed=1)
    ratings = bt.fit(len(TRUE_RATINGS), left, right, outcome)
    assert list(np.argsort(ratings)) == list(np.argsort(TRUE_RATINGS))


def test_true_ratings_fall_inside_the_95_percent_intervals_at_about_that_rate():
    # 20 seeded replications x 6 models = 120 intervals; fixed seeds, so never flaky.
    inside = []
    for seed in range(20):
        rows = bt.leaderboard(len(TRUE_RATINGS), *_votes(TRUE_RATINGS, 1500, seed=100 + seed))
        inside += [row["ciLow"] <= TRUE_RATINGS[row["model"]] <= row["ciHigh"] for row in rows]
    assert 0.85 <= sum(inside) / len(inside) <= 1.0


def test_ratings_are_anchored_to_a_mean_of_1000():
    ratings = bt.fit(len(TRUE_RATINGS), *_votes(TRUE_RATINGS, 500, seed=2))
    assert ratings.mean() == pytest.approx(1000.0, abs=1e-9)


def test_a_tie_counts_as_half_a_win():
    # By hand: 0 beats 1 once and they tie once -> W01 = 1.5, W10 = 0.5. With two models the MLE
    # has p0 / (p0 + p1) = 1.5 / 2, so p0 / p1 = 3: a gap of 400 log10(3) = 190.85 points,
    # split around the mean of 1000.
    ratings = bt.fit(2, [0, 0], [1, 1], [bt.LEFT, bt.TIE], prior=0.0)
    gap = 400.0 * math.log10(3.0)
    np.testing.assert_allclose(ratings, [1000.0 + gap / 2, 1000.0 - gap / 2], atol=1e-9)


def test_win_rate_counts_a_tie_as_half_a_win():
    rows = bt.leaderboard(2, [0, 0, 1, 1], [1, 1, 0, 0], [bt.LEFT, bt.TIE, bt.TIE, bt.RIGHT])
    # Model 0 wins vote 1 as left and vote 4 as right, and ties votes 2 and 3.
    assert (rows[0]["wins"], rows[0]["losses"], rows[0]["ties"]) == (2, 0, 2)
    assert rows[0]["winRate"] == pytest.approx((2 + 0.5 * 2) / 4)
    assert rows[1]["winRate"] == pytest.approx((0 + 0.5 * 2) / 4)


@pytest.mark.parametrize("side", ["never_wins", "never_loses"])
def test_a_model_that_never_wins_or_never_loses_is_bounded_on_one_side_and_has_no_rank(side):
    left, right, outcome = _votes(TRUE_RATINGS, 1200, seed=3)
    # Model 0 loses (or wins) every vote it is in.
    zero_won = bt.LEFT if side == "never_loses" else bt.RIGHT
    outcome = np.where(left == 0, zero_won, np.where(right == 0, 1.0 - zero_won, outcome))
    rows = bt.leaderboard(len(TRUE_RATINGS), left, right, outcome)
    assert all(math.isfinite(row["rating"]) for row in rows)
    others = [row["rating"] for row in rows[1:]]
    assert rows[0]["rank"] is None  # its interval is closed on one side by the prior alone
    if side == "never_wins":
        assert rows[0]["bound"] == "below" and rows[0]["ciLow"] is None
        assert rows[0]["rating"] < min(others) and math.isfinite(rows[0]["ciHigh"])
    else:
        assert rows[0]["bound"] == "above" and rows[0]["ciHigh"] is None
        assert rows[0]["rating"] > max(others) and math.isfinite(rows[0]["ciLow"])
    assert all(row["bound"] is None and row["rank"] is not None for row in rows[1:])


def test_without_the_prior_a_model_that_never_wins_is_refused():
    with pytest.raises(ValueError, match="prior > 0"):
        bt.fit(3, [0, 1, 2], [1, 2, 0], [bt.LEFT, bt.LEFT, bt.RIGHT], prior=0.0)


def test_models_outside_the_largest_connected_group_are_not_rated():
    # 0-1-2 form a group with 3 votes, 3-4 a group with 5 votes, model 5 has none.
    left = [0, 1, 2, 3, 3, 4, 4, 3]
    right = [1, 2, 0, 4, 4, 3, 3, 4]
    outcome = [bt.LEFT, bt.LEFT, bt.LEFT, bt.LEFT, bt.RIGHT, bt.TIE, bt.LEFT, bt.LEFT]
    rows = bt.leaderboard(6, left, right, outcome, min_votes=1)
    assert [row["rating"] is not None for row in rows] == [True] * 3 + [False] * 3
    assert rows[3]["rank"] is None and rows[3]["ciLow"] is None and rows[3]["votes"] == 5
    assert rows[5] == {
        "model": 5,
        "rating": None,
        "ciLow": None,
        "ciHigh": None,
        "bound": None,
        "rank": None,
        "wins": 0,
        "losses": 0,
        "ties": 0,
        "winRate": None,
        "votes": 0,
    }


def test_rank_is_one_plus_the_models_whose_interval_lies_wholly_above():
    # Hand case. 0: [1100, 1200], 1: [1050, 1150], 2: [900, 1000], 3: [1000, 1100], 4: none.
    # 0 and 1 overlap -> both 1. 2: lows above 1000 are 1100 and 1050 -> 3 (3's low 1000 is not
    # above 1000: strictly above). 3: low above 1100 -> none (1100 is not above 1100) -> 1.
    intervals = [(1100, 1200), (1050, 1150), (900, 1000), (1000, 1100), None]
    assert bt.ranks(intervals) == [1, 1, 3, 1, None]


def test_leaderboard_ranks_separated_models_apart_and_close_ones_together():
    ratings = np.array([700.0, 1000.0, 1005.0, 1300.0])
    rows = bt.leaderboard(4, *_votes(ratings, 4000, seed=4))
    assert [row["rank"] for row in rows] == [4, 2, 2, 1]


def test_a_model_with_fewer_votes_than_the_minimum_has_a_rating_but_no_rank():
    left, right, outcome = _votes(TRUE_RATINGS[:3], 300, seed=5)
    left, right, outcome = [*left, 3], [*right, 0], [*outcome, bt.LEFT]
    rows = bt.leaderboard(4, left, right, outcome, min_votes=10)
    assert rows[3]["votes"] == 1 and rows[3]["rating"] is not None
    assert rows[3]["rank"] is None
    assert all(row["rank"] is not None for row in rows[:3])


def test_the_leaderboard_is_the_same_for_the_same_votes_in_any_order():
    left, right, outcome = _votes(TRUE_RATINGS, 800, seed=6, tie_rate=0.1)
    order = np.random.default_rng(7).permutation(len(left))
    first = bt.leaderboard(len(TRUE_RATINGS), left, right, outcome)
    second = bt.leaderboard(len(TRUE_RATINGS), left[order], right[order], outcome[order])
    assert first == second


def test_a_different_seed_moves_the_intervals_but_not_the_ratings():
    votes = _votes(TRUE_RATINGS, 800, seed=8)
    first = bt.leaderboard(len(TRUE_RATINGS), *votes, seed=1)
    second = bt.leaderboard(len(TRUE_RATINGS), *votes, seed=2)
    assert [r["rating"] for r in first] == [r["rating"] for r in second]
    assert [r["ciLow"] for r in first] != [r["ciLow"] for r in second]


def test_win_rate_matrix_gives_pairwise_rates_and_counts_with_none_where_nobody_met():
    # 0 vs 1: 0 wins, then a tie -> 0 over 1 is 1.5 / 2. 1 vs 2: 2 wins once. 0 and 2 never met.
    matrix = bt.win_rate_matrix(3, [0, 1, 2], [1, 0, 1], [bt.LEFT, bt.TIE, bt.LEFT])
    assert matrix["winRate"] == [[None, 0.75, None], [0.25, None, 0.0], [None, 1.0, None]]
    assert matrix["votes"] == [[0, 2, 0], [2, 0, 1], [0, 1, 0]]


def test_no_votes_give_an_empty_leaderboard_and_matrix():
    assert [row["rating"] for row in bt.leaderboard(2, [], [], [])] == [None, None]
    assert bt.win_rate_matrix(2, [], [], []) == {
        "winRate": [[None, None], [None, None]],
        "votes": [[0, 0], [0, 0]],
    }


@pytest.mark.parametrize(
    ("left", "right", "outcome", "message"),
    [
        ([0], [0], [bt.LEFT], "two different models"),
        ([0], [3], [bt.LEFT], "0..2"),
        ([0], [1], [0.7], "outcome must be"),
        ([0, 1], [1], [bt.LEFT], "same length"),
    ],
)
def test_bad_votes_are_refused_with_what_is_wrong(left, right, outcome, message):
    with pytest.raises(ValueError, match=message):
        bt.leaderboard(3, left, right, outcome)
