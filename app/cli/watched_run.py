"""The foreground run at the CLI edge: the engine's loop in a worker thread, progress, Ctrl-C
and the screen's `q` in the main thread; then the files, the quality gates and the exit code."""

import signal
import threading

from ..config import load as load_config
from ..db.connection import close_idle
from ..engine.foreground import run_foreground
from ..errors import LlmbenchError
from ..heap import give_back
from ..results.composite import settings_from
from ..runs.control import stop_run
from ..runs.dto import run_summary
from ..runs.queries import get_run
from ..runs.queries import waiting_runs
from ..runs.state import control_reason
from ..runs.state import run_state
from .arenas import cap_arenas
from .lazy import load
from .output import EXIT_GATE
from .output import EXIT_INTERRUPTED
from .output import EXIT_OK
from .output import CliError
from .output import db_context
from .output import emit
from .output import translate
from .resume_hint import resume_hint

# The files' writers (report.html's Jinja templates and pygal charts among them) are imported
# only when the run has files to write: most runs write none.
WRITE_OUTPUTS = "app.cli.reports:write_outputs"
WRITE_SUMMARY_MD = "app.cli.reports:write_summary_md"
# The per-target rows the end prints (the exporters' averages, ratings' figures) only when they
# are shown: --quiet, as in CI, shows none.
TARGET_ROWS = "app.cli.target_rows:averages"
# What a run's end works out (the digest for Trends and alerts, the gates) with numpy and the
# results' figures, loaded when the calls are done: the first request does not wait for them.
AFTER_RUN = "app.schedules.after_run:after_run"
CHECK_GATES = "app.results.gates:check_gates"
JUNIT_CASES = "app.results.gates:junit_cases"
# A finished run's figures worked out before anyone opens its pages (exports/warm.py), for a
# run big enough that a first view would be slow; a small run's costs less than the import.
WARM_RUN = "app.exports.warm:keep_warm"
WARM_FROM_ITEMS = 2000


def run_in_foreground(run_id, cfg, out, *, resume=False, max_budget_usd=None):
    """Work on the run in a thread while the main thread shows progress; Ctrl-C/SIGTERM (or
    `q` on the screen) stop it cleanly. `resume` continues a paused or stopped run first.
    Returns EXIT_OK when the run finished, EXIT_INTERRUPTED otherwise."""
    cap_arenas()  # before the run's threads start (arenas.py)
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
            if out.quit_requested() and not stop.is_set():
                stop.set()
                out.note("Stopping (q): abandoning the requests in flight")
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
    if stop.is_set() or "state" not in outcome:
        return EXIT_INTERRUPTED
    return EXIT_OK if outcome["state"] == "finished" else EXIT_INTERRUPTED


# How many waiting runs a new run names (the rest are counted).
WAITING_SHOWN = 5


def say_waiting(run_id, out):
    """Name the paused and stopped runs that wait beside this one (they block nothing; each
    can be continued with `llmbench resume`)."""
    with db_context():
        waiting = [r for r in waiting_runs() if r.run_id != run_id]
        runs = [
            {"runId": r.run_id, "state": r.state, "reason": control_reason(r)}
            for r in waiting[:WAITING_SHOWN]
        ]
    if not waiting:
        return
    if out.as_json:
        emit({"event": "runs_waiting", "count": len(waiting), "runs": runs})
        return
    shown = "; ".join(
        f"{r['runId']} ({r['state']}: {r['reason'] or 'no reason given'})" for r in runs
    )
    more = f" and {len(waiting) - len(runs)} more" if len(waiting) > len(runs) else ""
    out.note(f"Waiting beside this run, resumable (llmbench resume RUN_ID): {shown}{more}")


def stop_paused_in_ci(run_id, out):
    """--ci (or CI=true): a run this job leaves paused is stopped, resumable, its reason kept,
    so the database a CI cache keeps holds nothing paused by a job that has ended."""
    with db_context():
        run = get_run(run_id)
        if run_state(run) != "paused":
            return
        reason = f"{run.control_reason or 'paused'}; stopped as the CI job ended (--ci)"
        stop_run(run_id, reason=reason)
    if out.as_json:
        emit({"event": "run_stopped", "runId": run_id, "message": reason, "level": "WARNING"})
    else:
        out.note(f"Stopped {run_id} as the CI job ends (it was paused: {reason})")


def conclude(run_id, out, code, outputs, gates):
    """After the run: its digest for Trends and the regression check (alerts, webhooks), its
    files, the gates (finished runs only) and the final exit code."""
    out.stop()  # the screen goes before anything else is printed
    # The run's worker threads are done: their connections, kept open in the pool with a page
    # cache each, close and what they held goes back before the digest reads every item (at
    # 12k calls 60 -> 48 MiB: the end of a big run was its peak RSS, heap.py).
    close_idle()
    give_back()
    composite_settings = settings_from(load_config())
    with db_context():
        load(AFTER_RUN)(composite_settings=composite_settings)
        give_back()  # the digest's freed memory, before the files and the warm (heap.py)
        run = get_run(run_id)
        summary = run_summary(run)
        finished = summary["state"] == "finished"
        if code == EXIT_OK and not finished:
            code = EXIT_INTERRUPTED
        wants_cases = gates and gates.per_target() and _wants_junit(outputs or {})
        junit_cases = (
            load(JUNIT_CASES)(run, gates, composite_settings) if finished and wants_cases else []
        )
    # The summary screen lists the files itself; plain output says each as it is written.
    quiet = out.quiet or out.screen is not None
    outputs = outputs or {}
    artifacts = {}
    if outputs.get("outDir") or outputs.get("junit") or outputs.get("files"):
        artifacts = load(WRITE_OUTPUTS)(
            run_id, outputs, finished, out.as_json, quiet, gates=junit_cases
        )
    with db_context():
        failures = load(CHECK_GATES)(run, gates, composite_settings) if finished and gates else []
        if failures:
            code = EXIT_GATE
        if outputs.get("summaryMd") or outputs.get("stepSummary"):
            load(WRITE_SUMMARY_MD)(run_id, outputs, artifacts, failures, gates, out.as_json, quiet)
        hint = resume_hint(run) if code == EXIT_INTERRUPTED else None
        rows = load(TARGET_ROWS)(run_id, composite_settings) if out.shows_results() else []
        passed = gates.asked() if finished and gates and not failures else ()
        out.finish(summary, rows, code, hint, artifacts, failures, passed)
        if finished and summary["totalItems"] >= WARM_FROM_ITEMS:
            give_back()  # what the files and gates freed: the warm's peak starts from here
            load(WARM_RUN)(get_run(run_id), composite_settings)
    return code


def _wants_junit(outputs):
    """A JUnit file asked for: --junit, or -o with a .xml file."""
    return outputs.get("junit") or any(
        str(f).lower().endswith(".xml") for f in outputs.get("files") or ()
    )


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt
