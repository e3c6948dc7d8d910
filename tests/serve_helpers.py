"""A real `llmbench serve` in a child process, on its own free port, for process tests."""

import os
import socket
import subprocess
import sys
import tempfile
import time

import requests

from app.config import REPO_ROOT


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Served:
    """`llmbench serve` on a free port with LLMBENCH_HOME=`home` (and `extra_env`), started on
    enter (ready once /api/status answers), stopped on exit. `command` is how to call llmbench
    (this checkout's `python -m app.cli` by default; an installed one's script for the wheel)."""

    def __init__(self, home, *, extra_env=None, command=None, cwd=None, timeout=60):
        self.home = home
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        env = {k: v for k, v in os.environ.items() if not k.startswith("LLMBENCH_")}
        env.pop("XDG_RUNTIME_DIR", None)  # gunicorn's control socket would go there instead
        if command is not None:
            env.pop("PYTHONPATH", None)  # an installed llmbench: not this checkout's app
        env.update({"LLMBENCH_HOME": str(home), **(extra_env or {})})
        self.env = env
        self.command = command or [sys.executable, "-m", "app.cli"]
        self.cwd = cwd or REPO_ROOT
        self.timeout = timeout
        self.proc = None
        self.log = None

    def __enter__(self):
        self.log = tempfile.TemporaryFile(mode="w+")
        self.proc = subprocess.Popen(
            [*self.command, "serve", "--port", str(self.port)],
            cwd=self.cwd,
            env=self.env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
            text=True,
        )
        deadline = time.monotonic() + self.timeout
        while True:
            if self.proc.poll() is not None:
                raise AssertionError(f"llmbench serve ended: {self.output()}")
            try:
                if requests.get(self.base + "/api/status", timeout=2).status_code == 200:
                    return self
            except (requests.ConnectionError, requests.Timeout):
                pass  # not listening yet, or still starting on a busy machine: ask again
            if time.monotonic() > deadline:
                raise AssertionError(f"llmbench serve not ready in {self.timeout} s")
            time.sleep(0.05)

    def get(self, path, **kwargs):
        return requests.get(self.base + path, timeout=10, **kwargs)

    def output(self):
        self.log.seek(0)
        return self.log.read()

    def __exit__(self, *exc):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self.log.close()
