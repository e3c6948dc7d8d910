"""How a run's answers fared on their tasks' checks, per target: the share of checked answers
that passed every check (promptfoo's pass rate per test case) and of the checks that passed.

One query over the items that have check results; their JSON is read here (no JSON in SQL, so
SQLite and PostgreSQL read it the same).
"""

import json
from dataclasses import dataclass

from ..db.connection import database
from ..runs.outcomes import I


@dataclass(frozen=True)
class CheckFigures:
    """A target's checks: answers checked and passing all, checks run and passed."""

    answers: int = 0
    answers_passed: int = 0
    checks: int = 0
    checks_passed: int = 0

    @property
    def pass_rate(self):
        """The share (0-1) of checked answers that passed every check; None with none."""
        return self.answers_passed / self.answers if self.answers else None

    def text(self):
        """In words, for a page or a file: "75 % (3 of 4 answers; 7 of 8 checks)"; '' with no
        checked answer."""
        if not self.answers:
            return ""
        return (
            f"{100 * self.pass_rate:.0f} % ({self.answers_passed} of {self.answers} answers; "
            f"{self.checks_passed} of {self.checks} checks)"
        )

    def to_dict(self):
        """camelCase for summary.json."""
        return {
            "answers": self.answers,
            "answersPassed": self.answers_passed,
            "checks": self.checks,
            "checksPassed": self.checks_passed,
            "passRate": self.pass_rate,
        }


def target_check_figures(run):
    """{target id: CheckFigures} for the targets with at least one checked answer."""
    counts = {}
    query = (
        I.select(I.target, I.check_results)
        .where((I.run == run) & I.check_results.is_null(False))
        .tuples()
    )
    for target, text in database.execute(query):
        results = json.loads(text) or []
        if not results:
            continue
        passed = sum(1 for r in results if r.get("passed"))
        answers, answers_passed, checks, checks_passed = counts.get(target, (0, 0, 0, 0))
        counts[target] = (
            answers + 1,
            answers_passed + (passed == len(results)),
            checks + len(results),
            checks_passed + passed,
        )
    return {target: CheckFigures(*values) for target, values in counts.items()}
