"""JSON API for ratings, votes, the leaderboard and the judge check: shapes, 400 with field
errors, 404 and 409 (seed 000 conventions), against known answers."""

import csv
import io
import json

import pytest

from app.db.models import JudgeCall
from app.db.models import Rating
from app.db.models import Run
from app.db.models import Vote
from tests.factories import add_item
from tests.factories import make_run
from tests.factories import shown_pair


@pytest.fixture
def run2(app):
    """A finished run, two targets (m1 hot/cold profiles and m2), three answered tasks each."""
    run, targets = make_run(
        "r1",
        targets=[("local", "m1", {"temperature": 0.9}), ("local", "m2")],
    )
    items = {}
    for target in targets:
        for n in range(3):
            items[(target.model, n)] = add_item(
                run,
                target,
                f"t{n}",
                score=40.0 + 20 * n,
                answer=f"{target.model} says {n}",
                excellent=f"{n}!",
                good=f"{n}.",
                pass_answer=f"{n}?",
            )
    return run, targets, items


def put(client, run_id, item_id, body):
    return client.put(f"/api/runs/{run_id}/items/{item_id}/rating", json=body)


def test_put_rating_stores_it_and_the_item_dto_shows_it(client, run2):
    run, _targets, items = run2
    item = items[("m1", 0)]
    response = put(client, "r1", item.id, {"rating": 4, "tags": ["terse", "right"], "notes": "ok"})
    assert response.status_code == 200
    body = response.get_json()
    assert (body["itemId"], body["rating"], body["tags"], body["notes"]) == (
        item.id,
        4,
        ["terse", "right"],
        "ok",
    )
    listed = client.get("/api/runs/r1/items", query_string={"perPage": 10}).get_json()["items"]
    dto = {i["id"]: i for i in listed}
    assert dto[item.id]["humanRating"]["rating"] == 4
    assert dto[items[("m2", 0)].id]["humanRating"] is None


def test_put_again_replaces_the_rating_tags_and_notes(client, run2):
    _run, _targets, items = run2
    item = items[("m1", 1)]
    put(client, "r1", item.id, {"rating": 2, "tags": ["a", "b"], "notes": "first"})
    put(client, "r1", item.id, {"rating": 5, "tags": ["b"]})
    rating = Rating.get(Rating.item == item.id)
    assert (rating.rating, rating.tags, rating.notes) == (5, ["b"], "")
    assert [t.tag for t in rating.tag_rows] == ["b"]


def test_delete_clears_the_rating(client, run2):
    _run, _targets, items = run2
    item = items[("m1", 0)]
    put(client, "r1", item.id, {"rating": 3})
    assert client.delete(f"/api/runs/r1/items/{item.id}/rating").status_code == 204
    assert Rating.select().count() == 0


@pytest.mark.parametrize(
    ("body", "fields"),
    [
        ({"rating": 6}, {"rating"}),
        ({"rating": 0}, {"rating"}),
        ({"rating": True}, {"rating"}),
        ({"rating": 3.5}, {"rating"}),
        ({"rating": 3, "tags": "a,b", "notes": 7}, {"notes"}),
        ({"rating": 3, "tags": [1]}, {"tags"}),
        ({"rating": 3, "stars": 2}, {"stars"}),
        ({"rating": 9, "tags": {"x": 1}}, {"rating", "tags"}),
    ],
)
def test_a_bad_rating_answers_400_naming_every_field_and_stores_nothing(client, run2, body, fields):
    _run, _targets, items = run2
    response = put(client, "r1", items[("m1", 0)].id, body)
    assert response.status_code == 400
    assert {e["field"] for e in response.get_json()["errors"]} == fields
    assert Rating.select().count() == 0


@pytest.mark.parametrize("path", ["/api/runs/nope/items/1/rating", "/api/runs/r1/items/999/rating"])
def test_rating_an_unknown_run_or_item_is_404(client, run2, path):
    assert client.put(path, json={"rating": 3}).status_code == 404


