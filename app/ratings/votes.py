"""A/B votes: two targets' answers to one task side by side, blind, one vote per pair and voter.

The scope is two targets (of one run, or of two runs over the same tasks). The next pair is one
the voter has not voted on, in the voter's own shuffled order (people.queue_order); its sides
are randomised per pair (a hash of the two item ids, so a reload shows the same sides). Each
pair shown comes with a pair token, kept with who it was shown to: a vote carries it, so a vote
is always for a pair that person saw, and a second vote with the same token (a key pressed
twice) answers with the first vote and stores nothing. A person can undo their last vote and
change any of theirs; the old value goes to VoteHistory.
"""

import hashlib
import secrets
from dataclasses import dataclass
from dataclasses import field

from peewee import IntegrityError
from peewee import fn

from ..clock import isoformat
from ..clock import utcnow
from ..db.connection import database
from ..db.models import HUMAN
from ..db.models import LEFT
from ..db.models import RIGHT
from ..db.models import WINNERS
from ..db.models import Item
from ..db.models import PairToken
from ..db.models import RunTarget
from ..db.models import Vote
from ..db.models import VoteHistory
from ..errors import Conflict
from ..errors import NotFound
from ..errors import ValidationError
from ..ids import is_db_id
from ..ids import whole_number
from ..runs.queries import get_run
from ..scoring.votes import vote_row
from .pair_queue import next_unvoted
from .pair_queue import pair_total
from .people import queue_order


@dataclass
class Scope:
    """The two targets an A/B session compares (A and B as picked, not as shown)."""

    run_a: object
    target_a: object
    run_b: object
    target_b: object
    # The scope's pairs once read (pair_queue.scope_pairs): a page counts them and picks one.
    pairs: object = field(default=None, repr=False, compare=False)

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
    token: str = ""


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


def pair_token(voter, left, right, now=None):
    """The token of this pair as shown to `voter`: the unused one handed out before (a reload),
    else a new one."""
    found = (
        PairToken.select(PairToken.token)
        .where(
            (PairToken.voter == voter)
            & (PairToken.left_item == left.id)
            & (PairToken.right_item == right.id)
            & PairToken.vote.is_null()
        )
        .first()
    )
    if found is not None:
        return found.token
    token = secrets.token_urlsafe(18)
    PairToken.create(
        token=token, voter=voter, left_item=left.id, right_item=right.id, shown_at=now or utcnow()
    )
    return token


def next_pair(scope, voter=HUMAN):
    """The next pair of the scope without this voter's vote, or None when every pair has one.

    The voter's pending pairs in their own shuffled order, so two people see the pairs in
    different orders and the order gives nothing away: picked from the scope's kept pairs
    (pair_queue.py), not by reading each. The pair comes with its pair token.
    """
    found = next_unvoted(scope, voter, queue_order(voter))
    if found is None:
        return None
    item_a, item_b = found
    columns = (Item.id, Item.target, Item.task_key, Item.question, Item.answer)
    items = {i.id: i for i in Item.select(*columns).where(Item.id.in_([item_a, item_b]))}
    left, right = sides(items[item_a], items[item_b])
    task_key = items[item_a].task_key
    return Pair(task_key, items[item_a].question, left, right, pair_token(voter, left, right))


def pair_count(scope):
    """How many tasks both targets answered: the pairs there are to vote on (kept with the
    scope's pairs, so a view reads one row whatever the runs' size)."""
    return pair_total(scope)


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


def _winner(body):
    winner = body.get("winner")
    if isinstance(winner, str):
        winner = winner.strip().upper()
    if winner in (None, ""):
        raise ValidationError.field("winner", "is required")
    if winner not in WINNERS:
        raise ValidationError.field("winner", "must be LEFT, RIGHT or TIE")
    return winner


def clean_vote(body, voter=HUMAN):
    """(pair token, left item, right item, winner) from {"pairToken", "winner"} (the item ids,
    when sent too, must be the pair's). 400 naming pairToken for a pair not shown to `voter`."""
    if not isinstance(body, dict):
        raise ValidationError.field("body", 'send {"pairToken", "winner"}')
    errors = []
    token = body.get("pairToken")
    if token in (None, ""):
        errors.append(
            {
                "field": "pairToken",
                "message": "is required: vote with the token that came with the pair "
                "(the A/B page or GET /api/pairwise/next)",
            }
        )
    try:
        winner = _winner(body)
    except ValidationError as exc:
        errors += exc.errors
    if errors:
        raise ValidationError(errors)
    shown = (
        PairToken.get_or_none((PairToken.token == token) & (PairToken.voter == voter))
        if isinstance(token, str)
        else None
    )
    if shown is None:
        raise ValidationError.field(
            "pairToken", "this pair was not shown to you: vote on a pair you were handed"
        )
    for name, expected in (
        ("leftItemId", shown.left_item_id),
        ("rightItemId", shown.right_item_id),
    ):
        value = body.get(name)
        if value not in (None, "") and str(value) != str(expected):
            raise ValidationError.field(
                "pairToken",
                f"was handed out with items {shown.left_item_id} (left) and "
                f"{shown.right_item_id} (right), not {name} {value}",
            )
    left = _item(shown.left_item_id, "leftItemId")
    right = _item(shown.right_item_id, "rightItemId")
    return shown, left, right, winner


