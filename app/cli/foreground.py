"""The foreground run at the CLI edge: the engine's loop in a worker thread, progress and
Ctrl-C in the main thread, the exit code at the end."""

import signal
import threading

from ..engine.foreground import run_foreground
from ..errors import LlmbenchError
from ..runs.dto import run_summary
from ..runs.queries import get_run
from .output import EXIT_INTERRUPTED
from .output import EXIT_OK
from .output import CliError
from .output import averages
from .output import db_context
from .output import translate


def run_in_foreground(run_id, cfg, out, *, resume=False, max_budget_usd=None):
    """Work on the run in a thread while the main thread shows progress; Ctrl-C/SIGTERM stop
    it cleanly. `resume` continues a paused or stopped run first. Returns the exit code."""
    stop = threading.Event()
    outcome = {}

    finished = threading.Event()

    def work():
        with db_context():
            try:
                outcome["state"] = run_foreground(
                    run_id,
                    cfg,
                    resume=resume,
                    max_budget_usd=max_budget_usd,
                    on_event=out.event,
                    stop_event=stop,
                )
            except BaseException as exc:  # reported by the main thread
                outcome["error"] = exc
            finally:
                finished.set()

    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    worker = threading.Thread(target=work, name="llmbench-run", daemon=True)
    worker.start()
    # Wait on an Event, not Thread.join: on Python 3.11 a Ctrl-C inside join() can leave the
    # thread marked finished while it still runs, and the process would exit under it.
    try:
        while not finished.wait(0.25):
            out.refresh()
    except KeyboardInterrupt:
        stop.set()
        out.note("Stopping: abandoning the requests in flight (Ctrl-C again to quit at once)")
        try:
            finished.wait(30)
        except KeyboardInterrupt:
            pass
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    error = outcome.get("error")
    if isinstance(error, LlmbenchError):
        out.stop()
        raise translate(error, out.as_json)
    if error is not None:
        out.stop()
        raise CliError(
            f"the run stopped on an unexpected error: {error!r}; continue it "
            f"with: llmbench resume {run_id}"
        )
    with db_context():
        summary = run_summary(get_run(run_id))
        state = summary["state"] if stop.is_set() or "state" not in outcome else outcome["state"]
        code = EXIT_OK if state == "finished" else EXIT_INTERRUPTED
        out.finish(summary, averages(run_id), code)
    return code


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt
