"""A finished run's pages and files worked out when the run changes, not when a person looks.

Each figure a run's pages and its summary downloads show is kept under the run's stamp
(results/kept.py), but the first view after a change worked them all out on the request: 1.6 s
to 4 s of CPU per page at 100 000 items. warm_run calls the same functions the pages call, so
the figures kept are the ones a view would have worked out, and the view reads rows.

Where: beside the schedules' check on the scheduler thread (the app factory hands on_tick to
it), which starts one short-lived thread that checks up to BATCH finished runs not warmed yet,
else RECHECK warmed ones, and warms at most one per pass, so a request never waits for it and
the engine's thread never does either; and at the end of `llmbench run` (cli/watched_run.py),
for its run. A run is warm when its marker (a RunFigures row named WARM) holds the stamp of
everything its files show (kept_files.body_stamp): a finish, a continue, a re-judge, a new
rating or vote, an imported run all change it. Runs without a marker go first, newest first;
then warmed runs that finished again since their marker (a re-judge, a retry, a continue: one
join, REFINISHED of them); then runs whose ratings or votes changed since this process last
looked (ratings/changes.py: the rows the labels tables gained, whichever process wrote them,
LABELLED of them a pass, each once its labels stayed unchanged LABELS_QUIET passes; a
process's first look goes back CATCH_UP rows of each table); then
baselines pinned or changed since this process last looked (warm_pinned); then the warmed ones
in turn, RECHECK a pass in run id order, round and round from where the last pass stopped (a
cursor this process keeps: the ones checked longest ago come next), so every finished run is
looked at again within a few passes (what no query above finds is seen this way). Only a warm
writes (its marker): a pass over unchanged runs writes nothing, so an idle server leaves its
database alone.
A warm that fails is logged and marked (not tried again until the run changes): its pages work
the figures out on the request, as before. A baseline's compares that fail (a database busy)
are tried again on later passes, PIN_TRIES times in all, waiting longer after each failure. A
live run is not warmed: its stamp changes every second.

With its own figures, a run's likely compares are worked out too (schedules/comparable.py):
against the previous comparable run and its collections' baselines, the earlier run as A, as the
compare page reads them. A pair nobody is likely to open is still worked out on its first view.
What changes later is warmed again by the same pass: a run warmed again warms the compares
later runs have it in as A (its next comparable run's, and those of the runs it is the
baseline of: comparable.later_compares); a baseline pinned after its collection's runs
finished gets its compares with the newest FOLLOWERS of them (comparable.runs_shown_with). A
compare already kept is checked (its runs' stamps, one index read), not worked out again.
"""

import itertools
import json
import logging
import threading
import time

from peewee import JOIN

from ..clock import utcnow
from ..db.connection import database
from ..db.models import FINISHED
from ..db.models import Baseline
from ..db.models import Run
from ..db.models import RunFigures
from ..db.models import RunTarget
from ..heap import give_back
from ..ratings.cards import parse_filters
from ..ratings.changes import changed_runs
from ..ratings.changes import latest_ids
from ..ratings.charts import CHARTS as REPORT_CHARTS
from ..ratings.kept import kept_choices
from ..ratings.kept import kept_judge_check
from ..ratings.kept import kept_progress
from ..ratings.kept import kept_report_chart
from ..ratings.kept import kept_run_report
from ..ratings.pair_queue import scope_pairs
from ..ratings.votes import Scope
from ..results.averages import breakdown
from ..results.averages import kept_latency_samples
from ..results.averages import model_averages
from ..results.averages import targets_from_averages
from ..results.composite import DEFAULT_SETTINGS
from ..results.composite import settings_from
from ..results.composite_figures import target_composites
from ..results.kept import one_stamp_per_run
from ..results.kept import stamps_as_read
from ..results.kept import store_figures
from ..results.kept_compare import PAGE_LIMIT
from ..results.kept_compare import compare_is_kept
from ..results.kept_compare import kept_compare_runs
from ..results.kept_runs import kept_goodput
from ..results.run_charts import CHARTS
from ..results.run_charts import kept_run_chart
from ..results.run_speed_charts import speed_chart
from ..results.run_speed_charts import speed_chart_names
from ..results.speed import run_speed
from ..results.stability import has_repeats
from ..results.stability import kept_stability
from ..results.system import system_view
from ..runs.queries import get_run
from ..schedules.comparable import later_compares
from ..schedules.comparable import likely_compares
from ..schedules.comparable import runs_shown_with
from .kept_files import body_stamp
from .kept_files import kept_markdown
from .kept_files import kept_report_text
from .kept_files import kept_summary_text

