"""The rule scorers in the engine (scoring/registry.py): asked right after an answer is stored
and again beside its judgement (they are pure), with the task and the call's facts of the item.
With no rule scorer registered they read nothing and score nothing."""

from types import SimpleNamespace

from ..db.models import Item
from ..scoring import registry
from ..scoring.score import FACTS
from ..scoring.score import TASK_FIELDS
from ..scoring.score import combine


def _row(item_id, columns):
    # Read here, not claimed: only rule scorers need it, and the claims stay lean.
    query = Item.select(*(getattr(Item, c) for c in columns)).where(Item.id == item_id)
    return SimpleNamespace(**query.dicts().get())


def _scores(task, answer, facts):
    return [s.score(task, answer, facts) for s in registry.rule_scorers(task)]


def settled_by_rules(item_id, answer, fields):
    """The item's score when rules alone settle it, else None: no scorer that needs a call
    scores the task, or a rule failed hard (a judge cannot lift an auto-fail's 0, so it is not
    asked). `fields` are the answer's columns about to be stored (its facts among them)."""
    if not registry.has_rules():
        return None
    task = _row(item_id, ("task_key", *TASK_FIELDS))
    scores = _scores(task, answer, {name: fields.get(name) for name in FACTS})
    if scores and (any(s.auto_fail for s in scores) or registry.call_scorer(task) is None):
        return combine(scores)
    return None


def beside_judgement(item_id):
    """The rule scores of a stored answer, to combine with its judgement ([] without rules)."""
    if not registry.has_rules():
        return []
    row = _row(item_id, ("task_key", *TASK_FIELDS, *FACTS, "answer"))
    return _scores(row, row.answer, {name: getattr(row, name) for name in FACTS})
