"""Retries: send answered items back to the judge, or failed items back to their targets; and
re-judging a completed item, on purpose, keeping the judgement it replaces.

A finished run with items queued again becomes running again (Conflict while another run is
active); a paused or stopped one does them when continued.
"""

from ..clock import isoformat
from ..clock import utcnow
from ..db.connection import database
from ..db.models import BENCHMARKING
from ..db.models import CANT_BE_FINISHED
from ..db.models import COMPLETED
from ..db.models import CONTROL_RUNNING
from ..db.models import FAILED
from ..db.models import FINISHED
from ..db.models import JUDGING
from ..db.models import NEW
from ..db.models import PENDING
from ..db.models import WAITING_FOR_JUDGE
from ..db.models import Item
from ..db.models import Run
from ..db.models import RunTarget
from ..errors import Conflict
from ..errors import NotFound
from ..errors import ValidationError
from ..ids import is_db_id
from ..runlog import log_event
from .queries import check_no_active_run
from .queries import get_run


def _reopen(run, now, phase):
    """A finished run with items to do again becomes pending (and running) again.

    An unfinished run keeps its control: a paused or stopped one does them when continued.
    """
    if run.status == FINISHED:
        check_no_active_run(exclude=run)
        Run.update(
            status=PENDING,
            phase=phase,
            control=CONTROL_RUNNING,
            control_reason=None,
            finished_at=None,
            updated_at=now,
        ).where(Run.id == run.id).execute()


# Queued again: attempts, backoff and retry-time cap start afresh.
_REQUEUE = {
    "attempts": 0,
    "next_retry_at": None,
    "claimed_until": None,
    "first_attempt_at": None,
    "error_msg": None,
    "error_stage": None,
}


def _run_item(run_id, item_id):
    """(run, item) or NotFound."""
    run = get_run(run_id)
    item = Item.get_or_none((Item.id == item_id) & (Item.run == run)) if is_db_id(item_id) else None
    if item is None:
        raise NotFound(f"No item {item_id} in run {run_id}.")
    return run, item


def _check_not_in_flight(item, item_id, now):
    if Item.select().where((Item.id == item.id) & Item.in_flight(now)).exists():
        raise Conflict(
            f"item {item_id} is being judged right now; retry it when that judgement is in"
        )


def retry_judge(run_id, item_id, now=None):
    """Queue one item for judging again: it waits for the judge, or its judgement failed.

    A completed item keeps its score here (Conflict): re-judging it is rejudge_item, an
    explicit action that keeps the judgement it replaces.
    """
    now = now or utcnow()
    run, item = _run_item(run_id, item_id)
    if item.status == COMPLETED:
        raise Conflict(
            f"item {item_id} is completed with a score; retry-judge is for items waiting for "
            "the judge or whose judgement failed. To judge it again, re-judge it (POST "
            f"/api/runs/{run_id}/items/{item_id}/rejudge): its judgement is kept in its history"
        )
    judge_failed = item.status in (FAILED, CANT_BE_FINISHED) and item.error_stage == "judge"
    if item.answer is None or not (item.status == WAITING_FOR_JUDGE or judge_failed):
        raise ValidationError.field(
            "itemId",
            f"item {item_id} has no answer to judge "
            f"(status {item.status}); only answered items can be re-judged",
        )
    with database.atomic("IMMEDIATE"):
        item = Item.get_by_id(item.id)
        _check_not_in_flight(item, item_id, now)
        _reopen(run, now, JUDGING)
        Item.update(status=WAITING_FOR_JUDGE, updated_at=now, **_REQUEUE).where(
            Item.id == item.id
        ).execute()
        log_event(
            run,
            "retry_judge",
            f"Item {item.id} ({item.task_key}) queued for judging again",
            now=now,
        )
    return Item.get_by_id(item.id)


def judgement_of(item, now):
    """The item's current judgement as one entry of its history."""
    return {
        "score": item.evaluation_score,
        "reason": item.evaluation_reason,
        "rubricScores": item.rubric_scores,
        "autoFail": item.auto_fail,
        "judgeMs": item.judge_ms,
        "judgeCostUsd": item.judge_cost_usd,
        "judgeRaw": item.judge_raw,
        "judgedAt": isoformat(item.judged_at),
        "replacedAt": isoformat(now),
    }