log = logging.getLogger(__name__)

WARM = "warm"  # the RunFigures name of a run's marker
WARM_SECONDS = 2.0  # a pass at most this often
BATCH = 20  # finished runs without a marker checked per pass (a stamp: a few index reads each)
# A/B's pairs are kept for each two targets of a run (A before B in the run's order) up to this
# many targets: 15 pairs, ~1 s of CPU and ~3 MB each at a million items a run.
AB_TARGETS = 6
# Warmed runs looked at again per pass, the ones checked longest ago: a stamp costs ~8 ms of CPU
# (100k items), so a server idle with many finished runs spends ~1 % of a core on it, not ~8 %.
# A run changed meanwhile (a rating, a re-judge) is shown right all the same: its pages work
# out what is not kept yet.
RECHECK = 3
# Warmed runs finished again since their warm (a re-judge, a retry, a continue) looked at per
# pass, ahead of their turn: found by one join of the runs with their markers.
REFINISHED = 3
# Runs whose ratings or votes changed checked per pass, ahead of their turn (a stamp each).
LABELLED = 3
# Passes a run's labels must stay unchanged before it is re-warmed (about 8 s): a person rating
# item after item has the run re-warmed once when they pause, not after every rating (a re-warm
# is ~3.4 s of CPU at 100 000 items, on the thread the pages share the interpreter with).
LABELS_QUIET = 4
# How far back, in rows of each labels table, a process's first pass looks for changed runs: a
# rating made while the server was down is found too, a restart costs a bounded read.
CATCH_UP = 10_000
# Baselines not handled yet by this process checked per pass (after a restart: every one; a
# check reads a few stamps, and the compares only where they are not kept).
PINS = 5
# Passes at a baseline whose compares failed (a database busy, a run deleted meanwhile), the
# first included: each failure waits twice as many passes (0, 1, 3) before the next; after the
# last, its pages work the compares out, as before.
PIN_TRIES = 4

_lock = threading.Lock()
_state = {"passed": None, "thread": None}
# The warmed run whose turn came last, by database: the next pass goes on after it. Kept in
# memory, not written: a row updated per pass wrote to an idle server's database every 2 s.
_turns = {}
_MARKED = (RunFigures.run == Run.id) & (RunFigures.name == WARM)  # a run's marker, in a join


def warm_run(run, composite_settings=DEFAULT_SETTINGS):
    """Work out and keep, under the run's current stamp, every figure its results page, run
    page, charts, Evaluate and A/B and its summary.json, report.html and results.md read, and
    its compares with the previous comparable run and its baselines, by the functions they
    call."""
    token = one_stamp_per_run()
    try:
        averages = model_averages(run)
        targets = targets_from_averages(averages)
        breakdown(run, "category", targets=targets)
        breakdown(run, "difficulty", targets=targets)
        speed = run_speed(run, averages)
        give_back()  # its columns (~70 MiB at a million answers): not held beside the pages'
        kept_goodput(run, speed=speed)
        for narrow in (False, True):  # the page's and its phone width's (and report.html's)
            for name in speed_chart_names(run, speed):
                speed_chart(run, name, narrow, averages=averages, speed=speed)
            for target in speed["targets"]:
                speed_chart(run, "timeline", narrow, target=target["targetId"], speed=speed)
        target_composites(run, composite_settings, averages)
        system_view(run)
        kept_judge_check(run)
        kept_run_report(run)  # the in-app report and its charts
        for narrow in (False, True):
            for name in REPORT_CHARTS:
                kept_report_chart(run, name, narrow)
        if has_repeats(run):
            kept_stability(run)
        kept_latency_samples(run)
        for narrow in (False, True):
            for name in CHARTS:
                kept_run_chart(run, name, narrow)
        kept_summary_text(run, composite_settings)
        kept_report_text(run, composite_settings)
        for _head in kept_markdown(run, detailed=False, composite_settings=composite_settings):
            pass
        give_back()
        _warm_ratings(run)
        give_back()
        _warm_compares(run, composite_settings)
        _warm_later_compares(run, composite_settings)
    finally:
        stamps_as_read(token)
        # What it freed handed back: on the warm thread's own malloc arena, a server's
        # requests could not reuse it, and warm + a page walk peaked at the sum of both.
        give_back()


