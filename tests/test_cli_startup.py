"""What `llmbench run` loads and leaves behind as a process: the libraries a quiet run does not use
stay unimported (issue 9: start-up counts), and the database file is whole when it exits."""

import gc
import os
import subprocess
import sys

import click

from app.cli import datasets
from app.cli.lazy import load
from app.config import REPO_ROOT
from tests.cli_helpers import cli_env
from tests.cli_helpers import judge_scores
from tests.cli_helpers import make_cli
from tests.cli_helpers import write_bank
from tests.cli_helpers import write_config

# The live screen (rich), report.html (Jinja, pygal) and schedules (APScheduler): a quiet run
# that writes no files uses none of them; loaded anyway, they were ~0.2 s of every start-up.
UNUSED_BY_A_QUIET_RUN = ("rich", "pygal", "jinja2", "apscheduler", "flask")

PROBE = """
import sys
import app.cli.watched_run, app.cli.progress, app.cli.runs
print(" ".join(m for m in sys.argv[1:] if m in sys.modules))
"""


def test_the_run_command_imports_no_screen_report_or_schedule_library():
    result = subprocess.run(
        [sys.executable, "-c", PROBE, *UNUSED_BY_A_QUIET_RUN],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert result.stdout.split() == []


def test_the_run_command_loads_numpy_when_its_calls_are_done_not_before():
    # The digest and the gates (numpy, the results' figures) are loaded at the run's end
    # (watched_run.AFTER_RUN): the first request does not wait for them.
    result = subprocess.run(
        [sys.executable, "-c", PROBE, "numpy", "app.results.averages", "app.schedules.digest"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert result.stdout.split() == []


def test_a_finished_run_command_leaves_the_database_file_whole(tmp_path, fake):
    config = write_config(tmp_path, fake, tasks=2)
    fake.responder = judge_scores({"m1": 80, "m2": 80})
    env = {k: v for k, v in os.environ.items() if not k.startswith("LLMBENCH_")}
    result = subprocess.run(
        [sys.executable, "-m", "app.cli", "run", "-c", str(config), "-q"],
        cwd=REPO_ROOT,
        env={**env, **cli_env(tmp_path)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    # Its connections were closed before the process ended: the WAL is checkpointed into the
    # file and removed, so copying cli.db alone copies the run.
    assert (tmp_path / "cli.db").exists()
    assert not (tmp_path / "cli.db-wal").exists()


def test_a_command_runs_with_its_modules_frozen_and_thaws_them_when_it_ends(tmp_path, monkeypatch):
    # Frozen, the modules a command loaded are not walked by each collection its work
    # triggers (creating a 300-task run's 600 items: 0.126 -> 0.060 s); thawed after, so a
    # process running many commands (these tests) still collects what each one left behind.
    seen = []
    check = datasets.importer.check
    monkeypatch.setattr(
        datasets.importer,
        "check",
        lambda *args, **kwargs: seen.append(gc.get_freeze_count()) or check(*args, **kwargs),
    )
    cli = make_cli(tmp_path)
    before = gc.get_freeze_count()
    result = cli("validate", write_bank(tmp_path / "bank.jsonl", 2))
    assert result.exit_code == 0, result.output
    assert len(seen) == 1 and seen[0] > before
    assert gc.get_freeze_count() == before


def test_what_a_command_loads_is_frozen_at_once_so_the_next_collection_does_not_walk_it(
    tmp_path, monkeypatch
):
    # Imported with the collector paused, a command's objects all sat in its youngest
    # generation until the command froze them, and the first collection in between walked
    # every one (36 ms of a 10-task run's CPU, 14 ms of validate's).
    (tmp_path / "llmbench_many_objects.py").write_text("ITEMS = [[n] for n in range(50_000)]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "llmbench_many_objects", raising=False)
    before = gc.get_freeze_count()
    with click.Context(click.Command("probe")):
        items = load("llmbench_many_objects:ITEMS")
        young = gc.get_count()[0]
        frozen = gc.get_freeze_count()
    assert len(items) == 50_000
    assert young < 1_000 and frozen >= before + 50_000
    assert gc.get_freeze_count() == before  # thawed when the command ended
    monkeypatch.delitem(sys.modules, "llmbench_many_objects")
