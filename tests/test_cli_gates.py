"""Quality gates: --fail-under, --max-failed-pct, --max-auto-fail-pct and diff
--fail-on-regression exit 4 naming the gate and the figures; without gates failures exit 0."""

import json
import re
from pathlib import Path

import pytest

from app.cli.exit_codes import EXIT_CODES_HELP
from app.db.models import Run
from tests.cli_helpers import events
from tests.cli_helpers import judge_scores
from tests.cli_helpers import make_cli
from tests.cli_helpers import rows
from tests.cli_helpers import write_config

DOCS = Path(__file__).resolve().parent.parent / "docs" / "CLI.md"


@pytest.fixture
def cli(tmp_path):
    return make_cli(tmp_path)


def test_a_passing_score_gate_exits_0(cli, tmp_path, fake):
    fake.responder = judge_scores({"m1": 80, "m2": 90})
    result = cli("run", "-c", write_config(tmp_path, fake), "--fail-under", 70)
    assert result.exit_code == 0, result.output


def test_gates_that_all_pass_say_so_in_the_log(cli, tmp_path, fake):
    fake.responder = judge_scores({"m1": 80, "m2": 90})
    path = write_config(tmp_path, fake)
    result = cli("run", "-c", path, "--fail-under", 70, "--max-failed-pct", 5)
    assert result.exit_code == 0, result.output
    assert "Gates passed: --fail-under 70, --max-failed-pct 5" in result.stdout


def test_a_failing_gate_prints_no_gates_passed_line(cli, tmp_path, fake):
    fake.responder = judge_scores({"m1": 90, "m2": 40})
    result = cli("run", "-c", write_config(tmp_path, fake), "--fail-under", 70)
    assert result.exit_code == 4 and "Gates passed" not in result.output


def test_the_json_summary_lists_the_gates_that_passed(cli, tmp_path, fake):
    fake.responder = judge_scores({"m1": 80, "m2": 90})
    result = cli("run", "-c", write_config(tmp_path, fake), "--fail-under", 70, "--json")
    assert result.exit_code == 0, result.output
    summary = [e for e in events(result) if e["event"] == "run_summary"][0]
    assert summary["gatesPassed"] == ["--fail-under 70"] and summary["gates"] == []


def test_a_target_under_the_score_gate_exits_4_naming_it(cli, tmp_path, fake):
    fake.responder = judge_scores({"m1": 90, "m2": 40})
    result = cli("run", "-c", write_config(tmp_path, fake), "--fail-under", 70)
    assert result.exit_code == 4
    assert "Gate --fail-under failed: fake/m2: score 40.0 is under 70.0" in result.stderr
    assert "fake/m1: score" not in result.stderr  # the passing target is not named


def test_the_overall_score_is_gated_too(cli, tmp_path, fake):
    fake.responder = judge_scores({"m1": 70, "m2": 60})
    result = cli("run", "-c", write_config(tmp_path, fake), "--fail-under", 66)
    assert result.exit_code == 4
    assert "overall: score 65.0 is under 66.0" in result.stderr


def test_the_failed_items_gate_counts_failures_per_target(cli, tmp_path, fake):
    fake.responder = lambda call: {"status": 400} if call["body"].get("model") == "m2" else None
    path = write_config(tmp_path, fake, max_attempts=1)
    result = cli("run", "-c", path, "--max-failed-pct", 10)
    assert result.exit_code == 4
    assert "fake/m2: failed items 100.0 % (4 of 4) is over 10.0 %" in result.stderr
    assert "overall: failed items 50.0 % (4 of 8) is over 10.0 %" in result.stderr


def test_the_auto_fail_gate_uses_the_auto_fail_rate(cli, tmp_path, fake):
    fake.responder = judge_scores({}, auto_fail=("m1",))
    result = cli("run", "-c", write_config(tmp_path, fake), "--max-auto-fail-pct", 0)
    assert result.exit_code == 4
    assert "fake/m1: auto-fail rate 100.0 % (4 of 4) is over 0.0 %" in result.stderr
    assert "fake/m2: auto-fail" not in result.stderr


def test_without_gates_failed_items_exit_0(cli, tmp_path, fake):
    fake.responder = lambda call: {"status": 400} if call["body"].get("model") == "m2" else None
    result = cli("run", "-c", write_config(tmp_path, fake, max_attempts=1))
    assert result.exit_code == 0


def test_a_run_where_nothing_completed_says_so_on_stderr_and_exits_0(cli, tmp_path, fake):
    fake.responder = lambda call: {"status": 400} if call["body"].get("model") != "judge" else None
    result = cli("run", "-c", write_config(tmp_path, fake, max_attempts=1))
    assert result.exit_code == 0
    assert "finished but nothing completed" in result.stderr


