"""A/B votes: two targets' answers to one task side by side, blind, one vote per pair and voter.

The scope is two targets (of one run, or of two runs over the same tasks). The next pair is the
first task, in task order, that both answered and the voter has not voted on; its sides are
randomised per pair (a hash of the two item ids, so a reload shows the same sides). The server
records which target won; a second vote on the same pair by the same voter is a Conflict, so a
double key press stores one vote.
"""

import hashlib
from dataclasses import dataclass

from peewee import IntegrityError
from peewee import fn

from ..clock import isoformat
from ..clock import utcnow
from ..db.connection import database
from ..db.models import HUMAN
from ..db.models import WINNERS
from ..db.models import Item
from ..db.models import RunTarget
from ..db.models import Vote
from ..errors import Conflict
from ..errors import NotFound
from ..errors import ValidationError
from ..ids import is_db_id
from ..ids import whole_number
from ..runs.judge_jobs import unjudged_pairs
from ..runs.queries import get_run
from ..scoring.votes import vote_row


@dataclass
class Scope:
    """The two targets an A/B session compares (A and B as picked, not as shown)."""

    run_a: object
    target_a: object
    run_b: object
    target_b: object

    def query(self):
        """The scope as query parameters (runA, targetA, runB, targetB)."""
        return {
            "runA": self.run_a.run_id,
            "targetA": self.target_a.id,
            "runB": self.run_b.run_id,
            "targetB": self.target_b.id,
        }


@dataclass
class Pair:
    """One task's two answers as shown: left and right (model names stay on the server)."""

    task_key: str
    question: str
    left: object
    right: object


def _target(run, value, field):
    pk = whole_number(value, field, low=1)
    target = RunTarget.get_or_none((RunTarget.id == pk) & (RunTarget.run == run))
    if target is None:
        raise NotFound(f"Run {run.run_id!r} has no target {pk} ({field}).")
    return target


def scope(run_a, target_a, run_b=None, target_b=None):
    """Check and load the two targets: B's run defaults to A's; A and B must differ."""
    missing = [
        {"field": name, "message": "is required"}
        for name, value in (("runA", run_a), ("targetA", target_a), ("targetB", target_b))
        if value in (None, "")
    ]
    if missing:
        raise ValidationError(missing)
    for name, value in (("runA", run_a), ("runB", run_b)):
        if value is not None and not isinstance(value, str):
            raise ValidationError.field(name, "must be a run id (text)")
    ra = get_run(run_a)
    rb = get_run(run_b) if run_b not in (None, "") else ra
    ta, tb = _target(ra, target_a, "targetA"), _target(rb, target_b, "targetB")
    if ta.id == tb.id:
        raise ValidationError.field("targetB", "pick two different targets to compare")
    return Scope(ra, ta, rb, tb)


def sides(item_a, item_b):
    """(left, right): the pair's sides, random per pair but the same on every request."""
    low, high = sorted((item_a.id, item_b.id))
    flip = hashlib.sha256(f"{low}:{high}".encode()).digest()[0] & 1
    return (item_b, item_a) if flip else (item_a, item_b)


def _in_scope(scope):
    a_id, b_id = scope.target_a.id, scope.target_b.id
    return ((Vote.left_target == a_id) & (Vote.right_target == b_id)) | (
        (Vote.left_target == b_id) & (Vote.right_target == a_id)
    )


def next_pair(scope, voter=HUMAN):
    """The next pair of the scope without this voter's vote, or None when every pair has one.

    People vote in task order, so the pairs up to the last task voted on are done: look after it
    first (a few index lookups, not one per vote already cast), then from the start for gaps.
    """
    last = Vote.select(fn.MAX(Vote.task_key)).where(_in_scope(scope) & (Vote.voter == voter))
    last = last.scalar()
    pending = []
    if last is not None:
        pending = unjudged_pairs(scope.target_a, scope.target_b, voter, limit=1, after=last)
    if not pending:
        pending = unjudged_pairs(scope.target_a, scope.target_b, voter, limit=1)
    if not pending:
        return None
    item_a, item_b, task_key = pending[0]
    columns = (Item.id, Item.target, Item.task_key, Item.question, Item.answer)
    items = {i.id: i for i in Item.select(*columns).where(Item.id.in_([item_a, item_b]))}
    left, right = sides(items[item_a], items[item_b])
    return Pair(task_key, items[item_a].question, left, right)