def test_ratings_export_as_csv_with_tags_joined(client, run2):
    _run, _targets, items = run2
    put(client, "r1", items[("m1", 0)].id, {"rating": 4, "tags": ["a", "b"], "notes": "x, y"})
    put(client, "r1", items[("m2", 2)].id, {"rating": 1})
    response = client.get("/api/ratings", query_string={"runId": "r1", "format": "csv"})
    assert response.status_code == 200 and response.mimetype == "text/csv"
    assert "attachment" in response.headers["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(response.get_data(as_text=True))))
    assert [(r["task_id"], r["target"], r["rating"], r["tags"], r["notes"]) for r in rows] == [
        ("t0", "m1 · temperature 0.9", "4", "a, b", "x, y"),
        ("t2", "m2", "1", "", ""),
    ]


def test_ratings_export_filters_by_tag_and_model_as_jsonl(client, run2):
    _run, _targets, items = run2
    put(client, "r1", items[("m1", 0)].id, {"rating": 4, "tags": ["keep"]})
    put(client, "r1", items[("m1", 1)].id, {"rating": 2, "tags": ["drop"]})
    put(client, "r1", items[("m2", 0)].id, {"rating": 5, "tags": ["keep"]})
    text = client.get(
        "/api/ratings", query_string={"tag": "keep", "model": "m1", "format": "jsonl"}
    ).get_data(as_text=True)
    records = [json.loads(line) for line in text.splitlines()]
    assert [(r["taskId"], r["rating"], r["tags"]) for r in records] == [("t0", 4, ["keep"])]


def test_ratings_export_refuses_an_unknown_parameter_or_run(client, run2):
    assert client.get("/api/ratings?colour=red").status_code == 400
    assert client.get("/api/ratings?runId=nope").status_code == 404
    assert client.get("/api/ratings?format=xml").get_json()["errors"][0]["field"] == "format"


def test_an_exported_csv_imports_back_into_an_empty_database_of_the_same_run(client, run2):
    _run, _targets, items = run2
    put(client, "r1", items[("m1", 0)].id, {"rating": 4, "tags": ["a"], "notes": "n"})
    put(client, "r1", items[("m2", 1)].id, {"rating": 2})
    exported = client.get("/api/ratings?format=csv").get_data()
    Rating.delete().execute()
    response = client.post("/api/ratings/import", data=exported, content_type="text/csv")
    assert response.status_code == 201 and response.get_json() == {"imported": 2}
    stored = {(r.item_id, r.rating, tuple(r.tags or []), r.notes) for r in Rating.select()}
    assert stored == {(items[("m1", 0)].id, 4, ("a",), "n"), (items[("m2", 1)].id, 2, (), "")}


def test_an_import_with_bad_lines_stores_nothing_and_names_each_line(client, run2):
    text = (
        "run_id,task_id,target,rating,tags,notes\r\n"
        "r1,t0,m2,5,,fine\r\n"
        "r1,t9,m2,3,,\r\n"  # line 3: no such task
        'r1,t1,m2,7,,"two\r\nlines"\r\n'  # line 4: rating out of range
        "r1,t2,nobody,3,,\r\n"  # line 6: no such target
        "gone,t0,m2,3,,\r\n"  # line 7: no such run
    )
    response = client.post("/api/ratings/import", data=text, content_type="text/csv")
    assert response.status_code == 400
    errors = response.get_json()["errors"]
    assert [(e["line"], e["field"]) for e in errors] == [
        (3, "taskId"),
        (4, "rating"),
        (6, "target"),
        (7, "runId"),
    ]
    assert Rating.select().count() == 0


def test_a_jsonl_import_matches_a_target_by_model_when_it_names_one(client, run2):
    body = '{"runId": "r1", "taskId": "t1", "model": "m2", "rating": 3, "tags": ["x"]}\n'
    response = client.post("/api/ratings/import", data=body, content_type="application/x-ndjson")
    assert response.status_code == 201
    assert Rating.get().rating == 3


# ---- pairwise ---------------------------------------------------------------------------------


def scope(targets):
    return {"runA": "r1", "targetA": targets[0].id, "targetB": targets[1].id}


def test_next_pair_shows_two_answers_to_one_task_without_model_names(client, run2):
    _run, targets, items = run2
    response = client.get("/api/pairwise/next", query_string=scope(targets))
    assert response.status_code == 200
    body = response.get_json()
    assert set(body) == {"taskId", "pairToken", "question", "left", "right"}
    assert body["taskId"] in {"t0", "t1", "t2"}
    assert set(body["left"]) == {"itemId", "answer"} == set(body["right"])
    shown = {body["left"]["itemId"], body["right"]["itemId"]}
    n = int(body["taskId"][1:])
    assert shown == {items[("m1", n)].id, items[("m2", n)].id}
    assert "m1 ·" not in json.dumps(body) and "local" not in json.dumps(body)


def test_a_vote_is_201_and_records_which_target_won(client, run2):
    _run, targets, items = run2
    pair = client.get("/api/pairwise/next", query_string=scope(targets)).get_json()
    response = client.post(
        "/api/pairwise/votes",
        json={
            "leftItemId": pair["left"]["itemId"],
            "rightItemId": pair["right"]["itemId"],
            "pairToken": pair["pairToken"],
            "winner": "RIGHT",
        },
    )
    assert response.status_code == 201
    vote = Vote.get()
    winner_item = pair["right"]["itemId"]
    m1_items = {i.id for (model, _n), i in items.items() if model == "m1"}
    assert vote.winner_target_id == (targets[0].id if winner_item in m1_items else targets[1].id)
    assert vote.source == "human" and vote.voter == "human" and vote.created_at


def test_a_second_vote_on_the_same_pair_shown_again_is_409_and_stores_one(client, run2):
    _run, _targets, items = run2
    left, right = items[("m1", 0)].id, items[("m2", 0)].id
    body = {"pairToken": shown_pair(left, right), "winner": "TIE"}
    assert client.post("/api/pairwise/votes", json=body).status_code == 201
    # The same pair handed out again with its sides swapped (another tab): one vote per pair.
    swapped = {"pairToken": shown_pair(right, left), "winner": "LEFT"}
    assert client.post("/api/pairwise/votes", json=swapped).status_code == 409
    assert Vote.select().count() == 1


def test_next_pair_is_204_once_every_pair_has_a_vote(client, run2):
    _run, targets, items = run2
    for n in range(3):
        body = {
            "leftItemId": items[("m1", n)].id,
            "rightItemId": items[("m2", n)].id,
            "pairToken": shown_pair(items[("m1", n)].id, items[("m2", n)].id),
            "winner": "LEFT",
        }
        assert client.post("/api/pairwise/votes", json=body).status_code == 201
    assert client.get("/api/pairwise/next", query_string=scope(targets)).status_code == 204


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"winner": "BOTH"}, "winner"),
        ({"winner": None}, "winner"),
        ({"pairToken": None}, "pairToken"),
        ({"pairToken": "never-handed-out"}, "pairToken"),
        ({"rightItemId": "m1:1"}, "pairToken"),
    ],
)
def test_a_bad_vote_is_400_naming_the_field(client, run2, change, field):
    _run, _targets, items = run2
    left, right = items[("m1", 0)].id, items[("m2", 0)].id
    body = {"leftItemId": left, "rightItemId": right, "winner": "TIE"}
    body["pairToken"] = shown_pair(left, right)
    response = client.post("/api/pairwise/votes", json={**body, **change})
    assert response.status_code == 400
    assert field in {e["field"] for e in response.get_json()["errors"]}
    assert Vote.select().count() == 0


