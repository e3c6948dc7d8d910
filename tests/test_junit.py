"""JUnit XML export: valid against junit-10.xsd; counts, outcome per status, hostile text."""

import datetime as dt
import io
import math
import re
import tracemalloc
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import xmlschema
from junitparser import Failure
from junitparser import JUnitXml
from junitparser import Skipped

from app.db.models import CANT_BE_FINISHED
from app.db.models import COMPLETED
from app.db.models import FAILED
from app.db.models import NEW
from app.db.models import WAITING_FOR_JUDGE
from app.exports.junit import TEXT_CHARS
from app.exports.junit import junit_chunks
from app.exports.junit import outcome
from app.exports.junit import run_items
from app.exports.junit import write_junit
from tests.factories import add_item
from tests.factories import make_run

XSD = Path(__file__).parent / "data" / "junit.xsd"
HOSTILE = (
    "q\"uo'te <tag> & ]]> \x00nul \x1b[31mansi \ud800lone \uffff \x7f tab\tcr\rcrlf\r\nend ✓😀"
)


@pytest.fixture(scope="module")
def schema():
    return xmlschema.XMLSchema(str(XSD))


def item(task_id="t1", provider="local", model="m1", status=COMPLETED, **fields):
    """An item DTO dict (app/run_dto.py:item_to_dict keys) with a passing judgement by default."""
    data = {
        "taskId": task_id,
        "targetProviderName": provider,
        "targetModelName": model,
        "status": status,
        "category": "math",
        "evaluationScore": 80.0 if status == COMPLETED else None,
        "evaluationReason": "fine" if status == COMPLETED else None,
        "autoFail": False if status == COMPLETED else None,
        "errorMsg": None,
        "errorStage": None,
        "timeTakenMs": 1000.0 if status != NEW else None,
        "judgeMs": 250.0 if status == COMPLETED else None,
        "answer": f"answer to {task_id}" if status != NEW else None,
    }
    data.update(fields)
    return data


def export(items, **options):
    options.setdefault("run_id", "run-1")
    out = io.StringIO()
    totals = write_junit(items, out, **options)
    return out.getvalue(), totals


def check(schema, xml):
    """Validate against the XSD, then parse back with junitparser (as a CI reporter would)."""
    schema.validate(io.BytesIO(xml.encode("utf-8")))
    return JUnitXml.fromstring(xml.encode("utf-8"))


def cases(parsed):
    return [case for suite in parsed for case in suite]


def result_of(schema, one, **options):
    """(element tag or None, type, message) of a single item's testcase, read back."""
    xml, _ = export([one], **options)
    (case,) = cases(check(schema, xml))
    if not case.result:
        return None, None, None
    (result,) = case.result
    return result._tag, result.type, result.message


def test_a_run_validates_with_one_suite_per_target_and_its_counts(schema):
    items = [
        item("t1"),
        item("t1", "remote, inc", "m|2", status=FAILED, errorStage="answer", errorMsg="timeout"),
        item("t2", evaluationScore=10.0, evaluationReason="wrong"),
        item("t2", "remote, inc", "m|2", status=NEW),
        item("t3", status=CANT_BE_FINISHED, errorStage="warmup", errorMsg="no such model"),
        item("t3", "remote, inc", "m|2", status=WAITING_FOR_JUDGE),
        item("t4", evaluationScore=0.0, autoFail=True, evaluationReason="unsafe advice"),
    ]
    xml, totals = export(items, suite_name="nightly")

    parsed = check(schema, xml)
    assert totals == {"tests": 7, "failures": 3, "errors": 0, "skipped": 3, "suites": 2}
    root = ET.fromstring(xml)
    assert root.tag == "testsuites"
    assert root.attrib == {
        "name": "nightly",
        "tests": "7",
        "failures": "3",
        "errors": "0",
        "time": "6.750",  # 6 answers of 1000 ms (all but NEW) + 3 judgements of 250 ms
    }
    # Suites in the order their targets first appear, even when the items are interleaved.
    suites = list(parsed)
    assert [s.name for s in suites] == ["local/m1", "remote, inc/m|2"]
    assert [(s.tests, s.failures, s.errors, s.skipped) for s in suites] == [
        (4, 2, 0, 1),
        (3, 1, 0, 2),
    ]
    assert [s.time for s in suites] == [pytest.approx(4.75), pytest.approx(2.0)]
    assert [(c.classname, c.name) for c in cases(parsed)] == [
        ("llmbench.local.m1", "t1"),
        ("llmbench.local.m1", "t2"),
        ("llmbench.local.m1", "t3"),
        ("llmbench.local.m1", "t4"),
        ("llmbench.remote,_inc.m|2", "t1"),
        ("llmbench.remote,_inc.m|2", "t2"),
        ("llmbench.remote,_inc.m|2", "t3"),
    ]
    props = {p.name: p.value for p in suites[0].properties()}
    assert props == {"run_id": "run-1", "pass_score": "50", "target": "local/m1"}


