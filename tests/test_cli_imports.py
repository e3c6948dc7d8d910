"""`llmbench --version` and `--help` start at once: they import no command, no database driver,
no numpy, web framework, charts or HTTP client; `validate` of a small dataset on SQLite imports
no numpy, PostgreSQL driver, web framework, templates, charts, web server, HTTP client, the
run config reader nor (a JSONL file) yaml, and a run on SQLite no PostgreSQL driver, web
framework, charts nor web server, and neither imports the libraries of checks its tasks do not
have, nor the cipher without a stored secret (their time is bench/bench_cli_start.py's).
Peewee, kept from importing the driver at its own import, gets it with a PostgreSQL database."""

import json
import os
import subprocess
import sys

import pytest
import yaml

from app.cli import COMMANDS
from app.cli import SUMMARIES
from app.cli.lazy import load
from tests.conftest import TEST_KEY_B64

HEAVY = ("numpy", "psycopg", "flask", "pygal", "gunicorn", "requests", "jinja2", "peewee")

PROBE = """
import json, sys
from app.cli import main
try:
    main(sys.argv[1:], prog_name="llmbench")
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def modules_imported_by(*args, env=None):
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args], capture_output=True, text=True, check=True, env=env
    )
    return set(json.loads(done.stderr.strip().splitlines()[-1]))


@pytest.mark.parametrize("option", ["--version", "--help"])
def test_version_and_help_import_no_heavy_module(option):
    imported = modules_imported_by(option)
    assert not {m for m in imported if m.split(".")[0] in HEAVY}


@pytest.mark.parametrize("option", ["--version", "--help"])
def test_version_and_help_import_no_command(option):
    imported = modules_imported_by(option)
    commands = {target.partition(":")[0] for target in COMMANDS.values()}
    assert not imported & commands
    assert not {m for m in imported if m.startswith("app.") and not m.startswith("app.cli")}


def test_version_is_told_without_reading_the_installed_packages_metadata():
    # importlib.metadata was about half of what `--version` imported (app/__init__.py).
    assert "importlib.metadata" not in modules_imported_by("--version")


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_help_line_is_the_first_paragraph_of_its_commands_help(name):
    command = load(COMMANDS[name])
    assert SUMMARIES[name] == " ".join(command.help.split("\n\n")[0].split())


NOT_FOR_VALIDATE = (
    "numpy",
    "psycopg",
    "psycopg2",
    "flask",
    "jinja2",
    "pygal",
    "gunicorn",
    "requests",
)
# A run calls model servers (requests) and sums its results up (numpy), but shows no page.
NOT_FOR_A_RUN = ("flask", "jinja2", "werkzeug", "pygal", "gunicorn")
DRIVERS = ("psycopg", "psycopg2", "psycopg2cffi")
# What only a task's checks of one kind need: regex checks, similarity and edit checks.
CHECK_LIBRARIES = ("regex", "rapidfuzz")
# What only some commands need: AES-GCM for a stored secret, the per-user folder of an
# installed tool with no home set, a temporary folder for a check with no database yet.
ONLY_WHEN_NEEDED = ("cryptography", "platformdirs", "tempfile")
# The patterns that find the option or number an answer gives: choice and number checks only.
PICKS = "app.scoring.checks.picks"


def cli_env(tmp_path):
    return {
        **os.environ,
        "LLMBENCH_DB": str(tmp_path / "cli.db"),
        "LLMBENCH_MASTER_KEY_BASE64": TEST_KEY_B64,
    }


def made_database(tmp_path):
    """The environment of a command that finds the database an earlier one made (a new one
    gets the built-in tasks, whose checks need the check libraries)."""
    env = cli_env(tmp_path)
    subprocess.run(
        [sys.executable, "-m", "app.cli", "reset-defaults"],
        env=env,
        check=True,
        capture_output=True,
    )
    return env


def small_dataset(tmp_path):
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(
        "".join(
            json.dumps({"id": f"t{n}", "category": "math", "prompt": f"What is {n} + {n}?"}) + "\n"
            for n in range(3)
        )
    )
    return tasks


def test_validate_of_a_small_dataset_imports_no_numpy_driver_web_app_charts_or_http_client(
    tmp_path,
):
    imported = modules_imported_by("validate", str(small_dataset(tmp_path)), env=cli_env(tmp_path))
    assert "app.datasets.importer" in imported  # the command ran
    assert not {m for m in imported if m.split(".")[0] in NOT_FOR_VALIDATE}


@pytest.mark.parametrize("database", ["none yet", "made by an earlier command"])
def test_validate_of_a_dataset_loads_neither_the_run_config_reader_nor_a_runs_creation(
    tmp_path, database
):
    # A database made before: its secrets mask the output (read, as a second command does).
    env = cli_env(tmp_path) if database == "none yet" else made_database(tmp_path)
    imported = modules_imported_by("validate", str(small_dataset(tmp_path)), env=env)
    assert "app.datasets.importer" in imported
    assert not {"app.cli.plans", "app.runconfig.reader", "app.runs.lifecycle"} & imported


def test_validate_of_a_dataset_without_checks_loads_no_check_library(tmp_path):
    imported = modules_imported_by(
        "validate", str(small_dataset(tmp_path)), env=made_database(tmp_path)
    )
    assert "app.datasets.importer" in imported
    assert not {m for m in imported if m.split(".")[0] in CHECK_LIBRARIES}


def test_validate_of_a_dataset_against_a_database_without_secrets_loads_no_cipher_nor_temp_folder(
    tmp_path,
):
    imported = modules_imported_by(
        "validate", str(small_dataset(tmp_path)), env=made_database(tmp_path)
    )
    assert "app.datasets.importer" in imported
    assert not {m for m in imported if m.split(".")[0] in ONLY_WHEN_NEEDED}


def test_validate_of_a_jsonl_dataset_reads_no_yaml(tmp_path):
    # YAML is read only for a YAML file (a dataset, a config, checks written as YAML) or for an
    # empty database's built-in tasks: yaml was ~16 % of a 10-task validate's instructions.
    imported = modules_imported_by(
        "validate", str(small_dataset(tmp_path)), env=made_database(tmp_path)
    )
    assert "app.datasets.importer" in imported
    assert not {m for m in imported if m.split(".")[0] == "yaml"}


def test_validate_loads_no_dataset_exporter(tmp_path):
    imported = modules_imported_by(
        "validate", str(small_dataset(tmp_path)), env=made_database(tmp_path)
    )
    assert "app.datasets.importer" in imported
    assert "app.datasets.exporter" not in imported


def test_validate_against_an_up_to_date_database_loads_no_schema_migrator(tmp_path):
    # Peewee's migrator (with its CockroachDB and PostgreSQL extras) is for a migration that
    # runs: a database made by an earlier command has them all.
    imported = modules_imported_by(
        "validate", str(small_dataset(tmp_path)), env=made_database(tmp_path)
    )
    assert "app.datasets.importer" in imported
    assert "playhouse.migrate" not in imported


def run_config(tmp_path, fake):
    fake.models = ["m1"]
    config = tmp_path / "llmbench.yml"
    config.write_text(
        yaml.safe_dump(
            {
                "run": {"name": "imports", "dataset": str(small_dataset(tmp_path))},
                "providers": [{"name": "fake", "type": "OPENAI", "base_url": fake.url}],
                "targets": [{"provider": "fake", "model": "m1"}],
            }
        )
    )
    return config


def modules_a_run_imports(tmp_path, fake):
    env = made_database(tmp_path)
    config = run_config(tmp_path, fake)
    imported = modules_imported_by("run", "-c", str(config), "-q", "--judge", "none", env=env)
    assert "app.engine.foreground" in imported  # the run ran
    return imported


def test_a_run_on_sqlite_imports_no_postgresql_driver_nor_unused_check_library(tmp_path, fake):
    imported = modules_a_run_imports(tmp_path, fake)
    assert not {m for m in imported if m.split(".")[0] in DRIVERS + CHECK_LIBRARIES}


def test_a_run_imports_no_web_framework_templates_charts_or_web_server(tmp_path, fake):
    imported = modules_a_run_imports(tmp_path, fake)
    assert not {m for m in imported if m.split(".")[0] in NOT_FOR_A_RUN}


def test_a_run_without_secrets_nor_choice_or_number_checks_loads_no_cipher_nor_their_patterns(
    tmp_path, fake
):
    imported = modules_a_run_imports(tmp_path, fake)
    assert not {m for m in imported if m.split(".")[0] in ("cryptography", "platformdirs")}
    assert PICKS not in imported


PEEWEE_ON_POSTGRES = """
import json, sys
import app.db.connection
import peewee
before = peewee.psycopg
from app.db import postgres
import psycopg
db = peewee.PostgresqlDatabase("llmbench", prefer_psycopg3=True)
print(json.dumps({
    "before": before is not None,
    "binary": db.get_binary_type() is psycopg.Binary,
    "json": db._adapter.jsonb_type is psycopg.types.json.Jsonb,
    "idle": peewee.Psycopg3Adapter.txn_idle == psycopg.pq.TransactionStatus.IDLE,
}))
"""


def test_peewee_gets_the_postgresql_driver_once_llmbench_loads_its_postgresql_classes():
    done = subprocess.run(
        [sys.executable, "-c", PEEWEE_ON_POSTGRES], capture_output=True, text=True, check=True
    )
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found == {"before": False, "binary": True, "json": True, "idle": True}


# What `runs`, `show`, `pause`, `stop` and `delete` read or write is a few rows: none calls a
# model server, works a figure out of every item nor shows a page.
NOT_FOR_A_RUNS_ROWS = ("numpy", "requests", "flask", "jinja2", "pygal", "gunicorn", *DRIVERS)


def heavy_in(imported, heavy=NOT_FOR_A_RUNS_ROWS):
    return {m for m in imported if m.split(".")[0] in heavy}


def finished_run(tmp_path, fake):
    """(the environment, the id) of a judged run finished on the fake server by an earlier
    command, which printed its rows."""
    env = made_database(tmp_path)
    fake.models = ["m1", "judge"]
    tasks = tmp_path / "judged.jsonl"
    fields = {"category": "math", "difficulty": "Easy", "scenario": [], "rubric": []}
    tasks.write_text(
        "".join(
            json.dumps({"id": f"t{n}", **fields, "auto_fail": [], "prompt": f"{n} + {n}?"}) + "\n"
            for n in range(3)
        )
    )
    config = tmp_path / "judged.yml"
    config.write_text(
        yaml.safe_dump(
            {
                "run": {"name": "judged", "dataset": str(tasks)},
                "providers": [{"name": "fake", "type": "OPENAI", "base_url": fake.url}],
                "judge": {"provider": "fake", "model": "judge"},
                "targets": [{"provider": "fake", "model": "m1"}],
            }
        )
    )
    ran = subprocess.run(
        [sys.executable, "-m", "app.cli", "run", "-c", str(config)],
        env=env,
        capture_output=True,
        text=True,
    )
    assert ran.returncode == 0, ran.stderr
    done = subprocess.run(
        [sys.executable, "-m", "app.cli", "runs", "--json"],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return env, json.loads(done.stdout)["runId"]


def test_runs_imports_no_numpy_http_client_web_app_charts_nor_driver(tmp_path):
    imported = modules_imported_by("runs", env=made_database(tmp_path))
    assert "app.runs.history" in imported  # the command ran
    assert not heavy_in(imported)


def rows_command(command):
    """The arguments of `runs`, or of a control of a run that does not exist (the command reads
    it and says so, having loaded all it uses)."""
    if command == "runs":
        return ["runs"]
    return [command, "no-such-run", *(["--yes"] if command == "delete" else [])]


@pytest.mark.parametrize("command", ["pause", "stop", "delete"])
def test_a_runs_control_imports_no_numpy_http_client_web_app_charts_nor_driver(tmp_path, command):
    imported = modules_imported_by(*rows_command(command), env=made_database(tmp_path))
    assert "app.runs.control" in imported  # the command ran
    assert not heavy_in(imported)


@pytest.mark.parametrize("command", ["runs", "pause", "stop", "delete"])
def test_a_runs_rows_command_loads_neither_the_engine_nor_the_results_figures(tmp_path, command):
    imported = modules_imported_by(*rows_command(command), env=made_database(tmp_path))
    assert "app.cli.manage" in imported
    assert not {m for m in imported if m.startswith(("app.engine", "app.results", "app.exports"))}


def test_show_of_a_finished_run_whose_figures_are_kept_works_nothing_out_with_numpy(tmp_path, fake):
    # The end of a run that prints its rows keeps them; the digest keeps its speed figures.
    env, run_id = finished_run(tmp_path, fake)
    imported = modules_imported_by("show", run_id, env=env)
    assert "app.cli.target_rows" in imported
    assert not heavy_in(imported)
    assert not {m for m in imported if m.startswith("app.engine")}
