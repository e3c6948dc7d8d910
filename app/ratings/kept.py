"""The in-app report's figures (report.run_report), the judge check (judge_check), the
leaderboard with the judges' and people's agreement beside it, and Evaluate's counts per filter,
kept per state of their runs (results/kept.py): their queries read every item, rating or vote
of the runs, so a view of unchanged runs reads a row instead. Besides the runs' items, the stamp
holds what each depends on: the ratings, the votes on the runs' targets, and for the judge check
its jobs' calls and the run's row (a job's state follows the run's), each as counts and latest
changes (a few index reads), and the latest vote change anywhere (a change rewrites a vote in
place). Caching wrappers only: the figures themselves are report.py's, judge_check.py's,
leaderboard.py's, between_people.py's and cards.py's."""

import hashlib
import json

from peewee import fn

from ..db.models import HUMAN
from ..db.models import JudgeCall
from ..db.models import JudgeJob
from ..db.models import Rating
from ..db.models import Run
from ..db.models import RunTarget
from ..db.models import Vote
from ..db.models import VoteHistory
from ..results.kept import kept_across
from ..results.kept import kept_figures
from ..runs.queries import get_run
from .between_people import people
from .between_people import people_agreement
from .cards import FAST_PROGRESS
from .cards import progress
from .judge_check import agreement_by_judge
from .judge_check import judge_check
from .leaderboard import leaderboard
from .report import run_report


def _ratings_stamp(run):
    """The run's ratings, as text: how many, the latest id and change."""
    ratings = (
        Rating.select(fn.COUNT(Rating.id), fn.MAX(Rating.id), fn.MAX(Rating.updated_at))
        .where(Rating.run == run)
        .tuples()
        .first()
    )
    return f"{ratings}"


def _votes_stamp(run):
    """The votes on the run's targets, as text: how many, the latest id and time, and the
    latest vote change anywhere."""
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
    return f"{votes}|{changed}"


def _labels_stamp(run):
    """The run's ratings and the votes on its targets, as text: how many, the latest change."""
    return f"{_ratings_stamp(run)}|{_votes_stamp(run)}"


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


def kept_judge_check(run, rater=None):
    """judge_check(run.run_id, rater), read back while the run, its items, ratings and judge
    jobs hold."""
    return kept_figures(
        run,
        "judge-check" if rater is None else _named("judge-check", rater),
        lambda: judge_check(run.run_id, rater),
        also=f"{_labels_stamp(run)}|{_jobs_stamp(run)}",
    )


def _named(kind, value):
    """A figures name for `kind` and a free-text part (a source, a rater: up to 420
    characters) that fits RunFigures.name: the text as a short hash."""
    return f"{kind}:{hashlib.sha256(str(value).encode()).hexdigest()[:12]}"


def _rows(runs):
    """The runs' rows as text (their ids, judge and names are in some figures)."""
    return json.dumps([r.__data__ for r in runs], sort_keys=True, default=str)


def kept_leaderboard(runs, source="all"):
    """leaderboard(runs, source): its Bradley–Terry fit and 1000 bootstrap rounds, read back
    while the runs (their items, targets and rows) and the votes on their targets hold."""
    votes = "|".join(_votes_stamp(r) for r in runs)
    return kept_across(
        runs,
        _named("leaderboard", source),
        lambda: leaderboard(runs, source),
        also=f"{votes}|{_rows(runs)}",
    )


def kept_agreement_by_judge(runs, rater=None):
    """agreement_by_judge(runs, rater), read back while the runs and their ratings hold."""
    ratings = "|".join(_ratings_stamp(r) for r in runs)
    return kept_across(
        runs,
        _named("judge-agreement", rater),
        lambda: agreement_by_judge(runs, rater),
        also=f"{ratings}|{_rows(runs)}",
    )


def kept_people_agreement(runs):
    """people_agreement(runs) and people(runs) (the rater picker), read back while the runs'
    ratings and the votes on their targets hold: {"agreement", "people"}."""
    labels = "|".join(_labels_stamp(r) for r in runs)
    return kept_across(
        runs,
        "people-agreement",
        lambda: {"agreement": people_agreement(runs), "people": people(runs)},
        also=labels,
    )


_NOT_COUNTED = ("unrated", "blind", "stay")


def kept_progress(filters):
    """cards.progress(filters) of Evaluate, kept with the picked run while its items (the
    targets' models among them), its row and its ratings hold. Counts from indexes alone
    (cards.FAST_PROGRESS) and counts across every run are counted each time."""
    if set(filters) <= FAST_PROGRESS or not filters.get("run"):
        return progress(filters)
    run_pk = getattr(filters, "run_pk", None)
    run = get_run(filters["run"]) if run_pk is None else Run.get_by_id(run_pk)
    person = getattr(filters, "person", HUMAN)
    # What the counts depend on: not the order flags, nor "unrated" (progress counts rated
    # and not), so a person's queue and blind mode share the counts of their filters.
    counted = {k: v for k, v in filters.items() if k not in _NOT_COUNTED}
    key = json.dumps({**counted, "person": person}, sort_keys=True, default=str)
    return kept_figures(
        run,
        _named("evaluate", key),
        lambda: progress(filters),
        also=f"{_ratings_stamp(run)}|{_rows([run])}",
    )
