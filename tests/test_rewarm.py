"""What a later change makes stale is warmed again by the warm pass (exports/warm.py), so the
first view after it reads kept rows: a baseline pinned after its collection's runs finished (its
compares with the newest of them, tried again on a later pass when they failed), a run re-judged
after it finished (its own figures, its compare with the previous comparable run, and the
compares later runs have it in as A), and a run rated or voted on (at once, not in its turn)."""

import contextlib
import datetime as dt
import logging
import sqlite3

import pytest

from app.clock import utcnow
from app.db.connection import PRAGMAS
from app.db.connection import database
from app.db.models import COMPLETED
from app.db.models import FINISHED
from app.db.models import PENDING
from app.db.models import Collection
from app.db.models import Item
from app.db.models import Run
from app.db.models import RunFigures
from app.db.models import RunTarget
from app.db.pg_sql import WRITE_LOCK_KEY
from app.exports import warm
from app.ratings.store import put_rating
from app.ratings.votes import change_vote
from app.ratings.votes import record_vote
from app.ratings.votes import undo_last_vote
from app.results.kept_compare import PAGE_LIMIT
from app.results.kept_compare import compare_is_kept
from app.results.kept_compare import kept_compare_runs
from app.runs.queries import get_run
from app.runs.retries import rejudge_item
from app.schedules.baselines import pin_baseline
from app.schedules.comparable import FOLLOWERS
from app.schedules.comparable import later_compares
from app.schedules.comparable import next_comparable_run
from app.schedules.comparable import runs_shown_with
from app.schedules.digest import digest_finished
from tests.factories import add_item
from tests.factories import make_run
from tests.factories import shown_pair
from tests.test_kept_figures import tried
from tests.test_warm import WRITES
from tests.test_warm import looked_at
from tests.test_warm_compares import compare_rows
from tests.test_warm_compares import finished
from tests.test_warm_compares import in_collection
from tests.test_warm_compares import pinned
from tests.test_warm_compares import works_nothing_out


def all_warm():
    """Every pass until one warms nothing (each warms one run, or one baseline's compares)."""
    while warm.warm_due():
        pass


def rejudged(run, score=3.0):
    """`run` after a re-judge of its first completed item that gave `score`: reopened, the item
    judged again, the run finished again (as the engine leaves it)."""
    item = (
        Item.select()
        .where((Item.run == run.id) & (Item.status == COMPLETED))
        .order_by(Item.id)
        .first()
    )
    rejudge_item(run.run_id, item.id)
    now = utcnow()
    Item.update(
        status=COMPLETED, evaluation_score=score, judged_at=now, updated_at=now, last_attempt_at=now
    ).where(Item.id == item.id).execute()
    Run.update(status=FINISHED, finished_at=now).where(Run.id == run.id).execute()
    return get_run(run.run_id)


def baseline_and_run():
    """A run and, not comparable with it, another of its collection (not pinned yet), both
    warmed; returns (the other, the run, their collection)."""
    base = finished(1, hours=0, judge_model="another-judge")  # not the run's previous
    run = finished(2, hours=1)
    collection = Collection.create(name="bench")
    in_collection(base, collection)
    in_collection(run, collection)
    digest_finished()
    all_warm()
    return base, run, collection


def test_pinning_a_baseline_warms_its_compare_with_the_runs_of_its_collection(app, client):
    base, run, collection = baseline_and_run()
    assert not any(name.endswith(f"|{run.id}|") for _, name in compare_rows() if _ == base.id)
    pin_baseline(collection.id, base.run_id)
    assert warm.warm_due() == [run.run_id]
    works_nothing_out(client, get_run(base.run_id), run)


def test_changing_a_baseline_warms_the_new_ones_compares(app, client):
    base, run, collection = baseline_and_run()
    pin_baseline(collection.id, run.run_id)
    assert warm.warm_due() == [base.run_id]  # the older run is shown with it too
    pin_baseline(collection.id, base.run_id)
    assert warm.warm_due() == [run.run_id]
    works_nothing_out(client, get_run(base.run_id), run)


