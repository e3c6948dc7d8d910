"""results.jsonl and results.csv: one row per item for CI and scripts (task, target, answer,
score, reason, rubric scores, auto-fail, metrics, cost, error, the checks' score and results,
why it auto-failed and the tool calls the answer made), streamed from one cursor."""

import io
import json

from ..db.connection import database
from ..db.models import Item
from ..files.csvcells import SafeWriter
from ..runs.item_speed import ITL_FIGURES
from ..runs.item_speed import api_fields
from ..runs.item_speed import item_speed
from .rows import judge_score
from .rows import targets

CSV_COLUMNS = (
    "task_id",
    "category",
    "difficulty",
    "target",
    "status",
    "score",
    "reason",
    "rubric_scores",
    "auto_fail",
    "time_ms",
    "ttft_ms",
    "prompt_tokens",
    "tokens_generated",
    "tokens_per_second",
    "cost_usd",
    "judge_cost_usd",
    "error_stage",
    "error",
    "reused",
    "answer",
    "check_score",
    "check_results",
    "auto_fail_reason",
    "tool_calls",
    # The stream's timing (runs/item_speed.py), after the older columns so their order holds.
    "first_answer_ms",
    "last_token_ms",
    "sent_at",
    "chunks",
    "reasoning_tokens",
    "itl_mean_ms",
    "itl_p50_ms",
    "itl_p90_ms",
    "itl_p99_ms",
    "itl_max_ms",
    "itl_measurable",
    "tpot_ms",
    "queue_ms",
    # The judge's own score: beside checks, `score` is their combination, not the judge's.
    "judge_score",
)
_COLUMNS = (
    Item.target,
    Item.task_key,
    Item.category,
    Item.difficulty,
    Item.status,
    Item.answer,
    Item.evaluation_score,
    Item.evaluation_reason,
    Item.rubric_scores,
    Item.auto_fail,
    Item.time_taken_ms,
    Item.ttft_ms,
    Item.prompt_tokens,
    Item.tokens_generated,
    Item.tokens_per_second,
    Item.tps_source,
    Item.cost_usd,
    Item.judge_cost_usd,
    Item.error_stage,
    Item.error_msg,
    Item.answer_reused_from,
    Item.judgement_reused_from,
    Item.check_score,
    Item.check_results,
    Item.auto_fail_reason,
    Item.tool_calls,
    Item.tokens_estimated,
    Item.first_answer_ms,
    Item.last_token_ms,
    Item.sent_ts,
    Item.chunks,
    Item.reasoning_tokens,
    Item.itl_hist,
    Item.queue_ms,
    Item.judge_scores,
)
CHUNK_ROWS = 200


def item_records(run):
    """One dict per item, ordered by target and task id (the index's order: no sort)."""
    names = {tid: f"{provider}/{model}" for tid, provider, model in targets(run)}
    query = (
        Item.select(*_COLUMNS)
        .where(Item.run == run)
        .order_by(Item.target, Item.task_key, Item.id)
        .tuples()
    )
    for (
        target,
        task_id,
        category,
        difficulty,
        status,
        answer,
        score,
        reason,
        rubric,
        auto_fail,
        time_ms,
        ttft_ms,
        prompt_tokens,
        tokens,
        tps,
        tps_source,
        cost,
        judge_cost,
        stage,
        error,
        answer_from,
        judgement_from,
        check_score,
        check_results,
        auto_fail_reason,
        tool_calls,
        tokens_estimated,
        first_answer_ms,
        last_token_ms,
        sent_ts,
        chunks,
        reasoning_tokens,
        itl_hist,
        queue_ms,
        judge_scores,
    ) in database.execute(query):
        speed = item_speed(
            {
                "time_taken_ms": time_ms,
                "ttft_ms": ttft_ms,
                "first_answer_ms": first_answer_ms,
                "last_token_ms": last_token_ms,
                "sent_ts": sent_ts,
                "chunks": chunks,
                "tokens_generated": tokens,
                "tokens_estimated": tokens_estimated,
                "tokens_per_second": tps,
                "tps_source": tps_source,
                "reasoning_tokens": reasoning_tokens,
                "itl_hist": itl_hist,
                "queue_ms": queue_ms,
            }
        )
        yield {
            "taskId": task_id,
            "category": category,
            "difficulty": difficulty,
            "target": names.get(target, ""),
            "status": status,
            "answer": answer,
            "score": score,
            "reason": reason,
            "rubricScores": json.loads(rubric) if rubric else None,
            "autoFail": None if auto_fail is None else bool(auto_fail),
            "metrics": {
                "timeMs": time_ms,
                "ttftMs": ttft_ms,
                "promptTokens": prompt_tokens,
                "tokensGenerated": tokens,
                "tokensPerSecond": tps,
                "tpsSource": tps_source,
                **api_fields(speed),
            },
            "costUsd": cost,
            "judgeCostUsd": judge_cost,
            "error": {"stage": stage, "message": error} if error else None,
            "reused": {"answerFrom": answer_from, "judgementFrom": judgement_from}
            if answer_from or judgement_from
            else None,
            "checkScore": check_score,
            "checkResults": json.loads(check_results) if check_results else None,
            "autoFailReason": auto_fail_reason,
            "toolCalls": json.loads(tool_calls) if tool_calls else None,
            "judgeScore": judge_score(
                score, check_score, json.loads(judge_scores) if judge_scores else None
            ),
        }


def results_jsonl(run):
    """results.jsonl as text chunks: one JSON object per item and line."""
    lines = []
    for record in item_records(run):
        lines.append(json.dumps(record, ensure_ascii=False))
        if len(lines) >= CHUNK_ROWS:
            yield "\n".join(lines) + "\n"
            lines = []
    if lines:
        yield "\n".join(lines) + "\n"


def _cell(value):
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return value


def _csv_row(r):
    metrics, error, reused = r["metrics"], r["error"] or {}, r["reused"] or {}
    itl = metrics["itl"] or {}
    kinds = [
        k for k, v in (("answer", "answerFrom"), ("judgement", "judgementFrom")) if reused.get(v)
    ]
    return [
        _cell(v)
        for v in (
            r["taskId"],
            r["category"],
            r["difficulty"],
            r["target"],
            r["status"],
            r["score"],
            r["reason"],
            r["rubricScores"],
            r["autoFail"],
            metrics["timeMs"],
            metrics["ttftMs"],
            metrics["promptTokens"],
            metrics["tokensGenerated"],
            metrics["tokensPerSecond"],
            r["costUsd"],
            r["judgeCostUsd"],
            error.get("stage"),
            error.get("message"),
            "+".join(kinds) or None,
            r["answer"],
            r["checkScore"],
            r["checkResults"],  # JSON text (_cell)
            r["autoFailReason"],
            r["toolCalls"],  # JSON text (_cell)
            metrics["firstAnswerMs"],
            metrics["lastTokenMs"],
            metrics["sentAt"],
            metrics["chunks"],
            metrics["reasoningTokens"],
            *(itl.get(name) for name in ITL_FIGURES),
            metrics["itlMeasurable"],
            metrics["tpotMs"],
            metrics["queueMs"],
            r["judgeScore"],
        )
    ]


def results_csv(run):
    """results.csv as text chunks (RFC 4180, CRLF, header first, formula cells neutralised)."""
    buffer = io.StringIO()
    writer = SafeWriter(buffer)
    writer.writerow(CSV_COLUMNS)
    for n, record in enumerate(item_records(run), start=1):
        writer.writerow(_csv_row(record))
        if n % CHUNK_ROWS == 0:
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
    yield buffer.getvalue()
