"""results.jsonl and results.csv: one row per item for CI and scripts (task, target, answer,
score, reason, rubric scores, auto-fail, metrics, cost, error, the checks' score and results,
why it auto-failed and the tool calls the answer made), streamed from one cursor."""

import json
from itertools import islice

from ..db.connection import stream_rows
from ..db.models import Item
from ..files.csvcells import mixed_lines
from ..runs.item_speed import ITL_FIGURES
from ..runs.item_speed import api_fields
from ..runs.item_speed import item_speed
from ..runs.item_speed import itl
from ..runs.item_speed import sent_at
from ..runs.item_speed import tpot_ms
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
CSV_CHUNK_ROWS = 500  # results.csv's lines a chunk: a few hundred KB with their answers


def _item_query(run):
    """The _COLUMNS of `run`'s items, ordered by target and task id (the index's order)."""
    return (
        Item.select(*_COLUMNS).where(Item.run == run).order_by(Item.target, Item.task_key, Item.id)
    )


def item_records(run):
    """One dict per item, ordered by target and task id (the index's order: no sort), streamed
    (a server-side cursor on PostgreSQL: memory stays flat)."""
    names = {tid: f"{provider}/{model}" for tid, provider, model in targets(run)}
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
    ) in stream_rows(_item_query(run)):
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
    """A results.csv cell as csv.writer takes it: None empty, booleans as JSON's, lists and
    objects as sorted compact-key JSON, text and numbers as they are."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return value


def _json_cell(text):
    """_cell of a JSON column's value, from the cursor's text."""
    return _cell(json.loads(text)) if text else ""


_NO_GAPS = dict.fromkeys(ITL_FIGURES)


def _csv_cells(row, names):
    """One item's results.csv cells (CSV_COLUMNS) from its raw _COLUMNS tuple: the cells
    item_records' dict gives, worked out without the dicts (item_speed's figures included).
    The cursor's values are text, numbers or None (mixed_lines writes None empty, as csv.writer
    does); only parsed JSON and booleans go through _cell."""
    (
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
        _tps_source,
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
        _tokens_estimated,
        first_answer_ms,
        last_token_ms,
        sent_ts,
        chunks,
        reasoning_tokens,
        itl_hist,
        queue_ms,
        judge_scores,
    ) = row
    gaps = itl(itl_hist) if itl_hist else None
    measurable = None if chunks is None and gaps is None else gaps is not None
    if answer_from and judgement_from:
        reused = "answer+judgement"
    else:
        reused = "answer" if answer_from else "judgement" if judgement_from else ""
    return (
        task_id,
        category,
        difficulty,
        names.get(target, ""),
        status,
        score,
        reason,
        _json_cell(rubric),
        "" if auto_fail is None else "true" if auto_fail else "false",
        time_ms,
        ttft_ms,
        prompt_tokens,
        tokens,
        tps,
        cost,
        judge_cost,
        stage if error else None,
        error or None,
        reused,
        answer,
        check_score,
        _json_cell(check_results),
        auto_fail_reason,
        _json_cell(tool_calls),
        first_answer_ms,
        last_token_ms,
        sent_at(sent_ts),
        chunks,
        reasoning_tokens,
        *(gaps or _NO_GAPS).values(),
        _cell(measurable),
        tpot_ms(time_ms, ttft_ms, tokens),
        queue_ms,
        _cell(judge_score(score, check_score, json.loads(judge_scores) if judge_scores else None)),
    )


def results_csv(run):
    """results.csv as text chunks (RFC 4180, CRLF, header first, formula cells neutralised),
    CSV_CHUNK_ROWS lines a chunk."""
    names = {tid: f"{provider}/{model}" for tid, provider, model in targets(run)}
    yield mixed_lines([CSV_COLUMNS])
    rows = iter(stream_rows(_item_query(run)))
    while batch := list(islice(rows, CSV_CHUNK_ROWS)):
        yield mixed_lines([_csv_cells(row, names) for row in batch])
