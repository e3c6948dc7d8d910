"""Each run records the llmbench version that made it, the command line and the config as
given (secrets masked), and its dataset and prompt hashes: shown by `llmbench show` and kept
in summary.json."""

import json
import sys

import pytest

from app.db.models import Run
from app.runs.records import tool_version
from tests.cli_helpers import SECRET
from tests.cli_helpers import judge_scores
from tests.cli_helpers import make_cli
from tests.cli_helpers import rows
from tests.cli_helpers import write_config


@pytest.fixture
def cli(tmp_path):
    return make_cli(tmp_path)


@pytest.fixture
def recorded(cli, tmp_path, fake, monkeypatch):
    """A finished run from a config holding a literal secret, as a shell would have started it."""
    fake.responder = judge_scores({})
    path = write_config(tmp_path, fake)
    path.write_text(path.read_text().replace("${FAKE_KEY}", SECRET))
    args = ["run", "-c", str(path), "--quiet", "--set", "run.concurrency=1"]
    monkeypatch.setattr(sys, "argv", ["/usr/local/bin/llmbench", *args])
    assert cli(*args).exit_code == 0
    (run,) = rows(Run)
    return run, path


def test_a_run_records_the_version_that_made_it(recorded):
    run, _path = recorded
    assert run.tool_version == tool_version() != "unknown"


def test_a_cli_run_records_its_command_line(recorded):
    run, path = recorded
    assert run.command_line == f"llmbench run -c {path} --quiet --set run.concurrency=1"


def test_a_cli_run_records_its_config_as_given_with_secrets_masked(recorded):
    run, path = recorded
    assert SECRET not in run.config_given and "****" in run.config_given
    assert run.config_given == path.read_text().replace(f"Bearer {SECRET}", "****")


def test_show_prints_the_record(cli, recorded):
    run, _path = recorded
    shown = cli("show", run.run_id).stdout
    assert f"made by: llmbench {tool_version()}" in shown
    assert f"dataset {run.dataset_hash[:12]}" in shown
    assert f"judge prompt {run.prompt_hash[:12]}" in shown
    assert "command: llmbench run -c" in shown and "config as given:" in shown
    assert SECRET not in shown


def test_show_json_and_summary_json_hold_the_record(cli, recorded, tmp_path):
    run, _path = recorded
    shown = json.loads(cli("show", run.run_id, "--json").stdout)["record"]
    assert cli("report", run.run_id, "--out", tmp_path / "out").exit_code == 0
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())["record"]
    assert shown == summary
    assert set(summary) == {"toolVersion", "commandLine", "config", "datasetHash", "promptHash"}
    assert summary["datasetHash"] == run.dataset_hash and SECRET not in json.dumps(summary)
