"""The one APScheduler thread that ticks the orchestrator (started by `llmbench serve` only)."""

import atexit
import datetime as dt
import logging
import threading

from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.schedulers.background import BackgroundScheduler

from ..db import database
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


def _tick(config):
    """One job run: tick until the run is idle, paused, stopped or finished (or we shut down)."""
    try:
        with database.connection_context():
            while not _scheduler["stopping"].is_set():
                result = tick(config)
                if result.get("outcome") != "slice":
                    break
    except Exception:  # the thread must survive anything; the next trigger tries again
        log.exception("orchestrator tick failed")


def start(config):
    """Start the orchestrator thread once per process; returns the scheduler."""
    with _lock:
        current = _scheduler["instance"]
        if current is not None and current.running:
            return current
        config = dict(config)
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
            args=[config],
            next_run_time=dt.datetime.now(dt.UTC),
        )
        scheduler.start()
        _scheduler["instance"] = scheduler
        if not _scheduler["atexit"]:
            atexit.register(shutdown)
            _scheduler["atexit"] = True
        log.info("orchestrator thread started (holder %s)", lease.process_holder())
        return scheduler


def shutdown():
    """Stop ticking and give the lease up (clean exit: the next start need not wait for it)."""
    with _lock:
        scheduler = _scheduler["instance"]
        _scheduler["instance"] = None
    if scheduler is None:
        return
    _scheduler["stopping"].set()
    try:
        scheduler.shutdown(wait=False)
    except Exception:  # already stopped
        pass
    try:
        with database.connection_context():
            lease.release(lease.process_holder())
    except Exception:
        log.warning("could not release the orchestrator lease at exit", exc_info=True)
