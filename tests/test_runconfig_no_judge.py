"""A run config without a judge (left out, null or `judge: none`, or `--judge none`): the run is
scored by the tasks' checks, `validate` says so, and tasks without checks are refused naming
the field, as the API does."""

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
    assert "judgeModel: a run needs a judge unless every task has checks" in result.stderr
