"""The per-server circuit breaker: a model server that cannot be reached, or is too busy to
take calls, makes its targets wait.

Connection refused, a host name not found and a connect timeout (ProviderError.unreachable) say
nothing about the item being asked, nor do a 429, a 503 or a model still loading
(ProviderError.busy): they count against the server, not the item. The breaker opens for the
run's provider: the claim is given back uncounted (the item stays NEW, or WAITING_FOR_JUDGE,
unattempted), no item of that provider is claimed, and a probe (the group's warm-up, or the
next claim) tries again after a backoff that doubles up to a cap, or when a busy server's
Retry-After says. The first call that gets through closes it and work goes on by itself. An
outage that lasts past the limit (OUTAGE_LIMIT_SECONDS, default 10 min), or a Retry-After that
asks to wait past it, pauses the run with the reason, so a person can fix the server and
continue.

The open breakers are rows of `outage` (models.Outage): the live view reads them ("waiting for
...") and a restart keeps counting from when the outage began.
"""

import datetime as dt
import threading

from ..db.connection import database
from ..db.models import Outage
from ..runs.outages import hms
from ..runs.outages import waiting_message
from . import claims

PROBE_BASE_SECONDS = 5.0
PROBE_MAX_SECONDS = 60.0
OUTAGE_LIMIT_SECONDS = 600.0
MIN_RETRY_AFTER_SECONDS = 1.0  # a "Retry-After: 0" must not make a loop of calls


def holds(error):
    """True when `error` is the server's (unreachable or busy), not the call's: the breaker's."""
    return bool(getattr(error, "unreachable", None) or getattr(error, "busy", None))


class Breaker:
    """The open breakers of one run (one per unreachable provider), for one tick's work."""

    def __init__(self, ctx):
        self.ctx = ctx
        config = ctx.config
        self.base = float(config.get("OUTAGE_PROBE_SECONDS", PROBE_BASE_SECONDS))
        self.cap = float(config.get("OUTAGE_PROBE_MAX_SECONDS", PROBE_MAX_SECONDS))
        self.limit = float(config.get("OUTAGE_LIMIT_SECONDS", OUTAGE_LIMIT_SECONDS))
        self._lock = threading.Lock()
        self._open = {o.provider_id: o for o in Outage.select().where(Outage.run == ctx.run.id)}

    def waiting(self, provider_id, now):
        """True while the provider's breaker is open and its next probe is not due yet."""
        with self._lock:
            outage = self._open.get(provider_id)
            return outage is not None and outage.next_try_at > now

    def wake_at(self):
        """The earliest next probe of an open breaker, or None."""
        with self._lock:
            times = [o.next_try_at for o in self._open.values()]
        return min(times) if times else None

    def open(self, provider, error, claimed=None):
        """A call to `provider` found its server unreachable or busy (`holds(error)`): give the
        claim back uncounted, open (or keep open) the breaker, and pause the run once the
        outage passes the limit.

        `claimed` is (item id, claimed attempts) for an item's call, None for a warm-up.
        """
        ctx = self.ctx
        now = ctx.now()
        if claimed is not None:
            claims.release(*claimed)
        busy = None if error.unreachable else error.busy
        retry_after = getattr(error, "retry_after", None) if busy else None
        with self._lock:
            outage = self._open.get(provider.id)
            if outage is not None and outage.next_try_at > now:
                return  # a sibling's call failed the same way a moment ago: nothing new
            if outage is None:
                outage = Outage(
                    run=ctx.run.id,
                    provider_id=provider.id,
                    provider_name=provider.name,
                    since=now,
                    probes=0,
                )
            outage.probes += 1
            if retry_after is not None:
                # The server said when it takes calls again: then, not earlier nor later.
                delay = max(MIN_RETRY_AFTER_SECONDS, float(retry_after))
            else:
                delay = min(self.cap, self.base * 2 ** (outage.probes - 1))
            outage.error = (error.unreachable or busy or "unreachable")[:100]
            outage.message = error.message
            outage.last_try_at = now
            outage.next_try_at = now + dt.timedelta(seconds=delay)
            with database.atomic():
                if outage.id is None:
                    # Another process (a `llmbench worker`, the server) may have opened it
                    # meanwhile: one row per (run, provider), counted from when it began.
                    found = Outage.get_or_none(
                        (Outage.run == ctx.run.id) & (Outage.provider_id == provider.id)
                    )
                    if found is not None:
                        outage.id, outage.since = found.id, found.since
                outage.save()
            self._open[provider.id] = outage
        if ctx.memory.group is not None and self._provider_of(ctx.memory.group) == provider.id:
            ctx.memory.group = None  # the next probe is the group's warm-up: the model reloads
        lasted = (now - outage.since).total_seconds()
        asked = (outage.next_try_at - outage.since).total_seconds()
        if lasted >= self.limit or (retry_after is not None and asked > self.limit):
            self._pause(provider, outage, busy, lasted, retry_after)
            return
        ctx.emit(
            "provider_waiting",
            waiting_message(provider.name, outage.error, outage.since, outage.next_try_at)
            + (f" (try {outage.probes})" if outage.probes > 1 else "")
            + f"; its items wait: {error.message}",
            level="WARNING",
            data={
                "providerId": provider.id,
                "error": outage.error,
                "busy": busy is not None,
                "since": outage.since.isoformat() + "Z",
                "nextTryAt": outage.next_try_at.isoformat() + "Z",
                "probes": outage.probes,
            },
            now=now,
        )

    def _pause(self, provider, outage, busy, lasted, retry_after):
        """Pause the run: the server stayed unreachable or busy past the limit."""
        since = f"{outage.error} since {hms(outage.since)}"
        limit = f"past the {span(self.limit)} limit"
        if busy is None:
            self.ctx.pause(
                f"{provider.name} is unreachable ({since}, {span(lasted)}, {limit}); no item "
                "was failed for it: start the server or fix the provider's base URL, then "
                "continue",
                event="provider_unreachable",
            )
            return
        wait = span(lasted) if lasted >= self.limit else f"it asks to wait {span(retry_after)}"
        self.ctx.pause(
            f"{provider.name} stays busy ({since}, {wait}, {limit}); no item was failed for "
            "it: wait until the server takes calls again (or lower the run's concurrency), "
            "then continue",
            event="provider_busy",
        )

    def reachable(self, provider_id):
        """A call to the provider got through: close its breaker (if open) and say so."""
        if provider_id not in self._open:  # the common case: no lock, no query
            return
        with self._lock:
            outage = self._open.pop(provider_id, None)
        if outage is None:
            return
        now = self.ctx.now()
        Outage.delete().where(
            (Outage.run == self.ctx.run.id) & (Outage.provider_id == provider_id)
        ).execute()
        seconds = (now - outage.since).total_seconds()
        self.ctx.emit(
            "provider_back",
            f"{outage.provider_name} answers again after {seconds:.0f} s "
            f"({outage.error} since {hms(outage.since)}); work goes on",
            data={"providerId": provider_id, "seconds": round(seconds, 1)},
            now=now,
        )

    def _provider_of(self, target_id):
        target = self.ctx.targets.get(target_id)
        return target.provider_id if target is not None else None


def span(seconds):
    """'35 s' or '10 min'."""
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"
