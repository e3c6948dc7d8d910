"""A run's times are its own: a judge check or a pairwise job on a finished run keeps its own
start and finish and never moves the run's finished time."""

import datetime as dt

from app.clock import utcnow
from app.db.models import Run
from app.db.models import RunTarget
from app.runs.judge_jobs import job_progress
from app.runs.judge_jobs import queue_pairwise
from app.runs.judge_jobs import queue_reference_check
from tests.engine_helpers import FakeClock
from tests.engine_helpers import drive
from tests.engine_helpers import make_provider
from tests.engine_helpers import make_tasks
from tests.engine_helpers import start_run
from tests.test_judge_calls import judge_like

LATER = dt.timedelta(minutes=6)


def _finished(fake, app, targets=("m1",)):
    p = make_provider(fake)
    run = start_run(p, [(p, m) for m in targets], make_tasks(2))
    assert drive(app.config, FakeClock())["state"] == "finished"
    return Run.get_by_id(run.id), p


def test_a_judge_check_keeps_the_runs_finished_time_and_has_its_own(app, fake):
    run, _ = _finished(fake, app)
    finished = run.finished_at
    judge_like(fake, scores={"best": 90, "ok": 70, "meh": 60})
    job = queue_reference_check(run)
    assert Run.get_by_id(run.id).finished_at == finished  # while it runs, too
    assert drive(app.config, FakeClock(utcnow() + LATER))["state"] == "finished"
    assert Run.get_by_id(run.id).finished_at == finished
    times = job_progress(job)
    assert times["queuedAt"] and times["startedAt"] and times["finishedAt"]
    assert times["finishedAt"] > finished.isoformat()


def test_a_pairwise_job_keeps_the_runs_finished_time(app, fake):
    run, p = _finished(fake, app, targets=("m1", "m2"))
    finished = run.finished_at
    judge_like(fake)
    a, b = RunTarget.select().where(RunTarget.run == run).order_by(RunTarget.position)
    job = queue_pairwise(a, b, p, "judge")
    assert drive(app.config, FakeClock(utcnow() + LATER))["state"] == "finished"
    assert Run.get_by_id(run.id).finished_at == finished
    assert job_progress(job)["finishedAt"] is not None


def test_a_job_not_yet_done_has_no_finish_time(app, fake):
    run, _ = _finished(fake, app)
    job = queue_reference_check(run)
    assert job_progress(job)["finishedAt"] is None
