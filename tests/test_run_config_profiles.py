"""Run configs compare settings too: the same model twice with other params (each a labelled
target), and judge_check to have the judge score the references before answering."""

import pytest

from app.db.models import JudgeJob
from app.db.models import RunTarget
from app.errors import ValidationError
from app.runconfig import reader
from app.runconfig.run_plan import apply
from tests.engine_helpers import make_provider
from tests.engine_helpers import make_tasks

CONFIG = """
run:
  name: profiles
  collections: [c1]
  judge_check: {judge_check}
judge: {{provider: fake, model: judge}}
targets:
  - {{provider: fake, model: m1, params: {{temperature: 0.2}}}}
  - {{provider: fake, model: m1, params: {{temperature: 1.0}}, label: m1 hot}}
"""


@pytest.fixture
def setup(app, fake):
    make_provider(fake)
    make_tasks(2)


def test_the_same_model_twice_with_other_params_runs_as_two_labelled_targets(setup):
    plan = reader.parse(CONFIG.format(judge_check="true"))
    run = apply(plan)
    labels = [t.label for t in run.targets.order_by(RunTarget.position)]
    assert labels == ["m1 · temperature 0.2", "m1 hot"]
    assert JudgeJob.select().where(JudgeJob.run == run).count() == 1


def test_the_same_model_with_the_same_params_twice_is_refused_with_its_line(setup):
    text = CONFIG.format(judge_check="false").replace("temperature: 1.0", "temperature: 0.2")
    with pytest.raises(ValidationError) as exc:
        reader.parse(text)
    (entry,) = exc.value.errors
    assert entry["field"] == "targets[1]" and entry["line"] == 9
    assert "twice with the same params" in entry["message"]


def test_judge_check_must_be_true_or_false(setup):
    with pytest.raises(ValidationError) as exc:
        reader.parse(CONFIG.format(judge_check="sometimes"))
    assert [e["field"] for e in exc.value.errors] == ["run.judge_check"]