def _warm_ratings(run):
    """Evaluate's counts and categories for the run picked alone (a person not signed in, as
    on a local server), and A/B's pairs of each two of its targets: a first view of either
    read every answer of the run (1.5 s of CPU each at a million items)."""
    filters = parse_filters({"run": run.run_id})
    kept_choices(filters)
    kept_progress(filters)
    targets = list(RunTarget.select().where(RunTarget.run == run.id).order_by(RunTarget.position))
    if len(targets) <= AB_TARGETS:
        for target_a, target_b in itertools.combinations(targets, 2):
            scope_pairs(Scope(run, target_a, run, target_b))


def _warm_compares(run, composite_settings):
    """The compares a person is likely to open next (schedules/comparable.py: the previous
    comparable run's and each baseline's, A before B), as the compare page reads them: a first
    view of a new pair worked it out on the request, 4.9 s of CPU at 100 000 items a run. One
    that fails is logged: the run's own figures are kept all the same, and the page works the
    compare out itself."""
    for before, after in likely_compares(run):
        _warm_compare(before, after, composite_settings)


def _warm_later_compares(run, composite_settings):
    """The compares other warmed runs are likely opened with that have this run as A (with the
    run it is the previous comparable run of, and with the newest runs of the collections it
    is the baseline of: comparable.later_compares): a re-judge, a continue or a rating of this
    run left them stale, and the later run's own warm does not look at them while that run
    is unchanged. A later run not warmed yet works its compares out in its own warm."""
    for before, after in later_compares(run):
        if _marker(after) is not None:
            _warm_compare(before, after, composite_settings)


def _warm_compare(before, after, composite_settings):
    """Keep the compare of `before` (A) with `after` (B) as the compare page reads it, unless it
    is kept already; True when it was worked out and kept, False when it was kept already,
    None when it failed (logged), or was worked out but could not be stored (a database that
    took no write: store_figures logs it and the view goes on)."""
    try:
        # Read as the page reads them (get_run): each run's row is part of the kept stamp.
        run_a, run_b = get_run(before.run_id), get_run(after.run_id)
        args = (run_a, run_b, PAGE_LIMIT, composite_settings)
        if compare_is_kept(*args):
            return False
        # In the database only: one this process could not store (a database busy) is worked
        # out and stored again on a later try, not read back from this process's memory.
        kept_compare_runs(*args, memory=False)
        return True if compare_is_kept(*args) else None
    except Exception:
        log.exception("compare of runs %s and %s not warmed", before.run_id, after.run_id)
        return None


def is_warm(run, composite_settings=DEFAULT_SETTINGS):
    """Whether the run was warmed (or failed to be) in the state it is in now."""
    run = _as_stored(run)
    return _marker(run) == body_stamp(run, composite_settings)


def _as_stored(run):
    # The run's row as every process reads it (its stamp holds the row): an object just
    # created holds its times as they were given, not as read back.
    return Run.get_by_id(run.id)


def keep_warm(run, composite_settings=DEFAULT_SETTINGS):
    """warm_run(run) unless it is warm or working, then mark it; True when it warmed. Errors are
    logged, not raised: the run's pages then work their figures out themselves."""
    try:
        run = _as_stored(run)
        if run.status != FINISHED:
            return False
        current = body_stamp(run, composite_settings)
        if _marker(run) == current:
            return False
    except Exception:  # the run deleted meanwhile, a database busy: the next pass tries
        log.exception("could not check run %s", run.run_id)
        return False
    cpu, started = time.process_time(), time.perf_counter()
    try:
        warm_run(run, composite_settings)
        done = {"seconds": round(time.perf_counter() - started, 3)}
        done["cpuSeconds"] = round(time.process_time() - cpu, 3)
    except Exception:  # the pages compute on the request instead; marked, so not retried
        log.exception("figures of run %s not warmed", run.run_id)
        done = {"failed": True}
    store_figures(run, WARM, current, json.dumps(done))  # a failed write is logged there
    return "failed" not in done


