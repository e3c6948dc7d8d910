"""The scorers by name, and which of them score a task: the rule scorers (no call) and the one
scorer that needs a call (an item keeps one judgement: its request, raw reply and cost)."""

from .rubric import RubricJudge
from .task_checks import TaskChecks

_SCORERS = {}


def register(scorer):
    """Add a scorer (or replace the one of the same name)."""
    _SCORERS[scorer.name] = scorer


def unregister(name):
    """Remove a scorer by name; the scorer it was, or None."""
    return _SCORERS.pop(name, None)


def get(name):
    """The scorer of that name, or None."""
    return _SCORERS.get(name)


def has_rules():
    """Whether any rule scorer is registered (without one an answer is never scored by rules)."""
    return any(not s.needs_call for s in _SCORERS.values())


def has_call(judge=True):
    """Whether any registered scorer needs a model call (the judge stage has work); never for
    a run without a judge model (`judge` False)."""
    return judge and any(s.needs_call for s in _SCORERS.values())


def rule_scorers(task):
    """The scorers that score this task without a call, in registration order."""
    return [s for s in _SCORERS.values() if not s.needs_call and s.applies(task)]


def call_scorer(task, judge=True):
    """The scorer that scores this task with a call, or None; None for a run without a judge
    model (`judge` False: the run's, passed in, so the registry stays the same for every run)."""
    if not judge:
        return None
    return next((s for s in _SCORERS.values() if s.needs_call and s.applies(task)), None)


register(RubricJudge())
register(TaskChecks())