@pytest.mark.parametrize(
    ("fields", "expected_tag", "expected_type", "message_part"),
    [
        ({}, None, None, None),
        ({"evaluationScore": 12.5, "evaluationReason": "off"}, "failure", "low_score", "12.5"),
        ({"evaluationScore": 0.0, "autoFail": True}, "failure", "auto_fail", "auto-fail"),
        ({"evaluationScore": None}, "failure", "low_score", "without a score"),
        ({"evaluationScore": math.nan}, "failure", "low_score", "without a score"),
        (
            {"status": FAILED, "errorStage": "judge", "errorMsg": "bad json"},
            "failure",
            "failed",
            "judge: bad json",
        ),
        ({"status": FAILED}, "failure", "failed", "failed"),
        (
            {"status": CANT_BE_FINISHED, "errorStage": "warmup", "errorMsg": "404"},
            "skipped",
            None,
            "can't be finished: warmup: 404",
        ),
        ({"status": NEW}, "skipped", None, "not answered yet"),
        ({"status": WAITING_FOR_JUDGE}, "skipped", None, "not judged yet"),
    ],
)
def test_each_status_has_its_outcome(schema, fields, expected_tag, expected_type, message_part):
    status = fields.pop("status", COMPLETED)
    tag, kind, message = result_of(schema, item(status=status, **fields))
    assert (tag, kind) == (expected_tag, expected_type)
    if message_part is not None:
        assert message_part in message


def test_an_auto_fail_fails_whatever_the_score(schema):
    tag, kind, message = result_of(
        schema, item(evaluationScore=95.0, autoFail=True, evaluationReason="told to drink bleach")
    )
    assert (tag, kind, message) == ("failure", "auto_fail", "auto-fail: told to drink bleach")


@pytest.mark.parametrize(
    ("score", "pass_score", "passed"),
    [
        (50.0, 50.0, True),  # "under the pass score" fails: the boundary itself passes
        (49.99, 50.0, False),
        (50, 50, True),
        (80.0, 80.0, True),
        (79.9, 80.0, False),
        (0.0, 0.0, True),
        (100.0, 100.0, True),
        (99.99, 100.0, False),
    ],
)
def test_pass_score_boundary(schema, score, pass_score, passed):
    tag, kind, _ = result_of(schema, item(evaluationScore=score), pass_score=pass_score)
    assert (tag is None) is passed
    assert kind == (None if passed else "low_score")


def test_a_low_score_failure_names_score_and_pass_score_and_keeps_the_reason(schema):
    xml, _ = export([item(evaluationScore=42.0, evaluationReason="misses step 2")], pass_score=60)
    (case,) = cases(check(schema, xml))
    (failure,) = case.result
    assert isinstance(failure, Failure)
    assert failure.message == "score 42 < pass score 60: misses step 2"
    assert failure.text == "misses step 2"
    assert "score: 42 (pass score 60)" in case.system_out


@pytest.mark.parametrize("bad", [-1, 100.5, math.nan, math.inf, "50", None, True])
def test_a_bad_pass_score_is_refused(bad):
    with pytest.raises(ValueError, match="pass score must be a number from 0 to 100"):
        export([item()], pass_score=bad)


def test_an_unknown_status_raises_before_anything_is_written():
    out = io.StringIO()
    with pytest.raises(ValueError, match="unknown status 'DONE'"):
        write_junit([item("t1"), item("t2", status="DONE")], out, run_id="r")
    assert out.getvalue() == ""


