"""`llmbench run --template NAME --server URL --token T` (issue 30): the template starts on a
real `llmbench serve` (its own process, a login needed: an account exists), whose orchestrator
works the run against the fake model server; the CLI follows it over the JSON API to the end
and exits as a local run would."""

import json

import pytest
from click.testing import CliRunner

from app.accounts.store import add_account
from app.accounts.tokens import create_token
from app.cli import main
from app.cli import remote
from app.db.connection import database
from app.db.migrations import open_db
from app.db.models import Run
from app.schedules.templates import create_template
from tests.cli_helpers import cli_env
from tests.engine_helpers import make_provider
from tests.engine_helpers import make_tasks
from tests.serve_helpers import Served


@pytest.fixture
def server(tmp_path, fake, monkeypatch):
    """A served llmbench holding a template "nightly" (two tasks, one target on the fake
    server) and an account; yields (its URL, a runner token, a viewer token)."""
    open_db(cli_env(tmp_path)["LLMBENCH_DB"])
    with database.connection_context():
        provider = make_provider(fake)
        spec = {
            "judgeProviderId": provider.id,
            "judgeModel": "judge",
            "collectionIds": [make_tasks(2).id],
            "targets": [{"providerId": provider.id, "model": "m1"}],
        }
        create_template({"name": "nightly", "spec": spec})
        add_account("ana", "rater", "a long enough password")
        _, runner = create_token("ci", "runner")
        _, viewer = create_token("dash", "viewer")
    database.close()
    # The CLI asks how the run is doing this often; the run itself takes what it takes.
    monkeypatch.setattr(remote, "POLL_SECONDS", 0.05)
    with Served(tmp_path / "home", extra_env=cli_env(tmp_path)) as served:
        yield served.base, runner, viewer
    if not database.is_closed():
        database.close()


def invoke(*args):
    return CliRunner().invoke(main, list(args), env={"LLMBENCH_DB": None})


def test_a_template_started_on_a_server_is_followed_to_the_end_and_exits_0(server):
    base, runner, _ = server
    result = invoke("run", "--template", "nightly", "--server", base, "--token", runner)
    assert result.exit_code == 0, result.output
    with database.connection_context():
        (run,) = Run.select()
    assert run.status == "FINISHED" and run.triggered_by == "cli"
    assert f"Run {run.run_id} started on {base}" in result.output
    assert f"Run {run.run_id} finished: 2 of 2 items done, 0 failed (100 %)" in result.output
    assert f"Run {run.run_id} finished on {base}." in result.output


def test_a_template_can_be_named_by_its_id_and_followed_as_json_lines(server):
    base, runner, _ = server
    result = invoke("run", "--template", "1", "--server", base, "--token", runner, "--json")
    assert result.exit_code == 0, result.output
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert events[0]["event"] == "run_started"
    assert events[-2]["event"] == "progress" and events[-2]["done"] == 2
    assert events[-1] == {"event": "run_finished", "runId": events[0]["runId"], "exitCode": 0}


def test_an_unknown_remote_template_names_the_ones_there_are(server):
    base, runner, _ = server
    result = invoke("run", "--template", "weekly", "--server", base, "--token", runner)
    assert result.exit_code == 2
    assert "no template named 'weekly' (templates: nightly)" in result.output
    with database.connection_context():
        assert Run.select().count() == 0


def test_a_viewer_token_cannot_start_a_template_and_is_told_the_role_needed(server):
    base, _, viewer = server
    result = invoke("run", "--template", "nightly", "--server", base, "--token", viewer)
    assert result.exit_code == 1
    assert "needs the runner role" in result.output


def test_a_gate_with_server_is_refused_by_name_before_anything_starts():
    result = invoke(
        "run", "--template", "nightly", "--server", "http://127.0.0.1:9", "--fail-under", "50"
    )
    assert result.exit_code == 2
    assert "quality or speed gate" in result.output and "llmbench report" in result.output


def test_a_config_file_with_server_is_refused(tmp_path):
    config = tmp_path / "c.yml"
    config.write_text("run: {}\n")
    result = invoke("run", "-c", str(config), "--server", "http://127.0.0.1:9")
    assert result.exit_code == 2 and "give --template NAME" in result.output


def test_dry_run_with_server_is_refused_and_starts_nothing():
    result = invoke("run", "--template", "nightly", "--server", "http://127.0.0.1:9", "--dry-run")
    assert result.exit_code == 2 and "--dry-run checks a config file" in result.output
