"""The in-app report's figures (report.run_report) and the judge check (judge_check), kept per
run state (results/kept.py): their queries read every item (and rating) of the run, so a view
of an unchanged run reads one row instead. Besides the run's items, the stamp holds its
ratings and the votes on its targets, and for the judge check its jobs' calls and the run's
row (a job's state follows the run's), each as counts and latest changes (a few index reads),
and the latest vote change anywhere (a change rewrites a vote in place).
A caching wrapper only: the figures themselves are report.py's and judge_check.py's."""

import json

from peewee import fn

from ..db.models import JudgeCall
from ..db.models import JudgeJob
from ..db.models import Rating
from ..db.models import RunTarget
from ..db.models import Vote
from ..db.models import VoteHistory
from ..results.kept import kept_figures
from .judge_check import judge_check
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
    # A changed vote keeps its row and time (the winner is rewritten in place); its history row
    # is what moves. Any vote's change, whatever the run: one index read, rarely a recompute.
    changed = VoteHistory.select(fn.MAX(VoteHistory.id)).scalar()
    return f"{ratings}|{votes}|{changed}"


def kept_run_report(run, source="all"):
    """run_report(run, source), read back while the run's items, ratings and votes hold."""
    report = kept_figures(
        run, f"report:{source}", lambda: run_report(run, source), also=_labels_stamp(run)
    )
    for row in report["targets"]:  # JSON keeps keys as text: the Likert points are numbers
        row["rating_counts"] = {int(k): n for k, n in row["rating_counts"].items()}
    return report


def _jobs_stamp(run):
    """The run's judge jobs and their calls per status, and the run's row, as text."""
    jobs = JudgeJob.select(fn.COUNT(JudgeJob.id), fn.MAX(JudgeJob.id)).where(JudgeJob.run == run)
    calls = (
        JudgeCall.select(
            JudgeCall.status, fn.COUNT(JudgeCall.id), fn.MAX(JudgeCall.last_attempt_at)
        )
        .where(JudgeCall.run == run)
        .group_by(JudgeCall.status)
        .order_by(JudgeCall.status)
    )
    row = json.dumps(run.__data__, sort_keys=True, default=str)
    return f"{list(jobs.tuples())}|{list(calls.tuples())}|{row}"


def kept_judge_check(run):
    """judge_check(run.run_id), read back while the run, its items, ratings and judge jobs
    hold."""
    return kept_figures(
        run,
        "judge-check",
        lambda: judge_check(run.run_id),
        also=f"{_labels_stamp(run)}|{_jobs_stamp(run)}",
    )
