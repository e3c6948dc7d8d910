"""A pairwise vote as the fields of its Vote row: one builder for a person's vote, an imported
one and the vote a judge's two orders of a pair make."""

from ..db.models import HUMAN
from ..db.models import JUDGE
from ..db.models import LEFT
from ..db.models import RIGHT


def vote_row(left, right, winner, voter, *, now, inconsistent=False, job=None, reason=None):
    """The Vote row for `winner` (LEFT | RIGHT | TIE) between two items as they were shown
    (each with id, target_id and task_key); `voter` is "human", "human:<account name>" or
    "judge:<provider>/<model>"."""
    return {
        "left_item": left.id,
        "right_item": right.id,
        # The pair whatever the sides, for the one-vote-per-pair-and-voter key.
        "item_low": min(left.id, right.id),
        "item_high": max(left.id, right.id),
        "left_target": left.target_id,
        "right_target": right.target_id,
        "task_key": left.task_key,
        "winner": winner,
        "winner_target": {LEFT: left.target_id, RIGHT: right.target_id}.get(winner),
        # A judge is "judge:<provider>/<model>"; a person "human" or "human:<account name>".
        "source": JUDGE if voter.startswith(JUDGE + ":") else HUMAN,
        "voter": voter,
        "inconsistent": inconsistent,
        "job": job,
        "reason": reason,
        "created_at": now,
    }
