"""Labels that cannot be lost: an import checks its header before anything changes, an empty
cell leaves a field as it was (`clear` empties it), a short row or a duplicate item is an error
naming its line; a vote carries the pair token handed out with its pair (a double key press
stores one vote), and a person can undo or change their votes, every change kept in history."""

import json

import pytest

from app.db.models import Rating
from app.db.models import RatingHistory
from app.db.models import Vote
from app.db.models import VoteHistory
from app.errors import ValidationError
from app.ratings import labels
from app.ratings.store import save_rating
from app.ratings.votes import record_vote
from tests.factories import add_item
from tests.factories import make_run
from tests.factories import shown_pair


@pytest.fixture
def run2(app):
    """Run r1: targets m1 and m2, three answered tasks each, every m1 answer rated 4."""
    run, targets = make_run("r1", targets=[("local", "m1"), ("local", "m2")])
    items = {}
    for target in targets:
        for n in range(3):
            items[(target.model, n)] = add_item(run, target, f"t{n}", score=50.0)
    for n in range(3):
        save_rating(items[("m1", n)], 4, ["kept"], "a note")
    return run, targets, items


def _stored():
    return {(r.item_id, r.rating, tuple(r.tags or []), r.notes) for r in Rating.select()}


def _refused(text, fmt="csv"):
    before = _stored()
    with pytest.raises(ValidationError) as caught:
        labels.import_ratings(text, fmt)
    assert _stored() == before  # nothing changed
    return caught.value


# ---- ratings import: the header first ---------------------------------------------------------


def test_a_ratings_csv_without_a_rating_column_is_refused_before_anything_changes(run2):
    error = _refused("run_id,task_id,target,tags\r\nr1,t0,m1,x\r\n")
    assert error.errors[0]["field"] == "rating" and "missing" in error.errors[0]["message"]
    assert "run_id, task_id" in error.errors[0]["message"]  # the expected columns


def test_a_header_with_a_trailing_space_is_an_unknown_column_named_as_written(run2):
    error = _refused("run_id,task_id,target,Rating \r\nr1,t0,m1,2\r\n")
    fields = [e["field"] for e in error.errors]
    assert "'Rating '" in fields and "rating" in fields
    assert error.errors[0]["line"] == 1


def test_an_unknown_column_refuses_the_whole_file(run2):
    error = _refused("run_id,task_id,target,rating,stars\r\nr1,t0,m1,2,5\r\n")
    assert error.errors[0]["field"] == "'stars'"


def test_a_json_record_with_a_misspelled_key_is_refused_naming_it(run2):
    text = json.dumps([{"runId": "r1", "taskId": "t0", "target": "m1", "ratng": 2}])
    error = _refused(text, "json")
    assert {"[1].'ratng'", "[1].rating"} <= {e["field"] for e in error.errors}


def test_an_empty_cell_leaves_the_field_unchanged(run2):
    _run, _targets, items = run2
    labels.import_ratings("run_id,task_id,target,rating,tags,notes\r\nr1,t0,m1,,,\r\n", "csv")
    assert Rating.get(Rating.item == items[("m1", 0)].id).rating == 4
    labels.import_ratings("run_id,task_id,target,rating,tags,notes\r\nr1,t0,m1,2,,\r\n", "csv")
    rating = Rating.get(Rating.item == items[("m1", 0)].id)
    assert (rating.rating, rating.tags, rating.notes) == (2, ["kept"], "a note")


def test_a_missing_tags_or_notes_column_leaves_them_unchanged(run2):
    _run, _targets, items = run2
    labels.import_ratings("run_id,task_id,target,rating\r\nr1,t1,m1,5\r\n", "csv")
    rating = Rating.get(Rating.item == items[("m1", 1)].id)
    assert (rating.rating, rating.tags, rating.notes) == (5, ["kept"], "a note")


def test_a_cell_saying_clear_empties_its_field(run2):
    _run, _targets, items = run2
    labels.import_ratings("run_id,task_id,target,rating,notes\r\nr1,t0,m1,clear,clear\r\n", "csv")
    rating = Rating.get(Rating.item == items[("m1", 0)].id)
    assert (rating.rating, rating.tags, rating.notes) == (None, ["kept"], "")


def test_a_short_row_is_an_error_naming_its_line(run2):
    error = _refused("run_id,task_id,target,rating\r\nr1,t0,m1,2\r\nr1,t1,m1\r\n")
    assert error.errors[0]["line"] == 3 and "3 cells" in error.errors[0]["message"]


