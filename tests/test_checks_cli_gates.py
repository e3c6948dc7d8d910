"""A judge-free run from the CLI is held to the same gates and diffed as a judged one: its
scores come from the tasks' checks, and no call goes to a judge."""

import json

import pytest
import yaml

from app.db.models import Run
from tests.cli_helpers import make_cli
from tests.cli_helpers import rows


@pytest.fixture
def cli(tmp_path):
    return make_cli(tmp_path)


def _config(tmp_path, fake, tasks=10):
    """Tasks whose one check wants "42"; targets m1 and m2 on the fake; no judge."""
    fake.models = ["m1", "m2"]
    bank = tmp_path / "tasks.yaml"
    bank.write_text(
        yaml.safe_dump(
            [
                {
                    "task_id": f"t{i:02d}",
                    "category": "math",
                    "question": f"What is 6 x 7? ({i})",
                    "checks": [{"type": "contains", "value": "42"}],
                }
                for i in range(tasks)
            ]
        )
    )
    path = tmp_path / "config.yml"
    path.write_text(
        yaml.safe_dump(
            {
                "run": {"name": "checked", "dataset": str(bank)},
                "providers": [{"name": "fake", "type": "OPENAI", "base_url": fake.url}],
                "judge": "none",
                "targets": [{"provider": "fake", "model": m} for m in ("m1", "m2")],
            }
        )
    )
    return path


def _answers(right):
    """m1 always says 42; m2 says it only when `right`."""

    def respond(call):
        text = "It is 42." if call["body"]["model"] == "m1" or right else "It is 41."
        return {"text": text}

    return respond


def test_fail_under_holds_a_judge_free_run_to_its_checks_scores(cli, tmp_path, fake):
    fake.responder = _answers(right=False)
    result = cli("run", "-c", _config(tmp_path, fake), "--quiet", "--fail-under", "50")
    assert result.exit_code == 4, result.output
    assert "m2" in result.output + result.stderr
    assert {c["body"]["model"] for c in fake.chat_calls()} == {"m1", "m2"}  # no judge call


def test_a_judge_free_run_that_meets_the_gate_exits_0(cli, tmp_path, fake):
    fake.responder = _answers(right=True)
    result = cli("run", "-c", _config(tmp_path, fake), "--quiet", "--fail-under", "50")
    assert result.exit_code == 0, result.output


def test_diff_of_two_judge_free_runs_finds_the_regression(cli, tmp_path, fake):
    path = _config(tmp_path, fake)
    fake.responder = _answers(right=True)
    assert cli("run", "-c", path, "--quiet").exit_code == 0
    fake.responder = _answers(right=False)
    assert cli("run", "-c", path, "--quiet").exit_code == 0
    before, after = [r.run_id for r in sorted(rows(Run), key=lambda r: r.id)]
    result = cli("diff", before, after, "--json", "--fail-on-regression")
    assert result.exit_code == 4, result.output
    models = {m["label"]: m for m in json.loads(result.stdout)["models"]}
    assert models["fake/m2"]["verdict"] == "worse" and models["fake/m2"]["regressionAlert"]
    assert models["fake/m2"]["compositeDelta"] == -70.0  # 0.70 × 100 points of quality
    assert models["fake/m1"]["scoreDelta"] == 0.0


def test_the_end_of_a_run_prints_each_targets_composite_and_checks(cli, tmp_path, fake):
    fake.responder = _answers(right=False)
    result = cli("run", "-c", _config(tmp_path, fake, tasks=4))
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    # m1 always right: quality 100 (70 points) + time 15 + on-target 15.
    assert "  composite 100.0 · checks: 4 of 4 answers pass all (4 of 4 checks)" in lines
    assert "  composite 30.0 · checks: 0 of 4 answers pass all (0 of 4 checks)" in lines


def test_show_prints_the_composite_and_checks_and_json_has_them(cli, tmp_path, fake):
    fake.responder = _answers(right=False)
    assert cli("run", "-c", _config(tmp_path, fake, tasks=4), "--quiet").exit_code == 0
    run_id = rows(Run)[0].run_id
    shown = cli("show", run_id)
    assert "    composite 30.0 · checks: 0 of 4 answers pass all (0 of 4 checks)" in shown.stdout
    models = {m["target"]: m for m in json.loads(cli("show", run_id, "--json").stdout)["models"]}
    assert models["fake/m1"]["compositeScore"] == 100.0
    assert models["fake/m2"]["checks"] == {
        "answers": 4,
        "answersPassed": 0,
        "checks": 4,
        "checksPassed": 0,
    }
