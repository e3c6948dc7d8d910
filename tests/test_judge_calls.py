"""Judge calls through the engine: the reference check and pairwise judging, claimed, retried,
paused, stopped and budgeted like items, against the fake server over real HTTP."""

import datetime as dt
import json
import threading

import pytest

from app.db.connection import database
from app.db.models import COMPLETED
from app.db.models import FAILED
from app.db.models import LEFT
from app.db.models import NEW
from app.db.models import RIGHT
from app.db.models import TIE
from app.db.models import Item
from app.db.models import JudgeCall
from app.db.models import Price
from app.db.models import Run
from app.db.models import RunLog
from app.db.models import RunTarget
from app.db.models import Vote
from app.engine import call_claims
from app.engine.calls import combine
from app.engine.orchestrator import tick
from app.errors import Conflict
from app.runs.control import resume_run
from app.runs.control import stop_run
from app.runs.judge_jobs import job_progress
from app.runs.judge_jobs import queue_pairwise
from app.runs.judge_jobs import queue_reference_check
from app.runs.queries import spent_usd
from app.runs.state import run_state
from tests.engine_helpers import FakeClock
from tests.engine_helpers import calls
from tests.engine_helpers import drive
from tests.engine_helpers import make_provider
from tests.engine_helpers import make_tasks
from tests.engine_helpers import start_run

HOLDER = "test-holder"


@pytest.fixture
def config(app):
    return dict(app.config, BACKOFF_BASE_SECONDS=2.0, BACKOFF_MAX_SECONDS=60.0)


def pairwise_schema(call):
    return "winner" in json.dumps((call["body"] or {}).get("response_format") or {})


def reference_of(call):
    """The reference text a reference-check call scores (the <answer> block), or None."""
    body = call["body"] or {}
    text = body.get("messages", [{}])[-1].get("content", "")
    if "response_format" not in body or pairwise_schema(call) or "<answer>" not in text:
        return None
    return text.split("<answer>\n", 1)[1].split("\n</answer>", 1)[0]


def judge_like(fake, scores=None, winner=None):
    """Scores per reference text (the judge check) and a pairwise verdict function."""

    def respond(call):
        if pairwise_schema(call):
            verdict = winner(call) if winner else "A"
            return {"text": json.dumps({"winner": verdict, "reason": "because"})}
        ref = reference_of(call)
        if ref is not None and scores and ref in scores:
            return {"text": json.dumps({"score": scores[ref], "reason": f"ref {ref}"})}
        return None

    fake.responder = respond


def finished_run(fake, config, tasks=3, targets=("m1", "m2")):
    p = make_provider(fake)
    run = start_run(p, [(p, m) for m in targets], make_tasks(tasks))
    assert drive(config, FakeClock())["state"] == "finished"
    return Run.get_by_id(run.id), p


def targets_of(run):
    return list(RunTarget.select().where(RunTarget.run == run).order_by(RunTarget.position))


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [
        (LEFT, RIGHT, (LEFT, False)),  # the same item wins seen either way
        (RIGHT, LEFT, (RIGHT, False)),
        (TIE, TIE, (TIE, False)),
        (LEFT, LEFT, (TIE, True)),  # always the first shown: position bias, a tie
        (LEFT, TIE, (TIE, True)),
        (TIE, RIGHT, (TIE, True)),
    ],
)
def test_two_orders_combine_by_mt_bench_rule(first, second, expected):
    assert combine(first, second) == expected


def test_judge_check_in_the_spec_scores_the_references_before_any_answer(app, fake, config):
    judge_like(fake, scores={"best": 95, "ok": 75, "meh": 55})
    p = make_provider(fake)
    start_run(p, [(p, "m1")], make_tasks(2), judgeCheck=True)
    assert drive(config, FakeClock())["state"] == "finished"
    kinds = [kind for kind, _model, _last in calls(fake)]
    # The judge's warm-up, then the six reference calls, then the target's warm-up and answers.
    assert kinds[:1] == ["judge_warmup"] and kinds[1:7] == ["judge"] * 6
    assert kinds[7] == "warmup" and "answer" not in kinds[:7]
    scored = {(c.item.task_key, c.level): c.score for c in JudgeCall.select()}
    assert scored == {
        (t, level): score
        for t in ("t0", "t1")
        for level, score in (("excellent", 95), ("good", 75), ("pass", 55))
    }
    assert {c.status for c in JudgeCall.select()} == {COMPLETED}
    assert Item.select().where(Item.status == COMPLETED).count() == 2


def test_a_task_without_a_reference_level_gets_no_call_for_it(app, fake):
    p = make_provider(fake)
    run = start_run(p, [(p, "m1")], make_tasks(1, good=""))
    queue_reference_check(run)
    assert sorted(c.level for c in JudgeCall.select()) == ["excellent", "pass"]


