"""Every export carries the checks: each check's result beside the judge's, the auto-fail reason,
the tool calls an answer made, the checks' pass rate and the composite score per target; a run
without a judge reads "— (checks only)" where the judge would be."""

import csv
import io
import json

import pytest
from bs4 import BeautifulSoup

from app.catalog.providers import create_provider
from app.db.models import Item
from app.db.models import Run
from app.exports import files
from app.exports.csvfiles import SERVICE_DETAILED_COLUMNS
from app.exports.csvfiles import csv_detailed
from app.exports.item_results import item_records
from app.exports.item_results import results_csv
from app.exports.markdown import markdown
from app.exports.report import report_html
from app.exports.summary import summary_json
from app.results.check_figures import target_check_figures
from tests.engine_helpers import FakeClock
from tests.engine_helpers import drive
from tests.engine_helpers import make_provider
from tests.engine_helpers import make_tasks
from tests.engine_helpers import start_run
from tests.factories import add_item
from tests.factories import make_run

PASSED = {
    "type": "contains",
    "score": 100.0,
    "passed": True,
    "reason": 'contains "4"',
    "gate": False,
}
FAILED = {
    "type": "regex",
    "score": 0.0,
    "passed": False,
    "reason": 'regex "\\b42\\b" not found',
    "gate": True,
}
CALLS = [{"name": "get_weather", "arguments": {"city": "Oslo", "days": 2}}]


def checked(run, target, task_key="t1", results=(PASSED, FAILED), **fields):
    """An item the checks scored (and the judge, whose own score is judge_scores[0])."""
    values = {
        "check_results": list(results),
        "check_score": 50.0,
        "judge_scores": [70.0],
        "evaluation_reason": "the judge's reason",
    }
    values.update(fields)
    return add_item(run, target, task_key, score=60.0, **values)


@pytest.fixture
def run(app):
    run, (target,) = make_run("checked")
    checked(run, target, auto_fail_reason="regex: regex not found", tool_calls=CALLS)
    checked(run, target, "t2", results=(PASSED,), check_score=100.0)
    return run


@pytest.fixture
def judge_free(app):
    run, (target,) = make_run("no-judge", judge_provider_name="", judge_model="")
    checked(run, target, judge_scores=None)
    return run


def detailed_rows(run):
    return list(csv.DictReader(io.StringIO("".join(csv_detailed(run)))))


def soup(html):
    return BeautifulSoup(html, "html.parser")


def test_detailed_csv_has_each_check_result_after_the_service_columns(run):
    header = next(csv.reader(io.StringIO("".join(csv_detailed(run)))))
    assert tuple(header[: len(SERVICE_DETAILED_COLUMNS)]) == SERVICE_DETAILED_COLUMNS
    at = len(SERVICE_DETAILED_COLUMNS)  # the stream's timing columns follow these
    assert header[at : at + 4] == ["check_score", "checks", "auto_fail_reason", "tool_calls"]
    row = detailed_rows(run)[0]
    assert row["check_score"] == "50"
    assert row["checks"] == 'contains ✓ contains "4" · regex (gate) ✗ regex "\\b42\\b" not found'


def test_detailed_csv_has_the_auto_fail_reason_and_the_tool_calls_as_compact_json(run):
    row = detailed_rows(run)[0]
    assert row["auto_fail_reason"] == "regex: regex not found"
    assert row["tool_calls"] == '[{"arguments":{"city":"Oslo","days":2},"name":"get_weather"}]'
    assert json.loads(row["tool_calls"]) == CALLS


def test_detailed_csv_leaves_the_check_cells_empty_for_an_answer_without_checks(app):
    run, (target,) = make_run()
    add_item(run, target, "plain", score=80)
    row = detailed_rows(run)[0]
    assert [row[k] for k in ("check_score", "checks", "auto_fail_reason", "tool_calls")] == [
        "",
        "",
        "",
        "",
    ]


def test_detailed_csv_neutralises_a_formula_in_an_auto_fail_reason(app):
    run, (target,) = make_run()
    checked(run, target, auto_fail_reason='=HYPERLINK("http://evil","x")')
    assert detailed_rows(run)[0]["auto_fail_reason"] == '\'=HYPERLINK("http://evil","x")'