def test_the_same_item_twice_in_a_ratings_file_is_an_error(run2):
    error = _refused("run_id,task_id,target,rating\r\nr1,t0,m1,2\r\nr1,t0,m1,3\r\n")
    assert error.errors[0]["line"] == 3 and "line 2" in error.errors[0]["message"]


def test_an_import_keeps_the_old_rating_in_history(run2):
    _run, _targets, items = run2
    labels.import_ratings("run_id,task_id,target,rating\r\nr1,t0,m1,1\r\n", "csv")
    old = RatingHistory.get(RatingHistory.item == items[("m1", 0)].id)
    assert (old.old_rating, old.old_tags, old.action, old.changed_by) == (
        4,
        ["kept"],
        "change",
        "human",
    )


def test_our_own_ratings_export_imports_back_unchanged(client, run2):
    exported = client.get("/api/ratings?format=csv").get_data(as_text=True)
    before = _stored()
    labels.import_ratings(exported, "csv")
    assert _stored() == before


def test_the_ratings_csv_export_neutralises_formulas(client, run2):
    _run, _targets, items = run2
    save_rating(items[("m1", 0)], 3, ["=cmd"], "=SUM(A1)")
    text = client.get("/api/ratings?format=csv").get_data(as_text=True)
    assert "'=SUM(A1)" in text and "'=cmd" in text


# ---- votes import -------------------------------------------------------------------------------


def test_a_votes_csv_with_a_misspelled_column_is_refused(run2):
    text = "task_id,left_run_id,left_target,right_run_id,right_target,winer\r\n"
    text += "t0,r1,m1,r1,m2,LEFT\r\n"
    with pytest.raises(ValidationError) as caught:
        labels.import_votes(text, "csv")
    assert {"'winer'", "winner"} <= {e["field"] for e in caught.value.errors}
    assert Vote.select().count() == 0


def test_the_same_pair_twice_in_a_votes_file_is_an_error(run2):
    text = "task_id,left_run_id,left_target,right_run_id,right_target,winner\r\n"
    text += "t0,r1,m1,r1,m2,LEFT\r\nt0,r1,m2,r1,m1,LEFT\r\n"
    with pytest.raises(ValidationError):
        labels.import_votes(text, "csv")
    assert Vote.select().count() == 0


# ---- votes: pair tokens, undo, change -----------------------------------------------------------


def _next(client, targets):
    query = {"runA": "r1", "targetA": targets[0].id, "targetB": targets[1].id}
    return client.get("/api/pairwise/next", query_string=query).get_json()


def test_two_posts_with_the_same_pair_token_store_one_vote(client, run2):
    _run, targets, _items = run2
    pair = _next(client, targets)
    first = client.post(
        "/api/pairwise/votes", json={"pairToken": pair["pairToken"], "winner": "LEFT"}
    )
    again = client.post(
        "/api/pairwise/votes", json={"pairToken": pair["pairToken"], "winner": "RIGHT"}
    )
    assert first.status_code == 201 and again.status_code == 200
    assert again.get_json()["id"] == first.get_json()["id"]
    assert again.get_json()["winner"] == "LEFT"
    assert Vote.select().count() == 1


def test_a_double_press_on_the_ab_page_stores_no_vote_on_the_next_pair(client, run2):
    _run, targets, _items = run2
    scope = {"runA": "r1", "targetA": targets[0].id, "targetB": targets[1].id}
    page = client.get("/ab", query_string=scope).get_data(as_text=True)
    token = page.split('name="pairToken" value="', 1)[1].split('"', 1)[0]
    form = {**scope, "pairs": "3", "pairToken": token, "winner": "LEFT"}
    headers = {"HX-Request": "true"}
    client.post("/ab/votes", data=form, headers=headers)
    client.post("/ab/votes", data=form, headers=headers)  # 40 ms later: the same token
    assert Vote.select().count() == 1


def test_a_vote_for_a_pair_not_shown_is_400_naming_pair_token(client, run2):
    _run, _targets, items = run2
    body = {
        "leftItemId": items[("m1", 0)].id,
        "rightItemId": items[("m2", 0)].id,
        "winner": "LEFT",
    }
    response = client.post("/api/pairwise/votes", json=body)
    assert response.status_code == 400
    assert response.get_json()["errors"][0]["field"] == "pairToken"
    assert Vote.select().count() == 0


