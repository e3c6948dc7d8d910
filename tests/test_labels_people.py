"""Each person's labels: ratings and votes under who made them, each person's own queue in
their own order (targets mixed), and agreement between people (Krippendorff's alpha, Fleiss'
kappa) beside the judge's."""

import pytest

from app.accounts.store import add_account
from app.db.models import Item
from app.db.models import Rating
from app.db.models import Run
from app.db.models import Vote
from app.ratings import cards
from app.ratings.leaderboard import leaderboard
from app.ratings.report import run_report
from app.ratings.store import save_rating
from app.ratings.votes import record_vote
from tests.factories import add_item
from tests.factories import make_run
from tests.factories import shown_pair

PASSWORD = "a long enough password"


def sign_in(client, name):
    """`client` signed in as the rater account `name` (a real account and login)."""
    add_account(name, "rater", PASSWORD)
    reply = client.post("/login", data={"name": name, "password": PASSWORD})
    assert reply.status_code == 303, reply.text
    return client


@pytest.fixture
def run2(app):
    """Run r1: targets m1 and m2, twenty answered tasks each."""
    run, targets = make_run("r1", targets=[("local", "m1"), ("local", "m2")])
    items = {}
    for target in targets:
        for n in range(20):
            items[(target.model, n)] = add_item(run, target, f"t{n:02d}", score=50.0)
    return run, targets, items


def _queue(person, filters=None):
    """Every item id of a person's queue, in the order the cards come."""
    queue = cards.Filters({"run": "r1", "unrated": True, **(filters or {})})
    queue.person = person
    order, at = [], cards.next_id(queue)
    while at is not None:
        order.append(at)
        at = cards.next_id(queue, at)
    return order


def test_two_raters_each_see_their_own_remaining_items_in_different_orders(run2):
    _run, _targets, items = run2
    ann, bob = _queue("human:ann"), _queue("human:bob")
    assert sorted(ann) == sorted(bob) == sorted(i.id for i in items.values())
    assert ann != bob
    save_rating(Item.get_by_id(ann[0]), 4, [], "", rater="human:ann")
    assert ann[0] not in _queue("human:ann")
    assert ann[0] in _queue("human:bob")  # ann's rating is not bob's
    assert _queue("human:bob") == bob  # and bob's order is kept from visit to visit


def test_a_queue_mixes_the_targets_so_the_order_gives_no_model_away(run2):
    order = _queue("human:ann")
    targets = [Item.get_by_id(i).target_id for i in order]
    # Not one target's items then the other's: the target changes often along the queue (about
    # 20 times in 40 at random; at least 8 for every one of 2000 orders tried).
    changes = sum(1 for a, b in zip(targets, targets[1:], strict=False) if a != b)
    assert changes >= 5


def test_the_evaluate_page_rates_as_the_signed_in_account(app, client, run2):
    _run, _targets, items = run2
    item = items[("m1", 0)]
    sign_in(client, "ann")
    client.post(f"/evaluate/items/{item.id}", data={"rating": "5", "then": "stay"})
    client.post(f"/evaluate/items/{item.id}", data={"rating": "2", "then": "stay"})
    stored = Rating.get(Rating.item == item.id)
    assert (stored.rater, stored.rating) == ("human:ann", 2)
    assert Rating.select().count() == 1


def test_one_item_keeps_one_rating_per_person(run2):
    _run, _targets, items = run2
    item = items[("m2", 3)]
    save_rating(item, 5, [], "", rater="human:ann")
    save_rating(item, 1, [], "", rater="human:bob")
    save_rating(item, 2, [], "", rater="human:bob")
    assert sorted((r.rater, r.rating) for r in Rating.select()) == [
        ("human:ann", 5),
        ("human:bob", 2),
    ]


def test_a_vote_is_recorded_under_the_signed_in_account(app, client, run2):
    _run, _targets, items = run2
    token = shown_pair(items[("m1", 0)].id, items[("m2", 0)].id, voter="human:bob")
    sign_in(client, "bob")
    response = client.post("/api/pairwise/votes", json={"pairToken": token, "winner": "LEFT"})
    assert response.status_code == 201
    vote = Vote.get()
    assert (vote.voter, vote.source) == ("human:bob", "human")


def _vote(items, n, winner, voter):
    token = shown_pair(items[("m1", n)].id, items[("m2", n)].id, voter)
    return record_vote({"pairToken": token, "winner": winner}, voter)


def test_the_leaderboard_reads_one_person_people_pooled_or_the_judge(client, run2):
    run, _targets, items = run2
    for n in range(3):
        _vote(items, n, "LEFT", "human:ann")
    for n in range(2):
        _vote(items, n, "RIGHT", "human:bob")
    ann = leaderboard([run], "human:ann")
    assert ann["votes"] == 3
    assert {r["target"]: r["wins"] for r in ann["rows"]} == {"m1": 3, "m2": 0}
    assert leaderboard([run], "human")["votes"] == 5
    assert leaderboard([run], "judge")["votes"] == 0
    body = client.get("/api/leaderboard?runs=r1&source=human:bob").get_json()
    assert {r["target"]: r["wins"] for r in body} == {"m1": 0, "m2": 2}


def test_the_leaderboard_page_offers_each_person_and_says_below_for_a_target_that_never_won(
    client, run2
):
    _run, _targets, items = run2
    for n in range(12):
        _vote(items, n, "LEFT", "human:ann")
    page = client.get("/leaderboard?runs=r1&source=human:ann").get_data(as_text=True)
    assert 'value="human:ann" checked' in page and "ann alone" in page
    assert "below " in page and "never won" in page and "above " in page


def test_the_reports_win_rate_switches_between_people_the_judge_and_all(client, run2):
    _run, _targets, items = run2
    _vote(items, 0, "LEFT", "human:ann")
    _vote(items, 1, "RIGHT", "judge:p/j")
    judge_only = run_report(Run.get(Run.run_id == "r1"), "judge")["targets"]
    assert [(t["target"], t["votes"]) for t in judge_only] == [("m1", 1), ("m2", 1)]
    assert [t["winrate"] for t in judge_only] == [0.0, 1.0]
    page = client.get("/runs/r1/report?source=human").get_data(as_text=True)
    assert 'value="human" checked' in page and "over every vote of people" in page


def test_saving_tags_tells_the_page_to_refresh_its_tag_suggestions(client, run2):
    _run, _targets, items = run2
    item = items[("m1", 0)]
    response = client.post(
        f"/evaluate/items/{item.id}",
        data={"tags": "fresh", "autosave": "1", "then": "stay"},
        headers={"HX-Request": "true"},
    )
    assert response.headers.get("HX-Trigger") == "tagsChanged"
    options = client.get("/evaluate/tags").get_data(as_text=True)
    assert 'id="tag-options"' in options and 'value="fresh"' in options


def test_the_stay_setting_is_kept_in_the_card_form(client, run2):
    page = client.get("/evaluate?run=r1&stay=1").get_data(as_text=True)
    assert 'name="f_stay" value="1"' in page
    assert "rate and go to the next card" not in page
    assert "rate and go to the next card" in client.get("/evaluate?run=r1").get_data(as_text=True)
