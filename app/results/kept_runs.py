"""Figures of each run that pages across runs show, kept per run state (kept.py): Trends' and a
collection summary's on-target counts (for the composite of a run with a latency target) and
a run's goodput against its SLO. Each reads every item of its run, so a page of unchanged runs
reads one row per run instead. Caching wrappers only: the figures are composite_figures.py's
and goodput.py's."""

from ..db.models import Run
from .composite_figures import on_target_counts
from .goodput import run_goodput
from .kept import code_stamp
from .kept import kept_figures

# The code of the figures beside kept.py's own (composite_figures.py is in its stamp already).
_CODE = code_stamp(__file__, ("goodput.py", "speed.py"))


def _counts_rows(run, target_ms):
    """on_target_counts of one run as JSON rows: [target pk, category, met, answers]."""
    counts = on_target_counts({run.id: target_ms})
    return [[target, category, met, n] for (_run, target, category), (met, n) in counts.items()]


def kept_on_target_counts(targets_ms):
    """on_target_counts(targets_ms) ({run pk: latencyTargetMs}), each run's part kept while
    the run holds: {(run pk, target pk, category): (met, answers)}."""
    out = {}
    if not targets_ms:
        return out
    for run in Run.select().where(Run.id.in_(list(targets_ms))).order_by(Run.id):
        target_ms = targets_ms[run.id]
        rows = kept_figures(
            run,
            "on-target",
            lambda run=run, target_ms=target_ms: _counts_rows(run, target_ms),
            also=repr(float(target_ms)),
        )
        for target, category, met, n in rows:
            out[(run.id, target, category)] = (met, n)
    return out


def kept_goodput(run, speed=None):
    """run_goodput(run, speed=speed) against the run's own SLO, read back while the run (its
    items and settings, the SLO among them) holds."""
    return kept_figures(run, "goodput", lambda: run_goodput(run, speed=speed), also=_CODE)