def test_time_is_answer_plus_judge_in_seconds(schema):
    xml, _ = export(
        [
            item("t1", timeTakenMs=1200.0, judgeMs=300.4),
            item("t2", status=FAILED, timeTakenMs=2000.0, judgeMs=None),
            item("t3", status=NEW),
        ]
    )
    check(schema, xml)
    root = ET.fromstring(xml)
    assert [c.get("time") for c in root.iter("testcase")] == ["1.500", "2.000", "0.000"]
    assert root.find("testsuite").get("time") == "3.500"


def test_hostile_text_stays_valid_xml(schema, tmp_path):
    one = item(
        HOSTILE,
        provider=HOSTILE,
        model="m<1>",
        evaluationScore=1.0,
        evaluationReason=HOSTILE,
        answer=HOSTILE,
        category=HOSTILE,
    )
    failed = item("t2", status=FAILED, errorStage="answer", errorMsg=HOSTILE)
    path = tmp_path / "junit.xml"
    # A real UTF-8 file: a lone surrogate left in would raise UnicodeEncodeError here.
    with path.open("w", encoding="utf-8") as out:
        write_junit([one, failed], out, run_id=HOSTILE, suite_name=HOSTILE)

    schema.validate(str(path))
    JUnitXml.fromfile(str(path))
    root = ET.parse(path).getroot()
    # What XML 1.0 cannot carry is U+FFFD; everything else comes back exactly (CR included).
    expected = (
        HOSTILE.replace("\x00", "\ufffd")
        .replace("\x1b", "\ufffd")
        .replace("\ud800", "\ufffd")
        .replace("\uffff", "\ufffd")
    )
    case = root.find("testsuite/testcase")
    assert case.get("name") == expected
    assert case.get("classname") == "llmbench." + re.sub(r"[.\s]+", "_", expected) + ".m<1>"
    assert root.get("name") == expected
    assert root.find("testsuite").get("name") == expected + "/m<1>"
    failure = case.find("failure")
    assert failure.get("message") == f"score 1 < pass score 50: {expected}"
    assert failure.text == expected
    assert case.find("system-out").text.endswith("answer:\n" + expected)
    assert f"category: {expected}" in case.find("system-out").text
    other = root.findall("testsuite/testcase")[1]
    assert other.find("failure").get("message") == "answer: " + expected
    props = {p.get("name"): p.get("value") for p in root.iter("property")}
    assert props["run_id"] == expected


def test_a_1_mb_answer_is_cut_to_a_bounded_excerpt(schema):
    answer = ("<&\"'\x00 " * 200_000)[:1_000_000]
    reason = "r" * 50_000
    xml, _ = export([item(answer=answer, evaluationScore=5.0, evaluationReason=reason)])
    check(schema, xml)
    assert len(xml) < 40_000
    case = ET.fromstring(xml).find("testsuite/testcase")
    out = case.find("system-out").text
    assert f"answer (first {TEXT_CHARS} of 1000000 characters):" in out
    assert out.endswith(answer[:TEXT_CHARS].replace("\x00", "\ufffd"))
    failure = case.find("failure")
    assert len(failure.text) == TEXT_CHARS and failure.text.endswith("…")
    assert len(failure.get("message")) <= 300


def test_an_empty_run_is_a_valid_empty_report(schema):
    xml, totals = export([])
    check(schema, xml)
    assert totals == {"tests": 0, "failures": 0, "errors": 0, "skipped": 0, "suites": 0}
    assert ET.fromstring(xml).attrib["tests"] == "0"


