"""CSV exports with exactly seed 000 §9's columns: RFC 4180 quoting, CRLF, UTF-8, streamed."""

import csv
import io

from ..results import model_averages
from .rows import detail_rows
from .rows import error_text
from .rows import number

AVERAGE_COLUMNS = ("provider_name", "model_name", "avg_time_per_task_ms",
                   "avg_tokens_per_second", "avg_score", "tasks_count")
DETAILED_COLUMNS = ("provider_name", "model_name", "task_id", "task_name", "task_status",
                    "spent_time_ms", "tokens_generated", "tokens_per_second", "score",
                    "judge_reason", "llm_response_text", "error_msg")
CHUNK_ROWS = 500


def _chunks(header, rows):
    """CSV text in chunks of CHUNK_ROWS lines; QUOTE_MINIMAL quotes commas, quotes, CR and LF."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n", quoting=csv.QUOTE_MINIMAL)
    writer.writerow(header)
    pending = 0
    for row in rows:
        writer.writerow(row)
        pending += 1
        if pending >= CHUNK_ROWS:
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
            pending = 0
    tail = buffer.getvalue()
    if tail:
        yield tail


def csv_average(run):
    """Average CSV: one line per model (tasks_count = the model's items)."""
    rows = ((r["provider_name"], r["model"], number(r["avg_time_ms"]),
             number(r["avg_tokens_per_second"]), number(r["avg_score"]), r["item_count"])
            for r in model_averages(run))
    yield from _chunks(AVERAGE_COLUMNS, rows)


def csv_detailed(run):
    """Detailed CSV: one line per item, streamed from one cursor."""
    rows = ((r.provider_name, r.model, r.task_id, r.task_name, r.status, number(r.time_ms),
             number(r.tokens_generated), number(r.tokens_per_second), number(r.score),
             r.judge_reason or "", r.answer or "", error_text(r.error_stage, r.error_msg))
            for r in detail_rows(run))
    yield from _chunks(DETAILED_COLUMNS, rows)
