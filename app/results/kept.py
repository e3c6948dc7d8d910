"""Figures worked out from every item of a run, kept: per process (a small cache) and in the
database (RunFigures, one row per run and kind), each under a stamp of what they came from.

The results page's averages with their CIs, its category and difficulty breakdowns, the answer
times of the composite and the throughput each read all of a run's items: at 100 000 items a
second or more apiece. A view whose stamp still holds reads one row (or nothing, from the
cache); a changed run (a new or changed item, a re-judge, new settings or targets) is a stamp
not found, so its figures are worked out again. Figures are JSON, read back the same way
whether they were just worked out or stored, so a caller sees one shape.

A page shows several kept figures of one run, each under the run's stamp (three small reads):
inside `one_stamp_per_run()` (the web app's GET requests) each run's stamp is read once.
"""

import contextvars
import hashlib
import json
import logging
from decimal import Decimal
from pathlib import Path

from peewee import DatabaseError
from peewee import fn

from ..clock import utcnow
from ..db.connection import database
from ..db.models import CONTROL_RUNNING
from ..db.models import FINISHED
from ..db.models import RunFigures
from ..runs.counts import kept as kept_counts
from ..runs.outcomes import I
from ..runs.outcomes import T
from .recent import Recent

log = logging.getLogger(__name__)

# Which code worked the figures out: the source of the modules that do, and a version to bump
# when code elsewhere changes what they give. Part of the stamp, so figures stored by an older
# version are worked out again on their next view, not shown in an older shape.
FIGURES_VERSION = 1
_SOURCES = ("kept.py", "averages.py", "stats.py", "clustered.py", "composite_figures.py")
_SOURCES += ("system.py",)


def code_stamp(module_file, names, version=""):
    """A hash of the source files `names` beside `module_file` (and a `version`): the code a
    kept figure was worked out by, in its stamp, so figures kept by older code are worked out
    again, not shown in an older shape. A name may be a path from that folder or a glob
    ("../charts/*.py": each file it matches, in name order, so a module added there counts)."""
    folder = Path(module_file).parent
    digest = hashlib.sha256(f"{version}".encode())
    for name in names:
        paths = sorted(folder.glob(name)) if any(c in name for c in "*?[") else [folder / name]
        for path in paths:
            digest.update(path.read_bytes())
    return digest.hexdigest()


_CODE = code_stamp(__file__, _SOURCES, FIGURES_VERSION)

# The latest figures of a few runs, as JSON text, by (database, run, name, stamp): bounded, so
# a server that has shown many runs holds no more than this many.
_cache = Recent(64)

# {(database, run id): stamp} inside one_stamp_per_run(); None outside (read every time).
_stamps = contextvars.ContextVar("kept_stamps", default=None)


def one_stamp_per_run():
    """Read each run's stamp once from now until stamps_as_read(token) (a page: nothing it
    reads changes the run); returns the token for that."""
    return _stamps.set({})


def stamps_as_read(token):
    """Back to reading the stamp each time (the end of what one_stamp_per_run began)."""
    _stamps.reset(token)


def stamp(run):
    """The run's stamp (_read_stamp), read once per run inside one_stamp_per_run()."""
    seen = _stamps.get()
    if seen is None:
        return _read_stamp(run)
    key = (database.database, run.id)
    got = seen.get(key)
    if got is None:
        got = seen[key] = _read_stamp(run)
    return got


def item_reads(run):
    """(The latest updated_at of the run's items tried, its kept item counts and sums per
    target, status and stage): what a stamp of its items is made of (this module's, and its
    speed figures': kept_speed.stamp). Read once per run inside one_stamp_per_run(), as the stamp
    is: the results page stamps both, and each read is a round trip to PostgreSQL."""
    seen = _stamps.get()
    key = (database.database, run.id, "items")
    got = None if seen is None else seen.get(key)
    if got is None:
        latest = (
            I.select(fn.MAX(I.updated_at))
            .where((I.run == run) & I.last_attempt_at.is_null(False))
            .scalar()
        )
        got = (latest, kept_counts(run))
        if seen is not None:
            seen[key] = got
    return got


def _read_stamp(run):
    """What a run's figures are worked out from, as a hash: the code (_CODE), the run's settings
    and targets (a few rows), the latest updated_at of its items tried (an index seek:
    item_run_id_updated_at_tried; items never tried are in the counts) and its kept item
    counts and sums per target, status and stage (a few rows), so a change that left updated_at
    behind (another machine's clock, a retry in the same instant) is seen too."""
    latest, counts = item_reads(run)
    parts = [_CODE, json.dumps(run.settings or {}, sort_keys=True, default=str), str(latest)]
    targets = (
        T.select(T.id, T.provider_name, T.model, T.label, T.position, T.warmup_ms, T.warmup_error)
        .where(T.run == run)
        .order_by(T.id)
        .tuples()
    )
    parts += [repr(row) for row in targets]
    for key, sums in sorted(counts.items(), key=repr):
        # Sums of floats as PostgreSQL folds them may differ in the last digits: rounded.
        values = (f"{v:.6g}" if isinstance(v, float) else str(v) for v in sums.values())
        parts.append(f"{key}:{':'.join(values)}")
    return hashlib.sha256("|".join(parts).encode()).hexdigest()


