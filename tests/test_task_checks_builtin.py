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


# A correct answer phrased as a model might (working first, the result in other words or
# units), for every built-in task whose check reads a number or a fixed phrase.
ALTERNATIVES = {
    "reasoning_002": "All but 5 were sold, so 12 - 7 sold... no: 5 lamps remain unsold.",
    "reasoning_006": "Say the pen costs p: p + p + 3.00 = 3.30, so p = 0.15; 15 cents.",
    "math_001": "17 × 20 = 340 and 17 × 4 = 68, so 17 × 24 = 340 + 68 = **408**.",
    "math_002": "10% of 240 is 24, 5% is 12, so 15% is 24 + 12 = 36.",
    "math_005": "The average speed is 80 km/h (180 km ÷ 2.25 h, since 15 min is 0.25 h).",
    "math_006": "Treat the pair as one block: 4! = 24 orders, times 2 inside the block. Answer: 48",
    "math_008": "Multiples of 4 below 100 total 1200, of 6 total 816, of 12 total 432. "
    "So the sum is 1200 + 816 − 432 = 1584.",
    "coding_002": "It prints 4: y = x makes both names refer to one list, so after the append "
    "len(x) is 4.",
    "coding_006": "SELECT customer, SUM(amount) AS total FROM orders GROUP BY customer "
    "HAVING total > 100 ORDER BY total DESC;",
    "coding_008": "It is quadratic, O(n * n), because of the nested loops; a hash map of counts "
    "makes it O(n).",
    "instruction_006": "- It keeps you healthy and alert.\n- It helps your skin stay clear.",
    "instruction_007": "Soixante douze.",
    "extraction_002": "Date: 2024-03-14, time: 15:30, room: 204",
    "extraction_005": "item,quantity,unit_price\nnotebook,3,2.5\nstapler,2,7\npen,10,0.8\n"
    "Total: 29.5",
}


def test_every_built_in_check_passes_a_correct_answer_phrased_otherwise(app):
    tasks, _ = defaults.load_builtin()
    by_id = {t["task_id"]: t for t in tasks}
    for task_id, answer in ALTERNATIVES.items():
        task = by_id[task_id]
        checks = parse_checks(task["checks"], has_reference=bool(task["excellent"]))
        result = evaluate(checks, answer, reference=task["excellent"])
        assert result.score.passed, (task_id, result.score.reason)


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
