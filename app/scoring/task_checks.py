"""A task's checks as a rule scorer: the item's snapshot of the checks, run on its answer with
the task's excellent answer as reference, the call's facts and the answer's tool calls; and
how much the checks weigh beside the judge in the item's one score."""

from .checks.evaluate import BY
from .checks.evaluate import evaluate
from .checks.spec import CheckError
from .checks.spec import parse_checks
from .score import ANSWER
from .score import Score
from .score import Scorer

# The run spec's scoreWeights: {"checks": w}, the checks' share of an item's score beside the
# judge (the judge and any other rule scorer share the rest).
WEIGHT_KEY = "checks"


def has_checks(task):
    """Whether the task (an item's snapshot, or a Task row) carries any check."""
    checks = getattr(task, "checks", None)
    return isinstance(checks, list) and bool(checks)


def has_references(task):
    """Whether the judge has something to grade by: a rubric or an excellent answer."""
    excellent = getattr(task, "excellent", None) or ""
    return bool(getattr(task, "rubric", None)) or bool(excellent.strip())


def reference_of(task):
    """The reference the checks compare with: the task's excellent answer, or None."""
    return (getattr(task, "excellent", "") or "").strip() or None


def parsed_checks(task):
    """The task's checks parsed against its reference, or the error saying why they cannot be
    read. A task that carries them parsed already (`parsed_checks`: the engine parses each
    task's once per run, engine/rules.py) is not parsed again."""
    parsed = getattr(task, "parsed_checks", None)
    if parsed is not None:
        return parsed
    try:
        return parse_checks(task.checks, has_reference=reference_of(task) is not None)
    except (CheckError, TypeError, ValueError) as exc:
        return exc


def checks_weight(task, weights=None, *, judge=True):
    """The checks' share (0-1) of the task's score: 0 without checks, 1 without a judge;
    else the run's scoreWeights, by default 1 where the judge has no rubric nor excellent answer
    to grade by and 0.5 where it has."""
    if not has_checks(task):
        return 0.0
    if not judge:
        return 1.0
    given = (weights or {}).get(WEIGHT_KEY)
    if given is not None:
        return float(given)
    return 0.5 if has_references(task) else 1.0


def weights_of(scores, share):
    """combine()'s weights for an item's scores when the checks take `share`: the checks'
    score weighs `share`, the others split the rest; None when no score is the checks'."""
    others = [s.by for s in scores if s.by != BY]
    if len(others) == len(scores) or not others:
        return None
    return {BY: share, **{name: (1.0 - share) / len(others) for name in others}}


class TaskChecks(Scorer):
    """The task's checks (scoring/checks/): a rule scorer for every item that has some."""

    name = BY
    stage = ANSWER

    def applies(self, task):
        return has_checks(task)

    def score(self, task, answer, facts):
        checks = parsed_checks(task)
        if isinstance(checks, Exception):
            # Checked when the task was saved; a snapshot that no longer parses (an older
            # format, a hand-edited row) is this item's problem, said in its reason, not a
            # failure that stops it.
            return Score.of(0, f"the task's checks cannot be read ({checks})", by=self.name)
        reference = reference_of(task)
        facts = dict(facts or {})
        evaluation = evaluate(
            checks,
            answer,
            reference=reference,
            facts=facts,
            tool_calls=facts.get("tool_calls"),
        )
        gate = next((r for r in evaluation.results if r.gate and not r.passed), None)
        score = evaluation.score
        return Score(
            score=score.score,
            passed=score.passed,
            reason=score.reason,
            by=self.name,
            auto_fail=score.auto_fail,
            auto_fail_reason=f"{gate.type}: {gate.reason}" if gate else None,
            check_results=[r.to_dict() for r in evaluation.results],
        )