def test_timestamp_is_utc_without_a_zone(schema):
    start = dt.datetime(2025, 3, 4, 12, 30, 15, 999, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    xml, _ = export([item()], timestamp=start)
    check(schema, xml)
    assert ET.fromstring(xml).find("testsuite").get("timestamp") == "2025-03-04T10:30:15"
    xml, _ = export([item()], timestamp=dt.datetime(2025, 1, 2, 3, 4, 5))
    assert ET.fromstring(xml).find("testsuite").get("timestamp") == "2025-01-02T03:04:05"
    xml, _ = export([item()])
    assert "timestamp" not in ET.fromstring(xml).find("testsuite").attrib


def test_chunks_spools_on_disk_and_write_junit_give_the_same_bytes(schema):
    items = [
        item(f"t{n:04d}", model=f"m{n % 3}", evaluationScore=float(n % 101)) for n in range(600)
    ]
    xml, _ = export(iter(items))
    # A spool of 1000 characters rolls to disk after a few testcases: the same file results.
    small = "".join(junit_chunks(iter(items), run_id="run-1", spool_chars=1000))
    assert small == xml
    parsed = check(schema, xml)
    assert [s.tests for s in parsed] == [200, 200, 200]


def test_outcome_is_usable_alone():
    assert outcome(item(evaluationScore=50.0)) == (None, None, None)
    assert outcome(item(evaluationScore=49.0), pass_score=40) == (None, None, None)
    assert outcome(item(status=NEW))[0] == "skipped"


@pytest.mark.slow
def test_100_000_items_stream_in_flat_memory(schema):
    class Counter:
        """A file that keeps only the size of what it is given."""

        size = 0

        def write(self, text):
            self.size += len(text)

    def items():
        for n in range(100_000):
            yield item(
                f"t{n:06d}",
                model=f"m{n % 4}",
                evaluationScore=float(n % 101),
                answer="x" * 300,
                evaluationReason="r" * 100,
            )

    out = Counter()
    tracemalloc.start()
    try:
        totals = write_junit(items(), out, run_id="big", spool_chars=200_000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert totals["tests"] == 100_000 and totals["suites"] == 4
    assert out.size > 50_000_000
    # Four spools of 200 000 characters and one item at a time, not 50 MB of XML.
    assert peak < 10_000_000


def test_run_items_reads_a_run_from_the_database(app, schema):
    run, (t1, t2) = make_run("junit-db", targets=[("local", "m1"), ("remote", "m2")])
    long_answer = "é" * (TEXT_CHARS + 500)
    add_item(run, t1, "a", score=90, judge_ms=120.0, answer=long_answer)
    add_item(run, t1, "b", score=0, auto_fail=True, evaluation_reason="unsafe")
    add_item(run, t2, "a", status=FAILED, error_stage="judge", error_msg="bad json")
    add_item(run, t2, "b", status=NEW)

    rows = list(run_items(run))
    assert [(r["targetProviderName"], r["taskId"], r["status"]) for r in rows] == [
        ("local", "a", COMPLETED),
        ("local", "b", COMPLETED),
        ("remote", "a", FAILED),
        ("remote", "b", NEW),
    ]
    assert len(rows[0]["answer"]) == TEXT_CHARS + 1
    assert rows[0]["answerChars"] == TEXT_CHARS + 500
    assert rows[1]["autoFail"] is True and rows[0]["autoFail"] is None

    xml, totals = export(run_items(run), run_id=run.run_id, timestamp=run.started_at)
    parsed = check(schema, xml)
    assert totals == {"tests": 4, "failures": 2, "errors": 0, "skipped": 1, "suites": 2}
    first, second, third, fourth = cases(parsed)
    assert first.is_passed
    assert f"first {TEXT_CHARS} of {TEXT_CHARS + 500} characters" in first.system_out
    assert float(first.time) == pytest.approx(1.12)
    assert isinstance(second.result[0], Failure) and second.result[0].type == "auto_fail"
    assert third.result[0].message == "judge: bad json"
    assert isinstance(fourth.result[0], Skipped)


def test_a_classname_is_llmbench_provider_model_with_dots_and_spaces_replaced(schema):
    out = io.StringIO()
    one = item(provider="my lab", model="qwen2.5 7b", targetLabel="qwen2.5 7b · temperature 0.2")
    write_junit([one], out, run_id="r")
    case = ET.fromstring(out.getvalue()).find("testsuite/testcase")
    assert case.get("classname") == "llmbench.my_lab.qwen2_5_7b"


def test_two_profiles_of_one_model_are_told_apart_by_their_suite_and_its_target_property():
    out = io.StringIO()
    fast = item(model="m1", targetLabel="m1 · temperature 0")
    warm = item(model="m1", targetLabel="m1 · temperature 1")
    write_junit([fast, warm], out, run_id="r")
    suites = ET.fromstring(out.getvalue()).findall("testsuite")
    targets = [s.find("properties/property[@name='target']").get("value") for s in suites]
    assert targets == ["local/m1 · temperature 0", "local/m1 · temperature 1"]
