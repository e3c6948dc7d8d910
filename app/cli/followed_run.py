"""A run handed to the orchestrator of a `llmbench serve` on the same database, followed from
the database: the same screen (or lines, or JSONL) as a run worked here, the same exit codes;
Ctrl-C (or `q`) pauses it, and it stays resumable (here or in the web app)."""

import signal
import threading

from ..db.models import RunLog
from ..engine import lease
from ..runs.control import pause_run
from ..runs.dto import run_summary
from ..runs.queries import get_run
from ..runs.queue import cancel_queued
from ..runs.queue import queued_runs
from ..runs.state import run_state
from .output import EXIT_INTERRUPTED
from .output import EXIT_OK
from .output import db_context
from .output import emit

# How often the run's state and its new log lines are read (the screen redraws between).
POLL_SECONDS = 0.25
# Log lines this module says in its own words (run_started carries the run's summary).
SAID_HERE = {"run_started", "run_resumed", "run_queued"}
CTRL_C_REASON = "paused from the command line that followed it (Ctrl-C)"


def server_holder():
    """The lease row when a live `llmbench serve` holds the orchestrator, else None."""
    held = lease.live_holder()
    return held if held is not None and lease.is_server(held.holder) else None


def follow_in_server(run_id, out, holder):
    """Follow a run the server's orchestrator works (or will, once the queue reaches it) until
    it is finished, paused or stopped. Ctrl-C/SIGTERM (or `q`) pause it (a queued one is taken
    out of the queue, stopped). Returns EXIT_OK when it finished, EXIT_INTERRUPTED otherwise."""
    with db_context():
        run = get_run(run_id)
        out.event({"event": "run_started", "run": run_summary(run)})
        message = (
            f"Handed to the orchestrator of {lease.describe_holder(holder)} (it holds this "
            "database); following the run here. Ctrl-C pauses it."
        )
        _say(out, "handed_to_server", run_id, message)
    stop = threading.Event()
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    last_log, said_queued, said_started, state = 0, False, False, None
    try:
        while True:
            with db_context():
                run = get_run(run_id)
                state = run_state(run)
                last_log = _relay_logs(run, last_log, out)
                if state == "queued" and not said_queued:
                    said_queued = True
                    _say_queued(run_id, out)
                elif said_queued and state == "running" and not said_started:
                    said_started = True
                    _say(out, "run_dequeued", run_id, "Started: the server's queue reached it")
                if stop.is_set() or state in ("finished", "paused", "stopped"):
                    break
            out.refresh()
            if out.quit_requested():
                stop.set()
            else:
                stop.wait(POLL_SECONDS)
    except KeyboardInterrupt:
        stop.set()
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    if stop.is_set():
        state = _pause(run_id, out)
    return EXIT_OK if state == "finished" else EXIT_INTERRUPTED


def _relay_logs(run, last_log, out):
    """Pass the run's new log lines to the output as events; returns the last id seen."""
    lines = list(
        RunLog.select().where((RunLog.run == run) & (RunLog.id > last_log)).order_by(RunLog.id)
    )
    for line in lines:
        if line.event in SAID_HERE:
            continue
        event = {**(line.data if isinstance(line.data, dict) else {})}
        event.update(
            {"event": line.event, "runId": run.run_id, "message": line.message, "level": line.level}
        )
        out.event(event)
    return lines[-1].id if lines else last_log


def _say_queued(run_id, out):
    queue = queued_runs()
    position = next((r.position for r in queue if r.run_id == run_id), None)
    message = (
        f"Queued (position {position}): the server is working on another run; this one "
        "starts when it ends"
    )
    _say(out, "run_queued", run_id, message, position=position)


def _say(out, event, run_id, message, **data):
    """A line for people, or a JSONL event with --json."""
    if out.as_json:
        emit({"event": event, "runId": run_id, "message": message, **data})
    else:
        out.note(message)


def _pause(run_id, out):
    """Ctrl-C while following: pause the run (a queued one leaves the queue, stopped)."""
    with db_context():
        run = get_run(run_id)
        state = run_state(run)
        if state == "running":
            pause_run(run_id, reason=CTRL_C_REASON)
            out.note(
                "Paused: the server finishes the item in flight; continue it with "
                f"llmbench resume {run_id} or in the web app"
            )
        elif state == "queued":
            cancel_queued(run_id)
        return run_state(get_run(run_id))


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt
