"""Retries: send answered items back to the judge, or failed items back to their targets.

A finished run with items queued again becomes running again (Conflict while another run is
active); a paused or stopped one does them when continued.
"""

from ..clock import utcnow
from ..db import database
from ..errors import Conflict
from ..errors import NotFound
from ..errors import ValidationError
from ..ids import is_db_id
from ..models import BENCHMARKING
from ..models import CANT_BE_FINISHED
from ..models import CONTROL_RUNNING
from ..models import FAILED
from ..models import FINISHED
from ..models import JUDGING
from ..models import NEW
from ..models import PENDING
from ..models import WAITING_FOR_JUDGE
from ..models import Item
from ..models import Run
from ..models import RunTarget
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


def retry_judge(run_id, item_id, now=None):
    """Queue one item for judging again (it must hold an answer: WAITING/FAILED judge/COMPLETED)."""
    now = now or utcnow()
    run = get_run(run_id)
    item = Item.get_or_none((Item.id == item_id) & (Item.run == run)) if is_db_id(item_id) else None
    if item is None:
        raise NotFound(f"No item {item_id} in run {run_id}.")
    if (
        item.answer is None
        or item.status == NEW
        or (item.status in (FAILED, CANT_BE_FINISHED) and item.error_stage not in ("judge", None))
    ):
        raise ValidationError.field(
            "itemId",
            f"item {item_id} has no answer to judge "
            f"(status {item.status}); only answered items can be re-judged",
        )
    with database.atomic("IMMEDIATE"):
        item = Item.get_by_id(item.id)
        if Item.select().where((Item.id == item.id) & Item.in_flight(now)).exists():
            raise Conflict(
                f"item {item_id} is being judged right now; retry it when that judgement is in"
            )
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


def _failed_answers(run):
    """The items whose answer or warm-up FAILED: what "Retry failed answers" asks again."""
    return (Item.run == run) & (Item.status == FAILED) & Item.error_stage.in_(["answer", "warmup"])


def retryable_answer_failures(run):
    """How many items "Retry failed answers" would ask again (answer or warm-up FAILED)."""
    return Item.select().where(_failed_answers(run)).count()


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
