"""Runs and items as JSON-ready dicts (RunSummaryDto, the item DTO + metrics)."""

from ..clock import isoformat
from ..db.models import CANT_BE_FINISHED
from ..db.models import COMPLETED
from ..db.models import FAILED
from ..db.models import NEW
from ..db.models import RunCollection
from ..db.models import RunTarget
from .counts import tally
from .item_speed import api_fields
from .item_speed import columns_of
from .item_speed import item_speed
from .outages import waiting_for
from .progress import progress_fraction
from .state import control_reason
from .state import run_state
from .state import state_label

NO_JUDGE = "— (checks only)"  # a run without a judge model: its tasks' checks score it


def judge_label(provider_name, model, sep="/"):
    """The run's judge as people read it, or NO_JUDGE for a run scored by checks alone."""
    return f"{provider_name}{sep}{model}" if model else NO_JUDGE


def status_counts(run):
    """{status: n} for every item status (zeros included)."""
    return dict(tally(run).by_status)


def _eta(run, counts, state):
    """Seconds left from the mean answer and judge times so far (None until known)."""
    if state != "running":
        return None
    kept = tally(run)
    avg_answer, avg_judge = kept.mean("answer_ms"), kept.mean("judge_ms")
    new = counts[NEW]
    to_judge = new + counts["WAITING_FOR_JUDGE"]
    # Without a judge time yet, assume judging costs about what answering did.
    judge_ms = avg_judge if avg_judge is not None else avg_answer
    if (new and avg_answer is None) or (to_judge and judge_ms is None):
        return None
    return round((new * (avg_answer or 0.0) + to_judge * (judge_ms or 0.0)) / 1000.0, 1)


def target_to_dict(target):
    """One run target (provider+model+params) with its warm-up figures."""
    return {
        "id": target.id,
        "providerId": target.provider_id,
        "providerConfigId": target.provider_id,
        "providerName": target.provider_name,
        "model": target.model,
        "modelName": target.model,
        "label": target.label,
        "params": target.params or {},
        "position": target.position,
        "warmupMs": target.warmup_ms,
        "loadMs": target.load_ms,
        "warmupError": target.warmup_error,
    }


def run_summary(run, counts=None, targets=None, collections=None):
    """RunSummaryDto + state, phase, counts, progress, ETA, targets and collections.

    `targets` (by position) and `collections` (by id) are the run's rows when the caller already
    has them (summaries fetches them for many runs at once); otherwise they are queried here.
    """
    counts = counts or status_counts(run)
    total = sum(counts.values())
    failed = counts[FAILED] + counts[CANT_BE_FINISHED]
    state = run_state(run)
    label, tone = state_label(state, counts[COMPLETED], failed)
    reason = control_reason(run) if state == "stopped" else run.control_reason
    eta = _eta(run, counts, state)
    if targets is None:
        targets = RunTarget.select().where(RunTarget.run == run).order_by(RunTarget.position)
    if collections is None:
        collections = (
            RunCollection.select().where(RunCollection.run == run).order_by(RunCollection.id)
        )
    return {
        "id": run.id,
        "runId": run.run_id,
        "name": run.name,
        "status": run.status,
        "state": state,
        # What people read: "finished with 3 failed" (tone warn), "finished, nothing
        # completed" (tone error); else the state itself.
        "stateLabel": label,
        "stateTone": tone,
        "phase": run.phase,
        "controlReason": reason,
        "runDate": isoformat(run.created_at),
        "judgeProviderConfigId": run.judge_provider_id,
        "judgeProviderId": run.judge_provider_id,
        "judgeProviderName": run.judge_provider_name,
        "judgeModelName": run.judge_model,
        "judgeModel": run.judge_model,
        "judgeParams": run.judge_params or {},
        "settings": run.settings or {},
        "source": run.source,
        "templateId": run.template_id,
        "triggeredBy": run.triggered_by,
        "triggerNote": run.trigger_note,
        "queuedAt": isoformat(run.queued_at),
        "datasetHash": run.dataset_hash,
        "promptHash": run.prompt_hash,
        "totalItems": total,
        "completedItems": counts[COMPLETED],
        "failedItems": failed,
        "counts": counts,
        # The one progress figure (runs/progress.py): the live view and the CLI show it too.
        "progress": round(progress_fraction(counts), 4),
        "etaSeconds": eta,
        # Servers the run cannot reach now; their items wait (NEW), not failed.
        "waiting": waiting_for(run) if state == "running" else [],
        "targets": [target_to_dict(t) for t in targets],
        "collections": [{"id": c.collection_id, "name": c.collection_name} for c in collections],
        "createdAt": isoformat(run.created_at),
        "startedAt": isoformat(run.started_at),
        "finishedAt": isoformat(run.finished_at),
        "updatedAt": isoformat(run.updated_at),
    }


