"""Agreement between people: Krippendorff's alpha (ordinal) over the items two or more people
rated, Fleiss' kappa over the pairs two or more people voted on, with n and bootstrap intervals.
Only people's labels count ("human" and "human:<name>"), never a judge's."""

from ..db.models import HUMAN
from ..db.models import Rating
from ..db.models import RunTarget
from ..db.models import Vote
from .agreement import fleiss_kappa
from .agreement import krippendorff_alpha

VERDICTS = ("low", "high", "tie")  # a vote as the pair's lower or higher item id winning, or a tie


def _run_ids(runs):
    return [r.id for r in runs] if runs is not None else None


def _in_runs(ids):
    """Votes on the items of runs `ids`, found by their left target (a run's few targets, then
    the vote index): by their items, SQLite listed every item of the runs (a million at 1M)."""
    return Vote.left_target.in_(RunTarget.select(RunTarget.id).where(RunTarget.run.in_(ids)))


def ratings_alpha(runs=None):
    """Krippendorff's alpha of people's Likert ratings on the items of `runs` (or all)."""
    query = Rating.select(Rating.item, Rating.rating).where(Rating.rating.is_null(False))
    ids = _run_ids(runs)
    if ids is not None:
        query = query.where(Rating.run.in_(ids))
    units = {}
    for item_id, rating in query.tuples():
        units.setdefault(item_id, []).append(rating)
    return krippendorff_alpha(list(units.values()))


def votes_kappa(runs=None):
    """Fleiss' kappa of people's votes on the pairs of `runs`' items (or all pairs)."""
    query = Vote.select(Vote.item_low, Vote.item_high, Vote.left_item, Vote.winner).where(
        Vote.source == HUMAN
    )
    ids = _run_ids(runs)
    if ids is not None:
        query = query.where(_in_runs(ids))
    units = {}
    for low, high, left, winner in query.tuples():
        if winner == "TIE":
            verdict = "tie"
        else:
            won = left if winner == "LEFT" else (high if left == low else low)
            verdict = "low" if won == low else "high"
        units.setdefault((low, high), []).append(verdict)
    return fleiss_kappa(list(units.values()), VERDICTS)


def people_agreement(runs=None):
    """{"ratings": alpha with n and CI, "votes": kappa with n and CI}."""
    return {"ratings": ratings_alpha(runs), "votes": votes_kappa(runs)}


def people(runs=None):
    """The people with ratings or votes in `runs` (or anywhere), sorted: the rater picker."""
    ratings = Rating.select(Rating.rater).distinct()
    votes = Vote.select(Vote.voter).distinct().where(Vote.source == HUMAN)
    ids = _run_ids(runs)
    if ids is not None:
        ratings = ratings.where(Rating.run.in_(ids))
        votes = votes.where(_in_runs(ids))
    return sorted({r for (r,) in ratings.tuples()} | {v for (v,) in votes.tuples()})