def test_a_check_on_a_finished_run_reopens_it_and_finishes_it_again(app, fake, config):
    run, _ = finished_run(fake, config, tasks=1, targets=("m1",))
    judge_like(fake, scores={"best": 90, "ok": 70, "meh": 60})
    queue_reference_check(run)
    assert run_state(Run.get_by_id(run.id)) == "running"
    assert drive(config, FakeClock())["state"] == "finished"
    assert [c.score for c in JudgeCall.select().order_by(JudgeCall.id)] == [90, 70, 60]
    assert Run.get_by_id(run.id).status == "FINISHED"


def test_a_second_check_while_one_is_under_way_is_a_conflict(app, fake, config):
    run, _ = finished_run(fake, config, tasks=1, targets=("m1",))
    queue_reference_check(run)
    with pytest.raises(Conflict, match="under way"):
        queue_reference_check(run)


def test_pairwise_judging_asks_both_orders_and_stores_one_vote_per_pair(app, fake, config):
    run, p = finished_run(fake, config)
    a, b = targets_of(run)
    # A consistent judge: the answer of target m1 wins whichever side it is on.
    m1_items = {i.id for i in Item.select().where(Item.target == a)}
    pair_calls = []

    def winner(call):
        pair_calls.append(call)
        return "A" if len(pair_calls) % 2 == 1 else "B"

    judge_like(fake, winner=winner)
    job = queue_pairwise(a, b, p, "judge")
    assert drive(config, FakeClock())["state"] == "finished"
    assert JudgeCall.select().where(JudgeCall.job == job).count() == 6
    orders = {(c.item_id, c.other_item_id) for c in JudgeCall.select()}
    assert all((y, x) in orders for x, y in orders)  # every pair in both orders
    votes = list(Vote.select())
    assert len(votes) == 3 and {v.source for v in votes} == {"judge"}
    assert {v.voter for v in votes} == {"judge:fake/judge"}
    # Calls go first order then second per pair (claims by id): A then B means the first
    # order's left item won both times, so the votes are consistent.
    assert all(not v.inconsistent and v.winner == LEFT for v in votes)
    assert {v.left_item_id for v in votes} <= m1_items
    assert {v.winner_target_id for v in votes} == {a.id}
    assert job_progress(job)["state"] == "finished"


def test_a_judge_that_always_picks_the_first_answer_gives_inconsistent_ties(app, fake, config):
    run, p = finished_run(fake, config, tasks=2)
    a, b = targets_of(run)
    judge_like(fake, winner=lambda call: "A")
    queue_pairwise(a, b, p, "judge")
    drive(config, FakeClock())
    votes = list(Vote.select())
    assert len(votes) == 2
    assert all(v.winner == TIE and v.inconsistent and v.winner_target_id is None for v in votes)


def test_pairs_this_judge_already_voted_on_are_not_asked_again(app, fake, config):
    run, p = finished_run(fake, config, tasks=2)
    a, b = targets_of(run)
    judge_like(fake, winner=lambda call: "tie")
    queue_pairwise(a, b, p, "judge")
    drive(config, FakeClock())
    assert queue_pairwise(a, b, p, "judge") is None
    assert JudgeCall.select().count() == 4


def test_a_transient_judge_error_is_retried_after_its_backoff(app, fake, config):
    run, p = finished_run(fake, config, tasks=1, targets=("m1",))
    fake.enqueue(status=500, model="judge")
    judge_like(fake, scores={"best": 90, "ok": 70, "meh": 60})
    queue_reference_check(run)
    assert drive(config, FakeClock())["state"] == "finished"
    first = JudgeCall.select().order_by(JudgeCall.id).first()
    assert first.status == COMPLETED and first.attempts == 2 and first.score == 90
    retries = RunLog.select().where((RunLog.run == run) & (RunLog.event == "retry_scheduled"))
    assert retries.count() == 1


def test_a_permanent_judge_error_fails_the_call_with_the_error(app, fake, config):
    run, p = finished_run(fake, config, tasks=1, targets=("m1",))
    fake.responder = lambda call: {"status": 404, "text": "no such model"}
    queue_reference_check(run)
    assert drive(config, FakeClock())["state"] == "finished"
    failed = list(JudgeCall.select())
    assert {c.status for c in failed} == {FAILED}
    assert all("not retried" in c.error_msg and c.attempts == 1 for c in failed)


