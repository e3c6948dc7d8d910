"""Exports: golden CSV (CRLF, RFC 4180) and Markdown, summary.json keys, self-contained report."""

import csv
import io
import json
import re

import pytest
from bs4 import BeautifulSoup

from app import latency
from app.db.models import FAILED
from app.exports import files
from app.exports.csvfiles import AVERAGE_COLUMNS
from app.exports.csvfiles import DETAILED_COLUMNS
from app.exports.csvfiles import csv_average
from app.exports.csvfiles import csv_detailed
from app.exports.markdown import markdown
from app.exports.report import report_html
from app.exports.report import report_html_chunks
from app.exports.summary import summary_json
from tests.factories import add_item
from tests.factories import bulk_items
from tests.factories import make_run


@pytest.fixture
def golden_run(app):
    run, (t1, t2) = make_run(
        "golden", targets=[("local", "m1", {"temperature": 0.2}), ("remote, inc", "m|2")]
    )
    add_item(
        run,
        t1,
        "t1",
        score=80,
        question="What is 2+2?\nExplain.",
        evaluation_reason='has, comma "quoted"\nsecond line',
        answer="ünïcødé ✓ | pipe",
        time_taken_ms=1234.5,
        tokens_generated=50,
        tokens_per_second=40.5,
        first_answer_ms=150.0,
        itl_hist=latency.pack(latency.histogram([20.0] * 40 + [30.0] * 9)),
        queue_ms=35.5,
        sent_ts=1735787045.25,
    )
    add_item(
        run,
        t1,
        "t2",
        status=FAILED,
        error_stage="judge",
        error_msg="bad json",
        question="Name <three> colours",
        time_taken_ms=900.0,
        answer="red",
    )
    add_item(
        run,
        t2,
        "t1",
        score=72.5,
        question="What is 2+2?\nExplain.",
        answer="4",
        evaluation_reason="right",
    )
    return run


AVERAGE_GOLDEN = (
    "provider_name,model_name,avg_time_per_task_ms,avg_tokens_per_second,avg_score,tasks_count,"
    "composite_score\r\n"
    "local,m1 · temperature 0.2,1067.25,40.5,80,2,86\r\n"
    '"remote, inc",m|2,1000,50,72.5,1,80.8\r\n'
)

DETAILED_GOLDEN = (
    "provider_name,model_name,task_id,task_name,task_status,spent_time_ms,tokens_generated,"
    "tokens_per_second,score,judge_reason,llm_response_text,error_msg,"
    "check_score,checks,auto_fail_reason,tool_calls,"
    "first_answer_ms,itl_p50_ms,itl_p90_ms,tpot_ms,queue_ms,sent_at,judge_score\r\n"
    'local,m1 · temperature 0.2,t1,"What is 2+2?\nExplain.",COMPLETED,1234.5,50,40.5,80,'
    '"has, comma ""quoted""\nsecond line",'
    "ünïcødé ✓ | pipe,,,,,,150,20,30,23.15,35.5,2025-01-02T03:04:05.250Z,80\r\n"
    "local,m1 · temperature 0.2,t2,Name <three> colours,FAILED,900,,,,,red,judge: bad json,,,,"
    ",,,,,,,\r\n"
    '"remote, inc",m|2,t1,"What is 2+2?\nExplain.",COMPLETED,1000,50,50,72.5,right,4,,,,,'
    ",,,,18.37,,,72.5\r\n"
)

