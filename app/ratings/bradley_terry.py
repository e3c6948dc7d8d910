"""Bradley–Terry ratings from pairwise votes, on the Elo scale, with bootstrap intervals and ranks.

Votes are three parallel sequences: `left[k]` and `right[k]` are model indices in 0..n_models-1
and `outcome[k]` is LEFT (1.0, left won), RIGHT (0.0, right won) or TIE (0.5). A tie is half a win
for each side (Chatbot Arena's rule), so the fit only needs the win matrix W, where W[i, j] is i's
wins over j plus half their ties: once W is built, no cost depends on the number of votes.

The model is P(i beats j) = p_i / (p_i + p_j). The strengths p are the maximum-likelihood fit,
found by Newton–Raphson on ln p with a line search. Zermelo's iteration (Hunter's 2004 MM) has
the same fixed point, and the tests check agreement with it, but it crawls when a model almost
never wins: with three tiny models among twenty, the 1000 bootstrap fits took 3-7 s in MM form
and take well under 1 s here, because Newton needs 3-11 steps whatever the spread.

A rating is 400·log10(p_i), shifted so that the mean rating over the rated models is ANCHOR
(1000). The votes identify only differences; the anchor just makes the numbers read like Elo.

Two cases where the plain maximum-likelihood fit does not exist:

- A model that never wins (or never loses) would be rated -inf (+inf). Every pair of models that
  met in at least one vote gets PRIOR_WINS pseudo half-wins each way, a tiny symmetric prior
  (a 0.02-vote tie). Every rating is then finite, and the prior moves ratings by about 1 % of
  their interval's width (20 models: 3 points at 200 votes, 0.01 at 50 000). Pairs that never
  met get nothing, so the prior adds no comparisons.
- Models with no chain of votes between them cannot be compared at all. Only the largest connected
  group is rated (most models, then most votes, then lowest index). A model outside it, or with no
  votes, gets rating, interval and rank None, but keeps its counts.
"""

import numpy as np

LEFT = 1.0
RIGHT = 0.0
TIE = 0.5
ANCHOR = 1000.0
SCALE = 400.0
PRIOR_WINS = 0.01
MIN_VOTES = 10
ROUNDS = 1000
CONFIDENCE = 0.95
SEED = 20240601
TOLERANCE = 1e-10
MAX_ITERATIONS = 200
# Largest Newton step, in ln p: far from the optimum a near-flat direction can ask for thousands.
MAX_STEP = 4.0
# Bootstrap rounds are fitted in batches of about this many win-matrix cells (~8 MB per array).
_CHUNK_CELLS = 1_000_000

# Rating points per unit of natural log-strength: 400·log10(p) = _ELO · ln(p).
_ELO = SCALE / np.log(10.0)


def votes_arrays(n_models, left, right, outcome):
    """The votes as checked numpy arrays (int64, int64, float64); ValueError names what is wrong."""
    left = np.asarray(left, dtype=np.int64).reshape(-1)
    right = np.asarray(right, dtype=np.int64).reshape(-1)
    outcome = np.asarray(outcome, dtype=np.float64).reshape(-1)
    if not len(left) == len(right) == len(outcome):
        raise ValueError("left, right and outcome must have the same length")
    if len(left) and (min(left.min(), right.min()) < 0 or max(left.max(), right.max()) >= n_models):
        raise ValueError(f"model indices must be in 0..{n_models - 1}")
    if np.any(left == right):
        raise ValueError("a vote needs two different models")
    if not np.all((outcome == LEFT) | (outcome == RIGHT) | (outcome == TIE)):
        raise ValueError("outcome must be 1.0 (left won), 0.0 (right won) or 0.5 (tie)")
    return left, right, outcome


def win_matrix(n_models, left, right, outcome):
    """W[i, j] = wins of i over j plus half their ties, as an (n_models, n_models) float array."""
    left, right, outcome = votes_arrays(n_models, left, right, outcome)
    size = n_models * n_models
    # Starts as float: bincount of no votes would otherwise be an int array.
    wins = np.zeros(size)
    wins += np.bincount(left * n_models + right, weights=outcome, minlength=size)
    wins += np.bincount(right * n_models + left, weights=1.0 - outcome, minlength=size)
    return wins.reshape(n_models, n_models)


