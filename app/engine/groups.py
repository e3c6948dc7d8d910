"""Model groups: BENCHMARKING works on one (provider, model) target at a time.

Pick the group to work on, leave it (unloading an Ollama model so the next one gets the memory),
fail its items when its warm-up fails for good, or mark them CANT_BE_FINISHED when they can
never be asked. Every function takes the tick's RunContext.
"""

from ..db.models import CANT_BE_FINISHED
from ..db.models import FAILED
from ..db.models import NEW
from ..db.models import Item
from ..db.models import RunTarget
from .claims import any_claimable
from .claims import next_wake
from .load_steps import current_step
from .load_steps import load_of

STICKY_SECONDS = 30.0  # wait this long for a group's backoffs before switching model groups


def pick_group(ctx):
    """The target to work on: the current group while it has work soon, else the first target
    (in run order) with a claimable item and no warm-up waiting for its retry; None to wait."""
    current = ctx.memory.group
    now = ctx.now()
    if current is not None and ctx.breaker.waiting(ctx.targets[current].provider_id, now):
        current = ctx.memory.group = None  # its server is down: another group may go on
    if current is not None:
        if claimable_now(ctx, current, now):
            return ctx.targets[current]
        wake = next_wake(ctx.run, current)
        if wake is not None and (wake - now).total_seconds() <= STICKY_SECONDS:
            return None  # a short backoff: keep the model loaded and wait for it
    for target in sorted(ctx.targets.values(), key=lambda t: (t.position, t.id)):
        if ctx.memory.warmups.waiting(target.id, now) or ctx.breaker.waiting(
            target.provider_id, now
        ):
            continue
        if claimable_now(ctx, target.id, now):
            return target
    return None


def claimable_now(ctx, target_id, now):
    """True when the target has an item to claim now: of its current load step in a run with
    load steps (a later step's items wait for the step before them to be answered)."""
    step = current_step(ctx.run, target_id) if load_of(ctx.run) else None
    return any_claimable(ctx.run, NEW, now, target_id, step)


def leave_group(ctx):
    """Unload the current group's model (Ollama's) so the next model gets the memory."""
    current = ctx.targets.get(ctx.memory.group) if ctx.memory.group else None
    ctx.memory.group = None
    if current is None or not ctx.keeps_loaded(current.provider):
        return
    try:
        error = ctx.memory.adapter(current.provider).unload(current.model)
    except Exception as exc:  # noqa: BLE001 - the model unloads itself after keep_alive
        error = getattr(exc, "message", None) or repr(exc)
    if error:
        ctx.emit(
            "unload_failed",
            f"Could not unload {current.provider_name}/{current.model}: {error}",
            level="WARNING",
        )
    else:
        ctx.emit("unloaded", f"Unloaded {current.provider_name}/{current.model}")


def fail_group(ctx, target, message):
    """The group's warm-up failed for good: its unanswered items fail, the run goes on."""
    now = ctx.now()
    RunTarget.update(warmup_error=message).where(RunTarget.id == target.id).execute()
    count = settle(
        ctx,
        (Item.target == target) & (Item.status == NEW),
        FAILED,
        "warmup",
        f"warm-up failed: {message}",
    )
    ctx.emit(
        "warmup_failed",
        f"Warm-up of {target.provider_name}/{target.model} failed: "
        f"{message}; its {count} items failed, the run goes on",
        level="ERROR",
        data={"targetId": target.id, "failed": count, "error": message},
        now=now,
    )


def cant_finish_group(ctx, target, why):
    """The group can never be asked (its provider is gone): its items can't be finished."""
    now = ctx.now()
    count = settle(
        ctx,
        (Item.target == target) & (Item.status == NEW),
        CANT_BE_FINISHED,
        "answer",
        f"can't be finished: {why}",
    )
    ctx.emit(
        "cant_be_finished",
        f"{target.provider_name}/{target.model}: {count} items "
        f"can't be finished: {why}; the run goes on",
        level="ERROR",
        data={"targetId": target.id, "count": count, "error": why},
        now=now,
    )


def settle(ctx, where, status, stage, error):
    """Settle the run's items matching `where` for good (status, stage and error; no retry or
    claim pending); returns how many."""
    return (
        Item.update(
            status=status,
            error_stage=stage,
            error_msg=error,
            next_retry_at=None,
            claimed_until=None,
            updated_at=ctx.now(),
        )
        .where((Item.run == ctx.run) & where)
        .execute()
    )
