"""Built-in tasks carry checks where a rule can score the answer; loaded and restored."""

from app.catalog import defaults
from app.db.models import Task
from app.scoring.checks.evaluate import evaluate
from app.scoring.checks.spec import parse_checks


def test_the_built_in_bank_loads_with_checks_on_the_rule_scored_tasks(app):
    tasks, _ = defaults.load_builtin()
    by_id = {t["task_id"]: t for t in tasks}
    assert by_id["math_001"]["checks"] == [{"type": "number", "value": 408}]
    assert {c["type"] for c in by_id["extraction_004"]["checks"]} == {"json", "json-schema"}
    assert sum(1 for t in tasks if t["checks"]) >= 40


def test_every_built_in_check_passes_on_its_tasks_excellent_answer(app):
    tasks, _ = defaults.load_builtin()
    for task in (t for t in tasks if t["checks"]):
        checks = parse_checks(task["checks"], has_reference=bool(task["excellent"]))
        result = evaluate(checks, task["excellent"], reference=task["excellent"])
        assert result.score.passed, (task["task_id"], result.score.reason)


def test_ensure_defaults_stores_the_built_in_checks(app):
    assert defaults.ensure_defaults() is True
    assert Task.get(Task.task_id == "math_001").checks == [{"type": "number", "value": 408}]


def test_reset_defaults_gives_an_existing_install_the_built_in_checks(app):
    defaults.ensure_defaults()
    # An install from before checks: the built-in tasks have none.
    Task.update(checks=None).execute()
    summary = defaults.reset_defaults()
    assert " 0 restored" not in summary
    assert Task.get(Task.task_id == "math_001").checks == [{"type": "number", "value": 408}]
    again = defaults.reset_defaults()
    assert "0 built-in tasks created, 0 restored" in again