def win_rate_matrix(n_models, left, right, outcome):
    """Pairwise win rates for a heatmap: {"winRate": [[i over j or None]], "votes": [[n_ij]]}.

    The rate counts a tie as half a win; a cell with no votes (and the diagonal) is None.
    """
    wins = win_matrix(n_models, left, right, outcome)
    games = wins + wins.T
    rate = np.divide(wins, games, out=np.full_like(wins, np.nan), where=games > 0)
    return {
        "winRate": [[None if np.isnan(r) else float(r) for r in row] for row in rate],
        "votes": [[round(g) for g in row] for row in games],
    }


def fit(n_models, left, right, outcome, *, prior=PRIOR_WINS):
    """Elo-scale ratings, one per model (NaN outside the rated group), mean ANCHOR over the rest.

    `prior` is the pseudo half-wins each way per pair that met; 0 gives the plain MLE, which
    exists only when every split of the group has a win across it in both directions.
    """
    left, right, outcome = votes_arrays(n_models, left, right, outcome)
    ratings = np.full(n_models, np.nan)
    members, cells, point = _point_fit(n_models, left, right, outcome, prior)
    ratings[members] = ANCHOR + _ELO * point
    return ratings


def _point_fit(n_models, left, right, outcome, prior):
    """(members, cells, centred ln p of the members) for the largest connected group."""
    members = _rated_group(n_models, left, right)
    if not len(members):
        return members, None, np.zeros(0)
    cells = _cells(n_models, members, left, right, outcome)
    return members, cells, _fit_cells(cells, cells[3][None, :], prior)[0]


