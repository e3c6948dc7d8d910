"""The built-in quick collection on the real llama.cpp server (../shared/llm/serve-local-llm, if
up), with the tasks' checks beside the judge and without a judge.

SmolLM2-135M answers and judges badly; this proves the plumbing on a real model: its answers
are checked by rule, the judge still grades them, both stay on the item, and a run with no
judge finishes on the checks alone. `bench/real_checks_vs_judge.py` prints how often they agree.
"""

import pytest

from app.catalog.defaults import QUICK
from app.catalog.defaults import reset_defaults
from app.db.models import COMPLETED
from app.db.models import FAILED
from app.db.models import Collection
from app.db.models import Item
from app.db.models import RunLog
from app.engine import lease
from app.engine.foreground import run_foreground
from app.runs.lifecycle import create_run
from tests import real_llm
from tests.engine_helpers import make_provider

pytestmark = [pytest.mark.real_llm, pytest.mark.slow]

TARGET_PARAMS = {"max_tokens": 160, "seed": 1, "temperature": 0}


def _quick_tasks():
    reset_defaults()
    quick = Collection.get(Collection.name == QUICK)
    return [m.task for m in quick.memberships]


def _events(run):
    return {log.event for log in RunLog.select().where(RunLog.run == run.id)}


def test_quick_collection_on_the_real_model_keeps_checks_beside_the_judge(app, llm_model):
    tasks = _quick_tasks()
    assert sum(1 for t in tasks if t.checks) >= 5  # the collection really carries checks
    provider = make_provider(None, name="llamacpp", url=real_llm.BASE_URL, timeout=60.0)
    lease.acquire("test-holder", 15.0)
    run = create_run(
        {
            "judgeProviderId": provider.id,
            "judgeModel": llm_model,
            "judgeParams": {"max_tokens": 300, "temperature": 0},
            "targets": [{"providerId": provider.id, "model": llm_model, "params": TARGET_PARAMS}],
            "taskIds": [t.id for t in tasks],
        }
    )
    assert run_foreground(run.run_id, app.config, holder="test-holder") == "finished"

    items = list(Item.select().where(Item.run == run.id))
    assert len(items) == len(tasks)
    checked = [i for i in items if i.checks]
    for item in checked:
        assert item.answer is not None
        assert item.check_results and len(item.check_results) == len(item.checks)
        assert all(r["reason"] for r in item.check_results)
        # A tiny judge may fail validation: then it is a judge failure, never a 0.
        assert item.status == COMPLETED or (item.status == FAILED and item.error_stage == "judge")
        if item.status == COMPLETED and not item.auto_fail:
            judge = item.judge_scores[0]  # the judge's own score, kept beside the combination
            low, high = sorted((judge, item.check_score))
            assert low - 1e-6 <= item.evaluation_score <= high + 1e-6
    for item in items:
        if not item.checks:
            assert item.check_results is None and item.check_score is None
    assert "judge_warmup" in _events(run)


def test_a_judge_free_run_on_the_real_model_scores_every_answer_by_its_checks(app, llm_model):
    tasks = [t for t in _quick_tasks() if t.checks]
    provider = make_provider(None, name="llamacpp", url=real_llm.BASE_URL, timeout=60.0)
    lease.acquire("test-holder", 15.0)
    run = create_run(
        {
            "targets": [{"providerId": provider.id, "model": llm_model, "params": TARGET_PARAMS}],
            "taskIds": [t.id for t in tasks],
        }
    )
    assert run_foreground(run.run_id, app.config, holder="test-holder") == "finished"

    items = list(Item.select().where(Item.run == run.id))
    assert len(items) == len(tasks)
    for item in items:
        assert item.status == COMPLETED and item.answer is not None
        assert item.evaluation_score == item.check_score
        assert item.judge_raw is None and item.judge_request_json is None
    assert "judge_warmup" not in _events(run)