MARKDOWN_GOLDEN = """# Run golden

- Judge: judgeprov / judge-1
- State: finished
- Created: 2025-01-02T03:04:05.000Z
- Finished: 2025-01-02T03:09:05.000Z
- Dataset hash: `dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd`

## Average performance per model

| Provider | Model | Avg time (ms) | Avg TTFT (ms) | Avg tokens/s | Avg score | 95 % CI | Completed | Failed (answer) | Failed (judge) | Tasks |
| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
| local | m1 · temperature 0.2 | 1067.2 | 100 | 40.5 | 80 | 80–80 | 1 | 0 | 1 | 2 |
| remote, inc | m\\|2 | 1000 | 100 | 50 | 72.5 | 72.5–72.5 | 1 | 0 | 0 | 1 |

## Composite score per model

| Provider | Model | Composite score | Checks passed | Formula |
| --- | --- | ---: | --- | --- |
| local | m1 · temperature 0.2 | 86.0 | — | composite = 0.70 × quality 80.0 + time 15.0 (median 1.2 s) + on-target 15.0 (no latency target) = 86.0 |
| remote, inc | m\\|2 | 80.8 | — | composite = 0.70 × quality 72.5 + time 15.0 (median 1.0 s) + on-target 15.0 (no latency target) = 80.8 |

composite = 0.70 × quality (average item score 0–100) + time (15 points when the median answer time is under 30 s, else 15 − 3 × minutes, at least 0) + on-target (15 × the share of answers within the run's latency target; 15 when it sets none).

## Detailed results

<details>
<summary>local/m1 · temperature 0.2 (2 tasks)</summary>

| Task | Category | Difficulty | Status | Time (ms) | Tokens | Tokens/s | Score | Judge | Checks | Reason | Error |
| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- | --- | --- |
| t1 | general | easy | COMPLETED | 1234.5 | 50 | 40.5 | 80 | 80 |  | has, comma "quoted"<br>second line |  |
| t2 | general | easy | FAILED (judge) | 900 |  |  |  |  |  |  | judge: bad json |

</details>

<details>
<summary>remote, inc/m\\|2 (1 task)</summary>

| Task | Category | Difficulty | Status | Time (ms) | Tokens | Tokens/s | Score | Judge | Checks | Reason | Error |
| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- | --- | --- |
| t1 | general | easy | COMPLETED | 1000 | 50 | 50 | 72.5 | 72.5 |  | right |  |

</details>
"""  # noqa: E501 - a golden file, kept verbatim


def test_no_export_shortens_a_question_or_an_answer(app):
    run, (target,) = make_run()
    question = (
        "Explain, step by step, "
        + "why the sky is blue " * 40
        + "?\nThen say why it is red at dusk."
    )
    answer = "Because of Rayleigh scattering. " * 200
    add_item(run, target, "long", score=50, question=question, answer=answer)
    (row,) = list(csv.DictReader(io.StringIO("".join(csv_detailed(run)))))
    assert row["task_name"] == question and row["llm_response_text"] == answer
    for text in (
        "".join(csv_detailed(run)),
        "".join(markdown(run)),
        json.dumps(summary_json(run)),
        report_html(run),
    ):
        assert "…" not in text


def test_average_csv_golden(golden_run):
    assert "".join(csv_average(golden_run)) == AVERAGE_GOLDEN


def test_detailed_csv_golden(golden_run):
    assert "".join(csv_detailed(golden_run)) == DETAILED_GOLDEN


def test_csv_headers_start_with_the_service_columns_in_order_then_ours():
    assert AVERAGE_COLUMNS == (
        "provider_name",
        "model_name",
        "avg_time_per_task_ms",
        "avg_tokens_per_second",
        "avg_score",
        "tasks_count",
        "composite_score",
    )
    assert DETAILED_COLUMNS == (
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
        "check_score",
        "checks",
        "auto_fail_reason",
        "tool_calls",
        "first_answer_ms",
        "itl_p50_ms",
        "itl_p90_ms",
        "tpot_ms",
        "queue_ms",
        "sent_at",
        "judge_score",
    )


def test_detailed_csv_streams_in_chunks(app):
    run, (target,) = make_run()
    bulk_items(run, target, 1200)
    chunks = list(csv_detailed(run))
    assert len(chunks) > 2
    assert all(chunk.count("\r\n") <= 500 for chunk in chunks)
    assert "".join(chunks).count("\r\n") == 1201


def test_markdown_golden(golden_run):
    assert "".join(markdown(golden_run)) == MARKDOWN_GOLDEN


def test_markdown_without_details_has_only_the_averages(golden_run):
    text = "".join(markdown(golden_run, detailed=False))
    assert "<details>" not in text and "| local | m1 · temperature 0.2 |" in text


def test_markdown_escapes_html_and_pipes_in_cells():
    from app.exports.markdown import cell

    assert cell("a|b <i>x</i>\r\ny") == "a\\|b &lt;i&gt;x&lt;/i&gt;<br>y"


SUMMARY_KEYS = {
    "schema",
    "runId",
    "name",
    "state",
    "stateLabel",
    "status",
    "phase",
    "source",
    "judge",
    "targets",
    "collections",
    "settings",
    "createdAt",
    "startedAt",
    "finishedAt",
    "datasetHash",
    "promptHash",
    "record",
    "failures",
    "totals",
    "models",
    "breakdowns",
    "contains",
    "reused",
    "systemPeaks",
    "ratings",
    "bestCompositeScore",
    "compositeSettings",
}


def test_summary_json_keys(golden_run):
    summary = summary_json(golden_run)
    assert set(summary) == SUMMARY_KEYS
    assert set(summary["breakdowns"]) == {"category", "difficulty"}
    json.dumps(summary)


def test_summary_json_says_it_holds_no_prompts_answers_or_secrets(golden_run):
    assert summary_json(golden_run)["contains"] == {
        "prompts": False,
        "answers": False,
        "judgeReasons": False,
        "secrets": False,
    }


