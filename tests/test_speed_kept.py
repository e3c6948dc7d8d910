"""A run's speed figures kept in the database (RunSpeed, results/speed.py): read back while the
run's items have not changed, worked out again when they have, stored when a finished run is
digested. On SQLite and PostgreSQL (conftest.ALSO_ON_POSTGRES)."""

import datetime as dt
import json
import random

import pytest

from app.db.connection import database
from app.db.models import COMPLETED
from app.db.models import CONTROL_RUNNING
from app.db.models import FAILED
from app.db.models import NEW
from app.db.models import PENDING
from app.db.models import Item
from app.db.models import RunSpeed
from app.latency import histogram
from app.latency import pack
from app.results import kept_speed
from app.results.speed import compute_speed
from app.results.speed import run_speed
from app.schedules.digest import digest_finished
from tests.factories import T0
from tests.factories import add_item
from tests.factories import make_run

TIMEOUT = "No answer from http://127.0.0.1:9/v1 within 5 s (read timeout)"


def tried(item_time=T0, **fields):
    return {"last_attempt_at": item_time, "updated_at": item_time, **fields}


def answered(run, target, key, rng, when=T0, **fields):
    """One streamed answer with random timing columns and gap histogram."""
    ttft = rng.uniform(50, 900)
    tokens = rng.randint(1, 400)
    e2e = ttft + tokens * rng.uniform(5, 60)
    gaps = [rng.uniform(1, 80) for _ in range(tokens - 1)] + [rng.uniform(130, 5000)] * (
        rng.random() < 0.2
    )
    values = {
        "category": rng.choice(("math", "code", "")),
        "time_taken_ms": e2e,
        "ttft_ms": ttft,
        "first_answer_ms": ttft + rng.uniform(0, 50),
        "tokens_generated": tokens,
        "tokens_per_second": 1000.0 * max(tokens - 1, 1) / (e2e - ttft),
        "tokens_estimated": rng.random() < 0.1,
        "sent_ts": 1_700_000_000.0 + rng.uniform(0, 60),
        "chunks": tokens,
        "itl_hist": pack(histogram(gaps)) if tokens > 1 else None,
        "queue_ms": rng.uniform(0, ttft) if rng.random() < 0.5 else None,
        **tried(when),
    }
    values.update(fields)
    return add_item(run, target, key, score=rng.uniform(0, 100), **values)


def random_run(seed, run_id=None):
    """A finished run of 1-3 targets with random answers, timeouts and refused calls."""
    rng = random.Random(seed)
    targets = [("local", f"m{n}") for n in range(rng.randint(1, 3))]
    run, made = make_run(run_id or f"kept-{seed}", targets=targets)
    for target in made:
        for n in range(rng.randint(1, 40)):
            if rng.random() < 0.1:
                add_item(
                    run,
                    target,
                    f"t{n}",
                    status=FAILED,
                    error_stage="answer",
                    category=rng.choice(("math", "code")),
                    error_msg=rng.choice((TIMEOUT, "Cannot reach it: connection refused")),
                    **tried(),
                )
            else:
                answered(run, target, f"t{n}", rng)
    return run


def forget():
    """What a new process (another gunicorn worker, the CLI) starts with: no cached figures."""
    kept_speed._cache.clear()


def stored(run):
    row = RunSpeed.get_or_none(RunSpeed.run == run)
    return None if row is None else json.loads(row.figures)


@pytest.mark.parametrize("seed", range(4))
def test_stored_figures_equal_a_fresh_computation(app, seed):
    run = random_run(seed)
    first = run_speed(run)
    forget()
    again = run_speed(run)
    fresh = compute_speed(run)
    # The same figures, keys in the same order, ints as ints.
    assert json.dumps(stored(run)) == json.dumps(fresh)
    assert json.dumps(again) == json.dumps(first) == json.dumps(fresh)


def test_a_view_whose_stamp_holds_reads_the_stored_row_not_the_items(app):
    run = random_run(10)
    run_speed(run)
    forget()
    marked = {**stored(run), "runId": "from the row"}
    RunSpeed.update(figures=json.dumps(marked)).where(RunSpeed.run == run).execute()
    assert run_speed(run)["runId"] == "from the row"


def test_a_retried_answer_makes_the_figures_worked_out_again(app):
    run, (t,) = make_run("kept-retry")
    rng = random.Random(1)
    for n in range(3):
        answered(run, t, f"a{n}", rng)
    late = add_item(
        run, t, "late", status=FAILED, error_stage="answer", error_msg=TIMEOUT, **tried()
    )
    assert run_speed(run)["targets"][0]["timeouts"] == 1
    Item.update(
        status=COMPLETED,
        error_stage=None,
        error_msg=None,
        time_taken_ms=9000.0,
        ttft_ms=100.0,
        tokens_generated=10,
        updated_at=T0 + dt.timedelta(seconds=5),
    ).where(Item.id == late.id).execute()
    forget()
    figures = run_speed(run)["targets"][0]
    assert (figures["timeouts"], figures["e2eMs"]["max"]) == (0, 9000.0)
    assert json.dumps(stored(run)) == json.dumps(compute_speed(run))


