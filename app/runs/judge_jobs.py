"""Judge jobs: work for the judge beside a run's items, queued as claimable JudgeCall rows.

Two kinds. A **reference check** has the judge score each task's own excellent, good and pass
references as if they were answers (one call per task and level). A **pairwise** job has a judge
compare two targets' answers to the same tasks, each pair in both orders (two calls per pair).
The calls belong to the job's run: the engine claims, retries, pauses, stops and budgets them as
that run's work (engine/calls.py), so queueing them on a finished run reopens it.
"""

import datetime as dt

from peewee import Case
from peewee import fn

from ..clock import isoformat
from ..clock import utcnow
from ..db.connection import database
from ..db.connection import insert_rows
from ..db.models import COMPLETED
from ..db.models import CONTROL_RUNNING
from ..db.models import FAILED
from ..db.models import FINISHED
from ..db.models import JUDGING
from ..db.models import NEW
from ..db.models import PENDING
from ..db.models import Item
from ..db.models import JudgeCall
from ..db.models import JudgeJob
from ..db.models import Run
from ..db.models import Vote
from ..errors import Conflict
from ..errors import ValidationError
from ..runlog import log_event
from .queries import check_no_active_run
from .state import run_state

REFERENCE = "reference"
PAIRWISE = "pairwise"
# The reference levels a check scores, best first, and the item column holding each.
LEVELS = (("excellent", "excellent"), ("good", "good"), ("pass", "pass_answer"))
INSERT_BATCH = 500


def judge_voter(provider_name, model):
    """How a judge signs its votes: one vote per pair and voter."""
    return f"judge:{provider_name}/{model}"


def reopen(run, now):
    """A finished run with judge work queued becomes pending and running again (JUDGING).

    Conflict while another run is active: one run at a time. A paused or stopped run keeps its
    control and does the work when continued. The run keeps its finished time: a judge check or
    a pairwise job is work beside the run, with its own times (job_progress), and never moves
    when the run's answers were done (the engine keeps a finished time it finds).
    """
    if run.status != FINISHED:
        return
    check_no_active_run(exclude=run)
    Run.update(
        status=PENDING,
        phase=JUDGING,
        control=CONTROL_RUNNING,
        control_reason=None,
        updated_at=now,
    ).where(Run.id == run.id).execute()


def _open_job(run, kind):
    """The run's job of this kind whose calls are not all settled, or None."""
    return (
        JudgeJob.select()
        .join(JudgeCall)
        .where((JudgeJob.run == run) & (JudgeJob.kind == kind) & (JudgeCall.status == NEW))
        .first()
    )


def _insert_calls(rows):
    for start in range(0, len(rows), INSERT_BATCH):
        insert_rows(JudgeCall, rows[start : start + INSERT_BATCH])


def _job(run, kind, provider, provider_name, model, params, now, **extra):
    return JudgeJob.create(
        run=run,
        kind=kind,
        judge_provider=provider,
        judge_provider_name=provider_name,
        judge_model=model,
        judge_params=params or None,
        created_at=now,
        **extra,
    )


def queue_reference_check(run, now=None, reopen_run=True):
    """Queue the run's judge on every task's references (excellent, good, pass); the job.

    Conflict while a check of this run is still under way. With reopen_run=False (a run being
    created) the run is left as it is.
    """
    if not run.judge_model:
        raise Conflict(
            f"Run {run.run_id} has no judge (its checks score it): there is no judge to check."
        )
    now = now or utcnow()
    with database.atomic("IMMEDIATE"):
        if _open_job(run, REFERENCE) is not None:
            raise Conflict(
                f"A judge check of run {run.run_id} is under way; wait for it to finish."
            )
        # Each task's first item (the references are the task's, snapshotted in every item).
        first = Item.select(fn.MIN(Item.id)).where(Item.run == run).group_by(Item.task_key)
        tasks = (
            Item.select(Item.id, Item.task_key, Item.excellent, Item.good, Item.pass_answer)
            .where(Item.id.in_(first))
            .order_by(Item.task_key)
            .tuples()
        )
        rows = []
        for item_id, _task_key, *texts in tasks:
            for (level, _column), text in zip(LEVELS, texts, strict=True):
                if (text or "").strip():
                    rows.append({"item": item_id, "level": level})
        if not rows:
            raise ValidationError.field(
                "runId",
                f"the tasks of run {run.run_id} have no reference answers (excellent, good, "
                "pass) for the judge to score",
            )
        if reopen_run:
            reopen(run, now)
        job = _job(
            run,
            REFERENCE,
            run.judge_provider,
            run.judge_provider_name,
            run.judge_model,
            run.judge_params,
            now,
        )
        _insert_calls(
            [
                {**row, "job": job.id, "run": run.id, "created_at": now, "updated_at": now}
                for row in rows
            ]
        )
        log_event(
            run,
            "judge_check_queued",
            f"Judge check queued: {run.judge_provider_name}/{run.judge_model} scores "
            f"{len(rows)} reference answers",
            data={"jobId": job.id, "calls": len(rows)},
            now=now,
        )
    return job


