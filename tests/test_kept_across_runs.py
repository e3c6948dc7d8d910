"""Figures of pages that read every item (or vote) of one or more runs, kept (results/kept.py,
kept_across): the leaderboard, the multi-run compare, Trends' on-target counts and goodput,
Evaluate's counts per filter. The same numbers as a fresh computation, the next view sees a
change, and a deleted run leaves nothing behind."""

import datetime as dt
import json
import random

import pytest

from app.db.models import COMPLETED
from app.db.models import Item
from app.db.models import Rating
from app.db.models import RunFigures
from app.db.models import Vote
from app.ratings import cards
from app.ratings.between_people import people
from app.ratings.between_people import people_agreement
from app.ratings.judge_check import agreement_by_judge
from app.ratings.judge_check import judge_check
from app.ratings.kept import kept_agreement_by_judge
from app.ratings.kept import kept_judge_check
from app.ratings.kept import kept_leaderboard
from app.ratings.kept import kept_leaderboard_page
from app.ratings.kept import kept_people_agreement
from app.ratings.kept import kept_progress
from app.ratings.leaderboard import leaderboard
from app.ratings.votes import change_vote
from app.results import kept
from app.results.compare import compare_runs
from app.results.compare_many import compare_baseline
from app.results.composite_figures import on_target_counts
from app.results.goodput import run_goodput
from app.results.kept_runs import kept_goodput
from app.results.kept_runs import kept_on_target_counts
from app.runs.control import delete_run
from app.schedules.digest import digest_finished
from app.schedules.trends import trends
from tests.factories import T0
from tests.factories import add_item
from tests.factories import make_run

SETTINGS = {"latencyTargetMs": 2500.0, "slo": {"ttftP90Ms": 300.0, "minScore": 40.0}}


def as_json(value):
    """What kept figures read back: the value through JSON."""
    return json.loads(json.dumps(value))


def forget_all():
    """A new process on a database without kept figures: nothing cached, nothing stored."""
    kept.forget()
    RunFigures.delete().execute()


def random_run(name, seed, days=0, settings=SETTINGS):
    """A finished run of 2-3 targets over the same 12 tasks: random scores, times, failures."""
    rng = random.Random(seed)
    targets = [("local", f"m{n}") for n in range(rng.randint(2, 3))]
    finished = T0 + dt.timedelta(days=days)
    run, made = make_run(name, targets=targets, settings=settings, finished_at=finished)
    for target in made:
        for n in range(12):
            when = finished - dt.timedelta(seconds=rng.uniform(1, 300))
            common = {"category": rng.choice(("math", "code")), "last_attempt_at": when}
            common["updated_at"] = when
            if rng.random() < 0.1:
                add_item(run, target, f"t{n}", status="FAILED", error_stage="answer", **common)
                continue
            add_item(
                run,
                target,
                f"t{n}",
                score=float(rng.randint(0, 100)),
                time_taken_ms=rng.uniform(500, 5000),
                ttft_ms=rng.uniform(50, 600),
                sent_ts=when.timestamp(),
                last_token_ms=rng.uniform(500, 5000),
                tokens_generated=rng.randint(20, 400),
                answered_at=when,
                **common,
            )
    return run


def answered(run):
    return list(Item.select().where((Item.run == run) & (Item.status == COMPLETED)))


def vote(left, right, winner, voter="human"):
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
        source="human" if voter.startswith("human") else "judge",
        voter=voter,
    )


def random_votes(runs, seed, count=40):
    """Votes of people and a judge on pairs of answers to the same task across the runs."""
    rng = random.Random(seed)
    by_task = {}
    for run in runs:
        for item in answered(run):
            by_task.setdefault(item.task_key, []).append(item)
    pairs = [(t, a, b) for t, items in by_task.items() for a in items for b in items if a.id < b.id]
    for _task, a, b in rng.sample(pairs, min(count, len(pairs))):
        voter = rng.choice(("human", "human:alice", "judge:judgeprov/judge-1"))
        vote(a, b, rng.choice(("LEFT", "RIGHT", "TIE")), voter)


def random_ratings(run, seed, count=15):
    rng = random.Random(seed)
    for item in rng.sample(answered(run), count):
        for rater in ("human", "human:alice"):
            if rng.random() < 0.7:
                Rating.create(item=item, run=run, rating=rng.randint(1, 5), rater=rater)


@pytest.fixture
def three(app):
    return [random_run(f"r{n}", seed=n, days=n) for n in range(3)]


