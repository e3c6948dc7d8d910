"""A run config without a judge (left out, null or `judge: none`, or `--judge none`): the run is
scored by the tasks' checks, `validate` says so, and tasks without checks are refused naming
the field, as the API does."""

import re
import shutil
from pathlib import Path

import pytest
import yaml

from tests.cli_helpers import make_cli
from tests.cli_helpers import write_config


@pytest.fixture
def cli(tmp_path):
    return make_cli(tmp_path)


def _without_judge(path, value):
    doc = yaml.safe_load(path.read_text())
    if value == "left out":
        del doc["judge"]
    else:
        doc["judge"] = value
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


@pytest.mark.parametrize("value", ["left out", None, "none"])
def test_validate_says_a_config_without_a_judge_is_judge_free(cli, tmp_path, fake, value):
    path = _without_judge(write_config(tmp_path, fake, tasks=2), value)
    result = cli("validate", "-c", path)
    assert result.exit_code == 0, result.output
    assert "Judge: none (the tasks' checks score every answer)" in result.output


def test_judge_none_on_the_command_line_drops_the_configs_judge(cli, tmp_path, fake):
    path = write_config(tmp_path, fake, tasks=2)
    result = cli("validate", "-c", path, "--judge", "none")
    assert result.exit_code == 0, result.output
    assert "Judge: none" in result.output


def test_a_judge_free_run_over_tasks_without_checks_is_refused_naming_the_field(
    cli, tmp_path, fake
):
    path = write_config(tmp_path, fake, tasks=2)
    result = cli("run", "-c", path, "--judge", "none", "--quiet")
    assert result.exit_code == 2, result.output
    assert "2 tasks have none" in result.output + result.stderr
    assert f"{path}: judge: a run needs a judge unless every task has checks" in result.stderr


@pytest.fixture
def apocbench(tmp_path, fake, monkeypatch):
    """docs/examples' apocbench config with its judge section replaced by `judge: none`."""
    examples = Path(__file__).resolve().parent.parent / "docs" / "examples"
    fake.models = ["llama3.2:3b", "qwen/qwen-2.5-7b-instruct", "google/gemini-3-flash-preview"]
    monkeypatch.setenv("OPENROUTER_API_KEY", "sk-test")
    for name in ("apocbench.yml", "question_bank_v7.jsonl"):
        shutil.copy(examples / name, tmp_path / name)
    path = tmp_path / "apocbench.yml"
    text = path.read_text().replace("http://localhost:11434", fake.url)
    text = text.replace("https://openrouter.ai/api/v1", fake.url + "/v1")
    text = re.sub(r"\njudge:\n(  .*\n)+", "\njudge: none\n", text)
    path.write_text(text)
    return path


def test_an_apocbench_config_with_judge_none_is_judge_free(cli, apocbench):
    result = cli("validate", "-c", apocbench, "--allow-unpriced")  # the fake reports no cost
    assert result.exit_code == 0, result.output
    assert "Judge: none (the tasks' checks score every answer)" in result.output


def test_an_apocbench_run_with_judge_none_over_tasks_without_checks_is_refused(cli, apocbench):
    result = cli("run", "-c", apocbench, "--quiet", "--allow-unpriced")
    assert result.exit_code == 2, result.output
    assert f"{apocbench}: judge: a run needs a judge unless every task has checks" in (
        result.stderr
    )
