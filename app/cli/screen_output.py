"""A run's output for people: the live run screen (cli/screen.py, rich) on a terminal, plain
lines elsewhere; loaded by progress.make_output only when neither --json nor --quiet is given."""

import sys

from rich.console import Console

from ..errors import LlmbenchError
from ..runs.control import pause_run
from ..runs.queries import get_run
from ..runs.watch import snapshot
from .output import db_context
from .progress import Output
from .screen import RunScreen
from .screen import summary_panel


def _snapshot(run_id):
    """The screen's figures, read on the main thread with its own connection."""

    def read(item_id):
        with db_context():
            return snapshot(get_run(run_id), item_id)

    return read


def _pause(run_id):
    """The screen's `p`: pause the run as `llmbench pause` does; what happened, as a line."""

    def pause():
        with db_context():
            try:
                pause_run(run_id, reason="paused from the run screen (p)")
            except LlmbenchError as exc:
                errors = getattr(exc, "errors", None)
                return f"Cannot pause: {errors[0]['message'] if errors else exc.message}"
        return f"Pausing: the items in flight finish, then continue with llmbench resume {run_id}"

    return pause


class ScreenOutput(Output):
    """Output with the live screen when stderr is a terminal (CI logs are none: plain lines)."""

    def __init__(self, as_json, quiet, terminal=None):
        super().__init__(as_json, quiet)
        self.console = Console(stderr=True)
        # `terminal` decides for tests; else rich's own test (FORCE_TERMINAL, a TTY, ...).
        self.terminal = self.console.is_terminal if terminal is None else terminal

    def open_screen(self, summary):
        if not self.terminal:
            return None
        run_id = summary["runId"]
        return RunScreen(self.console, _snapshot(run_id), pause=_pause(run_id))

    def print_summary(self, summary, rows, artifacts, gate_failures, hint):
        Console(file=sys.stdout).print(summary_panel(summary, rows, artifacts, gate_failures, hint))
