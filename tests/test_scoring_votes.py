"""One builder for a Vote row: a person's vote, an imported one and a judge's pair all use it."""

import datetime as dt
from types import SimpleNamespace

from app.scoring.votes import vote_row

NOW = dt.datetime(2030, 5, 6, 7, 8, 9)
LEFT_ITEM = SimpleNamespace(id=9, target_id=1, task_key="t1")
RIGHT_ITEM = SimpleNamespace(id=4, target_id=2, task_key="t1")


def test_the_pair_is_keyed_low_to_high_whatever_the_sides():
    row = vote_row(LEFT_ITEM, RIGHT_ITEM, "LEFT", "human", now=NOW)
    assert (row["left_item"], row["right_item"]) == (9, 4)
    assert (row["item_low"], row["item_high"]) == (4, 9)
    assert (row["left_target"], row["right_target"], row["task_key"]) == (1, 2, "t1")


def test_the_winner_names_the_winning_target_and_a_tie_none():
    assert vote_row(LEFT_ITEM, RIGHT_ITEM, "LEFT", "human", now=NOW)["winner_target"] == 1
    assert vote_row(LEFT_ITEM, RIGHT_ITEM, "RIGHT", "human", now=NOW)["winner_target"] == 2
    assert vote_row(LEFT_ITEM, RIGHT_ITEM, "TIE", "human", now=NOW)["winner_target"] is None


def test_a_persons_vote_is_consistent_with_no_job_and_no_reason():
    row = vote_row(LEFT_ITEM, RIGHT_ITEM, "TIE", "human", now=NOW)
    assert row["source"] == "human" and row["voter"] == "human" and row["created_at"] == NOW
    assert (row["inconsistent"], row["job"], row["reason"]) == (False, None, None)


def test_a_judges_vote_keeps_its_job_reason_and_disagreement():
    row = vote_row(
        LEFT_ITEM,
        RIGHT_ITEM,
        "TIE",
        "judge:fake/judge",
        now=NOW,
        inconsistent=True,
        job=3,
        reason="A, then B",
    )
    assert row["source"] == "judge" and row["voter"] == "judge:fake/judge"
    assert (row["inconsistent"], row["job"], row["reason"]) == (True, 3, "A, then B")