def warm_due(composite_settings=DEFAULT_SETTINGS, limit=BATCH, recheck=RECHECK):
    """Check up to `limit` finished runs not warmed yet (newest first), else up to `recheck`
    warmed ones (the next in turn) and warm the first that needs it (one run a pass: the next
    pass is a few seconds away); returns the run ids warmed."""
    unmarked = _unmarked(limit)
    for run in unmarked:
        if keep_warm(run, composite_settings):
            return [run.run_id]
    if unmarked:
        return []
    warmed = (
        _warm_refinished(composite_settings)
        or _warm_labelled(composite_settings)
        or warm_pinned(composite_settings)
    )
    if warmed:
        return warmed
    for run in _in_turn(recheck):
        _turns[database.database] = run.id  # its turn taken: the next pass goes on after it
        if keep_warm(run, composite_settings):
            return [run.run_id]
    return []


def on_tick(config, now=None):
    """The scheduler thread's hook: every WARM_SECONDS, check and warm finished runs on a
    thread of their own (at most one at a time)."""
    last = _state["passed"]
    if last is not None and time.monotonic() - last < WARM_SECONDS:
        return None
    _state["passed"] = time.monotonic()
    return warm_in_background(settings_from(config))


def warm_in_background(composite_settings=DEFAULT_SETTINGS):
    """Start a warm_due pass on its own thread unless one is going; returns that thread."""
    with _lock:
        thread = _state["thread"]
        if thread is not None and thread.is_alive():
            return thread
        thread = threading.Thread(
            target=_warm, args=(composite_settings,), name="warm-runs", daemon=True
        )
        _state["thread"] = thread
        thread.start()
        return thread


def _warm(composite_settings):
    try:
        with database.connection_context():
            warm_due(composite_settings)
    except Exception:  # a background pass must never take anything down; the next tries
        log.exception("warming finished runs failed")


def _unmarked(limit):
    """Up to `limit` finished runs without a marker, newest first."""
    return list(
        Run.select()
        .join(RunFigures, JOIN.LEFT_OUTER, on=_MARKED)
        .where((Run.status == FINISHED) & RunFigures.id.is_null())
        .order_by(Run.finished_at.desc(), Run.id.desc())
        .limit(limit)
    )


def _in_turn(recheck):
    """Up to `recheck` finished runs with a marker, the next after the last one whose turn
    came (by run id, from the first again past the last)."""
    after = _turns.get(database.database, 0)
    marked = Run.select().join(RunFigures, on=_MARKED).where(Run.status == FINISHED)
    runs = list(marked.where(Run.id > after).order_by(Run.id).limit(recheck))
    if len(runs) < recheck:
        runs.extend(marked.where(Run.id <= after).order_by(Run.id).limit(recheck - len(runs)))
    return runs


def _marker(run):
    return (
        RunFigures.select(RunFigures.stamp)
        .where((RunFigures.run == run) & (RunFigures.name == WARM))
        .scalar()
    )


# The baselines warm_pinned has handled, by database: {collection id: (run id, pinned at)}.
# In memory: a process's first pass checks every baseline (stamps only where all is kept).
_pins = {}
# The baselines whose compares failed, not handled yet, by database: {collection id: (the pin,
# failures so far, passes still to wait)}.
_failed_pins = {}


def warm_pinned(composite_settings=DEFAULT_SETTINGS, limit=PINS):
    """Warm the compares a newly pinned or changed baseline shows up in: with the newest
    finished runs of its collection (comparable.runs_shown_with), before anyone opens them.
    Reads the baselines (a row per collection) and goes through up to `limit` of those this
    process has not handled in that state, until one worked a compare out (the next pass
    takes the rest); returns the runs (B) whose compare with it was worked out. One that
    failed is looked at again on a later pass (PIN_TRIES)."""
    seen = _pins.setdefault(database.database, {})
    failed = _failed_pins.setdefault(database.database, {})
    pins = Baseline.select(Baseline.collection, Baseline.run, Baseline.pinned_at).tuples()
    pins = {collection: (run, at) for collection, run, at in pins}
    for gone in set(seen) - set(pins):
        del seen[gone]
    for gone in set(failed) - set(pins):
        del failed[gone]
    new = [(c, pin) for c, pin in sorted(pins.items()) if seen.get(c) != pin]
    new = [(c, pin) for c, pin in new if _pin_due(failed, c, pin)][:limit]
    token = one_stamp_per_run()  # a run's stamp read once however many pins it is shown with
    try:
        for collection, pin in new:
            warmed, ok = _warm_pin(collection, pin[0], composite_settings)
            if ok or _given_up(failed, collection, pin):
                seen[collection] = pin  # handled: not again until it changes
                failed.pop(collection, None)
            if warmed:
                return warmed
    finally:
        stamps_as_read(token)
    return []