def _rated_group(n_models, left, right):
    """Indices of the largest connected group of models (sorted); empty when there are no votes."""
    games = np.bincount(left * n_models + right, minlength=n_models * n_models)
    games = games.reshape(n_models, n_models)
    games = games + games.T
    seen = np.zeros(n_models, dtype=bool)
    best, best_key = [], None
    for start in range(n_models):
        if seen[start] or not games[start].any():
            continue
        group, frontier = [start], [start]
        seen[start] = True
        while frontier:
            nxt = np.flatnonzero(games[frontier].any(axis=0) & ~seen)
            seen[nxt] = True
            group.extend(nxt.tolist())
            frontier = nxt.tolist()
        # Each vote is counted twice inside the group's block of the symmetric count matrix.
        key = (len(group), int(games[np.ix_(group, group)].sum()) // 2)
        if best_key is None or key > best_key:
            best, best_key = group, key
    return np.array(sorted(best), dtype=np.int64)


def _cells(n_models, members, left, right, outcome):
    """The group's votes as distinct cells (i < j, score of i) with counts, i/j re-indexed.

    Returns (i, j, score, counts, m). A bootstrap draws multinomial counts over these cells,
    which samples the same distribution as resampling votes, at O(cells) per round.
    """
    m = len(members)
    local = np.full(n_models, -1, dtype=np.int64)
    local[members] = np.arange(m)
    keep = local[left] >= 0  # a vote's models are both in the group or both outside it
    a, b, s = local[left[keep]], local[right[keep]], outcome[keep]
    i, j = np.minimum(a, b), np.maximum(a, b)
    score_i = np.where(a < b, s, 1.0 - s)
    code = (i * m + j) * 3 + np.rint(score_i * 2).astype(np.int64)
    codes, counts = np.unique(code, return_counts=True)
    pair, half = np.divmod(codes, 3)
    return pair // m, pair % m, half / 2.0, counts.astype(np.float64), m


def _fit_cells(cells, counts, prior, start=None):
    """Centred natural log-strengths, shape (rounds, m), for each row of cell counts (rounds, K)."""
    i, j, score, _, m = cells
    rounds = counts.shape[0]
    # Scatter every (round, cell) into its round's W[i, j] and W[j, i]: O(cells) per round.
    flat = np.concatenate([i * m + j, j * m + i])
    offset = np.arange(rounds)[:, None] * (m * m)
    weights = np.concatenate([counts * score, counts * (1.0 - score)], axis=1)
    wins = np.bincount((offset + flat).ravel(), weights.ravel(), minlength=rounds * m * m)
    wins = wins.reshape(rounds, m, m)
    wins[:, i, j] += prior
    wins[:, j, i] += prior
    if start is None:
        start = np.zeros((rounds, m))
    return _newton(wins, start)


def _newton(wins, theta):
    """Maximise the log-likelihood for a batch of win matrices (rounds, m, m) by Newton–Raphson.

    theta holds centred ln p per round. The step solves (H + 11^T) d = g: H (the negative Hessian,
    a graph Laplacian) is singular along the constant vector, and since g sums to 0 the added 11^T
    pins d to sum 0 too. Steps are capped at MAX_STEP and halved per round until the likelihood
    rises (Armijo), which keeps every round convergent from any start.
    """
    if np.any(wins.sum(axis=2) <= 0) or np.any(wins.sum(axis=1) <= 0):
        raise ValueError("a model never wins or never loses, so its MLE is infinite; use prior > 0")
    m = wins.shape[1]
    games = wins + np.swapaxes(wins, 1, 2)
    won = wins.sum(axis=2)
    diagonal = np.arange(m)
    likelihood = _log_likelihood(wins, theta)
    for _ in range(MAX_ITERATIONS):
        # P(i beats j) = logistic(theta_i - theta_j), via tanh so no exp can overflow.
        beats = 0.5 + 0.5 * np.tanh((theta[:, :, None] - theta[:, None, :]) / 2.0)
        grad = won - (games * beats).sum(axis=2)
        curvature = games * beats * np.swapaxes(beats, 1, 2)
        hessian = 1.0 - curvature
        hessian[:, diagonal, diagonal] = 1.0 + curvature.sum(axis=2)
        step = np.linalg.solve(hessian, grad[:, :, None])[:, :, 0]
        size = np.abs(step).max(axis=1)
        if size.max() < TOLERANCE:
            theta = theta + step
            return theta - theta.mean(axis=1, keepdims=True)
        step *= (MAX_STEP / np.maximum(size, MAX_STEP))[:, None]
        gain = 1e-4 * (grad * step).sum(axis=1)
        scale = np.ones(len(theta))
        for _ in range(60):
            trial = theta + scale[:, None] * step
            trial_likelihood = _log_likelihood(wins, trial)
            # The slack absorbs rounding once the gain is below what float64 resolves.
            short = trial_likelihood < likelihood + scale * gain - 1e-12 * np.abs(likelihood)
            if not short.any():
                break
            scale[short] /= 2.0
        theta, likelihood = trial, trial_likelihood
    raise ArithmeticError("Bradley–Terry fit did not converge: the MLE does not exist (prior=0?)")


def _log_likelihood(wins, theta):
    """sum_ij W_ij ln P(i beats j) per round, computed without overflow."""
    diff = theta[:, :, None] - theta[:, None, :]
    return -(wins * np.logaddexp(0.0, -diff)).sum(axis=(1, 2))


def leaderboard(
    n_models,
    left,
    right,
    outcome,
    *,
    rounds=ROUNDS,
    seed=SEED,
    min_votes=MIN_VOTES,
    prior=PRIOR_WINS,
    confidence=CONFIDENCE,
):
    """One dict per model, in index order: ratings with percentile bootstrap intervals and ranks.

    Keys: model, rating, ciLow, ciHigh, bound, rank, wins, losses, ties, winRate, votes. A model
    that never won (bound "below": only ciHigh) or never lost ("above": only ciLow) has an
    interval the prior alone closes on one side: that side is None and it gets no rank. The interval
    resamples the rated group's votes `rounds` times (seeded, so the same votes give the same
    numbers). winRate is (wins + ties / 2) / votes, None without votes. A model gets a rank only
    when it is rated and has at least `min_votes` votes; its rank is 1 + the number of ranked
    models whose ciLow is above its ciHigh (Chatbot Arena's rule), so overlapping models share one.
    rounds=0 skips the bootstrap: no intervals, so no ranks.
    """
    left, right, outcome = votes_arrays(n_models, left, right, outcome)
    rating = np.full(n_models, np.nan)
    low = np.full(n_models, np.nan)
    high = np.full(n_models, np.nan)
    members, cells, point = _point_fit(n_models, left, right, outcome, prior)
    rating[members] = ANCHOR + _ELO * point
    if len(members) and rounds:
        boot = _bootstrap(cells, point, rounds, seed, prior)
        tail = (1.0 - confidence) / 2.0 * 100.0
        low[members], high[members] = np.percentile(boot, [tail, 100.0 - tail], axis=0)
    wins, losses, ties, votes = _model_counts(n_models, left, right, outcome)
    # Never won (nor tied): the data bound the rating only from above, the prior alone sets how
    # low it goes, so its interval's lower end (and the point) would read as narrow as it is
    # made up. Shown as "below <upper end>", with no rank. Never lost: "above <lower end>".
    rated = ~np.isnan(rating) & (votes > 0)
    bound = np.where(
        rated & (wins + ties == 0), "below", np.where(rated & (losses + ties == 0), "above", "")
    )
    ranked = ~np.isnan(low) & (votes >= min_votes) & (bound == "")
    rank = ranks([(low[k], high[k]) if ranked[k] else None for k in range(n_models)])
    rows = []
    for k in range(n_models):
        rows.append(
            {
                "model": k,
                "rating": _number(rating[k]),
                "ciLow": None if bound[k] == "below" else _number(low[k]),
                "ciHigh": None if bound[k] == "above" else _number(high[k]),
                "bound": bound[k] or None,
                "rank": rank[k],
                "wins": int(wins[k]),
                "losses": int(losses[k]),
                "ties": int(ties[k]),
                "winRate": float((wins[k] + ties[k] / 2) / votes[k]) if votes[k] else None,
                "votes": int(votes[k]),
            }
        )
    return rows


def ranks(intervals):
    """Chatbot Arena's rank per (low, high) interval: 1 + the number of intervals wholly above it.

    "Wholly above" is low > high, strictly. An entry of None (no interval, or too few votes) gets
    rank None and does not count against the others.
    """
    lows = [interval[0] for interval in intervals if interval is not None]
    return [
        # int(): numpy's bools sum to a numpy integer, which JSON cannot carry.
        None if interval is None else 1 + int(sum(low > interval[1] for low in lows))
        for interval in intervals
    ]


def _bootstrap(cells, point, rounds, seed, prior):
    """Ratings of the group, shape (rounds, m), each fitted to the votes drawn with replacement.

    Multinomial counts over the distinct cells are the same draw as resampling the votes. Rounds
    run in chunks of about _CHUNK_CELLS win-matrix cells so memory stays flat for many models.
    """
    counts, m = cells[3], cells[4]
    total = counts.sum()
    rng = np.random.default_rng(seed)
    chunk = max(1, _CHUNK_CELLS // (m * m))
    ratings = []
    for first in range(0, rounds, chunk):
        size = min(chunk, rounds - first)
        draws = rng.multinomial(int(total), counts / total, size=size).astype(np.float64)
        # Warm start from the full fit: each round is a small perturbation of it.
        start = np.repeat(point[None, :], size, axis=0)
        ratings.append(ANCHOR + _ELO * _fit_cells(cells, draws, prior, start))
    return np.concatenate(ratings)


def _model_counts(n_models, left, right, outcome):
    """Per-model (wins, losses, ties, votes) as int arrays."""

    def per_model(mask_left, mask_right):
        return np.bincount(left[mask_left], minlength=n_models) + np.bincount(
            right[mask_right], minlength=n_models
        )

    wins = per_model(outcome == LEFT, outcome == RIGHT)
    losses = per_model(outcome == RIGHT, outcome == LEFT)
    ties = per_model(outcome == TIE, outcome == TIE)
    return wins, losses, ties, wins + losses + ties


def _number(value):
    """A float, or None for NaN (JSON has no NaN)."""
    return None if np.isnan(value) else float(value)
