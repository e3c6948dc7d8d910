"""Outputs for CI: the JUnit file (read back by junitparser, checked against the Jenkins XSD),
results.jsonl / results.csv per item, summary.json's per-target figures, report.html's auto-fail
rate, and `resume` writing the same files."""

import csv
import json
from pathlib import Path

import pytest
import xmlschema
from junitparser import Failure
from junitparser import JUnitXml
from junitparser import Skipped

from app.db.models import Run
from app.exports.item_results import CSV_COLUMNS
from tests.cli_helpers import judge_scores
from tests.cli_helpers import make_cli
from tests.cli_helpers import rows
from tests.cli_helpers import write_config

XSD = Path(__file__).parent / "data" / "junit.xsd"


@pytest.fixture
def cli(tmp_path):
    return make_cli(tmp_path)


def _run_dir(out):
    (folder,) = [p for p in out.iterdir() if p.is_dir()]
    return folder


def test_junit_has_one_testcase_per_item_and_validates(cli, tmp_path, fake):
    fake.responder = judge_scores({"m1": 80, "m2": 30})
    junit = tmp_path / "reports" / "junit.xml"
    result = cli("run", "-c", write_config(tmp_path, fake), "--junit", junit)
    assert result.exit_code == 0, result.output
    xmlschema.XMLSchema(str(XSD)).validate(str(junit))
    suites = {suite.name: suite for suite in JUnitXml.fromfile(str(junit))}
    assert set(suites) == {"fake/m1", "fake/m2"}
    cases = {(c.classname, c.name): c for s in suites.values() for c in s}
    assert len(cases) == 8
    assert cases[("llmbench.fake.m1", "q00")].is_passed
    low = cases[("llmbench.fake.m2", "q00")].result
    assert isinstance(low[0], Failure) and low[0].type == "low_score"
    assert (suites["fake/m2"].failures, suites["fake/m1"].failures) == (4, 0)


def test_the_pass_score_decides_what_passes(cli, tmp_path, fake):
    fake.responder = judge_scores({"m1": 80, "m2": 80})
    junit = tmp_path / "junit.xml"
    cli("run", "-c", write_config(tmp_path, fake), "--junit", junit, "--pass-score", 90)
    xml = JUnitXml.fromfile(str(junit))
    assert sum(s.failures for s in xml) == 8


def test_failed_and_auto_failed_items_are_junit_failures(cli, tmp_path, fake):
    judge = judge_scores({}, auto_fail=("m1",))
    fake.responder = lambda call: {"status": 400} if call["body"]["model"] == "m2" else judge(call)
    junit = tmp_path / "junit.xml"
    cli("run", "-c", write_config(tmp_path, fake, max_attempts=1), "--junit", junit)
    kinds = {
        (c.classname, r.type)
        for s in JUnitXml.fromfile(str(junit))
        for c in s
        for r in c.result
        if isinstance(r, Failure)
    }
    assert kinds == {("llmbench.fake.m1", "auto_fail"), ("llmbench.fake.m2", "failed")}


def test_an_interrupted_run_still_writes_junit_with_skipped_items(cli, tmp_path, fake):
    fake.responder = lambda call: (
        None
        if call["body"].get("model") == "judge"
        else {"text": "paid", "usage": {"prompt_tokens": 1, "completion_tokens": 1, "cost": 1.0}}
    )
    junit = tmp_path / "junit.xml"
    path = write_config(tmp_path, fake, max_budget_usd=1.5)
    assert cli("run", "-c", path, "--allow-unpriced", "--junit", junit).exit_code == 3
    cases = [c for s in JUnitXml.fromfile(str(junit)) for c in s]
    skipped = [c for c in cases if any(isinstance(r, Skipped) for r in c.result)]
    assert skipped  # not answered yet: skipped, not failed


def test_out_dir_gets_results_jsonl_and_csv_per_item(cli, tmp_path, fake):
    fake.responder = judge_scores({"m1": 80, "m2": 60})
    out = tmp_path / "runs"
    assert cli("run", "-c", write_config(tmp_path, fake, out_dir=str(out))).exit_code == 0
    folder = _run_dir(out)
    records = [json.loads(line) for line in (folder / "results.jsonl").read_text().splitlines()]
    assert len(records) == 8
    first = records[0]
    assert {
        "taskId",
        "target",
        "answer",
        "score",
        "reason",
        "rubricScores",
        "autoFail",
        "metrics",
        "costUsd",
        "error",
    } <= set(first)
    assert (first["target"], first["taskId"], first["answer"], first["score"]) == (
        "fake/m1",
        "q00",
        "answer from m1",
        80.0,
    )
    assert first["metrics"]["timeMs"] > 0
    with (folder / "results.csv").open(newline="") as handle:
        table = list(csv.DictReader(handle))
    assert tuple(table[0]) == CSV_COLUMNS and len(table) == 8
    assert {r["score"] for r in table if r["target"] == "fake/m2"} == {"60.0"}