def test_detailed_csv_neutralises_a_formula_in_a_check_type_it_does_not_know(app):
    # Only known types are stored, but a hand-edited row must not make the cell a formula.
    run, (target,) = make_run()
    checked(run, target, results=({**FAILED, "type": "=1+1", "gate": False},))
    assert detailed_rows(run)[0]["checks"].startswith("'=1+1 ✗")


def test_results_jsonl_carries_the_tool_calls(run):
    record = next(iter(item_records(run)))
    assert record["toolCalls"] == CALLS and record["checkResults"] == [PASSED, FAILED]


def test_results_csv_carries_the_tool_calls_as_json_text(run):
    row = next(csv.DictReader(io.StringIO("".join(results_csv(run)))))
    assert json.loads(row["tool_calls"]) == CALLS


def test_detailed_csv_has_the_judges_own_score_beside_the_check_score_in_its_last_column(run):
    header = next(csv.reader(io.StringIO("".join(csv_detailed(run)))))
    assert header[-1] == "judge_score"
    row = detailed_rows(run)[0]
    assert (row["score"], row["check_score"], row["judge_score"]) == ("60", "50", "70")


def test_results_jsonl_and_csv_have_the_judges_own_score_beside_the_check_score(run):
    record = next(iter(item_records(run)))
    assert (record["score"], record["checkScore"], record["judgeScore"]) == (60.0, 50.0, 70.0)
    row = next(csv.DictReader(io.StringIO("".join(results_csv(run)))))
    assert (row["check_score"], row["judge_score"]) == ("50.0", "70.0")


def test_an_item_of_a_run_without_a_judge_has_no_judge_score_in_the_files(judge_free):
    assert detailed_rows(judge_free)[0]["judge_score"] == ""
    assert next(iter(item_records(judge_free)))["judgeScore"] is None


def test_report_html_shows_each_check_result_beside_the_judge_score(run):
    page = soup(report_html(run))
    header = [th.get_text(strip=True) for th in page.select("#detail-h ~ div thead th")]
    assert header[-4:] == ["Score", "Judge", "Checks", "Reason"]
    cells = [
        td.get_text(" ", strip=True) for td in page.select("#detail-h ~ div tbody tr")[0]("td")
    ]
    score, judge, checks = cells[-4:-1]
    assert (score, judge) == ("60.0", "70.0")
    assert checks.startswith("50.0") and "✓ contains" in checks
    assert '✗ regex (gate) : regex "\\b42\\b" not found' in checks


def test_report_html_shows_the_auto_fail_reason_and_the_tool_calls(run):
    row = soup(report_html(run)).select("#detail-h ~ div tbody tr")[0]
    assert row.select_one(".rs-auto-fail").get_text(strip=True) == (
        "Auto-fail: regex: regex not found"
    )
    calls = row.select_one(".rs-tool-calls pre").get_text()
    assert json.loads(calls) == CALLS


def test_report_html_shows_checks_only_when_the_run_had_no_judge(judge_free):
    page = soup(report_html(judge_free))
    judge_cell = page.select("#detail-h ~ div tbody tr")[0]("td")[-3]
    assert judge_cell.get_text(strip=True) == "— (checks only)"
    assert "— (checks only)" in page.select_one("dl.meta").get_text()


def test_report_html_shows_the_composite_score_and_its_formula_per_target(run):
    row = soup(report_html(run)).select("#composite-scores tbody tr")[0]
    # The target names the row (a row header); the cells follow it.
    cells = [td.get_text(" ", strip=True) for td in row("td")]
    # quality 60 (both answers) × 0.70 + 15 (1 s median) + 15 (no latency target)
    assert cells[0] == "72.0"
    assert cells[2].startswith("composite = 0.70 × quality 60.0") and cells[2].endswith("= 72.0")


def test_report_html_shows_the_checks_pass_rate_per_target(run):
    row = soup(report_html(run)).select("#composite-scores tbody tr")[0]
    assert row("td")[1].get_text(strip=True) == "50 % (1 of 2 answers; 2 of 3 checks)"


