"""The runs a finished run is most likely compared with: the previous comparable run (same judge
key and task set, finished before it: the run alerts and Trends set it against) and the pinned
baselines of its collections. exports/warm.py works out those compares before anyone opens them,
and again when a later change makes them stale: the other way round, the runs that have a run as
their previous comparable run or baseline (later_compares, runs_shown_with).

The run's own keys come from its digest, else from the run itself as digest.py would store them:
the warm pass may reach a run a moment before the digest pass does.
"""

from ..db.models import FINISHED
from ..db.models import Baseline
from ..db.models import Run
from ..db.models import RunCollection
from ..db.models import RunDigest
from .digest import judge_key

BASELINES = 3  # baselines per run at most (one per collection it ran): each compare costs seconds


def _keys(run):
    """(judge key, tasks key, finished at) of a finished run, as its digest has them."""
    digest = RunDigest.get_or_none(RunDigest.run == run.id)
    if digest is not None:
        return digest.judge_key, digest.tasks_key, digest.finished_at
    return judge_key(run), run.dataset_hash, run.finished_at


def previous_comparable_run(run):
    """The latest finished run with the same judge key and task set that finished before `run`
    (the lower id first at the same time, as alerts order them), or None."""
    return _comparable_beside(run, after=False)


def _comparable_beside(run, after):
    """The finished run with `run`'s judge key and task set next to it in finish order (ties
    by id): the one just before it, or with `after` the one just after it; or None."""
    judge, tasks, finished = _keys(run)
    if finished is None:
        return None
    if after:
        side = (RunDigest.finished_at > finished) | (
            (RunDigest.finished_at == finished) & (RunDigest.run > run.id)
        )
        order = (RunDigest.finished_at, RunDigest.run)
    else:
        side = (RunDigest.finished_at < finished) | (
            (RunDigest.finished_at == finished) & (RunDigest.run < run.id)
        )
        order = (RunDigest.finished_at.desc(), RunDigest.run.desc())
    return (
        Run.select()
        .join(RunDigest, on=(RunDigest.run == Run.id))
        .where(
            (RunDigest.judge_key == judge)
            # Peewee writes `== None` as IS NULL: two runs without a dataset hash are alike,
            # as Trends and alerts take them.
            & (RunDigest.tasks_key == tasks)
            & (Run.id != run.id)
            & (Run.status == FINISHED)
            & side
        )
        .order_by(*order)
        .first()
    )


def baseline_runs(run, limit=BASELINES):
    """The finished runs pinned as baselines of `run`'s collections (not `run` itself), by id."""
    collections = RunCollection.select(RunCollection.collection).where(
        (RunCollection.run == run.id) & RunCollection.collection.is_null(False)
    )
    pinned = Baseline.select(Baseline.run).where(Baseline.collection.in_(collections))
    return list(
        Run.select()
        .where(Run.id.in_(pinned) & (Run.id != run.id) & (Run.status == FINISHED))
        .order_by(Run.id)
        .limit(limit)
    )


def likely_compares(run):
    """The (run A, run B) pairs a person is likely to open for `run`: (previous comparable, run)
    then (baseline, run) for each baseline not already that previous run. A is the before, B the
    after, as the compare page, the run history's picks and a baseline's links order them."""
    before = []
    previous = previous_comparable_run(run)
    if previous is not None:
        before.append(previous)
    before += [base for base in baseline_runs(run) if previous is None or base.id != previous.id]
    return [(other, run) for other in before]


# Runs a baseline is shown with, per collection it is pinned for: the newest finished ones.
FOLLOWERS = 3
# Compares of later runs that have a run as A, warmed again when that run changes.
LATER = 4


def next_comparable_run(run):
    """The run whose previous comparable run is `run` (the earliest finished after it with the
    same judge key and task set), or None."""
    found = _comparable_beside(run, after=True)
    if found is None:
        return None
    # `run` is its previous only when `run` itself is finished and digested, as alerts see it.
    previous = previous_comparable_run(found)
    return found if previous is not None and previous.id == run.id else None


def runs_shown_with(base, collections=None, limit=FOLLOWERS):
    """The runs whose likely compares include `base` as their baseline: of each collection it
    is pinned for (or of `collections` only), those of its `limit` newest finished runs (not
    `base`) that count it among their baselines (baseline_runs), newest first, each once."""
    pinned = Baseline.select(Baseline.collection).where(Baseline.run == base.id)
    if collections is not None:
        pinned = pinned.where(Baseline.collection.in_(list(collections)))
    found = []
    for (collection,) in pinned.tuples():
        members = RunCollection.select(RunCollection.run).where(
            RunCollection.collection == collection
        )
        newest = (
            Run.select()
            .where(Run.id.in_(members) & (Run.id != base.id) & (Run.status == FINISHED))
            .order_by(Run.finished_at.desc(), Run.id.desc())
            .limit(limit)
        )
        for run in newest:
            shown = any(other.id == base.id for other in baseline_runs(run))
            if shown and all(run.id != seen.id for seen in found):
                found.append(run)
    return found


def later_compares(run, limit=LATER):
    """The (run, later run) pairs other runs' likely compares have `run` as A in: with the run
    it is the previous comparable run of, then with the runs it is shown with as a baseline
    (runs_shown_with); at most `limit`. A re-judge or a rating of `run` makes them stale."""
    later = [found] if (found := next_comparable_run(run)) is not None else []
    later += [other for other in runs_shown_with(run) if all(other.id != r.id for r in later)]
    return [(run, other) for other in later[:limit]]
