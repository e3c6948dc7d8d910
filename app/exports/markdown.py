"""Markdown export: the averages table, the composite score and checks per model, then each
model's items inside <details> (streamed)."""

import html
import re

from ..clock import isoformat
from ..db.models import Item
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
from .rows import error_text
from .rows import item_columns
from .rows import json_value
from .rows import judge_score
from .rows import number
from .rows import number_memo
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


# What cell() changes besides the ends' whitespace: a row with none of these in any of its texts
# is its texts stripped (one search per row instead of eight passes per cell).
_MARKUP = re.compile("[&<>|\r\n]")


def _row(values):
    return "| " + " | ".join([cell(v) for v in values]) + " |\n"


def _text_row(texts):
    """_row(texts) for a row of str: the same bytes, searched once for what cell() changes."""
    try:
        joined = "".join(texts)
    except TypeError:  # a value that is not text (cell() makes it text)
        return _row(texts)
    if _MARKUP.search(joined) is None:
        return "| " + " | ".join([t.strip() for t in texts]) + " |\n"
    return _row(texts)


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


def _judge_cell(judged, score, check_score, judge_scores, text=number):
    """The judge's score of an item, or that the run has no judge (its checks score it);
    `text`: number, or a number_memo of it."""
    if not judged:
        return NO_JUDGE
    return text(judge_score(score, check_score, json_value(judge_scores)))


def _checks_cell(check_score, check_results):
    results = json_value(check_results)
    if results is None:
        return ""
    return f"{number(check_score)}: {check_line(results)}"


def _reason_cell(judge_reason, auto_fail_reason):
    if auto_fail_reason:
        return f"{judge_reason or ''}\nAuto-fail: {auto_fail_reason}".strip()
    return judge_reason or ""


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


# The columns a detail row shows, read raw from the cursor (no row object per item).
_DETAIL_COLUMNS = (
    Item.target,
    Item.task_key,
    Item.category,
    Item.difficulty,
    Item.status,
    Item.error_stage,
    Item.time_taken_ms,
    Item.tokens_generated,
    Item.tokens_per_second,
    Item.evaluation_score,
    Item.evaluation_reason,
    Item.error_msg,
    Item.check_score,
    Item.check_results,
    Item.auto_fail_reason,
    Item.judge_scores,
)
ROWS_PER_PIECE = 500  # detail rows yielded as one piece: a piece per row cost the server per row


def markdown_details(run, labels):
    """The detail rows, each target's inside <details> (`labels`: detail_labels), streamed."""
    labels = dict(labels)
    judged = bool(run.judge_model)
    # Scores and token counts repeat down a run: their texts are remembered, not formatted anew.
    score_text, tokens_text = number_memo(), number_memo()
    yield "\n## Detailed results\n"
    current = None
    piece = []
    for (
        target_id,
        task_id,
        category,
        difficulty,
        status,
        stage,
        time_ms,
        tokens,
        tps,
        score,
        reason,
        error,
        check_score,
        check_results,
        auto_fail_reason,
        judge_scores,
    ) in item_columns(run, _DETAIL_COLUMNS):
        if target_id != current:
            if current is not None:
                piece.append("\n</details>\n")
            current = target_id
            piece.append(
                f"\n<details>\n<summary>{cell(labels.get(current, ''))}</summary>\n\n"
                + _header(DETAIL_HEADER, range(4, 9))
            )
        piece.append(
            _text_row(
                (
                    task_id,
                    category,
                    difficulty,
                    status_label(status, stage),
                    number(time_ms),
                    tokens_text(tokens),
                    number(tps),
                    score_text(score),
                    _judge_cell(judged, score, check_score, judge_scores, score_text),
                    "" if check_results is None else _checks_cell(check_score, check_results),
                    _reason_cell(reason, auto_fail_reason) if auto_fail_reason else reason or "",
                    error_text(stage, error) if error else "",
                )
            )
        )
        if len(piece) >= ROWS_PER_PIECE:
            yield "".join(piece)
            piece = []
    if current is not None:
        piece.append("\n</details>\n")
    if piece:
        yield "".join(piece)