def test_a_vote_on_a_pair_shown_to_someone_else_is_400_naming_pair_token(client, run2):
    _run, _targets, items = run2
    token = shown_pair(items[("m1", 0)].id, items[("m2", 0)].id, voter="human:ann")
    response = client.post("/api/pairwise/votes", json={"pairToken": token, "winner": "TIE"})
    assert response.status_code == 400
    assert response.get_json()["errors"][0]["field"] == "pairToken"
    assert "not shown to you" in response.get_json()["error"]
    assert Vote.select().count() == 0


@pytest.mark.parametrize(
    ("query", "status"),
    [
        ({"runA": "r1", "targetA": 1}, 400),
        ({"runA": "nope", "targetA": 1, "targetB": 2}, 404),
        ({"runA": "r1", "targetA": 1, "targetB": 99}, 404),
        ({"runA": "r1", "targetA": 1, "targetB": 1}, 400),
    ],
)
def test_a_bad_pair_scope_is_400_or_404(client, run2, query, status):
    assert client.get("/api/pairwise/next", query_string=query).status_code == status


def test_votes_export_and_import_round_trip(client, run2):
    _run, _targets, items = run2
    for n, winner in enumerate(("LEFT", "RIGHT", "TIE")):
        body = {
            "leftItemId": items[("m1", n)].id,
            "rightItemId": items[("m2", n)].id,
            "pairToken": shown_pair(items[("m1", n)].id, items[("m2", n)].id),
            "winner": winner,
        }
        client.post("/api/pairwise/votes", json=body)
    exported = client.get("/api/pairwise/votes?runs=r1&format=jsonl").get_data()
    before = {(v.item_low, v.item_high, v.winner_target_id) for v in Vote.select()}
    again = client.post(
        "/api/pairwise/votes/import", data=exported, content_type="application/x-ndjson"
    )
    assert again.get_json() == {"stored": 0, "skipped": 3}  # the same votes: nothing twice
    Vote.delete().execute()
    response = client.post(
        "/api/pairwise/votes/import", data=exported, content_type="application/x-ndjson"
    )
    assert response.status_code == 201 and response.get_json() == {"stored": 3, "skipped": 0}
    assert {(v.item_low, v.item_high, v.winner_target_id) for v in Vote.select()} == before