def item_to_dict(item, raw=True, human_rating=None):
    """The service API's item DTO plus metrics, snapshot and judgement; `raw` adds request/response.

    `human_rating` is the person's rating of the item when the caller read it (ratings/store.py
    rating_to_dict), else None.
    """
    target = item.target
    judgement = None
    if item.evaluation_score is not None:
        judgement = {
            "score": item.evaluation_score,
            "reason": item.evaluation_reason,
            "rubricScores": item.rubric_scores,
            "autoFail": item.auto_fail,
        }
    data = {
        "id": item.id,
        "benchmarkRunId": item.run_id,
        "benchmarkTaskId": item.task_id,
        "taskId": item.task_key,
        "category": item.category,
        "subcategory": item.subcategory,
        "difficulty": item.difficulty,
        "question": item.question,
        "systemPrompt": item.system_prompt,
        "references": {"excellent": item.excellent, "good": item.good, "pass": item.pass_answer},
        "incorrectDirection": item.incorrect_direction,
        "rubric": item.rubric,
        "autoFailRules": item.auto_fail_rules,
        "checks": item.checks,
        "tools": item.tools,
        "templateVersion": item.template_version,
        "targetId": item.target_id,
        "targetProviderConfigId": target.provider_id,
        "targetProviderName": target.provider_name,
        "targetModelName": target.model,
        "targetLabel": target.label,
        # The load step the answer belongs to (settings.load; 0 without load steps).
        "loadStep": item.step,
        "status": item.status,
        "answer": item.answer,
        "llmResponseJson": {"text": item.answer} if item.answer is not None else None,
        "judgeResultJson": judgement,
        "evaluationScore": item.evaluation_score,
        "humanRating": human_rating,
        "evaluationReason": item.evaluation_reason,
        "rubricScores": item.rubric_scores,
        "autoFail": item.auto_fail,
        "autoFailReason": item.auto_fail_reason,
        # What the task's checks found ({type, passed, score, reason, ...} each) and their
        # combined score; the judge's own score beside them is judgeScores[0].
        "checkResults": item.check_results,
        "checkScore": item.check_score,
        "judgeScores": item.judge_scores,
        "toolCalls": item.tool_calls,
        "errorMsg": item.error_msg,
        "errorStage": item.error_stage,
        "timeTakenMs": item.time_taken_ms,
        "ttftMs": item.ttft_ms,
        "promptMs": item.prompt_ms,
        "decodeMs": item.decode_ms,
        "loadMs": item.load_ms,
        "promptTokens": item.prompt_tokens,
        "tokensGenerated": item.tokens_generated,
        "tokensPerSecond": item.tokens_per_second,
        "tpsSource": item.tps_source,
        "tokensEstimated": item.tokens_estimated,
        "costUsd": item.cost_usd,
        "costSource": item.cost_source,
        "finishReason": item.finish_reason,
        "answerCut": item.answer_cut,
        "contextHash": item.context_hash,
        "judgeMs": item.judge_ms,
        # Judgements a person replaced by re-judging the item, oldest first.
        "judgeHistory": item.judge_history or [],
        "judgeCostUsd": item.judge_cost_usd,
        "attempts": item.attempts,
        "answerAttempts": item.answer_attempts,
        "firstAttemptAt": isoformat(item.first_attempt_at),
        "lastAttemptAt": isoformat(item.last_attempt_at),
        "nextRetryAt": isoformat(item.next_retry_at),
        "answeredAt": isoformat(item.answered_at),
        "judgedAt": isoformat(item.judged_at),
        "createdAt": isoformat(item.created_at),
        "updatedAt": isoformat(item.updated_at),
        # The stream's timing (runs/item_speed.py): itl is null and itlMeasurable false for
        # a stream that came in one chunk.
        **api_fields(item_speed(columns_of(item))),
    }
    if raw:
        data.update(
            {
                "requestJson": item.request_json,
                "responseRaw": item.response_raw,
                "judgeRequestJson": item.judge_request_json,
                "judgeRaw": item.judge_raw,
            }
        )
    return data


def log_to_dict(entry):
    """One run log line."""
    return {
        "id": entry.id,
        "timestamp": isoformat(entry.created_at),
        "level": entry.level,
        "event": entry.event,
        "message": entry.message,
        "data": entry.data,
    }