def answered(b):
    """B's side of a pair has an answer, said so that no index can serve it: with no table
    statistics SQLite joined B by (run, target, answered_at) and scanned all of B's answers
    for each of A's (quadratic: the A/B page of a 100 000-item run took minutes); with it out
    of the way B is sought by (run, target, task_key), one index seek per pair. (NULL || '' is
    NULL in SQLite and PostgreSQL alike.)"""
    return b.answered_at.concat("").is_null(False)


def unjudged_pairs(target_a, target_b, voter, limit=None, after=None):
    """(item of A, item of B, task id) for the tasks both targets answered that `voter` has not
    voted on yet, in task order (the first `limit` of them, after task `after` when given).

    `answered_at` marks an answer (the engine sets it with every answer it records), so the
    answers' text is never read here.
    """
    a, b = Item.alias("a"), Item.alias("b")
    voted = Vote.select(Vote.id).where(
        # CASE, not SQLite's two-argument MIN/MAX (PostgreSQL's are LEAST/GREATEST).
        (Vote.item_low == Case(None, [(a.id < b.id, a.id)], b.id))
        & (Vote.item_high == Case(None, [(a.id < b.id, b.id)], a.id))
        & (Vote.voter == voter)
    )
    where = (
        (a.run == target_a.run_id)
        & (a.target == target_a.id)
        & a.answered_at.is_null(False)
        & answered(b)
        & ~fn.EXISTS(voted)
    )
    if after is not None:
        where &= a.task_key > after
    return list(
        a.select(a.id, b.id, a.task_key)
        .join(
            b,
            on=(
                (b.run == target_b.run_id) & (b.target == target_b.id) & (b.task_key == a.task_key)
            ),
        )
        .where(where)
        .order_by(a.task_key, a.id, b.id)  # a repeated task's pairs in a defined order
        .limit(limit)
        .tuples()
    )


def queue_pairwise(target_a, target_b, provider, model, params=None, now=None):
    """Queue a judge to compare two targets' answers, each pair in both orders; the job.

    The job belongs to target A's run. Pairs this judge already voted on are left out. Returns
    the job, or None when every pair has this judge's vote.
    """
    now = now or utcnow()
    run = Run.get_by_id(target_a.run_id)
    voter = judge_voter(provider.name, model)
    with database.atomic("IMMEDIATE"):
        pairs = unjudged_pairs(target_a, target_b, voter)
        if not pairs:
            return None
        reopen(run, now)
        job = _job(
            run,
            PAIRWISE,
            provider,
            provider.name,
            model,
            params,
            now,
            target_a=target_a.id,
            target_b=target_b.id,
        )
        rows = []
        for item_a, item_b, _task in pairs:
            for first, second in ((item_a, item_b), (item_b, item_a)):
                rows.append(
                    {
                        "job": job.id,
                        "run": run.id,
                        "item": first,
                        "other_item": second,
                        "created_at": now,
                        "updated_at": now,
                    }
                )
        _insert_calls(rows)
        log_event(
            run,
            "pairwise_queued",
            f"Pairwise judging queued: {provider.name}/{model} compares "
            f"{target_a.label} and {target_b.label} on {len(pairs)} tasks, in both orders",
            data={"jobId": job.id, "pairs": len(pairs)},
            now=now,
        )
    return job


def job_progress(job):
    """Counts of a job's calls per status, and the state people see (like a run's)."""
    counts = dict.fromkeys((NEW, COMPLETED, FAILED), 0)
    for status, n in (
        JudgeCall.select(JudgeCall.status, fn.COUNT(JudgeCall.id))
        .where(JudgeCall.job == job)
        .group_by(JudgeCall.status)
        .tuples()
    ):
        counts[status] = n
    total = sum(counts.values())
    run = Run.get_by_id(job.run_id)
    state = "finished" if counts[NEW] == 0 else run_state(run)
    # The job's own times: queued, its first call tried, its last call settled (when done).
    started, last = (
        JudgeCall.select(fn.MIN(JudgeCall.first_attempt_at), fn.MAX(JudgeCall.last_attempt_at))
        .where(JudgeCall.job == job)
        .tuples()
        .first()
    ) or (None, None)
    return {
        "jobId": job.id,
        "kind": job.kind,
        "runId": run.run_id,
        "judge": f"{job.judge_provider_name}/{job.judge_model}",
        "state": state,
        "controlReason": run.control_reason if state in ("paused", "stopped") else None,
        "calls": total,
        "completed": counts[COMPLETED],
        "failed": counts[FAILED],
        "pending": counts[NEW],
        "progress": round((total - counts[NEW]) / total, 4) if total else 1.0,
        "queuedAt": isoformat(job.created_at),
        "startedAt": isoformat(_when(started)),
        "finishedAt": isoformat(_when(last)) if counts[NEW] == 0 else None,
    }


def _when(value):
    """A datetime read by an aggregate (SQLite gives its text) as a datetime, or None."""
    if value is None or isinstance(value, dt.datetime):
        return value
    return dt.datetime.fromisoformat(str(value))
