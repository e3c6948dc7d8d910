"""Two real processes checking the same schedules never both fire a fire time."""

import datetime as dt
import os
import subprocess
import sys

import pytest

from app.config import REPO_ROOT
from app.db.models import Run
from app.engine import lease
from app.schedules.templates import create_template
from tests.engine_helpers import make_provider
from tests.engine_helpers import make_tasks

T0 = dt.datetime(2025, 3, 1, 0, 0)
MINUTES = 15


@pytest.mark.slow
def test_two_processes_never_fire_the_same_time_twice(app, fake, tmp_path):
    lease.acquire("test-holder", 15.0, T0)
    provider = make_provider(fake)
    spec = {
        "judgeProviderId": provider.id,
        "judgeModel": "judge",
        "collectionIds": [make_tasks(1).id],
        "targets": [{"providerId": provider.id, "model": "m1"}],
    }
    create_template(
        {"name": "every-minute", "spec": spec, "schedule": {"cron": "* * * * *"}}, now=T0
    )
    go = tmp_path / "go"
    env = {k: v for k, v in os.environ.items() if not k.startswith("LLMBENCH_")}
    args = [app.config["DB"], str(go), T0.isoformat(), str(MINUTES)]
    workers = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.fire_worker", *args],
            cwd=REPO_ROOT,
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    go.touch()
    fired = [int(w.communicate(timeout=120)[0].strip()) for w in workers]
    assert all(w.returncode == 0 for w in workers)
    runs = list(Run.select().where(Run.triggered_by == "scheduled"))
    # Minutes 1 .. MINUTES-1 are due (00:00 itself came before the template): each fired
    # exactly once, by one process or the other.
    assert sum(fired) == len(runs) == MINUTES - 1
    assert len({r.trigger_note for r in runs}) == MINUTES - 1
