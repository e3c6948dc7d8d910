"""An item's rule scores and whether they settle it (combine, checks_weight, the registry's call
scorer): one rule for the engine's answer step (engine/rules.py) and for an earlier answer
reused (runs/reuse.py), so a reused answer scores as a fresh one would."""

from . import registry
from .checks.evaluate import BY as CHECKS
from .score import combine
from .task_checks import checks_weight


def rule_scores(task, answer, facts):
    """Every rule scorer's Score for `answer` to `task` (an item's snapshot), `facts` the call's."""
    return [s.score(task, answer, facts) for s in registry.rule_scorers(task)]


def call_scorer(task, judge, weights):
    """The scorer that needs a call for the task in a run with (`judge`) or without a judge
    model and these scoreWeights, or None: none where the checks take the whole score."""
    if checks_weight(task, weights, judge=judge) >= 1.0:
        return None
    return registry.call_scorer(task, judge)


def judge_needed(task, judge, weights):
    """Whether a scorer that needs a call scores the task (call_scorer is not None)."""
    return call_scorer(task, judge, weights) is not None


def settled(scores, task, judge, weights):
    """The item's score when its rule scores settle it (one failed hard, or no judge scores the
    task), else None."""
    if scores and (any(s.auto_fail for s in scores) or not judge_needed(task, judge, weights)):
        return combine(scores)
    return None


def check_columns(scores):
    """The item's check columns (check_results, check_score) from its rule scores; {} when no
    score is the checks'."""
    checks = next((s for s in scores if s.by == CHECKS), None)
    if checks is None:
        return {}
    return {"check_results": checks.check_results, "check_score": checks.score}
