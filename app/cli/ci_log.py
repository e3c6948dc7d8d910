"""A run's progress for a log nobody watches live (CI, a pipe): one line every 10 s, worked out
from the run's counts per status and an injected clock (tests move it, not the wall)."""

import time

from ..db.models import CANT_BE_FINISHED
from ..db.models import COMPLETED
from ..db.models import FAILED
from ..db.models import NEW
from ..runs.progress import progress_fraction

EVERY_SECONDS = 10.0


def duration(seconds):
    """'42s', '3m05s', '1h02m' (a log line's elapsed time and ETA)."""
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


class Ticker:
    """When the next progress line is due, and what it says."""

    def __init__(self, clock=time.monotonic, every=EVERY_SECONDS):
        self.clock, self.every = clock, every
        self.started = self.last = None
        self.judged = True
        self.first = 0.0  # the progress fraction when this invocation began (a resumed run)

    def begin(self, counts, judged):
        """The run starts working now; `judged`: whether its answers go to a judge."""
        self.started = self.last = self.clock()
        self.judged = judged
        self.first = progress_fraction(counts)

    def due(self):
        """True once `every` seconds passed since the start or the last line."""
        return self.started is not None and self.clock() - self.last >= self.every

    def figures(self, counts):
        """The counts a progress line and a --json progress event carry."""
        now = self.clock()
        self.last = now
        elapsed = now - self.started
        total = sum(counts.values())
        settled = counts.get(COMPLETED, 0) + counts.get(FAILED, 0) + counts.get(CANT_BE_FINISHED, 0)
        answered = total - counts.get(NEW, 0)
        done = progress_fraction(counts)
        gained = done - self.first
        eta = elapsed * (1 - done) / gained if gained > 0 and elapsed > 0 else None
        return {
            "elapsedSeconds": round(elapsed, 1),
            "total": total,
            "answered": answered,
            "judged": settled if self.judged else None,
            "failed": counts.get(FAILED, 0) + counts.get(CANT_BE_FINISHED, 0),
            "itemsPerSecond": round(gained * total / elapsed, 2) if elapsed > 0 else None,
            "etaSeconds": round(eta) if eta is not None else None,
        }

    def line(self, counts):
        """'[0m40s] answered 120/400, judged 80/400, 2 failed · 3.00 items/s · ETA 1m33s'."""
        f = self.figures(counts)
        parts = [f"answered {f['answered']}/{f['total']}"]
        if f["judged"] is not None:
            parts.append(f"judged {f['judged']}/{f['total']}")
        parts.append(f"{f['failed']} failed")
        rate = "-" if f["itemsPerSecond"] is None else f"{f['itemsPerSecond']:.2f}"
        eta = "-" if f["etaSeconds"] is None else duration(f["etaSeconds"])
        return f"[{duration(f['elapsedSeconds'])}] {', '.join(parts)} · {rate} items/s · ETA {eta}"