def test_summary_json_has_the_per_target_figures(cli, tmp_path, fake):
    fake.responder = judge_scores({"m2": 50}, auto_fail=("m1",))
    out = tmp_path / "runs"
    assert cli("run", "-c", write_config(tmp_path, fake, out_dir=str(out))).exit_code == 0
    summary = json.loads((_run_dir(out) / "summary.json").read_text())
    m1, m2 = summary["models"]
    assert (m1["autoFailRate"], m2["autoFailRate"]) == (100.0, 0.0)
    assert (m1["autoFailed"], m1["judged"], m1["judgeFailures"]) == (4, 4, 0)
    assert m2["latencyMs"]["p50"] > 0 and m2["latencyMs"]["p90"] >= m2["latencyMs"]["p50"]
    assert set(m2["ttftMs"]) == {"p50", "p90"}
    assert summary["totals"]["autoFailRate"] == 50.0


def test_summary_json_has_rubric_item_means(app):
    from app.exports.summary import summary_json
    from tests.factories import add_item
    from tests.factories import make_run

    run, (target,) = make_run("rub")
    add_item(run, target, "a", status="COMPLETED", evaluation_score=50, rubric_scores={"x": 1})
    add_item(run, target, "b", status="COMPLETED", evaluation_score=50, rubric_scores={"x": 0})
    (model,) = summary_json(run)["models"]
    assert model["rubricMeans"] == [{"id": "x", "mean": 0.5, "n": 2}]


def test_report_html_shows_the_auto_fail_rate(cli, tmp_path, fake):
    fake.responder = judge_scores({}, auto_fail=("m1",))
    out = tmp_path / "runs"
    assert cli("run", "-c", write_config(tmp_path, fake, out_dir=str(out))).exit_code == 0
    html = (_run_dir(out) / "report.html").read_text()
    assert "Auto-fail rate" in html and "100.0 % (4/4)" in html and "0.0 % (0/4)" in html


def test_resume_writes_the_reports_of_the_configs_out_dir(cli, tmp_path, fake):
    fake.responder = lambda call: (
        None
        if call["body"].get("model") == "judge"
        else {"text": "paid", "usage": {"prompt_tokens": 1, "completion_tokens": 1, "cost": 1.0}}
    )
    out = tmp_path / "runs"
    path = write_config(tmp_path, fake, max_budget_usd=1.5, out_dir=str(out))
    junit = tmp_path / "junit.xml"
    assert cli("run", "-c", path, "--allow-unpriced", "--junit", junit).exit_code == 3
    assert not out.exists()  # an interrupted run writes no reports
    junit.unlink()
    (run,) = rows(Run)
    result = cli("resume", run.run_id, "--max-budget-usd", 100)
    assert result.exit_code == 0, result.output
    folder = out / run.run_id
    names = {"summary.json", "report.html", "results.jsonl", "results.csv"}
    assert {p.name for p in folder.iterdir()} == names
    assert junit.exists()  # the JUnit file asked for by `run` too


def test_report_writes_every_file_and_junit(cli, tmp_path, fake):
    assert cli("run", "-c", write_config(tmp_path, fake), "--quiet").exit_code == 0
    (run,) = rows(Run)
    out, junit = tmp_path / "out", tmp_path / "j.xml"
    assert cli("report", run.run_id, "--out", out, "--junit", junit).exit_code == 0
    assert {p.name for p in out.iterdir()} == {
        "summary.json",
        "report.html",
        "results.jsonl",
        "results.csv",
    }
    assert len(list(JUnitXml.fromfile(str(junit)))) == 2


def test_an_unwritable_junit_path_is_said_and_the_run_kept(cli, tmp_path, fake):
    result = cli("run", "-c", write_config(tmp_path, fake), "--junit", "/proc/nope/j.xml")
    assert result.exit_code == 0
    assert "cannot write the JUnit file /proc/nope/j.xml" in result.stderr