def test_a_score_gate_with_nothing_scored_fails(cli, tmp_path, fake):
    fake.responder = lambda call: {"status": 400} if call["body"].get("model") != "judge" else None
    result = cli("run", "-c", write_config(tmp_path, fake, max_attempts=1), "--fail-under", 1)
    assert result.exit_code == 4
    assert "overall: no scored item" in result.stderr


def test_gate_failures_are_in_the_json_summary(cli, tmp_path, fake):
    fake.responder = judge_scores({"m2": 10})
    result = cli("run", "-c", write_config(tmp_path, fake), "--fail-under", 50, "--json")
    assert result.exit_code == 4
    summary = events(result)[-1]
    assert summary["event"] == "run_summary" and summary["exitCode"] == 4
    assert [(g["gate"], g["scope"]) for g in summary["gates"]] == [
        ("--fail-under", "overall"),
        ("--fail-under", "fake/m2"),
    ]


def test_an_interrupted_run_exits_3_not_4(cli, tmp_path, fake):
    fake.responder = lambda call: (
        None
        if call["body"].get("model") == "judge"
        else {"text": "paid", "usage": {"prompt_tokens": 1, "completion_tokens": 1, "cost": 1.0}}
    )
    path = write_config(tmp_path, fake, max_budget_usd=1.5)
    result = cli("run", "-c", path, "--allow-unpriced", "--fail-under", 99)
    assert result.exit_code == 3
    assert "Gate" not in result.stderr


def test_resume_takes_the_gates_too(cli, tmp_path, fake):
    fake.responder = lambda call: (
        {"text": json.dumps({"score": 20, "reason": "r", "auto_fail": False})}
        if call["body"].get("model") == "judge"
        else {"text": "paid", "usage": {"prompt_tokens": 1, "completion_tokens": 1, "cost": 1.0}}
    )
    assert (
        cli(
            "run", "-c", write_config(tmp_path, fake, max_budget_usd=1.5), "--allow-unpriced"
        ).exit_code
        == 3
    )
    (run,) = rows(Run)
    result = cli("resume", run.run_id, "--max-budget-usd", 100, "--fail-under", 50)
    assert result.exit_code == 4 and "score 20.0 is under 50.0" in result.stderr


# ---- diff --fail-on-regression -----------------------------------------------------------


def _two_runs(cli, tmp_path, fake, before, after):
    path = write_config(tmp_path, fake, tasks=12)
    fake.responder = judge_scores(before)
    assert cli("run", "-c", path, "--quiet").exit_code == 0
    fake.responder = judge_scores(after)
    assert cli("run", "-c", path, "--quiet").exit_code == 0
    return [r.run_id for r in sorted(rows(Run), key=lambda r: r.id)]


def test_diff_fail_on_regression_exits_4_naming_the_worse_target(cli, tmp_path, fake):
    run_a, run_b = _two_runs(cli, tmp_path, fake, {"m1": 80, "m2": 80}, {"m1": 40, "m2": 80})
    result = cli("diff", run_a, run_b, "--fail-on-regression")
    assert result.exit_code == 4
    assert f"Regression: fake/m1 is worse in {run_b} than in {run_a}" in result.stderr
    assert "fake/m2" not in result.stderr


def test_diff_fail_on_regression_exits_0_without_one(cli, tmp_path, fake):
    run_a, run_b = _two_runs(cli, tmp_path, fake, {"m1": 80, "m2": 80}, {"m1": 85, "m2": 80})
    assert cli("diff", run_a, run_b, "--fail-on-regression").exit_code == 0


def test_diff_without_the_flag_reports_a_regression_and_exits_0(cli, tmp_path, fake):
    run_a, run_b = _two_runs(cli, tmp_path, fake, {"m1": 80}, {"m1": 40})
    result = cli("diff", run_a, run_b, "--json")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["regressed"] == ["fake/m1"]


# ---- the exit codes are documented --------------------------------------------------------


@pytest.mark.parametrize("command", [[], ["run"], ["resume"], ["diff"]])
def test_help_lists_exit_codes_0_to_4(cli, command):
    text = " ".join(cli(*command, "--help").output.split())
    for code in ("0 done", "1 anything else", "2 invalid config or dataset", "3 interrupted"):
        assert code in text
    assert "4 a quality gate failed" in text


def test_docs_cli_md_lists_the_same_exit_codes():
    table = dict(re.findall(r"^\| ([0-4]) \| (.+) \|$", DOCS.read_text(), re.M))
    assert sorted(table) == ["0", "1", "2", "3", "4"]
    assert "gate" in table["4"] and "interrupted" in table["3"]
    assert "4 a quality gate failed" in EXIT_CODES_HELP
