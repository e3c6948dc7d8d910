"""Repeats: K answers per task and target (each with its own seed), J judgements per answer,
stability figures checked by hand, and CIs that resample tasks, not answers."""

import random

import pytest

from app.db.models import Item
from app.engine import lease
from app.results.averages import model_averages
from app.results.clustered import cluster_bootstrap_mean_ci
from app.results.stability import stability
from app.runs.queries import get_run
from tests.engine_helpers import FakeClock
from tests.engine_helpers import call_kind
from tests.engine_helpers import calls
from tests.engine_helpers import drive
from tests.engine_helpers import make_provider
from tests.engine_helpers import make_tasks
from tests.over_time import finished_run

HOLDER = "test-holder"


@pytest.fixture
def body(app, fake):
    lease.acquire(HOLDER, 15.0)
    provider = make_provider(fake)
    return {
        "judgeProviderId": provider.id,
        "judgeModel": "judge",
        "collectionIds": [make_tasks(2).id],
        "targets": [{"providerId": provider.id, "model": "m1", "params": {"seed": 100}}],
    }


def test_repeats_make_k_items_per_task_and_target_with_their_own_seeds(client, body):
    reply = client.post("/api/runs", json={**body, "settings": {"repeats": 3}})
    run = get_run(reply.get_json()["runId"])
    items = list(Item.select().where(Item.run == run).order_by(Item.task_key, Item.repeat))
    assert [(i.task_key, i.repeat, i.seed) for i in items] == [
        ("t0", 0, 100),
        ("t0", 1, 101),
        ("t0", 2, 102),
        ("t1", 0, 100),
        ("t1", 1, 101),
        ("t1", 2, 102),
    ]
    # The seed is part of what was asked: each repeat has its own context hash.
    assert len({i.context_hash for i in items if i.task_key == "t0"}) == 3


def test_without_repeats_items_keep_the_targets_params(client, body):
    reply = client.post("/api/runs", json=body)
    items = list(Item.select().where(Item.run == get_run(reply.get_json()["runId"])))
    assert {(i.repeat, i.seed) for i in items} == {(0, None)}


def test_each_repeat_is_sent_with_its_seed(app, client, fake, body):
    client.post("/api/runs", json={**body, "settings": {"repeats": 2}})
    drive(dict(app.config), FakeClock(), holder=HOLDER)
    seeds = sorted(
        (c["body"]["messages"][-1]["content"], c["body"]["seed"])
        for c in fake.chat_calls()
        if call_kind(c)[0] == "answer"
    )
    assert seeds == [("Question t0?", 100), ("Question t0?", 101)] + [
        ("Question t1?", 100),
        ("Question t1?", 101),
    ]


def test_judge_repeats_judge_each_answer_j_times_and_keep_every_score(app, client, fake, body):
    scores = iter([70, 80, 90, 60])

    def judge(call):
        if "response_format" in (call["body"] or {}) and "Question" in str(call["body"]):
            return {"text": f'{{"score": {next(scores)}, "reason": "r"}}'}
        return None

    fake.responder = judge
    reply = client.post("/api/runs", json={**body, "settings": {"judgeRepeats": 2}})
    drive(dict(app.config), FakeClock(), holder=HOLDER)
    items = list(Item.select().where(Item.run == get_run(reply.get_json()["runId"])))
    assert sorted(tuple(i.judge_scores) for i in items) == [(70, 80), (90, 60)]
    assert sorted(i.evaluation_score for i in items) == [70, 90]  # the first judgement counts
    assert len(calls(fake, "judge")) == 4


def test_stability_numbers_checked_by_hand(app):
    # Task 0 scores 50, 70, 90 (mean 70, SD 20, span 40: unstable); task 1 scores 80 three
    # times (SD 0). The judge re-judged one answer 60 then 90 (span 30).
    run = finished_run("rep", {"local/m1": [[50, 70, 90], [80, 80, 80]]}, settings={"repeats": 3})
    Item.update(judge_scores=[60, 90]).where(
        (Item.run == run) & (Item.task_key == "t0000") & (Item.repeat == 0)
    ).execute()
    result = stability(run)
    (model,) = result["models"]
    assert model["tasks"] == 2
    assert model["meanSd"] == pytest.approx(10.0)  # (20 + 0) / 2
    assert model["meanSpan"] == pytest.approx(20.0)
    assert model["unstableShare"] == 0.5
    assert model["judge"] == {
        "repeated": 1,
        "meanSd": pytest.approx(21.2132, abs=1e-4),
        "meanSpan": 30.0,
        "unstableShare": 1.0,
    }
    first = result["tasks"][0]
    assert (first["taskKey"], first["mean"], first["sd"], first["span"]) == (
        "t0000",
        70.0,
        20.0,
        40,
    )


def correlated_repeats(seed, tasks=40, k=5):
    """Scores with a large per-task effect and small noise between repeats."""
    rng = random.Random(seed)
    out = []
    for _ in range(tasks):
        level = rng.gauss(60, 20)
        out.append([min(100.0, max(0.0, level + rng.gauss(0, 2))) for _ in range(k)])
    return out


def test_the_naive_bootstrap_is_too_narrow_on_correlated_repeats():
    clusters = correlated_repeats(1)
    cluster = cluster_bootstrap_mean_ci(clusters)
    # Every answer its own cluster: single answers resampled as if independent.
    naive = cluster_bootstrap_mean_ci([[s] for c in clusters for s in c])
    assert cluster["mean"] == pytest.approx(naive["mean"])
    width = cluster["ciHigh"] - cluster["ciLow"]
    naive_width = naive["ciHigh"] - naive["ciLow"]
    # Five nearly equal answers per task are about one observation, not five: the naive CI
    # is about sqrt(5) times too narrow.
    assert width / naive_width > 1.8


def test_the_results_ci_of_a_repeated_run_resamples_tasks(app):
    clusters = correlated_repeats(2)
    run = finished_run("rep", {"local/m1": clusters}, settings={"repeats": 5})
    (row,) = model_averages(run)
    expected = cluster_bootstrap_mean_ci(clusters)
    assert row["ci_low"] == pytest.approx(expected["ciLow"])
    assert row["ci_high"] == pytest.approx(expected["ciHigh"])


def test_the_stability_api_lists_every_task(app, client):
    finished_run("rep", {"local/m1": [[50, 70], [80, 80]]}, settings={"repeats": 2})
    data = client.get("/api/runs/rep/stability").get_json()
    assert data["repeats"] == 2 and data["tasksCount"] == 2
    assert [t["taskKey"] for t in data["tasks"]] == ["t0000", "t0001"]


def test_repeats_are_checked_like_every_setting(client, body):
    reply = client.post("/api/runs", json={**body, "settings": {"repeats": 0}})
    assert reply.status_code == 400
    assert reply.get_json()["errors"][0]["field"] == "settings.repeats"
