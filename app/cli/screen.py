"""The run screen in a terminal ("TUI"), drawn with rich's Live.

Run screen: a header (run, dataset, judge), progress with ETA, retries and elapsed time, a table
per target (state, rolling mean score, median latency, failures), the current task, and recent
errors; `l` shows the whole log instead, `s` the latest per-task scores, `q` quits (the run is
stopped, resumable). Summary screen at the end: score and auto-fail rate per target, the files
written, the gates, and how to go on. Without a terminal none of this is drawn (cli/output.py
prints plain lines).
"""

import collections
import os
import select
import sys
import threading
import time

from rich.console import Group
from rich.live import Live
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from ..runs.dto import judge_label
from .output import quality_line
from .output import slo_line
from .output import speed_line
from .output import step_table

try:
    import termios
    import tty
except ImportError:  # not a POSIX system: the screen works without keys
    termios = tty = None

SNAPSHOT_SECONDS = 1.0  # how often the screen asks the database for fresh figures
LOG_LINES = 12
ERROR_LINES = 5
KEYS_HINT = "q quit (resume later) · p pause · l log · s scores"
BAR_WIDTH = 40
# Events naming the item the engine is on: its answer, judgement, retry or failure.
FOCUS_EVENTS = ("item_done", "item_judged", "retry_scheduled", "item_failed")
# What the summary screen calls each file (cli/reports.py's keys).
FILE_LABELS = {
    "summary": "summary.json",
    "report": "report.html",
    "resultsJsonl": "results.jsonl",
    "resultsCsv": "results.csv",
    "junit": "JUnit XML",
}


def _num(value, digits=1):
    return "–" if value is None else f"{value:.{digits}f}"


def _clock(seconds):
    if seconds is None:
        return "–"
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"


