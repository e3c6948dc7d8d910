"""Batched run queries give what the per-run / per-target queries gave (summaries, answer paces)."""

import datetime as dt

from app.db.models import CONTROL_PAUSED
from app.db.models import CONTROL_RUNNING
from app.db.models import CONTROL_STOPPED
from app.db.models import NEW
from app.db.models import PENDING
from app.db.models import Item
from app.db.models import RunCollection
from app.runs import progress as run_progress
from app.runs.counts import tally
from app.runs.dto import run_summary
from app.runs.progress import RATE_WINDOW
from app.runs.progress import _answer_paces
from app.runs.progress import _interval
from app.runs.progress import _latest_answers
from app.runs.queries import active_run
from app.runs.queries import summaries
from tests.factories import add_item
from tests.factories import make_run

T0 = dt.datetime(2026, 1, 1, 12, 0, 0)


def test_summaries_match_one_run_summary_per_run(app):
    first, _ = make_run("run-a", targets=(("p", "m2"), ("p", "m1")))
    second, (target,) = make_run("run-b")
    RunCollection.create(run=second, collection_name="full")
    add_item(second, target, "t1")
    empty, _ = make_run("run-c", targets=())
    runs = [first, second, empty]
    assert summaries(runs) == [run_summary(r) for r in runs]


def _old_windows(run, targets):
    """The per-target query _answer_paces ran before it became one statement (UNION ALL)."""
    return {
        t.id: list(
            Item.select(Item.answered_at, Item.time_taken_ms)
            .where((Item.run == run) & (Item.target == t) & Item.answered_at.is_null(False))
            .order_by(Item.answered_at.desc())
            .limit(RATE_WINDOW)
            .tuples()
        )
        for t in targets
    }


def test_answer_paces_take_each_targets_latest_window(app, monkeypatch):
    run, targets = make_run("run-p", targets=(("p", "a"), ("p", "b"), ("p", "idle")))
    fast, slow, idle = targets
    for n in range(RATE_WINDOW + 5):  # more than a window: the oldest drop out
        add_item(run, fast, f"f{n}", answered_at=T0 + dt.timedelta(seconds=2 * n))
    for n in range(3):
        add_item(run, slow, f"s{n}", answered_at=T0 + dt.timedelta(seconds=30 * n))
    add_item(run, slow, "s-new", status=NEW, answered_at=None, time_taken_ms=None)
    add_item(run, idle, "i-new", status=NEW, answered_at=None, time_taken_ms=None)

    seen = []
    real = _interval
    monkeypatch.setattr(
        run_progress, "_interval", lambda w, now=None: seen.append(w) or real(w, now)
    )
    labels, latest = _latest_answers(run)
    left, paces = _answer_paces(tally(run), labels, latest, T0 + dt.timedelta(minutes=5))

    old = _old_windows(run, targets)
    assert seen == [old[fast.id], old[slow.id], old[idle.id]]
    assert len(old[fast.id]) == RATE_WINDOW and old[idle.id] == []
    assert left == {slow.id: 1, idle.id: 1}
    assert set(paces) == {fast.id, slow.id, idle.id}
    assert paces[idle.id] is None and paces[fast.id] == 2.0
    assert paces[slow.id] == 150.0  # answered last: its window runs to now (a stall shows)
    assert labels == {t.id: t.label for t in targets}


def test_the_runs_latest_answers_are_the_newest_of_all_its_targets(app):
    run, targets = make_run("run-l", targets=(("p", "a"), ("p", "b")))
    for n in range(RATE_WINDOW + 3):
        add_item(run, targets[n % 2], f"t{n}", answered_at=T0 + dt.timedelta(seconds=n))

    _, latest = _latest_answers(run)

    newest = (
        Item.select(Item.answered_at, Item.target)
        .where(Item.run == run)
        .order_by(Item.answered_at.desc())
        .limit(RATE_WINDOW)
        .tuples()
    )
    assert [(at, target) for at, _, _, _, target in latest[:RATE_WINDOW]] == list(newest)


def test_the_active_run_is_the_running_one_else_the_newest_paused(app):
    assert active_run() is None
    make_run("done")
    make_run("stopped", status=PENDING, control=CONTROL_STOPPED)
    assert active_run() is None
    make_run("paused-old", status=PENDING, control=CONTROL_PAUSED)
    later = T0 + dt.timedelta(hours=1)
    make_run("paused-new", status=PENDING, control=CONTROL_PAUSED, created_at=later)
    assert (active_run().run_id, active_run().state) == ("paused-new", "paused")
    make_run("running", status=PENDING, control=CONTROL_RUNNING)
    assert (active_run().run_id, active_run().state) == ("running", "running")
