"""Judge calls beside a run's items: a reference check's scores and pairwise verdicts.

The slice hands claimed JudgeCall rows (engine/call_claims.py) to the CallWorker, in the same
WorkerPool and with the same retry policy, budget, pause and stop as items. A reference call
scores one of the task's references with the run's judge prompt (rubric.judge_item, the reference
in place of an answer). A pairwise call asks for the better of two answers
(pairwise.judge_pair); when both orders of a pair are in, they become one Vote: the same
winner both times wins, anything else is a tie flagged inconsistent (MT-Bench's rule).
"""

import logging
from types import SimpleNamespace

from ..db.models import COMPLETED
from ..db.models import FAILED
from ..db.models import LEFT
from ..db.models import NEW
from ..db.models import RIGHT
from ..db.models import TIE
from ..db.models import Item
from ..db.models import JudgeCall
from ..db.models import JudgeJob
from ..db.models import Vote
from ..runs.judge_jobs import LEVELS
from ..runs.judge_jobs import PAIRWISE
from ..runs.judge_jobs import judge_voter
from ..scoring import pairwise
from ..scoring import rubric
from ..scoring.judge_calls import JudgeError
from ..scoring.score import TASK_FIELDS
from ..scoring.votes import vote_row
from . import call_claims
from . import claims
from . import retry
from .breaker import holds
from .items import JUDGE_RAW_SEPARATOR
from .metrics import cost
from .metrics import price_for

log = logging.getLogger(__name__)

_COLUMN = dict(LEVELS)  # reference level -> the item column holding its text
# A verdict seen from the other order: the first order's LEFT is the second order's RIGHT.
_FLIP = {LEFT: RIGHT, RIGHT: LEFT, TIE: TIE}


def reference_answer(item, level):
    """The item's snapshot with one of its references in place of the answer."""
    task = SimpleNamespace(**{f: getattr(item, f) for f in TASK_FIELDS})
    task.answer = getattr(item, _COLUMN[level])
    return task


def combine(first, second):
    """One vote from a pair judged in both orders: (winner as the first order showed it,
    inconsistent). `second` is the verdict with the sides swapped."""
    seen_again = _FLIP[second]
    if first == seen_again:
        return first, False
    return TIE, True


def cant_finish_job(ctx, job):
    """The job's judge provider was deleted: its open calls fail, with why, in the run log."""
    now = ctx.now()
    message = "the judge's provider was deleted; ask again with another judge"
    count = (
        JudgeCall.update(
            status=FAILED, error_msg=message, next_retry_at=None, claimed_until=None, updated_at=now
        )
        .where((JudgeCall.job == job.id) & (JudgeCall.status == NEW))
        .execute()
    )
    ctx.emit(
        "judge_call_failed",
        f"{count} judge calls of job {job.id} can't be made: {message}",
        level="ERROR",
        data={"jobId": job.id, "count": count},
        now=now,
    )