class KeyReader:
    """Single keys from a terminal's stdin (cbreak mode, restored at stop), read in a thread."""

    def __init__(self, on_key, stream=None):
        self.on_key = on_key
        self.stream = stream or sys.stdin
        self._stop = threading.Event()
        self._thread = None
        self._saved = None

    def start(self):
        """Start reading when stdin is a terminal (else do nothing)."""
        if termios is None:
            return self
        try:
            fd = self.stream.fileno()
            if not os.isatty(fd):
                return self
            self._saved = termios.tcgetattr(fd)
            tty.setcbreak(fd)
        except (OSError, ValueError, termios.error):
            return self
        self._thread = threading.Thread(target=self._read, args=(fd,), daemon=True)
        self._thread.start()
        return self

    def _read(self, fd):
        while not self._stop.is_set():
            ready, _, _ = select.select([fd], [], [], 0.1)
            if ready:
                key = os.read(fd, 1).decode("utf-8", "replace")
                if key:
                    self.on_key(key)

    def stop(self):
        """Stop reading and give the terminal back as it was."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1)
        if self._saved is not None:
            termios.tcsetattr(self.stream.fileno(), termios.TCSADRAIN, self._saved)
            self._saved = None


class RunScreen:
    """The live run screen; `on_event` may be called from any thread, the rest from one."""

    def __init__(self, console, snapshot, keys=True, pause=None):
        self.console = console
        self.snapshot = snapshot  # (item_id) -> runs.watch.snapshot dict, or None
        self.pause = pause  # () -> None: pause the run (p), on the main thread
        self.pause_wanted = threading.Event()
        self._paused = False
        self.use_keys = keys
        self.summary = None
        self.data = None
        self.show = "errors"  # errors | log | scores
        self.quit = threading.Event()
        self._events = collections.deque(maxlen=200)
        self._errors = collections.deque(maxlen=50)
        self._lock = threading.Lock()
        self._focus = None
        self._retries = 0
        self._started = time.monotonic()
        self._fetched = 0.0
        self._live = None
        self._keys = None

    # ---- life ------------------------------------------------------------------------------
    def start(self, summary):
        """Show the screen for this run (its summary: runs.dto.run_summary)."""
        self.summary = summary
        self._live = Live(self.render(), console=self.console, auto_refresh=False, transient=True)
        self._live.start()
        if self.use_keys:
            self._keys = KeyReader(self.on_key).start()

    def stop(self):
        """Take the screen down (keys first, so the terminal is itself again)."""
        if self._keys is not None:
            self._keys.stop()
            self._keys = None
        if self._live is not None:
            self._live.stop()
            self._live = None

    def on_key(self, key):
        """q quits (stopping the run, resumable); p pauses it (the item in flight finishes,
        then the command ends with exit 3: resumable); l and s toggle the lower panel."""
        key = key.lower()
        if key == "q":
            self.quit.set()
        elif key == "p":
            self.pause_wanted.set()
        elif key in ("l", "s"):
            wanted = "log" if key == "l" else "scores"
            with self._lock:
                self.show = "errors" if self.show == wanted else wanted
        # The main thread redraws within a quarter second (only it touches the screen).

    def on_event(self, event):
        """Keep what the screen shows from the run's events."""
        name = event.get("event")
        with self._lock:
            message = event.get("message") or name
            self._events.append(message)
            if event.get("level") in ("ERROR", "WARNING"):
                self._errors.append(message)
            if name == "retry_scheduled":
                self._retries += 1
            if event.get("itemId") is not None and name in FOCUS_EVENTS:
                self._focus = event["itemId"]

    def refresh(self, force=False):
        """Redraw; ask the database for fresh figures at most every SNAPSHOT_SECONDS."""
        if self._live is None:
            return
        if self.pause_wanted.is_set() and not self._paused and self.pause is not None:
            self._paused = True
            message = self.pause()
            self.on_event({"event": "note", "message": message, "level": "WARNING"})
        now = time.monotonic()
        if force or now - self._fetched >= SNAPSHOT_SECONDS or self.data is None:
            self._fetched = now
            with self._lock:
                focus = self._focus
            self.data = self.snapshot(focus)
        self._live.update(self.render(), refresh=True)

    # ---- drawing ---------------------------------------------------------------------------
    def render(self):
        """The whole run screen as one rich renderable."""
        summary = self.summary or {}
        data = self.data or {}
        parts = [self._header(summary, data.get("progress"))]
        parts.append(self._targets(data.get("targets") or []))
        parts.append(self._current(data.get("focus")))
        parts.append(self._lower(data.get("scores") or []))
        parts.append(Text(KEYS_HINT, style="dim"))
        return Group(*parts)

    def _header(self, summary, progress):
        collections_ = ", ".join(c["name"] for c in summary.get("collections") or []) or "–"
        judge = judge_label(summary.get("judgeProviderName"), summary.get("judgeModel"))
        title = f"llmbench run {summary.get('runId', '')}"
        lines = [Text.assemble(("dataset ", "dim"), collections_, ("   judge ", "dim"), judge)]
        if progress:
            # The one progress figure the live view and the API show (runs/progress.py).
            filled = round(BAR_WIDTH * progress["overall_pct"] / 100)
            lines.append(
                Text.assemble(
                    ("━" * filled, "green"),
                    ("─" * (BAR_WIDTH - filled), "grey35"),
                    f" {progress['overall_pct']:5.1f} %  ",
                    (progress["phase"].lower(), "bold"),
                )
            )
            lines.append(
                Text(
                    f"answered {progress['benchmarked']}/{progress['total']}   judged "
                    f"{progress['judged']}/{progress['judge_total']}   failed "
                    f"{progress['answer_failed'] + progress['judge_failed']}"
                )
            )
            elapsed = time.monotonic() - self._started
            lines.append(
                Text.assemble(
                    ("elapsed ", "dim"),
                    _clock(elapsed),
                    ("   ETA ", "dim"),
                    _clock(progress["eta_seconds"]),
                    ("   retries ", "dim"),
                    str(self._retries),
                    ("   state ", "dim"),
                    summary.get("stateLabel") or progress["state"],
                )
            )
        return Panel(Group(*lines), title=title, title_align="left")

    def _targets(self, rows):
        table = Table(pad_edge=False)
        for name, justify in (
            ("target", "left"),
            ("state", "left"),
            ("answered", "right"),
            ("mean score", "right"),
            ("median ms", "right"),
            ("failed", "right"),
        ):
            table.add_column(name, justify=justify, no_wrap=name != "target")
        for row in rows:
            table.add_row(
                row["label"],
                row["state"],
                f"{row['answered']}/{row['total']}",
                _num(row["meanScore"]),
                _num(row["medianMs"], 0),
                str(row["failed"]),
            )
        return table

    def _current(self, focus):
        if not focus:
            text = Text("waiting for the first answer…", style="dim")
        else:
            text = Text.assemble(
                (focus["taskId"], "bold"),
                f" ({focus['category'] or 'no category'}) on {focus['target']}: ",
                focus["question"],
            )
        return Panel(text, title="current task", title_align="left")

    def _lower(self, scores):
        with self._lock:
            show = self.show
            errors = list(self._errors)[-ERROR_LINES:]
            log = list(self._events)[-LOG_LINES:]
        if show == "scores":
            table = Table(pad_edge=False, show_edge=False)
            table.add_column("task")
            table.add_column("target")
            table.add_column("score", justify="right")
            for s in scores:
                flag = " auto-fail" if s["autoFail"] else ""
                table.add_row(s["taskId"], s["target"], _num(s["score"]) + flag)
            return Panel(table, title="latest scores (s to hide)", title_align="left")
        if show == "log":
            body = Text("\n".join(log) or "no events yet", overflow="ellipsis")
            return Panel(body, title="log (l to hide)", title_align="left")
        body = Text("\n".join(errors) or "no errors", style="red" if errors else "dim")
        return Panel(body, title="recent errors", title_align="left")