def pair_count(scope):
    """How many tasks both targets answered: the pairs there are to vote on. It reads every
    pair's two items, so the A/B page counts it once and carries it (voted_count is cheap)."""
    a, b = Item.alias("a"), Item.alias("b")
    return (
        a.select(a.id)
        .join(
            b,
            on=(
                (b.run == scope.run_b.id)
                & (b.target == scope.target_b.id)
                & (b.task_key == a.task_key)
            ),
        )
        .where(
            (a.run == scope.run_a.id)
            & (a.target == scope.target_a.id)
            & a.answered_at.is_null(False)
            & b.answered_at.is_null(False)
        )
        .count()
    )


def voted_count(scope, voter=HUMAN):
    """How many of the scope's pairs this voter voted on (one index count)."""
    return Vote.select().where(_in_scope(scope) & (Vote.voter == voter)).count()


def _item(value, field):
    pk = whole_number(value, field, low=1)
    # What a vote needs of an item (not its 60 columns): a vote is one key press.
    columns = (Item.id, Item.run, Item.target, Item.task_key, Item.answered_at)
    item = Item.select(*columns).where(Item.id == pk).first() if is_db_id(pk) else None
    if item is None:
        raise NotFound(f"No item {pk} ({field}).")
    return item


def clean_vote(body):
    """(left item, right item, winner) from {"leftItemId", "rightItemId", "winner"}."""
    if not isinstance(body, dict):
        raise ValidationError.field("body", 'send {"leftItemId", "rightItemId", "winner"}')
    errors = []
    for name in ("leftItemId", "rightItemId", "winner"):
        if body.get(name) in (None, ""):
            errors.append({"field": name, "message": "is required"})
    winner = body.get("winner")
    if isinstance(winner, str):
        winner = winner.strip().upper()
    if winner not in (None, "") and winner not in WINNERS:
        errors.append({"field": "winner", "message": "must be LEFT, RIGHT or TIE"})
    if errors:
        raise ValidationError(errors)
    left = _item(body["leftItemId"], "leftItemId")
    right = _item(body["rightItemId"], "rightItemId")
    if left.id == right.id or left.target_id == right.target_id:
        raise ValidationError.field("rightItemId", "compare answers of two different targets")
    if left.task_key != right.task_key:
        raise ValidationError.field(
            "rightItemId", f"both items must answer the same task ({left.task_key!r})"
        )
    for item, name in ((left, "leftItemId"), (right, "rightItemId")):
        if item.answered_at is None:
            raise ValidationError.field(name, f"item {item.id} has no answer to compare")
    return left, right, winner


def record_vote(body, voter=HUMAN, now=None):
    """Store one vote (201 in the API); Conflict when this voter already voted on the pair."""
    left, right, winner = clean_vote(body)
    now = now or utcnow()
    try:
        with database.atomic():
            vote = Vote.create(**vote_row(left, right, winner, voter, now=now))
    except IntegrityError:
        raise Conflict(
            f"Items {left.id} and {right.id} already have your vote; one vote per pair."
        ) from None
    return vote


def vote_to_dict(vote):
    """A vote as JSON: the items as shown, the winner side and which target won."""
    targets = {
        t.id: t
        for t in RunTarget.select().where(
            RunTarget.id.in_([vote.left_target_id, vote.right_target_id])
        )
    }
    winner = targets.get(vote.winner_target_id)
    return {
        "id": vote.id,
        "taskId": vote.task_key,
        "leftItemId": vote.left_item_id,
        "rightItemId": vote.right_item_id,
        "winner": vote.winner,
        "winnerTargetId": vote.winner_target_id,
        "winnerTarget": winner.label if winner else None,
        "leftTarget": targets[vote.left_target_id].label,
        "rightTarget": targets[vote.right_target_id].label,
        "source": vote.source,
        "voter": vote.voter,
        "inconsistent": vote.inconsistent,
        "createdAt": isoformat(vote.created_at),
    }


def get_vote(vote_id):
    """One vote by id, or NotFound."""
    vote = Vote.get_or_none(Vote.id == vote_id) if is_db_id(vote_id) else None
    if vote is None:
        raise NotFound(f"No vote {vote_id}.")
    return vote


def target_choices(run):
    """A run's targets for the pickers, in run order."""
    return list(RunTarget.select().where(RunTarget.run == run).order_by(RunTarget.position))


def shared_tasks(run_a, run_b):
    """How many task ids two runs share (0 means they cannot be compared)."""
    a, b = Item.alias("a"), Item.alias("b")
    return (
        a.select(fn.COUNT(fn.DISTINCT(a.task_key)))
        .join(b, on=((b.run == run_b.id) & (b.task_key == a.task_key)))
        .where(a.run == run_a.id)
        .scalar()
    )
