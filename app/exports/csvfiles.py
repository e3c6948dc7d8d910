"""CSV exports: the service's CSV columns first and in their order (clients read them by
position), then ours (the checks, the tool calls, the composite score). RFC 4180 quoting, CRLF,
UTF-8, streamed.

Every cell goes through files/csvcells.py's writer (OWASP): an answer, reason, task or name that
starts like a formula gets a `'` in front, so a spreadsheet shows it instead of running it.
"""

import csv
import io
from itertools import islice

from ..files.csvcells import SafeWriter
from ..files.csvcells import fast_lines
from ..results.averages import model_averages
from ..results.composite import DEFAULT_SETTINGS
from ..results.composite_figures import target_composites
from ..runs.item_speed import itl
from ..runs.item_speed import sent_at
from ..runs.item_speed import tpot_ms
from .rows import check_line
from .rows import error_text
from .rows import item_cursor
from .rows import json_value
from .rows import judge_score
from .rows import number
from .rows import number_memo
from .rows import targets
from .rows import task_name
from .rows import tool_calls_text

SERVICE_AVERAGE_COLUMNS = (
    "provider_name",
    "model_name",
    "avg_time_per_task_ms",
    "avg_tokens_per_second",
    "avg_score",
    "tasks_count",
)
AVERAGE_COLUMNS = (*SERVICE_AVERAGE_COLUMNS, "composite_score")
SERVICE_DETAILED_COLUMNS = (
    "provider_name",
    "model_name",
    "task_id",
    "task_name",
    "task_status",
    "spent_time_ms",
    "tokens_generated",
    "tokens_per_second",
    "score",
    "judge_reason",
    "llm_response_text",
    "error_msg",
)
# After the service's columns: the checks' combined score, each check's result in words, why the
# answer auto-failed, and the tool calls it made (compact JSON).
DETAILED_COLUMNS = (
    *SERVICE_DETAILED_COLUMNS,
    "check_score",
    "checks",
    "auto_fail_reason",
    "tool_calls",
    # The stream's timing (runs/item_speed.py): ITL from the answer's token gaps ('' when it
    # came in one chunk), TPOT, the queue estimate, and when the request was sent.
    "first_answer_ms",
    "itl_p50_ms",
    "itl_p90_ms",
    "tpot_ms",
    "queue_ms",
    "sent_at",
    # The judge's own score: beside checks, `score` is their combination, not the judge's.
    "judge_score",
)
CHUNK_ROWS = 500
ITL_CELLS = ("p50", "p90")
NO_GAPS = dict.fromkeys(ITL_CELLS)


def _chunks(header, rows):
    """CSV text in chunks of CHUNK_ROWS lines; QUOTE_MINIMAL quotes commas, quotes, CR and LF."""
    buffer = io.StringIO()
    writer = SafeWriter(buffer, quoting=csv.QUOTE_MINIMAL)
    writer.writerow(header)
    rows = iter(rows)
    while True:
        batch = list(islice(rows, CHUNK_ROWS))
        if batch:
            writer.writerows(batch)
        text = buffer.getvalue()
        if text:
            yield text
            buffer.seek(0)
            buffer.truncate()
        if len(batch) < CHUNK_ROWS:
            return


def _fast_chunks(header, rows):
    """The same bytes as _chunks for rows of strings, twice as fast.

    csv.writer spends half the detailed export's time scanning long answers char by char
    (csvcells.fast_lines). tests/test_exports.py checks both agree.
    """
    yield from _chunks(header, ())
    rows = iter(rows)
    while True:
        batch = list(islice(rows, CHUNK_ROWS))
        if batch:
            yield fast_lines(batch)
        if len(batch) < CHUNK_ROWS:
            return


def csv_average(run, composite_settings=DEFAULT_SETTINGS):
    """Average CSV: one line per model (tasks_count = the model's items), then its composite
    score ('' when it has none)."""
    averages = model_averages(run)
    composites = target_composites(run, composite_settings, averages)
    rows = (
        (
            r["provider_name"],
            r["target_label"],
            number(r["avg_time_ms"]),
            number(r["avg_tokens_per_second"]),
            number(r["avg_score"]),
            r["item_count"],
            number(c.score if (c := composites.get(r["target_id"])) else None),
        )
        for r in averages
    )
    yield from _chunks(AVERAGE_COLUMNS, rows)


def csv_detailed(run):
    """Detailed CSV: one line per item, streamed from one cursor."""
    names = {tid: (provider, model) for tid, provider, model in targets(run)}
    yield from _fast_chunks(
        DETAILED_COLUMNS, map(_detailed_cells(names), item_cursor(run, timing=True))
    )


def _detailed_cells(names):
    """The function that gives one item's detailed CSV cells (DETAILED_COLUMNS) from its raw
    item_cursor(timing=True) tuple: the columns whose values repeat (scores, token counts, ITL
    buckets) through number_memo, the rest through number; JSON read only when there is some."""
    score_text, tokens_text, gap_text = number_memo(), number_memo(), number_memo()
    no_names = ("", "")

    def cells(row):
        (
            _id,
            target_id,
            task_id,
            question,
            _category,
            _difficulty,
            status,
            stage,
            time_ms,
            ttft_ms,
            tokens,
            tps,
            score,
            reason,
            answer,
            error,
            _cost,
            check_score,
            check_results,
            auto_fail_reason,
            tool_calls,
            judge_scores,
            first_answer_ms,
            itl_hist,
            queue_ms,
            sent_ts,
        ) = row
        gaps = (itl(itl_hist, ITL_CELLS) if itl_hist else None) or NO_GAPS
        provider, model = names.get(target_id, no_names)
        return (
            provider,
            model,
            task_id,
            task_name(question),
            status,
            number(time_ms),
            tokens_text(tokens),
            number(tps),
            score_text(score),
            reason or "",
            answer or "",
            error_text(stage, error) if error else "",
            score_text(check_score),
            "" if check_results is None else check_line(json_value(check_results)),
            auto_fail_reason or "",
            "" if tool_calls is None else tool_calls_text(json_value(tool_calls)),
            number(first_answer_ms),
            gap_text(gaps["p50"]),
            gap_text(gaps["p90"]),
            number(tpot_ms(time_ms, ttft_ms, tokens)),
            number(queue_ms),
            "" if sent_ts is None else sent_at(sent_ts),
            score_text(judge_score(score, check_score, json_value(judge_scores))),
        )

    return cells
