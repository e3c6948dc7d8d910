"""The leaderboard: Bradley–Terry ratings with bootstrap intervals from the votes in scope.

Scope is a set of runs: every target of those runs is a contestant (one row per target, so a
model compared with itself under other params shows twice, by label), and every vote whose two
targets are both in scope counts, from people, judges or both. The votes are read as three
columns in one query and handed to bradley_terry as arrays: no per-vote Python loop.
"""

import numpy as np

from ..db.connection import database
from ..db.models import HUMAN
from ..db.models import JUDGE
from ..db.models import LEFT
from ..db.models import RIGHT
from ..db.models import Run
from ..db.models import RunTarget
from ..errors import ValidationError
from ..runs.queries import get_run
from . import bradley_terry as bt
from .people import is_person

SOURCES = ("all", HUMAN, JUDGE)
METHOD = (
    "Bradley–Terry maximum-likelihood fit on the Elo scale (400 points = 10:1 odds, mean 1000), "
    "ties count as half a win each way; 95 % intervals from 1000 bootstrap resamples of the "
    "votes (seeded); rank = 1 + the number of targets whose lower bound is above this one's "
    f"upper bound, given only with at least {bt.MIN_VOTES} votes. A target that never wins or "
    "never loses stays finite: every pair that met gets a 0.02-vote tie as a prior; its interval "
    "is then closed on one side by that prior alone, so it shows as below (or above) the end "
    "the votes give, with no rank."
)


def parse_runs(value):
    """Run ids from 'a,b' (or a list); 400 without any, 404 for an unknown one."""
    if isinstance(value, str):
        value = value.split(",")
    ids = list(dict.fromkeys(v.strip() for v in value or [] if v and v.strip()))
    if not ids:
        raise ValidationError.field("runs", "give one or more run ids, comma-separated")
    return [get_run(run_id) for run_id in ids]


def parse_source(value):
    """human (people pooled), judge, all (the default), or one person ("human:<name>")."""
    value = (value or "all").strip()
    if value.lower() in SOURCES:
        return value.lower()
    if is_person(value):
        return value
    raise ValidationError.field("source", 'must be human, judge, all or one person "human:<name>"')


def one_person(source):
    """True when the source names one person (not people pooled)."""
    return source.startswith(HUMAN + ":")


def scope_targets(runs):
    """The runs' targets in run then target order, each with its run loaded."""
    pks = [r.id for r in runs]
    by_run = {r.id: r for r in runs}
    targets = list(
        RunTarget.select()
        .where(RunTarget.run.in_(pks))
        .order_by(RunTarget.run, RunTarget.position, RunTarget.id)
    )
    order = {pk: n for n, pk in enumerate(pks)}
    targets.sort(key=lambda t: (order[t.run_id], t.position, t.id))
    for t in targets:
        t.run = by_run[t.run_id]
    return targets


def _scope_sql(target_ids, source):
    marks = ",".join("?" * len(target_ids))
    where = f"left_target_id IN ({marks}) AND right_target_id IN ({marks})"
    params = [*target_ids, *target_ids]
    if one_person(source):
        where += " AND voter = ?"
        params.append(source)
    elif source != "all":
        where += " AND source = ?"
        params.append(source)
    return where, params


def vote_arrays(target_ids, source="all"):
    """(left, right, outcome) of the votes between the targets, as numpy arrays indexed by
    position in `target_ids`.

    SQLite counts the votes per (left, right, winner) from an index (at most 3 rows per ordered
    pair of targets); numpy repeats each row by its count. No per-vote Python, and the arrays
    hold exactly the votes (in cell order, which the fit does not depend on).
    """
    empty = np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)
    if not target_ids:
        return empty
    where, params = _scope_sql(target_ids, source)
    cursor = database.execute_sql(
        "SELECT left_target_id, right_target_id, winner = ?, winner = ?, COUNT(*) FROM vote "
        f"WHERE {where} GROUP BY left_target_id, right_target_id, winner",
        [LEFT, RIGHT, *params],
    )
    cells = np.array(cursor.fetchall(), dtype=np.int64).reshape(-1, 5)
    if not len(cells):
        return empty
    ids = np.asarray(target_ids, dtype=np.int64)
    order = np.argsort(ids)
    position = order[np.searchsorted(ids[order], cells[:, :2])]
    # LEFT -> 1.0, RIGHT -> 0.0, a tie -> 0.5: (1 + won_left - won_right) / 2.
    outcome = (1.0 + cells[:, 2] - cells[:, 3]) / 2.0
    counts = cells[:, 4]
    return (
        np.repeat(position[:, 0], counts),
        np.repeat(position[:, 1], counts),
        np.repeat(outcome, counts),
    )


def consistency(target_ids):
    """Per judge in scope: how many of its pairs both orders agreed on (MT-Bench's position
    consistency): [{"judge", "pairs", "consistent", "rate"}]."""
    if not target_ids:
        return []
    where, params = _scope_sql(target_ids, JUDGE)
    rows = database.execute_sql(
        f"SELECT voter, COUNT(*), SUM(CASE WHEN inconsistent THEN 1 ELSE 0 END) "
        f"FROM vote WHERE {where} "
        "GROUP BY voter ORDER BY voter",
        params,
    ).fetchall()
    return [
        {
            "judge": voter.removeprefix("judge:"),
            "pairs": n,
            "consistent": n - int(bad or 0),
            "rate": (n - int(bad or 0)) / n,
        }
        for voter, n, bad in rows
    ]


def target_dict(target):
    """How a leaderboard names a target: its label, model, provider and run."""
    return {
        "targetId": target.id,
        "target": target.label,
        "model": target.model,
        "provider": target.provider_name,
        "runId": target.run.run_id,
    }


def leaderboard(runs, source="all", rounds=bt.ROUNDS):
    """Rows (best first), the win-rate matrix (targets in scope order) and judge consistency."""
    targets = scope_targets(runs)
    ids = [t.id for t in targets]
    left, right, outcome = vote_arrays(ids, source)
    rows = bt.leaderboard(len(ids), left, right, outcome, rounds=rounds) if ids else []
    out = []
    for target, row in zip(targets, rows, strict=True):
        entry = target_dict(target)
        entry.update({k: v for k, v in row.items() if k != "model"})
        out.append(entry)
    out.sort(key=lambda r: (r["rating"] is None, -(r["rating"] or 0.0), r["targetId"]))
    matrix = bt.win_rate_matrix(len(ids), left, right, outcome) if ids else None
    return {
        "runs": [r.run_id for r in runs],
        "source": source,
        "votes": int(len(outcome)),
        "minVotes": bt.MIN_VOTES,
        "method": METHOD,
        "rows": out,
        "targets": [target_dict(t) for t in targets],
        "matrix": matrix,
        "consistency": consistency(ids) if source in ("all", JUDGE) else [],
    }


def recent_runs(limit=100):
    """Runs for the leaderboard's picker, newest first: (run_id, created_at, has votes)."""
    voted = {
        pk
        for (pk,) in database.execute_sql(
            "SELECT DISTINCT t.run_id FROM vote v JOIN runtarget t ON t.id = v.left_target_id"
        )
    }
    return [
        (run.run_id, run.created_at, run.id in voted)
        for run in Run.select().order_by(Run.created_at.desc()).limit(limit)
    ]