def rejudge_item(run_id, item_id, now=None):
    """Judge a completed item again, on purpose: its judgement moves to the item's history
    (judge_history) and the item waits for the judge, whose new score the engine combines with
    the item's checks by the run's scoreWeights (engine/rules.with_judgement, as the first
    time). A finished run runs again; a run without a judge has nothing to re-judge."""
    now = now or utcnow()
    run, item = _run_item(run_id, item_id)
    if not run.judge_model:
        # Its checks scored it at the answer; with no judge model nothing could judge it again.
        raise Conflict(
            f"run {run_id} has no judge (checks only): its items are scored by their checks, "
            "there is nothing to re-judge"
        )
    if item.status != COMPLETED:
        raise ValidationError.field(
            "itemId",
            f"item {item_id} is {item.status}, not completed; re-judging is for completed "
            "items (use retry-judge for one waiting for the judge or whose judgement failed)",
        )
    with database.atomic("IMMEDIATE"):
        item = Item.get_by_id(item.id)
        _check_not_in_flight(item, item_id, now)
        _reopen(run, now, JUDGING)
        history = [*(item.judge_history or []), judgement_of(item, now)]
        Item.update(
            status=WAITING_FOR_JUDGE,
            judge_history=history,
            evaluation_score=None,
            evaluation_reason=None,
            rubric_scores=None,
            auto_fail=None,
            judged_at=None,
            updated_at=now,
            **_REQUEUE,
        ).where((Item.id == item.id) & (Item.status == COMPLETED)).execute()
        log_event(
            run,
            "rejudge",
            f"Item {item.id} ({item.task_key}) queued to be judged again; its score "
            f"{item.evaluation_score:g} is kept in its history",
            now=now,
        )
    return Item.get_by_id(item.id)


def retry_failed_judgements(run_id, now=None):
    """Queue every item whose judgement failed for judging again; returns how many."""
    now = now or utcnow()
    run = get_run(run_id)
    failed = (
        (Item.run == run)
        & (Item.status == FAILED)
        & (Item.error_stage == "judge")
        & Item.answer.is_null(False)
    )
    with database.atomic("IMMEDIATE"):
        count = Item.select().where(failed).count()
        if count:
            _reopen(run, now, JUDGING)
            Item.update(status=WAITING_FOR_JUDGE, updated_at=now, **_REQUEUE).where(
                failed
            ).execute()
            log_event(
                run, "retry_judge", f"{count} items with a failed judgement queued again", now=now
            )
    return count


# The stages of the failures "Retry failed answers" asks again (an answer's, a warm-up's).
ANSWER_STAGES = ("answer", "warmup")


def _failed_answers(run):
    """The items whose answer or warm-up FAILED: what "Retry failed answers" asks again."""
    return (Item.run == run) & (Item.status == FAILED) & Item.error_stage.in_(list(ANSWER_STAGES))


def retryable_answer_failures(run):
    """How many items "Retry failed answers" would ask again (answer or warm-up FAILED)."""
    return Item.select().where(_failed_answers(run)).count()


def retryable_in(counts):
    """retryable_answer_failures from counts already read in counts.kept()'s shape."""
    return sum(
        sums["n"]
        for (_target, status, stage), sums in counts.items()
        if status == FAILED and stage in ANSWER_STAGES
    )


def retry_failed_answers(run_id, now=None):
    """Ask again every item whose answer or warm-up failed (attempts reset); returns how many.

    A finished run runs again (Conflict while another run is active); a paused or stopped one
    asks them when continued.
    """
    now = now or utcnow()
    run = get_run(run_id)
    failed = _failed_answers(run)
    with database.atomic("IMMEDIATE"):
        count = Item.select().where(failed).count()
        if count:
            _reopen(run, now, BENCHMARKING)
            targets = Item.select(Item.target).where(failed & (Item.error_stage == "warmup"))
            RunTarget.update(warmup_error=None).where(RunTarget.id.in_(targets)).execute()
            # answer=None: an item that failed on two empty answers gets its one glitch retry.
            Item.update(status=NEW, answer=None, updated_at=now, **_REQUEUE).where(failed).execute()
            log_event(
                run,
                "retry_answers",
                f"{count} items with a failed answer or warm-up queued to be asked again",
                now=now,
            )
    return count
