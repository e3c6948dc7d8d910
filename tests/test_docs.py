"""The README stays true: every LLMBENCH_* name and every CLI command is documented."""

import re
from pathlib import Path

from app import cli
from app import config

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()


def test_every_documented_env_name_is_a_config_key():
    for name in re.findall(r"`(LLMBENCH_[A-Z_0-9]+)`", README):
        assert name.removeprefix("LLMBENCH_") in config.DEFAULTS, name


def test_every_config_env_name_is_in_the_readme():
    for name in config.ENV_NAMES:
        assert f"`{name}`" in README, name


def test_every_cli_command_is_in_the_readme():
    for command in cli.main.commands:
        assert f"`{command}" in README, command


def test_readme_holds_the_install_and_test_commands():
    assert ".venv/bin/llmbench serve" in README
    assert ".venv/bin/python -m pytest" in README


def test_ci_runs_the_readme_test_command():
    ci = (Path(__file__).resolve().parent.parent / ".ci" / "run").read_text()
    assert ".venv/bin/python -m pytest" in ci