# ---- leaderboard and judge check ---------------------------------------------------------------


def test_leaderboard_rows_have_the_issue_fields_with_counts_from_the_votes(client, run2):
    _run, targets, items = run2
    for n, winner in enumerate(("LEFT", "LEFT", "TIE")):
        body = {
            "leftItemId": items[("m1", n)].id,
            "rightItemId": items[("m2", n)].id,
            "pairToken": shown_pair(items[("m1", n)].id, items[("m2", n)].id),
            "winner": winner,
        }
        client.post("/api/pairwise/votes", json=body)
    rows = client.get("/api/leaderboard?runs=r1&source=human").get_json()
    assert [r["target"] for r in rows] == ["m1 · temperature 0.9", "m2"]
    first = rows[0]
    assert {"target", "model", "provider", "rating", "ciLow", "ciHigh", "rank"} <= set(first)
    assert {"wins", "losses", "ties", "winRate", "votes"} <= set(first)
    assert (first["wins"], first["losses"], first["ties"], first["votes"]) == (2, 0, 1, 3)
    assert first["winRate"] == pytest.approx(2.5 / 3)
    # Three votes are fewer than the minimum: ratings yes, ranks no.
    assert first["rating"] > rows[1]["rating"] and first["rank"] is None


@pytest.mark.parametrize(
    ("query", "status"), [("", 400), ("runs=nope", 404), ("runs=r1&source=robots", 400)]
)
def test_leaderboard_refuses_a_bad_scope(client, run2, query, status):
    assert client.get(f"/api/leaderboard?{query}").status_code == status


def test_judge_check_post_is_202_and_reopens_a_finished_run(client, run2):
    response = client.post("/api/runs/r1/judge-check")
    assert response.status_code == 202
    assert response.headers["Location"].endswith("/api/runs/r1/judge-check")
    body = response.get_json()
    assert body["kind"] == "reference" and body["pending"] == 9  # 3 tasks x 3 levels
    assert Run.get(Run.run_id == "r1").status == "PENDING"
    assert client.post("/api/runs/r1/judge-check").status_code == 409


def test_judge_check_get_reports_the_ordered_rate_means_and_agreement(client, run2):
    run, _targets, items = run2
    client.post("/api/runs/r1/judge-check")
    scores = {"t0": (90, 70, 50), "t1": (60, 80, 40), "t2": (95, 95, 10)}
    for call in JudgeCall.select():
        level = ("excellent", "good", "pass").index(call.level)
        JudgeCall.update(status="COMPLETED", score=scores[call.item.task_key][level]).where(
            JudgeCall.id == call.id
        ).execute()
    # People: rate the judge's 40/60/80 (bins 3, 4, 5) exactly, on m1's items.
    for n, rating in enumerate((3, 4, 5)):
        put(client, "r1", items[("m1", n)].id, {"rating": rating})
    body = client.get("/api/runs/r1/judge-check").get_json()
    # t0 falls, t1 has good above excellent, t2 gives excellent and good one score.
    assert (body["tasks"], body["ordered"], body["inverted"], body["tied"]) == (3, 1, 1, 1)
    assert body["orderedRate"] == pytest.approx(1 / 3)
    assert body["meanByLevel"] == {
        "excellent": pytest.approx(245 / 3),
        "good": pytest.approx(245 / 3),
        "pass": pytest.approx(100 / 3),
    }
    agreement = body["humanAgreement"]
    assert (agreement["n"], agreement["weightedKappa"], agreement["spearman"]) == (3, 1.0, 1.0)


def test_judge_check_of_a_run_without_references_is_400(client, app):
    run, (target,) = make_run("bare")
    add_item(run, target, "t0", score=50.0)
    response = client.post("/api/runs/bare/judge-check")
    assert response.status_code == 400 and "no reference answers" in response.get_json()["error"]
    assert Run.get(Run.run_id == "bare").status == "FINISHED"


def test_judge_check_of_an_unknown_run_is_404(client, run2):
    assert client.get("/api/runs/nope/judge-check").status_code == 404
    assert client.post("/api/runs/nope/judge-check").status_code == 404


def test_an_item_without_an_answer_cannot_be_rated(client, run2):
    run, (target, _other), _items = run2
    failed = add_item(run, target, "t9", status="FAILED", error_stage="answer", error_msg="boom")
    response = put(client, "r1", failed.id, {"rating": 3})
    assert response.status_code == 400 and response.get_json()["errors"][0]["field"] == "itemId"
    assert Rating.select().count() == 0