class CallWorker:
    """Does claimed judge calls of one run (shared by the tick's worker threads)."""

    def __init__(self, ctx):
        self.ctx = ctx
        self._jobs = {}
        self._prices = {}

    def job(self, job_id):
        """The job (cached for the tick: its judge does not change)."""
        if job_id not in self._jobs:
            self._jobs[job_id] = JudgeJob.get_by_id(job_id)
        return self._jobs[job_id]

    def label(self, row):
        """What the run log calls a claimed call."""
        job = self.job(row.job_id)
        what = "reference check" if job.kind != PAIRWISE else "pairwise comparison"
        return f"{what} call {row.id} by {job.judge_provider_name}/{job.judge_model}"

    def process(self, row, adapter):
        """Make one claimed call and record its outcome, a retry or its failure."""
        ctx = self.ctx
        job = self.job(row.job_id)
        call = JudgeCall.get_by_id(row.id)
        item = Item.get_by_id(call.item_id)
        keep_alive = ctx.keep_alive(job.judge_provider)
        try:
            if job.kind == PAIRWISE:
                other = Item.get_by_id(call.other_item_id)
                result = pairwise.judge_pair(
                    adapter,
                    job.judge_model,
                    item,
                    item.answer,
                    other.answer,
                    params=job.judge_params,
                    keep_alive=keep_alive,
                    cancel=ctx.cancel,
                )
            else:
                result = rubric.judge_item(
                    adapter,
                    job.judge_model,
                    reference_answer(item, call.level),
                    params=job.judge_params,
                    keep_alive=keep_alive,
                    cancel=ctx.cancel,
                )
        except JudgeError as exc:
            if ctx.cancel.is_set():
                return
            if holds(exc):  # the judge's server is down or busy: the call waits, uncounted
                call_claims.release(row.id, row.attempts)
                ctx.breaker.open(job.judge_provider, exc)
            else:
                ctx.breaker.reachable(job.judge_provider_id)  # it answered, if badly
                self._failed(row, exc)
            return
        except Exception as exc:  # a bug must not kill the run: fail this call
            log.exception("unexpected error in judge call %s", row.id)
            self._failed(row, JudgeError(f"internal error: {exc!r}", transient=False))
            return
        if ctx.cancel.is_set():
            return
        ctx.breaker.reachable(job.judge_provider_id)
        self._record(row, job, call, result)

    def _record(self, row, job, call, result):
        ctx = self.ctx
        now = ctx.now()
        usd = self._cost(job, result["completions"])
        fields = {
            "status": COMPLETED,
            "reason": result["reason"],
            "request_json": result["request"],
            "raw": JUDGE_RAW_SEPARATOR.join(r for r in result["raws"] if r),
            "ms": result["ms"],
            "cost_usd": usd,
            "error_msg": None,
            "next_retry_at": None,
            "updated_at": now,
        }
        if job.kind == PAIRWISE:
            fields["verdict"] = result["verdict"]
            message = f"{self.label(row)}: {result['verdict'].lower()}"
        else:
            fields["score"] = result["score"]
            message = f"{self.label(row)}: {call.level} reference scored {result['score']:g}"
        with claims.writing():
            if not call_claims.update_claimed(row.id, row.attempts, fields):
                return
            if job.kind == PAIRWISE:
                self._vote_when_both_in(job, call, result["verdict"], result["reason"], now)
            ctx.emit("judge_call_done", message, data={"callId": row.id, "jobId": job.id}, now=now)
        ctx.budget.add(usd)

    def _vote_when_both_in(self, job, call, verdict, reason, now):
        """When the other order of this pair is in too, store the pair's one vote."""
        other = JudgeCall.get_or_none(
            (JudgeCall.job == job.id)
            & (JudgeCall.item == call.other_item_id)
            & (JudgeCall.other_item == call.item_id)
        )
        if other is None or other.status != COMPLETED:
            return
        # The pair's first order (the lower call id) shows target A's item on the left.
        if call.id < other.id:
            first, verdicts, first_reason = call, (verdict, other.verdict), reason
        else:
            first, verdicts, first_reason = other, (other.verdict, verdict), other.reason
        winner, inconsistent = combine(*verdicts)
        left = Item.get_by_id(first.item_id)
        right = Item.get_by_id(first.other_item_id)
        Vote.insert(
            vote_row(
                left,
                right,
                winner,
                judge_voter(job.judge_provider_name, job.judge_model),
                now=now,
                inconsistent=inconsistent,
                job=job.id,
                reason=first_reason,
            )
        ).on_conflict_ignore().execute()

    def _cost(self, job, completions):
        key = (job.judge_provider_name, job.judge_model)
        if key not in self._prices:
            self._prices[key] = price_for(*key)
        costs = [cost(c, self._prices[key])[0] for c in completions]
        known = [c for c in costs if c is not None]
        return sum(known) if known else None

    def _failed(self, row, exc):
        """Schedule the call's next attempt or fail it, as the retry policy decides."""
        ctx = self.ctx
        now = ctx.now()
        decision = retry.decide(
            attempts=row.attempts,
            first_attempt_at=row.first_attempt_at or now,
            error=exc,
            config=ctx.config,
            limit=ctx.max_attempts,
            now=now,
        )
        fields = {"updated_at": now, "ms": exc.ms or None}
        if exc.raws:
            fields["raw"] = JUDGE_RAW_SEPARATOR.join(r for r in exc.raws if r)
        if exc.request is not None:
            fields["request_json"] = exc.request
        if decision.retry:
            fields.update(next_retry_at=decision.at, error_msg=exc.message)
            event, level = "retry_scheduled", "WARNING"
            message = f"{self.label(row)}: {decision.message}"
        else:
            fields.update(status=FAILED, next_retry_at=None, error_msg=decision.message)
            event, level = "judge_call_failed", "ERROR"
            message = f"{self.label(row)} failed: {decision.message}"
        with claims.writing():
            if call_claims.update_claimed(row.id, row.attempts, fields):
                ctx.emit(event, message, level=level, data={"callId": row.id}, now=now)

    def internal_failure(self, row, status, exc, label):
        """An unexpected error while recording a call: FAILED with the error, in the run log."""
        ctx = self.ctx
        now = ctx.now()
        error = f"internal error: {exc!r}"[:500]
        with claims.writing():
            if call_claims.update_claimed(
                row.id,
                row.attempts,
                {"status": FAILED, "error_msg": error, "next_retry_at": None, "updated_at": now},
            ):
                ctx.emit(
                    "judge_call_failed",
                    f"{label} failed: {error}",
                    level="ERROR",
                    data={"callId": row.id},
                    now=now,
                )
