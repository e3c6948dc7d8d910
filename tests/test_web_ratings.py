"""The labels' web pages: Evaluate, Compare A/B, Leaderboard, a run's Report, Labels and the
results page's judge check, with htmx (fragments) and without JavaScript (forms + redirects)."""

import io

import pytest
from bs4 import BeautifulSoup

from app.db.connection import database
from app.db.models import JudgeJob
from app.db.models import Rating
from app.db.models import Vote
from app.ratings import cards
from tests.conftest import make_app
from tests.factories import add_item
from tests.factories import make_run
from tests.factories import shown_pair

HX = {"HX-Request": "true"}


def soup(response):
    return BeautifulSoup(response.data, "html.parser")


@pytest.fixture
def data(app):
    run, (a, b) = make_run("w1", targets=[("local", "m1", {"temperature": 0.5}), ("local", "m2")])
    items = {}
    for target in (a, b):
        for n in range(3):
            items[(target.model, n)] = add_item(
                run, target, f"t{n}", score=30.0 * n, answer=f"answer {n}", excellent="e"
            )
    return run, (a, b), items


def test_evaluate_shows_the_first_answer_with_model_judge_and_progress(client, data):
    _run, _targets, items = data
    page = soup(client.get("/evaluate?run=w1"))
    card = page.select_one("#card article")
    assert card["data-item"] == str(items[("m1", 0)].id)
    assert "local/m1 · temperature 0.5" in page.select_one(".ev-target").text
    assert page.select_one("#ev-judge") is not None
    assert page.select_one("#ev-progress").text == "0 of 6 rated"
    assert page.select_one('a[href="/evaluate"]')  # "Clear" keeps the page reachable


def test_blind_mode_hides_model_names_and_the_judge(client, data):
    page = soup(client.get("/evaluate?run=w1&blind=1"))
    assert page.select_one(".ev-target") is None and page.select_one("#ev-judge") is None
    assert "m1" not in page.select_one("#card").text


def test_the_card_fragment_is_the_swap_target_alone_and_pushes_the_page_url(client, data):
    _run, _targets, items = data
    item = items[("m2", 1)].id
    response = client.get(f"/evaluate/card?run=w1&item={item}", headers=HX)
    root = soup(response).find()
    assert root["id"] == "card" and root["hx-swap"] == "outerHTML"
    assert response.headers["HX-Push-Url"] == f"/evaluate?run=w1&item={item}"


def test_saving_with_next_stores_the_rating_and_answers_with_the_next_card(client, data):
    _run, _targets, items = data
    first, second = items[("m1", 0)], items[("m1", 1)]
    response = client.post(
        f"/evaluate/items/{first.id}",
        data={"rating": "4", "tags": "a, b", "notes": "ok", "then": "next", "f_run": "w1"},
        headers=HX,
    )
    assert soup(response).select_one("#card article")["data-item"] == str(second.id)
    rating = Rating.get(Rating.item == first.id)
    assert (rating.rating, rating.tags, rating.notes) == (4, ["a", "b"], "ok")


def test_without_javascript_the_save_redirects_to_the_next_card_page(client, data):
    queue = {"run": "w1", "unrated": True}
    first = cards.next_id(queue)
    response = client.post(
        f"/evaluate/items/{first}",
        data={"rating": "2", "then": "next", "f_run": "w1", "f_unrated": "1"},
    )
    assert response.status_code == 302
    second = cards.next_id(queue, first)
    assert response.headers["Location"] == f"/evaluate?run=w1&unrated=1&item={second}"


def test_an_autosave_answers_with_the_save_status_alone(client, data):
    _run, _targets, items = data
    item = items[("m1", 0)]
    response = client.post(
        f"/evaluate/items/{item.id}",
        data={"notes": "typing…", "autosave": "1", "then": "stay"},
        headers=HX,
    )
    assert response.data.decode().strip().endswith('<span class="ev-saved">Saved</span>')
    assert Rating.get(Rating.item == item.id).notes == "typing…"


def test_a_bad_tag_shows_the_error_on_the_card_and_stores_nothing(client, data):
    _run, _targets, items = data
    item = items[("m1", 0)]
    response = client.post(
        f"/evaluate/items/{item.id}", data={"rating": "3", "tags": "x" * 101, "then": "next"}
    )
    assert response.status_code == 400
    assert "at most 100 characters" in soup(response).select_one("#ev-error").text
    assert Rating.select().count() == 0