def test_a_pin_the_pass_has_warmed_is_not_looked_at_again(app, caplog):
    base, run, collection = baseline_and_run()
    pin_baseline(collection.id, base.run_id)
    all_warm()
    before = list(RunFigures.select().order_by(RunFigures.id).tuples())
    with caplog.at_level(logging.DEBUG, logger="peewee"):
        assert warm.warm_due() == []
        assert warm.warm_due() == []
    statements = [r.msg[0] for r in caplog.records if r.name == "peewee" and r.msg]
    assert [s for s in statements if s.split(None, 1)[0].upper() in WRITES] == []
    assert list(RunFigures.select().order_by(RunFigures.id).tuples()) == before


def test_a_new_process_finds_the_compares_of_a_pinned_baseline_kept_and_works_nothing_out(
    app, monkeypatch
):
    base, run, collection = baseline_and_run()
    pin_baseline(collection.id, base.run_id)
    all_warm()
    monkeypatch.setattr(warm, "_pins", {})  # a restarted server: every baseline looks new
    assert warm.warm_pinned() == []


def test_a_baseline_is_shown_with_the_newest_finished_runs_of_its_collection(app):
    base = finished(1, hours=0, judge_model="another-judge")
    collection = pinned(base)
    runs = [finished(2 + n, hours=1 + n) for n in range(FOLLOWERS + 2)]
    for run in runs:
        in_collection(run, collection)
    digest_finished()
    newest = list(reversed(runs))[:FOLLOWERS]
    assert [r.id for r in runs_shown_with(base)] == [r.id for r in newest]


def test_rejudging_a_run_warms_its_figures_and_its_compare_with_the_previous_run(app, client):
    older, newer = finished(1, hours=0), finished(2, hours=1)
    digest_finished()
    all_warm()
    newer = rejudged(newer)
    assert not warm.is_warm(newer)
    assert warm.warm_due(recheck=0) == [newer.run_id]  # at once, not when its turn comes
    assert warm.is_warm(newer)
    works_nothing_out(client, get_run(older.run_id), newer)


def test_rejudging_a_run_warms_its_compare_with_the_next_comparable_run(app, client):
    older, newer = finished(1, hours=0), finished(2, hours=1)
    digest_finished()
    all_warm()
    assert next_comparable_run(older) == newer
    older = rejudged(older)
    assert warm.warm_due() == [older.run_id]
    works_nothing_out(client, older, get_run(newer.run_id))


def test_rejudging_a_baseline_warms_its_compares_with_the_runs_it_is_shown_with(app, client):
    base, run, collection = baseline_and_run()
    pin_baseline(collection.id, base.run_id)
    all_warm()
    base = rejudged(base)
    assert later_compares(base) == [(base, run)]
    assert warm.warm_due() == [base.run_id]
    works_nothing_out(client, base, get_run(run.run_id))


def test_a_run_finished_on_a_clock_ahead_is_warmed_once_then_left_alone(app, caplog):
    run = finished(1, hours=0)
    digest_finished()
    all_warm()
    ahead = utcnow() + dt.timedelta(hours=1)  # another machine's clock: after every warm
    Run.update(finished_at=ahead).where(Run.id == run.id).execute()
    assert warm.warm_due() == [run.run_id]
    assert warm.warm_due() == []  # found warm: not looked at again until it finishes again
    with caplog.at_level(logging.DEBUG, logger="peewee"):
        assert warm.warm_due() == []
    statements = [r.msg[0] for r in caplog.records if r.name == "peewee" and r.msg]
    assert [s for s in statements if s.split(None, 1)[0].upper() in WRITES] == []


def test_a_later_run_not_warmed_yet_is_left_to_its_own_warm(app):
    older = finished(1, hours=0)
    finished(2, hours=1)
    digest_finished()
    warm.warm_run(older)  # as `llmbench run` ends, before the pass reaches the newer run
    assert compare_rows() == {}


def test_a_compare_is_kept_once_worked_out_and_not_after_a_change_in_either_run(app):
    older, newer = finished(1, hours=0), finished(2, hours=1)
    assert not compare_is_kept(older, newer, PAGE_LIMIT)
    kept_compare_runs(older, newer, limit=PAGE_LIMIT)
    assert compare_is_kept(older, newer, PAGE_LIMIT)
    assert not compare_is_kept(older, newer, 50)  # another page's limit: another kept compare
    assert not compare_is_kept(rejudged(older), get_run(newer.run_id), PAGE_LIMIT)


