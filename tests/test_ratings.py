"""app.ratings against known answers: the Evaluate queue, the leaderboard from stored votes, the
judge check's ordering and agreement, and seed 003's report figures."""

import math

import numpy as np
import pytest

from app.db.models import COMPLETED
from app.db.models import FAILED
from app.db.models import Item
from app.db.models import JudgeCall
from app.db.models import JudgeJob
from app.db.models import Rating
from app.db.models import Vote
from app.ratings import bradley_terry as bt
from app.ratings import cards
from app.ratings.judge_check import agreement_by_judge
from app.ratings.judge_check import reference_report
from app.ratings.leaderboard import leaderboard
from app.ratings.leaderboard import vote_arrays
from app.ratings.report import run_report
from app.ratings.store import save_rating
from tests.factories import add_item
from tests.factories import make_run


@pytest.fixture
def queue(app):
    """Run q: targets m1 and m2, five tasks each; one answer failed (no answer to rate)."""
    run, (a, b) = make_run("q", targets=[("local", "m1"), ("local", "m2")])
    items = {}
    for target in (a, b):
        for n in range(5):
            items[(target.model, n)] = add_item(
                run, target, f"t{n}", score=20.0 * n, category=("math", "code")[n % 2]
            )
    add_item(run, b, "t5", status=FAILED, error_stage="answer", error_msg="timeout")
    return run, (a, b), items


def ids(filters, start=None):
    """Every id of the queue, in order, following next_id."""
    out, current = [], cards.next_id(filters, start)
    while current is not None:
        out.append(current)
        current = cards.next_id(filters, current)
    return out


def test_the_queue_holds_every_answered_item_in_id_order(queue):
    _run, _targets, items = queue
    assert ids({"run": "q"}) == sorted(i.id for i in items.values())


def test_not_rated_yet_skips_items_with_a_rating_but_not_tags_alone(queue):
    _run, _targets, items = queue
    save_rating(items[("m1", 0)], 4, [], "")
    save_rating(items[("m1", 1)], None, ["later"], "")  # tags only: still not rated
    queue_ids = ids({"run": "q", "unrated": True})
    assert items[("m1", 0)].id not in queue_ids and items[("m1", 1)].id in queue_ids


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"model": "m2"}, [("m2", n) for n in range(5)]),
        ({"category": "code"}, [("m1", 1), ("m1", 3), ("m2", 1), ("m2", 3)]),
        ({"rating": "5"}, [("m2", 4)]),
        ({"rating": "none"}, [("m1", 2)]),
        ({"tag": "odd"}, [("m1", 3), ("m2", 4)]),
    ],
)
def test_each_filter_selects_the_items_it_names(queue, filters, expected):
    _run, _targets, items = queue
    save_rating(items[("m2", 4)], 5, ["odd"], "")
    save_rating(items[("m1", 3)], 2, ["odd", "x"], "")
    save_rating(items[("m1", 2)], None, [], "a note only")
    assert ids({"run": "q", **filters}) == sorted(items[k].id for k in expected)


def test_the_run_date_filter_keeps_runs_started_that_day(queue):
    assert ids({"since": "2025-01-02", "until": "2025-01-02"})
    assert ids({"since": "2025-01-03"}) == []


def test_previous_ignores_not_rated_yet_so_k_returns_to_the_card_just_rated(queue):
    filters = {"run": "q", "unrated": True}
    first = cards.next_id(filters)
    second = cards.next_id(filters, first)
    save_rating(Item.get_by_id(first), 3, [], "")
    assert cards.prev_id(filters, second) == first
    assert cards.next_id(filters, first) == second


def test_save_and_move_saves_then_returns_the_next_card_or_none_at_the_end(queue):
    _run, _targets, items = queue
    last = items[("m2", 4)]
    filters = {"run": "q"}
    moved = cards.save_and_move(
        items[("m1", 0)].id, {"rating": "5", "tags": "a, b", "notes": "n"}, filters, "next"
    )
    assert moved == items[("m1", 1)].id
    stored = Rating.get(Rating.item == items[("m1", 0)].id)
    assert (stored.rating, stored.tags, stored.notes, stored.run_id) == (5, ["a", "b"], "n", 1)
    assert cards.save_and_move(last.id, {"rating": "1"}, filters, "next") is None


def test_clear_removes_the_rating_tags_and_notes(queue):
    _run, _targets, items = queue
    item = items[("m1", 0)]
    save_rating(item, 5, ["x"], "n")
    cards.save_and_move(item.id, {"clear": "1", "rating": "5"}, {}, "stay")
    assert Rating.select().count() == 0


