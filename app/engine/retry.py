"""Retry policy: which failures are retried, when, and when we give up."""

import datetime as dt
import random
from dataclasses import dataclass


@dataclass
class Decision:
    """What to do with an item after a failed attempt."""

    retry: bool
    at: dt.datetime | None  # when it becomes claimable again
    message: str  # for the run log and error_msg


def max_attempts(run, config):
    """The run's own maxAttempts setting, else the configured default."""
    settings = run.settings or {}
    value = settings.get("maxAttempts")
    return int(value) if value else int(config.get("MAX_ATTEMPTS", 3))


def backoff_seconds(attempts, config, retry_after=None, rng=random):
    """Exponential backoff with jitter; a server's Retry-After is honoured (the larger wins)."""
    base = float(config.get("BACKOFF_BASE_SECONDS", 2.0))
    cap = float(config.get("BACKOFF_MAX_SECONDS", 60.0))
    delay = min(cap, base * 2 ** max(attempts - 1, 0)) * rng.uniform(0.5, 1.5)
    if retry_after is not None:
        # Retry-After is the server telling us its limit: never retry earlier, even past our cap.
        delay = max(delay, float(retry_after))
    return delay


def decide(*, attempts, first_attempt_at, error, config, limit, now, rng=random):
    """Retry or give up after `attempts` tries failed with `error` (a ProviderError-like)."""
    reason = getattr(error, "message", None) or str(error)
    transient = bool(getattr(error, "transient", False))
    if not transient:
        return Decision(False, None, f"{reason} (not retried: the error is permanent)")
    if attempts >= limit:
        return Decision(False, None, f"{reason} (gave up after {attempts} attempts)")
    retry_after = getattr(error, "retry_after", None)
    delay = backoff_seconds(attempts, config, retry_after, rng)
    at = now + dt.timedelta(seconds=delay)
    cap = float(config.get("MAX_RETRY_SECONDS", 900.0))
    started = first_attempt_at or now
    if (at - started).total_seconds() > cap:
        return Decision(
            False, None, f"{reason} (gave up: retrying would pass the {cap:g} s retry limit)"
        )
    if retry_after is not None:
        why = f"Retry-After {float(retry_after):g} s"
    else:
        why = f"backoff {delay:.1f} s"
    message = f"retry {attempts + 1}/{limit} at {at:%H:%M:%S} ({why}): {reason}"
    return Decision(True, at, message)