def test_report_html_warns_that_it_contains_prompts_and_answers(golden_run):
    page = BeautifulSoup("".join(report_html_chunks(golden_run)), "html.parser")
    note = page.select_one(".rs-privacy")
    assert "Contains prompts and answers" in note.get_text()
    assert note.find_previous("h1") is not None and note.find_previous("section") is None


def test_summary_json_counts_failures_by_stage_and_totals(golden_run):
    summary = summary_json(golden_run)
    assert summary["failures"] == {"answer": 0, "judge": 1, "warmup": 0, "total": 1}
    assert summary["totals"]["items"] == 3
    assert summary["totals"]["avgScore"] == pytest.approx(76.25)
    assert summary["targets"][0]["params"] == {"temperature": 0.2}
    assert summary["datasetHash"] == "d" * 64 and summary["promptHash"] == "p" * 64


def test_report_html_is_self_contained(golden_run):
    html = report_html(golden_run)
    assert html.startswith("<!doctype html>")
    for forbidden in ('src="http', "src='http", "<link", "<script", "@import", "url(http"):
        assert forbidden not in html
    # The run's four charts, three speed charts and a request timeline per target (two).
    assert html.count("<svg") == 4 + 3 + 2


def test_report_html_escapes_judge_reasons_and_answers(app):
    run, (target,) = make_run()
    add_item(
        run,
        target,
        "x",
        score=10,
        evaluation_reason="<script>alert(1)</script>",
        answer="<img src=x onerror=alert(1)>",
    )
    html = report_html(run)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<img src=x" not in html


def test_report_html_target_names_wrap_after_a_slash_and_stay_escaped(app):
    run, (target,) = make_run(targets=(("lab", "org/<b>model"),))
    add_item(run, target, "x", score=50)
    page = BeautifulSoup(report_html(run), "html.parser")
    averages = page.find(id="avg-h").find_parent("section")
    row = averages.find("tbody").find("th")
    assert row.get_text() == "lab/org/<b>model"
    assert len(row.find_all("wbr")) == 2 and not row.find_all("b")
    speed = page.find(id="speed-table").find("tbody").find("th")
    assert speed.get_text() == "lab/org/<b>model" and len(speed.find_all("wbr")) == 2


def test_report_html_caps_the_detail_table_with_a_note(app):
    run, (target,) = make_run()
    bulk_items(run, target, 30)
    html = report_html(run, detail_limit=10)
    assert "Showing the first 10 of 30 items" in html
    detail = html[html.index('id="detail-h"') :]
    assert len(re.findall(r'<th scope="row">local/m1</th>', detail)) == 10


def test_exports_never_contain_provider_header_values(app):
    from app.crypto import encrypt
    from app.db.models import Provider
    from app.db.models import ProviderHeader

    provider = Provider.create(
        name="local",
        type="OPENAI",
        base_url="http://x",
        models_endpoint="/v1/models",
        inference_endpoint="/v1/chat/completions",
    )
    ProviderHeader.create(
        provider=provider,
        key="Authorization",
        value=encrypt("Bearer sk-secret-123", "aad"),
        is_secret=True,
    )
    run, (target,) = make_run()
    add_item(run, target, "x", score=50)
    for kind in files.KINDS:
        chunks, _name, _mime = files.download(run, kind)
        assert "sk-secret-123" not in "".join(chunks)


@pytest.mark.parametrize(
    "fmt, detailed, kind",
    [
        ("CSV", True, "detailed_csv"),
        ("csv", False, "average_csv"),
        ("MD", True, "markdown"),
        ("MD", False, "markdown_averages"),
        ("JSON", True, "summary_json"),
        ("HTML", False, "report_html"),
    ],
)
def test_kind_for_api_formats(fmt, detailed, kind):
    assert files.kind_for(fmt, detailed) == kind


def test_safe_name_keeps_filenames_plain():
    assert files.safe_name('a "b"/c') == "a_b_c"


def test_fast_csv_writer_matches_the_csv_module_byte_for_byte():
    import random

    from app.exports.csvfiles import _chunks
    from app.exports.csvfiles import _fast_chunks

    rng = random.Random(9)
    alphabet = ["a", "Z", " ", ",", '"', "\n", "\r", "\r\n", "é", "✓", "|", "'", ";", "\t", ""]
    rows = [
        tuple("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12))) for _ in range(12))
        for _ in range(3000)
    ]
    header = ("a,b", 'q"', "plain")
    assert "".join(_fast_chunks(header, rows)) == "".join(_chunks(header, rows))
