"""Checks from start to finish through the JSON API: tasks entered with checks, a run with no
judge, every item scored by its task's checks alone, and what they found in results.jsonl."""

import json

from app.db.models import COMPLETED
from app.db.models import Item
from app.db.models import Run
from app.engine import lease
from app.exports.item_results import results_jsonl
from tests.engine_helpers import FakeClock
from tests.engine_helpers import calls
from tests.engine_helpers import drive
from tests.engine_helpers import make_provider

# The fake server answers "fake answer" to every question.
TASKS = [
    {
        "taskId": "says_answer",
        "category": "Text",
        "question": "Say the word answer.",
        "checks": [{"type": "icontains", "value": "ANSWER"}, {"type": "length", "max": 5}],
    },
    {
        "taskId": "says_banana",
        "category": "Text",
        "question": "Say the word banana.",
        "checks": [{"type": "contains", "value": "banana", "gate": True}],
    },
]


def test_a_run_without_a_judge_scores_tasks_entered_with_checks(app, client, fake):
    lease.acquire("test-holder", 15.0)  # as a running server's orchestrator would hold it
    provider = make_provider(fake)
    task_ids = []
    for task in TASKS:
        response = client.post("/api/tasks", json=task)
        assert response.status_code == 201, response.json
        task_ids.append(response.json["id"])
    run = {
        "runId": "checks-only",
        "taskIds": task_ids,
        "targets": [{"providerId": provider.id, "model": "m1"}],
    }
    response = client.post("/api/runs", json=run)
    assert response.status_code == 201, response.json

    assert drive(dict(app.config), FakeClock())["state"] == "finished"
    says_answer, says_banana = Item.select().order_by(Item.task_key)
    assert says_answer.task_key == "says_answer" and says_answer.status == COMPLETED
    assert says_answer.evaluation_score == 100.0 and says_answer.check_score == 100.0
    assert [r["passed"] for r in says_answer.check_results] == [True, True]
    assert says_banana.auto_fail and says_banana.evaluation_score == 0.0
    assert "banana" in says_banana.auto_fail_reason
    assert calls(fake, "judge") == []

    lines = "".join(results_jsonl(Run.get(Run.run_id == "checks-only"))).splitlines()
    records = {r["taskId"]: r for r in map(json.loads, lines)}
    assert records["says_answer"]["checkScore"] == 100.0
    assert records["says_banana"]["autoFailReason"] == says_banana.auto_fail_reason
