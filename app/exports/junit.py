"""JUnit XML of one run for CI test reporters: one <testsuite> per target, one <testcase> per item.

The file validates against the Jenkins xunit plugin's junit-10.xsd (tests/data/junit.xsd), the
format Jenkins, GitLab and the common CI reporters read. Per item:

- classname = `llmbench.<provider>.<model>` with each run of dots and spaces in the names
  as `_` (reporters split a classname at its dots into packages), name = the task id; the
  suite is the target, named and with a `target` property as `provider/label` (the label is
  the model, with its params when it has any: two profiles of one model differ there);
- COMPLETED with a score >= pass_score passes; under it: <failure type="low_score">; a judge's
  auto-fail: <failure type="auto_fail"> (whatever the score);
- FAILED: <failure type="failed"> with the stage and error;
- CANT_BE_FINISHED: <skipped>, it can never be asked; NEW and WAITING_FOR_JUDGE (a run that was
  interrupted or is still going): <skipped> too, nothing can be said about them yet;
- time = answer ms + judge ms, in seconds; score, judge reason and the answer's start go in
  <system-out>, each bounded, so a 1 MB answer costs at most a few KB of XML.

Memory: a reporter needs a suite's counts in its opening tag, before its testcases. Items are
read once and each testcase is written at once to its target's spool (a SpooledTemporaryFile:
in memory up to SPOOL_CHARS, then on disk) while the counts add up; the spools are then copied
out behind their opening tags. So one item at a time is in memory, plus at most SPOOL_CHARS per
target, whatever the run's size or the items' order: no second query, no count passed in.
"""

import math
import re
import tempfile
from contextlib import closing
from datetime import UTC

from peewee import fn

from ..db.connection import stream_rows
from ..db.models import CANT_BE_FINISHED
from ..db.models import COMPLETED
from ..db.models import FAILED
from ..db.models import NEW
from ..db.models import WAITING_FOR_JUDGE
from ..db.models import Item
from ..db.models import RunTarget
from .rows import error_text
from .rows import number
from .rows import targets

MESSAGE_CHARS = 300  # a failure's or skip's message attribute: one line in a reporter's list
TEXT_CHARS = 2000  # the reason, the error, the answer's start
SPOOL_CHARS = 1_000_000  # per target, kept in memory before its spool goes to disk
READ_CHARS = 64 * 1024
# Everything XML 1.0 cannot carry: C0 controls but tab, LF and CR; lone surrogates; U+FFFE/U+FFFF.
_INVALID = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_SKIPPED = {
    CANT_BE_FINISHED: "can't be finished",
    NEW: "not answered yet: the run is unfinished or was interrupted",
    WAITING_FOR_JUDGE: "not judged yet: the run is unfinished or was interrupted",
}


def clean(value):
    """Text XML 1.0 can hold: what it cannot (\\x00, \\x1b, a lone surrogate) becomes U+FFFD."""
    return _INVALID.sub("\ufffd", "" if value is None else str(value))


def _text(value):
    # CR as a reference: a parser would read a raw CR (and CRLF) back as LF.
    text = clean(value).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace("\r", "&#13;")


def _attr(value):
    # Tab and LF too: attribute value normalisation would turn raw ones into spaces.
    return _text(value).replace('"', "&quot;").replace("\n", "&#10;").replace("\t", "&#9;")


