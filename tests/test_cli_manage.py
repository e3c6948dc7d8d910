"""Runs from the terminal: `llmbench runs`, `show`, `pause`, `stop`, `delete`."""

import json

import pytest

from app.db.models import Item
from app.db.models import Run
from app.db.models import RunFigures
from app.results import kept
from app.results import kept_speed
from tests.cli_helpers import events
from tests.cli_helpers import judge_scores
from tests.cli_helpers import make_cli
from tests.cli_helpers import rows
from tests.cli_helpers import write_config


@pytest.fixture
def cli(tmp_path):
    return make_cli(tmp_path)


def _paid(call):
    if call["body"].get("model") == "judge":
        return None
    return {"text": "paid", "usage": {"prompt_tokens": 1, "completion_tokens": 1, "cost": 1.0}}


@pytest.fixture
def two_runs(cli, tmp_path, fake):
    """A finished run (score 80) and one paused by its budget."""
    fake.responder = judge_scores({})
    assert cli("run", "-c", write_config(tmp_path, fake), "--quiet").exit_code == 0
    fake.responder = _paid
    path = write_config(tmp_path, fake, name="paid.yml", max_budget_usd=1.5)
    assert cli("run", "-c", path, "--allow-unpriced", "--quiet", "--name", "paid").exit_code == 3
    finished, paused = sorted(rows(Run), key=lambda r: r.id)
    return finished.run_id, paused.run_id


def test_runs_lists_state_targets_score_and_date(cli, two_runs):
    finished, paused = two_runs
    lines = cli("runs").stdout.splitlines()
    assert lines[0].split()[:5] == ["run", "id", "state", "score", "items"]
    assert lines[1].startswith(paused) and " paused " in lines[1]  # newest first
    assert lines[2].startswith(finished) and " finished " in lines[2] and " 80.0 " in lines[2]
    assert lines[2].rstrip().endswith("m1, m2")


def test_runs_json_is_one_object_per_run(cli, two_runs):
    finished, _paused = two_runs
    listed = events(cli("runs", "--json"))
    assert [r["runId"] for r in listed][::-1] == list(two_runs)
    row = listed[1]
    assert (row["state"], row["avgScore"], row["targets"]) == ("finished", 80.0, ["m1", "m2"])
    assert row["createdAt"].endswith("Z")


def test_runs_filters_by_state(cli, two_runs):
    assert [r["runId"] for r in events(cli("runs", "--state", "paused", "--json"))] == [two_runs[1]]


def test_runs_rejects_a_bad_date(cli, two_runs):
    result = cli("runs", "--since", "yesterday")
    assert result.exit_code == 2 and "YYYY-MM-DD" in result.output


def test_show_tells_why_a_run_stopped_and_how_to_go_on(cli, two_runs):
    result = cli("show", two_runs[1])
    assert result.exit_code == 0
    assert "paused" in result.stdout and "budget reached" in result.stdout
    assert f"llmbench resume {two_runs[1]} --max-budget-usd" in result.stdout


def test_show_json_has_the_run_and_its_targets(cli, two_runs):
    data = json.loads(cli("show", two_runs[0], "--json").stdout)
    assert data["run"]["state"] == "finished"
    assert [m["target"] for m in data["models"]] == ["fake/m1", "fake/m2"]


def test_show_gives_a_speed_line_per_target(cli, two_runs):
    result = cli("show", two_runs[0])
    assert result.stdout.count("TTFT p50") == 2 and "req/s" in result.stdout
    data = json.loads(cli("show", two_runs[0], "--json").stdout)
    assert "ttftP50Ms" in data["models"][0]["speed"]


def test_show_prints_the_same_rows_read_back_kept_as_worked_out(cli, two_runs):
    finished, _paused = two_runs  # run with --quiet: its rows were neither shown nor kept
    worked_out = cli("show", finished, "--json").stdout
    assert rows(RunFigures, RunFigures.name == "averages")  # kept by that first show
    kept.forget()
    kept_speed._cache.clear()
    assert cli("show", finished, "--json").stdout == worked_out


def test_stop_ends_a_budget_paused_run(cli, two_runs):
    # A paused run blocks nothing (tests/test_ci_never_blocked.py); stop still ends it.
    result = cli("stop", two_runs[1])
    assert result.exit_code == 0 and f"Run {two_runs[1]} is stopped." in result.stdout


def test_pause_of_a_finished_run_is_refused_with_exit_2(cli, two_runs):
    result = cli("pause", two_runs[0])
    assert result.exit_code == 2 and "only a running run can be paused" in result.stderr


def test_pause_marks_a_running_run_paused(cli, app_with_running_run):
    run_id = app_with_running_run
    result = cli("pause", run_id, "--json")
    assert result.exit_code == 0 and events(result) == [
        {"event": "run_paused", "runId": run_id, "state": "paused"}
    ]


@pytest.fixture
def app_with_running_run(cli, tmp_path):
    """A run left running in the CLI's database (no orchestrator works on it)."""
    from app.db.connection import database
    from app.db.migrations import open_db
    from tests.factories import make_run

    assert cli("runs").exit_code == 0  # creates the database
    open_db(str(tmp_path / "cli.db"))
    with database.connection_context():
        make_run("live", status="PENDING")
    database.close()
    return "live"


def test_delete_asks_first_and_removes_the_run_with_its_items(cli, two_runs):
    finished = two_runs[0]
    assert cli("delete", finished, input="n\n").exit_code == 1  # not confirmed: kept
    assert len(rows(Run)) == 2
    result = cli("delete", finished, "--yes")
    assert result.exit_code == 0 and f"Deleted run {finished}." in result.stdout
    assert [r.run_id for r in rows(Run)] == [two_runs[1]]
    assert {i.run_id for i in rows(Item)} == {rows(Run)[0].id}


def test_delete_of_a_paused_run_is_refused_with_exit_1(cli, two_runs):
    result = cli("delete", two_runs[1], "--yes")
    assert result.exit_code == 1 and "stop it before deleting it" in result.stderr


@pytest.mark.parametrize("command", ["show", "pause", "stop", "delete"])
def test_an_unknown_run_exits_2(cli, command):
    args = [command, "nope"] + (["--yes"] if command == "delete" else [])
    result = cli(*args)
    assert result.exit_code == 2 and "nope" in result.stderr