def test_progress_counts_rated_items_the_same_by_index_and_by_filters(queue):
    _run, _targets, items = queue
    for n, key in enumerate([("m1", 0), ("m1", 1), ("m2", 3)]):
        save_rating(items[key], 1 + n, [], "")
    save_rating(items[("m2", 4)], None, ["tag only"], "")
    assert cards.progress({"run": "q"}) == {"total": 10, "rated": 3}
    assert cards.progress({"run": "q", "category": "math"}) == {"total": 6, "rated": 1}


def test_a_bad_filter_is_400_naming_it(app):
    from app.errors import ValidationError

    with pytest.raises(ValidationError) as exc:
        cards.parse_filters({"rating": "9", "since": "yesterday", "target": "x"})
    assert {e["field"] for e in exc.value.errors} == {"rating", "since", "target"}


# ---- leaderboard from stored votes ------------------------------------------------------------


def _vote(left, right, winner, voter="human", inconsistent=False):
    return Vote.create(
        left_item=left,
        right_item=right,
        item_low=min(left.id, right.id),
        item_high=max(left.id, right.id),
        left_target=left.target_id,
        right_target=right.target_id,
        task_key=left.task_key,
        winner=winner,
        winner_target={"LEFT": left.target_id, "RIGHT": right.target_id}.get(winner),
        source="human" if voter == "human" else "judge",
        voter=voter,
        inconsistent=inconsistent,
    )


def test_the_leaderboard_of_stored_votes_matches_the_hand_computed_fit(queue):
    run, (a, b), items = queue
    # m1 wins three, ties one, with m1 shown on either side: W(m1 over m2) = 3.5, W(m2) = 0.5.
    _vote(items[("m1", 0)], items[("m2", 0)], "LEFT")
    _vote(items[("m2", 1)], items[("m1", 1)], "RIGHT")
    _vote(items[("m1", 2)], items[("m2", 2)], "LEFT")
    _vote(items[("m1", 3)], items[("m2", 3)], "TIE")
    board = leaderboard([run], rounds=0)
    first, second = board["rows"]
    # With the prior of 0.01 pseudo half-wins each way: p1 / p2 = 3.51 / 0.51.
    gap = 400.0 * math.log10(3.51 / 0.51)
    assert first["target"] == "m1" and second["target"] == "m2"
    assert first["rating"] == pytest.approx(1000.0 + gap / 2, abs=1e-6)
    assert second["rating"] == pytest.approx(1000.0 - gap / 2, abs=1e-6)
    assert (first["wins"], first["losses"], first["ties"], first["votes"]) == (3, 0, 1, 4)
    assert board["matrix"]["winRate"][0][1] == pytest.approx(3.5 / 4)


def test_vote_arrays_hold_exactly_the_stored_votes_whatever_their_side(queue):
    _run, (a, b), items = queue
    _vote(items[("m1", 0)], items[("m2", 0)], "LEFT")
    _vote(items[("m2", 1)], items[("m1", 1)], "LEFT")
    _vote(items[("m1", 2)], items[("m2", 2)], "TIE", voter="judge:x/j")
    left, right, outcome = vote_arrays([a.id, b.id])
    votes = sorted(zip(left.tolist(), right.tolist(), outcome.tolist(), strict=True))
    assert votes == [(0, 1, 0.5), (0, 1, 1.0), (1, 0, 1.0)]
    human = vote_arrays([a.id, b.id], "human")
    assert len(human[0]) == 2


def test_the_db_leaderboard_equals_the_fit_on_the_same_arrays(queue):
    run, (a, b), items = queue
    for n in range(5):
        winner = ("LEFT", "RIGHT", "LEFT", "TIE", "LEFT")[n]
        _vote(items[("m1", n)], items[("m2", n)], winner)
    rows = {r["targetId"]: r for r in leaderboard([run])["rows"]}
    direct = bt.leaderboard(2, *vote_arrays([a.id, b.id]))
    for target, expected in zip((a, b), direct, strict=True):
        got = rows[target.id]
        assert [got[k] for k in ("rating", "ciLow", "ciHigh", "wins", "ties")] == [
            expected[k] for k in ("rating", "ciLow", "ciHigh", "wins", "ties")
        ]


def test_judge_position_consistency_counts_consistent_pairs_per_judge(queue):
    run, _targets, items = queue
    _vote(items[("m1", 0)], items[("m2", 0)], "LEFT", voter="judge:p/j1")
    _vote(items[("m1", 1)], items[("m2", 1)], "TIE", voter="judge:p/j1", inconsistent=True)
    _vote(items[("m1", 2)], items[("m2", 2)], "TIE", voter="judge:p/j2", inconsistent=True)
    rows = leaderboard([run])["consistency"]
    assert [(r["judge"], r["pairs"], r["consistent"], r["rate"]) for r in rows] == [
        ("p/j1", 2, 1, 0.5),
        ("p/j2", 1, 0, 0.0),
    ]


