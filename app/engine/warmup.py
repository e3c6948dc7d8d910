"""Warm-ups: the judge before benchmarking, then one tiny call per (provider, model) group.

A server that cannot be reached, or is busy (429, 503, a model still loading), opens its
breaker (breaker.py): the warm-up is its probe, and no attempt is counted. Any other transient
failure (a timeout, a reset, a 500) backs off and is tried again, each retry in the run log
with when it will be tried; it says nothing of the target's items, so none of them fails for
it: a warm-up still failing past the outage limit pauses the run with the reason. A permanent
failure (404 model not found, 400) fails the group (a target) at once, or pauses the run (the
judge).
"""

import datetime as dt
import logging

from ..db.models import RunTarget
from ..providers.interface import Cancelled
from ..providers.interface import ProviderError
from ..runs.outages import hms
from ..scoring import rubric
from ..scoring.judge_calls import judge_params
from . import retry
from .breaker import holds
from .breaker import span
from .groups import fail_group

log = logging.getLogger(__name__)

WARMUP_MESSAGES = [{"role": "user", "content": "Reply with the single word OK."}]
WARMUP_PARAMS = {"max_tokens": 4}
JUDGE_WARMUP_MESSAGES = [
    {"role": "system", "content": rubric.JUDGE_SYSTEM_PROMPT},
    {"role": "user", "content": 'This is a warm-up. Reply with {"score": 100, "reason": "ready"}.'},
]
JUDGE_WARMUP_SCHEMA = {
    "type": "object",
    "properties": {
        "score": {"type": "integer", "minimum": 0, "maximum": 100},
        "reason": {"type": "string"},
    },
    "required": ["score", "reason"],
    "additionalProperties": False,
}
JUDGE_WARMUP_MAX_TOKENS = 32  # the output is not graded: the call only proves the judge answers
JUDGE = "judge"  # the backoff key of the judge's warm-up (targets use their id)


def _attempt(ctx, pool, call):
    """Run one warm-up call in a supervised worker: {"c": completion} | {"e": error} | None.

    None means a stop abandoned it: nothing is recorded, the next continue warms up again.
    """
    outcome = {}

    def body():
        try:
            outcome["c"] = call()
        except ProviderError as exc:
            outcome["e"] = exc
        except Exception as exc:  # a bug or a bad stored header: a recorded failure, no loop
            log.exception("warm-up failed unexpectedly")
            outcome["e"] = ProviderError(
                f"internal error: {exc!r}", transient=False, kind="internal"
            )

    pool.supervise(1, body)
    if ctx.cancel.is_set() or not outcome or isinstance(outcome.get("e"), Cancelled):
        return None
    return outcome


def _retry_or_give_up(ctx, key, label, exc):
    """Schedule the next try (None) or return the final message: at once for a permanent
    error, for a transient one only once the warm-up has failed past the outage limit."""
    now = ctx.now()
    entry = ctx.memory.warmups.backoff.setdefault(key, {"attempts": 0, "first": now, "next": now})
    entry["attempts"] += 1
    tries = entry["attempts"]
    if not exc.transient:
        ctx.memory.warmups.forget(key)
        return f"{exc.message} (not retried: the error is permanent)"
    lasted = (now - entry["first"]).total_seconds()
    if lasted >= ctx.breaker.limit:
        ctx.memory.warmups.forget(key)
        return (
            f"{exc.message} (failing since {hms(entry['first'])}, {tries} tries, "
            f"past the {span(ctx.breaker.limit)} limit)"
        )
    delay = retry.backoff_seconds(tries, ctx.config, exc.retry_after)
    at = entry["next"] = now + dt.timedelta(seconds=delay)
    ctx.emit(
        "warmup_retry",
        f"Warm-up of {label}: try {tries + 1} at {at:%H:%M:%S} (backoff {delay:.1f} s): "
        f"{exc.message}",
        level="WARNING",
        data={
            "target": label,
            "attempt": tries,
            "nextRetryAt": at.isoformat() + "Z",
            "error": exc.message,
        },
        now=now,
    )
    return None


