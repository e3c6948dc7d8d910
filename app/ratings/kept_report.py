"""The in-app report's figures (report.run_report), kept per run state (results/kept.py): its
grouped queries read every item and rating of the run, so a view of an unchanged run reads one
row instead. Besides the run's items, the stamp holds its ratings and the votes on its targets
(counts and latest changes, a few index reads)."""

from peewee import fn

from ..db.models import Rating
from ..db.models import RunTarget
from ..db.models import Vote
from ..results.kept import kept_figures
from .report import run_report


def _labels_stamp(run):
    """The run's ratings and the votes on its targets, as text: how many, the latest change."""
    ratings = (
        Rating.select(fn.COUNT(Rating.id), fn.MAX(Rating.id), fn.MAX(Rating.updated_at))
        .where(Rating.run == run)
        .tuples()
        .first()
    )
    targets = RunTarget.select(RunTarget.id).where(RunTarget.run == run)
    votes = (
        Vote.select(fn.COUNT(Vote.id), fn.MAX(Vote.id), fn.MAX(Vote.created_at))
        .where(Vote.left_target.in_(targets) | Vote.right_target.in_(targets))
        .tuples()
        .first()
    )
    return f"{ratings}|{votes}"


def kept_run_report(run, source="all"):
    """run_report(run, source), read back while the run's items, ratings and votes hold."""
    report = kept_figures(
        run, f"report:{source}", lambda: run_report(run, source), also=_labels_stamp(run)
    )
    for row in report["targets"]:  # JSON keeps keys as text: the Likert points are numbers
        row["rating_counts"] = {int(k): n for k, n in row["rating_counts"].items()}
    return report
