"""Warm-ups: the judge before benchmarking, then one tiny call per (provider, model) group.

A transient warm-up failure (429 with Retry-After, 503 while a model loads, a timeout) backs off
and is tried again within the run's retry policy (max attempts, retry-time cap), each retry in
the run log with when it will be tried; only then does the group fail (a target) or the run
pause (the judge). A permanent failure (404 model not found, 400) does so at once. A server that
cannot be reached at all opens its breaker instead (breaker.py): the warm-up is its probe.
"""

import logging

from ..judge import rubric
from ..models import RunTarget
from ..providers.interface import Cancelled
from ..providers.interface import ProviderError
from . import retry
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
    """Schedule the next try (None) or return the final message when the policy gives up."""
    now = ctx.now()
    entry = ctx.memory.warmups.backoff.setdefault(key, {"attempts": 0, "first": now, "next": now})
    entry["attempts"] += 1
    decision = retry.decide(
        attempts=entry["attempts"],
        first_attempt_at=entry["first"],
        error=exc,
        config=ctx.config,
        limit=ctx.max_attempts,
        now=now,
    )
    if not decision.retry:
        ctx.memory.warmups.forget(key)
        return decision.message
    entry["next"] = decision.at
    ctx.emit(
        "warmup_retry",
        f"Warm-up of {label}: {decision.message}",
        level="WARNING",
        data={
            "target": label,
            "attempt": entry["attempts"],
            "nextRetryAt": decision.at.isoformat() + "Z",
            "error": exc.message,
        },
        now=now,
    )
    return None


def _warm_up(ctx, pool, key, label, call, give_up, provider):
    """One warm-up call: its completion, or None when a stop abandoned it, it backs off, its
    server cannot be reached (the breaker waits), or the retry policy gave up (then
    `give_up(why)` has failed the group or paused the run)."""
    outcome = _attempt(ctx, pool, call)
    if outcome is None:
        return None
    if "e" in outcome and outcome["e"].unreachable:
        ctx.breaker.unreachable(provider, outcome["e"])
        return None
    if "e" not in outcome:
        ctx.breaker.reachable(provider.id)
    if "e" in outcome:
        final = _retry_or_give_up(ctx, key, label, outcome["e"])
        if final is not None:
            give_up(final)
        return None
    ctx.memory.warmups.forget(key)
    return outcome["c"]


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
        give_up=lambda final: fail_group(ctx, target, final),
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
    params = dict(rubric.judge_params(run.judge_params), max_tokens=JUDGE_WARMUP_MAX_TOKENS)
    # Ollama: unload right after, so the first target's model gets the memory.
    keep_alive = 0 if provider.type == "OLLAMA" else None
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
        give_up=lambda final: ctx.pause(
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
