"""One claimed item's work: call the target, or ask the task's scorer that needs a call (the
judge), then record the answer, the score, a retry or the failure (every write guarded by the
claim, engine/claims.py). Rule scorers score an answer as it is stored (engine/rules.py)."""

import logging
import threading

from ..db.models import COMPLETED
from ..db.models import FAILED
from ..db.models import NEW
from ..db.models import WAITING_FOR_JUDGE
from ..providers.interface import ProviderError
from ..runs.lifecycle import item_messages
from ..scoring.judge_calls import JudgeError
from . import metrics
from . import retry
from .breaker import holds
from .claims import record
from .claims import release
from .claims import update_claimed
from .metrics import cost
from .rules import judge_scorer
from .rules import settled_by_rules
from .rules import with_judgement

log = logging.getLogger(__name__)

JUDGE_RAW_SEPARATOR = "\n\n----- repair request -----\n\n"
DEFAULT_MAX_TOKENS = 2048
JUDGE_UNUSABLE_TO_PAUSE = 5  # unusable judgements in a row before the run pauses
# An answer of a load step the judge does not score (settings.load.judgeSteps "first") whose
# task has no checks: settled unscored, and the item's page says why.
NOT_JUDGED = (
    "not judged: only the first load step's answers are judged (settings.load.judgeSteps "
    '"first"); this task has no checks to score it by'
)
MAX_TOKENS_NAMES = ("max_tokens", "maxTokens", "max_completion_tokens", "num_predict")


def call_params(params, config):
    """A target's params for a call: max_tokens defaults when the target sets none, so a model
    that never stops ends at a length rather than at the answer cap or the deadline."""
    params = dict(params or {})
    if not any(params.get(name) for name in MAX_TOKENS_NAMES):
        params["max_tokens"] = int(config.get("DEFAULT_MAX_TOKENS", DEFAULT_MAX_TOKENS))
    return params


class Failure(Exception):
    """A failure of our own making (empty answer, internal error), shaped like ProviderError."""

    def __init__(self, message, transient, retry_after=None):
        super().__init__(message)
        self.message = message
        self.transient = transient
        self.retry_after = retry_after


