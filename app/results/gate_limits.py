"""The quality and speed gates a command asks for (`--fail-under 70 --max-ttft-p90 500 ...`),
as plain limits: apart from gates.py, which checks them against a run's figures (numpy), so the
CLI reads its options without importing those."""

from dataclasses import dataclass


@dataclass
class Gates:
    """Limits in points / percent; None means the gate is off."""

    fail_under: float | None = None
    max_failed_pct: float | None = None
    max_auto_fail_pct: float | None = None
    min_composite: float | None = None
    max_ttft_p90: float | None = None  # ms
    max_itl_p90: float | None = None  # ms
    min_goodput: float | None = None  # good answers per second

    def __bool__(self):
        limits = (self.fail_under, self.max_failed_pct, self.max_auto_fail_pct, self.min_composite)
        return any(v is not None for v in (*limits, *self.speed_limits()))

    def speed_limits(self):
        """The speed gates' limits, in SPEED_GATES' order."""
        return (self.max_ttft_p90, self.max_itl_p90, self.min_goodput)

    def asked(self):
        """The gates asked for, as their options read ("--fail-under 70"), in option order."""
        options = (
            ("--fail-under", self.fail_under),
            ("--max-failed-pct", self.max_failed_pct),
            ("--max-auto-fail-pct", self.max_auto_fail_pct),
            ("--min-composite", self.min_composite),
            ("--max-ttft-p90", self.max_ttft_p90),
            ("--max-itl-p90", self.max_itl_p90),
            ("--min-goodput", self.min_goodput),
        )
        return [f"{option} {limit:g}" for option, limit in options if limit is not None]

    def per_target(self):
        """Whether a gate checked per target only is asked for (they give JUnit testcases)."""
        return self.min_composite is not None or any(v is not None for v in self.speed_limits())
