"""Markdown export: the averages table, the composite score and checks per model, then each
model's items inside <details> (streamed)."""

import html

from ..clock import isoformat
from ..ratings.report import has_labels
from ..results.averages import model_averages
from ..results.check_figures import target_check_figures
from ..results.composite import DEFAULT_SETTINGS
from ..results.composite import NONE_TEXT
from ..results.composite import composite_rule
from ..results.composite_figures import target_composites
from ..runs.dto import NO_JUDGE
from ..runs.dto import judge_label
from ..runs.state import run_state
from .ratings import ratings_markdown
from .rows import check_line
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
COMPOSITE_HEADER = ("Provider", "Model", "Composite score", "Checks passed", "Formula")
DETAIL_HEADER = (
    "Task",
    "Category",
    "Difficulty",
    "Status",
    "Time (ms)",
    "Tokens",
    "Tokens/s",
    "Score",
    "Judge",
    "Checks",
    "Reason",
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


def _composites(run, averages, settings):
    """The composite score per model with its formula, and how its answers fared on checks."""
    composites = target_composites(run, settings, averages)
    checks = target_check_figures(run)
    yield "\n## Composite score per model\n\n"
    yield _header(COMPOSITE_HEADER, (2,))
    for r in averages:
        c = composites.get(r["target_id"])
        figures = checks.get(r["target_id"])
        yield _row(
            (
                r["provider_name"],
                r["target_label"],
                f"{c.score:.1f}" if c else NONE_TEXT,
                figures.text() if figures else NONE_TEXT,
                c.formula() if c else "no scored answer with an answer time",
            )
        )
    yield f"\n{cell(composite_rule(settings))}.\n"


def _judge_cell(run, r):
    """The judge's score of an item, or that the run has no judge (its checks score it)."""
    if not run.judge_model:
        return NO_JUDGE
    return number(r.judge_score)


def _checks_cell(r):
    if r.check_results is None:
        return ""
    return f"{number(r.check_score)}: {check_line(r.check_results)}"


def _reason_cell(r):
    if r.auto_fail_reason:
        return f"{r.judge_reason or ''}\nAuto-fail: {r.auto_fail_reason}".strip()
    return r.judge_reason or ""


def markdown(run, detailed=True, composite_settings=DEFAULT_SETTINGS):
    """The run as Markdown, yielded in pieces (one per line or table row)."""
    averages = []
    yield from markdown_head(run, composite_settings, averages)
    if detailed:
        yield from markdown_details(run, detail_labels(averages))


def markdown_head(run, composite_settings=DEFAULT_SETTINGS, averages=None):
    """What comes before the detail rows: the run, its averages, composite scores and ratings
    (the model_averages rows read are appended to `averages` when given)."""
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
    rows = model_averages(run)
    if averages is not None:
        averages.extend(rows)
    for r in rows:
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
    yield from _composites(run, rows, composite_settings)
    if has_labels(run):
        yield from ratings_markdown(run, cell)


def detail_labels(averages):
    """[(target id, its <details> summary)] of model_averages rows, in their order."""
    return [(r["target_id"], f"{r['label']} ({_tasks(r['item_count'])})") for r in averages]


def markdown_details(run, labels):
    """The detail rows, each target's inside <details> (`labels`: detail_labels), streamed."""
    labels = dict(labels)
    yield "\n## Detailed results\n"
    current = None
    for r in detail_rows(run, with_answer=False):
        if r.target_id != current:
            if current is not None:
                yield "\n</details>\n"
            current = r.target_id
            yield (
                f"\n<details>\n<summary>{cell(labels.get(current, ''))}</summary>\n\n"
                + _header(DETAIL_HEADER, range(4, 9))
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
                _judge_cell(run, r),
                _checks_cell(r),
                _reason_cell(r),
                error_text(r.error_stage, r.error_msg),
            )
        )
    if current is not None:
        yield "\n</details>\n"
