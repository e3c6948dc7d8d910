"""Markdown export: the averages table, then each model's items inside <details> (streamed)."""

import html

from ..clock import isoformat
from ..ratings.report import has_labels
from ..results.averages import model_averages
from ..runs.dto import judge_label
from ..runs.state import run_state
from .ratings import ratings_markdown
from .rows import detail_rows
from .rows import error_text
from .rows import number
from .rows import status_label

AVERAGE_HEADER = (
    "Provider",
    "Model",
    "Avg time (ms)",
    "Avg TTFT (ms)",
    "Avg tokens/s",
    "Avg score",
    "95 % CI",
    "Completed",
    "Failed (answer)",
    "Failed (judge)",
    "Tasks",
)
DETAIL_HEADER = (
    "Task",
    "Category",
    "Difficulty",
    "Status",
    "Time (ms)",
    "Tokens",
    "Tokens/s",
    "Score",
    "Judge reason",
    "Error",
)


def cell(value):
    """One table cell: HTML-escaped, pipes escaped, newlines as <br>."""
    text = html.escape("" if value is None else str(value), quote=False)
    text = text.replace("|", "\\|").replace("\r\n", "\n").replace("\r", "\n")
    return text.replace("\n", "<br>").strip()


def _row(values):
    return "| " + " | ".join(cell(v) for v in values) + " |\n"


def _header(names, numeric):
    align = ["---:" if i in numeric else "---" for i in range(len(names))]
    return _row(names) + "| " + " | ".join(align) + " |\n"


def _tasks(count):
    return f"{count} task" if count == 1 else f"{count} tasks"


def markdown(run, detailed=True):
    """The run as Markdown, yielded in pieces (one per line or table row)."""
    yield f"# Run {cell(run.run_id)}\n\n"
    judge = judge_label(cell(run.judge_provider_name), cell(run.judge_model), " / ")
    yield f"- Judge: {judge}\n"
    yield f"- State: {run_state(run)}\n"
    yield f"- Created: {isoformat(run.created_at) or '—'}\n"
    yield f"- Finished: {isoformat(run.finished_at) or '—'}\n"
    if run.dataset_hash:
        yield f"- Dataset hash: `{run.dataset_hash}`\n"
    yield "\n## Average performance per model\n\n"
    yield _header(AVERAGE_HEADER, range(2, 11))
    averages = model_averages(run)
    for r in averages:
        ci = (
            f"{number(r['ci_low'], 1)}–{number(r['ci_high'], 1)}" if r["ci_low"] is not None else ""
        )
        yield _row(
            (
                r["provider_name"],
                r["target_label"],
                number(r["avg_time_ms"], 1),
                number(r["avg_ttft_ms"], 1),
                number(r["avg_tokens_per_second"]),
                number(r["avg_score"]),
                ci,
                r["completed"],
                r["failed_answer"],
                r["failed_judge"],
                r["item_count"],
            )
        )
    if has_labels(run):
        yield from ratings_markdown(run, cell)
    if not detailed:
        return
    yield "\n## Detailed results\n"
    labels = {r["target_id"]: f"{r['label']} ({_tasks(r['item_count'])})" for r in averages}
    current = None
    for r in detail_rows(run, with_answer=False):
        if r.target_id != current:
            if current is not None:
                yield "\n</details>\n"
            current = r.target_id
            yield (
                f"\n<details>\n<summary>{cell(labels.get(current, ''))}</summary>\n\n"
                + _header(DETAIL_HEADER, range(4, 8))
            )
        yield _row(
            (
                r.task_id,
                r.category,
                r.difficulty,
                status_label(r.status, r.error_stage),
                number(r.time_ms),
                number(r.tokens_generated),
                number(r.tokens_per_second),
                number(r.score),
                r.judge_reason or "",
                error_text(r.error_stage, r.error_msg),
            )
        )
    if current is not None:
        yield "\n</details>\n"
