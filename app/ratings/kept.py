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

from ..db.connection import database
from ..db.models import COMPLETED
from ..db.models import FAILED
from ..db.models import HUMAN
from ..db.models import JudgeCall
from ..db.models import JudgeJob
from ..db.models import Rating
from ..db.models import Run
from ..db.models import RunTarget
from ..db.models import Vote
from ..db.models import VoteHistory
from ..results.kept import code_stamp
from ..results.kept import kept_across
from ..results.kept import kept_figures
from ..runs.queries import get_run
from .between_people import people
from .between_people import people_agreement
from .cards import choices
from .cards import progress
from .cards import run_categories
from .charts import CHARTS
from .charts import leaderboard_chart
from .charts import report_chart
from .judge_check import agreement_by_judge
from .judge_check import judge_check
from .leaderboard import leaderboard
from .report import report_with_latency
from .report import run_report

# The code that works the figures out, in every stamp: figures kept by an older version are
# worked out again, not shown in an older shape (results/kept.py folds in its own modules').
_SOURCES = ("kept.py", "report.py", "judge_check.py", "agreement.py", "between_people.py")
_SOURCES += ("leaderboard.py", "bradley_terry.py", "charts.py", "cards.py")
_CODE = code_stamp(__file__, _SOURCES)


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
    """The votes on the run's targets, as text: how many and the latest id on either side,
    and the latest vote change anywhere."""
    targets = RunTarget.select(RunTarget.id).where(RunTarget.run == run)
    # One side at a time, count and id: each answered from its index alone (an OR of the two
    # sides, or a vote's time, reads every vote row: 20 ms at 10 000 votes). Votes are only
    # added, changed or undone (both with a history row) or go with their run, so the counts,
    # the latest ids and the latest history row see every change.
    sides = [
        Vote.select(fn.COUNT(Vote.id), fn.MAX(Vote.id)).where(side.in_(targets)).tuples().first()
        for side in (Vote.left_target, Vote.right_target)
    ]
    # A changed vote keeps its row (the winner is rewritten in place); its history row is what
    # moves. Any vote's change, whatever the run: one index read, rarely a recompute.
    changed = VoteHistory.select(fn.MAX(VoteHistory.id)).scalar()
    return f"{sides}|{changed}"


def _labels_stamp(run):
    """The run's ratings and the votes on its targets, as text: how many, the latest change."""
    return f"{_ratings_stamp(run)}|{_votes_stamp(run)}"


