"""`llmbench runs|show|pause|stop --server URL --token T` (issue 30): a remote llmbench driven
over real HTTP through its JSON API, with the token's role."""

import pytest
from click.testing import CliRunner

from app.accounts.tokens import create_token
from app.cli import main
from app.db.connection import database
from app.db.models import Run
from tests.browser.helpers import serving
from tests.conftest import make_app
from tests.factories import make_run


@pytest.fixture
def remote(tmp_path):
    """A served llmbench beyond loopback (a login needed) with one running run; yields
    (its URL, a runner token, a viewer token)."""
    app = make_app(tmp_path, HOST="0.0.0.0")
    with database.connection_context():
        make_run("run-remote", status="PENDING", name="nightly")
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