def test_the_last_card_says_so_instead_of_moving(client, data):
    _run, _targets, items = data
    last = items[("m2", 2)]
    response = client.post(
        f"/evaluate/items/{last.id}", data={"then": "next", "f_run": "w1"}, headers=HX
    )
    page = soup(response)
    assert page.select_one("#card article")["data-item"] == str(last.id)
    assert "last card" in page.select_one(".ev-end").text


def test_an_empty_queue_says_why(client, data):
    page = soup(client.get("/evaluate?run=w1&tag=nothing"))
    assert page.select_one("#ev-empty") is not None


@pytest.mark.parametrize("query", ["rating=9", "since=soon", "run=nope"])
def test_a_bad_evaluate_filter_is_an_error_page(client, data, query):
    assert client.get(f"/evaluate?{query}").status_code in (400, 404)


# ---- Compare A/B ------------------------------------------------------------------------------


def scope(data):
    _run, (a, b), _items = data
    return {"runA": "w1", "targetA": a.id, "targetB": b.id}


def test_ab_shows_the_pair_without_names_and_the_vote_form(client, data):
    response = client.get("/ab", query_string=scope(data))
    page = soup(response)
    pair = page.select_one("#pair")
    assert pair.select_one("#ab-task").text in {"t0", "t1", "t2"}
    assert "m1" not in pair.text and "m2" not in pair.text
    buttons = [b["value"] for b in pair.select("#vote-form button[name=winner]")]
    assert buttons == ["LEFT", "TIE", "RIGHT"]
    assert pair.select_one("#ab-progress").text.strip() == "0 of 3 pairs voted"


def test_an_htmx_vote_answers_with_the_next_pair_and_reveals_the_last(client, data):
    page = soup(client.get("/ab", query_string=scope(data)))
    article = page.select_one("#pair article")
    form = {
        **scope(data),
        "pairs": "3",
        "pairToken": page.select_one("#vote-form input[name=pairToken]")["value"],
        "winner": "RIGHT",
    }
    after = soup(client.post("/ab/votes", data=form, headers=HX))
    assert after.select_one("#ab-task").text != article.select_one("#ab-task").text
    assert "A was" in after.select_one("#ab-reveal").text
    assert after.select_one("#ab-progress").text.strip() == "1 of 3 pairs voted"
    vote = Vote.get()
    assert vote.right_item_id == int(article["data-right"]) and vote.winner == "RIGHT"


def test_the_same_vote_posted_twice_stores_one_and_shows_the_next_pair(client, data):
    page = soup(client.get("/ab", query_string=scope(data)))
    article = page.select_one("#pair article")
    form = {
        **scope(data),
        "pairToken": page.select_one("#vote-form input[name=pairToken]")["value"],
        "winner": "LEFT",
    }
    client.post("/ab/votes", data=form, headers=HX)
    again = soup(client.post("/ab/votes", data=form, headers=HX))
    assert Vote.select().count() == 1
    assert again.select_one("#ab-task").text != article.select_one("#ab-task").text
    assert "You voted" in again.select_one("#ab-reveal").text  # the first vote, shown again


def test_without_javascript_a_vote_redirects_to_the_page_with_the_reveal(client, data):
    page = soup(client.get("/ab", query_string=scope(data)))
    form = {
        **scope(data),
        "pairToken": page.select_one("#vote-form input[name=pairToken]")["value"],
        "winner": "TIE",
    }
    response = client.post("/ab/votes", data=form)
    assert response.status_code == 302
    shown = soup(client.get(response.headers["Location"]))
    assert "a tie" in shown.select_one("#ab-reveal").text


def test_when_every_pair_has_a_vote_the_page_says_so(client, data):
    _run, _targets, items = data
    for n in range(3):
        client.post(
            "/api/pairwise/votes",
            json={
                "leftItemId": items[("m1", n)].id,
                "rightItemId": items[("m2", n)].id,
                "pairToken": shown_pair(items[("m1", n)].id, items[("m2", n)].id),
                "winner": "LEFT",
            },
        )
    page = soup(client.get("/ab", query_string=scope(data)))
    assert page.select_one("#ab-done") is not None


