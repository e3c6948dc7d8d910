"""Load steps in the engine (settings.load, runs/spec.py clean_load): a target's items are
asked step after step, each step's at its own load, and a step starts once every item of the
one before it has its answer (or has failed for good).

Nothing is kept but the items: each carries its step (Item.step), so the step a target is on is
the lowest step of its items still NEW, after a pause, a restart or on another process alike.
Concurrency steps set the target's requests in flight (the worker threads); rate steps start
requests at the step's rate, open loop (not waiting for answers), up to RATE_MAX_IN_FLIGHT
in flight at once.
"""

import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from peewee import fn

from ..db.models import NEW
from ..db.models import Item
from ..runs.lifecycle import item_messages
from .items import call_params

# How long one slice may work on a load step (slice.py ends a slice after 5 s, which drains
# the requests in flight to none before the next slice starts: no load to measure).
STEP_SLICE_SECONDS = 3600.0
# Rate steps: the most requests in flight at once (a server slower than the rate would
# otherwise gather threads without end), unless settings.concurrency says another number.
RATE_MAX_IN_FLIGHT = 64
# A rate step's schedule that fell behind by more than this (a slice ended, the run paused)
# starts again from now rather than sending the missed requests in one burst.
RATE_CATCH_UP_SECONDS = 1.0


def load_of(run):
    """The run's load (settings.load), or None for a run without load steps."""
    return (run.settings or {}).get("load") or None


def current_step(run, target_id):
    """The step the target is on: the lowest step of its items still NEW, or None."""
    return (
        Item.select(fn.MIN(Item.step))
        .where((Item.run == run) & (Item.target == target_id) & (Item.status == NEW))
        .scalar()
    )


def limit_of(run, load, step):
    """The target's requests in flight in `step`: the step's concurrency, or a rate step's cap."""
    if load["mode"] == "concurrency":
        return int(load["steps"][step])
    own = (run.settings or {}).get("concurrency")
    return int(own) if own else RATE_MAX_IN_FLIGHT


def judged(load, step):
    """Whether the judge scores the answers of `step` (judgeSteps "all", or the first step)."""
    return load.get("judgeSteps", "all") == "all" or step == 0


def step_text(load, step):
    """'step 3 of 5: concurrency 4' / 'step 2 of 4: 1 requests/s (poisson)'."""
    value = load["steps"][step]
    what = (
        f"concurrency {value}"
        if load["mode"] == "concurrency"
        else f"{value:g} requests/s ({load.get('arrivals', 'poisson')})"
    )
    return f"step {step + 1} of {len(load['steps'])}: {what}"


class Arrivals:
    """When a rate step's requests are due (time.monotonic): every 1/rate s (constant), or
    exponential gaps of mean 1/rate drawn from a generator seeded by the run, target and step
    (poisson), so a run asked again sends on the same schedule. Shared by the step's threads."""

    def __init__(self, rate, arrivals, key):
        self.rate, self.poisson = float(rate), arrivals == "poisson"
        self.rng = random.Random(key)
        self.next = None
        self._lock = threading.Lock()

    def take(self):
        """The instant the next request is due (each call takes one)."""
        with self._lock:
            now = time.monotonic()
            if self.next is None or self.next < now - RATE_CATCH_UP_SECONDS:
                self.next = now
            due = self.next
            gap = self.rng.expovariate(self.rate) if self.poisson else 1.0 / self.rate
            self.next += gap
            return due

    def restart(self):
        """Start the schedule again from the next request taken (the step went on hold)."""
        with self._lock:
            self.next = None


class StepState:
    """What the holder remembers of a target's load steps (HolderMemory.load_steps)."""

    def __init__(self):
        self.started = {}  # target id -> the step announced (its warm-up sent)
        self.arrivals = {}  # (target id, step) -> Arrivals


def state_of(memory):
    """The holder's StepState of the run (made on first use)."""
    state = getattr(memory, "load_steps", None)
    if state is None:
        state = memory.load_steps = StepState()
    return state


def begin(ctx, target, adapter, load, step):
    """At a step's start (once per target and step in this process): the `load_step` line in
    the run log and the step's warm-up requests (settings.load.warmup), sent at the step's load
    and kept nowhere: they fill the server's caches and queues before the step's answers count."""
    state = state_of(ctx.memory)
    if state.started.get(target.id) == step:
        return
    state.started[target.id] = step
    warmup = int(load.get("warmup") or 0)
    ctx.emit(
        "load_step",
        f"{ctx.target_label(target.id)}: {step_text(load, step)}"
        + (f" ({warmup} warm-up requests first, not kept)" if warmup else ""),
        data={
            "targetId": target.id,
            "step": step,
            "steps": len(load["steps"]),
            "mode": load["mode"],
            "load": load["steps"][step],
            "warmup": warmup,
        },
    )
    if warmup:
        failed = _warm_up(ctx, target, adapter, load, step, warmup)
        if failed:
            ctx.emit(
                "load_step",
                f"{ctx.target_label(target.id)}: {failed} of {warmup} warm-up requests of "
                f"step {step + 1} failed (not kept; the step goes on)",
                level="WARNING",
                data={"targetId": target.id, "step": step, "warmupFailed": failed},
            )


def _warm_up(ctx, target, adapter, load, step, count):
    """Send `count` of the step's own questions (its first items', again when there are fewer)
    at the step's concurrency, answers dropped; how many failed."""
    rows = list(
        Item.select(Item.system_prompt, Item.question)
        .where((Item.run == ctx.run) & (Item.target == target.id) & (Item.step == step))
        .order_by(Item.id)
        .limit(count)
        .tuples()
    )
    if not rows:
        return 0
    asks = [rows[i % len(rows)] for i in range(count)]

    def ask(row):
        try:
            adapter.chat(
                target.model,
                item_messages(*row),
                params=call_params(dict(target.params or {}), ctx.config),
                stream=True,
                keep_alive=ctx.keep_alive(target.provider),
                cancel=ctx.cancel,
            )
            return 0
        except Exception:  # noqa: BLE001 - a warm-up's failure is counted, never kept
            return 1

    with ThreadPoolExecutor(max_workers=min(count, limit_of(ctx.run, load, step))) as pool:
        return sum(pool.map(ask, asks))


def arrivals_for(ctx, target, load, step):
    """The rate step's shared schedule (None for a concurrency step)."""
    if load["mode"] != "rate":
        return None
    state = state_of(ctx.memory)
    key = (target.id, step)
    if key not in state.arrivals:
        state.arrivals[key] = Arrivals(
            load["steps"][step],
            load.get("arrivals", "poisson"),
            f"{ctx.run.run_id}:{target.id}:{step}",
        )
    return state.arrivals[key]


def wait_for_arrival(ctx, arrivals):
    """Wait until the rate step's next request is due; False when the pool halted meanwhile
    (a stop, a pause, the slice's end: the request is not sent, and the schedule starts again
    from then on the next slice, not in a burst of the requests missed)."""
    due = arrivals.take()
    left = due - time.monotonic()
    if left <= 0 or not ctx.halt.wait(left):
        return True
    arrivals.restart()
    return False
