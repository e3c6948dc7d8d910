"""The one APScheduler thread that ticks the orchestrator (started by `llmbench serve` only)."""

import atexit
import datetime as dt
import logging
import threading

from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.schedulers.background import BackgroundScheduler

from ..db.connection import database
from ..runs import counts
from . import lease
from .orchestrator import tick

log = logging.getLogger(__name__)
JOB_ID = "orchestrator"
QUIET_LOGGERS = ("apscheduler.executors.default", "apscheduler.scheduler")

_lock = threading.Lock()
_scheduler = {"instance": None, "stopping": threading.Event(), "atexit": False}


class _SkipFilter(logging.Filter):
    """A tick that is still working makes APScheduler skip the next trigger: expected, not news."""

    def filter(self, record):
        return "maximum number of running instances reached" not in record.getMessage()


def _tick(config, hooks=()):
    """One job run (see work); the thread must survive anything: the next trigger retries."""
    try:
        with database.connection_context():
            work(config, hooks, _scheduler["stopping"])
            # PostgreSQL's count deltas of writes no run's supervisor folds (a copy, an edit).
            counts.fold()
    except Exception:
        log.exception("orchestrator tick failed")


def work(config, hooks=(), stopping=None):
    """Tick until the run is idle, paused, stopped or finished (or `stopping` is set).

    After every tick that held the lease, each hook runs (between slices, so at most a slice
    apart even while a long run works): the app factory passes the schedules' check this way.
    """
    while stopping is None or not stopping.is_set():
        result = tick(config)
        if result.get("held"):
            _run_hooks(hooks, config)
        if result.get("outcome") != "slice":
            break


def _run_hooks(hooks, config):
    for hook in hooks:
        try:
            hook(config)
        except Exception:  # one failing hook must not stop the orchestrator or the others
            log.exception("scheduler hook %s failed", getattr(hook, "__name__", hook))


def start(config, hooks=()):
    """Start the orchestrator thread once per process; returns the scheduler.

    `hooks` are callables hook(config) run in the same thread after each tick that holds the
    lease (the engine cannot import what sits above it, so the factory hands them in)."""
    with _lock:
        current = _scheduler["instance"]
        if current is not None and current.running:
            return current
        config = dict(config)
        lease.serve_here()  # a CLI run beside this server hands its run over (cli/runs.py)
        _scheduler["stopping"].clear()
        logging.getLogger("apscheduler.scheduler").addFilter(_SkipFilter())
        # "Running job ... executed successfully" every second is noise in the server log.
        for name in QUIET_LOGGERS:
            logging.getLogger(name).setLevel(logging.WARNING)
        scheduler = BackgroundScheduler(
            executors={"default": ThreadPoolExecutor(1)},
            job_defaults={"max_instances": 1, "coalesce": True, "misfire_grace_time": None},
            timezone=dt.UTC,
        )
        scheduler.add_job(
            _tick,
            "interval",
            seconds=float(config.get("TICK_SECONDS", 1.0)),
            id=JOB_ID,
            replace_existing=True,
            args=[config, tuple(hooks)],
            next_run_time=dt.datetime.now(dt.UTC),
        )
        scheduler.start()
        _scheduler["instance"] = scheduler
        if not _scheduler["atexit"]:
            atexit.register(shutdown)
            _scheduler["atexit"] = True
        log.info("orchestrator thread started (holder %s)", lease.process_holder())
        return scheduler


def shutdown(wait=False):
    """Stop ticking and give the lease up (clean exit: the next start need not wait for it).

    `wait`: return only once a tick in flight has ended (it stops after its slice). At exit
    that is not waited for; a caller that goes on to close the database's connections (a test
    opening the next app) must wait, or the tick's query runs on a closed SQLite handle."""
    with _lock:
        scheduler = _scheduler["instance"]
        _scheduler["instance"] = None
    if scheduler is None:
        return
    _scheduler["stopping"].set()
    try:
        scheduler.shutdown(wait=wait)
    except Exception:  # already stopped
        pass
    try:
        with database.connection_context():
            lease.release(lease.process_holder())
    except Exception:
        log.warning("could not release the orchestrator lease at exit", exc_info=True)