def kept_figures(run, name, compute, also="", memory=True):
    """The figures `compute()` gives for `run` (anything JSON holds), read back as JSON.

    Kept under the run's stamp, with `also` (what else the figures come from, as text: the
    ratings of a report) in it: from the per-process cache, else the run's stored row, else
    worked out now and stored unless the run is working (its items change every second; the
    cache still serves views between). `memory=False` keeps them in the database only (a
    download's body: megabytes that a server holding 64 of them would not give back)."""
    run_stamp = full_stamp(run, also)
    key = (database.database, run.id, name, run_stamp)
    text = _cache.get(key) if memory else None
    if text is None:
        text = _stored(run, name, run_stamp)
    if text is None:
        text = json.dumps(compute(), default=_plain)
        if not _working(run):
            store_figures(run, name, run_stamp, text)
    if memory:
        _cache.put(key, text)
    return json.loads(text)


def full_stamp(run, also=""):
    """The stamp kept_figures keeps figures of `run` under, with `also` in it."""
    run_stamp = stamp(run)
    if also:
        run_stamp = hashlib.sha256(f"{run_stamp}|{also}".encode()).hexdigest()
    return run_stamp


def _plain(value):
    """A number JSON does not write as it is (PostgreSQL's numeric sums, numpy's) as a float."""
    if isinstance(value, Decimal):
        return float(value)
    if hasattr(value, "item"):  # a numpy number
        return value.item()
    raise TypeError(f"not JSON: {type(value).__name__}")


def _working(run):
    return run.status != FINISHED and run.control == CONTROL_RUNNING


def _stored(run, name, run_stamp):
    row = (
        RunFigures.select(RunFigures.figures)
        .where((RunFigures.run == run) & (RunFigures.name == name))
        .where(RunFigures.stamp == run_stamp)
        .tuples()
        .first()
    )
    return None if row is None else row[0]


def store_figures(run, name, run_stamp, text):
    """Keep `text` as the run's `name` figures (replacing older ones). A database that takes no
    write now (read-only, locked past its wait, a full disk, the run deleted meanwhile) only
    costs the next view a computation: the figures are shown all the same."""
    now = utcnow()
    try:
        with database.atomic():
            RunFigures.insert(
                run=run.id, name=name, stamp=run_stamp, figures=text, computed_at=now
            ).on_conflict(
                conflict_target=[RunFigures.run, RunFigures.name],
                update={
                    RunFigures.stamp: run_stamp,
                    RunFigures.figures: text,
                    RunFigures.computed_at: now,
                },
            ).execute()
    except DatabaseError:
        log.warning("%s figures of run %s not stored", name, run.run_id, exc_info=True)


def forget():
    """Empty the per-process cache (tests that compare kept figures with fresh ones)."""
    _cache.clear()


# RunFigures.name's length: a name that would not fit is worked out each view, not kept.
NAME_MAX = 100


def kept_across(runs, name, compute, also="", memory=True):
    """kept_figures for figures of several runs (a leaderboard, a compare, Trends' counts):
    stored with the first run under every run's stamp (and `also`), named `name` then `|<id>`
    of each other run and a closing `|`, so deleting any of them deletes the row
    (runs/control.delete_run). Scopes too many to name are worked out each view. `memory` as
    kept_figures has it."""
    across = _across(runs, name, also)
    if across is None:
        return json.loads(json.dumps(compute(), default=_plain))
    first, full, also = across
    return kept_figures(first, full, compute, also=also, memory=memory)


def _across(runs, name, also):
    """(the run, the full name, the `also`) kept_across keeps figures of `runs` under, or None
    when the name would not fit."""
    first, others = runs[0], runs[1:]
    full = name + "".join(f"|{r.id}" for r in others) + ("|" if others else "")
    if len(full) > NAME_MAX:
        return None
    stamps = "|".join(stamp(r) for r in others)
    return first, full, (f"{stamps}|{also}" if others else also)


def is_kept_across(runs, name, also=""):
    """Whether kept_across(runs, name, …, also) would read its figures back now, not work them
    out: a stored row under every run's current stamp (the stamps and one index read; what
    exports/warm.py checks before it works a compare out again)."""
    across = _across(runs, name, also)
    if across is None:
        return False
    first, full, also = across
    run_stamp = full_stamp(first, also)
    return (
        RunFigures.select(RunFigures.id)
        .where((RunFigures.run == first) & (RunFigures.name == full))
        .where(RunFigures.stamp == run_stamp)
        .exists()
    )
