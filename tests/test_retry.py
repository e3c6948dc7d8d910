"""Retry policy: exponential backoff with jitter, Retry-After, permanent errors, limits."""

import datetime as dt
import random

from app.engine import retry
from app.providers.interface import ProviderError

NOW = dt.datetime(2030, 1, 1, 12, 0, 0)
CONFIG = {
    "BACKOFF_BASE_SECONDS": 2.0,
    "BACKOFF_MAX_SECONDS": 60.0,
    "MAX_RETRY_SECONDS": 900.0,
    "MAX_ATTEMPTS": 3,
}


class Fixed:
    """A jitter source that always returns the same factor."""

    def __init__(self, factor):
        self.factor = factor

    def uniform(self, low, high):
        assert (low, high) == (0.5, 1.5)
        return self.factor


def transient(message="Server answered 503", retry_after=None):
    return ProviderError(message, transient=True, kind="server", retry_after=retry_after)


def test_backoff_doubles_per_attempt():
    assert [retry.backoff_seconds(n, CONFIG, rng=Fixed(1.0)) for n in (1, 2, 3, 4)] == [
        2.0,
        4.0,
        8.0,
        16.0,
    ]


def test_backoff_is_capped():
    assert retry.backoff_seconds(20, CONFIG, rng=Fixed(1.0)) == 60.0


def test_jitter_stays_within_half_to_one_and_a_half():
    rng = random.Random(1)
    delays = [retry.backoff_seconds(2, CONFIG, rng=rng) for _ in range(200)]
    assert 2.0 <= min(delays) and max(delays) <= 6.0 and len(set(delays)) > 100


def test_retry_after_wins_when_longer():
    assert retry.backoff_seconds(1, CONFIG, retry_after=30, rng=Fixed(1.0)) == 30.0
    assert retry.backoff_seconds(3, CONFIG, retry_after=1, rng=Fixed(1.0)) == 8.0


def test_transient_error_is_retried_with_a_readable_message():
    decision = retry.decide(
        attempts=1,
        first_attempt_at=NOW,
        error=transient(),
        config=CONFIG,
        limit=3,
        now=NOW,
        rng=Fixed(1.0),
    )
    assert decision.retry and decision.at == NOW + dt.timedelta(seconds=2)
    assert decision.message == "retry 2/3 at 12:00:02 (backoff 2.0 s): Server answered 503"


def test_retry_after_shows_in_the_message():
    decision = retry.decide(
        attempts=2,
        first_attempt_at=NOW,
        error=transient(retry_after=3),
        config=CONFIG,
        limit=3,
        now=NOW,
        rng=Fixed(0.5),
    )
    assert decision.message.startswith("retry 3/3 at 12:00:03 (Retry-After 3 s)")


def test_permanent_error_is_not_retried():
    error = ProviderError("Server answered 400", transient=False, kind="client")
    decision = retry.decide(
        attempts=1, first_attempt_at=NOW, error=error, config=CONFIG, limit=3, now=NOW
    )
    assert not decision.retry and "permanent" in decision.message


def test_gives_up_after_max_attempts():
    decision = retry.decide(
        attempts=3, first_attempt_at=NOW, error=transient(), config=CONFIG, limit=3, now=NOW
    )
    assert not decision.retry and decision.message.endswith("(gave up after 3 attempts)")


def test_total_retry_time_is_capped():
    first = NOW - dt.timedelta(seconds=899)
    decision = retry.decide(
        attempts=1,
        first_attempt_at=first,
        error=transient(),
        config=CONFIG,
        limit=3,
        now=NOW,
        rng=Fixed(1.0),
    )
    assert not decision.retry and "900 s retry limit" in decision.message


def test_run_setting_overrides_max_attempts():
    class Run:
        settings = {"maxAttempts": 5}

    assert retry.max_attempts(Run, CONFIG) == 5
    Run.settings = None
    assert retry.max_attempts(Run, CONFIG) == 3
