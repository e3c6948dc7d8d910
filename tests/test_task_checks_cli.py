"""A bad check given to the CLI is exit 2 naming the file, line, task, check and field, before
anything is stored or any model is called."""

import pytest
import yaml

from tests.cli_helpers import make_cli

TASKS = """\
- task_id: adds
  question: What is 6 x 7?
  category: math
  checks:
    - type: contains
      value: "42"
    - type: regex
      value: "(unclosed"
"""
PROBLEM = "line 7: checks[1] (regex).value: bad regex: missing ) at position 9 (task adds)"


@pytest.fixture
def cli(tmp_path):
    return make_cli(tmp_path)


@pytest.fixture
def bad_tasks(tmp_path):
    path = tmp_path / "tasks.yaml"
    path.write_text(TASKS)
    return path


def test_importing_a_bad_check_is_exit_2_naming_the_line_task_check_and_field(cli, bad_tasks):
    result = cli("import", bad_tasks)
    assert result.exit_code == 2
    assert f"{bad_tasks.name}, {PROBLEM}" in result.output
    assert "adds" not in cli("export").output  # nothing stored


def test_validating_a_bad_check_is_exit_2_naming_it(cli, bad_tasks):
    result = cli("validate", bad_tasks)
    assert result.exit_code == 2
    assert PROBLEM in result.output


def test_a_run_config_over_a_bad_check_is_exit_2_and_starts_no_run(cli, tmp_path, bad_tasks, fake):
    config = tmp_path / "config.yml"
    config.write_text(
        yaml.safe_dump(
            {
                "run": {"name": "bad", "dataset": str(bad_tasks)},
                "providers": [{"name": "fake", "type": "OPENAI", "base_url": fake.url}],
                "targets": [{"provider": "fake", "model": "m1"}],
            }
        )
    )
    result = cli("run", "-c", config)
    assert result.exit_code == 2
    assert PROBLEM in result.output
    assert "bad-" not in cli("runs").output
    assert fake.chat_calls() == []