def _pin_due(failed, collection, pin):
    """Whether this pass looks at a baseline not handled yet: yes, unless its compares failed
    on a pass a moment ago and its wait is not over (counted down here)."""
    pin_failed, failures, wait = failed.get(collection, (None, 0, 0))
    if pin_failed != pin or not wait:
        return True
    failed[collection] = (pin, failures, wait - 1)
    return False


def _given_up(failed, collection, pin):
    """Count a failure of the baseline's compares: True when it was the last try (PIN_TRIES),
    else it waits twice as many passes as the time before (none the first time)."""
    pin_failed, failures, _ = failed.get(collection, (None, 0, 0))
    failures = failures + 1 if pin_failed == pin else 1
    log.warning("compares with the baseline of collection %s not all kept", collection)
    if failures >= PIN_TRIES:
        log.warning("compares with the baseline of collection %s given up", collection)
        return True
    failed[collection] = (pin, failures, 2 ** (failures - 1) - 1)
    return False


def _warm_pin(collection, run_pk, composite_settings):
    """(the runs whose compare with the collection's baseline was worked out, whether every
    one is kept now)."""
    try:
        base = Run.get_or_none(Run.id == run_pk)
        if base is None or base.status != FINISHED:  # continued since: warmed as it finishes
            return [], True
        shown = runs_shown_with(base, [collection])
        done = [(run, _warm_compare(base, run, composite_settings)) for run in shown]
        return [run.run_id for run, worked in done if worked], None not in (w for _, w in done)
    except Exception:  # a database busy: tried again on a later pass
        log.exception("compares with the baseline of collection %s not warmed", collection)
        return [], False


def _warm_refinished(composite_settings, limit=REFINISHED):
    """Warm the first of up to `limit` warmed runs that finished again since their warm (a
    re-judge, a retry, a continue), the latest first, not waiting for their turn; returns
    its run id in a list. One found unchanged has its marker's time moved on: not looked at
    again until it finishes again."""
    refinished = (
        Run.select()
        .join(RunFigures, on=_MARKED)
        .where((Run.status == FINISHED) & (Run.finished_at > RunFigures.computed_at))
        .order_by(Run.finished_at.desc(), Run.id.desc())
        .limit(limit)
    )
    for run in list(refinished):
        if keep_warm(run, composite_settings):
            return [run.run_id]
        # Not before its finish (a clock ahead elsewhere): else it would be found every pass.
        moved_on = max(utcnow(), run.finished_at)
        RunFigures.update(computed_at=moved_on).where(
            (RunFigures.run == run.id) & (RunFigures.name == WARM)
        ).execute()
    return []


# The labels tables' newest ids this process has looked at, and the runs changed up to them not
# looked at yet, by database: {"seen": latest_ids(), "runs": {run id: passes still to wait}}.
# In memory, as _turns: a first pass goes back CATCH_UP rows, so the database tells what changed
# meanwhile.
_labels = {}


def _warm_labelled(composite_settings, limit=LABELLED):
    """Warm the first of up to `limit` runs whose ratings or votes changed (ratings/changes.py)
    since this process last looked and then stayed unchanged for LABELS_QUIET passes, not
    waiting for their turn; returns its run id in a list. Reads the labels tables' newest ids
    (one statement), and their new rows only when they moved."""
    latest = latest_ids()
    state = _labels.get(database.database)
    if state is None:
        seen = tuple(max(0, n - CATCH_UP) for n in latest)
        state = _labels[database.database] = {"seen": seen, "runs": {}}
    runs = state["runs"]
    if latest != state["seen"]:
        # A table whose newest rows went (an undone vote) looks from its newest id again.
        for run_pk in changed_runs(state["seen"], latest):
            runs.pop(run_pk, None)  # changed again: waits its quiet passes from now, last
            runs[run_pk] = LABELS_QUIET
        state["seen"] = latest
    quiet = [run_pk for run_pk, wait in runs.items() if wait <= 0]
    for run_pk in runs.keys() - set(quiet):
        runs[run_pk] -= 1
    for run_pk in quiet[:limit]:
        del runs[run_pk]  # looked at: a run changed again is found again
        run = Run.get_or_none(Run.id == run_pk)
        if run is not None and keep_warm(run, composite_settings):
            return [run.run_id]
    return []