# ---- the multi-run compare ------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(3))
def test_the_kept_multi_run_compare_equals_a_fresh_one(app, seed):
    base, *others = (random_run(f"c{n}-{seed}", seed=seed * 10 + n) for n in range(3))
    first = compare_baseline(base, others)
    assert first["comparisons"] == [as_json(compare_runs(base, o, limit=10)) for o in others]
    kept.forget()
    assert compare_baseline(base, others) == first  # from the stored rows
    forget_all()
    assert compare_baseline(base, others) == first


def test_the_multi_run_compare_sees_a_rejudge_in_any_run(three):
    base, *others = three
    before = compare_baseline(base, others)
    item = answered(others[1])[0]
    Item.update(evaluation_score=100.0 - item.evaluation_score).where(Item.id == item.id).execute()
    after = compare_baseline(base, others)
    assert after["comparisons"][1] == as_json(compare_runs(base, others[1], limit=10))
    assert after["comparisons"][1] != before["comparisons"][1]


# ---- the leaderboard ------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("source", ["all", "human", "judge", "human:alice"])
def test_the_kept_leaderboard_equals_a_fresh_fit(three, seed, source):
    random_votes(three, seed)
    today = as_json(leaderboard(three, source))
    assert kept_leaderboard(three, source) == today
    kept.forget()
    assert kept_leaderboard(three, source) == today


def test_the_kept_leaderboard_sees_a_new_vote(three):
    random_votes(three[:2], 1)
    before = kept_leaderboard(three[:2])
    a, b = answered(three[0])[0], answered(three[1])[0]
    vote(a, b, "LEFT")
    after = kept_leaderboard(three[:2])
    assert after["votes"] == before["votes"] + 1
    assert after == as_json(leaderboard(three[:2]))


def test_the_kept_leaderboard_sees_a_changed_vote(three):
    random_votes(three[:2], 2)
    a, b = answered(three[0])[0], answered(three[1])[0]
    mine = vote(a, b, "LEFT", voter="human:bob")
    before = kept_leaderboard(three[:2], "human")
    change_vote(mine.id, {"winner": "RIGHT"}, "human:bob")
    after = kept_leaderboard(three[:2], "human")
    assert after == as_json(leaderboard(three[:2], "human")) and after != before


def test_a_leaderboard_of_other_runs_is_kept_apart(three):
    random_votes(three, 3)
    assert kept_leaderboard(three[:2]) == as_json(leaderboard(three[:2]))
    assert kept_leaderboard([three[0], three[2]]) == as_json(leaderboard([three[0], three[2]]))
    assert kept_leaderboard(three[1::-1]) == as_json(leaderboard(three[1::-1]))


def test_the_judges_agreement_with_people_sees_a_new_rating(three):
    random_ratings(three[0], 4)
    for rater in (None, "human:alice"):
        assert kept_agreement_by_judge(three, rater) == as_json(agreement_by_judge(three, rater))
    item = next(i for i in answered(three[1]) if not i.ratings.count())
    Rating.create(item=item, run=three[1], rating=5)
    assert kept_agreement_by_judge(three) == as_json(agreement_by_judge(three))


def test_peoples_agreement_and_the_rater_picker_see_a_new_rater(three):
    random_ratings(three[0], 5)
    random_votes(three, 5)
    fresh = {"agreement": people_agreement(three), "people": people(three)}
    assert kept_people_agreement(three) == as_json(fresh)
    Rating.create(item=answered(three[2])[0], run=three[2], rating=3, rater="human:carol")
    assert "human:carol" in kept_people_agreement(three)["people"]


def test_the_kept_judge_check_of_one_rater_equals_a_fresh_one(three):
    random_ratings(three[0], 6)
    today = as_json(judge_check(three[0].run_id, "human:alice"))
    assert kept_judge_check(three[0], "human:alice") == today
    assert kept_judge_check(three[0]) == as_json(judge_check(three[0].run_id))


# ---- Trends and a collection's summary ------------------------------------------------------


def test_kept_on_target_counts_equal_a_fresh_count(three):
    targets = {run.id: 1000.0 * (n + 2) for n, run in enumerate(three)}
    today = on_target_counts(targets)
    assert kept_on_target_counts(targets) == today
    kept.forget()
    assert kept_on_target_counts(targets) == today


def test_trends_with_kept_figures_equal_a_fresh_computation(three):
    digest_finished(T0 + dt.timedelta(days=5))
    first = trends()
    assert any(p["composite"] is not None for s in first["series"] for p in s["points"])
    assert any(p["goodput"] is not None for s in first["series"] for p in s["points"])
    kept.forget()
    assert trends() == first
    forget_all()
    assert trends() == first