def _cut(text, limit):
    text = "" if text is None else str(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _seconds(ms):
    # Three decimals: the XSD's SUREFIRE_TIME pattern allows no more.
    return f"{ms / 1000.0:.3f}"


def target_label(item):
    """The item's target as `provider/label` (the testcase classname and the suite name)."""
    name = item.get("targetLabel") or item.get("targetModelName") or ""
    return f"{item.get('targetProviderName') or ''}/{name}"


_SPLITS = re.compile(r"[.\s]+")


def classname(item):
    """`llmbench.<provider>.<model>` (dots and spaces in either as `_`): CI reporters read the
    dots as packages, so the target's own dots (`qwen2.5`) must not split it."""
    model = item.get("targetModelName") or item.get("targetLabel") or ""
    parts = [_SPLITS.sub("_", str(p).strip()) for p in (item.get("targetProviderName"), model)]
    return "llmbench." + ".".join(p or "_" for p in parts)


def outcome(item, pass_score=50.0):
    """(element, type, message) for one item: element is None (passed), "failure" or "skipped"."""
    status = item.get("status")
    score = item.get("evaluationScore")
    reason = item.get("evaluationReason") or ""
    if status == COMPLETED:
        if item.get("autoFail"):
            return "failure", "auto_fail", f"auto-fail: {reason}" if reason else "auto-fail"
        if score is None or score != score:  # None or NaN: nothing shows it passed
            return "failure", "low_score", "completed without a score"
        if score < pass_score:
            message = f"score {number(score)} < pass score {number(pass_score)}"
            return "failure", "low_score", f"{message}: {reason}" if reason else message
        return None, None, None
    error = error_text(item.get("errorStage"), item.get("errorMsg"))
    if status == FAILED:
        return "failure", "failed", error or "failed"
    if status in _SKIPPED:
        message = _SKIPPED[status]
        return "skipped", None, f"{message}: {error}" if error else message
    raise ValueError(f"item {item.get('taskId')!r} has an unknown status {status!r}")


def _system_out(item, pass_score):
    lines = [f"status: {item.get('status')}"]
    score = item.get("evaluationScore")
    if score is not None:
        lines.append(f"score: {number(score)} (pass score {number(pass_score)})")
    if item.get("category"):
        lines.append(f"category: {item['category']}")
    for key, name in (("timeTakenMs", "answer ms"), ("judgeMs", "judge ms")):
        if item.get(key) is not None:
            lines.append(f"{name}: {number(item[key])}")
    if item.get("evaluationReason"):
        lines.append(f"judge reason: {_cut(item['evaluationReason'], TEXT_CHARS)}")
    answer = item.get("answer")
    if answer is not None:
        # answerChars: the full length when `answer` holds only its start (run_items).
        total = max(len(answer), item.get("answerChars") or 0)
        shown = min(total, TEXT_CHARS)
        head = "answer" if shown == total else f"answer (first {shown} of {total} characters)"
        lines.append(f"{head}:\n{answer[:shown]}")
    return "\n".join(lines)


def testcase_xml(item, pass_score=50.0):
    """(xml, element, ms): one item's <testcase> as XML text (every value cleaned and escaped)."""
    element, kind, message = outcome(item, pass_score)
    ms = (item.get("timeTakenMs") or 0.0) + (item.get("judgeMs") or 0.0)
    parts = [
        f'<testcase classname="{_attr(classname(item))}" name="{_attr(item.get("taskId"))}"'
        f' time="{_seconds(ms)}">'
    ]
    if element == "failure":
        # The body holds the whole (bounded) text: the error, or the judge's full reason.
        body = message if kind == "failed" else item.get("evaluationReason") or message
        parts.append(
            f'<failure type="{kind}" message="{_attr(_cut(message, MESSAGE_CHARS))}">'
            f"{_text(_cut(body, TEXT_CHARS))}</failure>"
        )
    elif element == "skipped":
        parts.append(f'<skipped message="{_attr(_cut(message, MESSAGE_CHARS))}"/>')
    parts.append(f"<system-out>{_text(_system_out(item, pass_score))}</system-out></testcase>\n")
    return "".join(parts), element, ms


GATES_SUITE = "quality gates"


def gate_testcase_xml(classname, name, failure=None):
    """(xml, element, ms): one quality gate's <testcase> (e.g. a target's composite score
    against --min-composite, its p90 TTFT against --max-ttft-p90, its goodput against
    --min-goodput); a <failure type="gate"> with `failure`'s text when it failed."""
    parts = [f'<testcase classname="{_attr(classname)}" name="{_attr(name)}" time="0.000">']
    if failure:
        parts.append(
            f'<failure type="gate" message="{_attr(_cut(failure, MESSAGE_CHARS))}">'
            f"{_text(_cut(failure, TEXT_CHARS))}</failure>"
        )
    parts.append("</testcase>\n")
    return "".join(parts), "failure" if failure else None, 0.0


class _Suite:
    """One target's testcases on a spool, with the counts its opening tag needs."""

    def __init__(self, label, spool_chars):
        self.label = label
        self.tests = self.failures = self.skipped = 0
        self.ms = 0.0
        self.spool = tempfile.SpooledTemporaryFile(
            max_size=spool_chars, mode="w+", encoding="utf-8", newline=""
        )

    def add(self, xml, element, ms):
        self.spool.write(xml)
        self.tests += 1
        self.failures += element == "failure"
        self.skipped += element == "skipped"
        self.ms += ms


def _timestamp(value):
    """ISO 8601 in UTC without a zone (the strictest JUnit schemas refuse one); str as given."""
    if value is None or isinstance(value, str):
        return value
    if value.tzinfo is not None:
        value = value.astimezone(UTC).replace(tzinfo=None)
    return value.strftime("%Y-%m-%dT%H:%M:%S")


def _collect(items, pass_score, spool_chars):
    suites = {}
    try:
        for item in items:
            label = target_label(item)
            suite = suites.get(label)
            if suite is None:
                suite = suites[label] = _Suite(label, spool_chars)
            suite.add(*testcase_xml(item, pass_score))
    except BaseException:
        for suite in suites.values():
            suite.spool.close()
        raise
    return list(suites.values())


def _render(suites, run_id, suite_name, pass_score, timestamp):
    stamp = _timestamp(timestamp)
    try:
        yield '<?xml version="1.0" encoding="UTF-8"?>\n'
        yield (
            f'<testsuites name="{_attr(suite_name)}" tests="{sum(s.tests for s in suites)}"'
            f' failures="{sum(s.failures for s in suites)}" errors="0"'
            f' time="{_seconds(sum(s.ms for s in suites))}">\n'
        )
        for position, suite in enumerate(suites):
            yield (
                f'<testsuite name="{_attr(suite.label)}" id="{position}" tests="{suite.tests}"'
                f' failures="{suite.failures}" errors="0" skipped="{suite.skipped}"'
                f' time="{_seconds(suite.ms)}"'
                + (f' timestamp="{_attr(stamp)}"' if stamp else "")
                + ">\n<properties>"
                f'<property name="run_id" value="{_attr(run_id)}"/>'
                f'<property name="pass_score" value="{number(pass_score)}"/>'
                + (
                    ""
                    if suite.label == GATES_SUITE
                    else f'<property name="target" value="{_attr(suite.label)}"/>'
                )
                + "</properties>\n"
            )
            suite.spool.seek(0)
            while chunk := suite.spool.read(READ_CHARS):
                yield chunk
            yield "</testsuite>\n"
            suite.spool.close()
        yield "</testsuites>\n"
    finally:
        for suite in suites:
            suite.spool.close()


def _check(pass_score):
    if isinstance(pass_score, bool) or not isinstance(pass_score, int | float):
        raise ValueError(f"pass score must be a number from 0 to 100, not {pass_score!r}")
    if not (math.isfinite(pass_score) and 0 <= pass_score <= 100):
        raise ValueError(f"pass score must be a number from 0 to 100, not {pass_score!r}")


def junit_chunks(
    items, *, run_id, suite_name=None, pass_score=50.0, timestamp=None, spool_chars=SPOOL_CHARS
):
    """The JUnit XML of `items` (item DTO dicts, any iterable, read once) as text chunks.

    All items are read before the first chunk is yielded, so a bad one (an unknown status)
    raises ValueError before anything is written. `timestamp` (a datetime or ISO text, e.g. the
    run's start) goes on every suite; `suite_name` names the <testsuites> (default
    "llmbench run RUN_ID"). Suits a streamed download as well as a file.
    """
    _check(pass_score)
    suites = _collect(items, pass_score, spool_chars)
    name = suite_name or f"llmbench run {run_id}"
    yield from _render(suites, run_id, name, pass_score, timestamp)


def write_junit(
    items,
    out,
    *,
    run_id,
    suite_name=None,
    pass_score=50.0,
    timestamp=None,
    spool_chars=SPOOL_CHARS,
    gates=(),
):
    """Write the JUnit XML of `items` to the text file `out`; arguments as junit_chunks.

    `gates`: (classname, name, failure text or None) of quality gates checked on the run, as
    one more suite after the targets'. Open `out` with encoding="utf-8" (the XML declaration
    says so). Returns the totals, for the CLI to report: {"tests", "failures", "errors",
    "skipped", "suites"}.
    """
    _check(pass_score)
    suites = _collect(items, pass_score, spool_chars)
    if gates:
        suite = _Suite(GATES_SUITE, spool_chars)
        suites.append(suite)
        for classname, name, failure in gates:
            suite.add(*gate_testcase_xml(classname, name, failure))
    totals = {
        "tests": sum(s.tests for s in suites),
        "failures": sum(s.failures for s in suites),
        "errors": 0,
        "skipped": sum(s.skipped for s in suites),
        "suites": len(suites),
    }
    name = suite_name or f"llmbench run {run_id}"
    with closing(_render(suites, run_id, name, pass_score, timestamp)) as chunks:
        for chunk in chunks:
            out.write(chunk)
    return totals


def run_items(run):
    """The run's items as dicts with the item DTO keys this module reads, from one cursor.

    Ordered as the (run, target, task_key) index, so SQLite streams without sorting. Only the
    answer's first TEXT_CHARS + 1 characters leave the database, with its length as
    `answerChars`, so a run of long answers reads fast and memory stays flat.
    """
    names = {tid: (provider, label) for tid, provider, label in targets(run)}
    models = dict(
        RunTarget.select(RunTarget.id, RunTarget.model).where(RunTarget.run == run).tuples()
    )
    query = (
        Item.select(
            Item.target,
            Item.task_key,
            Item.category,
            Item.status,
            Item.error_stage,
            Item.error_msg,
            Item.time_taken_ms,
            Item.judge_ms,
            Item.evaluation_score,
            Item.evaluation_reason,
            Item.auto_fail,
            fn.SUBSTR(Item.answer, 1, TEXT_CHARS + 1),
            fn.LENGTH(Item.answer),
        )
        .where(Item.run == run)
        .order_by(Item.target, Item.task_key, Item.id)
    )
    for (
        target_id,
        task_id,
        category,
        status,
        stage,
        error,
        time_ms,
        judge_ms,
        score,
        reason,
        auto_fail,
        answer,
        answer_chars,
    ) in stream_rows(query):
        provider, label = names.get(target_id, ("", ""))
        yield {
            "taskId": task_id,
            "targetId": target_id,
            "targetProviderName": provider,
            "targetLabel": label,
            "targetModelName": models.get(target_id, label),
            "category": category,
            "status": status,
            "errorStage": stage,
            "errorMsg": error,
            "timeTakenMs": time_ms,
            "judgeMs": judge_ms,
            "evaluationScore": score,
            "evaluationReason": reason,
            "autoFail": None if auto_fail is None else bool(auto_fail),
            "answer": answer,
            "answerChars": answer_chars,
        }