def test_undo_removes_my_last_vote_keeps_it_in_history_and_shows_the_pair_again(client, run2):
    _run, targets, _items = run2
    pair = _next(client, targets)
    client.post("/api/pairwise/votes", json={"pairToken": pair["pairToken"], "winner": "TIE"})
    response = client.post("/api/pairwise/votes/undo")
    assert response.status_code == 200 and response.get_json()["winner"] == "TIE"
    assert Vote.select().count() == 0
    history = client.get("/api/pairwise/votes/history").get_json()
    assert [(h["action"], h["oldWinner"], h["changedBy"]) for h in history] == [
        ("undo", "TIE", "human")
    ]
    assert _next(client, targets)["pairToken"] == pair["pairToken"]  # the same pair, again


def test_undo_with_no_vote_is_404(client, run2):
    assert client.post("/api/pairwise/votes/undo").status_code == 404


def test_a_person_changes_a_vote_and_the_old_winner_goes_to_history(client, run2):
    _run, targets, _items = run2
    pair = _next(client, targets)
    vote = client.post(
        "/api/pairwise/votes", json={"pairToken": pair["pairToken"], "winner": "LEFT"}
    ).get_json()
    changed = client.patch(f"/api/pairwise/votes/{vote['id']}", json={"winner": "RIGHT"})
    assert changed.status_code == 200 and changed.get_json()["winner"] == "RIGHT"
    stored = Vote.get_by_id(vote["id"])
    assert stored.winner == "RIGHT" and stored.winner_target_id == stored.right_target_id
    old = VoteHistory.get()
    assert (old.vote_id, old.old_winner, old.action) == (vote["id"], "LEFT", "change")


def test_changing_another_persons_vote_is_404(client, run2):
    _run, _targets, items = run2
    token = shown_pair(items[("m1", 0)].id, items[("m2", 0)].id, voter="human:ann")
    vote = record_vote({"pairToken": token, "winner": "LEFT"}, "human:ann")
    response = client.patch(f"/api/pairwise/votes/{vote.id}", json={"winner": "RIGHT"})
    assert response.status_code == 404
    assert Vote.get_by_id(vote.id).winner == "LEFT" and VoteHistory.select().count() == 0


def test_the_ab_page_undoes_and_changes_the_last_vote(client, run2):
    _run, targets, _items = run2
    scope = {"runA": "r1", "targetA": targets[0].id, "targetB": targets[1].id}
    headers = {"HX-Request": "true"}
    page = client.get("/ab", query_string=scope).get_data(as_text=True)
    token = page.split('name="pairToken" value="', 1)[1].split('"', 1)[0]
    client.post("/ab/votes", data={**scope, "pairToken": token, "winner": "LEFT"}, headers=headers)
    vote = Vote.get()
    after = client.post(f"/ab/votes/{vote.id}", data={**scope, "winner": "TIE"}, headers=headers)
    assert "a tie" in after.get_data(as_text=True) and Vote.get().winner == "TIE"
    undone = client.post("/ab/votes/undo", data=scope, headers=headers).get_data(as_text=True)
    assert "was undone" in undone and Vote.select().count() == 0
    assert [h.action for h in VoteHistory.select().order_by(VoteHistory.id)] == ["change", "undo"]


def test_clearing_a_rating_keeps_it_in_history(client, run2):
    _run, _targets, items = run2
    item = items[("m1", 2)]
    assert client.delete(f"/api/runs/r1/items/{item.id}/rating").status_code == 204
    history = client.get(f"/api/runs/r1/items/{item.id}/rating/history").get_json()
    assert [(h["action"], h["oldRating"], h["oldNotes"]) for h in history] == [
        ("clear", 4, "a note")
    ]


def test_the_ab_page_lists_my_votes_and_changes_an_earlier_one(client, run2):
    _run, targets, _items = run2
    scope = {"runA": "r1", "targetA": targets[0].id, "targetB": targets[1].id}
    first = _next(client, targets)
    client.post("/api/pairwise/votes", json={"pairToken": first["pairToken"], "winner": "LEFT"})
    second = _next(client, targets)
    client.post("/api/pairwise/votes", json={"pairToken": second["pairToken"], "winner": "LEFT"})
    page = client.get("/ab", query_string=scope).get_data(as_text=True)
    assert page.count('aria-pressed="true"') == 2  # both of my votes, each on A
    earlier = Vote.get(Vote.task_key == first["taskId"])
    client.post(f"/ab/votes/{earlier.id}", data={**scope, "winner": "RIGHT"})
    assert Vote.get_by_id(earlier.id).winner == "RIGHT"
    assert VoteHistory.get().old_winner == "LEFT"
