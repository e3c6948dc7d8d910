"""The judge's cost: recorded per judgement, counted in the run budget, shown in exports and UI."""

import json

import pytest
from bs4 import BeautifulSoup

from app.db.models import COMPLETED
from app.db.models import JUDGING
from app.db.models import WAITING_FOR_JUDGE
from app.db.models import Item
from app.db.models import Price
from app.db.models import Run
from app.db.models import RunLog
from app.exports.summary import summary_json
from app.runs.control import resume_run
from app.runs.dto import run_summary
from app.runs.queries import spent_usd
from tests.engine_helpers import FakeClock
from tests.engine_helpers import call_kind
from tests.engine_helpers import calls
from tests.engine_helpers import drive
from tests.engine_helpers import make_provider
from tests.engine_helpers import make_tasks
from tests.engine_helpers import start_run
from tests.fakeserver import JUDGE_DEFAULT
from tests.fakeserver import split_tokens


@pytest.fixture
def config(app):
    return dict(app.config, BACKOFF_BASE_SECONDS=2.0, BACKOFF_MAX_SECONDS=60.0)


def judge_replies(fake, replies):
    """Judge calls get `replies` in order (a dict of enqueue options each; the last repeats)."""
    state = {"n": 0}

    def responder(call):
        if call_kind(call)[0] != "judge":
            return None
        state["n"] += 1
        return replies[min(state["n"], len(replies)) - 1]

    fake.responder = responder
    return state


# Completion tokens of the fake's default judgement (it counts one token per piece).
JUDGE_TOKENS = len(split_tokens(json.dumps(JUDGE_DEFAULT)))


def test_judge_cost_is_recorded_from_the_providers_usage_cost(app, fake, config, client):
    p = make_provider(fake)
    run = start_run(p, [(p, "m1")], make_tasks(1))
    judge_replies(fake, [{"usage": {"cost": 0.0025}}])
    assert drive(config, FakeClock())["state"] == "finished"
    done = Item.get()
    assert done.status == COMPLETED
    assert done.judge_cost_usd == pytest.approx(0.0025)
    assert done.cost_usd is None  # the answer had no price and no reported cost
    assert spent_usd(run) == pytest.approx(0.0025)
    listed = client.get(f"/api/runs/{run.run_id}/items").get_json()["items"]
    assert listed[0]["judgeCostUsd"] == pytest.approx(0.0025)


def test_judge_cost_from_the_price_table_sums_the_repair_request(app, fake, config):
    p = make_provider(fake)
    judge = make_provider(fake, name="paid-judge")
    # Prices are per provider name + model: the target's provider's "judge" row is not used.
    Price.create(provider_name="fake", model="judge", input_per_1m=99.0, output_per_1m=99.0)
    Price.create(provider_name="paid-judge", model="judge", input_per_1m=0.0, output_per_1m=1e6)
    start_run(judge, [(p, "m1")], make_tasks(1))
    judge_replies(fake, [{"text": "definitely not json"}, {}])
    assert drive(config, FakeClock())["state"] == "finished"
    done = Item.get()
    assert done.status == COMPLETED and len(calls(fake, "judge")) == 2
    # $1 per output token: the bad reply's tokens plus the repaired reply's.
    expected = len(split_tokens("definitely not json")) + JUDGE_TOKENS
    assert done.judge_cost_usd == pytest.approx(expected)


def test_budget_reached_while_judging_pauses_and_resume_finishes(app, fake, config):
    p = make_provider(fake)
    # Answers are free; each judgement costs JUDGE_TOKENS x $0.001.
    Price.create(provider_name="fake", model="judge", input_per_1m=0.0, output_per_1m=1000.0)
    per_judgement = JUDGE_TOKENS * 0.001
    run = start_run(p, [(p, "m1")], make_tasks(3), settings={"maxBudgetUsd": 1.5 * per_judgement})
    result = drive(config, FakeClock())
    assert result["state"] == "paused"
    run = Run.get_by_id(run.id)
    assert run.phase == JUDGING
    assert run.control_reason.startswith("budget reached")
    counts = run_summary(run)["counts"]
    assert counts[COMPLETED] == 2 and counts[WAITING_FOR_JUDGE] == 1
    assert spent_usd(run) == pytest.approx(2 * per_judgement)
    reached = RunLog.select().where((RunLog.run == run) & (RunLog.event == "budget_reached"))
    assert reached.count() == 1
    assert len(calls(fake, "judge")) == 2

    resume_run(run.run_id, max_budget_usd=1.0)
    assert drive(config, FakeClock())["state"] == "finished"
    assert {i.status for i in Item.select()} == {COMPLETED}
    assert len(calls(fake, "judge")) == 3  # the paused item judged once, nothing twice
    assert spent_usd(run) == pytest.approx(3 * per_judgement)


def test_a_budget_spent_by_the_answers_does_not_start_judging(app, fake, config):
    p = make_provider(fake)
    Price.create(provider_name="fake", model="m1", input_per_1m=0.0, output_per_1m=5000.0)
    run = start_run(p, [(p, "m1")], make_tasks(1), settings={"maxBudgetUsd": 0.001})
    assert drive(config, FakeClock())["state"] == "paused"
    assert Run.get_by_id(run.id).control_reason.startswith("budget reached")
    assert Item.get().status == WAITING_FOR_JUDGE
    assert calls(fake, "judge") == []


def test_summary_json_totals_split_answer_and_judge_cost(app, fake, config, client):
    p = make_provider(fake)
    Price.create(provider_name="fake", model="m1", input_per_1m=0.0, output_per_1m=1000.0)
    run = start_run(p, [(p, "m1")], make_tasks(2))
    judge_replies(fake, [{"usage": {"cost": 0.01}}])
    assert drive(config, FakeClock())["state"] == "finished"
    answers = sum(i.cost_usd for i in Item.select())
    assert answers > 0
    totals = summary_json(run)["totals"]
    assert totals["costUsd"] == pytest.approx(answers)
    assert totals["judgeCostUsd"] == pytest.approx(0.02)
    assert totals["totalCostUsd"] == pytest.approx(answers + 0.02)
    # The per-model averages keep the answers' cost only.
    assert summary_json(run)["models"][0]["costUsd"] == pytest.approx(answers)
    item = Item.select().order_by(Item.id).first()
    page = BeautifulSoup(
        client.get(f"/runs/{run.run_id}/items/{item.id}", headers={"HX-Request": "true"}).text,
        "html.parser",
    )
    cost = next(dt for dt in page.select(".rs-metrics dt") if dt.get_text() == "Judge cost")
    assert cost.find_next_sibling("dd").get_text().strip().startswith("0.01")


def test_summary_json_costs_are_null_without_any_price(app, fake, config):
    p = make_provider(fake)
    run = start_run(p, [(p, "m1")], make_tasks(1))
    drive(config, FakeClock())
    totals = summary_json(run)["totals"]
    assert totals["costUsd"] is None
    assert totals["judgeCostUsd"] is None and totals["totalCostUsd"] is None
