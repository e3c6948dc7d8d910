"""A whole run against the real llama.cpp server from ../shared/llm/serve-local-llm (if up).

The model (SmolLM2-135M) answers badly; this proves the plumbing: streaming, llama.cpp timings,
json_schema judging with a rubric, and the run finishing with nothing lost.
"""

import pytest

from app.db.models import COMPLETED
from app.db.models import FAILED
from app.db.models import Item
from app.db.models import RunLog
from app.engine.foreground import run_foreground
from tests import real_llm
from tests.engine_helpers import make_provider
from tests.engine_helpers import make_tasks
from tests.engine_helpers import start_run

pytestmark = [pytest.mark.real_llm, pytest.mark.slow]


def test_a_run_on_the_real_model_answers_and_judges_every_item(app, llm_model):
    provider = make_provider(None, name="llamacpp", url=real_llm.BASE_URL, timeout=60.0)
    rubric = [{"id": "correct", "text": "Gives the right result", "weight": 1, "max_score": 10}]
    collection = make_tasks(
        2, question="What is 2 + 3? Answer with the number only.", excellent="5", rubric=rubric
    )
    run = start_run(
        provider,
        [(provider, llm_model, {"max_tokens": 32, "seed": 1})],
        collection,
        judge_model=llm_model,
        judgeParams={"max_tokens": 200, "temperature": 0},
    )
    state = run_foreground(run.run_id, app.config, holder="test-holder")
    assert state == "finished"
    items = list(Item.select().where(Item.run == run.id))
    assert len(items) == 2
    for item in items:
        assert item.answer is not None and item.tps_source == "llamacpp.timings"
        assert item.ttft_ms is not None and item.ttft_ms <= item.time_taken_ms
        # A tiny judge may still fail validation; it is then a judge failure, never a 0.
        assert item.status == COMPLETED or (item.status == FAILED and item.error_stage == "judge")
        if item.status == COMPLETED:
            assert 0 <= item.evaluation_score <= 100 and item.judge_raw
    events = [log.event for log in RunLog.select().where(RunLog.run == run.id)]
    assert {"judge_warmup", "warmup", "phase_changed", "run_finished"} <= set(events)