def record_vote(body, voter=HUMAN, now=None):
    """Store one vote on a pair shown to `voter` (201 in the API). A second vote with the same
    pair token answers with the first (`vote.repeated` is True, nothing stored); Conflict when
    the voter voted on this pair with another token (two tabs)."""
    shown, left, right, winner = clean_vote(body, voter)
    if shown.vote_id is not None:
        first = Vote.get_or_none(Vote.id == shown.vote_id)
        if first is not None:
            first.repeated = True
            return first
    now = now or utcnow()
    try:
        with database.atomic():
            vote = Vote.create(**vote_row(left, right, winner, voter, now=now))
            PairToken.update(vote=vote.id).where(PairToken.id == shown.id).execute()
    except IntegrityError:
        # Two presses at once: the other one stored the vote with this token a moment ago.
        first = PairToken.get_by_id(shown.id).vote
        if first is not None:
            first.repeated = True
            return first
        raise Conflict(
            f"Items {left.id} and {right.id} already have your vote; one vote per pair "
            "(change it instead)."
        ) from None
    vote.repeated = False
    return vote


def _keep_history(vote, changed_by, action, now):
    VoteHistory.create(
        vote_id=vote.id,
        item_low=vote.item_low,
        item_high=vote.item_high,
        voter=vote.voter,
        changed_by=changed_by,
        changed_at=now,
        action=action,
        old_winner=vote.winner,
        old_left_item=vote.left_item_id,
        old_right_item=vote.right_item_id,
    )


def undo_last_vote(voter=HUMAN, now=None):
    """Remove the voter's most recent vote (its pair comes back to their queue); the removed
    vote as JSON. NotFound when they have none."""
    last = Vote.select().where(Vote.voter == voter).order_by(Vote.id.desc()).first()
    if last is None:
        raise NotFound("You have no vote to undo.")
    removed = vote_to_dict(last)
    with database.atomic():
        _keep_history(last, voter, "undo", now or utcnow())
        # The pair's token is free again: the pair, shown again, takes the same one.
        PairToken.update(vote=None).where(PairToken.vote == last.id).execute()
        last.delete_instance()
    return removed


def change_vote(vote_id, body, voter=HUMAN, now=None):
    """Change the winner of one of the voter's own votes ({"winner"}); the vote. The old
    winner goes to the history; another person's vote is NotFound."""
    if not isinstance(body, dict):
        raise ValidationError.field("body", 'send {"winner": "LEFT" | "RIGHT" | "TIE"}')
    winner = _winner(body)
    vote = get_vote(vote_id)
    if vote.voter != voter:
        raise NotFound(f"No vote {vote_id} of yours.")
    if vote.winner == winner:
        return vote
    won = {LEFT: vote.left_target_id, RIGHT: vote.right_target_id}.get(winner)
    with database.atomic():
        _keep_history(vote, voter, "change", now or utcnow())
        Vote.update(winner=winner, winner_target=won).where(Vote.id == vote.id).execute()
    return get_vote(vote.id)


def my_votes(scope, voter=HUMAN, limit=50):
    """The voter's votes in the scope, newest first, as JSON (the A/B page's "my votes")."""
    query = (
        Vote.select()
        .where(_in_scope(scope) & (Vote.voter == voter))
        .order_by(Vote.id.desc())
        .limit(limit)
    )
    # Every vote here is between the scope's two targets: loaded once, not once per vote.
    targets = {t.id: t for t in (scope.target_a, scope.target_b)}
    return [vote_to_dict(vote, targets) for vote in query]


def vote_history(voter, limit=100):
    """The voter's vote changes and undos, newest first, as JSON."""
    return [
        {
            "voteId": h.vote_id,
            "action": h.action,
            "changedBy": h.changed_by,
            "changedAt": isoformat(h.changed_at),
            "oldWinner": h.old_winner,
            "leftItemId": h.old_left_item,
            "rightItemId": h.old_right_item,
        }
        for h in VoteHistory.select()
        .where(VoteHistory.voter == voter)
        .order_by(VoteHistory.id.desc())
        .limit(limit)
    ]


def vote_to_dict(vote, targets=None):
    """A vote as JSON: the items as shown, the winner side and which target won. `targets`:
    the vote's two targets by id, when the caller has them."""
    if targets is None:
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