class ItemWorker:
    """Answers and judges claimed items of one run (shared by the tick's worker threads)."""

    def __init__(self, ctx):
        self.ctx = ctx
        self._lock = threading.Lock()

    # ---- answers ---------------------------------------------------------------------------
    def answer(self, item, target, adapter, judged=True):
        """Send one claimed item to its target and record the answer, a retry or the failure.

        `judged` False (a load step the judge does not score, settings.load.judgeSteps): the
        answer is settled by its rules alone, or left unscored with the reason when it has none.
        """
        ctx = self.ctx
        attempts = item.attempts
        messages = item_messages(item.system_prompt, item.question)
        # The task's snapshot (its tools, checks, references), read once per task in the run.
        task = ctx.memory.tasks.of(item)
        try:
            completion = adapter.chat(
                target.model,
                messages,
                params=call_params(self._params(item, target), ctx.config),
                stream=True,
                keep_alive=ctx.keep_alive(target.provider),
                cancel=ctx.cancel,
                tools=task.tools or None,
            )
        except ProviderError as exc:
            if ctx.cancel.is_set():  # a stop abandoned it: the supervisor released the claim
                return
            if holds(exc):  # the server is down or busy, not the item's fault: the target waits
                ctx.breaker.open(target.provider, exc, (item.id, attempts))
            else:
                self._answer_failed(item, attempts, exc)
            return
        except Exception as exc:  # an adapter bug must not kill the run: fail this item
            log.exception("unexpected error answering item %s", item.id)
            self._answer_failed(item, attempts, Failure(f"internal error: {exc!r}", False))
            return
        if ctx.cancel.is_set():
            return
        ctx.breaker.reachable(target.provider_id)
        # An answer that only calls tools is an answer: its text is "".
        if not (completion.text or "").strip() and not completion.tool_calls:
            self._empty_answer(item, attempts, completion)
            return
        now = ctx.now()
        tps, tps_source, decode_ms = metrics.speed(completion)
        cost_usd, cost_source = cost(completion, ctx.price(target))
        fields = dict(
            # The judge's attempts and retry-time cap start afresh (first_attempt_at is set
            # again by the first judge claim): a long benchmark must not use up the judge's.
            status=WAITING_FOR_JUDGE,
            attempts=0,
            answer_attempts=attempts,
            next_retry_at=None,
            first_attempt_at=None,
            error_msg=None,
            error_stage=None,
            answer=completion.text,
            tool_calls=completion.tool_calls,
            response_raw=completion.raw,
            request_json=completion.request,
            time_taken_ms=completion.wall_ms,
            ttft_ms=completion.ttft_ms,
            prompt_ms=completion.prompt_ms,
            decode_ms=decode_ms,
            load_ms=completion.load_ms,
            prompt_tokens=completion.prompt_tokens,
            tokens_generated=completion.completion_tokens,
            tokens_per_second=tps,
            tps_source=tps_source,
            tokens_estimated=bool(completion.tokens_estimated),
            **metrics.timing(completion),
            cost_usd=cost_usd,
            cost_source=cost_source,
            finish_reason=completion.finish_reason,
            answer_cut=completion.answer_cut,
            answered_at=now,
            updated_at=now,
        )
        score, stored = settled_by_rules(task, completion.text, fields, ctx.run, judge=judged)
        fields.update(stored)
        if score is None and not judged:
            fields.update(status=COMPLETED, evaluation_reason=NOT_JUDGED, judged_at=now)
        if score is not None:
            fields.update(
                status=COMPLETED,
                evaluation_score=score.score,
                evaluation_reason=score.reason,
                rubric_scores=score.rubric_scores,
                auto_fail=score.auto_fail,
                judged_at=now,
            )
        speed = f", {tps:.1f} tok/s ({tps_source})" if tps else ""
        tokens = completion.completion_tokens
        message = (
            f"{item.task_key} on {ctx.target_label(target.id)}: "
            f"{completion.wall_ms:.0f} ms, {tokens if tokens is not None else '?'} tokens"
            f"{speed}"
            + (
                f"; the answer was cut at {len(completion.text):,} characters"
                if completion.answer_cut
                else ""
            )
            + (f"; {_scored(score)}" if score is not None else "")
        )
        data = {
            "itemId": item.id,
            "taskId": item.task_key,
            "model": target.model,
            "timeTakenMs": round(completion.wall_ms, 1),
            "tokensGenerated": tokens,
            "tokensPerSecond": round(tps, 2) if tps else None,
            **({"score": score.score} if score is not None else {}),
        }
        if self._record(item.id, NEW, attempts, fields, ("item_done", message, "INFO", data), now):
            ctx.budget.add(cost_usd)

    def _record(self, item_id, status, attempts, fields, event, now):
        """Record a claimed item's outcome and its run-log line `event` (event, message,
        level, data) while the claim is ours (claims.record: committed before this returns);
        True when it was, and the event is told to the listener then."""
        ctx = self.ctx

        def write():
            if not update_claimed(item_id, status, attempts, fields):
                return False
            ctx.log_line(*event, now=now)
            return True

        if not record(write):
            return False
        ctx.announce(*event)
        return True

    def _params(self, item, target):
        """The target's params, with the item's own seed when the run repeats tasks."""
        params = target.params or {}
        # The seed comes with the claim (claims.ANSWERING); only repeated runs have one (a load
        # step asking its tasks again too: runs/lifecycle.py _target_rows).
        if item.seed is not None:
            params = {**params, "seed": item.seed}
        return params

    def _empty_answer(self, item, attempts, completion):
        # An empty answer is retried once as a glitch (a dropped stream, a server hiccup); a
        # second one fails the item "empty answer" rather than sending nothing to the judge,
        # so it counts as a failure, not as a low score. answer="" marks the first one.
        why = f"empty answer (finish_reason {completion.finish_reason or 'unknown'})"
        stored = {
            "answer": "",
            "response_raw": completion.raw,
            "request_json": completion.request,
            "finish_reason": completion.finish_reason,
        }
        if item.answer == "":
            self._answer_failed(
                item, attempts, Failure(why, False), stored, final_message=f"{why}, twice"
            )
        else:
            self._answer_failed(item, attempts, Failure(why, True), stored, force_retry=True)

    def _answer_failed(
        self, item, attempts, exc, extra=None, force_retry=False, final_message=None
    ):
        now = self.ctx.now()
        fields = dict(extra or {}, error_stage="answer", updated_at=now)
        if getattr(exc, "raw", None) and "response_raw" not in fields:
            fields["response_raw"] = exc.raw
        counted = min(attempts, self.ctx.max_attempts - 1) if force_retry else attempts
        self._retry_or_fail(item, attempts, exc, "answer", fields, now, counted, final_message)

    def _retry_or_fail(self, item, attempts, exc, stage, fields, now, counted, final_message=None):
        """Schedule the item's next attempt or fail it, as the retry policy decides; log it."""
        ctx = self.ctx
        decision = retry.decide(
            attempts=counted,
            first_attempt_at=item.first_attempt_at or now,
            error=exc,
            config=ctx.config,
            limit=ctx.max_attempts,
            now=now,
        )
        label = f"{item.task_key} on {ctx.target_label(item.target_id)}"
        if stage == "judge":
            label = f"judging {label}"
        if decision.retry:
            fields.update(next_retry_at=decision.at, error_msg=exc.message)
            event, level, message = "retry_scheduled", "WARNING", f"{label}: {decision.message}"
            data = {
                "itemId": item.id,
                "nextRetryAt": decision.at.isoformat() + "Z",
                "attempt": attempts,
                "error": exc.message,
            }
            if stage == "judge":
                data["stage"] = stage  # an answer's retry names no stage in the run log
        else:
            error = final_message or decision.message
            fields.update(status=FAILED, next_retry_at=None, error_msg=error)
            event, level, message = "item_failed", "ERROR", f"{label} failed: {error}"
            data = {"itemId": item.id, "stage": stage, "error": error}
        status = WAITING_FOR_JUDGE if stage == "judge" else NEW
        self._record(item.id, status, attempts, fields, (event, message, level, data), now)

    def internal_failure(self, item, status, exc, label):
        """An unexpected error while recording an item: FAILED with the error, in the run log."""
        ctx = self.ctx
        now = ctx.now()
        error = f"internal error: {exc!r}"[:500]
        stage = "judge" if status == WAITING_FOR_JUDGE else "answer"
        self._record(
            item.id,
            status,
            item.attempts,
            {
                "status": FAILED,
                "error_stage": stage,
                "error_msg": error,
                "next_retry_at": None,
                "updated_at": now,
            },
            (
                "item_failed",
                f"{label} failed: {error}",
                "ERROR",
                {"itemId": item.id, "stage": stage, "error": error},
            ),
            now,
        )

    # ---- judgements ------------------------------------------------------------------------
    def judge(self, item, adapter):
        """Have the task's scorer that needs a call score one claimed answer
        (claims.ClaimedAnswer) with the run's judge model; record the score (the rule scorers'
        beside it), a retry or failure."""
        ctx = self.ctx
        attempts = item.attempts
        scorer = judge_scorer(item, ctx.run)
        try:
            if scorer is None:  # the scorers changed since the answer: nothing can score it
                raise JudgeError("no scorer that needs a call scores this task", transient=False)
            judged, result = scorer.ask(
                adapter,
                ctx.run.judge_model,
                item,
                params=ctx.run.judge_params,
                keep_alive=ctx.keep_alive(ctx.run.judge_provider),
                cancel=ctx.cancel,
            )
        except JudgeError as exc:
            if ctx.cancel.is_set():
                return
            if holds(exc):  # the judge's server is down or busy: the answers wait for it
                ctx.breaker.open(ctx.run.judge_provider, exc, (item.id, attempts))
            elif not (exc.unusable and self._judge_unusable(item, attempts, exc)):
                self._judge_failed(item, attempts, exc)
            return
        except Exception as exc:
            log.exception("unexpected error judging item %s", item.id)
            self._judge_failed(
                item, attempts, JudgeError(f"internal error: {exc!r}", transient=False)
            )
            return
        if ctx.cancel.is_set():
            return
        ctx.breaker.reachable(ctx.run.judge_provider_id)
        with self._lock:
            ctx.memory.unusable_judgements = 0
        scores, extra = self._judge_again(scorer, item, adapter, ctx.judge_repeats - 1)
        if ctx.cancel.is_set():
            return
        score, stored = with_judgement(item, judged, ctx.run, ctx.memory.tasks)
        now = ctx.now()
        judge_cost = self._judge_cost(result["completions"] + extra)
        fields = dict(
            status=COMPLETED,
            next_retry_at=None,
            error_msg=None,
            error_stage=None,
            evaluation_score=score.score,
            evaluation_reason=score.reason,
            rubric_scores=score.rubric_scores,
            auto_fail=score.auto_fail,
            judge_request_json=result["request"],
            judge_raw=JUDGE_RAW_SEPARATOR.join(r for r in result["raws"] if r),
            judge_ms=result["ms"],
            judge_cost_usd=judge_cost,
            judged_at=now,
            updated_at=now,
            **stored,
        )
        if scores or "check_score" in stored:
            # Beside the checks the item's score is no longer the judge's: keep the judge's own.
            fields["judge_scores"] = [judged.score, *scores]
        message = f"{item.task_key} on {ctx.target_label(item.target_id)}: {_scored(score)}"
        data = {
            "itemId": item.id,
            "taskId": item.task_key,
            "score": score.score,
            "repaired": len(result["raws"]) > 1,
        }
        event = ("item_judged", message, "INFO", data)
        if self._record(item.id, WAITING_FOR_JUDGE, attempts, fields, event, now):
            ctx.budget.add(judge_cost)

    def _judge_unusable(self, item, attempts, exc):
        """Count a judgement whose output fits no schema; the Nth in a row pauses the run with
        an example (True; the item waits, its attempt uncounted) instead of burning the rest."""
        ctx = self.ctx
        limit = int(ctx.config.get("JUDGE_UNUSABLE_TO_PAUSE", JUDGE_UNUSABLE_TO_PAUSE))
        with self._lock:
            ctx.memory.unusable_judgements += 1
            if ctx.memory.unusable_judgements < limit:
                return False
            ctx.memory.unusable_judgements = 0
        release(item.id, attempts)
        why, text = exc.unusable
        example = " ".join(text.split())[:200] or "(an empty reply)"
        ctx.pause(
            f"the judge's output does not fit the schema: {why} ({limit} judgements in a row; "
            f"it answered, for example: {example!r}); use a judge model that follows the "
            "schema, or raise its max_tokens, then continue",
            event="judge_unusable",
        )
        return True

    def _judge_again(self, scorer, item, adapter, times):
        """`times` more judgements of the same answer (settings.judgeRepeats): their scores
        (None for one that failed: the spread is measured on the others) and completions."""
        ctx = self.ctx
        scores, completions = [], []
        for _ in range(max(0, times)):
            if ctx.cancel.is_set():
                break
            try:
                again, call = scorer.ask(
                    adapter,
                    ctx.run.judge_model,
                    item,
                    params=ctx.run.judge_params,
                    keep_alive=ctx.keep_alive(ctx.run.judge_provider),
                    cancel=ctx.cancel,
                )
            except JudgeError:
                scores.append(None)
                continue
            scores.append(again.score)
            completions += call["completions"]
        return scores, completions

    def _judge_cost(self, completions):
        """What a judgement's calls cost (the repair's included): provider-reported first,
        else the price table for the run's judge provider + model; None when none is known."""
        price = self.ctx.judge_price()
        costs = [cost(c, price)[0] for c in completions]
        known = [c for c in costs if c is not None]
        return sum(known) if known else None

    def _judge_failed(self, item, attempts, exc):
        now = self.ctx.now()
        fields = dict(error_stage="judge", updated_at=now, judge_ms=exc.ms or None)
        if exc.raws:
            fields["judge_raw"] = JUDGE_RAW_SEPARATOR.join(r for r in exc.raws if r)
        if exc.request is not None:
            fields["judge_request_json"] = exc.request
        self._retry_or_fail(item, attempts, exc, "judge", fields, now, attempts)


def _scored(score):
    """A score as the run log says it: the score, an auto-fail, the reason (cut at 120)."""
    reason = score.reason if len(score.reason) <= 120 else score.reason[:117] + "..."
    return f"score {score.score:g}{' (auto-fail)' if score.auto_fail else ''}: {reason}"
