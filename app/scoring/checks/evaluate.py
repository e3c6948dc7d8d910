"""Running a task's checks on one answer: each check's result and the answer's one Score."""

from dataclasses import asdict
from dataclasses import dataclass
from types import SimpleNamespace

from ..score import Score
from . import references
from . import shapes
from . import speed
from . import text
from . import tools
from .reasons import show

BY = "checks"
EVALUATORS = {
    **text.EVALUATORS,
    **shapes.EVALUATORS,
    **references.EVALUATORS,
    **tools.EVALUATORS,
    **speed.EVALUATORS,
}


@dataclass(frozen=True)
class CheckResult:
    """One check's verdict on one answer (plain JSON through to_dict)."""

    type: str
    score: float  # 0-100
    passed: bool
    reason: str
    gate: bool

    def to_dict(self):
        return asdict(self)


@dataclass(frozen=True)
class Evaluation:
    """Every check's result and the answer's combined Score."""

    results: list
    score: Score

    def to_dict(self):
        """Plain JSON, to store beside the item."""
        return {"checks": [r.to_dict() for r in self.results], "score": asdict(self.score)}


def run_check(check, answer, *, reference=None, facts=None, tool_calls=None):
    """One valid check's CheckResult on an answer; never raises."""
    context = SimpleNamespace(reference=reference, facts=facts, tool_calls=tool_calls)
    answer = answer if isinstance(answer, str) else ("" if answer is None else str(answer))
    try:
        score, reason = EVALUATORS[check.type](check, answer, context)
    except Exception as exc:  # a last guard: a valid check must not fail an item at run time
        score, reason = 0.0, f"could not run: {show(f'{type(exc).__name__}: {exc}', 120)}"
    else:
        if check.options.get("negate"):
            # A negated yes/no check holds when the test does not.
            score, reason = 100.0 - float(score), f"negated: {reason}"
    score = float(score)
    return CheckResult(check.type, score, score >= check.threshold, reason, check.gate)


def evaluate(checks, answer, *, reference=None, facts=None, tool_calls=None):
    """Run parsed checks on an answer: an Evaluation whose Score is the checks' weighted mean,
    passes when every check passes, and auto-fails (scores 0) when a gate check fails.
    `reference` is the task's excellent answer, `facts` maps FACTS to the call's, `tool_calls`
    the answer's [{name, arguments}]."""
    results = [
        run_check(c, answer, reference=reference, facts=facts, tool_calls=tool_calls)
        for c in checks
    ]
    return Evaluation(results, combined(checks, results))


def combined(checks, results):
    """The answer's one Score from its checks' results."""
    if not results:
        return Score(score=100.0, passed=True, reason="no checks", by=BY)
    total = sum(c.weight for c in checks)
    mean = sum(c.weight * r.score for c, r in zip(checks, results, strict=True)) / total
    failed = [r for r in results if not r.passed]
    gates = [r for r in failed if r.gate]
    if gates:
        reason = "gate failed: " + "; ".join(f"{r.type}: {r.reason}" for r in gates)
    elif failed:
        reason = f"{len(results) - len(failed)}/{len(results)} checks passed; " + "; ".join(
            f"{r.type}: {r.reason}" for r in failed
        )
    else:
        reason = f"all {len(results)} checks passed"
    return Score(
        score=0.0 if gates else round(mean, 2),
        passed=not failed,
        reason=reason,
        by=BY,
        auto_fail=bool(gates),
    )
