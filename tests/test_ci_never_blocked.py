"""CI never blocked by an earlier job: a paused run (a spent budget, a dead judge, an outage)
waits, resumable, and a new run starts beside it and names it; `run --ci` (or CI=true) stops
what the job itself left paused, unless --keep-paused."""

import datetime as dt
import socket

import pytest
from click.testing import CliRunner

from app.cli import main
from app.clock import utcnow
from app.db.connection import database
from app.db.models import CONTROL_RUNNING
from app.db.models import Lease
from app.db.models import Run
from app.runs.state import run_state
from tests.cli_helpers import cli_env
from tests.cli_helpers import events
from tests.cli_helpers import judge_scores
from tests.cli_helpers import rows
from tests.cli_helpers import write_config


def _paid(call):
    if call["body"].get("model") == "judge":
        return None
    return {"text": "paid", "usage": {"prompt_tokens": 1, "completion_tokens": 1, "cost": 1.0}}


@pytest.fixture
def cli(tmp_path):
    runner = CliRunner()

    def invoke(*args, ci=""):
        env = {**cli_env(tmp_path), "CI": ci}
        return runner.invoke(main, [str(a) for a in args], env=env)

    return invoke


def _budget_paused_run(cli, tmp_path, fake, *extra, ci=""):
    """A run whose budget pauses it (exit 3); returns (result, its run row)."""
    fake.responder = _paid
    path = write_config(tmp_path, fake, name="paid.yml", max_budget_usd=1.5)
    result = cli("run", "-c", path, "--allow-unpriced", "--quiet", "--name", "paid", *extra, ci=ci)
    assert result.exit_code == 3, result.output
    (run,) = rows(Run, Run.name == "paid")
    return result, run


def _state(run):
    (row,) = rows(Run, Run.id == run.id)
    return run_state(row), row.control_reason


def test_a_paused_run_does_not_keep_a_new_run_from_starting(cli, tmp_path, fake):
    _result, paused = _budget_paused_run(cli, tmp_path, fake)
    fake.responder = judge_scores({})
    result = cli("run", "-c", write_config(tmp_path, fake))
    assert result.exit_code == 0, result.output
    assert _state(paused)[0] == "paused"  # still there, resumable


def test_the_new_run_names_the_runs_waiting_beside_it(cli, tmp_path, fake):
    _result, paused = _budget_paused_run(cli, tmp_path, fake)
    fake.responder = judge_scores({})
    result = cli("run", "-c", write_config(tmp_path, fake))
    assert "Waiting beside this run" in result.stderr
    assert f"{paused.run_id} (paused: budget reached" in result.stderr


def test_the_waiting_runs_are_an_event_with_json(cli, tmp_path, fake):
    _result, paused = _budget_paused_run(cli, tmp_path, fake)
    fake.responder = judge_scores({})
    result = cli("run", "-c", write_config(tmp_path, fake), "--json")
    waiting = [e for e in events(result) if e["event"] == "runs_waiting"]
    assert waiting == [
        {
            "event": "runs_waiting",
            "count": 1,
            "runs": [{"runId": paused.run_id, "state": "paused", "reason": paused.control_reason}],
        }
    ]


def test_a_run_paused_earlier_can_still_be_resumed_after_a_new_one(cli, tmp_path, fake):
    _result, paused = _budget_paused_run(cli, tmp_path, fake)
    fake.responder = judge_scores({})
    assert cli("run", "-c", write_config(tmp_path, fake), "--quiet").exit_code == 0
    result = cli("resume", paused.run_id, "--max-budget-usd", "100", "--quiet")
    assert result.exit_code == 0, result.output
    assert _state(paused)[0] == "finished"


def test_ci_stops_the_run_it_left_paused_when_it_exits_3(cli, tmp_path, fake):
    _result, run = _budget_paused_run(cli, tmp_path, fake, "--ci")
    state, reason = _state(run)
    assert state == "stopped" and "budget reached" in reason and "CI job ended" in reason
    shown = cli("show", run.run_id)
    assert f"llmbench resume {run.run_id} --max-budget-usd" in shown.stdout


def test_ci_true_in_the_environment_stops_it_too(cli, tmp_path, fake):
    _result, run = _budget_paused_run(cli, tmp_path, fake, ci="true")
    assert _state(run)[0] == "stopped"


def test_keep_paused_leaves_the_run_paused_in_ci(cli, tmp_path, fake):
    _result, run = _budget_paused_run(cli, tmp_path, fake, "--keep-paused", ci="true")
    assert _state(run)[0] == "paused"


def test_without_ci_the_run_stays_paused(cli, tmp_path, fake):
    _result, run = _budget_paused_run(cli, tmp_path, fake)
    assert _state(run)[0] == "paused"


def test_a_run_whose_process_was_killed_does_not_keep_a_new_run_from_starting(cli, tmp_path, fake):
    _result, run = _budget_paused_run(cli, tmp_path, fake)
    # As a job killed mid-run leaves it: running by its control, the lease of a process gone.
    with database.connection_context():
        Run.update(control=CONTROL_RUNNING).where(Run.id == run.id).execute()
        Lease.delete().execute()
        Lease.create(
            name="orchestrator",
            holder=f"{socket.gethostname()}:999999:dead",
            expires_at=utcnow() - dt.timedelta(seconds=1),
        )
    fake.responder = judge_scores({})
    result = cli("run", "-c", write_config(tmp_path, fake))
    assert result.exit_code == 0, result.output
    assert _state(run)[0] == "stopped"  # interrupted, resumable