def test_asking_a_judge_with_an_unknown_provider_flashes_the_field(client, data):
    response = client.post(
        "/ab/judge", data={**scope(data), "judgeProviderId": "999", "judgeModel": "j"}
    )
    assert response.status_code == 302
    page = soup(client.get(response.headers["Location"]))
    assert "no provider 999" in page.select_one(".flash--error").text
    assert JudgeJob.select().count() == 0


# ---- leaderboard, report, labels, judge check ---------------------------------------------------


def test_the_leaderboard_page_shows_the_table_matrix_and_n(client, data):
    _run, _targets, items = data
    for n, winner in enumerate(("LEFT", "LEFT", "TIE")):
        client.post(
            "/api/pairwise/votes",
            json={
                "leftItemId": items[("m1", n)].id,
                "rightItemId": items[("m2", n)].id,
                "pairToken": shown_pair(items[("m1", n)].id, items[("m2", n)].id),
                "winner": winner,
            },
        )
    page = soup(client.get("/leaderboard?runs=w1"))
    rows = page.select("#leaderboard tbody tr")
    assert [r.select("td")[1].contents[0].strip() for r in rows] == ["m1 · temperature 0.5", "m2"]
    assert rows[0].select("td")[-1].text == "3"  # n
    assert "83 %" in page.select_one("#win-matrix").text  # 2.5 of 3
    assert page.select_one(".lb-chart img")["src"].startswith("data:image/svg+xml;base64,")


def test_the_leaderboard_page_without_runs_offers_the_picker(client, data):
    page = soup(client.get("/leaderboard"))
    assert page.select('input[name="runs"][value="w1"]')
    assert page.select_one("#leaderboard") is None


def test_the_report_page_shows_kpis_with_n_and_links_the_charts(client, data):
    _run, _targets, items = data
    client.put(f"/api/runs/w1/items/{items[('m1', 0)].id}/rating", json={"rating": 5})
    page = soup(client.get("/runs/w1/report"))
    table = page.select_one("#report-table").text
    assert "5.00" in table and "n 1" in table
    charts = [img["src"] for img in page.select("img")]
    assert charts == [
        f"/runs/w1/report/{n}.svg" for n in ("ratings", "latency", "cost_quality", "tokens")
    ]
    for src in charts:
        svg = client.get(src)
        assert svg.status_code == 200 and svg.mimetype == "image/svg+xml"
        assert b"<script" not in svg.data
    assert client.get("/runs/w1/report/pie.svg").status_code == 404


def test_report_csv_has_one_line_per_target(client, data):
    response = client.get("/runs/w1/report.csv")
    lines = response.get_data(as_text=True).split("\r\n")
    assert lines[0].startswith("provider,target,model,avg_rating,ratings,winrate,votes")
    assert [line.split(",")[1] for line in lines[1:3]] == ["m1 · temperature 0.5", "m2"]
    assert "attachment" in response.headers["Content-Disposition"]


def test_the_results_page_has_the_judge_check_and_its_button(client, data):
    page = soup(client.get("/runs/w1/results"))
    section = page.select_one("#judge-check")
    assert section.select_one("form")["action"] == "/runs/w1/judge-check"
    assert "Not checked yet" in section.text
    assert section.get("hx-trigger") is None  # nothing running: no polling


def test_starting_the_judge_check_queues_it_and_the_section_polls_while_it_runs(client, data):
    response = client.post("/runs/w1/judge-check")
    assert response.status_code == 302 and response.headers["Location"].endswith("#judge-check")
    fragment = soup(client.get("/runs/w1/judge-check", headers=HX)).find(id="judge-check")
    assert fragment["hx-trigger"] == "every 2s"
    assert "0 of 3 references scored" in fragment.text


def test_the_results_page_warns_when_the_judge_disagrees_with_people(client, data):
    _run, _targets, items = data
    # Judge 0 / 30 / 60 (bins 1, 2, 4) against people 5 / 3 / 1: reversed.
    for n, stars in enumerate((5, 3, 1)):
        client.put(f"/api/runs/w1/items/{items[('m1', n)].id}/rating", json={"rating": stars})
    section = soup(client.get("/runs/w1/results")).select_one("#judge-check")
    assert "disagrees with your raters" in section.select_one("#judge-disagrees").text
    assert "On 3 items" in section.select_one("#judge-agreement").text