def kept_run_report(run, source="all"):
    """run_report(run, source), read back while the run's items, ratings and votes hold."""
    report = kept_figures(
        run,
        f"report:{source}",
        lambda: run_report(run, source),
        also=f"{_CODE}|{_labels_stamp(run)}",
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


# The chart toolkit the report's charts are drawn with (its own modules are in _CODE).
_TOOLKIT = code_stamp(__file__, ("../charts/*.py",))


def kept_report_chart(run, name, narrow=False):
    """report_chart(report_with_latency(run), name, narrow) as the in-app report shows it, kept
    while the run, its ratings and votes hold: each view read the run's items (the report and
    every answer time) before. ValueError for an unknown name."""
    if name not in CHARTS:
        raise ValueError(f"unknown chart {name!r}")
    return kept_figures(
        run,
        f"report-chart:{name}:{'narrow' if narrow else 'wide'}",
        lambda: report_chart(report_with_latency(run), name, narrow),
        also=f"{_CODE}|{_TOOLKIT}|{_labels_stamp(run)}",
    )


def ratings_stamp(run):
    """What a run's ratings figures come from besides its items, as text: the code, its
    ratings, the votes on its targets, its judge jobs and its row (a part of the stamp of
    figures that show them: a download's body, exports/kept_files.py)."""
    return f"{_CODE}|{_labels_stamp(run)}|{_jobs_stamp(run)}"


def _judge_check_stamp(run):
    """What the judge check comes from besides the run's items, as text: the counts and latest
    changes of _labels_stamp and _jobs_stamp (its calls per status: new, completed, failed),
    read in one statement. The results page shows the check: six statements were six round
    trips to PostgreSQL on every view, and a fifth of the page's queries."""
    tables = {m.__name__: m._meta.table_name for m in (Rating, Vote, VoteHistory, RunTarget)}
    tables.update(JudgeJob=JudgeJob._meta.table_name, JudgeCall=JudgeCall._meta.table_name)
    p = database.param
    targets = f'SELECT "id" FROM "{tables["RunTarget"]}" WHERE "run_id" = {p}'
    sides = [
        f'(SELECT COUNT(*), MAX("id") FROM "{tables["Vote"]}" WHERE "{side}" IN ({targets})) {name}'
        for side, name in (("left_target_id", "l"), ("right_target_id", "r"))
    ]
    sql = (
        f'SELECT * FROM (SELECT COUNT(*), MAX("id"), MAX("updated_at") FROM "{tables["Rating"]}"'
        f' WHERE "run_id" = {p}) ratings, {sides[0]}, {sides[1]},'
        f' (SELECT MAX("id") FROM "{tables["VoteHistory"]}") changed,'
        f' (SELECT COUNT(*), MAX("id") FROM "{tables["JudgeJob"]}" WHERE "run_id" = {p}) jobs,'
        f" (SELECT COUNT(*), SUM(CASE WHEN \"status\" = '{COMPLETED}' THEN 1 ELSE 0 END),"
        f" SUM(CASE WHEN \"status\" = '{FAILED}' THEN 1 ELSE 0 END),"
        f' MAX("last_attempt_at") FROM "{tables["JudgeCall"]}" WHERE "run_id" = {p}) calls'
    )
    row = database.execute_sql(sql, [run.id] * 5).fetchone()
    data = json.dumps(run.__data__, sort_keys=True, default=str)
    return f"{[str(v) for v in row]}|{data}"


def kept_judge_check(run, rater=None):
    """judge_check(run.run_id, rater), read back while the run, its items, ratings and judge
    jobs hold."""
    return kept_figures(
        run,
        "judge-check" if rater is None else _named("judge-check", rater),
        lambda: judge_check(run.run_id, rater),
        also=f"{_CODE}|{_judge_check_stamp(run)}",
    )


def _named(kind, value):
    """A figures name for `kind` and a free-text part (a source, a rater: up to 420
    characters) that fits RunFigures.name: the text as a short hash."""
    return f"{kind}:{hashlib.sha256(str(value).encode()).hexdigest()[:12]}"


def _rows(runs):
    """What of the runs' rows some figures show or count by, as text: their ids, judges and
    start times (the same whichever query loaded the rows)."""
    fields = [
        (r.id, r.run_id, r.judge_provider_name, r.judge_model, str(r.created_at)) for r in runs
    ]
    return json.dumps(fields)


class _Labels:
    """The stamps of some runs' ratings and of the votes on their targets, each read at most
    once: a leaderboard page shows three figures that depend on them."""

    def __init__(self, runs):
        self.runs = runs
        self._votes = self._ratings = None

    def votes(self):
        if self._votes is None:
            self._votes = "|".join(_votes_stamp(r) for r in self.runs)
        return self._votes

    def ratings(self):
        if self._ratings is None:
            self._ratings = "|".join(_ratings_stamp(r) for r in self.runs)
        return self._ratings


def kept_leaderboard(runs, source="all", labels=None):
    """leaderboard(runs, source): its Bradley–Terry fit and 1000 bootstrap rounds, read back
    while the runs (their items, targets and rows) and the votes on their targets hold."""
    labels = labels or _Labels(runs)
    return kept_across(
        runs,
        _named("leaderboard", source),
        lambda: leaderboard(runs, source),
        also=f"{_CODE}|{labels.votes()}|{_rows(runs)}",
    )


def kept_agreement_by_judge(runs, rater=None, labels=None):
    """agreement_by_judge(runs, rater), read back while the runs and their ratings hold."""
    labels = labels or _Labels(runs)
    return kept_across(
        runs,
        _named("judge-agreement", rater),
        lambda: agreement_by_judge(runs, rater),
        also=f"{_CODE}|{labels.ratings()}|{_rows(runs)}",
    )


def kept_people_agreement(runs, labels=None):
    """people_agreement(runs) and people(runs) (the rater picker), read back while the runs'
    ratings and the votes on their targets hold: {"agreement", "people"}."""
    labels = labels or _Labels(runs)
    return kept_across(
        runs,
        "people-agreement",
        lambda: {"agreement": people_agreement(runs), "people": people(runs)},
        also=f"{_CODE}|{labels.ratings()}|{labels.votes()}",
    )


def _charts(board):
    if not board["votes"]:
        return None
    return {
        "wide": leaderboard_chart(board["rows"]),
        "narrow": leaderboard_chart(board["rows"], narrow=True),
    }


def kept_leaderboard_page(runs, source="all", rater=None):
    """What the leaderboard page shows of `runs`, each kept as above, the ratings and votes
    read once: {"board", "charts" (the board as SVG, wide and narrow; None without votes),
    "agreement" (the judges' with people: one `rater`'s, or everyone's), "between" (people's
    agreement with each other), "people" (the rater picker)}."""
    labels = _Labels(runs)
    board = kept_leaderboard(runs, source, labels)
    charts = kept_across(
        runs,
        _named("leaderboard-charts", source),
        lambda: _charts(board),
        also=f"{_CODE}|{labels.votes()}|{_rows(runs)}",
    )
    between = kept_people_agreement(runs, labels)
    return {
        "board": board,
        "charts": charts,
        "agreement": kept_agreement_by_judge(runs, rater, labels),
        "between": between["agreement"],
        "people": between["people"],
    }


_NOT_COUNTED = ("unrated", "blind", "stay")


def _picked_run(filters):
    run_pk = getattr(filters, "run_pk", None)
    return get_run(filters["run"]) if run_pk is None else Run.get_by_id(run_pk)


def kept_progress(filters):
    """cards.progress(filters) of Evaluate, kept with the picked run while its items (the
    targets' models among them), its row and its ratings hold: even its two index counts read
    every answer of the run (a second at a million items). Counts across every run are counted
    each time."""
    if not filters.get("run"):
        return progress(filters)
    run = _picked_run(filters)
    person = getattr(filters, "person", HUMAN)
    # What the counts depend on: not the order flags, nor "unrated" (progress counts rated
    # and not), so a person's queue and blind mode share the counts of their filters.
    counted = {k: v for k, v in filters.items() if k not in _NOT_COUNTED}
    key = json.dumps({**counted, "person": person}, sort_keys=True, default=str)
    return kept_figures(
        run,
        _named("evaluate", key),
        lambda: progress(filters),
        also=f"{_CODE}|{_ratings_stamp(run)}|{_rows([run])}",
    )


def kept_choices(filters):
    """cards.choices(filters) of Evaluate, the picked run's categories kept while its items hold
    (they are every item's: half a second at a million items)."""
    if not filters.get("run"):
        return choices(filters)
    run = _picked_run(filters)
    return choices(
        filters,
        categories=lambda run_pk: kept_figures(
            run, "evaluate-categories", lambda: run_categories(run_pk), also=_CODE
        ),
    )