def test_trends_see_a_slower_answer_on_the_next_view(three):
    digest_finished(T0 + dt.timedelta(days=5))
    before = trends()
    Item.update(time_taken_ms=60_000.0, updated_at=T0 + dt.timedelta(days=9)).where(
        Item.run == three[2]
    ).execute()
    after = trends()
    last = [s["points"][-1]["composite"] for s in after["series"]]
    assert last != [s["points"][-1]["composite"] for s in before["series"]]
    kept.forget()
    RunFigures.delete().execute()
    assert trends() == after


def test_kept_goodput_equals_todays(three):
    for run in three:
        assert kept_goodput(run) == as_json(run_goodput(run))


# ---- Evaluate's counts per filter -----------------------------------------------------------

FILTERS = [
    {"category": "math"},
    {"rating": "4"},
    {"rating": "none"},
    {"model": "m1"},
    {"category": "code", "unrated": "1"},
    {"since": "2025-01-01"},
]


@pytest.mark.parametrize("extra", FILTERS)
def test_evaluates_kept_counts_equal_a_fresh_count(three, extra):
    random_ratings(three[0], 7)
    filters = cards.parse_filters({"run": three[0].run_id, **extra})
    today = cards.progress(filters)
    assert kept_progress(filters) == today
    kept.forget()
    assert kept_progress(filters) == today


def test_evaluates_counts_see_a_new_rating_and_are_each_persons_own(three):
    filters = cards.parse_filters({"run": three[0].run_id, "category": "math"})
    assert kept_progress(filters)["rated"] == 0
    item = next(i for i in answered(three[0]) if i.category == "math")
    Rating.create(item=item, run=three[0], rating=2, rater="human")
    assert kept_progress(filters)["rated"] == 1
    filters.person = "human:alice"
    assert kept_progress(filters)["rated"] == 0


def test_my_queue_and_blind_mode_share_the_kept_counts_of_their_filters(three):
    for extra in ({}, {"unrated": "1"}, {"blind": "1"}, {"unrated": "1", "blind": "1"}):
        kept_progress(cards.parse_filters({"run": three[0].run_id, "category": "math", **extra}))
    names = [r.name for r in RunFigures.select() if r.name.startswith("evaluate:")]
    assert len(names) == 1


# ---- deleting a run -------------------------------------------------------------------------


def test_deleting_any_run_of_a_compare_or_board_leaves_nothing_behind(three):
    random_votes(three, 8)
    compare_baseline(three[0], three[1:])
    kept_leaderboard(three)
    kept_on_target_counts({run.id: 2000.0 for run in three})
    delete_run(three[2].run_id)
    names = [r.name for r in RunFigures.select()]
    assert names and not [n for n in names if f"|{three[2].id}|" in n]
    delete_run(three[1].run_id)
    delete_run(three[0].run_id)
    assert RunFigures.select().count() == 0


# ---- the pages and their API twins ----------------------------------------------------------


def test_the_leaderboard_page_keeps_its_figures_and_charts(three, client):
    random_votes(three, 10)
    runs = ",".join(r.run_id for r in three)
    page = kept_leaderboard_page(three, "all")
    assert page["board"] == as_json(leaderboard(three))
    assert page["charts"]["wide"].startswith("<?xml") or "<svg" in page["charts"]["wide"]
    assert client.get(f"/leaderboard?runs={runs}").status_code == 200
    kept.forget()
    assert kept_leaderboard_page(three, "all")["charts"] == page["charts"]  # as stored


def test_the_leaderboard_api_reads_the_kept_board(three, client):
    random_votes(three, 9)
    runs = ",".join(r.run_id for r in three)
    details = client.get(f"/api/leaderboard/details?runs={runs}").get_json()
    assert details == as_json(leaderboard(three))
    assert client.get(f"/api/leaderboard?runs={runs}").get_json() == details["rows"]
    assert client.get(f"/leaderboard?runs={runs}").status_code == 200


def test_the_compare_api_and_the_multi_run_page_read_kept_compares(three, client):
    a, b, c = three
    reply = client.get(f"/api/compare?a={a.run_id}&b={b.run_id}").get_json()
    assert reply == as_json(compare_runs(a, b))
    page = client.get(f"/compare?run={a.run_id}&run={b.run_id}&run={c.run_id}")
    assert page.status_code == 200
    names = [r.name for r in RunFigures.select().where(RunFigures.run == a)]
    assert len([n for n in names if n.startswith("compare:")]) == 3


def test_the_trends_api_and_page_read_kept_counts_and_goodput(three, client):
    digest_finished(T0 + dt.timedelta(days=5))
    fresh = client.get("/api/trends").get_json()
    names = {r.name for r in RunFigures.select()}
    assert {"on-target", "goodput"} <= names
    kept.forget()
    assert client.get("/api/trends").get_json() == fresh
    assert client.get("/trends").status_code == 200
