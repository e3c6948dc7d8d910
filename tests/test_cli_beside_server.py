"""One CLI beside a running server: `llmbench run` on a database a real `llmbench serve`
holds hands the run to the server's orchestrator and follows it from the database (the same
exit codes; Ctrl-C pauses it) instead of exiting 1."""

import json
import os
import signal
import subprocess
import sys
import threading

import pytest
from click.testing import CliRunner

from app.cli import main
from app.config import REPO_ROOT
from tests.cli_helpers import cli_env
from tests.cli_helpers import judge_scores
from tests.cli_helpers import write_config
from tests.serve_helpers import Served


@pytest.fixture
def served(tmp_path):
    with Served(tmp_path / "home", extra_env=cli_env(tmp_path)) as server:
        yield server


@pytest.fixture
def cli(tmp_path):
    runner = CliRunner()

    def invoke(*args):
        return runner.invoke(main, [str(a) for a in args], env=cli_env(tmp_path))

    return invoke


def _show(cli, run_id):
    return json.loads(cli("show", run_id, "--json").stdout)["run"]


def _run_id(result):
    return next(
        json.loads(line)["runId"]
        for line in result.stdout.splitlines()
        if line.startswith("{") and "runId" in line
    )


def test_run_beside_a_server_hands_the_run_over_and_finishes(served, cli, tmp_path, fake):
    fake.responder = judge_scores({})
    result = cli("run", "-c", write_config(tmp_path, fake), "--json")
    assert result.exit_code == 0, result.output
    assert "Handed to the orchestrator of llmbench serve" in result.stdout
    run = _show(cli, _run_id(result))
    assert run["state"] == "finished"
    assert fake.chat_calls()  # the server's orchestrator asked the model server


def test_a_gate_that_fails_beside_a_server_exits_4(served, cli, tmp_path, fake):
    fake.responder = judge_scores({})
    result = cli("run", "-c", write_config(tmp_path, fake), "--fail-under", "90", "--quiet")
    assert result.exit_code == 4, result.output


def _ctrl_c_as_a_terminal_gives_it():
    # A child inherits an ignored or blocked SIGINT: in the whole suite a worker process that
    # had either made the child deaf to the test's Ctrl-C (it ran on to the end: exit 0, or past
    # the 60 s wait), though the test passed alone and under xdist by itself.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


class CliProcess:
    """`llmbench run -c CONFIG --json` in a child process, its JSONL lines collected; `started`
    is set once the first item event arrives (the server works on the run)."""

    def __init__(self, tmp_path, config):
        env = {k: v for k, v in os.environ.items() if not k.startswith("LLMBENCH_")}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "app.cli", "run", "-c", str(config), "--json"],
            cwd=REPO_ROOT,
            env={**env, **cli_env(tmp_path)},
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            preexec_fn=_ctrl_c_as_a_terminal_gives_it,
        )
        self.lines = []
        self.started = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append(line)
            if '"event": "item_' in line:
                self.started.set()

    def run_id(self):
        return next(json.loads(line)["runId"] for line in self.lines if '"runId"' in line)

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)
        self._reader.join(timeout=5)
        self.proc.stdout.close()


def test_ctrl_c_beside_a_server_pauses_the_run_resumably(served, cli, tmp_path, fake):
    answer = judge_scores({})
    # Still running when the Ctrl-C comes, however late a starved test sends it: one call at a
    # time, 1 s each, so the 120 calls would take two minutes. (A responder's reply takes its
    # own latency, not default_latency: before, every call came back at once, the run was done
    # in about 0.1 s and a starved test's signal came after it finished: exit 0.)
    fake.responder = lambda call: {**answer(call), "latency": 1.0}
    child = CliProcess(tmp_path, write_config(tmp_path, fake, tasks=30, concurrency=1))
    try:
        assert child.started.wait(60), "".join(child.lines)
        child.proc.send_signal(signal.SIGINT)
        assert child.proc.wait(timeout=60) == 3, "".join(child.lines)
    finally:
        child.close()
    run_id = child.run_id()
    run = _show(cli, run_id)
    assert run["state"] == "paused" and "Ctrl-C" in run["controlReason"]
    fake.responder = answer
    resumed = cli("resume", run_id, "--quiet")
    assert resumed.exit_code == 0, resumed.output
    assert _show(cli, run_id)["state"] == "finished"


def test_a_run_waits_in_the_servers_queue_while_it_works_on_another(served, cli, tmp_path, fake):
    fake.responder = judge_scores({})
    fake.default_latency = 0.05
    first = CliProcess(tmp_path, write_config(tmp_path, fake, tasks=20))
    try:
        assert first.started.wait(60), "".join(first.lines)
        second = cli("run", "-c", write_config(tmp_path, fake, name="b.yml"), "--json")
        assert first.proc.wait(timeout=120) == 0
    finally:
        first.close()
    assert second.exit_code == 0, second.output
    said = [json.loads(line) for line in second.stdout.splitlines() if line.startswith("{")]
    assert [e["position"] for e in said if "position" in e] == [1]
