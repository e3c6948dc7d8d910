"""The scoring seam: a scorer registered by name scores a real run's answers beside the judge,
ends an answer that fails hard without a judge call, and alone needs no judge at all."""

import pytest

from app.db.models import COMPLETED
from app.db.models import Item
from app.scoring import registry
from app.scoring.score import Score
from app.scoring.score import Scorer
from tests.engine_helpers import FakeClock
from tests.engine_helpers import calls
from tests.engine_helpers import drive
from tests.engine_helpers import make_provider
from tests.engine_helpers import make_tasks
from tests.engine_helpers import start_run


class ContainsWord(Scorer):
    """A rule scorer: passes an answer that says the word; one that does not scores 0 (and
    auto-fails when hard)."""

    name = "contains-word"

    def __init__(self, word, hard=False):
        self.word, self.hard = word, hard

    def score(self, task, answer, facts):
        if self.word in answer.lower().split():
            took = f"{facts['time_taken_ms']:.0f} ms"
            return Score.of(100, f"says {self.word!r} ({took})", by=self.name)
        return Score.of(0, f"never says {self.word!r}", by=self.name, auto_fail=self.hard)


@pytest.fixture
def register():
    """Register scorers for one test; afterwards the registry is as it was."""
    rubric = registry.get("rubric")
    added = []

    def add(scorer):
        registry.register(scorer)
        added.append(scorer.name)

    yield add
    for name in added:
        registry.unregister(name)
    registry.register(rubric)


@pytest.fixture
def config(app):
    return dict(app.config)


def run_one_task(fake, config):
    p = make_provider(fake)
    start_run(p, [(p, "m1")], make_tasks(1))
    assert drive(config, FakeClock())["state"] == "finished"
    return Item.get()


def test_a_rule_scorer_scores_the_answer_beside_the_judge(app, fake, config, register):
    register(ContainsWord("answer"))  # the fake answers "fake answer"; its judge gives 80
    item = run_one_task(fake, config)
    assert item.status == COMPLETED and item.evaluation_score == 90.0 and not item.auto_fail
    assert item.evaluation_reason.startswith("contains-word: says 'answer' (")
    assert item.evaluation_reason.endswith("; rubric: fake judge")
    assert len(calls(fake, "judge")) == 1


def test_an_answer_that_fails_a_rule_hard_is_not_sent_to_the_judge(app, fake, config, register):
    register(ContainsWord("banana", hard=True))
    item = run_one_task(fake, config)
    assert item.status == COMPLETED and item.evaluation_score == 0.0 and item.auto_fail
    assert item.evaluation_reason == "never says 'banana'" and item.judge_request_json is None
    assert calls(fake, "judge") == []


def test_without_a_scorer_that_needs_a_call_the_judge_is_never_called(app, fake, config, register):
    registry.unregister("rubric")
    register(ContainsWord("answer"))
    item = run_one_task(fake, config)
    assert item.status == COMPLETED and item.evaluation_score == 100.0 and item.judged_at
    assert calls(fake, "judge") == [] and calls(fake, "judge_warmup") == []
