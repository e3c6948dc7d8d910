"""`llmbench runs|show|pause|stop|report --server URL --token T` (issue 30): a remote llmbench
driven over real HTTP through its JSON API, with the token's role."""

import json
import os

import pytest
from click.testing import CliRunner

from app.accounts.tokens import create_token
from app.cli import main
from app.cli import remote as remote_cli
from app.db.connection import database
from app.db.models import Run
from tests.browser.helpers import serving
from tests.conftest import make_app
from tests.factories import add_item
from tests.factories import make_run


@pytest.fixture
def remote(tmp_path):
    """A served llmbench beyond loopback (a login needed) with one running run; yields
    (its URL, a runner token, a viewer token)."""
    app = make_app(tmp_path, HOST="0.0.0.0")
    with database.connection_context():
        make_run("run-remote", status="PENDING", name="nightly")
        make_run("run-paused", status="PENDING", control="paused")
        done, (target,) = make_run("run-done")
        add_item(done, target, "q1", score=70.0, answer="Paris")
        _, runner = create_token("ci", "runner")
        _, viewer = create_token("dash", "viewer")
    with serving(app, "remote-cli-server") as base:
        yield base, runner, viewer


def invoke(*args, env=None):
    return CliRunner().invoke(main, list(args), env=env or {})


def test_runs_lists_a_remote_servers_runs(remote):
    base, _, viewer = remote
    result = invoke("runs", "--server", base, "--token", viewer)
    assert result.exit_code == 0, result.output
    assert "run-remote" in result.output


def test_show_reads_the_server_and_token_from_the_environment(remote):
    base, _, viewer = remote
    result = invoke("show", "run-remote", env={"LLMBENCH_SERVER": base, "LLMBENCH_TOKEN": viewer})
    assert result.exit_code == 0, result.output
    assert "Run run-remote (nightly): running" in result.output


def test_a_runner_token_stops_a_remote_run(remote):
    base, runner, _ = remote
    result = invoke("stop", "run-remote", "--server", base, "--token", runner)
    assert result.exit_code == 0, result.output
    assert "Run run-remote is stopped." in result.output
    with database.connection_context():
        assert Run.get(Run.run_id == "run-remote").control == "stopped"


def test_a_viewer_token_cannot_pause_and_is_told_the_role_needed(remote):
    base, _, viewer = remote
    result = invoke("pause", "run-remote", "--server", base, "--token", viewer)
    assert result.exit_code == 1
    assert "needs the runner role" in result.output


def test_no_token_says_to_give_one(remote):
    base, _, _ = remote
    result = invoke("runs", "--server", base)
    assert result.exit_code == 1
    assert "--token or LLMBENCH_TOKEN" in result.output


def test_an_unknown_remote_run_is_invalid_input(remote):
    base, _, viewer = remote
    result = invoke("show", "nope", "--server", base, "--token", viewer)
    assert result.exit_code == 2


def test_report_downloads_a_remote_runs_files_into_out(remote, tmp_path):
    base, _, viewer = remote
    out = tmp_path / "reports"
    result = invoke("report", "run-done", "--server", base, "--token", viewer, "--out", str(out))
    assert result.exit_code == 0, result.output
    names = sorted(p.name for p in out.iterdir())
    assert names == [
        "report.html",
        "report.md",
        "results-detailed.csv",
        "results.jsonl",
        "summary.json",
    ]
    assert json.loads((out / "summary.json").read_text())["runId"] == "run-done"
    assert "<html" in (out / "report.html").read_text().lower()
    assert "Paris" in (out / "results-detailed.csv").read_text()
    assert "taskId" in json.loads((out / "results.jsonl").read_text().splitlines()[0])
    assert all(os.stat(p).st_mode & 0o077 == 0 for p in out.iterdir())  # owner-only


def test_report_of_an_unknown_remote_run_writes_nothing(remote, tmp_path):
    base, _, viewer = remote
    out = tmp_path / "reports"
    result = invoke("report", "nope", "--server", base, "--token", viewer, "--out", str(out))
    assert result.exit_code == 2
    assert not out.exists()


def test_report_with_server_refuses_junit_naming_it(remote, tmp_path):
    base, _, viewer = remote
    junit = str(tmp_path / "j.xml")
    result = invoke("report", "run-done", "--server", base, "--token", viewer, "--junit", junit)
    assert result.exit_code == 2 and "--junit" in result.output


def test_following_a_remote_run_that_is_paused_ends_with_exit_3(remote):
    base, _, viewer = remote
    assert remote_cli.follow(base, viewer, "run-paused", False, True) == 3


def test_following_a_remote_run_that_finished_ends_with_exit_0(remote):
    base, _, viewer = remote
    assert remote_cli.follow(base, viewer, "run-done", False, True) == 0


def test_in_ci_a_remote_run_that_ended_paused_is_stopped(remote):
    base, runner, _ = remote
    assert remote_cli.stop_if_paused(base, runner, "run-paused", True) is True
    with database.connection_context():
        assert Run.get(Run.run_id == "run-paused").control == "stopped"
    assert remote_cli.stop_if_paused(base, runner, "run-done", True) is False
