"""`llmbench diff` gates that hold: a target with nothing scored or more failures fails
--fail-on-regression, --max-drop fails any drop of the mean past POINTS, too few shared tasks
fails --fail-on-inconclusive; and two results files (CI artifacts) diff like two run ids."""

import json

import pytest

from app.db.models import Run
from tests.cli_helpers import judge_scores
from tests.cli_helpers import make_cli
from tests.cli_helpers import rows
from tests.cli_helpers import write_config


@pytest.fixture
def cli(tmp_path):
    return make_cli(tmp_path)


def _two_runs(cli, tmp_path, fake, before, after, tasks=8, targets=("m1", "m2")):
    """Two finished runs of one config, the fake's responder `before`, then `after`."""
    path = write_config(tmp_path, fake, tasks=tasks, targets=targets, max_attempts=1)
    fake.responder = before
    assert cli("run", "-c", path, "--quiet").exit_code == 0
    fake.responder = after
    assert cli("run", "-c", path, "--quiet").exit_code == 0
    return [r.run_id for r in sorted(rows(Run), key=lambda r: r.id)]


def _failing(model, question=None):
    """Answers 400 for `model` (only on `question` when given); the judge gives 80."""

    def respond(call):
        body = call["body"]
        if body.get("model") == model and (question is None or question in json.dumps(body)):
            return {"status": 400}
        return judge_scores({})(call)

    return respond


def test_eight_tasks_dropping_83_points_fail_max_drop(cli, tmp_path, fake):
    run_a, run_b = _two_runs(
        cli, tmp_path, fake, judge_scores({"m1": 90}), judge_scores({"m1": 7}), targets=("m1",)
    )
    result = cli("diff", run_a, run_b, "--max-drop", 10)
    assert result.exit_code == 4, result.output
    assert "Gate --max-drop failed: fake/m1: its mean score fell 83.0 points" in result.stderr


def test_too_few_shared_tasks_fail_with_fail_on_inconclusive(cli, tmp_path, fake):
    run_a, run_b = _two_runs(
        cli, tmp_path, fake, judge_scores({"m1": 90}), judge_scores({"m1": 7}), targets=("m1",)
    )
    assert cli("diff", run_a, run_b, "--fail-on-regression").exit_code == 0  # no verdict
    result = cli("diff", run_a, run_b, "--fail-on-inconclusive")
    assert result.exit_code == 4
    assert "Gate --fail-on-inconclusive failed: fake/m1: too few shared tasks" in result.stderr


def test_a_target_whose_every_item_failed_fails_the_regression_gate(cli, tmp_path, fake):
    run_a, run_b = _two_runs(cli, tmp_path, fake, judge_scores({}), _failing("m2"))
    result = cli("diff", run_a, run_b, "--fail-on-regression")
    assert result.exit_code == 4
    assert f"Regression: fake/m2 has no scored task in {run_b}" in result.stderr
    assert "fake/m1" not in result.stderr


def test_a_target_failing_more_items_than_before_fails_the_regression_gate(cli, tmp_path, fake):
    run_a, run_b = _two_runs(cli, tmp_path, fake, judge_scores({}), _failing("m1", "Question 3?"))
    result = cli("diff", run_a, run_b, "--fail-on-regression")
    assert result.exit_code == 4
    assert (
        f"Regression: fake/m1 fails more items in {run_b} (1) than in {run_a} (0)" in result.stderr
    )


def test_a_small_drop_passes_max_drop(cli, tmp_path, fake):
    before, after = judge_scores({"m1": 80, "m2": 80}), judge_scores({"m1": 75, "m2": 80})
    run_a, run_b = _two_runs(cli, tmp_path, fake, before, after)
    assert cli("diff", run_a, run_b, "--max-drop", 10).exit_code == 0


def _artifacts(cli, tmp_path, run_id):
    out = tmp_path / "artifacts" / run_id
    assert cli("report", run_id, "--out", out).exit_code == 0
    return out


def test_two_results_jsonl_files_diff_like_two_runs(cli, tmp_path, fake):
    before, after = judge_scores({"m1": 90}), judge_scores({"m1": 30})
    run_a, run_b = _two_runs(cli, tmp_path, fake, before, after, tasks=12)
    a, b = (_artifacts(cli, tmp_path, r) / "results.jsonl" for r in (run_a, run_b))
    (tmp_path / "cli.db").unlink()  # the files alone: another job, another database
    result = cli("diff", a, b, "--fail-on-regression")
    assert result.exit_code == 4, result.output
    assert "fake/m1" in result.stdout and "worse" in result.stdout
    assert "Regression: fake/m1 is worse in" in result.stderr


def test_two_summary_json_files_hold_the_max_drop_gate(cli, tmp_path, fake):
    before, after = judge_scores({"m1": 90}), judge_scores({"m1": 30})
    run_a, run_b = _two_runs(cli, tmp_path, fake, before, after)
    a, b = (_artifacts(cli, tmp_path, r) / "summary.json" for r in (run_a, run_b))
    result = cli("diff", a, b, "--max-drop", 5, "--json")
    assert result.exit_code == 4
    (failure,) = json.loads(result.stdout)["gateFailures"]
    assert failure["gate"] == "--max-drop" and failure["target"] == "fake/m1"


def test_a_file_that_is_not_results_is_named_with_its_line(cli, tmp_path):
    good = tmp_path / "a.jsonl"
    good.write_text(json.dumps({"taskId": "q1", "target": "p/m", "status": "COMPLETED"}) + "\n")
    bad = tmp_path / "b.jsonl"
    bad.write_text('{"taskId": "q1", "target": "p/m"}\nnot json\n')
    result = cli("diff", good, bad)
    assert result.exit_code == 2
    assert "b.jsonl line 2: not JSON" in result.output


def test_a_run_id_and_a_file_are_refused(cli, tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_text(json.dumps({"taskId": "q1", "target": "p/m"}) + "\n")
    result = cli("diff", "some-run", path)
    assert result.exit_code == 2 and "not one of each" in result.output


def test_diff_prints_long_target_labels_whole(cli, tmp_path, fake):
    long_model = "smollm2-135m-instruct-with-a-very-long-name"
    run_a, run_b = _two_runs(
        cli, tmp_path, fake, judge_scores({}), judge_scores({}), tasks=2, targets=(long_model,)
    )
    result = cli("diff", run_a, run_b)
    assert f"fake/{long_model} " in result.stdout
