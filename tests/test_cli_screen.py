"""The run screen in a terminal: a real `llmbench run` in tmux (send-keys, capture-pane) against
the fake server; the screen's parts drawn without a terminal; plain lines without one."""

import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest
from rich.console import Console

from app.cli.screen import RunScreen
from app.cli.screen import summary_panel
from app.db.migrations import open_db
from app.db.models import Run
from tests.cli_helpers import cli_env
from tests.cli_helpers import make_cli
from tests.cli_helpers import rows
from tests.cli_helpers import write_config

LLMBENCH = Path(sys.executable).with_name("llmbench")


class Pane:
    """One tmux session running a command; read what it shows, type keys into it."""

    def __init__(self, command, env, width=120, height=48):
        self.name = f"llmbench-test-{uuid.uuid4().hex[:8]}"
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        script = f"env {exports} {command}; echo EXIT=$?; sleep 120"
        subprocess.run(
            [
                "tmux",
                "new-session",
                "-d",
                "-s",
                self.name,
                "-x",
                str(width),
                "-y",
                str(height),
                "bash",
                "-c",
                script,
            ],
            check=True,
        )

    def text(self):
        out = subprocess.run(
            ["tmux", "capture-pane", "-p", "-t", self.name], capture_output=True, text=True
        )
        return out.stdout

    def wait_for(self, needle, timeout=60):
        """The pane's text once it shows `needle` (text, or a regex pattern; bounded)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.text()
            if needle.search(text) if isinstance(needle, re.Pattern) else needle in text:
                return text
            time.sleep(0.1)
        raise AssertionError(f"the screen never showed {needle!r}:\n{self.text()}")

    def keys(self, *keys):
        subprocess.run(["tmux", "send-keys", "-t", self.name, *keys], check=True)

    def close(self):
        subprocess.run(["tmux", "kill-session", "-t", self.name], capture_output=True)


@pytest.fixture
def pane_env(tmp_path):
    env = {k: v for k, v in cli_env(tmp_path).items()}
    env["TERM"] = "xterm-256color"
    env["PATH"] = os.environ.get("PATH", "")
    return env


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
def test_the_run_screen_in_tmux_shows_the_run_and_answers_its_keys(tmp_path, fake, pane_env):
    fake.default_latency = 0.25  # slow enough to press keys while it runs
    path = write_config(tmp_path, fake, tasks=40)
    pane = Pane(f"{LLMBENCH} run -c {path}", pane_env)
    try:
        screen = pane.wait_for("current task")
        assert "llmbench run ci-" in screen and "judge fake/judge" in screen
        for part in ("target", "state", "mean score", "median ms", "fake/m1", "fake/m2"):
            assert part in screen
        assert "q quit (resume later) · p pause · l log · s scores" in screen
        # Progress moves, read from the run's own counts.
        screen = pane.wait_for(re.compile(r"answered [1-9][0-9]*/80"))
        assert "elapsed" in screen and "ETA" in screen and "retries" in screen
        pane.keys("s")
        pane.wait_for("latest scores (s to hide)")
        pane.keys("l")
        screen = pane.wait_for("log (l to hide)")
        assert " on fake/m1: " in screen  # the run's events
        pane.keys("q")
        screen = pane.wait_for("EXIT=")
        open_db(pane_env["LLMBENCH_DB"])  # the run's process has ended: read its database
        (run,) = rows(Run)
        assert "EXIT=3" in screen
        assert f"continue with: llmbench resume {run.run_id}" in screen  # the summary screen
        assert "auto-fail rate" in screen
        assert run.control == "stopped"
        (tmp_path / "screen.txt").write_text(screen)
    finally:
        pane.close()


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
def test_the_summary_screen_lists_scores_auto_fail_rates_and_files(tmp_path, fake, pane_env):
    # A short folder for the JUnit file: the summary box wraps a path longer than its width,
    # as a parallel worker's tmp_path (…/popen-gw2/test_…) can be.
    short = Path(tempfile.mkdtemp(prefix="llmbench-"))
    out, junit = tmp_path / "runs", short / "junit.xml"
    path = write_config(tmp_path, fake, tasks=2, out_dir=str(out))
    pane = Pane(f"{LLMBENCH} run -c {path} --junit {junit}", pane_env)
    try:
        screen = pane.wait_for("EXIT=")
        assert "EXIT=0" in screen and "finished: 4 completed, 0 failed" in screen
        assert "fake/m1" in screen and "80.0" in screen and "0.0 %" in screen
        open_db(pane_env["LLMBENCH_DB"])
        (run,) = rows(Run)
        assert "summary.json:" in screen and "JUnit XML:" in screen
        assert str(junit) in screen and run.run_id in screen
    finally:
        pane.close()
        shutil.rmtree(short, ignore_errors=True)


def test_without_a_terminal_the_run_prints_plain_lines(tmp_path, fake):
    result = make_cli(tmp_path)("run", "-c", write_config(tmp_path, fake))
    assert result.exit_code == 0
    assert "current task" not in result.output and "Run ci-" in result.stderr
    assert "fake/m1" in result.stdout  # the per-target table


# ---- the screen's parts, drawn into a recording console ------------------------------------

SUMMARY = {
    "runId": "r-1",
    "judgeProviderName": "p",
    "judgeModel": "j",
    "collections": [{"name": "bank"}],
}
DATA = {
    "progress": {
        "total": 10,
        "judge_total": 10,
        "benchmarked": 5,
        "judged": 3,
        "answer_failed": 1,
        "judge_failed": 0,
        "overall_pct": 40.0,
        "phase": "BENCHMARKING",
        "eta_seconds": 75,
        "state": "running",
    },
    "targets": [
        {
            "label": "p/m1",
            "state": "running",
            "answered": 5,
            "total": 10,
            "meanScore": 72.5,
            "medianMs": 120.0,
            "failed": 1,
        }
    ],
    "focus": {
        "taskId": "t7",
        "category": "Water",
        "target": "p/m1",
        "status": "NEW",
        "question": "How do you boil water?",
    },
    "scores": [{"taskId": "t3", "target": "p/m1", "score": 90.0, "autoFail": True}],
}


def _draw(screen):
    console = Console(record=True, width=100, force_terminal=False)
    console.print(screen.render())
    return console.export_text()


def _screen():
    screen = RunScreen(Console(), lambda item_id: DATA, keys=False)
    screen.summary, screen.data = SUMMARY, DATA
    return screen


def test_the_screen_draws_header_progress_targets_and_the_current_task():
    text = _draw(_screen())
    assert "llmbench run r-1" in text and "dataset bank" in text and "judge p/j" in text
    assert "40.0 %" in text and "answered 5/10" in text and "ETA 0:01:15" in text
    assert "p/m1" in text and "72.5" in text and "120" in text
    assert "t7 (Water) on p/m1: How do you boil water?" in text


def test_keys_toggle_the_log_and_the_scores_and_q_asks_to_quit():
    screen = _screen()
    screen.on_event({"event": "item_failed", "message": "t1 failed: 500", "level": "ERROR"})
    screen.on_event({"event": "item_done", "message": "t2 on p/m1: 100 ms", "itemId": 2})
    assert "t1 failed: 500" in _draw(screen) and "recent errors" in _draw(screen)
    screen.on_key("s")
    assert "latest scores" in _draw(screen) and "90.0 auto-fail" in _draw(screen)
    screen.on_key("l")
    assert "t2 on p/m1: 100 ms" in _draw(screen)
    screen.on_key("l")
    assert "recent errors" in _draw(screen)
    assert not screen.quit.is_set()
    screen.on_key("q")
    assert screen.quit.is_set()


def test_the_current_task_follows_answers_judgements_retries_and_failures():
    seen = []
    screen = RunScreen(Console(), lambda item_id: seen.append(item_id) or DATA, keys=False)
    screen._live = type("Live", (), {"update": lambda self, *a, **k: None})()
    for n, name in enumerate(("item_done", "retry_scheduled", "item_judged", "item_failed")):
        screen.on_event({"event": name, "message": name, "itemId": n + 1})
        screen.refresh(force=True)
    screen.on_event({"event": "phase_changed", "message": "Phase JUDGING"})
    screen.refresh(force=True)
    assert seen == [1, 2, 3, 4, 4]


def test_retries_are_counted_from_the_events():
    screen = _screen()
    for _ in range(3):
        screen.on_event({"event": "retry_scheduled", "message": "later", "level": "WARNING"})
    assert "retries 3" in _draw(screen)


def test_the_summary_panel_names_gates_and_the_resume_command():
    console = Console(record=True, width=100)
    summary = {
        **SUMMARY,
        "state": "finished",
        "completedItems": 9,
        "failedItems": 1,
        "counts": {"NEW": 0},
    }
    rows_ = [
        {
            "target": "p/m1",
            "avgScore": 72.5,
            "autoFailRate": 10.0,
            "completed": 9,
            "failed": 1,
            "p50Ms": 120.0,
        }
    ]
    gate = {"gate": "--fail-under", "message": "p/m1: score 72.5 is under 80.0"}
    console.print(summary_panel(summary, rows_, {"junit": "/x/j.xml"}, [gate], None))
    text = console.export_text()
    assert "10.0 %" in text and "JUnit XML: /x/j.xml" in text
    assert "gate --fail-under failed: p/m1: score 72.5 is under 80.0" in text


def test_the_summary_panel_gives_a_speed_line_per_target():
    console = Console(record=True, width=160)
    summary = {**SUMMARY, "state": "finished", "completedItems": 9, "failedItems": 0}
    summary["counts"] = {"NEW": 0}
    speed = {
        "ttftP50Ms": 120.0,
        "ttftP90Ms": 340.0,
        "itlP50Ms": 21.0,
        "e2eP90Ms": 4100.0,
        "outputTokensPerSecond": 310.2,
        "requestsPerSecond": 2.1,
        "achievedConcurrency": 3.9,
    }
    row = {"target": "p/m1", "avgScore": 72.5, "completed": 9, "failed": 0, "speed": speed}
    console.print(summary_panel(summary, [row], {}, [], None))
    text = console.export_text()
    assert "p/m1: TTFT p50 120 / p90 340 ms · ITL p50 21.0 ms · e2e p90 4100 ms" in text
    assert "310.2 out tok/s · 2.10 req/s · concurrency 3.90" in text
