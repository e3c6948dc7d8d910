"""The composite score: one number 0-100 for a target's quality and speed, from plain numbers.

Adapted from the 002 dashboard's TMDE score: quality 70 % (the average item score 0-100 × 0.70)
and efficiency 30 %, split in two halves. Time: full points while the median answer time is under
30 s, else the dashboard's line, 15 − 3 × minutes, down to 0 at 5 min (its code gives 13.5 at
30 s; its comment promises 15 below 30 s: both hold, so 30 s itself loses 1.5 points at once).
On-target: the share of answers meeting the run's latency target (`latencyTargetMs`) × 15 (the
dashboard's debate rounds, which llmbench has not); full points when the run sets no target.
No Flask, no database: composite_figures.py reads the numbers.
"""

from dataclasses import dataclass

NONE_TEXT = "—"  # a composite that cannot be computed is shown as this, never as 0


@dataclass(frozen=True)
class CompositeSettings:
    """The weights and the time curve (config COMPOSITE_*)."""

    quality_weight: float = 0.70
    full_time_seconds: float = 30.0  # the median answer time under which time gets full points
    points_per_minute: float = 3.0  # time points lost per minute of median answer time

    @property
    def efficiency_points(self):
        # Rounded: 100 × (1 − 0.70) is 30.000000000000004 in floats.
        return round(100.0 - 100.0 * self.quality_weight, 9)

    @property
    def half(self):
        """The most points each half of efficiency (time, on-target) gives."""
        return self.efficiency_points / 2.0


DEFAULT_SETTINGS = CompositeSettings()
# config key -> (field, lowest, highest): read from the layered config by the edges.
CONFIG_KEYS = {
    "COMPOSITE_QUALITY_WEIGHT": ("quality_weight", 0.0, 1.0),
    "COMPOSITE_FULL_TIME_SECONDS": ("full_time_seconds", 0.0, 86400.0),
    "COMPOSITE_POINTS_PER_MINUTE": ("points_per_minute", 0.0, 1000.0),
}


def settings_from(config):
    """CompositeSettings from a config mapping; a missing or out-of-range value keeps its default
    (a bad setting must not take every results page down)."""
    values = {}
    for key, (field, low, high) in CONFIG_KEYS.items():
        try:
            value = float(config.get(key, getattr(DEFAULT_SETTINGS, field)))
        except (TypeError, ValueError):
            continue
        if low <= value <= high:
            values[field] = value
    return CompositeSettings(**values)


@dataclass(frozen=True)
class Composite:
    """A computed composite score and its parts (points, not rounded)."""

    score: float  # rounded to 0.1, as the dashboard did
    quality: float  # the average item score 0-100
    quality_weight: float
    time_points: float
    median_time_ms: float
    on_target_points: float
    on_target_share: float | None  # None: the run sets no latency target
    latency_target_ms: float | None

    @property
    def quality_points(self):
        return self.quality_weight * self.quality

    def formula(self):
        """The sum in words, as shown beside the number."""
        target = (
            f"on-target {self.on_target_points:.1f} ({100 * self.on_target_share:.0f} % under "
            f"{_seconds(self.latency_target_ms)})"
            if self.on_target_share is not None
            else f"on-target {self.on_target_points:.1f} (no latency target)"
        )
        return (
            f"composite = {self.quality_weight:.2f} × quality {self.quality:.1f} + time "
            f"{self.time_points:.1f} (median {_seconds(self.median_time_ms)}) + {target} "
            f"= {self.score:.1f}"
        )

    def to_dict(self):
        """camelCase for summary.json and the API."""
        return {
            "score": self.score,
            "quality": self.quality,
            "qualityWeight": self.quality_weight,
            "qualityPoints": self.quality_points,
            "timePoints": self.time_points,
            "medianTimeMs": self.median_time_ms,
            "onTargetPoints": self.on_target_points,
            "onTargetShare": self.on_target_share,
            "latencyTargetMs": self.latency_target_ms,
            "formula": self.formula(),
        }


def composite_rule(settings=DEFAULT_SETTINGS):
    """The formula in general, for a page that shows many composite scores."""
    half = settings.half
    return (
        f"composite = {settings.quality_weight:.2f} × quality (average item score 0–100) "
        f"+ time ({half:.0f} points when the median answer time is under "
        f"{settings.full_time_seconds:g} s, else {half:.0f} − {settings.points_per_minute:g} × "
        f"minutes, at least 0) + on-target ({half:.0f} × the share of answers within the run's "
        f"latency target; {half:.0f} when it sets none)"
    )


def _seconds(ms):
    seconds = ms / 1000.0
    return f"{seconds:.1f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


def time_points(median_time_ms, settings=DEFAULT_SETTINGS):
    """Full points under the full-time mark, else half − rate × minutes, never below 0."""
    if median_time_ms < settings.full_time_seconds * 1000.0:
        return settings.half
    minutes = median_time_ms / 60000.0
    return max(0.0, settings.half - settings.points_per_minute * minutes)


def on_target_points(met, answers, latency_target_ms, settings=DEFAULT_SETTINGS):
    """(points, share): the share of answers meeting the target × half; full with no target."""
    if latency_target_ms is None:
        return settings.half, None
    share = met / answers if answers else 0.0
    return settings.half * share, share


def composite(
    avg_score,
    median_time_ms,
    met=0,
    answers=0,
    latency_target_ms=None,
    settings=DEFAULT_SETTINGS,
):
    """The Composite of one target, or None when it has no scored answer or no answer time.

    avg_score: the average score (0-100) of its completed items; median_time_ms: the median
    answer time of its measured answers; met of answers: those within latency_target_ms (answers
    that failed count as answers that missed it).
    """
    if avg_score is None or median_time_ms is None:
        return None
    time = time_points(median_time_ms, settings)
    on_target, share = on_target_points(met, answers, latency_target_ms, settings)
    total = settings.quality_weight * avg_score + time + on_target
    return Composite(
        score=round(total, 1),
        quality=float(avg_score),
        quality_weight=settings.quality_weight,
        time_points=time,
        median_time_ms=float(median_time_ms),
        on_target_points=on_target,
        on_target_share=share,
        latency_target_ms=latency_target_ms,
    )


def best(composites):
    """The highest composite of several (None ones skipped), or None."""
    known = [c for c in composites if c is not None]
    return max(known, key=lambda c: c.score) if known else None
