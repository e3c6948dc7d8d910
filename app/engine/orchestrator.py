"""The orchestrator: one tick renews the lease, then works on the active run for a bounded slice.

BENCHMARKING goes through the run's targets in order, one (provider, model) group at a time with
a warm-up per group; then JUDGING sends every answer to the run's judge (see slice.py). When no
run is running or paused, the oldest queued run starts (runs/queue.py). While it works on a run,
a sampler thread records system metrics (sampling.py).
No Flask here: `llmbench serve` ticks it from APScheduler, the CLI from foreground.py.
"""

from ..clock import utcnow
from ..db.models import CONTROL_RUNNING
from ..db.models import PENDING
from ..db.models import Run
from ..runs.queue import start_next
from . import lease
from .memory import memory_for
from .sampling import ensure_sampler
from .slice import SLICE_SECONDS
from .slice import Slice


def _clock(now):
    if now is None:
        return utcnow
    if callable(now):
        return now
    return lambda: now


def tick(config, *, holder=None, now=None, on_event=None, interrupt=None, slice_seconds=None):
    """Renew the lease; if ours, work on the active run for one bounded slice. Returns a summary."""
    clock = _clock(now)
    holder = holder or lease.process_holder()
    if not lease.acquire(holder, float(config.get("LEASE_SECONDS", 15.0)), clock()):
        return {"held": False, "runId": None, "state": None, "idle": True}
    run = _running_run()
    if run is None and start_next(clock()) is not None:  # the engine is free: the queue's turn
        run = _running_run()
    if run is None:
        memory_for(holder, None)
        return {"held": True, "runId": None, "state": None, "idle": True}
    slice_ = Slice(
        run,
        config,
        holder,
        clock,
        on_event,
        interrupt,
        float(slice_seconds or config.get("TICK_SLICE_SECONDS", SLICE_SECONDS)),
    )
    ensure_sampler(slice_.ctx.memory, run, config)
    return slice_.work()


def _running_run():
    """The run the engine works on: the oldest running one."""
    return (
        Run.select()
        .where((Run.status == PENDING) & (Run.control == CONTROL_RUNNING))
        .order_by(Run.created_at, Run.id)
        .first()
    )
