"""What checks found, shown and exported: the item detail lists each check's result beside the
judge's score and the auto-fail reason; results.jsonl and results.csv carry checkScore,
checkResults, autoFailReason and toolCalls after their old keys; a run without a judge shows "checks
only" where a judge would be."""

import csv
import io
import json

import pytest
from bs4 import BeautifulSoup

from app.db.models import Item
from app.db.models import Run
from app.exports.item_results import CSV_COLUMNS
from app.exports.item_results import item_records
from app.exports.item_results import results_csv
from app.exports.markdown import markdown
from tests.engine_helpers import FakeClock
from tests.engine_helpers import drive
from tests.engine_helpers import make_provider
from tests.engine_helpers import make_tasks
from tests.engine_helpers import start_run

CHECKS = [
    {"type": "icontains", "value": "answer"},
    {"type": "icontains", "value": "banana", "gate": True},
]
HX = {"HX-Request": "true"}


def soup(response):
    return BeautifulSoup(response.text, "html.parser")


@pytest.fixture
def finished(app, fake):
    """A finished run (with its judge) whose one item failed a gate check."""
    p = make_provider(fake)
    start_run(p, [(p, "m1")], make_tasks(1, checks=CHECKS), runId="r1")
    Item.update(checks=CHECKS).execute()
    assert drive(dict(app.config), FakeClock())["state"] == "finished"
    return Item.get()


@pytest.fixture
def checks_only(app, fake):
    """A finished run without a judge."""
    p = make_provider(fake)
    checks = CHECKS[:1]
    coll = make_tasks(1, checks=checks)
    start_run(p, [(p, "m1")], coll, runId="r2", judgeProviderId=None, judge_model=None)
    Item.update(checks=checks).execute()
    assert drive(dict(app.config), FakeClock())["state"] == "finished"
    return Run.get()


def test_the_item_detail_lists_each_checks_result_and_the_auto_fail_reason(client, finished):
    page = BeautifulSoup(
        client.get(f"/runs/r1/items/{finished.id}", headers=HX).text, "html.parser"
    )
    rows = page.select(f"#item-checks-{finished.id} tbody tr")
    cells = [[td.get_text(" ", strip=True) for td in row.select("td")] for row in rows]
    assert [c[:3] for c in cells] == [
        ["icontains", "100.0", "pass"],
        ["icontains (gate)", "0.0", "fail"],
    ]
    assert "banana" in cells[1][3]
    reason = page.select_one(f"#item-auto-fail-{finished.id}").get_text(" ", strip=True)
    assert reason.startswith("Auto-fail: icontains:") and "banana" in reason


def test_the_item_detail_shows_the_checks_score_beside_the_judges(client, app, fake):
    p = make_provider(fake)
    start_run(p, [(p, "m1")], make_tasks(1, checks=CHECKS[:1]), runId="r3")
    Item.update(checks=CHECKS[:1]).execute()
    drive(dict(app.config), FakeClock())
    item = Item.get()
    page = soup(client.get(f"/runs/r3/items/{item.id}", headers=HX))
    parts = page.select_one(f"#item-part-scores-{item.id}").get_text(" ", strip=True)
    assert parts == "Checks 100.0 · judge 80.0"


def test_results_jsonl_carries_the_checks_after_the_old_keys(finished):
    (record,) = item_records(Run.get())
    assert list(record)[-5:] == [
        "checkScore",
        "checkResults",
        "autoFailReason",
        "toolCalls",
        "judgeScore",
    ]
    assert record["checkScore"] == 0.0 and record["checkResults"] == finished.check_results
    assert record["autoFailReason"] == finished.auto_fail_reason


def test_results_csv_carries_the_checks_as_json_text_in_its_last_columns(finished):
    rows = list(csv.reader(io.StringIO("".join(results_csv(Run.get())))))
    assert tuple(rows[0]) == CSV_COLUMNS
    at = CSV_COLUMNS.index("check_score")  # the stream's timing columns follow these
    assert CSV_COLUMNS[at : at + 4] == (
        "check_score",
        "check_results",
        "auto_fail_reason",
        "tool_calls",
    )
    score, results, reason, _calls = rows[1][at : at + 4]
    assert score == "0.0" and json.loads(results) == finished.check_results
    assert reason == finished.auto_fail_reason


@pytest.mark.parametrize("path", ["/runs/r2", "/runs/r2/results", "/runs/"])
def test_a_run_without_a_judge_shows_checks_only_where_the_judge_would_be(
    client, checks_only, path
):
    response = client.get(path)
    assert response.status_code == 200 and "— (checks only)" in response.text


def test_a_run_without_a_judge_has_no_re_judge_button(client, checks_only):
    item = Item.get()
    page = client.get(f"/runs/r2/items/{item.id}", headers=HX).text
    assert f"rejudge-{item.id}" not in page and "no judge (checks only)" in page


def test_an_item_no_judge_saw_shows_no_judge_time_nor_raw_judge_output(client, checks_only):
    item = Item.get()
    page = client.get(f"/runs/r2/items/{item.id}", headers=HX).text
    assert "Judge time" not in page and "Raw judge output" not in page


def test_a_judged_item_shows_its_judge_time_and_raw_judge_output(client, app, fake):
    p = make_provider(fake)
    start_run(p, [(p, "m1")], make_tasks(1), runId="r4")
    drive(dict(app.config), FakeClock())
    page = client.get(f"/runs/r4/items/{Item.get().id}", headers=HX).text
    assert "Judge time" in page and "Raw judge output" in page


def test_the_markdown_export_of_a_run_without_a_judge_says_checks_only(checks_only):
    assert "- Judge: — (checks only)\n" in "".join(markdown(checks_only))


def test_a_run_without_a_judge_offers_no_judge_check(client, checks_only):
    assert 'id="judge-check"' not in client.get("/runs/r2/results").text
    assert client.post("/api/runs/r2/judge-check").status_code == 409


def test_the_api_item_carries_each_checks_result_beside_the_judges_score(client, finished):
    body = client.get(f"/api/runs/r1/items/{finished.id}").json
    assert [r["type"] for r in body["checkResults"]] == ["icontains", "icontains"]
    assert body["checkResults"][1]["passed"] is False and body["checkResults"][1]["reason"]
    assert body["checkScore"] == finished.check_score
    assert body["autoFailReason"] == finished.auto_fail_reason
    assert "banana" in body["autoFailReason"]
    assert body["checks"] == CHECKS and body["toolCalls"] is None


def test_the_api_item_list_carries_the_check_score(client, checks_only):
    (item,) = client.get("/api/runs/r2/items").json["items"]
    assert item["checkScore"] == item["evaluationScore"] and item["judgeScores"] is None
