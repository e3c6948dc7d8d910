"""validate and --dry-run use the checks `run` uses and say the same errors in the option's own
words: categories that leave no task, an existing run id; other benches' difficulty words map."""

import json

import pytest

from tests.cli_helpers import judge_scores
from tests.cli_helpers import make_cli
from tests.cli_helpers import write_config


@pytest.fixture
def cli(tmp_path):
    return make_cli(tmp_path)


@pytest.mark.parametrize("command", ["validate", "dry-run", "run"])
def test_categories_that_leave_no_task_fail_naming_the_option(cli, tmp_path, fake, command):
    config = write_config(tmp_path, fake)
    args = ["validate", config] if command == "validate" else ["run", "-c", config]
    if command == "dry-run":
        args.append("--dry-run")
    result = cli(*args, "--categories", "Nope")
    assert result.exit_code == 2
    assert "--categories" in result.output and "collectionIds" not in result.output
    assert "no chosen task is in Nope; their categories: Fire, Water" in result.output


def test_an_existing_run_id_fails_validate_as_it_fails_run(cli, tmp_path, fake):
    fake.responder = judge_scores({})
    config = write_config(tmp_path, fake, id="nightly-1")
    assert cli("run", "-c", config, "--quiet").exit_code == 0
    result = cli("validate", config)
    assert result.exit_code == 2
    assert "run.id: a run named 'nightly-1' exists" in result.output


def test_an_expert_difficulty_maps_to_hard(cli, tmp_path, fake):
    config = write_config(tmp_path, fake, tasks=2)
    bank = tmp_path / "bank.jsonl"
    rows = [json.loads(line) for line in bank.read_text().splitlines()]
    rows[0]["difficulty"] = "Expert"
    bank.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    result = cli("validate", config)
    assert result.exit_code == 0, result.output


def test_an_unknown_difficulty_is_named_with_the_accepted_ones(cli, tmp_path, fake):
    config = write_config(tmp_path, fake, tasks=2)
    bank = tmp_path / "bank.jsonl"
    rows = [json.loads(line) for line in bank.read_text().splitlines()]
    rows[0]["difficulty"] = "Legendary"
    bank.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    result = cli("validate", config)
    assert result.exit_code == 2
    assert "easy, medium or hard" in result.output and "legendary" in result.output.lower()