@contextlib.contextmanager
def another_write_open(app):
    """Another connection's write transaction open on the database (a long write elsewhere)
    and this connection's wait for the write lock cut short: its writes fail, as past a wait."""
    if database.is_postgres:
        import psycopg  # only the PostgreSQL half needs the driver

        holder = psycopg.connect(app.config["DB"])
        holder.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK_KEY,))
        short, back = "SET lock_timeout = '1ms'", "RESET lock_timeout"
    else:
        holder = sqlite3.connect(app.config["DB"], isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        short, back = "PRAGMA busy_timeout = 0", f"PRAGMA busy_timeout = {PRAGMAS['busy_timeout']}"
    database.execute_sql(short)
    try:
        yield
    finally:
        holder.rollback()
        holder.close()
        database.execute_sql(back)


def test_a_pin_whose_compares_failed_is_warmed_by_a_later_pass(app, client, caplog):
    base, run, collection = baseline_and_run()
    pin_baseline(collection.id, base.run_id)
    with another_write_open(app):
        assert warm.warm_due() == []  # worked out, but not stored
    assert "not stored" in caplog.text
    assert warm.warm_due() == [run.run_id]
    works_nothing_out(client, get_run(base.run_id), run)


def test_a_pin_whose_compares_keep_failing_is_tried_a_few_times_then_left(app, caplog):
    base, run, collection = baseline_and_run()
    pin_baseline(collection.id, base.run_id)
    with another_write_open(app), caplog.at_level(logging.WARNING, logger=warm.__name__):
        for _ in range(2**warm.PIN_TRIES):  # more passes than the tries and their waits
            assert warm.warm_pinned() == []
    failed = [r for r in caplog.records if r.getMessage().endswith(" not all kept")]
    assert len(failed) == warm.PIN_TRIES
    assert caplog.text.count("given up") == 1
    assert warm.warm_pinned() == []  # left to the pages, until it is pinned again
    assert not compare_is_kept(get_run(base.run_id), get_run(run.run_id), PAGE_LIMIT)


@pytest.fixture(autouse=True)
def labels_warmed_without_waiting(monkeypatch):
    """Most tests here look at the pass right after a change: the quiet passes a run's labels
    wait (warm.LABELS_QUIET) have a test of their own."""
    monkeypatch.setattr(warm, "LABELS_QUIET", 0)


def two_target_runs(count):
    """`count` finished runs whose two targets answered the same two tasks, every one warmed
    (in run id order)."""
    runs = []
    for n in range(count):
        run, targets = make_run(f"labelled-{n}", targets=[("local", "m1"), ("local", "m2")])
        for position, target in enumerate(targets):
            for task in ("t1", "t2"):
                add_item(run, target, task, score=40.0 + 10 * position + n, **tried())
        runs.append(get_run(run.run_id))
    digest_finished()
    all_warm()
    return runs


def answers(run, task="t1"):
    """The run's two items of `task`, its first target's first."""
    targets = RunTarget.select(RunTarget.id).where(RunTarget.run == run.id)
    items = Item.select().where((Item.target.in_(targets)) & (Item.task_key == task))
    return list(items.order_by(Item.target))


def markers():
    return {
        row.run_id: (row.stamp, row.computed_at)
        for row in RunFigures.select().where(RunFigures.name == warm.WARM)
    }


def warmed_at_once(run):
    """The next pass warms `run`, not waiting for its turn, and no other run."""
    before = markers()
    assert warm.warm_due(recheck=0) == [run.run_id]
    after = markers()
    assert [pk for pk in after if after[pk] != before[pk]] == [run.id]
    assert warm.is_warm(run)


def test_a_new_rating_makes_the_next_pass_warm_its_run_and_only_it(app):
    rated = two_target_runs(4)[1]
    put_rating(rated.run_id, answers(rated)[0].id, {"rating": 4})
    warmed_at_once(rated)


def test_a_run_rated_again_and_again_is_warmed_once_its_labels_stay_unchanged(app, monkeypatch):
    monkeypatch.setattr(warm, "LABELS_QUIET", 2)
    rated = two_target_runs(3)[1]
    first, second = answers(rated)[:2]
    put_rating(rated.run_id, first.id, {"rating": 4})
    assert warm.warm_due(recheck=0) == []  # found: waits two passes
    put_rating(rated.run_id, second.id, {"rating": 2})
    assert warm.warm_due(recheck=0) == []  # rated again: waits two passes from now
    assert warm.warm_due(recheck=0) == []
    assert not warm.is_warm(rated)
    warmed_at_once(rated)


def test_a_new_vote_makes_the_next_pass_warm_its_run_and_only_it(app):
    voted = two_target_runs(4)[2]
    left, right = answers(voted)
    record_vote({"pairToken": shown_pair(left.id, right.id), "winner": "LEFT"})
    warmed_at_once(voted)


@pytest.mark.parametrize("change", [{"rating": 2}, {}])  # changed, cleared
def test_a_changed_or_cleared_rating_makes_the_next_pass_warm_its_run(app, change):
    runs = two_target_runs(3)
    item = answers(runs[0])[0]
    put_rating(runs[0].run_id, item.id, {"rating": 4})
    all_warm()
    put_rating(runs[0].run_id, item.id, change)
    warmed_at_once(runs[0])


@pytest.mark.parametrize("undone", [False, True])
def test_a_changed_or_undone_vote_makes_the_next_pass_warm_its_run(app, undone):
    runs = two_target_runs(3)
    left, right = answers(runs[0])
    vote = record_vote({"pairToken": shown_pair(left.id, right.id), "winner": "LEFT"})
    all_warm()
    if undone:
        undo_last_vote()
    else:
        change_vote(vote.id, {"winner": "TIE"})
    # A changed vote is in every run's stamp (ratings/kept._votes_stamp): the others are
    # warmed again in their turn, the voted run first.
    assert warm.warm_due(recheck=0) == [runs[0].run_id]
    assert warm.is_warm(runs[0])


def test_a_vote_across_two_runs_makes_the_next_passes_warm_both(app):
    first, second = two_target_runs(3)[:2]
    left, right = answers(first)[0], answers(second)[1]
    record_vote({"pairToken": shown_pair(left.id, right.id), "winner": "RIGHT"})
    passes = [warm.warm_due(recheck=0), warm.warm_due(recheck=0)]  # one run a pass
    assert sorted(passes) == sorted([[first.run_id], [second.run_id]])


def test_a_rating_made_before_the_server_started_is_found_by_its_first_pass(app, monkeypatch):
    rated = two_target_runs(3)[2]
    put_rating(rated.run_id, answers(rated)[1].id, {"rating": 5, "notes": "while it was down"})
    monkeypatch.setattr(warm, "_labels", {})  # a server started since: nothing seen yet
    warmed_at_once(rated)


def test_a_rated_run_once_warmed_is_not_looked_at_again(app, monkeypatch, caplog):
    rated = two_target_runs(3)[0]
    put_rating(rated.run_id, answers(rated)[0].id, {"rating": 3})
    assert warm.warm_due(recheck=0) == [rated.run_id]
    looked = looked_at(monkeypatch)
    with caplog.at_level(logging.DEBUG, logger="peewee"):
        assert warm.warm_due(recheck=0) == []
        assert warm.warm_due(recheck=0) == []
    statements = [r.msg[0] for r in caplog.records if r.name == "peewee" and r.msg]
    assert [s for s in statements if s.split(None, 1)[0].upper() in WRITES] == []
    assert looked == []


def test_a_rating_on_a_working_run_is_left_to_its_finish(app):
    run = two_target_runs(1)[0]
    Run.update(status=PENDING).where(Run.id == run.id).execute()
    put_rating(run.run_id, answers(run)[0].id, {"rating": 1})
    assert warm.warm_due(recheck=0) == []
    Run.update(status=FINISHED, finished_at=utcnow()).where(Run.id == run.id).execute()
    assert warm.warm_due(recheck=0) == [run.run_id]
