"""The row sources every export shares: targets in run order and a streamed item cursor."""

import json
from collections import namedtuple

from ..db.connection import stream_rows
from ..db.models import Item
from ..db.models import RunTarget
from ..runs.outcomes import FAILED_STATUSES

DetailRow = namedtuple(
    "DetailRow",
    (
        "item_id",
        "target_id",
        "provider_name",
        "model",
        "task_id",
        "task_name",
        "category",
        "difficulty",
        "status",
        "error_stage",
        "time_ms",
        "ttft_ms",
        "tokens_generated",
        "tokens_per_second",
        "score",
        "judge_reason",
        "answer",
        "error_msg",
        "cost_usd",
        "check_score",
        "check_results",  # [{type, score, passed, reason, gate}] or None
        "auto_fail_reason",
        "tool_calls",  # [{name, arguments}] or None
        "judge_score",  # the judge's own score (beside checks the item's score is not its)
    ),
)


def targets(run):
    """The run's targets in run order: list of (id, provider_name, label).

    Files name a target by its label: the model, with its params when it has any (the same model
    may be a target twice with different params).
    """
    return list(
        RunTarget.select(RunTarget.id, RunTarget.provider_name, RunTarget.label)
        .where(RunTarget.run == run)
        .order_by(RunTarget.id)
        .tuples()
    )


def task_name(question):
    """A task's name in the CSV's task_name column: its whole question (a file never
    shortens a question or an answer; quoting keeps its newlines inside the one field)."""
    return (question or "").strip()


# The stream's timing, after item_cursor's columns when it is asked for them (the detailed CSV).
TIMING_COLUMNS = (
    Item.first_answer_ms,
    Item.itl_hist,
    Item.queue_ms,
    Item.sent_ts,
)


def item_cursor(run, limit=None, with_answer=True, timing=False):
    """Raw item tuples, streamed (db.connection.stream_rows: a server-side cursor on
    PostgreSQL), ordered by target, task id, id.

    The order matches the (run, target, task_key) index, so neither database sorts, and rows
    are read a chunk at a time: memory stays flat whatever the run's size. The columns are
    plain numbers and text, so rows skip peewee's per-value conversion (a third of the time);
    check_results and tool_calls are JSON text (`json_value` reads them). With `timing`, the
    TIMING_COLUMNS follow (itl_hist as bytes).
    """
    return item_columns(
        run,
        (
            Item.id,
            Item.target,
            Item.task_key,
            Item.question,
            Item.category,
            Item.difficulty,
            Item.status,
            Item.error_stage,
            Item.time_taken_ms,
            Item.ttft_ms,
            Item.tokens_generated,
            Item.tokens_per_second,
            Item.evaluation_score,
            Item.evaluation_reason,
            Item.answer if with_answer else Item.id,
            Item.error_msg,
            Item.cost_usd,
            Item.check_score,
            Item.check_results,
            Item.auto_fail_reason,
            Item.tool_calls,
            Item.judge_scores,
            *(TIMING_COLUMNS if timing else ()),
        ),
        limit,
    )


def item_columns(run, columns, limit=None):
    """The `columns` of `run`'s items as raw tuples, streamed in item_cursor's order (target,
    task id, id: the index's, no sort), for a file that reads only some of them."""
    query = (
        Item.select(*columns).where(Item.run == run).order_by(Item.target, Item.task_key, Item.id)
    )
    if limit is not None:
        query = query.limit(limit)
    return stream_rows(query)


def detail_rows(run, limit=None, with_answer=True):
    """Items of `run` as DetailRow tuples, streamed (see item_cursor)."""
    names = {tid: (provider, model) for tid, provider, model in targets(run)}
    for (
        item_id,
        target_id,
        task_id,
        question,
        category,
        difficulty,
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
        cost,
        check_score,
        check_results,
        auto_fail_reason,
        tool_calls,
        judge_scores,
    ) in item_cursor(run, limit, with_answer):
        provider, model = names.get(target_id, ("", ""))
        yield DetailRow(
            item_id,
            target_id,
            provider,
            model,
            task_id,
            task_name(question),
            category,
            difficulty,
            status,
            stage,
            time_ms,
            ttft_ms,
            tokens,
            tps,
            score,
            reason,
            answer if with_answer else None,
            error,
            cost,
            check_score,
            json_value(check_results),
            auto_fail_reason,
            json_value(tool_calls),
            judge_score(score, check_score, json_value(judge_scores)),
        )


def json_value(text):
    """A JSON column's value from the cursor's text (None stays None)."""
    return None if text is None else json.loads(text)


def judge_score(score, check_score, judge_scores):
    """The judge's own score of an item: the first of judge_scores when it was kept beside the
    checks or repeats, else the item's score when no check scored it (then it is the judge's),
    else None (the checks took the whole score)."""
    if judge_scores:
        return judge_scores[0]
    return score if check_score is None else None


def check_line(results):
    """Each check's result in one line a person reads: `contains ✓ contains "4" · regex (gate)
    ✗ regex "\\b42\\b" not found`; '' when the answer had no checks."""
    return " · ".join(
        f"{r.get('type')}{' (gate)' if r.get('gate') else ''} "
        f"{'✓' if r.get('passed') else '✗'} {r.get('reason') or ''}".rstrip()
        for r in results or ()
    )


def tool_calls_text(calls):
    """The tool calls an answer made as compact JSON ('' when none)."""
    if not calls:
        return ""
    return json.dumps(calls, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def status_label(status, error_stage):
    """FAILED items say which stage failed, so a judge failure never reads as a low score."""
    if status in FAILED_STATUSES and error_stage:
        return f"{status} ({error_stage})"
    return status


def error_text(error_stage, error_msg):
    """The error with the stage that failed in front (answer / judge / warmup); '' when none."""
    if not error_msg:
        return ""
    if error_stage and not error_msg.startswith(f"{error_stage}:"):
        return f"{error_stage}: {error_msg}"
    return error_msg


# Where number()'s fixed-point text is repr(round(value, digits)) with its zeros cut: round() and
# format's "f" give the same correctly rounded digits, and below 1e9 with at most 4 decimals repr
# neither shortens them (a double holds 15 digits) nor writes an exponent (from 1e-5 down).
_FIXED_BELOW = 1e9
_FIXED_SPECS = {1: ".1f", 2: ".2f", 3: ".3f", 4: ".4f"}


def number(value, digits=2):
    """Plain number text: integral values without decimals, others rounded; None -> ''."""
    if value is None:
        return ""
    if value.__class__ is int:
        return str(value)
    value = float(value)
    spec = _FIXED_SPECS.get(digits)
    if spec and -_FIXED_BELOW < value < _FIXED_BELOW:
        # One format call instead of round, is_integer and repr: five per row of a download.
        text = format(value, spec).rstrip("0").rstrip(".")
        return "0" if text == "-0" else text
    rounded = round(value, digits)
    if rounded.is_integer():
        return str(int(rounded))
    # The shortest text for the rounded float: 40.5, 1067.25 (never 1067.2500000001).
    return repr(rounded)


REMEMBERED = 4096  # texts a number_memo keeps before it starts afresh: memory stays flat


def number_memo(digits=2):
    """number(value, digits) as a function that remembers the texts of the values it was given,
    for a column whose values repeat down a file (scores, token counts, ITL buckets): a dict
    lookup instead of a format call. Values equal as numbers (1, 1.0, True) have one text."""
    memo = {}

    def text(value):
        got = memo.get(value)
        if got is None:
            if len(memo) >= REMEMBERED:
                memo.clear()
            got = memo[value] = number(value, digits)
        return got

    return text
