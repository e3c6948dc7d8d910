"""A run's whole-run files with a row per item (the web's results.csv and results.md, the CLI's
results.csv) are byte for byte the files kept in tests/data/row_files/, written by the code
before their per-row shortcuts: every kind of row (answered, failed at each stage, judged,
unjudged, checked with a gate, auto-failed, repeated, reused, tool calls, stream timing) and of
text (lines, CRLF, unicode, commas, quotes, pipes, markup, formulas, a secret), in a judged run
and in a run without a judge."""

from pathlib import Path

import pytest

from app import latency
from app.catalog.providers import create_provider
from app.db.models import FAILED
from app.db.models import JUDGING
from app.exports.item_results import results_csv
from app.schedules.known_secrets import mask_chunks
from tests.factories import add_item
from tests.factories import make_run

EXPECTED = Path(__file__).parent / "data" / "row_files"
SECRET = "sk-fastrows-0123456789abcdef"
CHECKS = [
    {"type": "contains", "score": 1, "passed": True, "reason": 'contains "4"', "gate": False},
    {"type": "regex", "score": 0, "passed": False, "reason": None, "gate": True},
]
TEXTS = (
    "plain",
    "two\nlines",
    "crlf\r\nend",
    'comma, and "quotes"',
    "ünïcødé ✓ — 中文",
    "pipe | and <b>markup</b> & more",
    '=HYPERLINK("http://x")',
    "-5 minus",
    "@at",
    "+plus",
    "'=quoted formula",
    "\ttab first",
    "  padded  ",
    f"the key is {SECRET} here",
    "",
)


def _items(run, target, judged):
    add_item(
        run,
        target,
        "a-timed",
        score=85.0,
        answer="The answer is 4.",
        time_taken_ms=1234.5678,
        ttft_ms=100.25,
        first_answer_ms=150.0,
        last_token_ms=1200.125,
        sent_ts=1735787045.2506,
        chunks=49,
        reasoning_tokens=12,
        itl_hist=latency.pack(latency.histogram([20.0] * 40 + [30.0] * 9 + [250.0])),
        queue_ms=35.5,
        prompt_tokens=21,
        tokens_generated=50,
        tokens_per_second=40.4999,
        tps_source="stream.timing",
        cost_usd=0.000125,
        judge_cost_usd=0.00002,
        rubric_scores={"accuracy": 4, "clarity": 3.5},
        auto_fail=False,
    )
    add_item(
        run,
        target,
        "b-checked",
        score=62.25,
        check_score=50.0,
        check_results=CHECKS,
        judge_scores=[74.5, 70, 80],
        answer="4",
        tool_calls=[{"name": "calc", "arguments": {"x": "2+2", "é": [1, 2]}}],
        tokens_estimated=True,
        tps_source="stream.estimate",
    )
    add_item(
        run,
        target,
        "c-autofail",
        score=0.0,
        check_score=0.0,
        check_results=[{"type": "json", "passed": False, "reason": "not JSON", "gate": True}],
        auto_fail=True,
        auto_fail_reason="gate json failed",
        evaluation_reason="looked fine\nbut",
        answer="{not json",
    )
    add_item(
        run,
        target,
        "d-answer-failed",
        status=FAILED,
        error_stage="answer",
        error_msg="connection refused",
        question="Never answered",
    )
    add_item(
        run,
        target,
        "e-judge-failed",
        status=FAILED,
        error_stage="judge",
        error_msg="judge: bad json",
        answer="red, green",
        time_taken_ms=900.0,
    )
    add_item(run, target, "f-waiting", status=JUDGING, answer="waits for its judge")
    add_item(run, target, "g-new", status="NEW", question="  Not asked yet  ")
    for repeat in range(2):
        add_item(
            run,
            target,
            "h-repeat",
            repeat=repeat,
            score=50.0 + repeat * 0.005,
            answer=f"repeat {repeat}",
            time_taken_ms=-0.001 if repeat else 1e9 + 0.5,
            tokens_per_second=1e-5,
        )
    add_item(
        run,
        target,
        "i-reused",
        score=99.999,
        answer="reused answer",
        answer_reused_from=1,
        judgement_reused_from=2 if judged else None,
        time_taken_ms=12.0,
        tokens_generated=1,
    )
    for n, text in enumerate(TEXTS):
        add_item(
            run,
            target,
            f"t{n:02d}",
            score=float(n * 7 % 101),
            question=f"{text}?\n{text}",
            category=text[:20],
            answer=text,
            evaluation_reason=text,
            error_msg=text or None,
            error_stage="judge" if text else None,
            auto_fail_reason=text or None,
        )


@pytest.fixture
def runs(app):
    create_provider(
        {
            "name": "keyed",
            "type": "OPENAI",
            "baseUrl": "http://127.0.0.1:9/v1",
            "headers": [{"key": "X-Api-Key", "value": SECRET, "isSecret": True}],
        }
    )
    judged, (t1, t2) = make_run(
        "judged", targets=[("local", "m1", {"temperature": 0.2}), ("remote, inc", "m|2")]
    )
    for target in (t1, t2):
        _items(judged, target, judged=True)
    checks_only, (t3,) = make_run("checks-only", judge_provider_name="", judge_model="")
    _items(checks_only, t3, judged=False)
    return judged, checks_only


def _files(client, run):
    """{file name: its text} as a person gets each file of `run`."""
    rid = run.run_id
    return {
        f"{rid}.csv": client.get(f"/runs/{rid}/results.csv").get_data(as_text=True),
        f"{rid}.md": client.get(f"/runs/{rid}/results.md").get_data(as_text=True),
        f"{rid}-cli-results.csv": "".join(mask_chunks(results_csv(run))),
    }


@pytest.mark.parametrize("which", [0, 1], ids=["judged", "checks-only"])
def test_row_files_are_the_kept_files_byte_for_byte(client, runs, which):
    for name, text in _files(client, runs[which]).items():
        assert SECRET not in text
        expected = (EXPECTED / name).read_bytes().decode()
        assert text == expected, name
