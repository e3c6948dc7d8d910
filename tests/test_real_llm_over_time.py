"""Over time against the real llama.cpp server from ../shared/llm/serve-local-llm (if up): a
scheduled template fires twice, each run is worked by the engine with system metrics sampled,
and the second run joins the first on the trend line."""

import datetime as dt

import pytest

from app.engine.foreground import run_foreground
from app.schedules.digest import digest_finished
from app.schedules.firing import fire_due
from app.schedules.templates import create_template
from app.schedules.trends import trends
from app.sysmetrics.store import run_samples
from tests import real_llm
from tests.engine_helpers import make_provider
from tests.engine_helpers import make_tasks

pytestmark = [pytest.mark.real_llm, pytest.mark.slow]


def test_a_scheduled_template_runs_twice_on_the_real_model_onto_one_trend_line(app, llm_model):
    provider = make_provider(None, name="llamacpp", url=real_llm.BASE_URL, timeout=90.0)
    collection = make_tasks(
        2, question="What is 2 + 3? Answer with the number only.", excellent="5"
    )
    start = dt.datetime(2030, 1, 1, 3, 0)
    create_template(
        {
            "name": "minutely",
            "spec": {
                "judgeProviderId": provider.id,
                "judgeModel": llm_model,
                "judgeParams": {"temperature": 0, "max_tokens": 96},
                "targets": [
                    {"providerId": provider.id, "model": llm_model, "params": {"max_tokens": 16}}
                ],
                "collectionIds": [collection.id],
            },
            "schedule": {"cron": "* * * * *", "timezone": "UTC"},
        },
        now=start,
    )
    config = dict(app.config, SYSMETRICS_SECONDS=0.2)
    runs = []
    for minute in (1, 2):
        (fired,) = fire_due(start + dt.timedelta(minutes=minute, seconds=1))
        assert run_foreground(fired.run_id, config, holder="test-holder") == "finished"
        runs.append(fired)
    digest_finished()
    (series,) = trends({"collection": collection.name})["series"]
    assert [p["runId"] for p in series["points"]] == [r.run_id for r in runs]
    assert series["points"][1]["comparable"] is True
    samples = run_samples(runs[1])
    assert samples and samples[0]["ramTotalGb"] > 0 and samples[0]["cpuPercent"] is not None