def test_a_leaderboard_without_votes_has_no_ratings_or_ranks(queue):
    run, _targets, _items = queue
    board = leaderboard([run])
    assert board["votes"] == 0
    assert all(r["rating"] is None and r["rank"] is None for r in board["rows"])


# ---- judge check ------------------------------------------------------------------------------


def _check(run, item, scores):
    job = JudgeJob.create(run=run, kind="reference", judge_provider_name="p", judge_model="j")
    for task, levels in scores.items():
        for level, score in levels.items():
            JudgeCall.create(
                job=job,
                run=run,
                item=item(task),
                level=level,
                status=COMPLETED if score is not None else FAILED,
                score=score,
            )
    return job


@pytest.mark.parametrize(
    ("levels", "kind"),
    [
        ({"excellent": 90, "good": 70, "pass": 50}, "ordered"),
        ({"excellent": 80, "good": 80, "pass": 80}, "tied"),  # one score for all: not ordered
        ({"excellent": 90, "good": 90, "pass": 50}, "tied"),
        ({"excellent": 60, "good": 70, "pass": 50}, "inverted"),
        ({"excellent": 90, "good": 70, "pass": 75}, "inverted"),
        ({"excellent": 90, "pass": 95}, "inverted"),  # no good reference: the other two compared
    ],
)
def test_a_task_is_ordered_only_when_its_scores_strictly_fall_from_excellent_to_pass(
    queue, levels, kind
):
    run, _targets, items = queue
    report = reference_report(_check(run, lambda t: items[("m1", 0)], {"t0": levels}))
    assert report["tasks"] == 1 and report[kind] == 1
    assert report["ordered"] + report["tied"] + report["inverted"] == 1


def test_a_task_with_one_level_scored_is_not_counted_but_its_score_is(queue):
    run, _targets, items = queue
    job = _check(
        run,
        lambda t: items[("m1", int(t[1]))],
        {"t0": {"excellent": 90, "good": None, "pass": None}, "t1": {"excellent": 70, "good": 60}},
    )
    report = reference_report(job)
    assert (report["tasks"], report["ordered"]) == (1, 1)
    assert report["meanByLevel"]["excellent"] == 80
    assert report["nByLevel"] == {"excellent": 2, "good": 1, "pass": 0}


def test_agreement_bins_the_judge_score_and_names_the_judge(queue):
    run, _targets, items = queue
    # Judge scores 0, 20, 40, 60, 80 -> bins 1..5; the person rates exactly those.
    for n in range(5):
        save_rating(items[("m1", n)], n + 1, [], "")
    (row,) = agreement_by_judge([run])
    assert row["judge"] == "judgeprov/judge-1" and row["n"] == 5
    assert row["weightedKappa"] == 1.0 and row["spearman"] == 1.0 and not row["disagrees"]


def test_agreement_with_a_constant_rater_is_zero_kappa_and_no_rho(queue):
    run, _targets, items = queue
    for n in range(5):
        save_rating(items[("m2", n)], 3, [], "")
    (row,) = agreement_by_judge([run])
    assert row["weightedKappa"] == 0.0 and row["spearman"] is None and row["disagrees"]


# ---- seed 003's report ------------------------------------------------------------------------


def test_report_figures_per_target_with_their_n(queue):
    run, (a, b), items = queue
    for n, stars in enumerate((5, 4, 4)):
        save_rating(items[("m1", n)], stars, [], "")
    _vote(items[("m1", 0)], items[("m2", 0)], "LEFT")
    _vote(items[("m1", 1)], items[("m2", 1)], "TIE")
    Item.update(cost_usd=0.002).where(Item.target == a).execute()
    report = {r["target"]: r for r in run_report(run)["targets"]}
    m1, m2 = report["m1"], report["m2"]
    assert m1["avg_rating"] == pytest.approx(13 / 3) and m1["ratings"] == 3
    assert m1["rating_counts"] == {1: 0, 2: 0, 3: 0, 4: 2, 5: 1}
    assert m1["winrate"] == pytest.approx(0.75) and m1["votes"] == 2
    assert m2["winrate"] == pytest.approx(0.25)
    assert m1["cost_per_1k_tasks"] == pytest.approx(2.0) and m1["costed"] == 5
    assert m2["cost_per_1k_tasks"] is None and m2["answered"] == 5  # the failed one has no answer
    assert m1["avg_latency_ms"] == 1000.0 and m1["avg_tokens"] == 50.0
    assert m2["avg_rating"] is None and m2["ratings"] == 0


def test_bootstrap_seed_is_fixed_so_the_same_votes_give_the_same_intervals(queue):
    run, _targets, items = queue
    for n in range(5):
        _vote(items[("m1", n)], items[("m2", n)], ("LEFT", "RIGHT")[n % 2])
    first = leaderboard([run])["rows"]
    assert first == leaderboard([run])["rows"]
    assert np.isfinite([r["ciLow"] for r in first]).all()