def test_stop_releases_the_call_in_flight_uncounted_and_continue_finishes(app, fake, config):
    run, p = finished_run(fake, config, tasks=1, targets=("m1",))
    queue_reference_check(run)
    fake.default_latency = 30.0  # the call hangs until the stop abandons it
    before = len(fake.calls)
    clock = FakeClock()

    def ticking():
        with database.connection_context():  # its own connection, closed (PostgreSQL warns)
            tick(config, holder=HOLDER, now=clock)

    worker = threading.Thread(target=ticking)
    worker.start()
    assert fake.wait_for_calls(before + 1, timeout=10) == before + 1
    assert reference_of(fake.calls[-1]) == "best"  # the first reference call is out
    stop_run(run.run_id)
    worker.join(timeout=15)
    assert not worker.is_alive()
    assert RunLog.select().where((RunLog.run == run) & (RunLog.event == "abandoned")).exists()
    calls_now = list(JudgeCall.select())
    assert all(c.status == NEW and c.claimed_until is None and c.attempts == 0 for c in calls_now)
    fake.default_latency = 0.0
    judge_like(fake, scores={"best": 90, "ok": 70, "meh": 60})
    resume_run(run.run_id)
    assert drive(config, clock)["state"] == "finished"
    assert {c.status for c in JudgeCall.select()} == {COMPLETED}


def test_judge_calls_count_in_the_budget_and_pause_the_run_when_it_is_spent(app, fake, config):
    run, p = finished_run(fake, config, tasks=3, targets=("m1",))
    spent = spent_usd(run)
    Price.create(provider_name="fake", model="judge", input_per_1m=1e6, output_per_1m=0.0)
    Run.update(settings={"maxBudgetUsd": spent + 1.0}).where(Run.id == run.id).execute()
    queue_reference_check(run)
    result = drive(config, FakeClock())
    assert result["state"] == "paused"
    assert "budget reached" in Run.get_by_id(run.id).control_reason
    done = JudgeCall.select().where(JudgeCall.status == COMPLETED)
    assert 1 <= done.count() < JudgeCall.select().count()
    assert spent_usd(run) >= spent + 1.0


def test_a_crashed_holders_claims_on_calls_are_released(app, fake, config):
    run, p = finished_run(fake, config, tasks=1, targets=("m1",))
    queue_reference_check(run)
    now = FakeClock()()
    claimed = call_claims.claim(run.id, JudgeCall.get().job_id, now, now + dt.timedelta(seconds=60))
    assert claimed is not None and claimed.attempts == 1
    assert call_claims.release_all([run.id]) == 1
    call = JudgeCall.get_by_id(claimed.id)
    assert call.attempts == 0 and call.claimed_until is None


def test_the_pairwise_judge_api_is_202_with_progress_then_consistency(app, fake, config, client):
    run, p = finished_run(fake, config, tasks=2)
    a, b = targets_of(run)
    judge_like(fake, winner=lambda call: "A")  # always the first shown: never consistent
    body = {
        "runA": run.run_id,
        "targetA": a.id,
        "targetB": b.id,
        "judgeProviderConfigId": p.id,
        "judgeModelName": "judge",
    }
    response = client.post("/api/pairwise/judge", json=body)
    assert response.status_code == 202
    location = response.headers["Location"]
    queued = response.get_json()
    assert (queued["state"], queued["calls"], queued["pending"]) == ("running", 4, 4)
    assert drive(config, FakeClock())["state"] == "finished"
    done = client.get(location).get_json()
    assert (done["state"], done["completed"], done["failed"]) == ("finished", 4, 0)
    assert done["consistency"] == {"judge": "fake/judge", "pairs": 2, "consistent": 0, "rate": 0.0}
    again = client.post("/api/pairwise/judge", json=body)
    assert again.status_code == 200 and again.get_json()["jobId"] is None


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"judgeModelName": "no-such-model"}, "judgeModel"),
        ({"judgeProviderConfigId": 999}, "judgeProviderConfigId"),
        ({"judgeModelName": ""}, "judgeModelName"),
        ({"colour": "red"}, "colour"),
    ],
)
def test_a_bad_pairwise_judge_request_is_400_naming_the_field(app, fake, client, change, field):
    p = make_provider(fake)
    run = start_run(p, [(p, "m1"), (p, "m2")], make_tasks(1))
    a, b = targets_of(run)
    body = {
        "runA": run.run_id,
        "targetA": a.id,
        "targetB": b.id,
        "judgeProviderConfigId": p.id,
        "judgeModelName": "judge",
        **change,
    }
    response = client.post("/api/pairwise/judge", json=body)
    assert response.status_code == 400
    assert field in {e["field"] for e in response.get_json()["errors"]}
    assert JudgeCall.select().count() == 0


def test_asking_a_judge_while_another_run_is_active_is_409(app, fake, config, client):
    run, p = finished_run(fake, config, tasks=1)
    a, b = targets_of(run)
    start_run(p, [(p, "m1")], make_tasks(1, collection="c2", prefix="u"))  # now active
    body = {
        "runA": run.run_id,
        "targetA": a.id,
        "targetB": b.id,
        "judgeProviderConfigId": p.id,
        "judgeModelName": "judge",
    }
    response = client.post("/api/pairwise/judge", json=body)
    assert response.status_code == 409
    assert JudgeCall.select().count() == 0