def summary_panel(summary, rows, artifacts, gate_failures, hint):
    """The summary screen: score and auto-fail rate per target, files written, gates."""
    table = Table(pad_edge=False)
    for name, justify in (
        ("target", "left"),
        ("score", "right"),
        ("auto-fail rate", "right"),
        ("completed", "right"),
        ("failed", "right"),
        ("p50 ms", "right"),
    ):
        table.add_column(name, justify=justify)
    for row in rows:
        rate = row.get("autoFailRate")
        table.add_row(
            row["target"],
            _num(row["avgScore"]),
            "–" if rate is None else f"{rate:.1f} %",
            str(row["completed"]),
            str(row["failed"]),
            _num(row.get("p50Ms"), 0),
        )
    parts = [
        Text(
            f"{summary.get('stateLabel', summary['state'])}: "
            f"{summary['completedItems']} completed, {summary['failedItems']} failed, "
            f"{summary['counts']['NEW']} not answered"
        ),
        table,
    ]
    # Speed as a load tester reports it, one compact line per target (results/speed.py).
    for row in rows:
        if quality_line(row):
            parts.append(Text.assemble((f"{row['target']}: ", "dim"), quality_line(row)))
        parts.append(Text.assemble((f"{row['target']}: ", "dim"), speed_line(row.get("speed"))))
        if row.get("slo"):  # with an SLO in the run: its goodput and the highest load meeting it
            parts.append(Text.assemble((f"{row['target']}: ", "dim"), slo_line(row["slo"])))
        lines = step_table(row.get("steps"))
        if lines:  # a run with load steps: the figures of each step
            parts.append(Text(f"{row['target']} per load step:", style="dim"))
            parts.append(Text("\n".join(lines)))
    for key, path in artifacts.items():
        parts.append(Text.assemble((f"{FILE_LABELS.get(key, key)}: ", "dim"), str(path)))
    for failure in gate_failures:
        parts.append(Text(f"gate {failure['gate']} failed: {failure['message']}", style="red"))
    if hint:
        parts.append(Text(f"continue with: {hint}", style="bold"))
    return Panel(Group(*parts), title=f"llmbench run {summary['runId']}", title_align="left")