def test_a_new_answer_makes_the_figures_worked_out_again(app):
    run, (t,) = make_run("kept-new")
    rng = random.Random(2)
    answered(run, t, "a", rng)
    waiting = add_item(run, t, "b", status=NEW, time_taken_ms=None, ttft_ms=None)
    assert run_speed(run)["targets"][0]["answers"] == 1
    Item.update(
        status=COMPLETED,
        time_taken_ms=500.0,
        last_attempt_at=T0 + dt.timedelta(seconds=3),
        updated_at=T0 + dt.timedelta(seconds=3),
    ).where(Item.id == waiting.id).execute()
    assert run_speed(run)["targets"][0]["answers"] == 2
    assert stored(run)["targets"][0]["answers"] == 2


def test_a_change_in_the_same_instant_is_seen_by_the_item_counts(app):
    # updated_at left where it was (another machine's clock behind, a retry in the same
    # instant): the run's kept counts change all the same.
    run, (t,) = make_run("kept-instant")
    rng = random.Random(3)
    first = answered(run, t, "a", rng)
    answered(run, t, "b", rng)
    assert run_speed(run)["targets"][0]["failed"] == 0
    Item.update(status=FAILED, error_stage="answer", error_msg=TIMEOUT, time_taken_ms=None).where(
        Item.id == first.id
    ).execute()
    forget()
    assert run_speed(run)["targets"][0]["failed"] == 1


def test_a_finished_and_digested_run_has_its_figures_stored(app):
    run = random_run(20, "kept-digested")
    assert stored(run) is None
    digest_finished(T0 + dt.timedelta(hours=1))
    assert json.dumps(stored(run)) == json.dumps(compute_speed(run))
    forget()
    assert run_speed(run) == stored(run)


def test_a_run_from_before_the_table_still_gets_its_figures(app):
    run = random_run(30, "kept-old")
    RunSpeed.delete().execute()  # as after the upgrade: no row yet
    forget()
    assert json.dumps(run_speed(run)) == json.dumps(compute_speed(run))
    assert stored(run) is not None  # and keeps them from then on


def test_one_row_per_run_the_latest_figures(app):
    run, (t,) = make_run("kept-one")
    rng = random.Random(4)
    answered(run, t, "a", rng)
    run_speed(run)
    answered(run, t, "b", rng, when=T0 + dt.timedelta(seconds=1))
    run_speed(run)
    assert RunSpeed.select().where(RunSpeed.run == run).count() == 1
    assert stored(run)["targets"][0]["answers"] == 2


def test_a_working_run_keeps_no_figures_in_the_database(app):
    # Its items change every second: stored figures would be stale by the next view.
    run, (t,) = make_run("kept-working", status=PENDING, control=CONTROL_RUNNING)
    answered(run, t, "a", random.Random(5))
    assert run_speed(run)["targets"][0]["answers"] == 1
    assert stored(run) is None


def test_a_run_with_nothing_tried_stores_nothing(app):
    run, (t,) = make_run("kept-untried")
    add_item(run, t, "x", status=NEW, time_taken_ms=None)
    assert run_speed(run)["targets"][0]["answers"] == 0
    assert stored(run) is None


def test_deleting_a_run_deletes_its_figures(app, client):
    run = random_run(40, "kept-gone")
    run_speed(run)
    assert client.delete("/api/runs/kept-gone").status_code in (200, 204)
    assert RunSpeed.select().count() == 0


def test_the_api_serves_the_stored_figures_to_another_process(app, client):
    run = random_run(50, "kept-api")
    digest_finished(T0 + dt.timedelta(hours=1))
    forget()
    body = client.get("/api/runs/kept-api/speed").get_json()
    assert body.pop("slo") is None  # the run sets no SLO
    assert body == json.loads(json.dumps(compute_speed(run)))


def test_figures_stored_by_other_figure_code_are_worked_out_again(app, monkeypatch):
    run = random_run(60, "kept-code")
    run_speed(run)
    forget()
    marked = {**stored(run), "runId": "older code"}
    RunSpeed.update(figures=json.dumps(marked)).where(RunSpeed.run == run).execute()
    monkeypatch.setattr(kept_speed, "_CODE", "another version")
    assert run_speed(run)["runId"] == "kept-code"


def test_a_database_that_takes_no_write_still_shows_the_figures(app):
    run = random_run(70, "kept-readonly")
    on, off = (
        (
            "SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY",
            "SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE",
        )
        if database.is_postgres
        else ("PRAGMA query_only = ON", "PRAGMA query_only = OFF")
    )
    with database.connection_context():
        database.execute_sql(on)
        try:
            figures = run_speed(run)
        finally:
            database.execute_sql(off)
    assert json.dumps(figures) == json.dumps(compute_speed(run))
    assert stored(run) is None
