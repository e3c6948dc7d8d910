"""`llmbench run --template NAME`: a saved template runs in the foreground, is digested for
Trends when it ends, and a bad reference or a second active run is refused."""

import pytest
from click.testing import CliRunner

from app.cli import main
from app.db.connection import database
from app.db.migrations import open_db
from app.db.models import Run
from app.db.models import RunDigest
from app.schedules.templates import create_template
from tests.conftest import TEST_KEY_B64
from tests.engine_helpers import make_provider
from tests.engine_helpers import make_tasks


@pytest.fixture
def cli(tmp_path, fake):
    """invoke(*args) on a database that holds a template 'nightly' on the fake server."""
    db = str(tmp_path / "cli.db")
    open_db(db)
    with database.connection_context():
        provider = make_provider(fake)
        spec = {
            "judgeProviderId": provider.id,
            "judgeModel": "judge",
            "collectionIds": [make_tasks(2).id],
            "targets": [{"providerId": provider.id, "model": "m1"}],
        }
        create_template({"name": "nightly", "spec": spec})
    database.close()
    env = {"LLMBENCH_DB": db, "LLMBENCH_MASTER_KEY_BASE64": TEST_KEY_B64}
    runner = CliRunner()
    yield lambda *args: runner.invoke(main, list(args), env=env)
    if not database.is_closed():
        database.close()


def runs():
    with database.connection_context():
        return list(Run.select())


def test_a_template_runs_in_the_foreground_and_is_digested(cli):
    result = cli("run", "--template", "nightly", "--quiet")
    assert result.exit_code == 0, result.output
    (run,) = runs()
    assert run.status == "FINISHED" and run.triggered_by == "cli"
    assert run.run_id.startswith("nightly-")
    with database.connection_context():
        assert RunDigest.select().where(RunDigest.run == run).exists()


def test_an_unknown_template_names_the_ones_there_are(cli):
    result = cli("run", "--template", "weekly")
    assert result.exit_code == 2
    assert "no template named 'weekly'" in result.output and "nightly" in result.output
    assert runs() == []


def test_config_and_template_together_are_refused(cli, tmp_path):
    config = tmp_path / "c.yml"
    config.write_text("run: {}\n")
    result = cli("run", "-c", str(config), "--template", "nightly")
    assert result.exit_code == 2 and "either -c CONFIG or --template NAME" in result.output


def test_neither_config_nor_template_is_refused(cli):
    result = cli("run")
    assert result.exit_code == 2 and "either -c CONFIG or --template NAME" in result.output
