"""`llmbench --version` and `--help` start at once: they import no command, no database driver,
no numpy, web framework, charts or HTTP client; `validate` of a small dataset on SQLite imports
no numpy, PostgreSQL driver, web framework, charts or web server (their time is
bench/bench_cli_start.py's)."""

import json
import os
import subprocess
import sys

import pytest

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


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_help_line_is_the_first_paragraph_of_its_commands_help(name):
    command = load(COMMANDS[name])
    assert SUMMARIES[name] == " ".join(command.help.split("\n\n")[0].split())


# Not psycopg: Peewee imports the PostgreSQL driver at its own import whenever it is installed
# (a finder that hid it from Peewee broke its PostgreSQL fields), so that import stays.
NOT_FOR_VALIDATE = ("numpy", "flask", "pygal", "gunicorn")


def test_validate_of_a_small_dataset_imports_no_numpy_web_app_or_charts(tmp_path):
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(
        "".join(
            json.dumps({"id": f"t{n}", "category": "math", "prompt": f"What is {n} + {n}?"}) + "\n"
            for n in range(3)
        )
    )
    env = {
        **os.environ,
        "LLMBENCH_DB": str(tmp_path / "cli.db"),
        "LLMBENCH_MASTER_KEY_BASE64": TEST_KEY_B64,
    }
    imported = modules_imported_by("validate", str(tasks), env=env)
    assert "app.datasets.importer" in imported  # the command ran
    assert not {m for m in imported if m.split(".")[0] in NOT_FOR_VALIDATE}