def test_labels_import_shows_every_bad_line_and_stores_nothing(client, data):
    bad = "run_id,task_id,target,rating\r\nw1,t0,m2,4\r\nw1,t9,m2,4\r\nw1,t1,m2,8\r\n"
    response = client.post(
        "/labels/ratings/import",
        data={"file": (io.BytesIO(bad.encode()), "labels.csv")},
        content_type="multipart/form-data",
    )
    assert response.status_code == 400
    errors = soup(response).select_one("#import-errors").text
    assert "labels.csv, line 3: taskId" in errors and "labels.csv, line 4: rating" in errors
    assert Rating.select().count() == 0


def test_labels_import_of_a_good_file_stores_it(client, data):
    good = '{"runId": "w1", "taskId": "t2", "target": "m2", "rating": 2}\n'
    response = client.post(
        "/labels/ratings/import",
        data={"file": (io.BytesIO(good.encode()), "labels.jsonl")},
        content_type="multipart/form-data",
    )
    assert response.status_code == 200 and "Imported 1 ratings" in response.data.decode()
    assert Rating.get().rating == 2


def test_the_labels_forms_carry_the_csrf_token(tmp_path):
    app = make_app(tmp_path, WTF_CSRF_ENABLED=True)
    client = app.test_client()
    page = soup(client.get("/labels"))
    for form in page.select('form[method="post"]'):
        assert form.select_one('input[name="csrf_token"]')["value"]
    assert client.post("/labels/votes/import").status_code == 400
    database.close()


def test_the_navigation_links_the_new_pages(client, data):
    nav = soup(client.get("/")).select_one("nav.topnav")
    hrefs = [a["href"] for a in nav.select("a")]
    assert {"/evaluate", "/ab", "/leaderboard"} <= set(hrefs)


def test_the_leaderboard_page_lists_each_judge_against_peoples_ratings(client, data):
    _run, _targets, items = data
    for n, stars in enumerate((1, 2, 4)):  # judge 0 / 30 / 60 -> bins 1, 2, 4: the same
        client.put(f"/api/runs/w1/items/{items[('m1', n)].id}/rating", json={"rating": stars})
    row = soup(client.get("/leaderboard?runs=w1")).select_one("#judge-agreement-table tbody tr")
    cells = [td.text.strip() for td in row.select("td")]
    assert cells == ["judgeprov/judge-1", "3", "1.00", "1.00"]


def test_ab_says_when_two_targets_share_no_answered_task(client, app):
    run, (a, b) = make_run("apart", targets=[("local", "m1"), ("local", "m2")])
    add_item(run, a, "only-a", score=50.0)
    add_item(run, b, "only-b", score=50.0)
    page = soup(client.get(f"/ab?runA=apart&targetA={a.id}&targetB={b.id}"))
    assert page.select_one("#ab-none") is not None and page.select_one("#ab-done") is None


def test_targets_not_linked_by_votes_to_the_rated_group_are_named(client, data):
    _run, _targets, items = data
    client.post(
        "/api/pairwise/votes",
        json={
            "leftItemId": items[("m1", 0)].id,
            "rightItemId": items[("m2", 0)].id,
            "pairToken": shown_pair(items[("m1", 0)].id, items[("m2", 0)].id),
            "winner": "TIE",
        },
    )
    other, (x, y) = make_run("w2", targets=[("local", "x"), ("local", "y")])
    for n in range(3):  # more votes: this pair is the larger group, the one rated
        left = add_item(other, x, f"t{n}", score=50.0)
        right = add_item(other, y, f"t{n}", score=50.0)
        client.post(
            "/api/pairwise/votes",
            json={
                "leftItemId": left.id,
                "rightItemId": right.id,
                "pairToken": shown_pair(left.id, right.id),
                "winner": "LEFT",
            },
        )
    note = soup(client.get("/leaderboard?runs=w1,w2")).select_one("#lb-apart").text
    assert note.startswith("m1 · temperature 0.5, m2: no chain of votes links them")


def test_a_picked_run_offers_its_targets_and_the_target_filter_keeps_one(client, data):
    _run, (a, b), items = data
    page = soup(client.get(f"/evaluate?run=w1&target={b.id}"))
    options = [o.text for o in page.select("#ev-target option")]
    assert options == ["any target", "local/m1 · temperature 0.5", "local/m2"]
    assert page.select_one("#ev-target option[selected]")["value"] == str(b.id)
    assert page.select_one("#card article")["data-item"] == str(items[("m2", 0)].id)
