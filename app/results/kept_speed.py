"""A run's speed figures (speed.run_speed) as kept: per process (a small cache) and in the
database (RunSpeed, one row per run), under a stamp of the run's items and the code that works
them out. Reading them back loads no numpy: a finished run's `llmbench show` reads one row
and imports none of what works them out (speed.py)."""

import hashlib
import json
import logging

from peewee import DatabaseError

from ..clock import utcnow
from ..db.connection import database
from ..db.models import CONTROL_RUNNING
from ..db.models import FINISHED
from ..db.models import RunSpeed
from .kept import code_stamp
from .kept import item_reads
from .recent import Recent

log = logging.getLogger(__name__)

# Which code worked the stored figures out: speed.py's source and a version to bump when
# figure code elsewhere changes what run_speed gives. Part of the stamp, so figures stored by
# an older version are worked out again on their next view, not shown in an older shape.
FIGURES_VERSION = 1
_CODE = code_stamp(__file__, ("speed.py",), FIGURES_VERSION)

# The latest figures of a few runs, by (run, stamp with its database): a page and its exports
# in this process read the RunSpeed row (or the items) once, not on every view.
_cache = Recent(16)


def stamp(run):
    """(database, what the figures were worked out from as a hash): the code (_CODE), the
    latest updated_at of a tried item (an index seek: item_run_id_updated_at_tried) and the
    run's kept item counts per target, status and stage with their answer-time, token and score
    counts (a few rows), so a change that left updated_at behind (another machine's clock, a
    retry in the same instant) is seen too. None when no item was tried (nothing worth
    keeping). The hash is what RunSpeed keeps; the database tells one process's caches apart."""
    latest, counts = item_reads(run)  # (read once per page with the results' own stamp)
    if latest is None:
        return None
    parts = [_CODE, str(latest)]
    for (target, status, stage), sums in sorted(counts.items()):
        parts.append(f"{target}:{status}:{stage}:{sums['n']}:{sums['answer_ms_n']}")
        # Sums of floats as PostgreSQL folds them may differ in the last digits: rounded.
        parts.append(
            f"{sums['tokens_generated']}:{sums['score_n']}:{float(sums['score'] or 0):.6g}"
        )
    return (database.database, hashlib.sha256("|".join(parts).encode()).hexdigest())


def kept_speed(run):
    """The run's speed figures if they are kept under its stamp now, else None (nothing is
    worked out: speed.run_speed does that)."""
    run_stamp = stamp(run)
    return None if run_stamp is None else kept(run, run_stamp)


def kept(run, run_stamp):
    """The figures kept for `run_stamp`: from the per-process cache, else the run's stored row
    (cached then); None when neither holds them."""
    key = (run.id, run.run_id, run_stamp)
    figures = _cache.get(key)
    if figures is None:
        figures = stored(run, run_stamp)
        if figures is not None:
            _cache.put(key, figures)
    return figures


def remember(run, run_stamp, figures):
    """Keep `figures` (just worked out) in the per-process cache for `run_stamp`."""
    _cache.put((run.id, run.run_id, run_stamp), figures)


def working(run):
    """Whether the run is answering or judging now: its items change every second, so figures
    kept for them would be stale by the next view (the per-process cache still serves views
    in between)."""
    return run.status != FINISHED and run.control == CONTROL_RUNNING


def stored(run, run_stamp):
    """The run's stored figures if they were worked out for `run_stamp`, else None."""
    row = (
        RunSpeed.select(RunSpeed.figures)
        .where((RunSpeed.run == run) & (RunSpeed.stamp == run_stamp[1]))
        .tuples()
        .first()
    )
    return None if row is None else json.loads(row[0])


def store(run, run_stamp, text):
    """Keep `text` (the figures as JSON) as the run's, for `run_stamp` (replacing older ones).
    A database that takes no write now (read-only, locked past its wait, a full disk, the run
    deleted meanwhile) only costs the next view a computation: the figures are shown all the
    same."""
    now, run_stamp = utcnow(), run_stamp[1]
    try:
        with database.atomic():
            RunSpeed.insert(run=run.id, stamp=run_stamp, figures=text, computed_at=now).on_conflict(
                conflict_target=[RunSpeed.run],
                update={
                    RunSpeed.stamp: run_stamp,
                    RunSpeed.figures: text,
                    RunSpeed.computed_at: now,
                },
            ).execute()
    except DatabaseError:
        log.warning("speed figures of run %s not stored", run.run_id, exc_info=True)
