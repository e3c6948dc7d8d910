"""A finished run's likely compares worked out with its own figures (exports/warm.py,
schedules/comparable.py): against the previous comparable run (same judge and task set, finished
before it) and against its collections' pinned baselines, the earlier run as A, so the compare
page a person opens reads a kept row and shows what a fresh computation shows."""

import datetime as dt
import logging
import re

from app.db.models import PENDING
from app.db.models import Baseline
from app.db.models import Collection
from app.db.models import Run
from app.db.models import RunCollection
from app.db.models import RunFigures
from app.exports import warm
from app.results import kept
from app.runs.queries import get_run
from app.schedules.comparable import likely_compares
from app.schedules.comparable import previous_comparable_run
from app.schedules.digest import digest_finished
from tests.factories import T0
from tests.test_kept_figures import random_run

CSRF_TOKEN = re.compile(
    r'(?<=name="csrf-token" content=")[^"]*|(?<=name="csrf_token" value=")[^"]*'
)


def finished(seed, hours, **fields):
    """A random finished run (tests/test_kept_figures.py) that finished `hours` after T0."""
    run = random_run(seed)
    fields["finished_at"] = T0 + dt.timedelta(hours=hours)
    Run.update(**fields).where(Run.id == run.id).execute()
    return get_run(run.run_id)


def compare_rows():
    """Every kept compare: (the run it is stored with, its name) -> (stamp, when worked out)."""
    return {
        (row.run_id, row.name): (row.stamp, row.computed_at)
        for row in RunFigures.select().where(RunFigures.name.startswith("compare:"))
    }


def kept_rows():
    return {
        (row.run_id, row.name): (row.stamp, row.computed_at)
        for row in RunFigures.select().where(RunFigures.name != warm.WARM)
    }


def pinned(run, name="bench"):
    """`run` pinned as the baseline of a new collection; returns the collection."""
    collection = Collection.create(name=name)
    RunCollection.create(run=run, collection=collection, collection_name=name)
    Baseline.create(collection=collection, run=run)
    return collection


def in_collection(run, collection):
    RunCollection.create(run=run, collection=collection, collection_name=collection.name)


def page(client, a, b):
    response = client.get(f"/compare?a={a.run_id}&b={b.run_id}")
    assert response.status_code == 200
    body = response.get_data(as_text=True)
    assert 'class="rs-compare"' in body  # the comparison itself, not a hint or an error
    # The form's CSRF token is signed with the second it was made: two views a second apart
    # differ there and nowhere else.
    return CSRF_TOKEN.sub("csrf", body)


def cold_page(client, a, b):
    """The compare page as a first view worked it out before: nothing kept, nothing cached."""
    kept.forget()
    RunFigures.delete().execute()
    return page(client, a, b)


def works_nothing_out(client, a, b):
    """The compare page of A and B, viewed by a new process, adds or changes no kept row and
    shows what a cold view shows."""
    RunFigures.update(computed_at=T0).execute()
    before = kept_rows()
    kept.forget()
    shown = page(client, a, b)
    assert kept_rows() == before
    assert shown == cold_page(client, a, b)


def test_a_warmed_runs_compare_with_the_previous_comparable_run_works_nothing_out(app, client):
    older, newer = finished(1, hours=0), finished(2, hours=1)
    digest_finished()
    warm.warm_run(newer)
    RunFigures.update(computed_at=T0).execute()
    before = kept_rows()
    kept.forget()  # a new process: only the stored rows
    shown = page(client, older, newer)
    assert client.get(f"/compare.md?a={older.run_id}&b={newer.run_id}").status_code == 200
    assert kept_rows() == before
    assert shown == cold_page(client, older, newer)


def test_the_warmed_compare_has_the_earlier_run_as_a(app):
    older, newer = finished(1, hours=0), finished(2, hours=1)
    digest_finished()
    warm.warm_run(newer)
    [(stored_with, name)] = compare_rows()  # stored with run A, named after run B
    assert stored_with == older.id
    assert name.startswith("compare:25:") and name.endswith(f"|{newer.id}|")


def test_a_run_not_digested_yet_finds_its_previous_comparable_run(app):
    older = finished(1, hours=0)
    digest_finished()
    newer = finished(2, hours=1)  # the warm pass got to it before the digest pass did
    assert previous_comparable_run(newer) == older


def test_the_previous_comparable_run_is_the_latest_finished_before_with_the_same_judge_and_tasks(
    app,
):
    wanted = finished(1, hours=0)
    finished(2, hours=1, judge_model="another-judge")
    finished(3, hours=2, dataset_hash="e" * 64)
    finished(4, hours=5)  # finished after the run
    run = finished(5, hours=3)
    digest_finished()
    assert previous_comparable_run(run) == wanted


def test_a_comparable_run_working_again_is_not_the_previous_one(app):
    older = finished(1, hours=0)
    newer = finished(2, hours=1)
    digest_finished()
    Run.update(status=PENDING).where(Run.id == older.id).execute()  # continued meanwhile
    assert previous_comparable_run(newer) is None


def test_a_run_with_no_comparable_predecessor_warms_no_compare(app):
    finished(1, hours=0, judge_model="another-judge")
    run = finished(2, hours=1)
    digest_finished()
    assert warm.keep_warm(run)
    assert compare_rows() == {}


def test_the_compare_with_a_pinned_baseline_works_nothing_out_after_the_warm(app, client):
    base = finished(1, hours=0, judge_model="another-judge")  # no previous comparable run
    run = finished(2, hours=1)
    in_collection(run, pinned(base))
    digest_finished()
    assert likely_compares(run) == [(base, run)]
    warm.warm_run(run)
    works_nothing_out(client, base, run)


def test_a_baseline_that_is_the_previous_run_is_compared_once(app):
    older, newer = finished(1, hours=0), finished(2, hours=1)
    in_collection(newer, pinned(older))
    digest_finished()
    assert likely_compares(newer) == [(older, newer)]


def test_a_run_that_is_its_collections_baseline_is_not_compared_with_itself(app):
    run = finished(1, hours=0)
    pinned(run)
    digest_finished()
    assert likely_compares(run) == []


def test_a_compare_that_fails_to_warm_is_logged_and_the_runs_own_figures_are_kept(
    app, monkeypatch, caplog
):
    older, newer = finished(1, hours=0), finished(2, hours=1)
    digest_finished()

    def broken(*args, **kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(warm, "kept_compare_runs", broken)
    with caplog.at_level(logging.ERROR):
        assert warm.keep_warm(newer)
    assert f"compare of runs {older.run_id} and {newer.run_id} not warmed" in caplog.text
    assert warm.is_warm(newer)


def test_two_runs_without_a_dataset_hash_are_comparable(app):
    older = finished(1, hours=0, dataset_hash=None)
    newer = finished(2, hours=1, dataset_hash=None)
    digest_finished()
    assert previous_comparable_run(newer) == older
