"""CSV exports with exactly the service's CSV columns: RFC 4180 quoting, CRLF, UTF-8, streamed.

Every cell goes through files/csvcells.py's writer (OWASP): an answer, reason, task or name that
starts like a formula gets a `'` in front, so a spreadsheet shows it instead of running it.
"""

import csv
import io
from itertools import islice

from ..files.csvcells import SafeWriter
from ..files.csvcells import fast_lines
from ..results.averages import model_averages
from .rows import error_text
from .rows import item_cursor
from .rows import number
from .rows import targets
from .rows import task_name

AVERAGE_COLUMNS = (
    "provider_name",
    "model_name",
    "avg_time_per_task_ms",
    "avg_tokens_per_second",
    "avg_score",
    "tasks_count",
)
DETAILED_COLUMNS = (
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
CHUNK_ROWS = 500


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


def csv_average(run):
    """Average CSV: one line per model (tasks_count = the model's items)."""
    rows = (
        (
            r["provider_name"],
            r["target_label"],
            number(r["avg_time_ms"]),
            number(r["avg_tokens_per_second"]),
            number(r["avg_score"]),
            r["item_count"],
        )
        for r in model_averages(run)
    )
    yield from _chunks(AVERAGE_COLUMNS, rows)


def csv_detailed(run):
    """Detailed CSV: one line per item, streamed from one cursor."""
    names = {tid: (provider, model) for tid, provider, model in targets(run)}
    rows = (
        (
            *names.get(target_id, ("", "")),
            task_id,
            task_name(question),
            status,
            number(time_ms),
            number(tokens),
            number(tps),
            number(score),
            reason or "",
            answer or "",
            error_text(stage, error),
        )
        for (
            _id,
            target_id,
            task_id,
            question,
            _category,
            _difficulty,
            status,
            stage,
            time_ms,
            _ttft,
            tokens,
            tps,
            score,
            reason,
            answer,
            error,
            _cost,
        ) in item_cursor(run)
    )
    yield from _fast_chunks(DETAILED_COLUMNS, rows)
