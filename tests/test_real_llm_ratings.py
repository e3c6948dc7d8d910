"""People's labels and the judge's checks against the real llama.cpp server (if it is up).

One run holds the same model twice with other params (two labelled targets) and asks for the
judge check before answering; then a person rates every answer and votes on every pair through
the API, the judge votes on the same pairs through the engine, and the leaderboard and the
judge check come back with n. A 135M judge is poor; this proves the plumbing, not the judge.
"""

import pytest

from app.db.models import COMPLETED
from app.db.models import FAILED
from app.db.models import JudgeCall
from app.db.models import RunTarget
from app.db.models import Vote
from app.engine.foreground import run_foreground
from tests import real_llm
from tests.engine_helpers import make_provider
from tests.engine_helpers import make_tasks
from tests.engine_helpers import start_run

pytestmark = [pytest.mark.real_llm, pytest.mark.slow]


def test_ratings_votes_judge_votes_check_and_leaderboard_on_the_real_model(app, client, llm_model):
    provider = make_provider(None, name="llamacpp", url=real_llm.BASE_URL, timeout=60.0)
    tasks = make_tasks(
        2,
        question="What is 2 + 3? Answer with the number only.",
        excellent="5",
        good="five",
        pass_answer="The answer is 5.",
    )
    judge = {"judge_model": llm_model, "judgeParams": {"max_tokens": 160, "temperature": 0}}
    run = start_run(
        provider,
        [
            (provider, llm_model, {"max_tokens": 24, "temperature": 0, "seed": 1}),
            (provider, llm_model, {"max_tokens": 24, "temperature": 1.5, "seed": 2}),
        ],
        tasks,
        judgeCheck=True,
        **judge,
    )
    assert run_foreground(run.run_id, app.config, holder="test-holder") == "finished"
    cold, hot = RunTarget.select().where(RunTarget.run == run).order_by(RunTarget.position)
    assert (cold.model, hot.model) == (llm_model, llm_model) and cold.label != hot.label
    check = JudgeCall.select().where(JudgeCall.run == run)
    assert check.count() == 6 and {c.status for c in check} <= {COMPLETED, FAILED}

    items = client.get(f"/api/runs/{run.run_id}/items").get_json()["items"]
    for n, item in enumerate(items):
        rating = {"rating": 1 + n % 5, "tags": ["real"], "notes": "checked by the test"}
        response = client.put(f"/api/runs/{run.run_id}/items/{item['id']}/rating", json=rating)
        assert response.status_code == 200
    scope = {"runA": run.run_id, "targetA": cold.id, "targetB": hot.id}
    while (pair := client.get("/api/pairwise/next", query_string=scope)).status_code == 200:
        body = pair.get_json()
        vote = {"pairToken": body["pairToken"], "winner": "LEFT"}  # the pair handed out
        assert client.post("/api/pairwise/votes", json=vote).status_code == 201
    assert pair.status_code == 204

    asked = client.post(
        "/api/pairwise/judge",
        json={**scope, "judgeProviderConfigId": provider.id, "judgeModelName": llm_model},
    )
    assert asked.status_code == 202
    assert run_foreground(run.run_id, app.config, holder="test-holder") == "finished"
    progress = client.get(asked.headers["Location"]).get_json()
    assert progress["state"] == "finished" and progress["pending"] == 0
    judged = Vote.select().where(Vote.source == "judge").count()
    assert judged == progress["consistency"]["pairs"] <= 2

    board = client.get(f"/api/leaderboard?runs={run.run_id}").get_json()
    assert {row["target"] for row in board} == {cold.label, hot.label}
    assert sum(row["votes"] for row in board) == 2 * (2 + judged)
    result = client.get(f"/api/runs/{run.run_id}/judge-check").get_json()
    assert result["humanAgreement"]["n"] <= 4 and set(result["meanByLevel"]) == {
        "excellent",
        "good",
        "pass",
    }