def _warm_up(ctx, pool, key, label, call, give_up, provider):
    """One warm-up call: its completion, or None when a stop abandoned it, it backs off, its
    server cannot be reached or is busy (the breaker waits), or it failed for good (then
    `give_up(why, transient)` has failed the group or paused the run)."""
    outcome = _attempt(ctx, pool, call)
    if outcome is None:
        return None
    error = outcome.get("e")
    if error is not None and holds(error):
        # The breaker waits for the server now; a failure after it is a new streak, not one
        # counted from before the server went away.
        ctx.memory.warmups.forget(key)
        ctx.breaker.open(provider, error)
        return None
    ctx.breaker.reachable(provider.id)  # it answered, if with an error
    if error is not None:
        final = _retry_or_give_up(ctx, key, label, error)
        if final is not None:
            give_up(final, error.transient)
        return None
    ctx.memory.warmups.forget(key)
    return outcome["c"]


def _give_up_target(ctx, target, label, final, transient):
    """A permanent warm-up failure fails the group's items; a transient one never does: the
    run pauses with the reason, its items kept for when the server works again."""
    if not transient:
        fail_group(ctx, target, final)
        return
    ctx.pause(
        f"the warm-up of {label} keeps failing: {final}; no item was failed for it: fix the "
        "server or the model, then continue",
        event="warmup_failing",
    )


def warm_up_target(ctx, pool, target):
    """One tiny call loads the group's model; True when the group is ready to claim items."""
    provider = target.provider
    label = ctx.target_label(target.id)
    adapter = ctx.adapter_for(provider)
    if adapter is None:
        return False
    now = ctx.now()
    completion = _warm_up(
        ctx,
        pool,
        target.id,
        label,
        lambda: adapter.chat(
            target.model,
            WARMUP_MESSAGES,
            params=WARMUP_PARAMS,
            stream=False,
            keep_alive=ctx.keep_alive(provider),
            cancel=ctx.cancel,
        ),
        give_up=lambda final, transient: _give_up_target(ctx, target, label, final, transient),
        provider=provider,
    )
    if completion is None:
        return False
    RunTarget.update(
        warmup_ms=completion.wall_ms, load_ms=completion.load_ms, warmup_error=None
    ).where(RunTarget.id == target.id).execute()
    load = f" (model load {completion.load_ms:.0f} ms)" if completion.load_ms else ""
    ctx.emit(
        "warmup",
        f"Warm-up {label}: {completion.wall_ms:.0f} ms{load}",
        data={
            "targetId": target.id,
            "warmupMs": round(completion.wall_ms, 1),
            "loadMs": completion.load_ms,
        },
        now=now,
    )
    ctx.memory.group = target.id
    return True


def warm_up_judge(ctx, pool):
    """A tiny judge call with a JSON schema before any answer is spent; True when it answered.

    A judge that fails for good pauses the run with the reason, before the benchmark is wasted.
    """
    run = ctx.run
    provider = run.judge_provider
    if provider is None:  # deleted: judging marks the items, nothing to warm up
        ctx.memory.warmups.judge_ready = True
        return True
    label = f"{run.judge_provider_name}/{run.judge_model}"
    adapter = ctx.adapter_for(provider)
    if adapter is None:
        return False
    params = dict(judge_params(run.judge_params), max_tokens=JUDGE_WARMUP_MAX_TOKENS)
    # Ollama: unload right after, so the first target's model gets the memory.
    keep_alive = 0 if ctx.keeps_loaded(provider) else None
    completion = _warm_up(
        ctx,
        pool,
        JUDGE,
        f"the judge {label}",
        lambda: adapter.chat(
            run.judge_model,
            JUDGE_WARMUP_MESSAGES,
            params=params,
            stream=False,
            json_schema=JUDGE_WARMUP_SCHEMA,
            keep_alive=keep_alive,
            cancel=ctx.cancel,
        ),
        give_up=lambda final, _transient: ctx.pause(
            f"the judge model {label} fails: {final}; fix the judge's provider or "
            "model (or start a new run with another judge), then continue",
            event="judge_failed",
        ),
        provider=provider,
    )
    if completion is None:
        return False
    ctx.memory.warmups.judge_ready = True
    ctx.emit(
        "judge_warmup",
        f"Judge warm-up {label}: {completion.wall_ms:.0f} ms",
        data={"warmupMs": round(completion.wall_ms, 1)},
    )
    return True