def test_markdown_has_composite_score_per_target(run):
    text = "".join(markdown(run))
    assert "## Composite score per model" in text
    assert "| local | m1 | 72.0 | 50 % (1 of 2 answers; 2 of 3 checks) | composite = " in text


def test_markdown_has_each_check_result_beside_the_judge_score(run):
    text = "".join(markdown(run))
    assert (
        '| 60 | 70 | 50: contains ✓ contains "4" · regex (gate) ✗ regex "\\b42\\b" not found '
        "| the judge's reason<br>Auto-fail: regex: regex not found |"
    ) in text


def test_markdown_of_a_run_without_a_judge_says_checks_only_in_the_judge_column(judge_free):
    text = "".join(markdown(judge_free))
    assert "| 60 | — (checks only) | 50: contains ✓" in text


def test_checks_pass_rate_counts_the_answers_that_passed_every_check(run):
    (figures,) = target_check_figures(run).values()
    assert (figures.answers, figures.answers_passed) == (2, 1)
    assert (figures.checks, figures.checks_passed) == (3, 2)
    assert figures.pass_rate == 0.5


def test_a_secret_in_tool_calls_is_masked_in_the_web_exports(client, app):
    create_provider(
        {
            "name": "local",
            "type": "OPENAI",
            "baseUrl": "http://127.0.0.1:9",
            "headers": [{"key": "Authorization", "value": "Bearer sk-tool-77", "isSecret": True}],
        }
    )
    run, (target,) = make_run("leaky")
    calls = [{"name": "login", "arguments": {"token": "Bearer sk-tool-77"}}]
    checked(run, target, tool_calls=calls)
    for path in ("results.csv", "report.html"):
        response = client.get(f"/runs/leaky/{path}")
        assert response.status_code == 200
        assert "sk-tool-77" not in response.get_data(as_text=True)


@pytest.fixture
def finished_without_judge(app, fake):
    """A judge-free run with a check, driven to its end on the fake server."""
    p = make_provider(fake)
    checks = [{"type": "icontains", "value": "zebra-never"}]
    start_run(
        p,
        [(p, "m1")],
        make_tasks(1, checks=checks),
        runId="free",
        judgeProviderId=None,
        judge_model=None,
    )
    Item.update(checks=checks).execute()
    assert drive(dict(app.config), FakeClock())["state"] == "finished"
    return Run.get()


def test_a_judge_free_run_with_checks_has_its_check_results_in_every_export(
    finished_without_judge,
):
    reason = '"zebra-never" not found'
    for kind in ("detailed_csv", "markdown", "report_html"):
        chunks, _name, _mime = files.download(finished_without_judge, kind)
        text = "".join(chunks)
        assert "icontains" in text and "zebra-never" in text, kind
    record = next(iter(item_records(finished_without_judge)))
    assert record["checkResults"][0]["passed"] is False
    assert "zebra-never" in record["checkResults"][0]["reason"], reason


def test_report_csv_has_the_composite_score_after_the_report_columns(run):
    chunks, _name, _mime = files.download(run, "report_csv")
    rows = list(csv.reader(io.StringIO("".join(chunks))))
    assert rows[0][-2:] == ["avg_score", "composite_score"] and rows[1][-1] == "72"


def test_the_report_page_shows_the_composite_score_per_target(client, run):
    page = soup(client.get("/runs/checked/report").text)
    target = Run.get(Run.run_id == "checked").targets[0]
    kpi = page.select_one(f"#kpi-composite-{target.id}")
    assert kpi.select_one("summary").get_text(strip=True) == "72.0"
    assert "composite = 0.70 × quality 60.0" in kpi.select_one(".composite__formula").text
    assert "Composite score" in page.select_one("#report-table thead").text


def test_summary_json_has_the_checks_pass_rate_per_model(run):
    (model,) = summary_json(run)["models"]
    assert model["checks"] == {
        "answers": 2,
        "answersPassed": 1,
        "checks": 3,
        "checksPassed": 2,
        "passRate": 0.5,
    }
